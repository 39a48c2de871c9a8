//! The commit a build is made from, shared by the build script and the library's tests
//! (which check it against git and outside a checkout).

use std::path::Path;
use std::process::Command;

/// What `--version` says when the commit is not known.
pub const UNKNOWN: &str = "unknown commit";

/// HEAD's short hash, if `package` (a package's directory, holding its `build.rs`) is in a
/// git checkout that tracks it: a tarball unpacked inside some other repository (a home
/// directory kept in git) is not that repository's commit.
pub fn of(package: &Path) -> Option<String> {
    git(package, &["ls-files", "--error-unmatch", "build.rs"])?;
    let hash = git(package, &["rev-parse", "--short", "HEAD"])?;
    hash.bytes().all(|b| b.is_ascii_hexdigit()).then_some(hash)
}

/// What `git -C dir ARGS` prints, trimmed, if it runs, succeeds and prints something.
pub fn git(dir: &Path, args: &[&str]) -> Option<String> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    #[test]
    fn the_commit_is_heads_where_the_package_is_tracked_and_none_elsewhere() {
        if Command::new("git").arg("--version").output().is_err() {
            eprintln!("git is not installed: the commit lookup was not checked");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("workbench");
        std::fs::create_dir(&package).unwrap();
        // Not a checkout: a tarball unpacked.
        assert_eq!(of(&package), None);
        git(dir.path(), &["init", "-q"]);
        std::fs::write(package.join("build.rs"), "fn main() {}\n").unwrap();
        // A checkout that does not track the package: someone else's repository.
        assert_eq!(of(&package), None);
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "first"]);
        let head = git(dir.path(), &["rev-parse", "--short", "HEAD"]);
        assert_eq!(of(&package), Some(head.clone()));
        git(
            dir.path(),
            &["commit", "-q", "--allow-empty", "-m", "second"],
        );
        let second = of(&package).unwrap();
        assert_ne!(second, head);
        assert_eq!(second, git(dir.path(), &["rev-parse", "--short", "HEAD"]));
    }
}
