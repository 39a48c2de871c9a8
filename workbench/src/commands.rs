//! One module per subcommand; each takes its parsed arguments and returns an exit code.

pub(crate) mod agent;
pub(crate) mod analyze;
pub(crate) mod bench_agent;
pub(crate) mod calibrate;
pub(crate) mod completions;
pub(crate) mod demo;
pub(crate) mod deploy;
pub(crate) mod man;
pub(crate) mod model;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod validate;

use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs one invocation of `vernier`.
pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Demo(args) => demo::run(args),
        Command::Deploy(args) => deploy::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::BenchAgent(args) => bench_agent::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Model(args) => model::run(args),
        Command::Report(args) => report::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Completions(args) => completions::run(&args),
        Command::Man(args) => man::run(&args),
    }
}

/// Prints one JSON object on stdout. A reader that stopped early (`| head`) is not an
/// error of ours.
pub(crate) fn print_json<T: Serialize>(value: &T, pretty: bool) -> Result<(), Error> {
    let json = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .map_err(|e| Error::Failed(format!("cannot encode the result as JSON: {e}")))?;
    print(format!("{json}\n").as_bytes())
}

/// Writes `bytes` to stdout. A reader that stopped early (`| head`) is not an error of
/// ours.
pub(crate) fn print(bytes: &[u8]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            path: "<stdout>".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}
