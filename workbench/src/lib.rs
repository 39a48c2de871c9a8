//! vernier-workbench: the `vernier` command. It coordinates agents through Lancet's
//! self-correcting methodology and shows the experiment in a terminal UI, headless for
//! scripts, or replayed from a record; today it analyses latency samples from any source.
//!
//! ```no_run
//! use clap::Parser;
//! let cli = vernier_workbench::Cli::parse_from(["vernier", "analyze", "latencies.txt"]);
//! let code = vernier_workbench::run(cli).unwrap();
//! ```

#![deny(missing_docs)]

pub mod budget;
mod cli;
mod commands;
pub mod compare;
pub mod coordinator;
pub mod deploy;
mod error;
pub mod hlog;
mod load;
pub mod metrics;
pub mod procfs;
pub mod record;
pub mod report;
mod samples;
pub mod scenario;
pub mod session;
pub mod tui;
pub mod validate;

pub use cli::{Cli, Command, run};

/// The build script's commit lookup, tested here since a build script has no tests.
#[cfg(test)]
#[allow(dead_code)] // Its fallback text is the build script's alone.
#[path = "../build/commit.rs"]
mod build_commit;
pub use error::Error;
pub use samples::{Format, SampleSource, read_samples};
