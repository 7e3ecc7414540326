//! What the interpreter is told of accelerated code's accumulations: the
//! read-modify-writes of a tensor cell with an associative and commutative
//! operator that `pmx_lower::accumulate` finds in the parallel loops of
//! CUDA-class code (the CLI runs that analysis, the one the CUDA
//! generator and `pmx explain` use, and hands its findings over here as
//! locations).

use pmx_ast::Span;
use rustc_hash::FxHashSet;

#[derive(Clone, Debug, Default)]
pub struct Accumulations {
    /// The parallel `loop`s (by the location of the `loop`) that run an
    /// accumulation whose cell may be the same for two iterations. Outside
    /// debug mode they run on one thread: the interpreter reads and writes
    /// the cell in two steps, which iterations on other threads could
    /// interleave with (native code makes one atomic update instead).
    pub loops: FxHashSet<Span>,
    /// For `--check-order`: the `tensorSetExn`s (by location) of float
    /// accumulations that may collide, whose sums may round differently in
    /// another order. The cells they write are not compared.
    pub float_sets: FxHashSet<Span>,
}
