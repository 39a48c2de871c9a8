//! The host's part of a budget: what the run's stall probes saw while the point measured
//! (the share of requests whose window held a stall, its size) and, where the ideal model
//! gives the latency distribution, how far that share moves the median.

use vernier_agent::StallReport;

use super::policy::median_movable;
use super::queue::Model;
use crate::coordinator::{HostPart, Part};

/// Host interference from the probes' reports of the point's measuring round: the workers'
/// and the target's cores when they are pinned (the stalls a request meets), else the
/// unpinned ones (workers wherever they ran, or the coordinator's probe).
pub(super) fn host(
    reports: &[StallReport],
    window_us: Option<f64>,
    model: Option<&Model>,
) -> HostPart {
    let pinned: Vec<&StallReport> = reports.iter().filter(|r| r.cpu.is_some()).collect();
    let probes = if pinned.is_empty() {
        reports.iter().collect()
    } else {
        pinned
    };
    let seconds = probes.iter().map(|r| r.seconds).fold(0.0, f64::max);
    if probes.is_empty() || seconds <= 0.0 {
        return HostPart {
            part: Part::unknown(
                "no stall probe ran (remote agents only, or the probe could not start)",
            ),
            requests_share: None,
            stalls: 0,
            stall_mean_us: None,
            stall_max_us: None,
        };
    }
    let names = probes
        .iter()
        .map(|r| r.name())
        .collect::<Vec<_>>()
        .join(", ");
    let lost_us: f64 = probes
        .iter()
        .map(|r| r.stalled_share * r.seconds * 1e6)
        .sum();
    let stalls: u64 = probes.iter().map(|r| r.stalls_over_1ms).sum();
    let max_us = probes.iter().map(|r| r.late_max_us).fold(0.0, f64::max);
    let window = window_us.unwrap_or(0.0);
    // A request meets a stall when its window overlaps it: a stall of length L catches the
    // requests sent in the L + window before its end.
    let share = ((lost_us + stalls as f64 * window) / (seconds * 1e6)).min(1.0);
    let sees = if probes.iter().all(|r| r.realtime) {
        "real-time probes see the hypervisor and the kernel taking the cores, not other ordinary threads sharing them"
    } else {
        "ordinary-priority probes: other threads on their cores delay them too"
    };
    let how_share = format!(
        "probes on {names}: {:.2}% of requests' windows ({window:.1} µs) held a stall or time the core was not the probe's ({stalls} wake-ups over 1 ms late, {:.1} ms lost beyond 100 µs, in {seconds:.1} s; {sees})",
        share * 100.0,
        lost_us / 1e3
    );
    let part = if share == 0.0 {
        Part::known(0.0, how_share)
    } else {
        match model {
            Some(m) if median_movable(share) => {
                match (m.quantile(0.5 / (1.0 - share)), m.quantile(0.5)) {
                    (Some(moved), Some(p50)) => Part::known(
                        moved - p50,
                        format!(
                            "{how_share}; the median moves from the ideal model's p50 to its p{:.2}, the stalled requests all taken to land above it",
                            50.0 / (1.0 - share)
                        ),
                    ),
                    _ => Part::unknown(format!(
                        "{how_share}; the model's CCDF does not reach that far"
                    )),
                }
            }
            Some(_) => Part::unknown(format!(
                "{how_share}: half the requests or more met a stall, and the median is the stalls'"
            )),
            None => Part::unknown(format!(
                "{how_share}; how far that moves the median needs the ideal model's distribution, which this workload has not"
            )),
        }
    };
    HostPart {
        part,
        requests_share: Some(share),
        stalls,
        stall_mean_us: (stalls > 0).then(|| lost_us / stalls as f64),
        stall_max_us: Some(max_us),
    }
}
