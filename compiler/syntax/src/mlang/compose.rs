//! A language composed from the languages it extends and its own
//! declarations, as Miking composes them: `syn`s and `sem`s of the same
//! name and root merge (their constructors and cases together), a case
//! is ordered against every case it meets for the first time, and what
//! cannot be merged or ordered is an error at the user's code.

use super::patterns::{relation, Relation};
use super::*;
use pmx_ast::mlang::{Lang, LangDecl, SemDecl, SynDecl};
use pmx_diagnostics::Code;
use rustc_hash::{FxHashMap, FxHashSet};

pub(super) fn compose(lang: &Lang, visible: &Languages, diags: &mut Vec<Diagnostic>) -> Language {
    let name = lang.name.text.clone();
    let mut out = Language {
        name: name.clone(),
        span: lang.name.span,
        syns: Vec::new(),
        sems: Vec::new(),
        types: Vec::new(),
        cons: Vec::new(),
        env: Env::default(),
        own_sems: true,
    };
    let mut c = Composer { lang: &name, diags, cases: FxHashMap::default() };
    let mut found = Vec::new();
    for include in &lang.includes {
        match visible.get(&include.text) {
            Some(parent) => found.push((include.clone(), parent.clone())),
            None => c.diags.push(unknown_language(include)),
        }
    }
    super::with::apply(lang, &mut found, c.diags);
    for (include, parent) in &found {
        c.merge(&mut out, parent, include.span);
    }
    let parents: Vec<Arc<Language>> = found.into_iter().map(|(_, p)| p).collect();
    let mut writes_sems = false;
    for decl in &lang.decls {
        match decl {
            LangDecl::Syn(syn) => c.syn(&mut out, syn),
            LangDecl::Sem(sem) => {
                writes_sems = true;
                c.sem(&mut out, sem)
            }
            LangDecl::Type(t) => {
                if c.type_name_taken(&out, &t.name) {
                    continue;
                }
                let mangled = mangle(&name, &t.name.text);
                out.types.push((mangled, Arc::new(t.clone())));
            }
            LangDecl::Con(k) => {
                let mangled = mangle(&name, &k.name.text);
                out.cons.retain(|(m, old)| !(old.name.text == k.name.text && *m != mangled));
                out.cons.push((mangled, Arc::new(k.clone())));
            }
        }
    }
    // A language that changes no semantic function of the one it extends
    // uses that one's functions instead of copies.
    let same_as = (!writes_sems).then(|| parents.iter().find(|p| same_sems(&p.sems, &out.sems))).flatten();
    out.own_sems = same_as.is_none();
    for sem in &out.sems {
        let mangled = match same_as {
            Some(p) => p.env.values.get(&sem.name).cloned().unwrap_or_else(|| mangle(&name, &sem.name)),
            None => mangle(&name, &sem.name),
        };
        out.env.values.insert(sem.name.clone(), mangled);
    }
    for syn in &out.syns {
        out.env.types.insert(syn.name.clone(), syn.mangled.clone());
        for con in &syn.cons {
            out.env.cons.insert(con.decl.name.text.clone(), con.mangled.clone());
        }
    }
    for (mangled, t) in &out.types {
        out.env.types.insert(t.name.text.clone(), mangled.clone());
    }
    for (mangled, k) in &out.cons {
        out.env.cons.insert(k.name.text.clone(), mangled.clone());
    }
    out
}

pub(super) fn unknown_language(name: &Name) -> Diagnostic {
    Diagnostic::error(Code::UnknownLanguage, name.span, format!("unknown language fragment `{}`", name.text))
        .with_label("no language of this name is defined before here or in an included file")
}

/// Whether two languages' semantic functions are the same ones, case for
/// case.
fn same_sems(a: &[Sem], b: &[Sem]) -> bool {
    a.len() == b.len()
        && a.iter().all(|x| {
            b.iter().any(|y| {
                x.name == y.name
                    && x.root == y.root
                    && x.cases.len() == y.cases.len()
                    && x.cases.iter().all(|c| y.cases.iter().any(|d| d.id() == c.id()))
            })
        })
}

struct Composer<'a> {
    lang: &'a SmolStr,
    diags: &'a mut Vec<Diagnostic>,
    /// The cases of each of the language's sems so far, indexed.
    cases: FxHashMap<SmolStr, CaseIndex>,
}

