//! `vernier validate`: its options, and the call into [`crate::validate`], which runs the
//! experiments and writes docs/RESULTS.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::error::Error;
use crate::validate::{self, Options};

/// Options of `vernier validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Where RESULTS.md and its plots (under results/) are written.
    #[arg(long, default_value = "docs")]
    pub out: PathBuf,
    /// Where the runs' records go [default: runs/validate-DATE].
    #[arg(long)]
    pub runs: Option<PathBuf>,
    /// Two cores: the agent (and the other tools) on the first, the server on the second.
    /// The agent takes core 1 as in scenarios/memcached-10k.yaml: with it on core 0, the
    /// host probe saw that core stall for 18-100 ms (0.7-1.4% of the time) in fixed-service
    /// runs at 30% and 50% load; with the cores swapped the 30% point converged twice in 15 s.
    #[arg(long, value_delimiter = ',', default_value = "1,0")]
    pub cpus: Vec<usize>,
    /// One load per distribution and short limits: checks that the harness works end to
    /// end in a couple of minutes; its figures are not evidence.
    #[arg(long)]
    pub quick: bool,
    /// Only the coverage section: replications of processes with known quantiles, written
    /// into RESULTS.md in place of the previous one.
    #[arg(long)]
    pub coverage: bool,
    /// Only the section on the tail without the host's stalls: replications of a queue whose
    /// server stalls, known as the host probe knows them, against the same queue without
    /// stalls; written into RESULTS.md in place of the previous one.
    #[arg(long, conflicts_with = "coverage")]
    pub stall_coverage: bool,
    /// Replications per process (or cell) of the coverage sections [default: 400; 40 with --quick].
    #[arg(long)]
    pub replications: Option<usize>,
}

/// Runs the experiments (or only the coverage section) and prints the answer: the
/// headline, or with `--coverage` the coverage rows.
pub fn run(args: ValidateArgs) -> Result<ExitCode, Error> {
    let options = Options {
        out: args.out,
        runs: args.runs,
        cpus: args.cpus,
        quick: args.quick,
        replications: args.replications,
    };
    if args.coverage {
        for line in validate::coverage(&options)?.lines() {
            println!("{line}");
        }
    } else if args.stall_coverage {
        let report = validate::stall_coverage(&options)?;
        for line in report.lines() {
            println!("{line}");
        }
        for row in report.misses() {
            eprintln!(
                "vernier validate: ρ {} stalled {}% p{}: the without-stalls CI covered {:.3}, below {}",
                row.cell.rho,
                row.cell.stall_share * 100.0,
                row.p * 100.0,
                row.without.coverage,
                validate::STALL_COVERAGE_TARGET
            );
        }
    } else {
        println!("{}", validate::headline(&validate::run(&options)?));
    }
    Ok(ExitCode::SUCCESS)
}
