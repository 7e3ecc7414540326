//! Input and output, the environment, randomness, time and symbols.

use crate::error::Res;
use crate::eval::{Args, Machine};
use crate::value::Value;
use pmx_ast::{Builtin, Span};
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The generator behind `randIntU`: splitmix64, seeded from the clock
/// unless `randSetSeed` sets it (then runs are reproducible).
static RNG: Mutex<Option<u64>> = Mutex::new(None);
static SYMBOLS: AtomicU64 = AtomicU64::new(1);

/// The program's random generator (SplitMix64), shared by `randIntU` and
/// the distributions of `ext/dist-ext.mc`.
pub(crate) fn next_random() -> u64 {
    let mut state = RNG.lock().unwrap_or_else(|e| e.into_inner());
    let s = state.get_or_insert_with(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub(crate) fn set_seed(seed: i64) {
    *RNG.lock().unwrap_or_else(|e| e.into_inner()) = Some(seed as u64);
}

pub fn call(m: &mut Machine, b: Builtin, args: Args, span: Span) -> Res<Value> {
    use Builtin::*;
    Ok(match b {
        Print => {
            crate::io::out(&args[0].as_string());
            Value::unit()
        }
        PrintError => {
            crate::io::err(&args[0].as_string());
            Value::unit()
        }
        Dprint => {
            crate::io::out(&crate::show::show(&args[0]));
            Value::unit()
        }
        FlushStdout => {
            crate::io::flush();
            Value::unit()
        }
        FlushStderr => Value::unit(),
        ReadLine => {
            crate::io::flush();
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            if line.ends_with('\n') {
                line.pop();
            }
            Value::string(&line)
        }
        ReadBytesAsString => {
            crate::io::flush();
            let n = args[0].as_int().max(0) as usize;
            let mut buf = vec![0u8; n];
            let got = std::io::stdin().lock().read(&mut buf).unwrap_or(0);
            let text = String::from_utf8_lossy(&buf[..got]).into_owned();
            Value::tuple(vec![Value::string(&text), Value::string("")])
        }
        ReadFile => {
            let path = args[0].as_string();
            match std::fs::read_to_string(&path) {
                Ok(text) => Value::string(&text),
                Err(e) => return Err(m.fail(format!("readFile: cannot read `{path}`: {e}"), span)),
            }
        }
        WriteFile => {
            let path = args[0].as_string();
            if let Err(e) = std::fs::write(&path, args[1].as_string()) {
                return Err(m.fail(format!("writeFile: cannot write `{path}`: {e}"), span));
            }
            Value::unit()
        }
        FileExists => Value::Bool(std::path::Path::new(&args[0].as_string()).exists()),
        DeleteFile => {
            let _ = std::fs::remove_file(args[0].as_string());
            Value::unit()
        }
        Argv => {
            Value::seq(crate::value::Seq::from_values(m.shared.options.argv.iter().map(|a| Value::string(a)).collect()))
        }
        Command => {
            crate::io::flush();
            let status = std::process::Command::new("sh").arg("-c").arg(args[0].as_string()).status();
            Value::Int(status.ok().and_then(|s| s.code()).unwrap_or(-1) as i64)
        }
        Exit => {
            let code = args[0].as_int();
            let mut e = m.fail(format!("exit {code}"), span);
            e.exit = Some(code as i32);
            return Err(e);
        }
        Error => return Err(m.fail(args[0].as_string(), span)),
        RandIntU => {
            let (lo, hi) = (args[0].as_int(), args[1].as_int());
            if hi <= lo {
                return Err(m.fail(format!("randIntU: the range [{lo}, {hi}) is empty"), span));
            }
            let width = (hi as i128 - lo as i128) as u128;
            Value::Int((lo as i128 + (next_random() as u128 % width) as i128) as i64)
        }
        RandSetSeed => {
            set_seed(args[0].as_int());
            Value::unit()
        }
        WallTimeMs => Value::Float(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64() * 1000.0)
                .unwrap_or(0.0),
        ),
        SleepMs => {
            std::thread::sleep(std::time::Duration::from_millis(args[0].as_int().max(0) as u64));
            Value::unit()
        }
        Gensym => Value::Symbol(SYMBOLS.fetch_add(1, Ordering::Relaxed)),
        Eqsym => match (&args[0], &args[1]) {
            (Value::Symbol(a), Value::Symbol(b)) => Value::Bool(a == b),
            _ => crate::error::type_confusion("two symbols"),
        },
        Sym2hash => match &args[0] {
            Value::Symbol(a) => Value::Int(*a as i64),
            _ => crate::error::type_confusion("a symbol"),
        },
        _ => unreachable!("not a system built-in: {b:?}"),
    })
}
