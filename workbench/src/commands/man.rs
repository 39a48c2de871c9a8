//! `vernier man [COMMAND]`: the man page, in roff, generated from the command line's own
//! definition: vernier's (its subcommands listed), or one subcommand's as `vernier-NAME`.

use std::process::ExitCode;

use clap::{Args, CommandFactory};

use super::print;
use crate::cli::Cli;
use crate::error::Error;

/// Options of `vernier man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// A subcommand whose page to print (`run`, `agent`, ...) instead of vernier's.
    pub command: Option<String>,
}

/// The page, as roff.
pub(crate) fn page(command: Option<&str>) -> Result<Vec<u8>, Error> {
    let mut cli = Cli::command();
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

/// Prints the page.
pub(crate) fn run(args: &ManArgs) -> Result<ExitCode, Error> {
    print(&page(args.command.as_deref())?)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_names_every_subcommand() {
        let roff = String::from_utf8(page(None).unwrap()).unwrap();
        assert!(roff.contains(".TH vernier 1 "), "{roff}");
        for name in [
            "run",
            "agent",
            "bench\\-agent",
            "report",
            "completions",
            "man",
        ] {
            assert!(
                roff.contains(&format!("\nvernier\\-{name}(1)\n")),
                "{name}: {roff}"
            );
        }
    }

    #[test]
    fn a_subcommand_has_a_page_of_its_own_and_a_wrong_name_is_named() {
        let roff = String::from_utf8(page(Some("agent")).unwrap()).unwrap();
        let title = format!(
            ".TH vernier-agent 1  \"vernier {}\"",
            env!("CARGO_PKG_VERSION")
        );
        assert!(roff.contains(&title), "{roff}");
        assert!(roff.contains("token\\-file"), "{roff}");
        let err = page(Some("nope")).unwrap_err().to_string();
        assert!(
            err.starts_with("vernier man \"nope\": no such subcommand; one of run, "),
            "{err}"
        );
    }
}
