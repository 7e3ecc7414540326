//! Walks of the lowered IR's nested blocks: only `If` nests blocks, and
//! every pass that looks at all statements or results of a body goes
//! through these, so that none misses the branches. Walks that need
//! the structure (code generation, the validator's scopes, liveness)
//! follow it themselves; the blocks in tail position have one walk here.

use crate::ir::*;

impl Block {
    /// Every statement of the block and of the blocks inside it (the
    /// branches of an `If`), each before those inside it.
    pub fn for_each_stmt<'a>(&'a self, f: &mut impl FnMut(&'a Stmt)) {
        for s in &self.stmts {
            f(s);
            if let Expr::If { then, otherwise, .. } = &s.expr {
                then.for_each_stmt(f);
                otherwise.for_each_stmt(f);
            }
        }
    }

    /// [`Block::for_each_stmt`], each statement after those inside it
    /// (an `If` after its branches: a pass that reads what the branches
    /// computed when it meets the `If`).
    pub fn for_each_stmt_inner_first<'a>(&'a self, f: &mut impl FnMut(&'a Stmt)) {
        for s in &self.stmts {
            if let Expr::If { then, otherwise, .. } = &s.expr {
                then.for_each_stmt_inner_first(f);
                otherwise.for_each_stmt_inner_first(f);
            }
            f(s);
        }
    }

    /// [`Block::for_each_stmt`] with each statement changeable.
    pub fn for_each_stmt_mut(&mut self, f: &mut impl FnMut(&mut Stmt)) {
        for s in &mut self.stmts {
            f(s);
            if let Expr::If { then, otherwise, .. } = &mut s.expr {
                then.for_each_stmt_mut(f);
                otherwise.for_each_stmt_mut(f);
            }
        }
    }

    /// [`Block::for_each_stmt`] until `f` fails; its first failure.
    pub fn try_for_each_stmt<'a, E>(&'a self, f: &mut impl FnMut(&'a Stmt) -> Result<(), E>) -> Result<(), E> {
        for s in &self.stmts {
            f(s)?;
            if let Expr::If { then, otherwise, .. } = &s.expr {
                then.try_for_each_stmt(f)?;
                otherwise.try_for_each_stmt(f)?;
            }
        }
        Ok(())
    }

    /// Whether `f` holds of a statement of the block or of the blocks
    /// inside it (stopping at the first).
    pub fn any_stmt<'a>(&'a self, mut f: impl FnMut(&'a Stmt) -> bool) -> bool {
        self.try_for_each_stmt(&mut |s| if f(s) { Err(()) } else { Ok(()) }).is_err()
    }

    /// The block and every block inside it whose result is its result:
    /// the branches of an `if` that is the block's last statement and its
    /// value (where a call is a tail call).
    pub fn for_each_tail_block<'a>(&'a self, f: &mut impl FnMut(&'a Block)) {
        f(self);
        if let Some(s) = self.stmts.last() {
            if let (Expr::If { then, otherwise, .. }, Atom::Var(r)) = (&s.expr, &self.result) {
                if r.id == s.var.id {
                    then.for_each_tail_block(f);
                    otherwise.for_each_tail_block(f);
                }
            }
        }
    }

    /// The statement whose value is the block's result where it is the
    /// last one (a call there is a tail call), in this block and in each
    /// of its tail blocks (`for_each_tail_block`).
    pub fn for_each_tail_stmt<'a>(&'a self, f: &mut impl FnMut(&'a Stmt)) {
        self.for_each_tail_block(&mut |b| {
            if let (Some(s), Atom::Var(r)) = (b.stmts.last(), &b.result) {
                if r.id == s.var.id {
                    f(s);
                }
            }
        });
    }

    /// The result of the block and of every block inside it.
    pub fn for_each_result<'a>(&'a self, f: &mut impl FnMut(&'a Atom)) {
        f(&self.result);
        for s in &self.stmts {
            if let Expr::If { then, otherwise, .. } = &s.expr {
                then.for_each_result(f);
                otherwise.for_each_result(f);
            }
        }
    }
}