/// A sem's cases by identity and by the constructor their pattern starts
/// with, so that a new case is related only to the cases it may overlap:
/// two cases whose patterns start with different constructors are
/// disjoint (`relation`), and a composition of hundreds of fragments
/// would otherwise relate every pair of its thousands of cases.
#[derive(Default)]
struct CaseIndex {
    /// How many of the sem's cases are indexed (cases are only added, at
    /// the end).
    indexed: usize,
    ids: FxHashSet<Span>,
    /// Positions by the constructor a pattern starts with; `None`: a
    /// pattern that starts otherwise, which may overlap any.
    by_head: FxHashMap<Option<SmolStr>, Vec<usize>>,
}

fn head(c: &Case) -> Option<SmolStr> {
    match &c.pattern.kind {
        pmx_ast::PatKind::Con(n, _) => Some(n.text.clone()),
        _ => None,
    }
}

impl CaseIndex {
    fn catch_up(&mut self, cases: &[Arc<Case>]) {
        for (i, c) in cases.iter().enumerate().skip(self.indexed) {
            self.ids.insert(c.id());
            self.by_head.entry(head(c)).or_default().push(i);
        }
        self.indexed = cases.len();
    }

    /// The positions of the cases `c` may overlap, in order.
    fn meets(&self, c: &Case) -> Vec<usize> {
        let mut out: Vec<usize> = match head(c) {
            None => (0..self.indexed).collect(),
            Some(k) => {
                let same = self.by_head.get(&Some(k)).into_iter().flatten();
                same.chain(self.by_head.get(&None).into_iter().flatten()).copied().collect()
            }
        };
        out.sort_unstable();
        out
    }
}

