//! `vernier completions SHELL`: the shell's completion script, generated from the command
//! line's own definition, so it never falls behind a new option.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

use super::stdout::print;
use crate::error::Error;

/// Options of `vernier completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The script for `shell`, as bytes, completing `cli`: vernier's whole command line, which
/// the caller builds (`Cli::command()`), since the command line is defined above the
/// subcommands.
pub(crate) fn script(shell: Shell, cli: &mut clap::Command) -> Vec<u8> {
    let mut script = Vec::new();
    // Into memory first: clap_complete panics when its writer fails, and a closed stdout
    // (`| head`) is not worth a panic.
    clap_complete::generate(shell, cli, "vernier", &mut script);
    script
}

/// Prints the script of vernier's command line `cli`.
pub(crate) fn run(args: &CompletionsArgs, mut cli: clap::Command) -> Result<ExitCode, Error> {
    print(&script(args.shell, &mut cli))?;
    Ok(ExitCode::SUCCESS)
}
