//! Running a program in each mode and comparing what it did: exit code,
//! standard output (lines marked [`APPROX`] with a relative tolerance on
//! their numbers), and the error (its message and location), which every
//! mode must report alike.

use crate::program::{Class, APPROX};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The relative tolerance of numbers on lines marked [`APPROX`]: a
/// parallel reduction of floats may add in another order.
pub const TOLERANCE: f64 = 1e-9;

/// How a program is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `pmx run --debug`: the interpreter, with every check.
    Debug,
    /// `pmx run --target cpu`.
    Cpu,
    /// `pmx run --target gpu` with `PMX_GPU_KERNELS=cpu`: the GPU engine,
    /// its kernels queued and run on the CPU as a device would.
    GpuOnCpu,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Debug => "--debug",
            Mode::Cpu => "--target cpu",
            Mode::GpuOnCpu => "--target gpu (PMX_GPU_KERNELS=cpu)",
        }
    }

    /// The modes a class runs in; the first is the reference.
    pub fn of(class: Class) -> &'static [Mode] {
        match class {
            Class::Futhark => &[Mode::Debug, Mode::Cpu],
            Class::Cuda => &[Mode::Debug, Mode::Cpu, Mode::GpuOnCpu],
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// `None` when it was stopped for running too long.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The error's message, without the note on where accelerated code
    /// ran, which names the engine.
    pub fn message(&self) -> Option<String> {
        let line = self.stderr.lines().find(|l| l.starts_with("error"))?;
        let mut m = line.to_string();
        if let Some(k) =
            m.find(" (in CUDA-class accelerated code").or_else(|| m.find(" (in Futhark-class accelerated code"))
        {
            m.truncate(k);
        }
        Some(m)
    }

    /// The kind of error: its message up to the details after `: ` (the
    /// values debug mode names, which native code does not report).
    pub fn headline(&self) -> Option<String> {
        let m = self.message()?;
        let text = m.strip_prefix("error: ").unwrap_or(&m);
        Some(text.split(": ").next().unwrap_or(text).to_string())
    }

    /// The error's location (`file:line:column`).
    pub fn location(&self) -> Option<String> {
        let line = self.stderr.lines().find(|l| l.contains("┌─"))?;
        Some(line.split("┌─").nth(1)?.trim().to_string())
    }

    /// A diagnostic of the front end (`error[E...]`): the program is
    /// rejected before it runs, in every mode alike.
    pub fn rejected(&self) -> Option<String> {
        let line = self.stderr.lines().find(|l| l.starts_with("error["))?;
        Some(line[6..line.find(']')?].to_string())
    }

    /// A native run whose bindings ran in the interpreter instead (pmx
    /// says so when Futhark fails with an internal error of its own).
    pub fn interpreted(&self) -> bool {
        self.stderr.contains("run in the interpreter instead")
    }

    pub fn internal(&self) -> bool {
        self.code == Some(101) || self.stderr.contains("internal error")
    }
}

/// How two runs differ.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Difference {
    /// pmx itself failed (exit code 101, an internal error) in `mode`.
    Internal(Mode),
    /// A run did not end in time.
    Timeout(Mode),
    ExitCode(Mode),
    Output(Mode),
    Error(Mode),
}

impl Difference {
    pub fn describe(&self) -> String {
        match self {
            Difference::Internal(m) => format!("an internal error with {}", m.name()),
            Difference::Timeout(m) => format!("{} did not finish in time", m.name()),
            Difference::ExitCode(m) => format!("exit codes differ between --debug and {}", m.name()),
            Difference::Output(m) => format!("outputs differ between --debug and {}", m.name()),
            Difference::Error(m) => format!("errors differ between --debug and {}", m.name()),
        }
    }
}

/// Runs `pmx` on a file in each mode.
pub struct Runner {
    pub pmx: PathBuf,
    /// The cache of compiled code (one per fuzzing session).
    pub cache: PathBuf,
    pub timeout: Duration,
}

