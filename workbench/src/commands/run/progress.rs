//! `vernier run --headless`'s progress lines on stderr, one per phase, test, measurement
//! step and load point.

use std::io::Write;

use crate::coordinator::{Event, EventKind, Phase, PointResult, text};
use crate::procfs::Usage;
use crate::scenario::LoadPlan;
use crate::session::{Keep, Update};

/// What a headless run says on stderr besides its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chatter {
    /// A line per phase, test, measurement step and load point.
    Progress,
    /// Only what is said regardless (`--quiet`): where the live figures are served, and a
    /// sweep's line per load.
    Quiet,
}

/// Progress lines on stderr: phases, tests with their figures, measurement progress with
/// its ETA, and one line per load point.
pub(super) struct Progress {
    quiet: bool,
    single: bool,
    last_progress: f64,
}

impl Progress {
    /// A printer saying what `chatter` asks of a run of `load` (a fixed load has no line
    /// of its own when quiet: its result follows).
    pub(super) fn new(chatter: Chatter, load: &LoadPlan) -> Progress {
        Progress {
            quiet: chatter == Chatter::Quiet,
            single: matches!(load, LoadPlan::Fixed(_)),
            last_progress: f64::NEG_INFINITY,
        }
    }

    /// Prints what `update` says, if anything.
    pub(super) fn update(&mut self, update: &Update) {
        let line = match update {
            Update::Started {
                record,
                timestamps,
                confined,
                keep,
                metrics,
            } => {
                // Asked for: said even when quiet.
                if let Some(addr) = metrics {
                    eprintln!("vernier: live figures at http://{addr}/metrics");
                }
                let timestamps = timestamps
                    .as_ref()
                    .map_or_else(|| "?".to_string(), ToString::to_string);
                Some(format!(
                    "agents ready ({timestamps} timestamps); recording to {}{}",
                    record.display(),
                    if confined.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; vernier's own threads kept on core{} {} {}",
                            if confined.len() == 1 { "" } else { "s" },
                            confined
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(","),
                            match keep {
                                Keep::WithWorkers => "with the workers, off the others",
                                Keep::OffWorkers => "off the spinning workers' cores",
                                Keep::Spare => "on cores neither the workers nor the target hold",
                            }
                        )
                    }
                ))
                .filter(|_| !self.quiet)
            }
            Update::Preparing(line) => Some(line.clone()).filter(|_| !self.quiet),
            Update::Event(e) => self.line(e),
        };
        if let Some(line) = line {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
        }
    }

    /// At the run's end, where vernier's threads ran and what they cost (unless quiet).
    pub(super) fn threads(&self, usage: Option<&Usage>) {
        if let Some(line) = usage.and_then(threads_line).filter(|_| !self.quiet) {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }

    /// The line of one event, if it has one at this verbosity.
    pub(super) fn line(&mut self, e: &Event) -> Option<String> {
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
                let name = c.check.name();
                Some(format!(
                    "{head}  {name}{who}: {} — {}; {}",
                    text::check_outcome(c.outcome()),
                    c.detail(),
                    c.decision()
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

/// A point's (or a run's) verdict in one line, then its replication, reasons and host
/// probes on lines of their own.
pub(super) fn verdict_line(r: &PointResult) -> String {
    let shown = |t: Option<&crate::coordinator::PercentileResult>| {
        t.map_or("no samples".to_string(), |t| match (t.ci_low, t.ci_high) {
            (Some(lo), Some(hi)) => format!("p{} = {:.1} µs [{:.1}, {:.1}]", t.p, t.value, lo, hi),
            _ => format!("p{} = {:.1} µs (no CI)", t.p, t.value),
        })
    };
    // The answer first: the tail asked, and every request's beside it when that is
    // another tail.
    let target = if r.answers_without_stalls() {
        format!(
            "{} without stalls (every request: {}, {})",
            shown(r.asked_target()),
            r.verdict.name(),
            shown(r.target())
        )
    } else {
        shown(r.target())
    };
    let scheduled = r
        .from_schedule(r.target_percentile.percent())
        .map_or(String::new(), |q| {
            format!(", {:.1} µs from schedule", q.value)
        });
    let mut line = format!(
        "{}: {target}{scheduled}; achieved {:.0} req/s, {} samples, {:.1}s",
        r.answer().name(),
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
    if let Some(drift) = r.drift.as_ref().filter(|d| d.drifting)
        && let Some(words) = crate::coordinator::text::drift(drift)
    {
        line.push_str(&format!("\n             {words}"));
    }
    if let Some(earlier) = &r.earned {
        let words = crate::coordinator::text::earned(earlier);
        line.push_str(&format!("\n             {words}"));
    }
    for reason in &r.reasons {
        line.push_str(&format!(
            "\n             {}: {}",
            reason.kind(),
            reason.detail()
        ));
    }
    for reason in &r.waived {
        line.push_str(&format!(
            "\n             not enforced, {}: {}",
            reason.kind(),
            reason.detail()
        ));
    }
    for host in &r.host {
        line.push_str(&format!("\n             host ({}): {host}", host.name()));
    }
    if let Some(words) = (r.without_stalls.as_ref())
        .and_then(|w| crate::coordinator::text::host_fit(w.touched_share))
    {
        line.push_str(&format!("\n             {words}"));
    }
    line
}

/// A thread using less than this, ms of CPU a second, is left out of the threads' line.
const THREAD_SHOWN_MS_PER_S: f64 = 0.5;

/// `vernier's threads, per second of the run: vernier-worker- on CPU 1, 230 ms of CPU and
/// 6,558 wake-ups; ...`, the busiest first; `None` when none did anything.
pub(super) fn threads_line(usage: &Usage) -> Option<String> {
    let shown: Vec<String> = usage
        .threads
        .iter()
        .filter(|t| t.cpu_ms_per_s >= THREAD_SHOWN_MS_PER_S)
        .map(|t| {
            let cpus: Vec<String> = t.cpus.iter().map(ToString::to_string).collect();
            format!(
                "{}{} on CPU {}, {:.1} ms of CPU and {:.0} wake-ups",
                t.name,
                if t.threads > 1 {
                    format!(" (×{})", t.threads)
                } else {
                    String::new()
                },
                cpus.join(","),
                t.cpu_ms_per_s,
                t.voluntary_per_s
            )
        })
        .collect();
    (!shown.is_empty()).then(|| {
        format!(
            "vernier's threads, per second of the run ({:.1} s): {}",
            usage.window_s,
            shown.join("; ")
        )
    })
}
