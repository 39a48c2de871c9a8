//! The command line: one binary, one subcommand per job.

use clap::{Parser, Subcommand};

use crate::commands::agent::AgentArgs;
use crate::commands::analyze::AnalyzeArgs;
use crate::commands::bench_agent::BenchAgentArgs;
use crate::commands::calibrate::CalibrateArgs;
use crate::commands::completions::CompletionsArgs;
use crate::commands::demo::DemoArgs;
use crate::commands::deploy::DeployArgs;
use crate::commands::man::ManArgs;
use crate::commands::model::ModelArgs;
use crate::commands::replay::ReplayArgs;
use crate::commands::report::ReportArgs;
use crate::commands::run::RunArgs;
use crate::commands::serve::ServeArgs;
use crate::commands::validate::ValidateArgs;

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
    /// Serve a synthetic target with a chosen service-time distribution.
    Serve(ServeArgs),
    /// Simulate the ideal M/G/K queue and print its latency distribution as JSON.
    Model(ModelArgs),
    /// Play a recorded run in the dashboard (space, ←/→, [/]), or print one frame of it.
    Replay(ReplayArgs),
    /// Tabulate and plot a recorded run: percentiles with CIs, CCDF, latency vs load, checks.
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

/// A positive duration as scenario files write it (`30s`, `500ms`, `1.5s`), for clap.
pub(crate) fn duration_arg(text: &str) -> Result<std::time::Duration, String> {
    vernier_protocols::duration_from_spec(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_as_in_specs() {
        assert_eq!(duration_arg("30s"), Ok(std::time::Duration::from_secs(30)));
        assert_eq!(
            duration_arg("1.5ms"),
            Ok(std::time::Duration::from_micros(1500))
        );
        for bad in ["30", "0s", "-1s", "soon"] {
            let err = duration_arg(bad).unwrap_err();
            assert!(
                err.starts_with(&format!("invalid duration {bad:?}: expected a")),
                "{bad}: {err}"
            );
        }
    }
}
