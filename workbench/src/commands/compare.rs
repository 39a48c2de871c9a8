//! `vernier compare A B`: did my change move the tail? A and B measured at the same
//! moments (a duet) or in interleaved pairs of blocks at one load, the difference of their
//! percentile with its CI ([`crate::compare`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::args::duration_arg;
use super::run::{Output, UrlFlags, scenario_of};
use super::stdout::{Json, print, print_json};
use crate::compare::report::{COMPARISON_FILE, render_table};
use crate::compare::{CompareOptions, CompareVerdict, Comparison, Design, Steer, compare};
use crate::error::Error;
use crate::scenario::Scenario;
use crate::session;
use crate::tui;

/// What `vernier compare --help` says after the options.
const COMPARE_HELP: &str = "\
A and B are two servers' URLs (as vernier run takes them) or scenario files; give one \
scenario and --set-a/--set-b to compare two variants of it. Both are measured at A's load, \
percentile and width, with A's connections, workers and cores. By default both at once (a \
duet): one client keeps both servers' connections open and sends each request of one stream \
to A or B by a coin, each side at the load asked, so the host's stalls reach both alike; the \
stream is cut into windows of --block, each a pair. --design blocks measures short blocks of \
each in turn (for sides that cannot run at once), --design sequential all of A then all of \
B. The answer is B − A and B / A of the percentile with a 95% CI: faster, slower, no \
difference larger than the width, or N/A with why. On a terminal \
both CCDFs, the blocks over time and the CI narrowing show live (p pauses, q stops with the \
verdict so far); --headless prints progress lines instead. Exit 0 with an answer, 3 N/A, 2 \
bad input, 1 error.

Examples:
  vernier compare memcached://127.0.0.1:11211 memcached://127.0.0.1:11212 --load 10k
  vernier compare synthetic://127.0.0.1:7000 synthetic://127.0.0.1:7001 --load 5k --percentile 50 --width 2us
  vernier compare scenario.yaml --set-b connections=8 --record cmp/ && vernier report cmp/";

/// `vernier compare`'s arguments.
#[derive(Debug, Args)]
#[command(after_help = COMPARE_HELP)]
pub struct CompareArgs {
    /// The baseline: a URL (memcached://127.0.0.1:11211) or a scenario file.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The one compared with it (default: A again, with --set-b).
    #[arg(value_name = "B")]
    pub b: Option<PathBuf>,
    /// The load, req/s (10k): one rate, the same for both.
    #[arg(long, value_name = "RATE")]
    pub load: Option<String>,
    /// Change a field of both scenarios (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// Change a field of A only, after --set (repeatable).
    #[arg(long = "set-a", value_name = "FIELD=VALUE")]
    pub set_a: Vec<String>,
    /// Change a field of B only, after --set (repeatable).
    #[arg(long = "set-b", value_name = "FIELD=VALUE")]
    pub set_b: Vec<String>,
    /// Each window's (a duet's) or block's measuring time, after a 300 ms warm-up.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration_arg)]
    pub block: Duration,
    /// The most pairs (windows, or pairs of blocks) before the verdict.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub pairs: usize,
    /// The seed of the pairs' orders.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Both at once (duet, the default); interleaved pairs of blocks, each side with its
    /// own client (blocks); or every block of A then every block of B, to see what
    /// interleaving guards against (sequential).
    /// (Default: duet, or blocks when A and B differ in more than their servers and
    /// workloads, which one client cannot carry; said on stderr.)
    #[arg(long, value_enum)]
    pub design: Option<Design>,
    /// Also write the comparison to DIR/comparison.json, for `vernier report DIR`.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// No live view: progress lines on stderr (also without a terminal, or with
    /// --output json).
    #[arg(long)]
    pub headless: bool,
    /// How the answer is printed.
    #[arg(long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Pretty-print the JSON.
    #[arg(long)]
    pub pretty: bool,
    /// The fields a URL's scenario takes from flags (both sides).
    #[command(flatten)]
    pub url: UrlFlags,
}

