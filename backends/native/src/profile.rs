//! Per-binding profiles for `pmx run --profile`: calls, time inside, bytes
//! copied in and out, compile time, and time in kernels where an engine
//! launches them itself (the GPU engine: each launch and the wait for it). Engines record into one shared table;
//! the CLI renders it.

use std::sync::Mutex;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct Entry {
    /// The binding's name and where its `accelerate` is.
    pub name: String,
    pub engine: String,
    pub calls: u64,
    pub inside: Duration,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub compile: Duration,
    pub cached: bool,
    /// Time in kernel launches, waits included (zero: not measured).
    pub kernels: Duration,
}

#[derive(Default)]
pub struct Profile {
    entries: Mutex<Vec<Entry>>,
}

impl Profile {
    /// The index of a new entry.
    pub fn add(&self, entry: Entry) -> usize {
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.push(entry);
        e.len() - 1
    }

    pub fn update(&self, index: usize, f: impl FnOnce(&mut Entry)) {
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = e.get_mut(index) {
            f(entry);
        }
    }

    pub fn entries(&self) -> Vec<Entry> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The table, one line per binding.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{:<28}  {:<18}  {:>7}  {:>14}  {:>12}  {:>12}  {:>12}  {:>14}\n",
            "binding", "engine", "calls", "time inside", "bytes in", "bytes out", "compile", "kernels"
        );
        for e in self.entries() {
            let compile = match (e.engine.as_str(), e.cached) {
                ("interpreter", _) => "-".to_string(),
                (_, true) => "cached".to_string(),
                (_, false) => ms(e.compile),
            };
            let kernels = if e.kernels.is_zero() { "-".to_string() } else { ms(e.kernels) };
            out.push_str(&format!(
                "{:<28}  {:<18}  {:>7}  {:>14}  {:>12}  {:>12}  {:>12}  {:>14}\n",
                e.name,
                e.engine,
                e.calls,
                ms(e.inside),
                e.bytes_in,
                e.bytes_out,
                compile,
                kernels
            ));
        }
        out
    }
}

/// Where a whole `pmx run` went, measured by the CLI: the front end
/// (parsing, names, types), building the accelerated code (the accelerate
/// passes, lowering, generating and compiling it, or finding it in the
/// cache), and running the program.
#[derive(Clone, Copy, Debug, Default)]
pub struct Phases {
    pub front_end: Duration,
    pub build: Duration,
    pub run: Duration,
}

impl Profile {
    /// The whole run's split: running is divided into time inside the
    /// bindings (the table's sum) and host code (everything else: the
    /// interpreter running the program outside `accelerate`).
    pub fn render_phases(&self, p: &Phases) -> String {
        let inside: Duration = self.entries().iter().map(|e| e.inside).sum();
        let kernels: Duration = self.entries().iter().map(|e| e.kernels).sum();
        let host = p.run.saturating_sub(inside);
        let total = p.front_end + p.build + p.run;
        let kernels = if kernels.is_zero() { String::new() } else { format!(" (kernels {})", ms(kernels)) };
        format!(
            "whole run {}: front end {}, building accelerated code {}, host code {}, inside bindings {}{kernels}\n",
            ms(total),
            ms(p.front_end),
            ms(p.build),
            ms(host),
            ms(inside)
        )
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}
