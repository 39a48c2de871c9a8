//! What `vernier validate` found, typed: rendered as docs/RESULTS.md (`render.rs`) and written
//! as JSON beside it (`results/validate.json`), so that a reader (tests/validate.rs, a script
//! comparing two machines) takes each figure from its field rather than from a markdown cell.
//! A figure that is missing is `None`, and why is in a field of its own.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use vernier_agent::calibrate::Calibration;

use super::servers::{Server, Tool};
use super::setup::Timestamps;
use crate::coordinator::{
    InterarrivalResult, PercentileResult, PointResult, Reason, ReasonKind, Verdict,
};
use crate::record::Machine;

/// The whole report: the machine, the three parts and the plots. The coverage section has
/// its own ([`CoverageReport`](super::CoverageReport)), since `--coverage` reruns it alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// `--quick`: one load, short limits; the figures show that the harness works and are
    /// not evidence.
    pub quick: bool,
    /// How long the experiments took, seconds.
    pub took_s: f64,
    /// Where the runs are recorded (each experiment is a normal vernier run).
    pub runs: PathBuf,
    /// The coordinating host.
    pub machine: Machine,
    /// The core of the agent and of the other tools.
    pub agent_cpu: usize,
    /// The core of the server under test.
    pub server_cpu: usize,
    /// The calibrated loopback floor and the host's jitter, measured in the same run.
    pub floor: Floor,
    /// How long each point of part 1 and of the precision runs may take, seconds.
    pub point_limit_s: u64,
    /// Part 1: vernier against the M/G/1 model.
    pub accuracy: Vec<AccuracyRow>,
    /// Part 1's precision runs: no service time at 1,000 req/s.
    pub precision: Vec<PrecisionRow>,
    /// Part 2: vernier and the other tools against the same servers.
    pub tools: Vec<ToolRow>,
    /// The plots, relative to `results/`.
    pub figures: Vec<String>,
}

/// The floor under every measurement here (`vernier calibrate`, same cores, same run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// The busy-polling loopback ping-pong's round trip, p50, µs.
    pub rtt_p50_us: f64,
    /// Its p99, µs.
    pub rtt_p99_us: f64,
    /// Its p99.9, µs.
    pub rtt_p999_us: f64,
    /// The largest gap between clock reads in a spin, per core.
    pub host_jitter: Vec<CoreJitter>,
}

/// One core's largest gap between clock reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreJitter {
    /// The core.
    pub cpu: usize,
    /// The gap, µs.
    pub max_us: f64,
}

impl Floor {
    /// The figures of a calibration this report shows.
    pub(super) fn of(calibration: &Calibration) -> Floor {
        let rtt = &calibration.loopback_rtt_us;
        Floor {
            rtt_p50_us: rtt.p50,
            rtt_p99_us: rtt.p99,
            rtt_p999_us: rtt.p999,
            host_jitter: calibration
                .host_jitter_us
                .iter()
                .map(|j| CoreJitter {
                    cpu: j.cpu,
                    max_us: j.max,
                })
                .collect(),
        }
    }
}

/// One point of part 1: a service-time distribution at a load, beside the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// The distribution's name (`exponential`).
    pub service: String,
    /// Its spec (`exp:25us`).
    pub spec: String,
    /// The load as a share of the server's nominal capacity.
    pub load: f64,
    /// Where the timestamps came from.
    pub timestamps: Timestamps,
    /// The M/G/1 model's p50 at this load, µs.
    pub model_p50_us: f64,
    /// The model's p99, µs.
    pub model_p99_us: f64,
    /// What vernier measured.
    pub measurement: Measurement,
}

/// One precision run: no service time at 1,000 req/s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionRow {
    /// Where the timestamps came from.
    pub timestamps: Timestamps,
    /// What vernier measured.
    pub measurement: Measurement,
}

/// One vernier run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Its record directory.
    pub record: PathBuf,
    /// What it answered.
    pub outcome: Answered,
}

/// What one vernier run answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Answered {
    /// A verdict with its figures (an N/A one too: it says why in `reasons`).
    Measured(Box<Measured>),
    /// No verdict: the run could not be made or broke off, and why.
    Failed {
        /// The error.
        error: String,
    },
    /// The run ended without a point's verdict.
    NoResult,
}

