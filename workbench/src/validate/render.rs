//! The [`Evidence`] as docs/RESULTS.md: the machine, the headline, the three parts and where
//! vernier is off. Everything shown comes from the report; nothing is measured here.

use std::fmt::Write as _;

use super::report::{
    Answered, Evidence, Latency, Measured, Measurement, ToolFigures, ToolOutcome, ToolRun,
};
use super::servers::Server;
use super::setup::{MEAN_US, TOOL_RATES, Timestamps};
use crate::coordinator::reason::Independence;
use crate::coordinator::{PercentileResult, ReasonKind, Verdict, Why};

/// A run in a few words: the verdict, p50 and p99, or why there is none.
pub(super) fn summary(m: &Measurement) -> String {
    match &m.outcome {
        Answered::Measured(r) => format!(
            "{} at {:.0} req/s, p50 {}, p99 {}",
            verdict_text(r),
            r.achieved_rate,
            percentile_cell(r.p50.as_ref()),
            percentile_cell(r.p99.as_ref())
        ),
        Answered::Failed { error } => format!("failed: {error}"),
        Answered::NoResult => "no result".into(),
    }
}

/// Another tool's figures in a few words, or why there are none.
pub(super) fn tool_summary(outcome: &ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Measured(f) => format!(
            "{:.0} req/s, p50 {}, p99 {}",
            f.achieved_rate,
            latency_cell(&f.p50),
            latency_cell(&f.p99)
        ),
        ToolOutcome::Failed { error } => error.clone(),
    }
}

