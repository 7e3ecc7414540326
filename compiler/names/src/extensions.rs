//! Names that Miking turns into constructs of its language extensions, not
//! plain MExpr: an unbound use of one is reported as an unsupported
//! feature, naming the extension, rather than as a mistyped name.

/// The extension a name belongs to in Miking, if any (for a value or a
/// constructor that nothing in the program binds).
pub(crate) fn miking_extension(name: &str) -> Option<&'static str> {
    Some(match name {
        "prerun" | "dive" => "Miking's boot meta-programming keywords (`prerun`, `dive`)",
        "hole" | "independent" | "Boolean" | "IntRange" => "Miking's program tuning (`hole`, used by `mi tune`)",
        "specialize" => "Miking's partial evaluation (`specialize`)",
        "pycall" | "pycallkw" | "pyimport" | "pyconvert" => {
            "Miking's Python intrinsics (`pyimport`, `pycall`, `pyconvert`; a boot built with Python)"
        }
        _ => return None,
    })
}
