//! Accelerate sites: how an `accelerate` expression runs.
//!
//! The middle end describes each accelerate binding once
//! ([`pmx_accelerate::Boundary`]). At run time, evaluating an `accelerate`
//! loads exactly the described parameters (the variables the boundary
//! names, wherever they live now), runs the debug-mode checks on them
//! (tensor rank, regularity for Futhark-class code, the size constraints
//! stated in terms of the parameters) and calls the binding through one
//! dispatch point: the site's [`Engine`]. Sites are keyed by the binding's
//! identity. The interpreter is one engine: it runs the extracted,
//! lambda-lifted binding (compiled beside the program, in its own
//! namespace) on the loaded values, exactly the closed function the
//! Futhark and CUDA backends compile, so the boundary description is what
//! every engine relies on.

use crate::error::Res;
use crate::eval::{Args, Machine};
use crate::value::Value;
use pmx_accelerate::{Backend, Boundary};
use pmx_ast::NameId;
use pmx_native::profile::Profile;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// One way to run accelerate bindings: the seam every engine implements
/// (the interpreter, and the engines of the generated code, which the CLI
/// builds from a generator's output; see `pmx_lower::Generator`). What
/// every call needs is done once, here, in [`run_site`], not in each
/// engine: debug mode's boundary checks, the size constraints checked
/// before native code runs, the dummy parameter of a binding that takes
/// none, and the profile's calls and time.
pub trait Engine: Send + Sync {
    /// What runs the binding, for messages (`interpreter`, ...).
    fn name(&self) -> &str;
    /// Whether this is native code, which takes the parameters without
    /// the dummy one (`Boundary::dummy`) and only after the size
    /// constraints on them were found to hold; the interpreter takes them
    /// as the lifted binding does.
    fn native(&self) -> bool {
        true
    }
    /// Runs the binding on the values of its parameters, in the boundary's
    /// order, recording what it copied (and its kernels' time) in `stats`.
    /// Tensors are the caller's: writes must be visible in them (and in
    /// every view of them) when this returns.
    fn call(&self, m: &mut Machine, site: &Site, args: Args, stats: &mut CallStats) -> Res<Value>;
}

/// What an engine reports of one call for the profile (`--profile`); the
/// dispatch point adds the call and its time.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallStats {
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Time in kernel launches, waits included (zero: not measured).
    pub kernels: std::time::Duration,
}

/// An engine as the CLI registers it for a binding: with its row of the
/// run's profile.
#[derive(Clone)]
pub struct Registered {
    pub engine: Arc<dyn Engine>,
    pub profile: usize,
}

/// The accelerated part of a program, as the runtime gets it.
pub struct Accelerated {
    /// The extracted program: the accelerate bindings and what they use.
    pub program: pmx_ast::Expr,
    pub boundaries: Vec<Boundary>,
    /// Engines registered for bindings (by binding id); a binding without
    /// one runs in the interpreter, unprofiled.
    pub engines: FxHashMap<NameId, Registered>,
    /// The rows of `engines`.
    pub profile: Arc<Profile>,
}

/// One accelerate binding at run time.
pub struct Site {
    pub boundary: Boundary,
    /// The global holding the compiled binding (its lifted function).
    pub global: u32,
    pub engine: Arc<dyn Engine>,
    /// Where its calls are recorded: the run's profile and the row.
    pub profile: Option<(Arc<Profile>, usize)>,
}

/// The interpreter: runs the compiled binding in this process, its
/// parallel keywords on rayon's threads (sequentially in debug mode).
pub struct Interpreter;

impl Engine for Interpreter {
    fn name(&self) -> &str {
        "interpreter"
    }

    fn native(&self) -> bool {
        false
    }

    fn call(&self, m: &mut Machine, site: &Site, args: Args, _: &mut CallStats) -> Res<Value> {
        interpret(m, site, args)
    }
}

/// The interpreter standing in for native code that could not be built
/// (a bug of the tool that compiles it): the binding runs with debug
/// mode's checks, which are what the native code checks (an irregular
/// sequence is an error, not a value), so it gives the same results and
/// failures.
pub struct Checked;

impl Engine for Checked {
    fn name(&self) -> &str {
        "interpreter"
    }

    fn native(&self) -> bool {
        false
    }

    fn call(&self, m: &mut Machine, site: &Site, args: Args, _: &mut CallStats) -> Res<Value> {
        check_boundary(m, site, &args)?;
        checked(m, site, args)
    }
}

/// Runs the lifted binding in the interpreter.
fn interpret(m: &mut Machine, site: &Site, args: Args) -> Res<Value> {
    let f = m.global(site.global)?;
    let span = site.boundary.span;
    let saved = std::mem::replace(&mut m.accelerated, true);
    let outer = m.accelerate_site.replace(span);
    let futhark = site.boundary.backend() == Some(Backend::Futhark);
    let regular = std::mem::replace(&mut m.regular, m.checking && futhark);
    let r = m.apply(f, args, span);
    m.accelerated = saved;
    m.accelerate_site = outer;
    m.regular = regular;
    r
}

/// Debug mode's failure for a call that a native engine could not finish:
/// the binding runs again here, sequentially and with every check of
/// debug mode, on the same parameters (Futhark-class code writes none of
/// them), and its first failure is the one debug mode reports. `None`
/// when it runs to the end: the engine's own failure stands. An engine
/// whose generated code can stop at a check of its own (Futhark's bounds
/// checks) before one of pmx's that debug mode meets first calls this,
/// so that every mode reports the same failure; it costs nothing on the
/// paths that succeed. `args` are the native engine's (without the dummy
/// parameter, which the lifted binding takes again here).
pub fn diagnose(m: &mut Machine, site: &Site, args: Args) -> Option<crate::error::Fail> {
    let args = if site.boundary.dummy { Args::from_elem(Value::Int(0), 1) } else { args };
    checked(m, site, args).err()
}

