//! Names the commit the `vernier` binary is built from, for `vernier --version`
//! (`vernier 0.1.0 (abc1234)`), or "unknown commit" outside vernier's own git checkout
//! (`cargo install` from a tarball).
//!
//! The script runs again only when HEAD moves: it watches HEAD, the branch HEAD names, and
//! `packed-refs` (where git keeps the branches it has packed), not the sources. Its commit
//! goes to `$OUT_DIR/commit`, rewritten only when it changed, and only the binary's
//! `main.rs` includes it. After a commit cargo still runs rustc again on the package's
//! targets (they all depend on this script's run), but incremental compilation finds the
//! library and the tests unchanged: 10 s for the library, the binary and two test binaries
//! on the 2-core development VM, against minutes for a rebuild.

use std::path::{Path, PathBuf};

#[path = "build/commit.rs"]
mod commit;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/commit.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    // Watched whenever there is a checkout, so that a first commit of this very file is
    // noticed too.
    for path in watched(&manifest) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let text = commit::of(&manifest).unwrap_or_else(|| commit::UNKNOWN.to_owned());
    let path = out.join("commit");
    // Unchanged, untouched: its modification time would relink the binary.
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str())
        && let Err(e) = std::fs::write(&path, &text)
    {
        println!("cargo:warning=cannot write {}: {e}", path.display());
    }
}

/// The files whose change moves HEAD: HEAD itself, the branch it names (if any), and
/// `packed-refs`. Only those that exist: cargo reruns a script on every build for a
/// watched path that is missing.
fn watched(dir: &Path) -> Vec<PathBuf> {
    let git = |args: &[&str]| commit::git(dir, args);
    let mut names = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        names.push(branch);
    }
    names
        .iter()
        // `--git-path` finds each where git keeps it: a worktree's own HEAD, the shared refs.
        .filter_map(|name| git(&["rev-parse", "--git-path", name]))
        .map(|path| dir.join(path))
        .filter(|path| path.exists())
        .collect()
}