impl Runner {
    pub fn run(&self, file: &Path, mode: Mode) -> Outcome {
        let mut cmd = Command::new(&self.pmx);
        cmd.arg("run").arg("--color=never");
        match mode {
            Mode::Debug => {
                cmd.arg("--debug");
            }
            Mode::Cpu => {
                cmd.args(["--target", "cpu"]);
            }
            Mode::GpuOnCpu => {
                cmd.args(["--target", "gpu"]).env("PMX_GPU_KERNELS", "cpu");
            }
        }
        cmd.arg(file).env("PMX_CACHE_DIR", &self.cache).env_remove("PMX_TARGET");
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null());
        let Ok(mut child) = cmd.spawn() else {
            return Outcome {
                code: Some(-1),
                stdout: String::new(),
                stderr: format!("cannot run {}", self.pmx.display()),
            };
        };
        // Read both pipes on threads so that a full pipe cannot block it.
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let o = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut s);
            s
        });
        let e = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        let started = Instant::now();
        let code = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status.code(),
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break Some(-1),
            }
        };
        let stdout = o.join().unwrap_or_default();
        let stderr = e.join().unwrap_or_default();
        Outcome { code, stdout, stderr: without_progress(&stderr) }
    }

    /// Runs `file` in every mode of `class`: the outcomes, in `Mode::of`'s
    /// order, and the differences from the first (debug mode).
    pub fn compare(&self, file: &Path, class: Class) -> (Vec<Outcome>, Vec<Difference>) {
        let modes = Mode::of(class);
        let outcomes: Vec<Outcome> = modes.iter().map(|&m| self.run(file, m)).collect();
        let diffs = differences(modes, &outcomes);
        (outcomes, diffs)
    }
}

/// The differences between each mode's outcome and the first's.
pub fn differences(modes: &[Mode], outcomes: &[Outcome]) -> Vec<Difference> {
    let mut diffs = Vec::new();
    let reference = &outcomes[0];
    for (&mode, o) in modes.iter().zip(outcomes) {
        if o.code.is_none() {
            diffs.push(Difference::Timeout(mode));
        } else if o.internal() {
            diffs.push(Difference::Internal(mode));
        }
    }
    for (&mode, o) in modes.iter().zip(outcomes).skip(1) {
        if o.code.is_none() || reference.code.is_none() || o.internal() || reference.internal() {
            continue;
        }
        if o.code != reference.code {
            diffs.push(Difference::ExitCode(mode));
        } else if !same_output(&reference.stdout, &o.stdout) {
            diffs.push(Difference::Output(mode));
        } else if reference.code != Some(0)
            && (o.headline() != reference.headline() || o.location() != reference.location())
        {
            diffs.push(Difference::Error(mode));
        }
    }
    diffs
}

/// Standard outputs compared line by line; on lines marked [`APPROX`],
/// numbers within [`TOLERANCE`] of each other are the same.
pub fn same_output(a: &str, b: &str) -> bool {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    la.len() == lb.len()
        && la.iter().zip(&lb).all(|(x, y)| x == y || (x.starts_with(APPROX) && y.starts_with(APPROX) && close(x, y)))
}

/// Two lines that differ only in numbers within the tolerance.
fn close(a: &str, b: &str) -> bool {
    let (ta, tb) = (tokens(a), tokens(b));
    ta.len() == tb.len()
        && ta.iter().zip(&tb).all(|(x, y)| {
            x == y
                || match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(p), Ok(q)) => (p - q).abs() <= TOLERANCE * p.abs().max(q.abs()),
                    _ => false,
                }
        })
}

/// Numbers and the text between them.
fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut number = false;
    for c in s.chars() {
        let is_num = c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == '+';
        if is_num != number && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        number = is_num;
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Standard error without the progress lines of compilation.
pub fn without_progress(s: &str) -> String {
    s.lines().filter(|l| !l.starts_with("pmx: compiling")).map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximate_lines_compare_numbers_with_the_tolerance() {
        assert!(same_output("~r0 = 1.0000000000001\n", "~r0 = 1.0000000000002\n"));
        assert!(!same_output("r0 = 1.0000000000001\n", "r0 = 1.0000000000002\n"));
        assert!(!same_output("~r0 = 1.0001\n", "~r0 = 1.0002\n"));
        assert!(!same_output("~r0 = [1.0]\n", "~r0 = [1.0, 2.0]\n"));
        assert!(same_output("~r0 = nan\n", "~r0 = nan\n"));
    }

    #[test]
    fn errors_compare_without_the_engine_note() {
        let debug = Outcome {
            code: Some(1),
            stdout: String::new(),
            stderr: "error: Division by zero\n  ┌─ a.mc:2:3\n  = in `f`, called at a.mc:4:1\n".into(),
        };
        let cpu = Outcome {
            code: Some(1),
            stdout: String::new(),
            stderr: "pmx: compiling x\nerror: Division by zero (in CUDA-class accelerated code)\n  ┌─ a.mc:2:3\n"
                .into(),
        };
        let cpu = Outcome { stderr: without_progress(&cpu.stderr), ..cpu };
        assert!(differences(&[Mode::Debug, Mode::Cpu], &[debug.clone(), cpu.clone()]).is_empty());
        let elsewhere = Outcome { stderr: cpu.stderr.replace("2:3", "2:4"), ..cpu };
        assert_eq!(differences(&[Mode::Debug, Mode::Cpu], &[debug, elsewhere]), vec![Difference::Error(Mode::Cpu)]);
    }
}
