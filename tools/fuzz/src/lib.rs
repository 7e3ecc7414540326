//! pmx's differential fuzzer: it generates well-typed MExpr programs with
//! `accelerate` of both classes from a seed, runs each with `--debug` and
//! natively (`--target cpu`, and for CUDA-class code also the GPU engine
//! with its kernels on the CPU), and compares exit codes, outputs and
//! errors (`run`). A difference is minimised (`shrink`) and written as a
//! fixture that `tests/fuzz.rs` runs in every mode from then on.
//!
//! Invariants:
//! - A seed gives the same program on every machine (`rng`): CI runs a
//!   fixed set of seeds.
//! - Generated programs are deterministic in every engine: CUDA-class
//!   loops write only their own iteration's cells, reductions use
//!   associative operators with their neutral elements, and the lines
//!   that print floats a parallel reduction may reorder are marked, and
//!   compared with a tolerance ([`run::TOLERANCE`]); integers compare
//!   exactly. Any difference is therefore a bug of pmx.
//! - Forms that may fail (division, indexing, irregular data) are rare
//!   except in a quarter of the programs, so that most blocks run.
//!
//! The API: [`generate`], [`Runner`], [`Tally`], [`minimise`].

pub mod cuda;
pub mod futhark;
pub mod gen;
pub mod program;
pub mod rng;
pub mod run;
pub mod shrink;
pub mod tree;

pub use program::{Class, Program};
pub use run::{Difference, Mode, Outcome, Runner};
pub use shrink::minimise;

use std::collections::BTreeMap;
use std::path::Path;

/// The program of `class` for `seed`.
pub fn generate(class: Class, seed: u64) -> Program {
    match class {
        Class::Futhark => futhark::program(seed),
        Class::Cuda => cuda::program(seed),
    }
}

/// What a set of runs did, per class.
#[derive(Default, Debug)]
pub struct Tally {
    pub tried: BTreeMap<&'static str, usize>,
    /// Ran to the end in every mode.
    pub clean: BTreeMap<&'static str, usize>,
    /// Stopped with the same run-time error in every mode, by message.
    pub failed: BTreeMap<(&'static str, String), usize>,
    /// Rejected by the front end in every mode, by diagnostic code.
    pub rejected: BTreeMap<(&'static str, String), usize>,
    /// Programs whose native runs ran their bindings in the interpreter
    /// (after an internal compiler error of Futhark's), by seed: they
    /// agree, but the native engine was not tested on them.
    pub interpreted: BTreeMap<&'static str, Vec<u64>>,
    /// Programs that showed a difference, with what it was.
    pub differences: Vec<(Class, u64, Vec<Difference>)>,
}

impl Tally {
    /// Records one program's outcomes (debug mode's first).
    pub fn add(&mut self, p: &Program, outcomes: &[Outcome], diffs: &[Difference]) {
        let class = p.class.name();
        *self.tried.entry(class).or_default() += 1;
        if !diffs.is_empty() {
            self.differences.push((p.class, p.seed, diffs.to_vec()));
            return;
        }
        if outcomes.iter().any(Outcome::interpreted) {
            self.interpreted.entry(class).or_default().push(p.seed);
        }
        let debug = &outcomes[0];
        if let Some(code) = debug.rejected() {
            *self.rejected.entry((class, code)).or_default() += 1;
        } else if debug.code == Some(0) {
            *self.clean.entry(class).or_default() += 1;
        } else {
            let message = debug.headline().unwrap_or_else(|| format!("exit code {:?}", debug.code));
            // The kind of error, not its values.
            let kind: String = message.chars().take_while(|c| !c.is_ascii_digit() && *c != ':').collect();
            *self.failed.entry((class, kind.trim().to_string())).or_default() += 1;
        }
    }

    /// A summary for people (and BENCHMARKS.md).
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (class, n) in &self.tried {
            s.push_str(&format!(
                "{class}: {n} programs, {} ran to the end in every mode, {} differences\n",
                self.clean.get(class).copied().unwrap_or(0),
                self.differences.iter().filter(|(c, _, _)| c.name() == *class).count()
            ));
            for ((c, m), k) in &self.failed {
                if c == class {
                    s.push_str(&format!("  stopped with the same error in every mode: {m} ({k})\n"));
                }
            }
            if let Some(seeds) = self.interpreted.get(class) {
                let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
                s.push_str(&format!(
                    "  ran in the interpreter after Futhark failed on them (counted above too): {} (seeds {})\n",
                    seeds.len(),
                    seeds.join(", ")
                ));
            }
            for ((c, code), k) in &self.rejected {
                if c == class {
                    s.push_str(&format!("  rejected by pmx check: {code} ({k})\n"));
                }
            }
        }
        for (class, seed, diffs) in &self.differences {
            let what: Vec<String> = diffs.iter().map(Difference::describe).collect();
            s.push_str(&format!("difference: {} seed {seed}: {}\n", class.name(), what.join("; ")));
        }
        s
    }
}

/// Runs one program: written to `dir`, run in every mode of its class.
pub fn check(runner: &Runner, p: &Program, dir: &Path) -> (Vec<Outcome>, Vec<Difference>) {
    let file = dir.join(format!("{}_{}.mc", p.class.name(), p.seed));
    if std::fs::write(&file, p.render()).is_err() {
        return (Vec::new(), vec![Difference::Internal(Mode::Debug)]);
    }
    let r = runner.compare(&file, p.class);
    let _ = std::fs::remove_file(&file);
    r
}
