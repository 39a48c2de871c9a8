//! `vernier run SCENARIO`: the methodology against real agents. `--headless`: progress
//! lines on stderr, the result on stdout (JSON or a table), exit code = verdict (0
//! converged or accepted, 3 N/A, 2 bad input, 1 error).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;
use tokio::sync::mpsc;

use super::print_json;
use crate::coordinator::{Event, EventKind, Phase, PointResult, Verdict, probe_name};
use crate::error::Error;
use crate::scenario::{LoadPlan, Override, Scenario};
use crate::session::{self, Outcome, SessionOptions, Update};
use crate::tui;

/// The exit code of an N/A verdict.
pub const EXIT_NA: u8 = 3;

/// Options of `vernier run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario (YAML).
    pub scenario: PathBuf,
    /// No terminal UI: progress on stderr, the result on stdout. Also what happens when
    /// stdin or stdout is not a terminal.
    #[arg(long)]
    pub headless: bool,
    /// How the result is printed.
    #[arg(long, value_enum, default_value_t = Output::Json)]
    pub output: Output,
    /// The run directory (default: runs/DATE-NAME).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Overrides the scenario's load (req/s).
    #[arg(long)]
    pub load: Option<String>,
    /// Overrides any scenario field: `--set ci.width=5us` (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// Pretty-prints the JSON.
    #[arg(long)]
    pub pretty: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Reach remote agents over TLS, trusting certificates signed by this CA (PEM), unless
    /// the scenario gives an agent its own `tls_ca`.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,
    /// Serve the run's live figures (rates, latency histograms, phase and verdict per
    /// point and agent) at http://ADDR/metrics in the OpenMetrics text format, for
    /// Prometheus and dashboards (port 0 picks one; the address is said on stderr).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
}

/// How the result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// One JSON object.
    Json,
    /// A table for people.
    Table,
}

/// Parses `--load` and `--set` into overrides.
pub(crate) fn overrides(load: Option<&str>, set: &[String]) -> Result<Vec<Override>, Error> {
    let mut all = Vec::new();
    if let Some(load) = load {
        all.push(Override {
            path: "load".into(),
            value: load.to_string(),
        });
    }
    for s in set {
        all.push(s.parse::<Override>()?);
    }
    Ok(all)
}

/// Runs `vernier run`.
pub fn run(args: RunArgs) -> Result<ExitCode, Error> {
    let overrides = overrides(args.load.as_deref(), &args.set)?;
    let scenario = Scenario::load(&args.scenario, &overrides)?;
    if let Some(note) = scenario.default_workload_note() {
        eprintln!("vernier: workload: {note}");
    }
    let options = SessionOptions {
        record: args.record.clone(),
        tls_ca: args.tls_ca.clone(),
        metrics: args.metrics,
    };
    let outcome = run_session(&scenario, &options, args.headless, args.quiet)?;
    print_outcome(&scenario, &outcome, args.output, args.pretty)?;
    exit_code(&outcome)
}

/// Runs a scenario in the dashboard, or headless when asked or when there is no terminal.
/// The result is printed after either, so it stays in the terminal's scroll-back.
pub(crate) fn run_session(
    scenario: &Scenario,
    options: &SessionOptions,
    headless: bool,
    quiet: bool,
) -> Result<Outcome, Error> {
    if headless {
        return run_headless(scenario, options, quiet);
    }
    if !tui::available() {
        if !quiet {
            eprintln!("vernier: not a terminal: running headless (--headless says so)");
        }
        return run_headless(scenario, options, quiet);
    }
    tui::run_live(scenario, options)
}

/// Runs a scenario without a UI, progress lines on stderr unless `quiet`.
pub(crate) fn run_headless(
    scenario: &Scenario,
    options: &SessionOptions,
    quiet: bool,
) -> Result<Outcome, Error> {
    let runtime = session::runtime("vernier-session")?;
    // Headless runs take no commands but Ctrl-C; the sender lives as long as the run.
    let (_commands, rx) = mpsc::unbounded_channel();
    let mut printer = Progress::new(quiet, matches!(scenario.load, LoadPlan::Fixed(_)));
    runtime.block_on(session::run(scenario, options, rx, |u| printer.update(&u)))
}

