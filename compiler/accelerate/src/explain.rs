//! What `pmx explain` says about one `accelerate` expression, as lines of
//! text, shared by the command line and the language server's hover.

use crate::{Accelerate, Class, Passing};
use pmx_ast::Span;

/// The explanation of one accelerate expression; `locate` turns a span
/// into `file:line:column`.
pub fn lines(a: &Accelerate, locate: &mut dyn FnMut(Span) -> String) -> Vec<String> {
    let b = &a.binding;
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
        for (i, p) in b.params.iter().enumerate() {
            let passing = a.passing.get(i).copied().unwrap_or_else(|| Passing::of(&p.ty));
            out.push(format!("  {} : {}  ({})", p.name.text, p.ty, passing.describe()));
        }
    }
    out.push(format!("returns: {}", b.result));
    out.push(if a.functions.is_empty() {
        "functions extracted with it: none".into()
    } else {
        format!("functions extracted with it: {}", a.functions.join(", "))
    });
    out
}
