//! Part 2: the same real servers under vernier and under the tool made for each (memcached
//! and memaslap, redis-server and redis-benchmark, nginx and wrk), interleaved. Each tool
//! has its driver (its arguments) and its output parser in a module of its own; running it
//! pinned to the agent's core is shared.

mod memaslap;
mod output;
mod redis_benchmark;
mod wrk;

pub use output::OutputError;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, ExitStatus};

use thiserror::Error as ThisError;
use vernier_fixtures::{ExternalServer, find_binary};

use super::experiments;
use super::render;
use super::report::{ToolFigures, ToolOutcome, ToolRow, ToolRun};
use super::servers::{Server, Tool};
use super::setup::{CONNECTIONS, Depth, TOOL_RATES};
use crate::error::Error;

/// How long a tool runs: seconds for those that run for a time, requests for
/// redis-benchmark, which runs for a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Budget {
    pub seconds: u64,
    pub requests: u64,
}

impl Budget {
    pub(super) fn new(depth: Depth) -> Budget {
        match depth {
            Depth::Quick => Budget {
                seconds: 2,
                requests: 20_000,
            },
            Depth::Full => Budget {
                seconds: 5,
                requests: 200_000,
            },
        }
    }
}

impl Tool {
    /// Its program (Debian installs memaslap as `memcaslap`) and the package that has it.
    fn program(self) -> (&'static str, &'static str) {
        match self {
            Tool::Memaslap => ("memcaslap", "libmemcached-tools"),
            Tool::RedisBenchmark => ("redis-benchmark", "redis-tools"),
            Tool::Wrk => ("wrk", "wrk"),
        }
    }

    /// Its arguments against `addr`.
    fn args(self, addr: SocketAddr, budget: Budget) -> Vec<String> {
        match self {
            Tool::Memaslap => memaslap::args(addr, budget.seconds),
            Tool::RedisBenchmark => redis_benchmark::args(addr, budget.requests),
            Tool::Wrk => wrk::args(addr, budget.seconds),
        }
    }

    /// Its figures from its whole standard output.
    pub fn parse(self, output: &[u8]) -> Result<ToolFigures, OutputError> {
        match self {
            Tool::Memaslap => memaslap::parse(output),
            Tool::RedisBenchmark => redis_benchmark::parse(output),
            Tool::Wrk => wrk::parse(output),
        }
    }

    /// Runs it against `addr` pinned to `cpu` (`taskset -c`), and reads its figures.
    fn run(self, addr: SocketAddr, cpu: usize, budget: Budget) -> Result<ToolFigures, ToolError> {
        self.run_with(self.args(addr, budget), cpu)
    }

