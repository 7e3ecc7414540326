//! What `pmx explain` says about one `accelerate` expression, as lines of
//! text: the rendering of the middle end's boundary description and
//! classification, shared by the command line and hover (both edges).

use pmx_accelerate::{Accelerate, Boundary, Class, Size};
use pmx_ast::Span;

/// The explanation of one accelerate expression; `locate` turns a span
/// into `file:line:column`.
pub fn lines(a: &Accelerate, locate: &mut dyn FnMut(Span) -> String) -> Vec<String> {
    let b = &a.boundary;
    let mut out = Vec::new();
    out.push(format!(
        "backend: {}",
        match &a.class {
            Class::One(backend) => backend.name().to_string(),
            Class::Any => "none (it uses no parallel keyword)".to_string(),
            Class::Invalid => "none (it uses keywords of both backends)".to_string(),
            Class::Nested => "none (it is nested in another accelerate expression, an error)".to_string(),
        }
    ));
    for r in &a.reasons {
        let chain: Vec<String> = r.chain.iter().map(|(n, s)| format!("{n} ({})", locate(*s))).collect();
        out.push(format!(
            "why: {} -> `{}` at {} ({})",
            chain.join(" -> "),
            r.keyword,
            locate(r.keyword_span),
            r.backend.name()
        ));
    }
    if b.params.is_empty() {
        out.push("parameters: none (it uses no data from outside)".into());
    } else {
        out.push("parameters:".into());
        for p in &b.params {
            out.push(format!("  {} : {}  ({})", p.name.text, p.ty, p.passing.describe()));
        }
    }
    for c in &b.sizes {
        out.push(format!("size: {} = {}  (utest at {})", size(b, c.lhs), size(b, c.rhs), locate(c.span)));
    }
    out.push(format!("returns: {}", b.result.ty));
    out.push(if a.functions.is_empty() {
        "functions extracted with it: none".into()
    } else {
        format!("functions extracted with it: {}", a.functions.join(", "))
    });
    out
}

/// One side of a size equality, in MExpr.
pub fn size(b: &Boundary, s: Size) -> String {
    match s {
        Size::Dim { param, depth } => {
            let mut e = b.params[param].name.text.to_string();
            for _ in 0..depth {
                e = format!("head {e}");
            }
            if depth > 0 {
                e = format!("({e})");
            }
            format!("length {e}")
        }
        Size::Param(p) => b.params[p].name.text.to_string(),
        Size::Lit(n) => n.to_string(),
    }
}
