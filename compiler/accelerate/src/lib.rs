//! The accelerate passes, in pipeline order (sections 3 and 4 of the
//! paper):
//!
//! 1. **Bind and lift** (`lift.rs`): each `accelerate e` becomes an
//!    accelerate binding (a top-level function of the data it uses) and
//!    every nested function is lambda-lifted.
//! 2. **Extract** (`extract.rs`): Algorithm 1 keeps the accelerate bindings
//!    and every binding they depend on, once.
//! 3. **Nesting** (`nested.rs`): an accelerate binding used by another is
//!    an error.
//! 4. **Classify** (`classify.rs`): each accelerate binding is Futhark- or
//!    CUDA-class, or an error (no keyword, or keywords of both); one
//!    extracted program per backend.
//!
//! 5. **Backend programs**: one extracted program per backend, rewritten
//!    as section 4.6 of the reference says, then put in A-normal form
//!    (`anf.rs`). CUDA: polymorphic functions are copied per concrete type
//!    (`monomorphize.rs`), higher-order functions called with known functions
//!    specialised to them (`rewrite/inline_hof.rs`, as for Futhark),
//!    let-bound partial applications inlined with their arguments
//!    evaluated once where they were bound (`inline_partial.rs`). Futhark
//!    (`rewrite/`): `cons`/`snoc` become `concat`; recursion shaped like
//!    `map`, `map2` (`map2.rs`) or a fold (with an accumulator, or tail
//!    recursion with a known associative operator, `assoc.rs`) becomes
//!    it; `recursive` groups are split into strongly connected components,
//!    those that do not recurse becoming `let`s (`demote.rs`); `foldl` with a
//!    known associative operator becomes `reduce` or `flatten`
//!    (`promote.rs`); higher-order functions called with known functions
//!    are specialised to them (`inline_hof.rs`). Copies get fresh binders
//!    (`freshen.rs`).
//! 6. **Well-formedness** (`wellformed/`): each backend's program is
//!    checked against that backend's rules.
//! 7. **Copy analysis** (`copy.rs`, with `writes.rs`: which parameters
//!    accelerated code may write): how each value crosses the boundary.
//! 8. **Boundary descriptions** (`boundary.rs`): one per accelerate
//!    binding, what everyone downstream reads (the CPU runtime, marshaling,
//!    code generation, `pmx explain`).
//!
//! Shared helpers, one place each: the top-level chain (`chain.rs`),
//! size constraints (`size.rs`); application spines and the function
//! positions of higher-order built-ins are `pmx_ast::spine`, which the
//! lowering and the interpreter's compiler use too.
//!
//! [`size::size_constraint`] recognises size-constraint utests, for the CPU
//! backend's debug checks and for the lowering (`pmx-lower`).
//!
//! Every rewrite is semantics-preserving and leaves code it does not
//! recognise exactly as it is (the well-formedness check then reports
//! what the backend cannot take). [`program::splice`] puts a backend's
//! rewritten program back into the whole one, so that it can be run and
//! compared with the original. API: [`analyze`] takes the typed modules of a program
//! (load order, main file last) and returns an [`Analysis`]; it never fails.

pub mod accumulation;
mod anf;
pub mod boundary;
pub mod chain;
mod classify;
mod copy;
mod extract;
mod free;
mod freshen;
mod inline_partial;
mod lift;
mod monomorphize;
mod nested;
mod print_parts;
pub mod program;
mod rewrite;
pub mod size;
pub mod variants;
mod wellformed;
mod writes;

pub use boundary::{Boundary, BoundaryParam, BoundaryResult, Size, SizeConstraint};
pub use classify::{Backend, Class, Reason};
pub use lift::{lift, lift_with, AccBinding, SYNTHETIC};

use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::FxHashSet;

/// What the passes found about one `accelerate` expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Accelerate {
    /// What crosses it: parameters, how each is passed, the result.
    pub boundary: Boundary,
    pub class: Class,
    /// Why: one chain per backend whose keyword it uses.
    pub reasons: Vec<Reason>,
    /// The functions extracted with it (names, in program order).
    pub functions: Vec<SmolStr>,
}

