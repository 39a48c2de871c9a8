//! The command line's own documents, from the built binary: shell completion scripts that
//! their shells accept, and a man page that `man` could format.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::vernier;

/// Every subcommand, as the completion scripts and the man page must name it.
const SUBCOMMANDS: [&str; 15] = [
    "run",
    "demo",
    "deploy",
    "agent",
    "bench-agent",
    "analyze",
    "calibrate",
    "compare",
    "serve",
    "model",
    "replay",
    "report",
    "validate",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let out = vernier(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether `shell` accepts `script` without running it (`-n`), or `None` when the shell
/// is not installed.
fn parses(shell: &str, flag: &str, script: &str) -> Option<std::process::Output> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vernier.completion");
    std::fs::write(&path, script).unwrap();
    std::process::Command::new(shell)
        .arg(flag)
        .arg(&path)
        .output()
        .ok()
}

#[test]
fn completion_scripts_name_every_subcommand_and_parse() {
    for (shell, check) in [("bash", "-n"), ("zsh", "-n"), ("fish", "--no-execute")] {
        let script = stdout_of(&["completions", shell]);
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell}: no {sub}");
        }
        assert!(script.contains("token-file"), "{shell}: no agent options");
        match parses(shell, check, &script) {
            Some(out) => assert!(
                out.status.success(),
                "{shell} {check} refuses the script: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
            None => eprintln!("{shell} is not installed: its script was not parsed"),
        }
    }
    // bash is everywhere these tests run: its check is not optional.
    assert!(
        parses("bash", "-n", "true").is_some(),
        "bash is needed to check the bash script"
    );
    let out = vernier(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'tcsh'"));
}

#[test]
fn the_man_page_is_roff_naming_every_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(page.contains("\n.TH vernier 1 "), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    for sub in SUBCOMMANDS {
        // roff escapes a hyphen as \-.
        let escaped = sub.replace('-', "\\-");
        assert!(
            page.contains(&format!("\nvernier\\-{escaped}(1)\n")),
            "no {sub}: {page}"
        );
    }
    let agent = stdout_of(&["man", "agent"]);
    assert!(agent.contains("\n.TH vernier-agent 1 "), "{agent}");
    assert!(agent.contains("\\-\\-token\\-file"), "{agent}");
    let out = vernier(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("vernier man \"nope\": no such subcommand"),
        "{out:?}"
    );
}