/// The verdict, with the checks only reported (`, interarrival not enforced`).
fn verdict_text(r: &Measured) -> String {
    let base = match r.verdict {
        Verdict::NotAvailable => format!(
            "N/A ({})",
            r.reasons
                .iter()
                .map(|x| x.kind().name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        v => v.name().to_string(),
    };
    let waived: Vec<&str> = r.waived.iter().map(|w| w.kind().name()).collect();
    if waived.is_empty() {
        base
    } else {
        format!("{base}, {} not enforced", waived.join(", "))
    }
}

/// The verdict of a run, or the summary saying why it has none.
fn verdict_cell(m: &Measurement) -> String {
    m.measured().map_or_else(|| summary(m), verdict_text)
}

/// `value [low, high]`, or the difference from `reference` in the same form.
fn diff_text(q: Option<&PercentileResult>, reference: f64) -> String {
    match q {
        None => "-".into(),
        Some(q) => match (q.ci_low, q.ci_high) {
            (Some(lo), Some(hi)) => format!(
                "{:+.1} [{:+.1}, {:+.1}]",
                q.value - reference,
                lo - reference,
                hi - reference
            ),
            _ => format!("{:+.1} (no CI)", q.value - reference),
        },
    }
}

fn percentile_cell(q: Option<&PercentileResult>) -> String {
    q.map_or("-".into(), |q| q.to_string())
}

fn latency_cell(l: &Latency) -> String {
    match *l {
        Latency::Value { us } => format!("{us:.0}"),
        Latency::Log2Bucket { low_us, high_us } => format!("[{low_us}, {high_us}) (log2 bucket)"),
    }
}

/// The headline: vernier's p99 minus the model's at 50% per distribution, and p50 at
/// 1,000 req/s minus the floor. Printed on stdout as well.
pub fn headline(report: &Evidence) -> String {
    let mut out = String::from(
        "| service | verdict | vernier p99 − model p99 at 50% load, µs [95% CI] | model p99 µs |\n|---|---|---|---|\n",
    );
    for r in report
        .accuracy
        .iter()
        .filter(|r| r.load == 0.5 && r.timestamps == Timestamps::Kernel)
    {
        let _ = writeln!(
            out,
            "| {} (`{}`) | {} | {} | {:.1} |",
            r.service,
            r.spec,
            verdict_cell(&r.measurement),
            diff_text(r.measurement.percentile(99.0), r.model_p99_us),
            r.model_p99_us
        );
    }
    out.push('\n');
    let floor = report.floor.rtt_p50_us;
    for p in &report.precision {
        let _ = writeln!(
            out,
            "- p50 at 1,000 req/s with {} timestamps minus the calibrated loopback floor (p50 {floor:.2} µs): {} µs ({})",
            p.timestamps.name(),
            diff_text(p.measurement.percentile(50.0), floor),
            verdict_cell(&p.measurement)
        );
    }
    out
}

/// docs/RESULTS.md without its coverage section (which `coverage.rs` splices in).
pub fn markdown(r: &Evidence) -> String {
    let mut out = String::new();
    let w = &mut out;
    let quick = if r.quick { " --quick" } else { "" };
    let _ = writeln!(w, "# vernier's results on this machine\n");
    let _ = writeln!(
        w,
        "Written by `vernier validate{quick}` in {:.0} s; every figure below comes from the runs recorded under `{}` (open any with `vernier report` or `vernier replay`). Regenerate with:\n\n```\ncargo build --release -j2 && target/release/vernier validate{quick}\n```\n",
        r.took_s,
        r.runs.display(),
    );
    if r.quick {
        let _ = writeln!(
            w,
            "**This is a `--quick` run: one load, short limits. It shows that the harness works; its figures are not evidence.**\n"
        );
    }
    let m = &r.machine;
    let _ = writeln!(
        w,
        "## On what machine?\n\n- host {}, kernel {}, {} CPUs online, vernier {}\n- agent (and the other tools) pinned to core {}, the server to core {}; vernier's other threads (coordinator, recorder) are kept on the agent's core during each run, off the server's\n- loopback floor (`vernier calibrate`, same cores, same run): busy-polling ping-pong RTT p50 {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs\n- host jitter (largest gap between clock reads in a spin): {}\n",
        m.hostname,
        m.kernel,
        m.cpus,
        m.vernier,
        r.agent_cpu,
        r.server_cpu,
        r.floor.rtt_p50_us,
        r.floor.rtt_p99_us,
        r.floor.rtt_p999_us,
        r.floor
            .host_jitter
            .iter()
            .map(|j| format!("core {} {:.0} µs", j.cpu, j.max_us))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        w,
        "## How far is vernier from the ideal model, in brief?\n\n{}",
        headline(r)
    );
    accuracy(w, r);
    tools(w, r);
    dynamics(w, r);
    discussion(w, r);
    out
}

/// Part 1 and its precision runs.
fn accuracy(w: &mut String, r: &Evidence) {
    let _ = writeln!(
        w,
        "## How close is vernier to the ideal model?\n\nThe synthetic server (`vernier serve`'s engine, in process) with one busy-polling worker pinned to its core; each request carries its own service time, drawn by the agent. The model is the M/G/1 FCFS queue (`vernier model`, 2,000,000 requests) at the same load. vernier's CI target is 20% of the measured p99 (`ci.width: 20%`), within {} s per point, by `method: vernier`: Anderson-Darling on the departures is reported (the A² column; 1.32 is its 5% critical value) and the departures are judged by their effect on the p99; the CI allows for the samples' autocorrelation. N/A means vernier found no honest number within that limit, and says why (`host_stalls` and `departures` cite the host probe and the send lag).\n",
        r.point_limit_s
    );
    let _ = writeln!(
        w,
        "| service | load | timestamps | verdict | inter-arrival A² | achieved req/s | vernier p50 µs | model p50 | vernier p99 µs | model p99 | p99 − model [CI] | p99 − model − floor p50 |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for a in &r.accuracy {
        let res = a.measurement.measured();
        let p99 = a.measurement.percentile(99.0);
        let _ = writeln!(
            w,
            "| {} | {:.0}% | {} | {} | {} | {} | {} | {:.1} | {} | {:.1} | {} | {} |",
            a.service,
            a.load * 100.0,
            a.timestamps.name(),
            verdict_cell(&a.measurement),
            res.and_then(|x| x.interarrival.as_ref())
                .map_or("-".into(), |ia| format!(
                    "{:.2} {}",
                    ia.statistic,
                    if ia.pass { "✓" } else { "✗" }
                )),
            res.map_or("-".into(), |x| format!("{:.0}", x.achieved_rate)),
            percentile_cell(a.measurement.percentile(50.0)),
            a.model_p50_us,
            percentile_cell(p99),
            a.model_p99_us,
            diff_text(p99, a.model_p99_us),
            p99.map_or("-".into(), |q| format!(
                "{:+.1}",
                q.value - a.model_p99_us - r.floor.rtt_p50_us
            )),
        );
    }
    let _ = writeln!(w);
    for f in r.figures.iter().filter(|f| f.starts_with("accuracy-")) {
        let _ = writeln!(w, "![{f}](results/{f})\n");
    }
    let _ = writeln!(
        w,
        "### How precise is it at 1,000 req/s?\n\nNo service time, 4 connections, every request sampled; the difference from the busy-polling ping-pong's p50 is what vernier adds to the round trip.\n\n| timestamps | verdict | p50 µs | p99 µs | p50 − floor p50 |\n|---|---|---|---|---|"
    );
    for p in &r.precision {
        let m = &p.measurement;
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            p.timestamps.name(),
            verdict_cell(m),
            percentile_cell(m.percentile(50.0)),
            percentile_cell(m.percentile(99.0)),
            diff_text(m.percentile(50.0), r.floor.rtt_p50_us)
        );
    }
}

/// Part 2: the table's cells of one row after its target (tool, asked, achieved, p50, p99,
/// p99.9, open loop).
fn tool_cells(run: &ToolRun) -> [String; 7] {
    let dash = || "-".to_string();
    match run {
        ToolRun::Vernier { rate, measurement } => {
            let res = measurement.measured();
            let text = |p: f64| percentile_cell(measurement.percentile(p));
            [
                "vernier".into(),
                format!("{rate:.0} req/s"),
                res.map_or_else(dash, |r| format!("{:.0}", r.achieved_rate)),
                text(50.0),
                text(99.0),
                text(99.9),
                res.map_or_else(dash, |r| match &r.interarrival {
                    Some(ia) => format!(
                        "yes by design; its gaps {} the exponential test (A² {:.2}); {}",
                        if ia.pass { "pass" } else { "fail" },
                        ia.statistic,
                        verdict_text(r)
                    ),
                    None => format!("yes by design; {}", verdict_text(r)),
                }),
            ]
        }
        ToolRun::Other {
            tool,
            connections,
            outcome,
        } => {
            let asked = format!("as fast as it goes ({connections} conns)");
            match outcome {
                ToolOutcome::Measured(ToolFigures {
                    achieved_rate,
                    p50,
                    p99,
                    p999,
                }) => [
                    tool.name().into(),
                    asked,
                    format!("{achieved_rate:.0}"),
                    latency_cell(p50),
                    latency_cell(p99),
                    p999.as_ref()
                        .map_or_else(|| "not reported".into(), latency_cell),
                    "no: each connection waits for its reply (closed loop)".into(),
                ],
                ToolOutcome::Failed { error } => [
                    tool.name().into(),
                    asked,
                    dash(),
                    dash(),
                    dash(),
                    error.clone(),
                    dash(),
                ],
            }
        }
        ToolRun::NotStarted { error } => [
            dash(),
            dash(),
            dash(),
            dash(),
            dash(),
            format!("not measured: {error}"),
            dash(),
        ],
    }
}

fn tools(w: &mut String, r: &Evidence) {
    let _ = writeln!(
        w,
        "\n## What do other tools say of the same targets?\n\nEach server from the distribution, started for this run on a free loopback port; the tools run pinned to the agent's core, one after another, interleaved with vernier's runs. vernier is asked for 10,000 and 50,000 req/s and for the highest rate the other tool reached. None of the other tools can be asked for a rate (memaslap's `--tps` has no effect in Debian's build; redis-benchmark and wrk have no such option; wrk2 is not packaged), so they run as fast as 16 connections go.\n\n**Open loop?** vernier checks its own departures with its inter-arrival test (from kernel TX timestamps). It cannot check another tool's: it has no passive capture of another process's traffic. These tools are closed-loop by construction (each connection sends its next request only after the reply), which is what the column states.\n\n| target | tool | asked | achieved req/s | p50 µs | p99 µs | p99.9 µs | open loop |\n|---|---|---|---|---|---|---|---|"
    );
    for t in &r.tools {
        let _ = writeln!(
            w,
            "| {} | {} |",
            t.target.name(),
            tool_cells(&t.run).join(" | ")
        );
    }
}

/// Part 3: what the methodology did at each point of part 1 (kernel timestamps).
fn dynamics(w: &mut String, r: &Evidence) {
    let _ = writeln!(
        w,
        "\n## How does the methodology behave as it runs?\n\nFor each point of part 1 (kernel timestamps): the share of requests kept (a systematic 1-in-k above 2,000 samples/s per agent), the samples used, the CI width reached, and the samples a 10 µs wide p99 CI would need (the width narrows as 1/√n: n · (width / 10 µs)²).\n\n| service | load | sampling rate | samples | p99 CI width µs | samples for 10 µs | tries | time s |\n|---|---|---|---|---|---|---|---|"
    );
    for a in r
        .accuracy
        .iter()
        .filter(|a| a.timestamps == Timestamps::Kernel)
    {
        let Some(res) = a.measurement.measured() else {
            continue;
        };
        let needed = res
            .ci_width_us
            .map(|w| (res.samples as f64 * (w / 10.0).powi(2)).ceil());
        let _ = writeln!(
            w,
            "| {} | {:.0}% | {:.4} | {} | {} | {} | {} | {:.1} |",
            a.service,
            a.load * 100.0,
            res.sampling_rate,
            res.samples,
            res.ci_width_us.map_or("-".into(), |x| format!("{x:.1}")),
            needed.map_or("-".into(), |n| format!("{n:.0}")),
            res.tries,
            res.duration_s
        );
    }
    let reports: Vec<&String> = r
        .figures
        .iter()
        .filter(|f| !f.starts_with("accuracy-"))
        .collect();
    if !reports.is_empty() {
        let _ = writeln!(
            w,
            "\n`vernier report`'s plots of the exponential run at 50% load:\n"
        );
        for f in reports {
            let _ = writeln!(w, "- [{f}](results/{f})");
        }
    }
}

/// Where vernier is off: the standing discussion, then what this run's own records say
/// about the server and the host.
fn discussion(w: &mut String, r: &Evidence) {
    let _ = writeln!(w, "\n## Where is vernier off, and why?\n\n{DISCUSSION}");
    let capacity = r
        .accuracy
        .iter()
        .filter_map(|a| a.measurement.measured())
        .filter(|x| x.reason(ReasonKind::ClosedLoop).is_some())
        .map(|x| x.achieved_rate)
        .fold(0.0, f64::max);
    if capacity > 0.0 {
        let _ = writeln!(
            w,
            "- **Measured here: the server's real capacity.** At 80% the load went closed-loop at {capacity:.0} req/s, not the model's 40,000: the server spends about {:.1} µs per request beyond its service time, so the nominal 50% load is {:.0}% of what it can really do.",
            1e6 / capacity - MEAN_US,
            0.5 * 1e6 / MEAN_US / capacity * 100.0
        );
    }
    // vernier's p99 against each server at its lowest rate and at 50,000 req/s.
    let by_rate: Vec<String> = Server::ALL
        .iter()
        .filter_map(|&server| {
            let p99 = |rate: f64| {
                r.tools
                    .iter()
                    .filter(|t| t.target == server)
                    .find_map(|t| match &t.run {
                        ToolRun::Vernier {
                            rate: asked,
                            measurement,
                        } if *asked == rate => measurement.percentile(99.0),
                        _ => None,
                    })
                    .map(|q| q.value)
            };
            Some(format!(
                "{} {:.0} µs at 10,000 req/s, {:.0} µs at 50,000",
                server.name(),
                p99(TOOL_RATES[0])?,
                p99(TOOL_RATES[1])?
            ))
        })
        .collect();
    if !by_rate.is_empty() {
        let _ = writeln!(
            w,
            "- **Measured here: a lighter load is not always a faster one.** vernier's p99 against the real servers: {}. A server that sleeps between requests waits for its vCPU to be woken, which on this VM takes far longer than on a busy core; at 50,000 req/s the server's core hardly sleeps. (The likely cause, not measured separately.)",
            by_rate.join("; ")
        );
    }
    let lags: Vec<String> = r
        .accuracy
        .iter()
        .filter_map(|a| {
            let reason = a.measurement.measured()?.reason(ReasonKind::Independence)?;
            let point = format!(
                "{} {:.0}%{}",
                a.service,
                a.load * 100.0,
                if a.timestamps == Timestamps::User {
                    " (user)"
                } else {
                    ""
                }
            );
            Some(match &reason.why {
                Why::Independence(Independence::Thinned(t)) => format!("{point}: lag {}", t.lag),
                _ => format!("{point}: beyond every lag tried"),
            })
        })
        .collect();
    if !lags.is_empty() {
        let _ = writeln!(
            w,
            "- **Measured here: latencies correlated over hundreds of requests.** The independence test found the samples correlated up to these lags (in kept samples; at 50% sampling each is two requests): {}. Queueing alone correlates neighbours over a few requests at these loads; correlation over hundreds is the host stalling both the server and the agent for milliseconds, and it is also what lifts the p99 far above the model even at 10% load.",
            lags.join("; ")
        );
    }
    if let Some((a, waived)) = r
        .accuracy
        .iter()
        .filter(|a| a.timestamps == Timestamps::Kernel)
        .find_map(|a| Some((a, a.measurement.measured()?.waived.first()?)))
    {
        let _ = writeln!(
            w,
            "\nFor example, {} service at {:.0}% load: {}",
            a.service,
            a.load * 100.0,
            waived.detail()
        );
    }
}

/// What the numbers above mean, and what they do not.
const DISCUSSION: &str = "\
- **The difference from the model is not all bias.** The model has no network stack, no \
server code and no client: vernier's p50 minus the model's is at least the loopback round \
trip (the floor above) plus the synthetic server's own per-request work (reading, parsing, \
writing, a few µs). The last column of part 1 subtracts the floor from the p99 difference; \
what remains is the server's cost, queueing behind it, and whatever vernier adds.
- **The server's own cost grows the queue.** The model's server works exactly the service \
time; the real one also spends a few µs per request outside it, so its true utilisation \
is higher than the nominal load, and the gap to the model widens with the load (most at \
70–80%).
- **One agent core cannot draw exponential gaps at these rates.** Each request costs the \
agent a few µs to send (on loopback the sender also runs the receiver's TCP processing), so \
its departures have a floor: gaps shorter than that never happen, where an exponential of \
mean 50 µs (20,000 req/s) has about a tenth of its gaps. Anderson-Darling sees it (the A² \
column); what decides is whether it moves the answer: the departure check compares the p99 \
of the requests sent within the tolerance of schedule with that of all of them.
- **This host is a 2-vCPU virtual machine.** The hypervisor takes time from both cores \
(the jitter figure above, and the host probe in every result), and the coordinator shares a \
core with the agent. A stalled agent sends late and then in a burst; a stalled server lets \
a queue build. When the late requests make the p99, or stalls make the samples beyond it \
come in clusters too long for the time allowed, the point is N/A `departures` or \
`host_stalls` with the figures, rather than wrong.
- **User timestamps** add the agent's own scheduling to every latency: compare the 50% \
rows with kernel and user timestamps.
- **The other tools' figures are closed-loop.** Their latencies at their highest rate \
include their own queueing; they cannot be asked for a rate, so the 10k and 50k columns \
exist only for vernier.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::report::tests::sample;

    #[test]
    fn differences_carry_the_ci() {
        let q = PercentileResult {
            p: 99.0,
            value: 250.0,
            ci_low: Some(240.0),
            ci_high: Some(262.5),
            dependence: None,
        };
        assert_eq!(diff_text(Some(&q), 230.0), "+20.0 [+10.0, +32.5]");
        assert_eq!(diff_text(None, 230.0), "-");
    }

    #[test]
    fn the_headline_is_a_row_per_distribution_and_a_line_per_precision_run() {
        assert_eq!(
            headline(&sample()),
            "| service | verdict | vernier p99 − model p99 at 50% load, µs [95% CI] | model p99 µs |\n\
             |---|---|---|---|\n\
             | exponential (`exp:25us`) | converged | +82.5 [+72.0, +109.3] | 230.8 |\n\
             \n\
             - p50 at 1,000 req/s with user timestamps minus the calibrated loopback floor \
             (p50 5.55 µs): - µs (failed: cannot pin)\n"
        );
    }

    #[test]
    fn every_section_and_table_is_there_with_each_kind_of_row() {
        let text = markdown(&sample());
        let mut at = 0;
        for section in [
            "# vernier's results on this machine",
            "`vernier validate --quick` in 95 s",
            "**This is a `--quick` run",
            "## On what machine?",
            "core 0 1368 µs",
            "## How far is vernier from the ideal model, in brief?",
            "## How close is vernier to the ideal model?",
            "within 10 s per point",
            "| exponential | 50% | kernel | converged | 3.86 ✗ | 20012 | 48.1 [47.3, 48.9] | 34.6 | 313.3 [302.8, 340.1] | 230.8 | +82.5 [+72.0, +109.3] | +77.0 |",
            "![accuracy-exponential.svg](results/accuracy-exponential.svg)",
            "### How precise is it at 1,000 req/s?",
            "| user | failed: cannot pin | - | - | - |",
            "## What do other tools say of the same targets?",
            "| memcached | vernier | 10000 req/s | 20012 | 48.1 [47.3, 48.9] | 313.3 [302.8, 340.1] | - | yes by design; its gaps fail the exponential test (A² 3.86); converged |",
            "| memcached | memaslap | as fast as it goes (16 conns) | 212426 | [64, 128) (log2 bucket) | [256, 512) (log2 bucket) | [1024, 2048) (log2 bucket) | no: each connection waits for its reply (closed loop) |",
            "| redis-server | redis-benchmark | as fast as it goes (16 conns) | - | - | - | redis-benchmark is not installed (apt-get install redis-tools) | - |",
            "| nginx | - | - | - | - | - | not measured: nginx: not found | - |",
            "## How does the methodology behave as it runs?",
            "| exponential | 50% | 0.2500 | 40000 | 37.3 | 556516 | 3 | 21.5 |",
            "## Where is vernier off, and why?",
        ] {
            let found = text[at..]
                .find(section)
                .unwrap_or_else(|| panic!("{section:?} missing, or out of order, in\n{text}"));
            at += found + section.len();
        }
    }
}