impl Composer<'_> {
    fn merge(&mut self, out: &mut Language, parent: &Language, at: Span) {
        for syn in &parent.syns {
            match out.syns.iter_mut().find(|s| s.name == syn.name) {
                Some(s) if s.root != syn.root => self.conflict(at, "syn", &syn.name, s.root, syn.root),
                Some(s) => {
                    if s.params.len() != syn.params.len() {
                        let (n, first) = (s.params.len(), s.root);
                        self.merged_syn_params(at, syn, n, first);
                    }
                    for con in &syn.cons {
                        // Constructors of syns merged by `with` are all
                        // renamed into this language: two of one name are
                        // two definitions.
                        match s.cons.iter().find(|k| k.mangled == con.mangled) {
                            None => s.cons.push(con.clone()),
                            Some(k) if k.decl.name.span != con.decl.name.span => {
                                let (first, second) = (k.decl.name.span, con.decl.name.span);
                                self.constructor_twice(at, &con.decl.name.text, first, second)
                            }
                            Some(_) => {}
                        }
                    }
                }
                None => out.syns.push(syn.clone()),
            }
        }
        for (mangled, t) in &parent.types {
            match out.types.iter().find(|(_, u)| u.name.text == t.name.text) {
                Some((m, u)) if m != mangled => self.conflict(at, "type", &t.name.text, u.name.span, t.name.span),
                Some(_) => {}
                None => out.types.push((mangled.clone(), t.clone())),
            }
        }
        for (mangled, k) in &parent.cons {
            if !out.cons.iter().any(|(m, _)| m == mangled) {
                out.cons.push((mangled.clone(), k.clone()));
            }
        }
        for sem in &parent.sems {
            match out.sems.iter().position(|s| s.name == sem.name) {
                Some(i) if out.sems[i].root != sem.root => {
                    self.conflict(at, "sem", &sem.name, out.sems[i].root, sem.root)
                }
                Some(i) => {
                    let mine = &mut out.sems[i];
                    if let (Some(p), Some(q)) = (&mine.params, &sem.params) {
                        if !same_params(p, q) {
                            self.params(at, &sem.name, p, q);
                        }
                    }
                    if mine.params.is_none() {
                        mine.params = sem.params.clone();
                    }
                    if mine.signature.is_none() {
                        mine.signature = sem.signature.clone();
                    }
                    let index = self.cases.entry(mine.name.clone()).or_default();
                    index.catch_up(&mine.cases);
                    let new: Vec<_> = sem.cases.iter().filter(|c| !index.ids.contains(&c.id())).cloned().collect();
                    mine.below.extend(sem.below.iter().copied());
                    // The cases met for the first time: each new one against
                    // each of ours that the parent lacks.
                    let theirs: FxHashSet<Span> = sem.cases.iter().map(|c| c.id()).collect();
                    let mut found = Vec::new();
                    for a in &new {
                        for b in index.meets(a).into_iter().map(|j| &mine.cases[j]) {
                            if !theirs.contains(&b.id()) {
                                found.extend(order(&mine.name, a, b, at, self.diags));
                            }
                        }
                    }
                    mine.below.extend(found);
                    mine.cases.extend(new);
                }
                None => out.sems.push(sem.clone()),
            }
        }
    }

    fn syn(&mut self, out: &mut Language, syn: &SynDecl) {
        if let Some((_, t)) = out.types.iter().find(|(_, t)| t.name.text == syn.name.text) {
            let (name, other) = (syn.name.text.clone(), t.name.span);
            self.conflict(syn.name.span, "type", &name, other, syn.name.span);
            return;
        }
        let params = Arc::new(syn.params.clone());
        let i = match out.syns.iter().position(|s| s.name == syn.name.text) {
            Some(i) => {
                let root = &out.syns[i];
                if root.params.len() != syn.params.len() {
                    let (n, root_span) = (root.params.len(), root.root);
                    self.syn_params(syn, n, root_span);
                }
                i
            }
            None => {
                out.syns.push(Syn {
                    name: syn.name.text.clone(),
                    root: syn.name.span,
                    mangled: mangle(self.lang, &syn.name.text),
                    params: params.clone(),
                    cons: Vec::new(),
                });
                out.syns.len() - 1
            }
        };
        for con in &syn.cons {
            let taken = out.syns.iter().flat_map(|s| &s.cons).find(|k| k.decl.name.text == con.name.text);
            if let Some(old) = taken {
                self.diags.push(
                    Diagnostic::error(
                        Code::LanguageConflict,
                        con.name.span,
                        format!("constructor `{}` is defined twice in language `{}`", con.name.text, self.lang),
                    )
                    .with_label("defined again here")
                    .with_secondary(old.decl.name.span, "first defined here"),
                );
                continue;
            }
            let def = SynConDef {
                mangled: mangle(self.lang, &con.name.text),
                params: params.clone(),
                decl: Arc::new(con.clone()),
            };
            out.syns[i].cons.push(def);
        }
    }

    fn sem(&mut self, out: &mut Language, decl: &SemDecl) {
        let i = match out.sems.iter().position(|s| s.name == decl.name.text) {
            Some(i) => i,
            None => {
                out.sems.push(Sem {
                    name: decl.name.text.clone(),
                    root: decl.name.span,
                    span: decl.name.span,
                    signature: None,
                    params: None,
                    cases: Vec::new(),
                    below: Default::default(),
                });
                out.sems.len() - 1
            }
        };
        let sem = &mut out.sems[i];
        if let Some(sig) = &decl.signature {
            sem.signature = Some(Arc::new(sig.clone()));
        }
        if let Some(params) = &decl.params {
            match &sem.params {
                Some(old) if !same_params(old, params) => {
                    let old = old.clone();
                    self.params(decl.name.span, &decl.name.text, &old, params)
                }
                Some(_) => {}
                None => sem.params = Some(Arc::new(params.clone())),
            }
        }
        let params = decl.params.clone().map(Arc::new).or_else(|| sem.params.clone());
        for case in &decl.cases {
            let case = Arc::new(Case {
                pattern: case.pattern.clone(),
                body: case.body.clone(),
                lang: self.lang.clone(),
                params: params.clone(),
            });
            let index = self.cases.entry(sem.name.clone()).or_default();
            index.catch_up(&sem.cases);
            let found: Vec<_> = index
                .meets(&case)
                .into_iter()
                .filter_map(|j| order(&sem.name, &case, &sem.cases[j], case.pattern.span, self.diags))
                .collect();
            sem.below.extend(found);
            sem.cases.push(case);
        }
    }

    fn type_name_taken(&mut self, out: &Language, name: &Name) -> bool {
        let other = out
            .syns
            .iter()
            .find(|s| s.name == name.text)
            .map(|s| s.root)
            .or_else(|| out.types.iter().find(|(_, t)| t.name.text == name.text).map(|(_, t)| t.name.span));
        match other {
            Some(other) => {
                self.conflict(name.span, "type", &name.text, other, name.span);
                true
            }
            None => false,
        }
    }

    fn conflict(&mut self, at: Span, what: &str, name: &str, first: Span, second: Span) {
        let mut d = Diagnostic::error(
            Code::LanguageConflict,
            at,
            format!("language `{}` gets two different definitions of {what} `{name}`", self.lang),
        )
        .with_label("the definitions meet here");
        for (span, label) in [(first, "one definition"), (second, "another definition")] {
            if span != at {
                d = d.with_secondary(span, label);
            }
        }
        self.diags.push(d.with_note("definitions of the same name merge only when one extends the other"));
    }

    fn params(&mut self, at: Span, name: &str, old: &[SemParam], new: &[SemParam]) {
        let list = |ps: &[SemParam]| ps.iter().map(|p| p.name.text.as_str()).collect::<Vec<_>>().join(" ");
        let mut d = Diagnostic::error(
            Code::SemParameters,
            at,
            format!(
                "semantic function `{name}` takes different numbers of parameters in different fragments of `{}`",
                self.lang
            ),
        )
        .with_label(format!("{} parameter(s) `{}` here", new.len(), list(new)));
        if let Some(p) = old.first() {
            d = d.with_secondary(p.span, format!("{} parameter(s) `{}` here", old.len(), list(old)));
        }
        self.diags.push(d.with_note("every fragment must take as many parameters (their names may differ)"));
    }
}

