//! MLang desugared per file, before names and types (`pmx_syntax::mlang`):
//! a file sees the languages of the files it includes, in include order
//! (a later one shadows an earlier one of the same name), and gives its
//! includers those and its own.

use crate::db::{Db, SourceFile};
use crate::freed::FreedApart;
use crate::includes::acyclic_includes;
use crate::queries::parse_file;
use pmx_syntax::mlang::{Desugared, Languages};
use std::sync::Arc;

/// A file in plain MExpr, with the languages it exports and the
/// desugaring's diagnostics. `no_eq` as `parse_file`: spans move with
/// every edit, so results would rarely compare equal.
#[salsa::tracked(returns(deref), no_eq)]
pub fn desugared(db: &dyn Db, file: SourceFile) -> FreedApart<Arc<Desugared>> {
    let mut imported = Languages::default();
    for &dep in &acyclic_includes(db, file).0 {
        imported.extend(language_exports(db, dep).iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    FreedApart::new(Arc::new(pmx_syntax::mlang::desugar(parse_file(db, file), &imported)))
}

/// The languages a file gives its includers, compared after each edit (as
/// `name_exports` is), so that an edit that changes none of them, in
/// particular any edit of a file that has none, does not desugar and
/// check its includers again.
#[salsa::tracked(returns(ref))]
pub fn language_exports(db: &dyn Db, file: SourceFile) -> Languages {
    desugared(db, file).languages.clone()
}

/// The module the checks start from: the desugared one where the file
/// writes MLang, else the parsed one.
pub fn plain_module(db: &dyn Db, file: SourceFile) -> pmx_ast::Module {
    match &desugared(db, file).module {
        Some(m) => m.clone(),
        None => parse_file(db, file).module.clone(),
    }
}
