//! Semantic types: what inference finds and later passes read.

use crate::name::NameId;
use smol_str::SmolStr;
use std::cmp::Ordering;
use std::fmt;
use std::sync::{Arc, LazyLock};

/// A type; cheap to clone (a shared pointer).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Ty(Arc<TyKind>);

/// A quantified type variable; `name` is for printing only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TyVar {
    pub id: u32,
    pub name: SmolStr,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TyKind {
    /// Not inferred (before type checking, or after an error).
    Unknown,
    Int,
    Float,
    Bool,
    Char,
    Seq(Ty),
    Tensor(Ty),
    /// Fields sorted by [`compare_labels`]; `()` is the empty record.
    Record(Vec<(SmolStr, Ty)>),
    Arrow(Ty, Ty),
    /// A named type constructor applied to arguments.
    Con(NameId, SmolStr, Vec<Ty>),
    /// A variable bound by an enclosing [`TyKind::All`].
    Var(TyVar),
    /// `all a. T`. The field list, when not empty, constrains `a` to record
    /// types that have at least these fields (from projections and record
    /// patterns on values of unknown type).
    All(TyVar, Vec<(SmolStr, Ty)>, Ty),
    /// An inference variable that nothing determined.
    Meta(u32),
    /// A type variable (or an inference variable) standing for a type
    /// constructor, applied to arguments: Miking's `self LClosed RClosed`
    /// (type variables of higher kind). Built by [`Ty::app`] only, so the
    /// head is never a [`TyKind::Con`] (that is a `Con` with the
    /// arguments appended), another `App`, or `Unknown`, and there is at
    /// least one argument.
    App(Ty, Vec<Ty>),
}

static UNKNOWN: LazyLock<Ty> = LazyLock::new(|| Ty(Arc::new(TyKind::Unknown)));
static INT: LazyLock<Ty> = LazyLock::new(|| Ty(Arc::new(TyKind::Int)));
static FLOAT: LazyLock<Ty> = LazyLock::new(|| Ty(Arc::new(TyKind::Float)));
static BOOL: LazyLock<Ty> = LazyLock::new(|| Ty(Arc::new(TyKind::Bool)));
static CHAR: LazyLock<Ty> = LazyLock::new(|| Ty(Arc::new(TyKind::Char)));
static UNIT: LazyLock<Ty> = LazyLock::new(|| Ty(Arc::new(TyKind::Record(Vec::new()))));

impl Ty {
    pub fn new(kind: TyKind) -> Ty {
        match kind {
            TyKind::Unknown => Ty::unknown(),
            TyKind::Int => Ty::int(),
            TyKind::Float => Ty::float(),
            TyKind::Bool => Ty::bool(),
            TyKind::Char => Ty::char(),
            kind => Ty(Arc::new(kind)),
        }
    }
    pub fn unknown() -> Ty {
        UNKNOWN.clone()
    }
    pub fn int() -> Ty {
        INT.clone()
    }
    pub fn float() -> Ty {
        FLOAT.clone()
    }
    pub fn bool() -> Ty {
        BOOL.clone()
    }
    pub fn char() -> Ty {
        CHAR.clone()
    }
    pub fn unit() -> Ty {
        UNIT.clone()
    }
    pub fn string() -> Ty {
        Ty::seq(Ty::char())
    }
    pub fn seq(elem: Ty) -> Ty {
        Ty(Arc::new(TyKind::Seq(elem)))
    }
    pub fn tensor(elem: Ty) -> Ty {
        Ty(Arc::new(TyKind::Tensor(elem)))
    }
    pub fn arrow(from: Ty, to: Ty) -> Ty {
        Ty(Arc::new(TyKind::Arrow(from, to)))
    }
    /// A record type; sorts the fields.
    pub fn record(mut fields: Vec<(SmolStr, Ty)>) -> Ty {
        fields.sort_by(|a, b| compare_labels(&a.0, &b.0));
        Ty(Arc::new(TyKind::Record(fields)))
    }
    /// A tuple type: a record labelled `0`, `1`, ...
    pub fn tuple(elems: Vec<Ty>) -> Ty {
        Ty::record(elems.into_iter().enumerate().map(|(i, t)| (SmolStr::new(i.to_string()), t)).collect())
    }