/// Whether two fragments' parameters of one sem fit together: Miking
/// asks for as many, whatever their names (each case sees them under its
/// own fragment's names, `emit.rs`).
impl Composer<'_> {
    /// A fragment's `syn` with another number of type parameters than
    /// where the syn is first defined (`root_params` there): an error in
    /// Miking too. Its constructors stay (`emit.rs` fits their type to the
    /// syn's), so that their uses report nothing more.
    fn syn_params(&mut self, syn: &SynDecl, root_params: usize, root: Span) {
        let d = Diagnostic::error(
            Code::SemParameters,
            syn.name.span,
            format!(
                "syn `{}` takes different numbers of type parameters in different fragments of `{}`",
                syn.name.text, self.lang
            ),
        )
        .with_label(format!("{} parameter(s) here", syn.params.len()))
        .with_secondary(root, format!("{root_params} parameter(s) here"))
        .with_note("every fragment must give a syn as many type parameters (their names may differ)");
        self.diags.push(d);
    }
}

impl Composer<'_> {
    /// Syns merged by a `with` clause that both define constructor `name`.
    fn constructor_twice(&mut self, at: Span, name: &str, first: Span, second: Span) {
        let d = Diagnostic::error(
            Code::LanguageConflict,
            at,
            format!("constructor `{name}` is defined twice in language `{}`", self.lang),
        )
        .with_label("the definitions meet here")
        .with_secondary(first, "one definition")
        .with_secondary(second, "another definition")
        .with_note("the constructors of merged syns are constructors of one type: their names must differ");
        self.diags.push(d);
    }

    /// Two syns merged (by a `with` clause) with different numbers of type
    /// parameters: `root_params` where the merged one first has them.
    fn merged_syn_params(&mut self, at: Span, syn: &Syn, root_params: usize, root: Span) {
        let d = Diagnostic::error(
            Code::SemParameters,
            at,
            format!(
                "syn `{}` takes different numbers of type parameters in the languages `{}` merges",
                syn.name, self.lang
            ),
        )
        .with_label(format!("{root_params} and {} parameter(s) meet here", syn.params.len()))
        .with_secondary(root, "merged here")
        .with_note("every fragment must give a syn as many type parameters (their names may differ)");
        self.diags.push(d);
    }
}

fn same_params(a: &[SemParam], b: &[SemParam]) -> bool {
    a.len() == b.len()
}

/// Orders case `a` against case `b` of semantic function `sem` (Miking's
/// rule: the more specific first, the pair returned as `(more specific,
/// less specific)`; disjoint ones need no order; equal or overlapping ones
/// are an error, reported at `at`).
fn order(sem: &str, a: &Case, b: &Case, at: Span, diags: &mut Vec<Diagnostic>) -> Option<(Span, Span)> {
    let why = match relation(&a.pattern, &b.pattern) {
        Relation::Subset => return Some((a.id(), b.id())),
        Relation::Superset => return Some((b.id(), a.id())),
        Relation::Disjoint => return None,
        Relation::Equal => "they match exactly the same values",
        Relation::Overlapping => "they overlap, and neither is more specific than the other",
    };
    let mut d = Diagnostic::error(
        Code::AmbiguousCases,
        at,
        format!("two cases of semantic function `{sem}` cannot be ordered by specificity: {why}"),
    )
    .with_label(if at == a.id() {
        format!("this case (from `{}`)", a.lang)
    } else {
        "the cases meet in this composition".to_string()
    });
    if b.id().file == at.file {
        d = d.with_secondary(b.id(), format!("this case (from `{}`)", b.lang));
    }
    if a.id() != at && a.id().file == at.file {
        d = d.with_secondary(a.id(), format!("this case (from `{}`)", a.lang));
    }
    diags.push(d.with_note("make one pattern more specific than the other, or make them disjoint"));
    None
}
