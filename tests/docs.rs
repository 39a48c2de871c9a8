//! The user-facing documents hold what they promise: the README stays short enough to read
//! (12,000 characters, no table cell over 300), its links lead somewhere, the licences
//! Cargo.toml declares are there, and the picture of the terminal UI in docs/ is the frame
//! vernier draws today from the record it was made from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The cells of a Markdown table row (`| a | b |`), with escaped bars kept inside cells.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

#[test]
fn the_readme_is_short_and_its_tables_readable() {
    let readme = read("README.md");
    let length = readme.chars().count();
    assert!(
        length <= 12_000,
        "README.md has {length} characters, 12,000 at most"
    );
    for (n, line) in readme.lines().enumerate() {
        if !line.trim_start().starts_with('|') {
            continue;
        }
        for cell in cells(line) {
            let chars = cell.chars().count();
            assert!(
                chars <= 300,
                "README.md:{}: a table cell of {chars} characters (300 at most): {cell}",
                n + 1
            );
        }
    }
    eprintln!("README.md: {length} characters");
}

#[test]
fn the_readme_s_links_lead_to_files_that_exist() {
    let readme = read("README.md");
    let mut checked = 0;
    for (n, line) in readme.lines().enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            rest = &after[end..];
            if target.contains("://") || target.starts_with('#') {
                continue;
            }
            let path = target.split('#').next().unwrap();
            assert!(
                root().join(path).exists(),
                "README.md:{}: a link to {path}, which does not exist",
                n + 1
            );
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} links found");
}

#[test]
fn the_licences_cargo_declares_are_there() {
    let cargo = read("Cargo.toml");
    assert!(cargo.contains("license = \"MIT OR Apache-2.0\""));
    assert!(read("LICENSE-MIT").starts_with("MIT License"));
    assert!(
        read("LICENSE-APACHE").contains("Apache License\n                           Version 2.0")
    );
}

/// The record docs/tui.svg is drawn from, the moment and the size.
const PICTURE: [&str; 7] = [
    "replay",
    "../fixtures/runs/demo",
    "--until",
    "75s",
    "--screen",
    "110x32",
    "--svg",
];

#[test]
fn the_picture_of_the_ui_is_the_frame_vernier_draws() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args(PICTURE)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let drawn = String::from_utf8(output.stdout).unwrap();
    assert!(drawn.starts_with("<svg ") && drawn.contains("vernier"));
    let path = root().join("docs/tui.svg");
    if std::env::var_os("VERNIER_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &drawn).unwrap();
        eprintln!("wrote {}", path.display());
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == drawn,
        "docs/tui.svg is not the frame vernier draws now; make it again with \
         `VERNIER_UPDATE_DOCS=1 cargo test --release -p vernier-workbench --test docs` \
         (from workbench/: vernier {})",
        PICTURE.join(" ")
    );
}
