//! Unit tests: small programs checked and analysed by the driver, then
//! lowered; the pattern lowering, size constraints, function values, and
//! the validator fed broken programs.

use crate::*;
use pmx_accelerate::Backend;
use pmx_ast::Span;
use std::path::Path;

/// Lowers `source` (one file) for `backend`; the front end must accept it.
fn lower_source(source: &str, backend: Backend) -> (Program, Vec<Diagnostic>) {
    let source = source.to_string();
    pmx_driver::with_stack(move || {
        let mut db = pmx_driver::Database::new(Vec::new());
        let root = db.set_file_text(Path::new("/virtual/test.mc"), source);
        let front = pmx_driver::front_end_diagnostics(&db, root);
        assert!(front.iter().all(|d| !d.is_error()), "{front:#?}");
        let analysis = pmx_driver::accelerate_analysis(&db, root).as_ref().expect("analysed");
        lower(analysis, backend)
    })
}

fn text(p: &Program) -> String {
    print(p, &|s: Span| format!("{}..{}", s.start, s.end))
}

/// Lowers, expects no diagnostic and a valid program; returns it printed.
fn lowered(source: &str, backend: Backend) -> (Program, String) {
    let (p, diags) = lower_source(source, backend);
    let shown = text(&p);
    assert!(diags.is_empty(), "{diags:#?}\n{shown}");
    let problems = validate(&p);
    assert!(problems.is_empty(), "{problems:#?}\n{shown}");
    (p, shown)
}

/// Every statement of a block and of the blocks nested in it.
fn stmts(b: &Block) -> Vec<&Stmt> {
    let mut out = Vec::new();
    for s in &b.stmts {
        out.push(s);
        if let Expr::If { then, otherwise, .. } = &s.expr {
            out.extend(stmts(then));
            out.extend(stmts(otherwise));
        }
    }
    out
}

fn all_stmts(p: &Program) -> Vec<&Stmt> {
    p.functions.iter().flat_map(|f| stmts(&f.body)).chain(p.entries.iter().flat_map(|e| stmts(&e.body))).collect()
}

fn count(p: &Program, pred: impl Fn(&Expr) -> bool) -> usize {
    all_stmts(p).into_iter().filter(|s| pred(&s.expr)).count()
}

#[test]
fn lowers_a_map_with_a_lifted_lambda() {
    let (p, shown) = lowered(
        "mexpr\nlet k = 3 in\nlet xs = [1, 2] in\naccelerate (map (lam x. addi x k) xs)",
        Backend::Futhark,
    );
    assert_eq!(p.entries.len(), 1, "{shown}");
    assert!(shown.contains("map (lambda k_1) xs") || shown.contains("map ("), "{shown}");
    let e = &p.entries[0];
    assert_eq!(e.params.len(), 2, "{shown}");
    assert_eq!(e.result, Type::seq(Type::Int));
}

#[test]
fn debug_schemes() {
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/accelerate/higher_order_inlining.mc")).unwrap();
    pmx_driver::with_stack(move || {
        let mut db = pmx_driver::Database::new(Vec::new());
        let root = db.set_file_text(Path::new("/virtual/test.mc"), source);
        let analysis = pmx_driver::accelerate_analysis(&db, root).as_ref().expect("analysed");
        let mut cur = &analysis.futhark;
        while let pmx_ast::ExprKind::Let(b, rest) = &cur.kind {
            eprintln!("{} : scheme {} ; value {}", b.name.text, b.scheme, b.value.ty);
            let mut v = &b.value;
            while let pmx_ast::ExprKind::Lam { param, body, .. } = &v.kind {
                eprintln!("   lam {} : {}", param.text, v.ty);
                v = body;
            }
            cur = rest;
        }
    });
}