/// The exit code of an outcome; a record that could not be written is an error (1) after
/// the result was printed.
pub(crate) fn exit_code(outcome: &Outcome) -> Result<ExitCode, Error> {
    if let Some(e) = &outcome.record_error {
        return Err(Error::Failed(format!(
            "the result above stands, but the record is incomplete: {e}"
        )));
    }
    Ok(match outcome.verdict {
        Verdict::Converged | Verdict::Accepted => ExitCode::SUCCESS,
        Verdict::NotAvailable => ExitCode::from(EXIT_NA),
    })
}

#[derive(Serialize)]
struct Many<'a> {
    verdict: Verdict,
    points: &'a [PointResult],
    slo_rate: Option<f64>,
    timestamps: &'a str,
    record: String,
}

/// Prints the result: a point's object for a fixed load, `{"points": [...], "slo_rate"}`
/// otherwise.
pub(crate) fn print_outcome(
    scenario: &Scenario,
    outcome: &Outcome,
    output: Output,
    pretty: bool,
) -> Result<(), Error> {
    match output {
        Output::Json => match (&scenario.load, outcome.points.as_slice()) {
            (LoadPlan::Fixed(_), [one]) => print_json(one, pretty),
            _ => print_json(
                &Many {
                    verdict: outcome.verdict,
                    points: &outcome.points,
                    slo_rate: outcome.slo_rate,
                    timestamps: &outcome.timestamps,
                    record: outcome.record.display().to_string(),
                },
                pretty,
            ),
        },
        Output::Table => {
            let text = table(outcome);
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
                    path: "<stdout>".into(),
                    source: e,
                }),
                _ => Ok(()),
            }
        }
    }
}

/// The result as a table for people: a row per point, under it the same percentiles timed
/// from the scheduled departures (beside the actual ones), then any reasons.
pub(crate) fn table(outcome: &Outcome) -> String {
    let mut s = String::new();
    let ps: Vec<f64> = outcome
        .points
        .first()
        .map(|p| p.percentiles.iter().map(|q| q.p).collect())
        .unwrap_or_default();
    s.push_str(&format!(
        "{:>10} {:>10} {:>10} {:>9}",
        "load/s", "achieved/s", "verdict", "samples"
    ));
    for p in &ps {
        s.push_str(&format!(" {:>26}", format!("p{p} µs [CI]")));
    }
    s.push('\n');
    for point in &outcome.points {
        s.push_str(&format!(
            "{:>10.0} {:>10.0} {:>10} {:>9}",
            point.target_rate,
            point.achieved_rate,
            point.verdict.name(),
            point.samples
        ));
        for p in &ps {
            s.push_str(&format!(" {:>26}", point.percentile_text(*p)));
        }
        s.push('\n');
        if !point.from_schedule.is_empty() {
            // Under the four leading columns (42 characters wide).
            s.push_str(&format!("{:>42}", "from schedule"));
            for p in &ps {
                let cell = point.from_schedule(*p).map_or("-".to_string(), |q| {
                    format!("{:.1} ({:.1} actual)", q.value, q.actual)
                });
                s.push_str(&format!(" {cell:>26}"));
            }
            s.push('\n');
        }
        for r in &point.reasons {
            s.push_str(&format!("    {}: {}\n", r.check, r.detail));
        }
        for r in &point.waived {
            s.push_str(&format!("    not enforced, {}: {}\n", r.check, r.detail));
        }
        if let Some(b) = &point.budget {
            s.push_str(&format!("    budget: {}\n", b.line()));
        }
    }
    if let Some(rate) = outcome.slo_rate {
        s.push_str(&format!("highest load meeting the SLO: {rate:.0} req/s\n"));
    }
    s.push_str(&format!(
        "verdict: {} (timestamps: {}); record: {}\n",
        outcome.verdict.name(),
        outcome.timestamps,
        outcome.record.display()
    ));
    s
}

