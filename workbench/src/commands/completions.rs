//! `vernier completions SHELL`: the shell's completion script, generated from the command
//! line's own definition, so it never falls behind a new option.

use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::print;
use crate::cli::Cli;
use crate::error::Error;

/// Options of `vernier completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The script for `shell`, as bytes.
pub(crate) fn script(shell: Shell) -> Vec<u8> {
    let mut script = Vec::new();
    // Into memory first: clap_complete panics when its writer fails, and a closed stdout
    // (`| head`) is not worth a panic.
    clap_complete::generate(shell, &mut Cli::command(), "vernier", &mut script);
    script
}

/// Prints the script.
pub(crate) fn run(args: &CompletionsArgs) -> Result<ExitCode, Error> {
    print(&script(args.shell))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_the_subcommands_and_their_options() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = String::from_utf8(script(shell)).unwrap();
            for word in [
                "bench-agent",
                "report",
                "completions",
                "token-file",
                "format",
            ] {
                assert!(text.contains(word), "{shell}: no {word}");
            }
        }
    }
}
