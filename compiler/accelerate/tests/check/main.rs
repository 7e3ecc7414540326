//! The accelerate passes' rules, each a few lines: a program as text and,
//! as an inline snapshot, what the passes found (the well-formedness
//! errors with `line:column` positions, each `accelerate`'s backend and
//! why, its parameters and how they cross) or the program a pass made.
//! Accept new snapshots with `cargo insta test -p pmx-accelerate
//! --accept`, or `INSTA_UPDATE=always` and then `cargo insta accept`.

#[path = "../../../../tests/support/check.rs"]
mod support;

mod classify;
mod lifting;
mod wellformed;

use pmx_accelerate::{Analysis, Class};
use pmx_driver::Database;

/// Every diagnostic of `src` (the front end's, then the accelerate
/// passes'), then what the passes found about each `accelerate`.
fn check(src: &str) -> String {
    analyzed(src, |db, analysis| {
        let mut out = support::diagnostics(db, pmx_driver::program_diagnostics(db, analysis.1));
        let Some(analysis) = analysis.0 else { return out };
        for a in &analysis.accelerates {
            let b = &a.boundary;
            let class = match &a.class {
                Class::One(backend) => backend.name(),
                Class::Any => "none (no parallel keyword)",
                Class::Invalid => "none (keywords of both backends)",
                Class::Nested => "none (nested)",
            };
            out.push_str(&format!("{} at {}: {class}\n", b.name, support::at(db, b.span)));
            for r in &a.reasons {
                let chain: Vec<String> =
                    r.chain.iter().map(|(n, s)| format!("{n} ({})", support::at(db, *s))).collect();
                let keyword = support::at(db, r.keyword_span);
                out.push_str(&format!("  why: {} -> `{}` at {keyword}\n", chain.join(" -> "), r.keyword));
            }
            for p in &b.params {
                out.push_str(&format!("  {} : {} ({})\n", p.name.text, p.ty, p.passing.describe()));
            }
            out.push_str(&format!("  returns: {}\n", b.result.ty));
            if !a.functions.is_empty() {
                out.push_str(&format!("  functions: {}\n", a.functions.join(", ")));
            }
        }
        out
    })
}

/// A program the passes made from `src` (`pick` chooses it from the
/// analysis), printed as MExpr.
fn printed(src: &str, pick: fn(&Analysis) -> &pmx_ast::Expr) -> String {
    analyzed(src, |db, analysis| {
        let diags = support::diagnostics(db, pmx_driver::program_diagnostics(db, analysis.1));
        let analysis = analysis.0.expect("the front end accepts the program");
        assert!(diags.is_empty(), "{diags}");
        pmx_ast::print::print_module(&pmx_accelerate::program::to_module(pick(analysis)))
    })
}

/// The accelerate analysis of `src` (none if the front end rejects it),
/// with its file.
fn analyzed<T: Send>(
    src: &str,
    f: impl FnOnce(&Database, (Option<&Analysis>, pmx_driver::SourceFile)) -> T + Send,
) -> T {
    support::with_program(src, |db, file| f(db, (pmx_driver::accelerate_analysis(db, file).as_ref(), file)))
}
