//! How two patterns of a semantic function relate, as sets of values: one
//! inside the other, equal, disjoint, or overlapping. Miking orders a
//! `sem`'s cases by this (more specific first) and refuses two cases that
//! match the same values or overlap without one containing the other.
//!
//! The question asked is always "is there a value that matches every
//! pattern of `pos` and none of `neg`?". Values are untyped and the
//! universe is open (there is always another constructor, integer or
//! kind of value), as in Miking, which knows nothing of types here.
//! Patterns compare constructors by name, as written: in one language a
//! name means one constructor.

use pmx_ast::{Pat, PatKind, SmolStr};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// The first matches fewer values (it is more specific).
    Subset,
    Superset,
    Equal,
    Disjoint,
    Overlapping,
}

pub fn relation(a: &Pat, b: &Pat) -> Relation {
    // Most cases of a composed language's sem match different
    // constructors: disjoint at a glance, without the search (every new
    // case is related to every case before it).
    if let (PatKind::Con(x, _), PatKind::Con(y, _)) = (&a.kind, &b.kind) {
        if x.text != y.text {
            return Relation::Disjoint;
        }
    }
    let (a, b) = (simple(a), simple(b));
    let mut fuel = FUEL;
    if !nonempty(vec![a.clone(), b.clone()], Vec::new(), &mut fuel) {
        return Relation::Disjoint;
    }
    let a_in_b = !nonempty(vec![a.clone()], vec![b.clone()], &mut fuel);
    let b_in_a = !nonempty(vec![b], vec![a], &mut fuel);
    match (a_in_b, b_in_a) {
        (true, true) => Relation::Equal,
        (true, false) => Relation::Subset,
        (false, true) => Relation::Superset,
        (false, false) => Relation::Overlapping,
    }
}

/// Steps one relation may take (the search branches on or-patterns and
/// on records' fields); past it a set counts as not empty, which can only
/// make two cases look overlapping, never order them wrongly.
const FUEL: u32 = 100_000;

/// A pattern without binders.
#[derive(Clone, Debug)]
enum P {
    Any,
    Int(i64),
    Char(char),
    Bool(bool),
    Con(SmolStr, Box<P>),
    Record(Vec<(SmolStr, P)>),
    Seq(Vec<P>),
    /// `prefix ++ _ ++ suffix`.
    Edge(Vec<P>, Vec<P>),
    And(Box<P>, Box<P>),
    Or(Box<P>, Box<P>),
    Not(Box<P>),
}

fn simple(p: &Pat) -> P {
    match &p.kind {
        PatKind::Wild | PatKind::Bind(_) | PatKind::Error => P::Any,
        PatKind::Int(n) => P::Int(*n),
        PatKind::Char(c) => P::Char(*c),
        PatKind::Bool(b) => P::Bool(*b),
        PatKind::Con(n, sub) => P::Con(n.text.clone(), Box::new(simple(sub))),
        PatKind::Record(fs) => P::Record(fs.iter().map(|(l, p)| (l.text.clone(), simple(p))).collect()),
        PatKind::Seq(ps) => P::Seq(ps.iter().map(simple).collect()),
        PatKind::Edge { prefix, suffix, .. } => {
            P::Edge(prefix.iter().map(simple).collect(), suffix.iter().map(simple).collect())
        }
        PatKind::And(a, b) => P::And(Box::new(simple(a)), Box::new(simple(b))),
        PatKind::Or(a, b) => P::Or(Box::new(simple(a)), Box::new(simple(b))),
        PatKind::Not(a) => P::Not(Box::new(simple(a))),
    }
}

