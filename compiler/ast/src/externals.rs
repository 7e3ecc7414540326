//! The `external` declarations pmx implements, by name, for the front end
//! to report the others at `pmx check` time (the CPU backend holds the
//! implementations, and a test there checks that the two lists agree).
//! They are those of Miking's `ext/math-ext.mc`, `ext/file-ext.mc`,
//! `ext/array-ext.mc`, `ext/matrix-ext.mc`, `ext/dist-ext.mc`, the clock
//! externals of `ext/rtppl-ext.mc` and `multicore/`, with Miking's types.

/// Every external pmx implements.
pub const SUPPORTED: &[&str] = &[
    // ext/math-ext.mc
    "externalExp",
    "externalLog",
    "externalAtan",
    "externalSin",
    "externalCos",
    "externalTan",
    "externalAtan2",
    "externalPow",
    "externalSqrt",
    "externalLogGamma",
    "externalLogCombination",
    // ext/file-ext.mc
    "fileExists",
    "deleteFile",
    "fileSize",
    "writeOpen",
    "writeString",
    "writeFlush",
    "writeClose",
    "readOpen",
    "readLine",
    "readBytes",
    "readString",
    "readClose",
    "stdin",
    "stdout",
    "stderr",
    // ext/array-ext.mc
    "arrayCreateFloat",
    "arrayLength",
    "arrayGet",
    "arraySet",
    "cArray1CreateFloat",
    "cArray1Dim",
    "cArray1Get",
    "cArray1Set",
    // ext/matrix-ext.mc
    "externalMatrixExponential",
    "externalMatrixTranspose",
    "externalMatrixMulFloat",
    "externalMatrixMul",
    "externalMatrixElemMul",
    "externalMatrixElemAdd",
    // ext/dist-ext.mc
    "externalGammaLogPdf",
    "externalGammaSample",
    "externalBinomialLogPmf",
    "externalBinomialSample",
    "externalBetaLogPdf",
    "externalBetaSample",
    "externalGaussianLogPdf",
    "externalGaussianSample",
    "externalMultinomialLogPmf",
    "externalMultinomialSample",
    "externalCategoricalSample",
    "externalDirichletLogPdf",
    "externalDirichletSample",
    "externalUniformContinuousSample",
    "externalUniformDiscreteSample",
    "externalExponentialSample",
    "externalLomaxLogPdf",
    "externalLomaxSample",
    "externalSetSeed",
    // ext/rtppl-ext.mc: the clocks
    "getMonotonicTime",
    "getWallClockTime",
    "getProcessCpuTime",
    "clockNanosleep",
    // multicore/atomic.mc, thread.mc, mutex.mc, cond.mc
    "externalAtomicMake",
    "externalAtomicGet",
    "externalAtomicExchange",
    "externalAtomicCAS",
    "externalAtomicFetchAndAdd",
    "externalThreadSpawn",
    "externalThreadJoin",
    "externalThreadGetID",
    "externalThreadSelf",
    "externalThreadCPURelax",
    "externalMutexCreate",
    "externalMutexLock",
    "externalMutexTryLock",
    "externalMutexRelease",
    "externalCondCreate",
    "externalCondWait",
    "externalCondSignal",
    "externalCondBroadcast",
];

pub fn is_supported(name: &str) -> bool {
    SUPPORTED.contains(&name)
}

/// The foreign library Miking binds an external to, from the naming
/// conventions of Miking's standard library, for the message that says
/// pmx does not provide it.
pub fn foreign_library(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    let has = |p: &str| lower.contains(p);
    if has("ida") || has("cvode") || has("sundials") || has("nvector") || has("matrixdense") {
        "SUNDIALS"
    } else if has("ipopt") {
        "Ipopt"
    } else if lower.starts_with("py") || has("python") {
        "Python"
    } else if has("rtppl") || has("sigint") || has("priority") {
        "the real-time runtime of RTPPL"
    } else if has("toml") {
        "a TOML library"
    } else if has("async") || has("lwt") {
        "OCaml's Lwt"
    } else {
        "an OCaml or C library"
    }
}

/// The math externals of Miking's `ext/math-ext.mc` that accelerated code
/// may call and derivatives have rules for (`pmx_lower`'s `Expr::Math`,
/// `pmx_cpu`'s `ad/rules.rs`): functions of one or two `Float`s giving a `Float`, which C, CUDA
/// and Futhark (`f64.NAME`) all have under the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math {
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Atan,
    Atan2,
    Pow,
    Sqrt,
}

impl Math {
    pub const ALL: [Math; 9] =
        [Math::Exp, Math::Log, Math::Sin, Math::Cos, Math::Tan, Math::Atan, Math::Atan2, Math::Pow, Math::Sqrt];

    /// The math function an external of this name is, if any.
    pub fn of_external(name: &str) -> Option<Math> {
        Math::ALL.into_iter().find(|m| m.external() == name)
    }

    /// The external's name in `ext/math-ext.mc`.
    pub fn external(self) -> &'static str {
        match self {
            Math::Exp => "externalExp",
            Math::Log => "externalLog",
            Math::Sin => "externalSin",
            Math::Cos => "externalCos",
            Math::Tan => "externalTan",
            Math::Atan => "externalAtan",
            Math::Atan2 => "externalAtan2",
            Math::Pow => "externalPow",
            Math::Sqrt => "externalSqrt",
        }
    }

    /// The function's name in C, CUDA and Futhark's `f64` module.
    pub fn name(self) -> &'static str {
        match self {
            Math::Exp => "exp",
            Math::Log => "log",
            Math::Sin => "sin",
            Math::Cos => "cos",
            Math::Tan => "tan",
            Math::Atan => "atan",
            Math::Atan2 => "atan2",
            Math::Pow => "pow",
            Math::Sqrt => "sqrt",
        }
    }

    /// How many `Float` arguments it takes.
    pub fn arity(self) -> usize {
        match self {
            Math::Atan2 | Math::Pow => 2,
            _ => 1,
        }
    }
}
