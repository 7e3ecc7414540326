//! The type checker's rules, each a few lines: a program as text and,
//! as an inline snapshot, what the front end reports about it (positions
//! as `line:column`) and the types it infers. Accept new snapshots with
//! `cargo insta test -p pmx-types --accept`, or `INSTA_UPDATE=always` and
//! then `cargo insta accept`.

#[path = "../../../../tests/support/check.rs"]
mod support;

mod errors;
mod inference;

/// The front end's diagnostics of `src`, one a line with their labels.
fn errors(src: &str) -> String {
    support::with_program(src, |db, file| support::diagnostics(db, pmx_driver::front_end_diagnostics(db, file)))
}

/// The inferred type of each top-level binding and of the `mexpr` body,
/// after the front end's diagnostics if there are any.
fn types(src: &str) -> String {
    support::with_program(src, |db, file| {
        let diags = support::diagnostics(db, pmx_driver::front_end_diagnostics(db, file));
        let types = support::top_level_types(db, file);
        if diags.is_empty() {
            types
        } else {
            format!("{diags}---\n{types}")
        }
    })
}