/// Runs `vernier compare`.
pub fn run(args: CompareArgs) -> Result<ExitCode, Error> {
    let (a, b) = scenarios(&args)?;
    if args.pairs < crate::compare::MIN_PAIRS_TO_LOOK {
        return Err(Error::Usage(format!(
            "--pairs {}: a comparison needs at least {} pairs of blocks",
            args.pairs,
            crate::compare::MIN_PAIRS_TO_LOOK
        )));
    }
    crate::compare::fixed_rate(&a)?;
    for scenario in [&a, &b] {
        let allowed = vernier_agent::sys::available_cpus();
        session::check_affinity(scenario, &allowed)?;
        session::check_spin(scenario, &allowed)?;
        session::check_targets(scenario)?;
    }
    let record = args.record.as_deref().map(record_file).transpose()?;
    let design = match args.design {
        Some(Design::Duet) => {
            if let Some(field) = crate::compare::duet_differs(&a, &b)? {
                return Err(Error::Usage(format!(
                    "--design duet: A and B differ in {field}, which one client cannot carry at once (--design blocks measures each side with its own client)"
                )));
            }
            Design::Duet
        }
        Some(design) => design,
        None => match crate::compare::duet_differs(&a, &b)? {
            None => Design::Duet,
            Some(field) => {
                eprintln!(
                    "vernier: A and B differ in {field}, which one client cannot carry at once: comparing in interleaved blocks (--design blocks)"
                );
                Design::Blocks
            }
        },
    };
    let options = CompareOptions {
        block: args.block,
        max_pairs: args.pairs,
        seed: args.seed,
        design,
    };
    let comparison = if live(&args) {
        tui::watch(&a, &b, &options)?
    } else {
        compare(&a, &b, &options, |_, line| {
            eprintln!("vernier: {line}");
            Steer::Go
        })?
    };
    if let Some(path) = record {
        write_record(&path, &comparison)?;
    }
    match args.output {
        Output::Json => print_json(&comparison, Json::pretty_if(args.pretty))?,
        Output::Table => print(render_table(&comparison).as_bytes())?,
    }
    Ok(match comparison.verdict {
        CompareVerdict::NotAvailable => ExitCode::from(super::run::EXIT_NA),
        CompareVerdict::Wide => ExitCode::from(super::run::EXIT_WIDE),
        _ => ExitCode::SUCCESS,
    })
}

/// Whether the comparison is shown live: not with --headless or --output json (for
/// scripts), and only on a terminal (saying so when there is none). The answer is printed
/// after the live view either way, so it stays in the scroll-back.
fn live(args: &CompareArgs) -> bool {
    if args.headless || args.output == Output::Json {
        return false;
    }
    if !tui::available() {
        eprintln!("vernier: not a terminal: running headless (--headless says so)");
        return false;
    }
    true
}

/// A's and B's scenarios: each path with `--set` and then its own `--set-a` or `--set-b`;
/// B defaults to A's path, which then needs a `--set-a` or `--set-b` to differ by.
fn scenarios(args: &CompareArgs) -> Result<(Scenario, Scenario), Error> {
    let b_path = match &args.b {
        Some(b) => b,
        None if args.set_a.is_empty() && args.set_b.is_empty() => {
            return Err(Error::Usage(format!(
                "vernier compare {}: give B, or --set-b FIELD=VALUE to compare a variant of A",
                args.a.display()
            )));
        }
        None => &args.a,
    };
    let side = |path: &Path, own: &[String]| {
        let sets: Vec<String> = args.set.iter().chain(own).cloned().collect();
        scenario_of(path, args.load.as_deref(), &sets, &args.url)
    };
    Ok((side(&args.a, &args.set_a)?, side(b_path, &args.set_b)?))
}

/// `DIR/comparison.json`, the directory made; an existing one is never overwritten.
fn record_file(dir: &Path) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(COMPARISON_FILE);
    if path.exists() {
        return Err(Error::Usage(format!(
            "{}: a comparison is already recorded there; give --record another directory",
            path.display()
        )));
    }
    Ok(path)
}

/// Writes the comparison as pretty JSON.
fn write_record(path: &Path, comparison: &Comparison) -> Result<(), Error> {
    let json = serde_json::to_string_pretty(comparison)
        .map_err(|e| Error::Failed(format!("{}: {e}", path.display())))?;
    std::fs::write(path, json + "\n").map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
