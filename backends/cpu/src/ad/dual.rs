//! Dual floats: a value with its tangent (forward mode) or with its node
//! in the computation graph (reverse mode).

use smallvec::SmallVec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub struct Dual {
    pub primal: f64,
    /// Which derivative made it (one per call of `jvp`, `vjp`, `grad`):
    /// duals of two derivatives meeting means one is nested in the other.
    pub tag: u64,
    pub part: Part,
}

pub enum Part {
    Tangent(f64),
    Node(Arc<Node>),
}

/// A float computed in reverse mode: the nodes it was computed from, each
/// with the partial derivative of this value with respect to it.
pub struct Node {
    /// Increasing in creation order, so a node's inputs have smaller ids:
    /// sorting by id is a topological order of the graph.
    pub id: u64,
    pub inputs: SmallVec<[(Arc<Node>, f64); 2]>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh number, for nodes and for derivatives' tags.
pub fn fresh() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl Node {
    pub fn new(inputs: SmallVec<[(Arc<Node>, f64); 2]>) -> Arc<Node> {
        Arc::new(Node { id: fresh(), inputs })
    }
}

impl Drop for Node {
    /// Iteratively: a sum over a million elements is a chain of a million
    /// nodes, which a recursive drop would follow down the stack.
    fn drop(&mut self) {
        let mut stack: Vec<Arc<Node>> = self.inputs.drain(..).map(|(n, _)| n).collect();
        while let Some(n) = stack.pop() {
            if let Ok(mut inner) = Arc::try_unwrap(n) {
                stack.extend(inner.inputs.drain(..).map(|(n, _)| n));
            }
        }
    }
}
