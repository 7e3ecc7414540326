//! Reusing the lowered declarations of a file's previous version.
//!
//! After an edit, tree-sitter reparses around the change, but lowering the
//! new tree would still build every declaration again (most of an edit's
//! time in a large file). A top-level declaration whose text the edit did
//! not touch lowers to what it lowered to before, moved by the length the
//! edit added or removed if it comes after the edit: the parser reads the
//! same tokens in the same (top-level) state, so its subtree is the same.
//! So each top-level node is matched with the previous version's node of
//! the same kind at the same place (before the edit) or at the place moved
//! by the edit (after it), and its lowered form is copied and moved.
//! Only a parse whose lowering reported nothing is reused, so no
//! diagnostic ever has to be carried over.

use crate::Parsed;
use pmx_ast::shift::Shift;
use pmx_ast::Module;
use tree_sitter::{InputEdit, Node};

/// One top-level node of a lowered tree and where its lowered form went.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Top {
    pub start: usize,
    pub end: usize,
    pub kind: u16,
    pub part: Part,
    /// How many `use` markers its lowering holds (`Parsed::uses`).
    pub uses: usize,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Part {
    Include(usize),
    Item(usize),
    Main,
    /// A `lang` block, kept in `Parsed::langs` (lowered again: it records
    /// where it stands among the items, which an edit before it moves).
    Lang,
    /// Lowered to nothing (an include without a path, say).
    Nothing,
}

/// The previous version's lowering, and the edit since.
pub(crate) struct Reuse<'p> {
    pub parsed: &'p Parsed,
    pub tops: &'p [Top],
    pub edit: InputEdit,
}

impl Reuse<'_> {
    /// Copies the previous lowering of `node` into `module` (recording it
    /// in `tops`), if the edit left the node's text alone.
    pub fn take(&self, node: Node, module: &mut Module, tops: &mut Vec<Top>) -> bool {
        let (start, end) = (node.start_byte(), node.end_byte());
        let e = &self.edit;
        let delta = e.new_end_byte as i64 - e.old_end_byte as i64;
        let old_start = if end <= e.start_byte {
            start
        } else if start >= e.new_end_byte {
            (start as i64 - delta) as usize
        } else {
            return false;
        };
        let moved = if end <= e.start_byte { 0 } else { delta };
        let at = self.tops.partition_point(|t| t.start < old_start);
        let Some(old) = self.tops.get(at) else { return false };
        if old.start != old_start || (old.end as i64 + moved) as usize != end || old.kind != node.kind_id() {
            return false;
        }
        let old_module = &self.parsed.module;
        let part = match old.part {
            Part::Include(i) => {
                let mut include = old_module.includes[i].clone();
                include.shift(moved);
                module.includes.push(include);
                Part::Include(module.includes.len() - 1)
            }
            Part::Item(i) => {
                let mut item = old_module.items[i].clone();
                item.shift(moved);
                module.items.push(item);
                Part::Item(module.items.len() - 1)
            }
            Part::Main => {
                let Some(main) = &old_module.main else { return false };
                let mut main = main.clone();
                main.shift(moved);
                module.main = Some(main);
                Part::Main
            }
            Part::Lang => return false,
            Part::Nothing => Part::Nothing,
        };
        tops.push(Top { start, end, kind: node.kind_id(), part, uses: old.uses });
        true
    }
}
