//! `pmx-fuzz`: the differential fuzzer's command (see the crate's docs).
//!
//!     pmx-fuzz --seeds 0..100               # these seeds, both classes
//!     pmx-fuzz --minutes 30 --out tests/fuzz  # until time is up; each
//!                                           # difference minimised and
//!                                           # written as a fixture
//!     pmx-fuzz --show cuda:12               # print one program

use clap::Parser;
use pmx_fuzz::{check, generate, minimise, Class, Runner, Tally};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(about = "Runs generated programs with --debug and natively and compares them")]
struct Args {
    /// The pmx binary.
    #[arg(long, default_value = "target/release/pmx")]
    pmx: PathBuf,
    /// Seeds to run, `A..B`.
    #[arg(long)]
    seeds: Option<String>,
    /// Run new seeds (from --start) until this many minutes have passed.
    #[arg(long)]
    minutes: Option<u64>,
    /// The first seed of a timed run.
    #[arg(long, default_value_t = 1_000_000)]
    start: u64,
    /// Only this class (futhark or cuda).
    #[arg(long)]
    class: Option<String>,
    /// Where minimised differences are written as fixtures.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Tries the minimiser may make per difference.
    #[arg(long, default_value_t = 200)]
    attempts: usize,
    /// Print the program `CLASS:SEED` and stop.
    #[arg(long)]
    show: Option<String>,
    /// Seconds a run may take.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
}

fn class_of(s: &str) -> Option<Class> {
    match s {
        "futhark" => Some(Class::Futhark),
        "cuda" => Some(Class::Cuda),
        _ => None,
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Some(which) = &args.show {
        let parsed = which.split_once(':').and_then(|(c, s)| Some((class_of(c)?, s.parse::<u64>().ok()?)));
        let Some((class, seed)) = parsed else {
            eprintln!("error: --show takes CLASS:SEED (futhark or cuda)");
            return std::process::ExitCode::from(2);
        };
        print!("{}", generate(class, seed).render());
        return std::process::ExitCode::SUCCESS;
    }
    let classes: Vec<Class> = match args.class.as_deref() {
        None => vec![Class::Cuda, Class::Futhark],
        Some(c) => match class_of(c) {
            Some(c) => vec![c],
            None => {
                eprintln!("error: --class takes futhark or cuda");
                return std::process::ExitCode::from(2);
            }
        },
    };
    let work = std::env::temp_dir().join(format!("pmx-fuzz-{}", std::process::id()));
    if std::fs::create_dir_all(&work).is_err() {
        eprintln!("error: cannot make {}", work.display());
        return std::process::ExitCode::from(1);
    }
    let runner =
        Runner { pmx: args.pmx.clone(), cache: work.join("cache"), timeout: Duration::from_secs(args.timeout) };
    let started = Instant::now();
    let seeds: Box<dyn Iterator<Item = u64>> = match (&args.seeds, args.minutes) {
        (Some(range), _) => {
            let Some((a, b)) = range.split_once("..").and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            else {
                eprintln!("error: --seeds takes A..B");
                return std::process::ExitCode::from(2);
            };
            Box::new(a..b)
        }
        (None, Some(_)) => Box::new(args.start..),
        (None, None) => {
            eprintln!("error: give --seeds A..B or --minutes N");
            return std::process::ExitCode::from(2);
        }
    };
    let deadline = args.minutes.map(|m| Duration::from_secs(m * 60));
    let mut tally = Tally::default();
    'seeds: for seed in seeds {
        for &class in &classes {
            if deadline.is_some_and(|d| started.elapsed() > d) {
                break 'seeds;
            }
            let p = generate(class, seed);
            let (outcomes, diffs) = check(&runner, &p, &work);
            tally.add(&p, &outcomes, &diffs);
            if diffs.is_empty() {
                continue;
            }
            let what: Vec<String> = diffs.iter().map(|d| d.describe()).collect();
            eprintln!("{} seed {seed}: {}", class.name(), what.join("; "));
            if let Some(out) = &args.out {
                let first = diffs[0].clone();
                let mut still = |c: &pmx_fuzz::Program| check(&runner, c, &work).1.contains(&first);
                let small = minimise(&p, &mut still, args.attempts);
                let file = out.join(format!("{}_{seed}.mc", class.name()));
                let text = format!("-- Found by pmx-fuzz: {}.\n{}", first.describe(), small.render());
                match std::fs::write(&file, text) {
                    Ok(()) => eprintln!("  minimised to {} ({} nodes)", file.display(), small.size()),
                    Err(e) => eprintln!("  cannot write {}: {e}", file.display()),
                }
            }
        }
    }
    println!("{}", tally.render());
    println!("in {:.0} s", started.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&work);
    if tally.differences.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}