/// Whether some value matches all of `pos` and none of `neg`.
fn nonempty(mut pos: Vec<P>, mut neg: Vec<P>, fuel: &mut u32) -> bool {
    if *fuel == 0 {
        return true;
    }
    *fuel -= 1;
    // Take the connectives apart first, so that only heads remain.
    if let Some(i) = pos.iter().position(|p| matches!(p, P::Any | P::And(..) | P::Or(..) | P::Not(_))) {
        match pos.swap_remove(i) {
            P::And(a, b) => {
                pos.push(*a);
                pos.push(*b);
            }
            P::Not(a) => neg.push(*a),
            P::Or(a, b) => {
                let mut other = pos.clone();
                other.push(*b);
                pos.push(*a);
                return nonempty(pos, neg.clone(), fuel) || nonempty(other, neg, fuel);
            }
            _ => {}
        }
        return nonempty(pos, neg, fuel);
    }
    if let Some(i) = neg.iter().position(|p| matches!(p, P::Any | P::And(..) | P::Or(..) | P::Not(_))) {
        match neg.swap_remove(i) {
            P::Any => return false,
            P::Or(a, b) => {
                neg.push(*a);
                neg.push(*b);
            }
            P::Not(a) => pos.push(*a),
            P::And(a, b) => {
                let mut other = neg.clone();
                other.push(*b);
                neg.push(*a);
                return nonempty(pos.clone(), neg, fuel) || nonempty(pos, other, fuel);
            }
            _ => {}
        }
        return nonempty(pos, neg, fuel);
    }
    let Some(first) = pos.first() else { return true };
    match first {
        P::Int(_) | P::Char(_) | P::Bool(_) => {
            let same = |a: &P, b: &P| match (a, b) {
                (P::Int(x), P::Int(y)) => x == y,
                (P::Char(x), P::Char(y)) => x == y,
                (P::Bool(x), P::Bool(y)) => x == y,
                _ => false,
            };
            pos.iter().all(|p| same(p, first)) && !neg.iter().any(|p| same(p, first))
        }
        P::Con(c, _) => {
            let c = c.clone();
            let mut subs = Vec::new();
            for p in pos {
                match p {
                    P::Con(d, sub) if d == c => subs.push(*sub),
                    _ => return false,
                }
            }
            let negs = neg
                .into_iter()
                .filter_map(|p| match p {
                    P::Con(d, sub) if d == c => Some(*sub),
                    _ => None,
                })
                .collect();
            nonempty(subs, negs, fuel)
        }
        P::Record(_) => {
            let mut fields = Vec::new();
            for p in pos {
                match p {
                    P::Record(fs) => fields.extend(fs),
                    _ => return false,
                }
            }
            let negs: Vec<_> = neg
                .into_iter()
                .filter_map(|p| match p {
                    P::Record(fs) => Some(fs),
                    _ => None,
                })
                .collect();
            records(&fields, &negs, &mut Vec::new(), fuel)
        }
        P::Seq(_) | P::Edge(..) => sequences(pos, neg, fuel),
        P::Any | P::And(..) | P::Or(..) | P::Not(_) => true,
    }
}

/// A record whose fields match `pos`, and which each record pattern of
/// `negs` misses in at least one field (`chosen`: the fields picked to
/// miss so far).
fn records(pos: &[(SmolStr, P)], negs: &[Vec<(SmolStr, P)>], chosen: &mut Vec<(SmolStr, P)>, fuel: &mut u32) -> bool {
    let Some((first, rest)) = negs.split_first() else {
        let mut labels: Vec<&SmolStr> = pos.iter().chain(chosen.iter()).map(|(l, _)| l).collect();
        labels.sort();
        labels.dedup();
        return labels.into_iter().all(|l| {
            let here = |fs: &[(SmolStr, P)]| fs.iter().filter(|(m, _)| m == l).map(|(_, p)| p.clone()).collect();
            nonempty(here(pos), here(chosen), fuel)
        });
    };
    for field in first {
        chosen.push(field.clone());
        let found = records(pos, rest, chosen, fuel);
        chosen.pop();
        if found {
            return true;
        }
    }
    false
}

