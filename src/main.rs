// mimalloc: the compiler allocates and frees many small tree nodes, where
// it is markedly faster than the system allocator (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    pmx::alloc::install();
    pmx::cli::main()
}