    /// `head` applied to `args`, kept in the normal form [`TyKind::App`]
    /// documents: a named type constructor (perhaps already partially
    /// applied, which is what a variable of higher kind is bound to)
    /// takes the arguments as its own, so that substituting or solving the
    /// head of an application gives the same type as writing it out.
    pub fn app(head: Ty, args: Vec<Ty>) -> Ty {
        if args.is_empty() {
            return head;
        }
        match head.kind() {
            TyKind::Con(id, name, first) => {
                let mut all = first.clone();
                all.extend(args);
                Ty::new(TyKind::Con(*id, name.clone(), all))
            }
            TyKind::App(h, first) => {
                let mut all = first.clone();
                all.extend(args);
                Ty::new(TyKind::App(h.clone(), all))
            }
            TyKind::Unknown => Ty::unknown(),
            _ => Ty::new(TyKind::App(head, args)),
        }
    }

    pub fn kind(&self) -> &TyKind {
        &self.0
    }

    pub fn is_unknown(&self) -> bool {
        matches!(*self.0, TyKind::Unknown)
    }

    /// The parameter and result types of a function type.
    pub fn as_arrow(&self) -> Option<(&Ty, &Ty)> {
        match &*self.0 {
            TyKind::Arrow(a, b) => Some((a, b)),
            _ => None,
        }
    }

    /// The type under all leading quantifiers.
    pub fn strip_foralls(&self) -> &Ty {
        match &*self.0 {
            TyKind::All(_, _, body) => body.strip_foralls(),
            _ => self,
        }
    }
}

/// Record labels order: numeric labels by value first (so tuples print in
/// order), then the others alphabetically.
pub fn compare_labels(a: &str, b: &str) -> Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// True when the labels are exactly `0`, `1`, ..., `n-1` with n != 1 or
/// `0` alone (the one-tuple `(T,)`).
pub fn is_tuple_labels<'a>(labels: impl Iterator<Item = &'a SmolStr>) -> bool {
    let mut n = 0;
    for (i, l) in labels.enumerate() {
        if l.as_str() != i.to_string() {
            return false;
        }
        n += 1;
    }
    n > 0
}

impl fmt::Debug for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_ty(f, self, Prec::Top)
    }
}

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Prec {
    Top,
    Arrow,
    /// Left of an arrow: arrows need parentheses, applications do not.
    ArrowLeft,
    /// Argument of a type application.
    App,
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[(SmolStr, Ty)]) -> fmt::Result {
    if fields.is_empty() {
        return write!(f, "()");
    }
    if is_tuple_labels(fields.iter().map(|(l, _)| l)) {
        write!(f, "(")?;
        for (i, (_, t)) in fields.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write_ty(f, t, Prec::Top)?;
        }
        if fields.len() == 1 {
            write!(f, ",")?;
        }
        return write!(f, ")");
    }
    write!(f, "{{")?;
    for (i, (l, t)) in fields.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{l} : ")?;
        write_ty(f, t, Prec::Top)?;
    }
    write!(f, "}}")
}

