//! One module per subcommand; each takes its parsed arguments and returns an exit code.

pub(crate) mod agent;
pub(crate) mod analyze;
pub(crate) mod bench_agent;
pub(crate) mod calibrate;
pub(crate) mod model;
pub(crate) mod serve;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs one invocation of `vernier`.
pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Agent(args) => agent::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::BenchAgent(args) => bench_agent::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Model(args) => model::run(args),
    }
}