/// Sequences: each length that can tell the patterns apart is tried, the
/// patterns becoming records over the positions. Past the longest fixed
/// length and the longest prefix and suffix together, longer sequences
/// behave alike (their middle elements are free).
fn sequences(pos: Vec<P>, neg: Vec<P>, fuel: &mut u32) -> bool {
    let (mut fixed, mut prefix, mut suffix) = (0, 0, 0);
    for p in pos.iter().chain(neg.iter()) {
        match p {
            P::Seq(ps) => fixed = fixed.max(ps.len()),
            P::Edge(pre, suf) => {
                prefix = prefix.max(pre.len());
                suffix = suffix.max(suf.len());
            }
            _ => {}
        }
    }
    'lengths: for len in 0..=fixed.max(prefix + suffix) + 1 {
        let at = |p: &P| -> Option<Vec<(SmolStr, P)>> {
            match p {
                P::Seq(ps) if ps.len() == len => Some(index(ps.iter().cloned().enumerate())),
                P::Edge(pre, suf) if pre.len() + suf.len() <= len => {
                    let start = len - suf.len();
                    Some(index(
                        pre.iter()
                            .cloned()
                            .enumerate()
                            .chain(suf.iter().cloned().enumerate().map(|(i, p)| (start + i, p))),
                    ))
                }
                _ => None,
            }
        };
        let mut fields = Vec::new();
        for p in &pos {
            match at(p) {
                Some(fs) => fields.extend(fs),
                None if matches!(p, P::Seq(_) | P::Edge(..)) => continue 'lengths,
                None => return false,
            }
        }
        let negs: Vec<_> = neg.iter().filter_map(at).collect();
        if records(&fields, &negs, &mut Vec::new(), fuel) {
            return true;
        }
    }
    false
}

fn index(ps: impl Iterator<Item = (usize, P)>) -> Vec<(SmolStr, P)> {
    ps.map(|(i, p)| (SmolStr::new(i.to_string()), p)).collect()
}

#[cfg(test)]
mod tests {
    use super::{relation, Relation};
    use pmx_ast::mlang::LangDecl;
    use pmx_ast::{FileId, Pat};

    /// The patterns of the cases of `sem f = | a -> 0 | b -> 0`.
    fn pats(a: &str, b: &str) -> (Pat, Pat) {
        let text = format!("lang L\n  sem f =\n  | {a} -> 0\n  | {b} -> 0\nend\n");
        let parsed = crate::parse(&text, FileId(0));
        assert!(parsed.diagnostics.is_empty(), "{text}: {:?}", parsed.diagnostics);
        let LangDecl::Sem(sem) = &parsed.langs[0].decls[0] else { panic!("a sem") };
        (sem.cases[0].pattern.clone(), sem.cases[1].pattern.clone())
    }

    fn rel(a: &str, b: &str) -> Relation {
        let (p, q) = pats(a, b);
        relation(&p, &q)
    }

    #[test]
    fn relations() {
        use Relation::*;
        assert_eq!(rel("K 1", "K _"), Subset);
        assert_eq!(rel("_", "K 1"), Superset);
        assert_eq!(rel("K x", "K _"), Equal);
        assert_eq!(rel("K 1", "K 2"), Disjoint);
        assert_eq!(rel("K _", "J _"), Disjoint);
        assert_eq!(rel("(0, _)", "(_, 0)"), Overlapping);
        assert_eq!(rel("(0, 0)", "(0, _)"), Subset);
        assert_eq!(rel("{x = 0}", "{x = 0, y = 1}"), Superset);
        assert_eq!(rel("{x = 0}", "{y = 1}"), Overlapping);
        assert_eq!(rel("A _ | B _", "A _"), Superset);
        assert_eq!(rel("!(0 | 1) & n", "_"), Subset);
        assert_eq!(rel("!0", "0"), Disjoint);
        assert_eq!(rel("[]", "[a] ++ _"), Disjoint);
        assert_eq!(rel("[a, b] ++ _", "[a] ++ _"), Subset);
        assert_eq!(rel("_ ++ [1]", "[1] ++ _"), Overlapping);
        assert_eq!(rel("\"ab\"", "[a] ++ _"), Subset);
        assert_eq!(rel("[1, 2]", "_ ++ [2]"), Subset);
        assert_eq!(rel("true", "false"), Disjoint);
        assert_eq!(rel("'a'", "c"), Subset);
        assert_eq!(rel("K (J 1, _)", "K (J _, 2)"), Overlapping);
    }
}