    /// Runs it with `args` pinned to `cpu`, and reads its figures.
    fn run_with(self, args: Vec<String>, cpu: usize) -> Result<ToolFigures, ToolError> {
        let (program, package) = self.program();
        let path = find_binary(program).ok_or(ToolError::NotInstalled { program, package })?;
        let out = Command::new("taskset")
            .arg("-c")
            .arg(cpu.to_string())
            .arg(path)
            .args(args)
            .output()
            .map_err(|source| ToolError::Spawn { program, source })?;
        if !out.status.success() {
            return Err(ToolError::Failed {
                program,
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(self.parse(&out.stdout)?)
    }
}

/// The rate memaslap reaches closed-loop against the memcached at `addr` with
/// `connections` connections for `seconds`, pinned to `cpu`: what an open-loop agent's
/// capacity is compared with (`vernier bench-agent --memcached`).
pub(crate) fn memaslap_rate(
    addr: SocketAddr,
    connections: usize,
    seconds: u64,
    cpu: usize,
) -> Result<f64, ToolError> {
    Tool::Memaslap
        .run_with(memaslap::args_with(addr, seconds, connections), cpu)
        .map(|f| f.achieved_rate)
}

/// Why a tool gave no figures.
#[derive(Debug, ThisError)]
pub enum ToolError {
    /// Its program is not on this host.
    #[error("{program} is not installed (apt-get install {package})")]
    NotInstalled {
        /// The program.
        program: &'static str,
        /// The Debian package that has it.
        package: &'static str,
    },
    /// It could not be started.
    #[error("{program}: {source}")]
    Spawn {
        /// The program.
        program: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// It exited with an error.
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        /// The program.
        program: &'static str,
        /// How it exited.
        status: ExitStatus,
        /// What it said.
        stderr: String,
    },
    /// Its output was not what its parser knows.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Part 2: every server under vernier at [`TOOL_RATES`], under its own tool, and under
/// vernier at that tool's highest rate, one after another. A server or tool that cannot
/// run is a row saying why.
pub(super) fn part2(
    runs: &Path,
    [cpu, server_cpu]: [usize; 2],
    depth: Depth,
    say: &dyn Fn(&str),
) -> Result<Vec<ToolRow>, Error> {
    let mut rows = Vec::new();
    for server in Server::ALL {
        let process = match server.start() {
            Ok(p) => p,
            Err(e) => {
                say(&format!("{}: not measured: {e}", server.name()));
                rows.push(ToolRow {
                    target: server,
                    run: ToolRun::NotStarted {
                        error: e.to_string(),
                    },
                });
                continue;
            }
        };
        pin(&process, server, server_cpu, say);
        let addr = process.addr();
        let vernier = |rate: f64| -> Result<ToolRow, Error> {
            let scenario = experiments::against(server, addr, cpu, rate, depth)?;
            let measurement = experiments::measure(&scenario, runs);
            say(&format!(
                "{}, vernier at {rate:.0} req/s: {}",
                server.name(),
                render::summary(&measurement)
            ));
            Ok(ToolRow {
                target: server,
                run: ToolRun::Vernier { rate, measurement },
            })
        };
        rows.push(vernier(TOOL_RATES[0])?);
        let tool = server.tool();
        let outcome = match tool.run(addr, cpu, Budget::new(depth)) {
            Ok(figures) => ToolOutcome::Measured(figures),
            Err(e) => ToolOutcome::Failed {
                error: e.to_string(),
            },
        };
        say(&format!(
            "{}, {tool}: {}",
            server.name(),
            render::tool_summary(&outcome)
        ));
        let highest = match &outcome {
            ToolOutcome::Measured(f) => Some(f.achieved_rate),
            ToolOutcome::Failed { .. } => None,
        };
        rows.push(ToolRow {
            target: server,
            run: ToolRun::Other {
                tool,
                connections: CONNECTIONS,
                outcome,
            },
        });
        rows.push(vernier(TOOL_RATES[1])?);
        if let Some(rate) = highest.filter(|r| *r > TOOL_RATES[1]) {
            rows.push(vernier(rate.round())?);
        }
    }
    Ok(rows)
}

/// Every thread of the server on its own core, away from the load generators.
fn pin(process: &ExternalServer, server: Server, cpu: usize, say: &dyn Fn(&str)) {
    let pinned = Command::new("taskset")
        .args([
            "-a",
            "-p",
            "-c",
            &cpu.to_string(),
            &process.pid().to_string(),
        ])
        .output();
    if !pinned.as_ref().is_ok_and(|o| o.status.success()) {
        say(&format!(
            "{}: could not pin it to core {cpu} (taskset); it runs unpinned",
            server.name()
        ));
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::validate::report::Latency;

    /// Checks that `tool`'s parse of each output fails with its message.
    pub(in crate::validate) fn errors(tool: Tool, cases: &[(&[u8], &str)]) {
        for &(output, message) in cases {
            let error = tool
                .parse(output)
                .map_or_else(|e| e.to_string(), |f| panic!("parsed {f:?}"));
            assert_eq!(error, message, "{}", String::from_utf8_lossy(output));
        }
    }

    /// The figures of a tool that reports p50 and p99 as values, no p99.9.
    pub(in crate::validate) fn values(achieved_rate: f64, p50: f64, p99: f64) -> ToolFigures {
        ToolFigures {
            achieved_rate,
            p50: Latency::Value { us: p50 },
            p99: Latency::Value { us: p99 },
            p999: None,
        }
    }

    #[test]
    fn errors_name_the_tool_the_line_and_what_was_wrong() {
        let e = OutputError::new(Tool::Wrk, Some(7), "`99%` has no duration: `fast`");
        assert_eq!(
            e.to_string(),
            "wrk's output, line 7: `99%` has no duration: `fast`"
        );
        errors(
            Tool::RedisBenchmark,
            &[(
                b"\"GET\",\xff",
                "redis-benchmark's output: not UTF-8 text (byte 6)",
            )],
        );
        let missing = ToolError::NotInstalled {
            program: "memcaslap",
            package: "libmemcached-tools",
        };
        assert_eq!(
            missing.to_string(),
            "memcaslap is not installed (apt-get install libmemcached-tools)"
        );
    }

    #[test]
    fn each_server_has_its_tool() {
        let tools: Vec<&str> = Server::ALL.iter().map(|s| s.tool().name()).collect();
        assert_eq!(tools, ["memaslap", "redis-benchmark", "wrk"]);
    }
}
