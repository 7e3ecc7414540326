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
