//! `vernier man [COMMAND]`: the man page, in roff, generated from the command line's own
//! definition: vernier's (its subcommands listed), or one subcommand's as `vernier-NAME`.

use std::process::ExitCode;

use clap::Args;

use super::stdout::print;
use crate::error::Error;

/// Options of `vernier man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand whose page to print (`run`, `agent`, ...) instead of vernier's.
    pub command: Option<String>,
}

/// The page, as roff, of `cli`: vernier's whole command line, which the caller builds
/// (`Cli::command()`), since the command line is defined above the subcommands.
pub(crate) fn page(mut cli: clap::Command, command: Option<&str>) -> Result<Vec<u8>, Error> {
    cli.build();
    let cmd = match command {
        None => cli,
        Some(name) => {
            let Some(sub) = cli.find_subcommand(name) else {
                let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
                return Err(Error::Usage(format!(
                    "vernier man {name:?}: no such subcommand; one of {}",
                    names.join(", ")
                )));
            };
            // Built, its display name is `vernier-NAME`, which the page is titled by.
            sub.clone()
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(format!("vernier {}", env!("CARGO_PKG_VERSION")))
        .render(&mut roff)
        .map_err(|source| Error::Io {
            path: "<man page>".into(),
            source,
        })?;
    Ok(roff)
}

/// Prints the page, of vernier's command line `cli` or of one of its subcommands.
pub(crate) fn run(args: &ManArgs, cli: clap::Command) -> Result<ExitCode, Error> {
    print(&page(cli, args.command.as_deref())?)?;
    Ok(ExitCode::SUCCESS)
}
