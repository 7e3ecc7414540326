//! Lowering of MLang's syntax: `lang` blocks to [`pmx_ast::mlang::Lang`]
//! (kept beside the module) and `use L in e` to a marker in the module.
//! Both are desugared to MExpr by [`crate::mlang`].

use crate::Lower;
use pmx_ast::mlang::*;
use pmx_ast::*;
use tree_sitter::Node;

impl Lower<'_> {
    /// A `lang` block; `at` is how many items come before it.
    pub(crate) fn lang(&mut self, n: Node, at: usize) -> Lang {
        let name = self.binder(self.field(n, "name"), n);
        let includes = self.fields(n, "include").into_iter().map(|i| self.name(i)).collect();
        let mut decls = Vec::new();
        for d in self.children(n) {
            let decl = match crate::kind(d) {
                "syn_decl" => LangDecl::Syn(self.syn_decl(d)),
                "sem_decl" => LangDecl::Sem(self.sem_decl(d)),
                "lang_type" => LangDecl::Type(self.type_decl(d)),
                "lang_con" => LangDecl::Con(self.con_decl(d)),
                _ => continue,
            };
            decls.push(decl);
        }
        let withs = self.fields(n, "with").into_iter().map(|w| self.lang_with(w)).collect();
        Lang { name, includes, withs, decls, span: self.span(n), at }
    }

    /// `with T = A.T + B.T` or `with f = A.f + B.f`.
    fn lang_with(&mut self, n: Node) -> LangWith {
        let name = self.binder(self.field(n, "name"), n);
        let sources: Vec<(Name, Name)> = self
            .fields(n, "source")
            .into_iter()
            .map(|s| (self.binder(self.field(s, "lang"), s), self.binder(self.field(s, "name"), s)))
            .collect();
        let kind = match self.field(n, "name").map(crate::kind) {
            Some("var_ident") => WithKind::Value,
            _ => WithKind::Type,
        };
        LangWith { name, kind, sources, span: self.span(n) }
    }

    fn syn_decl(&mut self, n: Node) -> SynDecl {
        let name = self.binder(self.field(n, "name"), n);
        let params = self.fields(n, "param").into_iter().map(|p| self.name(p)).collect();
        let cons = self
            .children_of(n, "syn_con")
            .into_iter()
            .map(|c| SynCon {
                name: self.binder(self.field(c, "name"), c),
                carried: self.field(c, "type").map(|t| self.type_expr(t)),
                span: self.span(c),
            })
            .collect();
        SynDecl { name, params, cons, span: self.span(n) }
    }

    fn sem_decl(&mut self, n: Node) -> SemDecl {
        let name = self.binder(self.field(n, "name"), n);
        let signature = self.field(n, "type").map(|t| self.type_expr(t));
        let params = if signature.is_some() {
            None
        } else {
            let params = self
                .children_of(n, "sem_param")
                .into_iter()
                .map(|p| SemParam {
                    name: self.binder(self.field(p, "name"), p),
                    annotation: self.field(p, "type").map(|t| self.type_expr(t)),
                    span: self.span(p),
                })
                .collect();
            Some(params)
        };
        let cases = self
            .children_of(n, "sem_case")
            .into_iter()
            .map(|c| SemCase {
                pattern: self.field_pat(c, "pattern"),
                body: self.field_expr(c, "body"),
                span: self.span(c),
            })
            .collect();
        SemDecl { name, signature, params, cases, span: self.span(n) }
    }

    /// `use L in e`: the body, marked with the language it uses.
    pub(crate) fn use_expr(&mut self, n: Node) -> Expr {
        let span = self.span(n);
        let lang = self.binder(self.field(n, "name"), n);
        let body = self.field_expr(n, "body");
        self.uses += 1;
        pmx_ast::mlang::use_marker(&lang, body, span)
    }
}
