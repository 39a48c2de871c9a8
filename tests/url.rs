//! `vernier run URL`: a server measured from one line, no file (the scenario the URL and
//! the flags build, printed and run again as a file), and the one-line errors of a bad
//! URL, of a flag that a file conflicts with, and of a target where nothing listens. Also
//! `vernier --version`, which names the commit. Every server is started here on a free
//! port and killed by PID; every run is bounded by its own short limits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::vernier;

/// The commit `git` says HEAD is, if this is a checkout `git` can read.
fn head() -> Option<String> {
    let out = std::process::Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short",
            "HEAD",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[test]
fn the_version_names_the_commit_built() {
    let out = vernier(&["--version"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line = String::from_utf8(out.stdout).unwrap();
    let commit = match head() {
        Some(hash) => hash,
        None => "unknown commit".into(),
    };
    assert_eq!(
        line,
        format!("vernier {} ({commit})\n", env!("CARGO_PKG_VERSION"))
    );
}
