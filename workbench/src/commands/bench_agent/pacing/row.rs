//! One row of the benchmark, the figures derived from what it measured, and the medians
//! over repeats: pure functions of the measurements, apart from the running of them.

use serde::Serialize;

use super::observe::{Exit, Syscalls};
use super::outcome::{RunAnswer, SendPrecision};
use crate::procfs::Usage;

/// One run's figures per request and per second, from the achieved rate and the windows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(super) struct PerRequest {
    /// Requests in the /proc window: the achieved rate times the window's length (the run
    /// reports no count for the window itself).
    pub requests_in_window: Option<f64>,
    /// Whole-process CPU time per request, µs.
    pub cpu_us: Option<f64>,
    /// System calls per request, over perf's window.
    pub syscalls: Option<f64>,
    /// Context switches per request: perf's count where it has one, else the threads'
    /// voluntary and involuntary switches from /proc.
    pub context_switches: Option<f64>,
    /// Voluntary switches of all threads per second of the window.
    pub wakeups_per_s: Option<f64>,
}

/// Derives the per-request figures from what a row measured.
pub(super) fn per_request(
    answer: Option<&RunAnswer>,
    usage: Option<&Usage>,
    syscalls: &Syscalls,
) -> PerRequest {
    let rate = answer.map(|a| a.achieved_rate).filter(|&r| r > 0.0);
    let requests = usage.zip(rate).map(|(u, r)| r * u.window_s);
    let perf = match syscalls {
        Syscalls::Counted(c) => Some(c),
        Syscalls::Missing(_) => None,
    };
    let in_perf_window = |count: Option<u64>| {
        let c = perf?;
        Some(count? as f64 / (rate? * c.window_s))
    };
    let from_proc = usage
        .zip(requests)
        .map(|(u, n)| (u.voluntary + u.involuntary) as f64 / n);
    PerRequest {
        requests_in_window: requests,
        cpu_us: usage.zip(requests).map(|(u, n)| u.process_cpu_s * 1e6 / n),
        syscalls: in_perf_window(perf.and_then(|c| c.syscalls)),
        context_switches: in_perf_window(perf.and_then(|c| c.context_switches)).or(from_proc),
        wakeups_per_s: usage.map(|u| u.voluntary as f64 / u.window_s),
    }
}

/// One child: what it was asked, how it ended, and what was measured.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Row {
    pub repeat: usize,
    pub binary: String,
    pub mode: String,
    pub rate: f64,
    pub exit: Exit,
    /// Why a figure is missing: the child's failure, its output, or a /proc file.
    pub error: Option<String>,
    /// The child's own answer.
    pub answer: Option<RunAnswer>,
    pub per_request: PerRequest,
    /// The /proc window: the process's CPU and each thread name's share.
    pub usage: Option<Usage>,
    pub syscalls: Syscalls,
    /// From the child's samples, every point and round.
    pub precision: Option<SendPrecision>,
}

/// The median over repeats of one binary, mode and rate.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Median {
    pub binary: String,
    pub mode: String,
    pub rate: f64,
    /// Repeats run, and those the run answered.
    pub repeats: usize,
    pub rows: usize,
    pub cpu_us_per_request: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

/// The median of the figures present.
fn median(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let mut v: Vec<f64> = values.flatten().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    vernier_stats::percentile(&v, 0.5)
}

/// The p50 and p99 of a row: the run's own answer (every request of its measurement).
pub(super) fn p50_p99(row: &Row) -> (Option<f64>, Option<f64>) {
    row.answer
        .as_ref()
        .map_or((None, None), |a| (a.p50_us, a.p99_us))
}

