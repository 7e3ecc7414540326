//! The system C and C++ compilers, which turn generated code into shared
//! libraries: `$CC`/`$CXX`, else `cc`/`c++` on `PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Debug)]
pub struct Compiler {
    pub program: PathBuf,
    /// Its first line of `--version`, part of cache keys.
    pub version: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    C,
    Cxx,
}

impl Compiler {
    /// The compiler for `lang`, if one runs.
    pub fn find(lang: Language) -> Option<Compiler> {
        let (var, defaults): (&str, &[&str]) = match lang {
            Language::C => ("CC", &["cc", "gcc", "clang"]),
            Language::Cxx => ("CXX", &["c++", "g++", "clang++"]),
        };
        let candidates: Vec<String> = match std::env::var(var) {
            Ok(v) if !v.is_empty() => vec![v],
            _ => defaults.iter().map(|s| s.to_string()).collect(),
        };
        candidates.into_iter().find_map(|c| {
            let out = Command::new(&c).arg("--version").output().ok()?;
            out.status.success().then(|| Compiler {
                program: PathBuf::from(&c),
                version: String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string(),
            })
        })
    }

    /// Compiles `sources` into the shared library `out`; the compiler's
    /// messages are the error.
    pub fn shared_library(&self, sources: &[&Path], out: &Path, flags: &[&str]) -> Result<(), String> {
        self.shared_library_linking(sources, out, flags, &[])
    }

    /// Like [`Compiler::shared_library`], with libraries (`-lm`) after the
    /// sources: linkers that drop libraries nothing before them needs
    /// (`--as-needed`) would otherwise leave their symbols unresolved.
    pub fn shared_library_linking(
        &self,
        sources: &[&Path],
        out: &Path,
        flags: &[&str],
        libs: &[&str],
    ) -> Result<(), String> {
        let mut cmd = Command::new(&self.program);
        cmd.args(["-shared", "-fPIC"]).args(flags).args(sources).arg("-o").arg(out).args(libs);
        let output = cmd.output().map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        if output.status.success() {
            return Ok(());
        }
        Err(format!(
            "{} failed on {}:\n{}",
            self.program.display(),
            sources.iter().map(|s| s.display().to_string()).collect::<Vec<_>>().join(" "),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
