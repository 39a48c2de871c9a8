//! The user-facing documents hold what they promise: the README stays short enough to read
//! (12,000 characters, no table cell over 300), its links and docs/RESULTS.md's lead somewhere
//! (to files and to headings), every vernier command RESULTS gives parses, the licences
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

/// The GitHub anchor of a Markdown heading's text: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, everything else dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown document's headings (outside fenced blocks), numbered as GitHub
/// numbers repeats (`name`, `name-1`, ...).
fn anchors(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let base = anchor(title);
        let repeats = found
            .iter()
            .filter(|a| {
                **a == base
                    || a.strip_prefix(&format!("{base}-"))
                        .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count();
        found.push(if repeats == 0 {
            base
        } else {
            format!("{base}-{repeats}")
        });
    }
    found
}

/// The relative links of the Markdown file at `path` (from the repository's root): each
/// leads to a file that exists, and each `#anchor` (within the file, or into another
/// Markdown file) to a heading there. Returns how many were checked.
fn check_links(path: &str) -> usize {
    let text = read(path);
    let dir = Path::new(path).parent().unwrap_or(Path::new(""));
    let mut checked = 0;
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            rest = &after[end..];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = match target.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (target, None),
            };
            let linked = if file.is_empty() {
                PathBuf::from(path)
            } else {
                dir.join(file)
            };
            assert!(
                root().join(&linked).exists(),
                "{path}:{}: a link to {}, which does not exist",
                n + 1,
                linked.display()
            );
            if let Some(fragment) = fragment {
                let into = std::fs::read_to_string(root().join(&linked)).unwrap();
                let known = anchors(&into);
                assert!(
                    known.iter().any(|a| a == fragment),
                    "{path}:{}: a link to {}#{fragment}, a heading that is not there; its \
                     headings' anchors: {known:?}",
                    n + 1,
                    linked.display()
                );
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_readme_s_links_lead_to_files_that_exist() {
    let checked = check_links("README.md");
    assert!(checked >= 5, "only {checked} links found");
}

#[test]
fn the_results_links_lead_to_files_and_headings_that_exist() {
    let checked = check_links("docs/RESULTS.md");
    assert!(checked >= 5, "only {checked} links found");
}

/// A line of a shell command split into its words as `sh` would (single and double quotes,
/// backslash escapes); a word starting with `#` ends the line.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '#' if word.is_none() => break,
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    w.push(c);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(next) = chars.next() {
                                w.push(next);
                            }
                        }
                        c => w.push(c),
                    }
                }
            }
            '\\' => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_with(String::new).push(next);
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The command lines of a Markdown document's fenced blocks, a line ending in `\` joined
/// with the next, each with its line number.
fn fenced_commands(text: &str) -> Vec<(usize, String)> {
    let mut commands = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            commands.extend(pending.take());
            continue;
        }
        if !fenced {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((n + 1, String::new()));
        let trimmed = line.trim();
        if let Some(continued) = trimmed.strip_suffix('\\') {
            joined.push_str(continued);
            joined.push(' ');
            pending = Some((start, joined));
        } else {
            joined.push_str(trimmed);
            commands.push((start, joined));
        }
    }
    commands
}

/// A command's words without a leading `taskset -c CPUS` (which runs vernier pinned).
fn without_taskset(mut words: Vec<String>) -> Vec<String> {
    if words.len() > 3 && words[0] == "taskset" && words[1] == "-c" {
        words.drain(..3);
    }
    words
}

/// Every command line in a fenced block of docs/RESULTS.md that runs `vernier` (after a
/// `taskset -c N`, if any) parses as vernier's command line: the page's commands are ones a
/// reader can paste. A line asking for `--help` or `--version` parses too. Lines of other
/// programs (memcached, redis-server, cargo, ...) are not vernier's to check.
#[test]
fn every_vernier_command_in_the_results_parses() {
    use clap::Parser;
    let text = read("docs/RESULTS.md");
    let mut checked = 0;
    for (line, command) in fenced_commands(&text) {
        let words = without_taskset(words(&command));
        if words.first().map(String::as_str) != Some("vernier") {
            continue;
        }
        match vernier_workbench::Cli::try_parse_from(&words) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                ) => {}
            Err(e) => panic!("docs/RESULTS.md:{line}: `{command}` does not parse: {e}"),
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} vernier commands found");
    eprintln!("docs/RESULTS.md: {checked} vernier commands parse");
}

#[test]
fn the_shell_words_of_a_command_are_split_as_sh_splits_them() {
    assert_eq!(
        words(r#"vernier run x --set 'load=[1, 2]' --message "{\"a\": 1}" # note"#),
        [
            "vernier",
            "run",
            "x",
            "--set",
            "load=[1, 2]",
            "--message",
            r#"{"a": 1}"#
        ]
    );
    assert_eq!(
        without_taskset(words("taskset -c 0-1 vernier demo")),
        ["vernier", "demo"]
    );
    assert_eq!(
        fenced_commands("text\n```\nvernier a \\\n  --b\nother\n```\n"),
        [(3, "vernier a  --b".to_string()), (5, "other".to_string())]
    );
    assert_eq!(
        anchor("Do its CIs cover? (`vernier`, 1,000 req/s)"),
        "do-its-cis-cover-vernier-1000-reqs"
    );
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