/// A type constructor (written by `head`) applied to `args`, as MExpr
/// writes it: `T a b`, in parentheses where it is itself an argument.
fn write_app(
    f: &mut fmt::Formatter<'_>,
    head: impl Fn(&mut fmt::Formatter<'_>) -> fmt::Result,
    args: &[Ty],
    prec: Prec,
) -> fmt::Result {
    if args.is_empty() {
        return head(f);
    }
    if prec >= Prec::App {
        write!(f, "(")?;
    }
    head(f)?;
    for a in args {
        write!(f, " ")?;
        write_ty(f, a, Prec::App)?;
    }
    if prec >= Prec::App {
        write!(f, ")")?;
    }
    Ok(())
}

fn write_ty(f: &mut fmt::Formatter<'_>, ty: &Ty, prec: Prec) -> fmt::Result {
    match ty.kind() {
        TyKind::Unknown => write!(f, "Unknown"),
        TyKind::Int => write!(f, "Int"),
        TyKind::Float => write!(f, "Float"),
        TyKind::Bool => write!(f, "Bool"),
        TyKind::Char => write!(f, "Char"),
        TyKind::Seq(e) if matches!(e.kind(), TyKind::Char) => write!(f, "String"),
        TyKind::Seq(e) => {
            write!(f, "[")?;
            write_ty(f, e, Prec::Top)?;
            write!(f, "]")
        }
        TyKind::Tensor(e) => {
            write!(f, "Tensor[")?;
            write_ty(f, e, Prec::Top)?;
            write!(f, "]")
        }
        TyKind::Record(fields) => write_fields(f, fields),
        TyKind::Arrow(a, b) => {
            if prec > Prec::Arrow {
                write!(f, "(")?;
            }
            write_ty(f, a, Prec::ArrowLeft)?;
            write!(f, " -> ")?;
            write_ty(f, b, Prec::Arrow)?;
            if prec > Prec::Arrow {
                write!(f, ")")?;
            }
            Ok(())
        }
        TyKind::Con(_, name, args) => write_app(f, |f| write!(f, "{name}"), args, prec),
        TyKind::App(head, args) => write_app(f, |f| write_ty(f, head, Prec::App), args, prec),
        TyKind::Var(v) => write!(f, "{}", v.name),
        TyKind::All(v, fields, body) => {
            if prec > Prec::Top {
                write!(f, "(")?;
            }
            write!(f, "all {}", v.name)?;
            if !fields.is_empty() {
                write!(f, " :: {{")?;
                for (i, (l, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{l} : ")?;
                    write_ty(f, t, Prec::Top)?;
                }
                write!(f, "}}")?;
            }
            write!(f, ". ")?;
            write_ty(f, body, Prec::Top)?;
            if prec > Prec::Top {
                write!(f, ")")?;
            }
            Ok(())
        }
        TyKind::Meta(id) => write!(f, "?{id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_mexpr_syntax() {
        let t = Ty::arrow(
            Ty::arrow(Ty::int(), Ty::float()),
            Ty::arrow(Ty::seq(Ty::int()), Ty::tuple(vec![Ty::string(), Ty::unit()])),
        );
        assert_eq!(t.to_string(), "(Int -> Float) -> [Int] -> (String, ())");
        let r = Ty::record(vec![("b".into(), Ty::bool()), ("a".into(), Ty::tensor(Ty::float()))]);
        assert_eq!(r.to_string(), "{a : Tensor[Float], b : Bool}");
        assert_eq!(Ty::tuple(vec![Ty::int()]).to_string(), "(Int,)");
    }

    #[test]
    fn applications_of_variables_normalise() {
        let var = |id, name: &str| Ty::new(TyKind::Var(TyVar { id, name: name.into() }));
        let con = |args| Ty::new(TyKind::Con(NameId::builtin_type(crate::BuiltinType::ALL[0]), "T".into(), args));
        let (a, b) = (var(1, "a"), var(2, "b"));
        let t = Ty::app(var(3, "self"), vec![a.clone(), Ty::int()]);
        assert_eq!(t.to_string(), "self a Int");
        assert_eq!(Ty::seq(Ty::app(t.clone(), vec![b.clone()])).to_string(), "[self a Int b]");
        assert_eq!(
            Ty::arrow(t.clone(), Ty::app(var(3, "self"), vec![Ty::app(var(4, "f"), vec![b.clone()])])).to_string(),
            "self a Int -> self (f b)"
        );
        // A constructor at the head takes the arguments as its own.
        assert_eq!(Ty::app(con(vec![a.clone()]), vec![b.clone()]), con(vec![a, b]));
        assert_eq!(Ty::app(var(3, "self"), Vec::new()), var(3, "self"));
        assert!(Ty::app(Ty::unknown(), vec![Ty::int()]).is_unknown());
    }

    #[test]
    fn labels_sort_numerically() {
        let mut v = vec!["10", "2", "b", "0", "a"];
        v.sort_by(|a, b| compare_labels(a, b));
        assert_eq!(v, ["0", "2", "10", "a", "b"]);
    }
}
