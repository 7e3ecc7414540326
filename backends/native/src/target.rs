//! Where accelerated code runs: `--target auto|interp|cpu|gpu` (or
//! `PMX_TARGET`). `interp` is pmx's own interpreter; `cpu` is native code on
//! all cores; `gpu` needs a usable CUDA device; `auto` picks `gpu` when a
//! device is usable, else `cpu` when the toolchain is there, else `interp`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Auto,
    Interp,
    Cpu,
    Gpu,
}

impl Target {
    pub fn parse(s: &str) -> Option<Target> {
        match s {
            "auto" => Some(Target::Auto),
            "interp" => Some(Target::Interp),
            "cpu" => Some(Target::Cpu),
            "gpu" => Some(Target::Gpu),
            _ => None,
        }
    }

    /// The flag's value, else `PMX_TARGET`, else `auto`; a bad
    /// `PMX_TARGET` is an error that names it.
    pub fn choose(flag: Option<Target>) -> Result<Target, String> {
        if let Some(t) = flag {
            return Ok(t);
        }
        match std::env::var("PMX_TARGET") {
            Ok(v) if !v.is_empty() => Target::parse(&v)
                .ok_or_else(|| format!("PMX_TARGET is `{v}`; it must be one of auto, interp, cpu, gpu")),
            _ => Ok(Target::Auto),
        }
    }

    /// Whether a target that cannot be honoured is an error (it was asked
    /// for explicitly) rather than a fallback with a note.
    pub fn explicit(self) -> bool {
        matches!(self, Target::Cpu | Target::Gpu)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::Auto => "auto",
            Target::Interp => "interp",
            Target::Cpu => "cpu",
            Target::Gpu => "gpu",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in [Target::Auto, Target::Interp, Target::Cpu, Target::Gpu] {
            assert_eq!(Target::parse(&t.to_string()), Some(t));
        }
        assert_eq!(Target::parse("tpu"), None);
    }
}
