//! Progress while compiling: a spinner on a terminal, one plain line
//! otherwise (logs and CI keep a record without control characters).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
}

impl Progress {
    /// Starts showing `what` (for example "compiling accelerate1 with
    /// Futhark") on stderr.
    pub fn start(what: &str) -> Progress {
        let bar = if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_message(what.to_string());
            bar.enable_steady_tick(Duration::from_millis(100));
            Some(bar)
        } else {
            eprintln!("pmx: {what} ...");
            None
        };
        Progress { bar, started: Instant::now() }
    }

    /// Stops it; returns how long it ran.
    pub fn finish(self) -> Duration {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
        self.started.elapsed()
    }
}
