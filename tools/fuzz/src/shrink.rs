//! Minimising a program that shows a difference: blocks, helpers and
//! inputs are dropped, and each expression is replaced by the simplest
//! value of its type or by one of its own parts of the same type, as long
//! as the difference stays. A candidate that no longer type-checks is
//! rejected the same way in every mode, so it shows no difference and is
//! not kept.

use crate::program::Program;
use crate::tree::{simplest, Kind, Node};

/// Where an expression of a program lives.
#[derive(Clone, Copy, Debug)]
enum Root {
    Block(usize),
    Helper(usize),
    Input(usize),
}

fn root_mut(p: &mut Program, r: Root) -> &mut Node {
    match r {
        Root::Block(k) => &mut p.blocks[k].expr,
        Root::Helper(k) => &mut p.helpers[k].body,
        Root::Input(k) => &mut p.inputs[k].value,
    }
}

/// The smallest program found, within `attempts` tries of `still` (which
/// says whether a candidate still shows the difference).
pub fn minimise(p: &Program, still: &mut dyn FnMut(&Program) -> bool, mut attempts: usize) -> Program {
    let mut best = p.clone();
    let mut try_ = |candidate: Program, best: &mut Program, attempts: &mut usize| -> bool {
        if *attempts == 0 || candidate == *best {
            return false;
        }
        *attempts -= 1;
        if still(&candidate) {
            *best = candidate;
            true
        } else {
            false
        }
    };
    // Whole parts first: they cut the most at once.
    for k in (0..best.blocks.len()).rev() {
        if best.blocks.len() > 1 {
            let mut c = best.clone();
            c.blocks.remove(k);
            try_(c, &mut best, &mut attempts);
        }
    }
    for k in (0..best.helpers.len()).rev() {
        let mut c = best.clone();
        c.helpers.remove(k);
        try_(c, &mut best, &mut attempts);
    }
    for k in (0..best.inputs.len()).rev() {
        let mut c = best.clone();
        c.inputs.remove(k);
        try_(c, &mut best, &mut attempts);
    }
    // Then each expression, until nothing more goes.
    loop {
        let mut progress = false;
        let roots: Vec<Root> = (0..best.blocks.len())
            .map(Root::Block)
            .chain((0..best.helpers.len()).map(Root::Helper))
            .chain((0..best.inputs.len()).map(Root::Input))
            .collect();
        for r in roots {
            let mut k = 0;
            loop {
                let paths = root_mut(&mut best.clone(), r).paths();
                let Some(path) = paths.get(k).cloned() else { break };
                let node = root_mut(&mut best.clone(), r).at(&path).cloned().expect("a path of the tree");
                let mut replaced = false;
                for by in replacements(&node) {
                    let mut c = best.clone();
                    *root_mut(&mut c, r).at_mut(&path).expect("a path of the tree") = by;
                    if try_(c, &mut best, &mut attempts) {
                        replaced = true;
                        progress = true;
                        break;
                    }
                }
                // A replaced node's own paths are new: look at it again.
                if !replaced {
                    k += 1;
                }
            }
        }
        if !progress || attempts == 0 {
            return best;
        }
    }
}

/// Smaller expressions of the same type as `n`: the simplest value, then
/// its parts of that type, nearest first.
fn replacements(n: &Node) -> Vec<Node> {
    let mut out = Vec::new();
    if let Some(s) = simplest(&n.ty) {
        if s != *n && !matches!(n.kind, Kind::Lit(_) | Kind::Var(_)) {
            out.push(s);
        }
    }
    let mut parts: Vec<(usize, Node)> = Vec::new();
    for path in n.paths().into_iter().skip(1) {
        let part = n.at(&path).expect("a path of the tree");
        if part.ty == n.ty {
            parts.push((path.len(), part.clone()));
        }
    }
    parts.sort_by_key(|(depth, _)| *depth);
    out.extend(parts.into_iter().map(|(_, p)| p));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Block, Class};
    use crate::tree::Ty;

    #[test]
    fn keeps_only_what_the_difference_needs() {
        // "Differs" when the program still divides by zero somewhere.
        let zero = Node::app(Ty::Int, "divi", vec![Node::lit(Ty::Int, "1"), Node::lit(Ty::Int, "0")]);
        let big = Node::app(
            Ty::Int,
            "addi",
            vec![Node::app(Ty::Int, "muli", vec![zero, Node::lit(Ty::Int, "3")]), Node::lit(Ty::Int, "4")],
        );
        let other = Node::app(Ty::Int, "addi", vec![Node::lit(Ty::Int, "1"), Node::lit(Ty::Int, "2")]);
        let block = |e: Node| Block { expr: e, outputs: Vec::new(), approx: false };
        let p = Program {
            class: Class::Futhark,
            seed: 0,
            helpers: vec![],
            inputs: vec![],
            blocks: vec![block(other), block(big)],
        };
        let mut still = |c: &Program| c.render().contains("(divi 1 0)");
        let small = minimise(&p, &mut still, 1000);
        assert_eq!(small.blocks.len(), 1);
        assert_eq!(small.blocks[0].expr.render(), "(divi 1 0)");
    }
}