/// Runs the binding in the interpreter with debug mode's checks inside
/// it (sequentially).
pub fn checked(m: &mut Machine, site: &Site, args: Args) -> Res<Value> {
    let checking = std::mem::replace(&mut m.checking, true);
    let r = interpret(m, site, args);
    m.checking = checking;
    r
}

/// Runs site `index` on its loaded parameters (the lifted binding's:
/// one dummy `Int` when it takes none): the one dispatch point of every
/// engine.
pub fn run_site(m: &mut Machine, index: usize, args: Args) -> Res<Value> {
    let shared = m.shared.clone();
    let site = &shared.sites[index];
    let native = site.engine.native();
    let args = if native && site.boundary.dummy { Args::new() } else { args };
    if m.shared.options.debug {
        check_boundary(m, site, &args)?;
    } else if native {
        // Cheap (lengths only), and reported where debug mode reports it.
        check_sizes(m, site, &args)?;
    }
    let started = std::time::Instant::now();
    let mut stats = CallStats::default();
    let r = site.engine.call(m, site, args, &mut stats);
    if let Some((profile, row)) = &site.profile {
        let inside = started.elapsed();
        profile.update(*row, |e| {
            e.calls += 1;
            e.inside += inside;
            e.bytes_in += stats.bytes_in;
            e.bytes_out += stats.bytes_out;
            e.kernels += stats.kernels;
        });
    }
    r
}

/// Runs the site of accelerate binding `id` (`Boundary::id`) on its
/// loaded parameters: how native host code runs an `accelerate`, which
/// knows its binding, not the site's index.
pub fn run_binding(m: &mut Machine, id: NameId, args: Args, span: pmx_ast::Span) -> Res<Value> {
    match m.shared.sites.iter().position(|s| s.boundary.id == id) {
        Some(index) => run_site(m, index, args),
        None => Err(m.fail(format!("{}an accelerate binding without a site", crate::INTERNAL_PREFIX), span)),
    }
}

/// The debug-mode checks on the values that cross a boundary.
pub fn check_boundary(m: &Machine, site: &Site, args: &[Value]) -> Res<()> {
    let b = &site.boundary;
    let futhark = b.backend() == Some(Backend::Futhark);
    for (p, v) in b.params.iter().zip(args) {
        let found = crate::checks::rank(v, m.shared.options.tensor_max_rank).and_then(|()| {
            if futhark {
                crate::checks::regular(v)
            } else {
                Ok(())
            }
        });
        if let Err(e) = found {
            return Err(m.fail(format!("{e} (in the value of `{}` passed to accelerate)", p.source.text), b.span));
        }
    }
    check_sizes(m, site, args)
}

/// The size constraints stated in terms of the parameters, checked on
/// the loaded values: debug mode's check, which native engines also run
/// before a call (cheap: lengths only), so that a violated constraint is
/// reported where debug mode reports it.
pub fn check_sizes(m: &Machine, site: &Site, args: &[Value]) -> Res<()> {
    let b = &site.boundary;
    for c in &b.sizes {
        let (Some(lhs), Some(rhs)) = (size(c.lhs, args), size(c.rhs, args)) else { continue };
        if lhs != rhs {
            let name = match c.lhs {
                pmx_accelerate::Size::Dim { param, .. } | pmx_accelerate::Size::Param(param) => {
                    b.params[param].source.text.clone()
                }
                pmx_accelerate::Size::Lit(_) => Default::default(),
            };
            return Err(m.fail(crate::checks::size_violation(&name, lhs, rhs, c.span), b.span));
        }
    }
    Ok(())
}

/// One side of a size constraint on the loaded values; `None` when it
/// cannot be computed here (an empty outer dimension hides the inner
/// ones: the check in the code, if it is reached, decides).
fn size(s: pmx_accelerate::Size, args: &[Value]) -> Option<i64> {
    match s {
        pmx_accelerate::Size::Lit(n) => Some(n),
        pmx_accelerate::Size::Param(p) => match args.get(p)? {
            Value::Int(n) => Some(*n),
            _ => None,
        },
        pmx_accelerate::Size::Dim { param, depth } => {
            let mut v = args.get(param)?.clone();
            for _ in 0..depth {
                let Value::Seq(s) = &v else { return None };
                if s.is_empty() {
                    return None;
                }
                v = s.get(0);
            }
            match &v {
                Value::Seq(s) => Some(s.len() as i64),
                _ => None,
            }
        }
    }
}

/// The sites of a program, in the order of its boundaries.
pub(crate) fn sites(acc: &Accelerated, globals: &FxHashMap<NameId, u32>) -> Vec<Site> {
    acc.boundaries
        .iter()
        .filter_map(|b| {
            let global = *globals.get(&b.id)?;
            let (engine, profile) = match acc.engines.get(&b.id) {
                Some(r) => (r.engine.clone(), Some((acc.profile.clone(), r.profile))),
                None => (Arc::new(Interpreter) as Arc<dyn Engine>, None),
            };
            Some(Site { boundary: b.clone(), global, engine, profile })
        })
        .collect()
}
