//! Walks of the lowered IR's nested blocks: only `If` nests blocks, and
//! every pass that looks at all statements or results of a body goes
//! through these, so that none misses the branches. Walks that need
//! the structure (code generation, the validator's scopes, tail
//! positions, liveness) follow it themselves.

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
