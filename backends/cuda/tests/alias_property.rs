//! Random sets of overlapping views on random storages merge into the
//! right roots and offsets.

use pmx_cuda::alias::{merge, Span};
use proptest::prelude::*;

fn views() -> impl Strategy<Value = Vec<Span>> {
    prop::collection::vec((0usize..4, 0usize..40, 0usize..12), 0..24)
        .prop_map(|vs| vs.into_iter().map(|(st, a, n)| Span { storage: st, start: a, end: a + n }).collect())
}

proptest! {
    #[test]
    fn roots_are_exact(vs in views()) {
        let r = merge(&vs);
        prop_assert_eq!(r.views.len(), vs.len());
        // Every view lies in its root, at its offset.
        for (v, (root, off)) in vs.iter().zip(&r.views) {
            let root = r.roots[*root];
            prop_assert_eq!(root.storage, v.storage);
            prop_assert!(root.start <= v.start && v.end <= root.end);
            prop_assert_eq!(root.start + off, v.start);
        }
        // Views that overlap or touch on one storage share a root.
        for (i, a) in vs.iter().enumerate() {
            for (j, b) in vs.iter().enumerate() {
                if a.storage == b.storage && a.start <= b.end && b.start <= a.end {
                    prop_assert_eq!(r.views[i].0, r.views[j].0);
                }
            }
        }
        // Roots of one storage neither overlap nor touch, and each is
        // covered by its views without a gap (no larger than their union).
        for (k, x) in r.roots.iter().enumerate() {
            for y in &r.roots[k + 1..] {
                prop_assert!(x.storage != y.storage || x.end < y.start || y.end < x.start);
            }
            let mut members: Vec<&Span> = vs.iter().zip(&r.views).filter(|(_, (root, _))| *root == k).map(|(v, _)| v).collect();
            members.sort_by_key(|v| v.start);
            prop_assert_eq!(members[0].start, x.start);
            let mut reach = x.start;
            for m in members {
                prop_assert!(m.start <= reach);
                reach = reach.max(m.end);
            }
            prop_assert_eq!(reach, x.end);
        }
    }
}