/// Progress lines on stderr: phases, tests with their figures, measurement progress with
/// its ETA, and one line per load point.
struct Progress {
    quiet: bool,
    single: bool,
    last_progress: f64,
}

impl Progress {
    fn new(quiet: bool, single: bool) -> Progress {
        Progress {
            quiet,
            single,
            last_progress: f64::NEG_INFINITY,
        }
    }

    fn update(&mut self, update: &Update) {
        let line = match update {
            Update::Started {
                record,
                timestamps,
                confined,
                metrics,
            } => {
                // Asked for: said even when quiet.
                if let Some(addr) = metrics {
                    eprintln!("vernier: live figures at http://{addr}/metrics");
                }
                Some(format!(
                "agents ready ({timestamps} timestamps); recording to {}{}",
                record.display(),
                if confined.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; vernier's own threads kept on core{} {} with the workers, off the others",
                        if confined.len() == 1 { "" } else { "s" },
                        confined
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                }
            ))
            .filter(|_| !self.quiet)
            }
            Update::Event(e) => self.line(e),
        };
        if let Some(line) = line {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
        }
    }

    fn line(&mut self, e: &Event) -> Option<String> {
        let head = format!("[{:7.2}s] {:>8.0}/s", e.at, e.rate);
        match &e.kind {
            // A sweep's per-load line is printed even when quiet.
            EventKind::Verdict(r) => {
                Some(format!("{head}  {}", verdict_line(r))).filter(|_| !self.quiet || !self.single)
            }
            _ if self.quiet => None,
            EventKind::Run(r) => Some(format!(
                "{head}  run {} {}",
                r.run.unwrap_or(0),
                verdict_line(r)
            )),
            EventKind::Phase { phase, detail } if *phase != Phase::Done => {
                Some(format!("{head}  {}: {detail}", phase.name()))
            }
            EventKind::Check(c) => {
                let who = c.agent.map_or(String::new(), |a| format!(" agent {a}"));
                let name = c.check.label();
                Some(format!(
                    "{head}  {name}{who}: {} — {}; {}",
                    if c.pass { "pass" } else { "FAIL" },
                    c.detail,
                    c.decision
                ))
            }
            EventKind::Progress(p)
                if p.phase == Phase::Measure && e.at - self.last_progress >= 2.0 =>
            {
                self.last_progress = e.at;
                let rate: f64 = p.agents.iter().map(|a| a.achieved_rate).sum();
                Some(format!(
                    "{head}  measuring: {:.0} req/s, {} samples of {} per agent at {:.2}%, CI width {} (target {}), ETA {}",
                    rate,
                    p.samples,
                    p.samples_wanted,
                    p.sampling_rate * 100.0,
                    p.ci_width_us.map_or("-".into(), |w| format!("{w:.1} µs")),
                    p.ci_target_us.map_or("-".into(), |t| format!("{t:.1} µs")),
                    p.eta_s
                        .map_or("-".into(), |s| format!("{:.1}s", s.max(0.0)))
                ))
            }
            EventKind::Command { command } => Some(format!("{head}  command: {command}")),
            _ => None,
        }
    }
}

