//! The completion script and the man page, generated from vernier's whole command line.

use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;
use crate::commands::{completions, man};
use crate::error::Error;

/// The completion script for `shell` of vernier's command line.
fn script(shell: Shell) -> Vec<u8> {
    completions::script(shell, &mut Cli::command())
}

/// The man page of vernier's command line, or of one subcommand.
fn page(command: Option<&str>) -> Result<Vec<u8>, Error> {
    man::page(Cli::command(), command)
}

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
