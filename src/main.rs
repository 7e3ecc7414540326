fn main() -> std::process::ExitCode {
    pmx::cli::main()
}
