use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

/// `vernier 0.1.0 (abc1234)`: the commit is written by build.rs, and only this file reads
/// it, so that a new commit relinks the binary rather than rebuilding the library.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    include_str!(concat!(env!("OUT_DIR"), "/commit")),
    ")"
);

fn main() -> ExitCode {
    vernier_workbench::record::set_version(VERSION);
    let matches = vernier_workbench::Cli::command()
        .version(VERSION)
        .get_matches();
    let cli = vernier_workbench::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match vernier_workbench::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("vernier: {err}");
            err.exit_code()
        }
    }
}