/// Per binary, mode and rate, in the order first run, the medians over repeats.
pub(super) fn medians(rows: &[Row]) -> Vec<Median> {
    let mut out: Vec<Median> = Vec::new();
    for row in rows {
        let same = |m: &Median| m.binary == row.binary && m.mode == row.mode && m.rate == row.rate;
        if out.iter().any(same) {
            continue;
        }
        let group: Vec<&Row> = rows
            .iter()
            .filter(|r| r.binary == row.binary && r.mode == row.mode && r.rate == row.rate)
            .collect();
        out.push(Median {
            binary: row.binary.clone(),
            mode: row.mode.clone(),
            rate: row.rate,
            repeats: group.len(),
            rows: group.iter().filter(|r| r.answer.is_some()).count(),
            cpu_us_per_request: median(group.iter().map(|r| r.per_request.cpu_us)),
            p50_us: median(group.iter().map(|r| p50_p99(r).0)),
            p99_us: median(group.iter().map(|r| p50_p99(r).1)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::perf::{PerfCounts, PerfMissing};
    use super::*;

    fn usage(window_s: f64, process_cpu_s: f64, voluntary: u64, involuntary: u64) -> Usage {
        Usage {
            window_s,
            process_cpu_s,
            voluntary,
            involuntary,
            threads: Vec::new(),
        }
    }

    fn answer(achieved_rate: f64, p50_us: Option<f64>) -> RunAnswer {
        RunAnswer {
            verdict: "converged".into(),
            achieved_rate,
            p50_us,
            p99_us: p50_us.map(|p| p * 3.0),
        }
    }

    #[test]
    fn per_request_figures_divide_by_the_achieved_rate_times_each_window() {
        let counted = Syscalls::Counted(PerfCounts {
            syscalls: Some(60_000),
            context_switches: None,
            window_s: 3.0,
        });
        let a = answer(10_000.0, None);
        let u = usage(4.0, 2.0, 30_000, 10_000);
        let r = per_request(Some(&a), Some(&u), &counted);
        assert_eq!(r.requests_in_window, Some(40_000.0));
        assert_eq!(r.cpu_us, Some(50.0));
        assert_eq!(r.syscalls, Some(2.0));
        // perf did not count switches: /proc's, over its own window.
        assert_eq!(r.context_switches, Some(1.0));
        assert_eq!(r.wakeups_per_s, Some(7_500.0));
        let perf_switches = Syscalls::Counted(PerfCounts {
            syscalls: None,
            context_switches: Some(15_000),
            window_s: 3.0,
        });
        let r = per_request(Some(&a), Some(&u), &perf_switches);
        assert_eq!((r.syscalls, r.context_switches), (None, Some(0.5)));
    }

    #[test]
    fn without_an_answer_or_a_window_only_what_can_be_known_is_given() {
        let missing = Syscalls::Missing(PerfMissing::NoPerf);
        let u = usage(2.0, 1.0, 100, 0);
        let r = per_request(None, Some(&u), &missing);
        assert_eq!(r.wakeups_per_s, Some(50.0));
        assert_eq!(
            (r.cpu_us, r.context_switches, r.syscalls),
            (None, None, None)
        );
        let r = per_request(Some(&answer(0.0, None)), Some(&u), &missing);
        assert_eq!(r.cpu_us, None, "no request answered: no cost per request");
        assert_eq!(
            per_request(Some(&answer(1.0, None)), None, &missing),
            PerRequest::default()
        );
    }

    fn row(binary: &str, rate: f64, cpu_us: Option<f64>, p50_us: Option<f64>) -> Row {
        Row {
            repeat: 1,
            binary: binary.into(),
            mode: "sleep".into(),
            rate,
            exit: Exit::Code(0),
            error: None,
            answer: p50_us.map(|p| answer(rate, Some(p))),
            per_request: PerRequest {
                cpu_us,
                ..PerRequest::default()
            },
            usage: None,
            syscalls: Syscalls::Missing(PerfMissing::NoPerf),
            precision: None,
        }
    }

    #[test]
    fn medians_are_per_binary_mode_and_rate_over_the_rows_that_have_figures() {
        let rows = [
            row("old", 1000.0, Some(30.0), Some(10.0)),
            row("new", 1000.0, Some(20.0), Some(9.0)),
            row("old", 1000.0, Some(32.0), Some(12.0)),
            row("new", 1000.0, None, None),
            row("old", 1000.0, Some(31.0), Some(11.0)),
            row("old", 5000.0, Some(10.0), Some(8.0)),
        ];
        let m = medians(&rows);
        let keys: Vec<(&str, f64)> = m.iter().map(|m| (m.binary.as_str(), m.rate)).collect();
        assert_eq!(keys, [("old", 1000.0), ("new", 1000.0), ("old", 5000.0)]);
        assert_eq!(
            (m[0].repeats, m[0].cpu_us_per_request, m[0].p50_us),
            (3, Some(31.0), Some(11.0))
        );
        assert_eq!((m[1].repeats, m[1].rows), (2, 1));
        assert_eq!(m[0].p99_us, Some(33.0));
        assert_eq!(
            (m[1].rows, m[1].cpu_us_per_request, m[1].p99_us),
            (1, Some(20.0), Some(27.0))
        );
    }
}
