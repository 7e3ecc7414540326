//! Tree-sitter grammar for MExpr, the core language of the Miking framework.
//!
//! API boundary: this crate only exposes the compiled grammar and its
//! metadata. [`LANGUAGE`] is the parser to load into a
//! `tree_sitter::Parser`; [`NODE_TYPES`] lists every node kind and field the
//! grammar can produce (the contract with the lowering pass, see `SPEC.md`);
//! [`HIGHLIGHTS_QUERY`] is the syntax-highlighting query. Turning the
//! concrete syntax tree into the compiler's AST is not done here.
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser
//!     .set_language(&tree_sitter_mexpr::LANGUAGE.into())
//!     .expect("Error loading MExpr grammar");
//! let tree = parser.parse("mexpr addi 1 2", None).unwrap();
//! assert!(!tree.root_node().has_error());
//! ```

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_mexpr() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for MExpr.
///
/// [`LanguageFn`]: https://docs.rs/tree-sitter-language/*/tree_sitter_language/struct.LanguageFn.html
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_mexpr) };

/// The content of the [`node-types.json`] file for this grammar.
///
/// [`node-types.json`]: https://tree-sitter.github.io/tree-sitter/using-parsers/6-static-node-types
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// The syntax highlighting query for this grammar.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> tree_sitter::Parser {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&LANGUAGE.into()).expect("Error loading MExpr grammar");
        parser
    }

    #[test]
    fn can_load_grammar_and_parse_a_program() {
        let source = r#"include "seq.mc"
/- a /- nested -/ comment -/
type Option a
con Some : a -> Option a
let f : Int -> Int = lam x. addi x 1
recursive
  let even = lam n. if eqi n 0 then true else odd (subi n 1)
  let odd = lam n. if eqi n 0 then false else even (subi n 1)
end
utest f 1 with 2
mexpr
let t = (1, [2.5], 'c', "s").0 in
match Some t with Some x then accelerate (f x) else 0
"#;
        let tree = parser().parse(source, None).unwrap();
        let root = tree.root_node();
        assert_eq!(root.kind(), "source_file");
        assert!(!root.has_error(), "{}", root.to_sexp());
        let mut cursor = root.walk();
        let decls: Vec<_> = root.named_children(&mut cursor).filter(|n| !n.is_extra()).collect();
        let kinds: Vec<_> = decls.iter().map(|n| n.kind()).collect();
        assert_eq!(kinds, ["include", "top_type", "top_con", "top_let", "top_recursive", "top_utest", "mexpr_section"]);
        let section = decls[6];
        assert_eq!(section.kind(), "mexpr_section");
        assert_eq!(section.child_by_field_name("body").unwrap().kind(), "let_expr");
    }

    #[test]
    fn syntax_errors_stay_in_their_declaration() {
        let source = "let x =\nlet y = (1,\nlet z = f )\nlet ok = 1\n";
        let tree = parser().parse(source, None).unwrap();
        let root = tree.root_node();
        assert!(root.has_error());
        // Three broken declarations (a missing value, an unclosed tuple, a
        // stray `)`) and a good one: each error stays where it is.
        assert_eq!(
            root.to_sexp(),
            "(source_file \
             (top_let name: (var_ident) value: (var (MISSING var_ident))) \
             (top_let name: (var_ident) value: (tuple (integer) (MISSING \")\"))) \
             (top_let name: (var_ident) value: (var (var_ident))) \
             (ERROR) \
             (top_let name: (var_ident) value: (integer)))"
        );
    }

    #[test]
    fn highlights_query_compiles() {
        let language: tree_sitter::Language = LANGUAGE.into();
        tree_sitter::Query::new(&language, HIGHLIGHTS_QUERY).expect("invalid highlights query");
    }

    #[test]
    fn node_types_lists_the_spec_kinds() {
        for kind in ["\"top_let\"", "\"mexpr_section\"", "\"concat_pat\"", "\"tensor_type\""] {
            assert!(NODE_TYPES.contains(kind), "{kind} missing from node-types.json");
        }
    }
}
