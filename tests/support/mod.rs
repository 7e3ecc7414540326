//! Shared by the accelerate tests: a program with one backend's rewritten
//! program put back into it (`pmx_accelerate::program::splice`), printed
//! as MExpr, so that it can be run and compared with the original.

use pmx_driver::Db;
use std::path::Path;

mod process;
pub use process::pmx;

#[derive(Clone, Copy, Debug)]
pub enum Backend {
    Futhark,
    Cuda,
}

/// A program after a backend's rewrites.
pub struct Rewritten {
    /// The whole program after lifting, with the backend's rewritten
    /// declarations in place of the ones they came from.
    pub whole: String,
    /// The backend's program alone (what `pmx emit --stage futhark-ast` or
    /// `cuda-ast` prints).
    pub backend: String,
    /// Its top-level functions that take a function as a parameter.
    pub higher_order: Vec<String>,
}

pub fn rewritten(path: &Path, backend: Backend) -> Rewritten {
    let path = path.to_path_buf();
    pmx_driver::with_stack(move || {
        let db = pmx_driver::Database::default();
        let root = db.load(&path).expect("readable");
        let modules = pmx_driver::program_modules(&db, root);
        let analysis = pmx_accelerate::analyze(&modules);
        let program = match backend {
            Backend::Futhark => &analysis.futhark,
            Backend::Cuda => &analysis.cuda,
        };
        let whole = pmx_accelerate::program::splice(&analysis.lifted, program);
        let print = |e: &pmx_ast::Expr| pmx_ast::print::print_module(&pmx_accelerate::program::to_module(e));
        let module = pmx_accelerate::program::to_module(program);
        let higher_order = module
            .items
            .iter()
            .filter_map(|i| match i {
                pmx_ast::Item::Let(b) if takes_function(&b.value) => Some(b.name.text.to_string()),
                _ => None,
            })
            .collect();
        Rewritten { whole: print(&whole), backend: print(program), higher_order }
    })
}

fn takes_function(e: &pmx_ast::Expr) -> bool {
    match &e.kind {
        pmx_ast::ExprKind::Lam { body, .. } => {
            e.ty.as_arrow().is_some_and(|(p, _)| p.as_arrow().is_some()) || takes_function(body)
        }
        _ => false,
    }
}
