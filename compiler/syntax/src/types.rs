//! Lowering of type expressions.

use crate::Lower;
use pmx_ast::*;
use tree_sitter::Node;

impl Lower<'_> {
    fn field_type(&mut self, n: Node, field: &'static str) -> TypeExpr {
        match self.field(n, field) {
            Some(c) => self.type_expr(c),
            None => TypeExpr { kind: TypeExprKind::Error, span: self.span(n) },
        }
    }

    pub(crate) fn type_expr(&mut self, n: Node) -> TypeExpr {
        if !self.enter(1, n) {
            return TypeExpr { kind: TypeExprKind::Error, span: self.span(n) };
        }
        let t = self.type_expr_at(n);
        self.depth -= 1;
        t
    }

    fn type_expr_at(&mut self, n: Node) -> TypeExpr {
        let span = self.span(n);
        let kind = match crate::kind(n) {
            "use_type" => {
                let lang = self.binder(self.field(n, "name"), n);
                let body = self.field_type(n, "body");
                self.uses += 1;
                return pmx_ast::mlang::use_type_marker(&lang, body, span);
            }
            "arrow_type" => {
                TypeExprKind::Arrow(Box::new(self.field_type(n, "from")), Box::new(self.field_type(n, "to")))
            }
            // Miking's kinds (`all a :: {T[> K]}.`) and restrictions
            // (`T{a}`) narrow a variant type to some of its constructors.
            // Their names are resolved, but the types are checked as the
            // unrestricted ones, as Miking does by default (without
            // `--enable-constructor-types`; README, Differences from Miking).
            "forall_type" => {
                let var = self.binder(self.field(n, "var"), n);
                let kind = match self.field(n, "kind") {
                    Some(k) => self.children_of(k, "kind_entry").into_iter().map(|e| self.kind_entry(e)).collect(),
                    None => Vec::new(),
                };
                TypeExprKind::All(var, kind, Box::new(self.field_type(n, "body")))
            }
            "restricted_type" => {
                let con = self.binder(self.field(n, "constructor"), n);
                let restriction = match self.field(n, "var") {
                    Some(v) => Restriction::Var(self.name(v)),
                    None => Restriction::Cons {
                        negated: self.field(n, "negated").is_some(),
                        cons: self.con_list(self.field(n, "constructors")),
                    },
                };
                TypeExprKind::Restricted(con, restriction)
            }
            "type_app" => {
                let con = self.binder(self.field(n, "constructor"), n);
                let args: Vec<TypeExpr> = self.fields(n, "argument").into_iter().map(|a| self.type_expr(a)).collect();
                match builtin_type_name(&con.text) {
                    Some(_) => {
                        self.diags.push(
                            pmx_diagnostics::Diagnostic::error(
                                pmx_diagnostics::Code::TypeArity,
                                span,
                                format!("the type `{}` takes no arguments", con.text),
                            )
                            .with_label("applied to arguments here"),
                        );
                        TypeExprKind::Error
                    }
                    None => TypeExprKind::Con(con, args),
                }
            }
            // A type variable standing for a type constructor, applied to
            // arguments (`all self. self LClosed RClosed`, as Miking's
            // parser/breakable.mc writes).
            "var_app_type" => {
                let Some(var) = self.field(n, "var") else { return TypeExpr { kind: TypeExprKind::Error, span } };
                let var = self.name(var);
                let args: Vec<TypeExpr> = self.fields(n, "argument").into_iter().map(|a| self.type_expr(a)).collect();
                TypeExprKind::VarApp(var, args)
            }
            "type_con" => {
                let name = match self.first(n) {
                    Some(c) => self.name(c),
                    None => return TypeExpr { kind: TypeExprKind::Error, span },
                };
                let escaped = self.text(n).starts_with('#');
                match builtin_type_name(&name.text) {
                    Some(kind) if !escaped => kind,
                    _ => TypeExprKind::Con(name, Vec::new()),
                }
            }
            "type_var" => match self.first(n) {
                Some(c) => TypeExprKind::Var(self.name(c)),
                None => TypeExprKind::Error,
            },
            "tensor_type" => TypeExprKind::Tensor(Box::new(self.field_type(n, "element"))),
            "seq_type" => TypeExprKind::Seq(Box::new(self.field_type(n, "element"))),
            "record_type" => TypeExprKind::Record(
                self.children_of(n, "record_type_field")
                    .into_iter()
                    .filter_map(|f| {
                        let label = self.label(self.field(f, "label")?);
                        Some((label, self.field_type(f, "type")))
                    })
                    .collect(),
            ),
            "tuple_type" => {
                let elems = self.children(n);
                TypeExprKind::Record(
                    elems.into_iter().enumerate().map(|(i, c)| (self.index_label(i, c), self.type_expr(c))).collect(),
                )
            }
            "unit_type" => TypeExprKind::Record(Vec::new()),
            "paren_type" => match self.first(n) {
                Some(c) => return self.type_expr(c),
                None => TypeExprKind::Error,
            },
            _ => TypeExprKind::Error,
        };
        TypeExpr { kind, span }
    }

    /// `T[> A]`, `T[< A B | C]` or `T[| A]`.
    fn kind_entry(&mut self, n: Node) -> KindEntry {
        let ty = self.binder(self.field(n, "type"), n);
        let exact = self.field(n, "exact");
        let lower = self.con_list(self.field(n, "lower").or(exact));
        let upper = match exact {
            Some(_) => Some(lower.clone()),
            // `T[<]` and `T[< | A]` bound from above, even by nothing.
            None if (0..n.child_count()).filter_map(|i| n.child(i)).any(|c| c.kind() == "<") => {
                Some(self.con_list(self.field(n, "upper")))
            }
            None => None,
        };
        KindEntry { ty, lower, upper }
    }

    fn con_list(&mut self, n: Option<Node>) -> Vec<Name> {
        match n {
            Some(list) => self.children(list).into_iter().map(|c| self.name(c)).collect(),
            None => Vec::new(),
        }
    }
}

fn builtin_type_name(name: &str) -> Option<TypeExprKind> {
    Some(match name {
        "Int" => TypeExprKind::Prim(Prim::Int),
        "Float" => TypeExprKind::Prim(Prim::Float),
        "Bool" => TypeExprKind::Prim(Prim::Bool),
        "Char" => TypeExprKind::Prim(Prim::Char),
        "String" => TypeExprKind::Prim(Prim::String),
        "Unknown" => TypeExprKind::Unknown,
        _ => return None,
    })
}
