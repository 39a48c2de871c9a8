//! The command line: one binary, one subcommand per job.

use clap::{Parser, Subcommand};

use crate::commands::analyze::AnalyzeArgs;

/// vernier: tail latency you can trust, or "N/A" and the reason why.
#[derive(Debug, Parser)]
#[command(name = "vernier", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the statistics on latency samples from a file and print JSON.
    Analyze(AnalyzeArgs),
}