/// A vernier run's verdict and the figures the report shows of it (the record holds the
/// rest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The verdict.
    pub verdict: Verdict,
    /// Why N/A (empty when converged).
    pub reasons: Vec<Reason>,
    /// Checks that failed but were only reported (`interarrival_check: report`).
    pub waived: Vec<Reason>,
    /// Replies per second.
    pub achieved_rate: f64,
    /// p50 with its CI, µs, if reported.
    pub p50: Option<PercentileResult>,
    /// p99 with its CI, µs, if reported.
    pub p99: Option<PercentileResult>,
    /// p99.9 with its CI, µs, if asked for and reported.
    pub p999: Option<PercentileResult>,
    /// The (first) agent's inter-arrival test.
    pub interarrival: Option<InterarrivalResult>,
    /// The share of requests kept.
    pub sampling_rate: f64,
    /// Samples the percentiles came from.
    pub samples: usize,
    /// The target percentile's CI width reached, µs.
    pub ci_width_us: Option<f64>,
    /// Measurement rounds used.
    pub tries: u32,
    /// Seconds from the point's start to its verdict.
    pub duration_s: f64,
}

impl Measured {
    /// The figures of a point's result.
    pub(super) fn of(result: &PointResult) -> Measured {
        let percentile = |p: f64| result.percentile(p).cloned();
        Measured {
            verdict: result.verdict,
            reasons: result.reasons.clone(),
            waived: result.waived.clone(),
            achieved_rate: result.achieved_rate,
            p50: percentile(50.0),
            p99: percentile(99.0),
            p999: percentile(99.9),
            interarrival: result.agents.first().and_then(|a| a.interarrival.clone()),
            sampling_rate: result.sampling_rate,
            samples: result.samples,
            ci_width_us: result.ci_width_us,
            tries: result.tries,
            duration_s: result.duration_s,
        }
    }

    /// Percentile `p` (50, 99 or 99.9).
    pub fn percentile(&self, p: f64) -> Option<&PercentileResult> {
        [&self.p50, &self.p99, &self.p999]
            .into_iter()
            .flatten()
            .find(|q| (q.p - p).abs() < 1e-9)
    }

    /// The reason for N/A from `check`, if it is one.
    pub fn reason(&self, check: ReasonKind) -> Option<&Reason> {
        self.reasons.iter().find(|r| r.kind() == check)
    }
}

impl Measurement {
    /// The verdict and figures, if the run gave them.
    pub fn measured(&self) -> Option<&Measured> {
        match &self.outcome {
            Answered::Measured(m) => Some(m),
            Answered::Failed { .. } | Answered::NoResult => None,
        }
    }

    /// Percentile `p` with its CI, if the run gave it.
    pub fn percentile(&self, p: f64) -> Option<&PercentileResult> {
        self.measured()?.percentile(p)
    }
}

/// One row of part 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRow {
    /// The server under test.
    pub target: Server,
    /// Who loaded it, and what came of it.
    pub run: ToolRun,
}

/// Who loaded a server of part 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolRun {
    /// vernier, open loop at a rate.
    Vernier {
        /// The rate asked, req/s.
        rate: f64,
        /// What it measured.
        measurement: Measurement,
    },
    /// Another tool, closed loop: it cannot be asked for a rate, so it runs as fast as its
    /// connections go.
    Other {
        /// The tool.
        tool: Tool,
        /// Its connections.
        connections: usize,
        /// What it reported.
        outcome: ToolOutcome,
    },
    /// The server did not start: nothing was measured against it.
    NotStarted {
        /// Why.
        error: String,
    },
}

/// What another tool reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// Its figures.
    Measured(ToolFigures),
    /// It did not run or its output could not be read: why, naming the tool.
    Failed {
        /// The error.
        error: String,
    },
}

/// The rate and latencies another tool reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFigures {
    /// Requests per second.
    pub achieved_rate: f64,
    /// Its p50.
    pub p50: Latency,
    /// Its p99.
    pub p99: Latency,
    /// Its p99.9; `None` when the tool does not report one.
    pub p999: Option<Latency>,
}

