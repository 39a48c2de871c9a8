//! What the end-to-end tests share: running the `vernier` binary built with them.

use std::process::{Command, Output};

/// Runs `vernier ARGS` to completion and returns what it printed and its exit status.
pub fn vernier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args(args)
        .output()
        .expect("run vernier")
}
