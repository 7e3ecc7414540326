//! The command line: reads arguments, asks the driver, renders.

use crate::render;
use clap::{Parser, Subcommand, ValueEnum};
use pmx_driver::{program_diagnostics, Database, Db};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "pmx", version, about = "MExpr compiler with expression acceleration")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, resolve includes and names, and infer types; report every error.
    Check {
        /// The program's main file.
        file: PathBuf,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// When to use colours in human output.
        #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
        color: ColorChoice,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Runs `pmx` with the process's arguments.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    pmx_driver::with_stack(move || match cli.command {
        Command::Check { file, format, color } => check(&file, format, color),
    })
}

fn check(path: &std::path::Path, format: Format, color: ColorChoice) -> ExitCode {
    let db = Database::default();
    let root = match db.load(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error[E0103]: cannot read `{}`: {e}", path.display());
            return ExitCode::from(1);
        }
    };
    let diagnostics = program_diagnostics(&db, root);
    match format {
        Format::Human => render::human(&db, diagnostics, color),
        Format::Json => render::json(&db, diagnostics),
    }
    if diagnostics.iter().any(|d| d.is_error()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
