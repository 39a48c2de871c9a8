//! The command line: one binary, one subcommand per job.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::commands::agent::{self, AgentArgs};
use crate::commands::analyze::{self, AnalyzeArgs};
use crate::commands::bench_agent::{self, BenchAgentArgs};
use crate::commands::calibrate::{self, CalibrateArgs};
use crate::commands::compare::{self, CompareArgs};
use crate::commands::completions::{self, CompletionsArgs};
use crate::commands::demo::{self, DemoArgs};
use crate::commands::deploy::{self, DeployArgs};
use crate::commands::man::{self, ManArgs};
use crate::commands::model::{self, ModelArgs};
use crate::commands::replay::{self, ReplayArgs};
use crate::commands::report::{self, ReportArgs};
use crate::commands::run::{self, RunArgs};
use crate::commands::serve::{self, ServeArgs};
use crate::commands::validate::{self, ValidateArgs};
use crate::error::Error;

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
    /// Run a scenario through the self-correcting methodology: a tail percentile with its
    /// CI, or N/A and why (exit 0 converged, 3 N/A, 2 bad input, 1 error).
    Run(Box<RunArgs>),
    /// The embedded demo: a synthetic server and a local agent in this process, a sweep.
    Demo(DemoArgs),
    /// Check that agents can be deployed over SSH: copy vernier, start an agent, reach it
    /// through a port forward, stop it (scenarios deploy with `agents: [{ssh: HOST}]`).
    Deploy(DeployArgs),
    /// Run a load-generating, latency-measuring agent, controlled over gRPC.
    Agent(AgentArgs),
    /// Measure one agent worker's capacity and precision against the synthetic server.
    BenchAgent(BenchAgentArgs),
    /// Run the statistics on latency samples from a file and print JSON.
    Analyze(AnalyzeArgs),
    /// Measure this host's floor: clock cost, loopback RTT, timestamp sources, jitter.
    Calibrate(CalibrateArgs),
    /// Is B faster than A? Two servers measured in interleaved pairs of blocks at one load:
    /// the difference and ratio of a percentile with their CI, or N/A and why.
    Compare(Box<CompareArgs>),
    /// Serve a synthetic target with a chosen service-time distribution.
    Serve(ServeArgs),
    /// Simulate the ideal M/G/K queue and print its latency distribution as JSON.
    Model(ModelArgs),
    /// Play a recorded run in the dashboard (space, ←/→, [/]), or print one frame of it.
    Replay(ReplayArgs),
    /// Tabulate and plot a recorded run (percentiles with CIs, CCDF, latency vs load, checks)
    /// or a recorded comparison (both CCDFs, the blocks over time, B − A look by look).
    Report(ReportArgs),
    /// Measure how close vernier comes to the truth here (the ideal model, the loopback
    /// floor, other tools) and write docs/RESULTS.md with its plots.
    Validate(ValidateArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell
    /// (e.g. `vernier completions bash > /etc/bash_completion.d/vernier`).
    Completions(CompletionsArgs),
    /// Print the man page (roff) of vernier, or of one subcommand
    /// (e.g. `vernier man | man -l -`, `vernier man run`).
    Man(ManArgs),
}

/// Runs one invocation of `vernier`.
pub fn run(cli: Cli) -> Result<ExitCode, Error> {
    match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Demo(args) => demo::run(args),
        Command::Deploy(args) => deploy::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Analyze(args) => analyze::run(args),
        Command::BenchAgent(args) => bench_agent::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Compare(args) => compare::run(*args),
        Command::Serve(args) => serve::run(args),
        Command::Model(args) => model::run(args),
        Command::Report(args) => report::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Completions(args) => completions::run(&args, Cli::command()),
        Command::Man(args) => man::run(&args, Cli::command()),
    }
}

#[cfg(test)]
mod tests;
