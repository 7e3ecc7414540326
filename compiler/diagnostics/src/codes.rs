//! Stable diagnostic codes. Each code names one kind of problem; tools and
//! tests match on codes, never on message text. The ranges: E00xx syntax,
//! E01xx files and includes, E02xx names, E03xx types, E04xx accelerate
//! (E043x: the lowering to the backends' IR; E044x: code generation),
//! E05xx MLang (its desugaring to MExpr).

use serde::{Deserialize, Serialize};

macro_rules! codes {
    ($($variant:ident = $code:literal, $title:literal;)*) => {
        /// A diagnostic code, rendered as `E` and four digits.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            /// The code as written in output, e.g. `E0201`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// A short description of the kind of problem.
            pub fn title(self) -> &'static str {
                match self {
                    $(Code::$variant => $title,)*
                }
            }

            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];
        }
    };
}

codes! {
    SyntaxError = "E0001", "syntax error";
    MissingToken = "E0002", "missing token";
    InvalidLiteral = "E0003", "invalid literal";
    Unsupported = "E0004", "unsupported language feature";
    TooDeep = "E0005", "nesting too deep";
    IncludeNotFound = "E0101", "included file not found";
    IncludeCycle = "E0102", "include cycle";
    FileUnreadable = "E0103", "file cannot be read";
    UnboundVariable = "E0201", "unbound variable";
    UnboundConstructor = "E0202", "unbound constructor";
    UnboundType = "E0203", "unbound type";
    UnboundTypeVariable = "E0204", "unbound type variable";
    KeywordArity = "E0205", "wrong number of arguments to a keyword";
    DuplicateBinding = "E0206", "duplicate binding";
    DuplicateLabel = "E0207", "duplicate record label";
    TypeMismatch = "E0301", "type mismatch";
    InfiniteType = "E0302", "infinite type";
    MissingField = "E0303", "record field missing";
    AnnotationNeeded = "E0304", "type annotation needed";
    TypeArity = "E0305", "wrong number of type arguments";
    NotAVariantType = "E0306", "constructor of a non-variant type";
    UnsupportedExternal = "E0307", "external not implemented by pmx";
    NotDifferentiable = "E0308", "derivative of a function of a non-differentiable type";
    NestedAccelerate = "E0401", "nested accelerate expression";
    AccelerateNoKeyword = "E0402", "accelerate expression without a parallel keyword";
    AccelerateMixedBackends = "E0403", "accelerate expression mixing backends";
    FutharkFunctionInArray = "E0410", "Futhark: sequence of functions";
    FutharkFunctionInRecord = "E0411", "Futhark: record with a function field";
    FutharkFunctionFromIf = "E0412", "Futhark: conditional returning a function";
    FutharkFunctionFromFold = "E0413", "Futhark: fold with a function accumulator";
    FutharkRecLet = "E0414", "Futhark: recursion";
    FutharkExpr = "E0415", "Futhark: expression not supported";
    FutharkType = "E0416", "Futhark: type not supported";
    FutharkPattern = "E0417", "Futhark: pattern not supported";
    FutharkConstant = "E0418", "Futhark: constant not supported";
    FutharkParameter = "E0419", "Futhark: value cannot cross the boundary";
    CudaExpr = "E0420", "CUDA: expression not supported";
    CudaType = "E0421", "CUDA: type not supported";
    CudaPattern = "E0422", "CUDA: pattern not supported";
    CudaConstant = "E0423", "CUDA: constant not supported";
    CudaAppResultType = "E0424", "CUDA: application returning a function";
    CudaFunctionDef = "E0425", "CUDA: function not defined with one lambda per parameter";
    CudaFunctionInMatch = "E0426", "CUDA: conditional returning a function";
    CudaHigherOrderArgument = "E0427", "CUDA: unsupported higher-order argument";
    CudaBoundary = "E0428", "CUDA: value cannot cross the boundary";
    LowerUnsupported = "E0430", "lowering: construct not supported";
    LowerTypeNotConcrete = "E0431", "lowering: type not concrete";
    LowerFunctionValue = "E0432", "lowering: function value cannot be made first-order";
    CudaUnsupported = "E0440", "CUDA code generation: construct not supported yet";
    FutharkUnsupported = "E0441", "Futhark code generation: construct not supported yet";
    UnknownLanguage = "E0501", "unknown language fragment";
    AmbiguousCases = "E0502", "semantic function cases that cannot be ordered";
    SemParameters = "E0503", "inconsistent parameters of a semantic function or syn";
    LanguageConflict = "E0504", "conflicting definitions in a language";
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Read back from the code as written (the parse cache stores diagnostics).
impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        let text = <&str>::deserialize(d)?;
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown diagnostic code {text}")))
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn codes_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate code {}", c.as_str());
        }
    }
}