/// How a value crosses into accelerated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passing {
    /// Scalars and records of scalars: by value.
    Value,
    /// Sequences: copied in.
    CopyIn,
    /// Tensors: copied in, and back out after the call.
    CopyInOut,
    /// Tensors just created and first used here: only copied back out.
    CopyOut,
    /// Not copied at all: functions (which the well-formedness check
    /// rejects), and tensors neither read before nor used after.
    None,
}

impl Passing {
    pub fn describe(self) -> &'static str {
        match self {
            Passing::Value => "passed by value",
            Passing::CopyIn => "copied in",
            Passing::CopyInOut => "copied in and back out",
            Passing::CopyOut => "not copied in (created uninitialised for this call), copied back out",
            Passing::None => "not copied",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The program after accelerate binding and lambda lifting.
    pub lifted: Expr,
    /// The accelerated program: the accelerate bindings and what they use.
    pub extracted: Expr,
    /// The Futhark backend's program after its rewrites and ANF.
    pub futhark: Expr,
    /// The CUDA backend's program after its rewrites and ANF.
    pub cuda: Expr,
    pub accelerates: Vec<Accelerate>,
    pub diagnostics: Vec<Diagnostic>,
    /// The variant types of `extracted` (which declares every constructor
    /// the backends' programs use), collected once for every pass that
    /// looks into payloads: the copy analysis, the boundary, CUDA's
    /// well-formedness and the lowering.
    pub variants: variants::Variants,
}

impl Analysis {
    /// The analysis of a program without `accelerate`.
    pub fn empty() -> Analysis {
        let unit = Expr::unit(Span::BUILTIN);
        Analysis {
            lifted: unit.clone(),
            extracted: unit.clone(),
            futhark: unit.clone(),
            cuda: unit,
            accelerates: Vec::new(),
            diagnostics: Vec::new(),
            variants: variants::Variants::default(),
        }
    }
}

pub fn analyze(modules: &[&Module]) -> Analysis {
    let program = program::to_expr(modules);
    let (lifted, bindings) = lift::lift(program);
    let ids: FxHashSet<NameId> = bindings.iter().map(|b| b.id).collect();
    let (_, extracted) = extract::extract(&ids, &lifted);
    let graph = classify::Graph::new(&extracted);
    let nested_ids: FxHashSet<NameId> = nested::nested_ids(&graph, &bindings);
    let mut diagnostics = nested::check(&graph, &bindings, &nested_ids);
    let order = extract::bindings(&extracted);
    let writes = writes::analyze(&extracted);
    let variants = variants::Variants::new(&extracted);
    let mut copies = copy::analyze(&lifted, &bindings, &writes, &variants);
    let mut accelerates = Vec::new();
    for b in &bindings {
        if nested_ids.contains(&b.id) {
            // An error already; classifying it and listing its functions
            // would walk everything below it again, once per nesting level.
            let passing = copies.remove(&b.id).unwrap_or_default();
            let boundary = describe(&extracted, b, Class::Nested, &passing, &writes, &variants);
            accelerates.push(Accelerate { boundary, class: Class::Nested, reasons: Vec::new(), functions: Vec::new() });
            continue;
        }
        let (class, reasons) = graph.classify(b.id);
        let reachable: FxHashSet<NameId> = graph.reachable(b.id).into_iter().collect();
        let functions =
            order.iter().filter(|(id, _)| *id != b.id && reachable.contains(id)).map(|(_, n)| n.clone()).collect();
        match &class {
            Class::Any => diagnostics.push(
                Diagnostic::error(
                    Code::AccelerateNoKeyword,
                    b.span,
                    "The accelerate expression does not use any parallel keywords. This is not allowed.",
                )
                .with_label("no parallel keyword is used here or in the functions it calls")
                .with_note(
                    "use `map`, `map2`, `reduce`, `flatten` or a histogram's `foldl` (one that updates its \
                         sequence accumulator at a computed index with `addi`, `addf`, `muli`, `mulf`, `maxi` or \
                         `mini`) (Futhark backend), or `loop` (CUDA backend); without one, remove `accelerate`",
                ),
            ),
            Class::Invalid => {
                let mut d = Diagnostic::error(
                    Code::AccelerateMixedBackends,
                    b.span,
                    "Accelerate expression uses parallel keywords of multiple backends",
                )
                .with_label("this accelerate expression");
                for r in &reasons {
                    d = d.with_secondary(
                        r.keyword_span,
                        format!("`{}` needs the {} backend", r.keyword, r.backend.name()),
                    );
                }
                diagnostics.push(d.with_note(
                    "an accelerate expression is compiled by one backend: use only Futhark keywords \
                         (`map`, `map2`, `reduce`, `flatten`, a histogram's `foldl`) or only CUDA ones \
                         (`loop`, `seqLoop`, `seqLoopAcc`, `printFloat`), or split it in two",
                ));
            }
            Class::One(_) | Class::Nested => {}
        }
        let passing = copies.remove(&b.id).unwrap_or_default();
        let boundary = describe(&extracted, b, class.clone(), &passing, &writes, &variants);
        accelerates.push(Accelerate { boundary, class, reasons, functions });
    }
    // One program per backend: its rewrites, ANF, then its rules.
    let mut programs = Vec::new();
    for backend in [Backend::Futhark, Backend::Cuda] {
        let members: Vec<&AccBinding> =
            accelerates.iter().zip(&bindings).filter(|(a, _)| a.class == Class::One(backend)).map(|(_, b)| b).collect();
        let ids: FxHashSet<NameId> = members.iter().map(|b| b.id).collect();
        let (_, mut program) = extract::extract(&ids, &extracted);
        match backend {
            Backend::Cuda => {
                monomorphize::monomorphize(&mut program);
                // CUDA code cannot take functions as parameters either, so a
                // library function such as an ODE stepper called with the
                // user's derivative function is specialised to it, as for
                // Futhark; calls with unknown functions stay (and E0425).
                rewrite::inline_higher_order(&mut program);
                inline_partial::inline_partial_applications(&mut program);
                print_parts::split_printed_concats(&mut program);
            }
            Backend::Futhark => {
                rewrite::normalize_recursion(&mut program);
                rewrite::cons_snoc_to_concat(&mut program);
                rewrite::rewrite_recursion(&mut program);
                rewrite::demote_recursive(&mut program);
                rewrite::promote_folds(&mut program);
                rewrite::inline_higher_order(&mut program);
            }
        }
        let program = anf::normalize(program);
        if !members.is_empty() {
            diagnostics.extend(wellformed::check(backend, &program, &members, &variants));
        }
        programs.push(program);
    }
    pmx_diagnostics::sort_and_dedup(&mut diagnostics);
    let cuda = programs.pop().expect("two programs");
    let futhark = programs.pop().expect("two programs");
    Analysis { lifted, extracted, futhark, cuda, accelerates, diagnostics, variants }
}

/// The boundary description of one accelerate binding.
fn describe(
    extracted: &Expr,
    b: &AccBinding,
    class: Class,
    passing: &[Passing],
    writes: &writes::Writes,
    variants: &variants::Variants,
) -> Boundary {
    let mut params: Vec<BoundaryParam> = b
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // How the parameter would pass if the binding wrote it: the
            // passing where the copy analysis gave none, and whether a
            // write reaches data that is copied back.
            let if_written = copy::passing(&p.ty, true, variants);
            BoundaryParam {
                name: p.name.clone(),
                ty: p.ty.clone(),
                source: p.source.clone(),
                passing: passing.get(i).copied().unwrap_or(if_written),
                written: writes.writes(b.id, i) && if_written == Passing::CopyInOut,
                sizes: Vec::new(),
            }
        })
        .collect();
    let ids: Vec<NameId> = b.params.iter().map(|p| p.name.id).collect();
    let sizes = if b.dummy { Vec::new() } else { boundary::size_constraints(extracted, b.id, &ids) };
    boundary::index_sizes(&mut params, &sizes);
    Boundary {
        id: b.id,
        name: b.name.clone(),
        span: b.span,
        class,
        params,
        dummy: b.dummy,
        sizes,
        result: BoundaryResult::of(&b.result, variants),
    }
}