/// A latency percentile as a tool reports it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Latency {
    /// A value, µs.
    Value {
        /// µs.
        us: f64,
    },
    /// The power-of-two bucket [low, high) that holds the percentile (memaslap's log2
    /// histogram has no finer figure).
    Log2Bucket {
        /// Its floor, µs.
        low_us: u64,
        /// Its ceiling, µs (excluded).
        high_us: u64,
    },
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A report of every kind of row, for the JSON and rendering tests.
    pub(in crate::validate) fn sample() -> Evidence {
        let p = |p: f64, value: f64, ci: Option<(f64, f64)>| PercentileResult {
            p,
            value,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            dependence: None,
        };
        let measured = Measured {
            verdict: Verdict::Converged,
            reasons: Vec::new(),
            waived: Vec::new(),
            achieved_rate: 20_012.0,
            p50: Some(p(50.0, 48.1, Some((47.3, 48.9)))),
            p99: Some(p(99.0, 313.3, Some((302.8, 340.1)))),
            p999: None,
            interarrival: Some(InterarrivalResult {
                statistic: 3.86,
                pvalue: None,
                pass: false,
            }),
            sampling_rate: 0.25,
            samples: 40_000,
            ci_width_us: Some(37.3),
            tries: 3,
            duration_s: 21.5,
        };
        let measurement = |name: &str, outcome: Answered| Measurement {
            record: PathBuf::from("runs").join(name),
            outcome,
        };
        Evidence {
            quick: true,
            took_s: 95.0,
            runs: "runs".into(),
            machine: Machine {
                hostname: "vm".into(),
                kernel: "6.1".into(),
                cpus: 2,
                vernier: "0.1.0".into(),
                idle: Default::default(),
            },
            agent_cpu: 1,
            server_cpu: 0,
            floor: Floor {
                rtt_p50_us: 5.55,
                rtt_p99_us: 6.16,
                rtt_p999_us: 27.57,
                host_jitter: vec![CoreJitter {
                    cpu: 0,
                    max_us: 1368.0,
                }],
            },
            point_limit_s: 10,
            accuracy: vec![AccuracyRow {
                service: "exponential".into(),
                spec: "exp:25us".into(),
                load: 0.5,
                timestamps: Timestamps::Kernel,
                model_p50_us: 34.6,
                model_p99_us: 230.8,
                measurement: measurement(
                    "exponential-50pct-kernel",
                    Answered::Measured(Box::new(measured.clone())),
                ),
            }],
            precision: vec![PrecisionRow {
                timestamps: Timestamps::User,
                measurement: measurement(
                    "precision-1000rps-user",
                    Answered::Failed {
                        error: "cannot pin".into(),
                    },
                ),
            }],
            tools: vec![
                ToolRow {
                    target: Server::Memcached,
                    run: ToolRun::Vernier {
                        rate: 10_000.0,
                        measurement: measurement(
                            "memcached-10000",
                            Answered::Measured(Box::new(measured)),
                        ),
                    },
                },
                ToolRow {
                    target: Server::Memcached,
                    run: ToolRun::Other {
                        tool: Tool::Memaslap,
                        connections: 16,
                        outcome: ToolOutcome::Measured(ToolFigures {
                            achieved_rate: 212_426.0,
                            p50: Latency::Log2Bucket {
                                low_us: 64,
                                high_us: 128,
                            },
                            p99: Latency::Log2Bucket {
                                low_us: 256,
                                high_us: 512,
                            },
                            p999: Some(Latency::Log2Bucket {
                                low_us: 1024,
                                high_us: 2048,
                            }),
                        }),
                    },
                },
                ToolRow {
                    target: Server::Redis,
                    run: ToolRun::Other {
                        tool: Tool::RedisBenchmark,
                        connections: 16,
                        outcome: ToolOutcome::Failed {
                            error: "redis-benchmark is not installed (apt-get install redis-tools)"
                                .into(),
                        },
                    },
                },
                ToolRow {
                    target: Server::Nginx,
                    run: ToolRun::NotStarted {
                        error: "nginx: not found".into(),
                    },
                },
            ],
            figures: vec!["accuracy-exponential.svg".into()],
        }
    }

    #[test]
    fn the_report_reads_back_from_its_json_with_errors_in_their_own_fields() {
        let report = sample();
        let json = serde_json::to_string_pretty(&report).unwrap_or_else(|e| panic!("{e}"));
        let back: Evidence = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert_eq!(back, report);
        let value: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            value["precision"][0]["measurement"]["outcome"],
            serde_json::json!({"status": "failed", "error": "cannot pin"})
        );
        assert_eq!(value["tools"][1]["run"]["outcome"]["p99"]["high_us"], 512);
        assert_eq!(
            value["accuracy"][0]["measurement"]["outcome"]["p99"]["value"],
            313.3
        );
        assert_eq!(value["tools"][0]["target"], "memcached");
        assert_eq!(value["tools"][2]["run"]["tool"], "redis-benchmark");
    }

    #[test]
    fn a_measurement_finds_its_percentiles() {
        let report = sample();
        let m = &report.accuracy[0].measurement;
        assert_eq!(m.percentile(99.0).map(|q| q.value), Some(313.3));
        assert_eq!(m.percentile(99.9), None);
        assert_eq!(report.precision[0].measurement.percentile(50.0), None);
    }
}
