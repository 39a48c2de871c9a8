//! One module per subcommand; each takes its parsed arguments and returns an exit code.

pub(crate) mod analyze;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs one invocation of `vernier`.
pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Analyze(args) => analyze::run(args),
    }
}