fn verdict_line(r: &PointResult) -> String {
    let target = r
        .target()
        .map_or("no samples".to_string(), |t| match (t.ci_low, t.ci_high) {
            (Some(lo), Some(hi)) => format!("p{} = {:.1} µs [{:.1}, {:.1}]", t.p, t.value, lo, hi),
            _ => format!("p{} = {:.1} µs (no CI)", t.p, t.value),
        });
    let scheduled = r
        .from_schedule(r.target_percentile.percent())
        .map_or(String::new(), |q| {
            format!(", {:.1} µs from schedule", q.value)
        });
    let mut line = format!(
        "{}: {target}{scheduled}; achieved {:.0} req/s, {} samples, {:.1}s",
        r.verdict.name(),
        r.achieved_rate,
        r.samples,
        r.duration_s
    );
    if let Some(rep) = &r.replication {
        let p = r.target_percentile;
        line.push_str(&format!(
            "\n             across {} runs ({}; {:.1} µs wide asked): {p} per run {}",
            rep.runs.len(),
            rep.method,
            rep.width_target_us,
            rep.runs
                .iter()
                .map(|run| run.percentile_text(p.percent()))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        if let Some(h) = rep.disagreement() {
            line.push_str(&format!(
                "\n             hysteresis: the runs disagree beyond their own CIs ({})",
                h.summary()
            ));
        }
    }
    for reason in &r.reasons {
        line.push_str(&format!(
            "\n             {}: {}",
            reason.check, reason.detail
        ));
    }
    for reason in &r.waived {
        line.push_str(&format!(
            "\n             not enforced, {}: {}",
            reason.check, reason.detail
        ));
    }
    for host in &r.host {
        line.push_str(&format!(
            "\n             host ({}): {host}",
            probe_name(host)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::{PercentileResult, SchedulePercentile};

    fn point(rate: f64, from_schedule: Vec<SchedulePercentile>) -> PointResult {
        let percentiles = [(50.0, 12.3), (99.0, 45.1)]
            .into_iter()
            .map(|(p, v)| PercentileResult::example(p, v, Some((v - 1.0, v + 1.0))))
            .collect();
        PointResult {
            sampling_rate: 0.2,
            duration_s: 8.0,
            from_schedule,
            ..PointResult::example(rate, Verdict::Converged, percentiles)
        }
    }

    #[test]
    fn the_table_shows_the_percentiles_from_the_schedule_under_each_point() {
        let scheduled = vec![
            SchedulePercentile {
                p: 50.0,
                value: 12.6,
                actual: 12.4,
            },
            SchedulePercentile {
                p: 99.0,
                value: 1234.5,
                actual: 45.3,
            },
        ];
        let outcome = Outcome {
            // The second point is from a record that predates the figures.
            points: vec![point(1000.0, scheduled), point(2000.0, Vec::new())],
            slo_rate: None,
            verdict: Verdict::Converged,
            record: PathBuf::from("runs/x"),
            timestamps: "user".into(),
            record_error: None,
        };
        let text = table(&outcome);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains("45.1 [44.1, 46.1]"), "{text}");
        assert_eq!(
            lines[2],
            format!(
                "{:>42} {:>26} {:>26}",
                "from schedule", "12.6 (12.4 actual)", "1234.5 (45.3 actual)"
            ),
            "{text}"
        );
        assert!(lines[3].trim_start().starts_with("2000"), "{text}");
        assert!(lines[4].starts_with("verdict: converged"), "{text}");
        assert_eq!(text.matches("from schedule").count(), 1, "{text}");

        let line = verdict_line(&outcome.points[0]);
        assert!(
            line.starts_with("converged: p99 = 45.1 µs [44.1, 46.1], 1234.5 µs from schedule;"),
            "{line}"
        );
    }

    #[test]
    fn the_verdict_line_has_a_line_per_host_probe() {
        let mut r = point(1000.0, Vec::new());
        assert!(!verdict_line(&r).contains("host"));
        for cpu in [Some(1), None] {
            let mut probe = vernier_agent::StallReport::default();
            probe.cpu = cpu;
            probe.realtime = cpu.is_some();
            probe.period_us = 1000.0;
            probe.seconds = 10.0;
            probe.wakeups = 9_990;
            probe.late_p50_us = 55.0;
            probe.late_p99_us = 1_200.0;
            probe.late_max_us = 3_400.0;
            probe.stalls_over_1ms = 7;
            probe.stalled_share = 0.013;
            r.host.push(probe);
        }
        let line = verdict_line(&r);
        let lines: Vec<&str> = line.lines().collect();
        assert_eq!(lines.len(), 3, "{line}");
        assert_eq!(
            lines[1],
            "             host (cpu 1): wake-ups 1 ms apart came p50 55 µs, p99 1.2 ms, max 3.4 ms late; 7 stalls > 1 ms in 10.0 s (1.3% of the time)"
        );
        assert!(lines[2].starts_with("             host (coordinator): wake-ups"));
        assert!(
            lines[2]
                .ends_with("(an ordinary-priority probe: other threads on its core delay it too)"),
            "{line}"
        );
    }
}
