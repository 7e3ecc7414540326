//! Strongly connected components of a graph (Tarjan's algorithm), the one
//! implementation for the passes that need them: the Futhark rewrite that
//! splits `recursive` groups (`pmx_accelerate`'s `demote.rs`) and the
//! lowering's dependency order of functions (`pmx_lower`'s `order.rs`).

/// The strongly connected components of the graph whose node `v` has an
/// edge to each node of `edges[v]`, each component's nodes in increasing
/// order. Components come in the order Tarjan's algorithm completes them,
/// starting from node 0, then the lowest node not yet visited: a component
/// comes after every component it has an edge to (dependencies first).
pub fn components(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut t = Tarjan {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.components
}

struct Tarjan<'a> {
    edges: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for &w in &self.edges[v] {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            component.sort_unstable();
            self.components.push(component);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::components;

    #[test]
    fn dependencies_come_first() {
        // 0 -> 1 <-> 2 -> 3, 4 alone, 3 -> 3.
        let edges = vec![vec![1], vec![2], vec![1, 3], vec![3], vec![]];
        assert_eq!(components(&edges), vec![vec![3], vec![1, 2], vec![0], vec![4]]);
    }
}
