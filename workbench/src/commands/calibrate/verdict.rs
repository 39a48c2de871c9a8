//! `vernier calibrate`'s verdict: can this host measure microsecond tails, on which
//! cores, and what to change. Each core is judged by the share of requests as long as the
//! host's loopback round trip (the shortest any request can be here) that its gaps touch
//! (`policy::touched_at_scale`): at most 1% leaves every request's p99 the service's; at
//! most 25% leaves vernier's tail without stalls judged; beyond, neither.

use serde::{Deserialize, Serialize};
use vernier_agent::StallReport;
use vernier_agent::calibrate::{Calibration, CoreJitter};

pub use crate::coordinator::fitness::Fitness;
use crate::coordinator::policy::{
    FIT_TOUCHED_SHARE, MAX_TOUCHED_SHARE, touched_at_scale, woken_over_1ms,
};

/// One core's figures and fitness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreFit {
    /// The core.
    pub cpu: usize,
    /// The share of the spin's time lost to gaps over 10 µs.
    pub lost_share: f64,
    /// Gaps over 10 µs a second.
    pub gaps_per_s: f64,
    /// Gaps over 100 µs a second.
    pub long_gaps_per_s: f64,
    /// The share of requests as long as the loopback round trip its gaps touch.
    pub touched_share: f64,
    /// Wake-ups of a sleeping thread over 1 ms late, when a probe ran there.
    pub woken_over_1ms: Option<u64>,
    /// Its fitness.
    pub fitness: Fitness,
}

/// The host's verdict, with what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostVerdict {
    /// The fitness of the cores a measurement would use (the two fittest: the target's
    /// and the client's; one on a one-core host).
    pub fitness: Fitness,
    /// Those cores, fittest first: the client's, then the target's.
    pub cores: Vec<usize>,
    /// The scale judged at: the loopback round trip's median, µs.
    pub scale_us: f64,
    /// Every core's figures, in core order.
    pub per_core: Vec<CoreFit>,
    /// The verdict in a sentence.
    pub summary: String,
    /// What to do, one sentence each.
    pub advice: Vec<String>,
}

/// Judges `c`: each core, the host, and the advice.
pub fn judge(c: &Calibration) -> HostVerdict {
    let scale_us = c.loopback_rtt_us.p50;
    let per_core: Vec<CoreFit> = c
        .host_jitter_us
        .iter()
        .map(|j| core_fit(j, c.wake_up.iter().find(|w| w.cpu == Some(j.cpu)), scale_us))
        .collect();
    let mut ranked: Vec<&CoreFit> = per_core.iter().collect();
    ranked.sort_by(|a, b| a.touched_share.total_cmp(&b.touched_share));
    let chosen: Vec<&CoreFit> = ranked.iter().take(2).copied().collect();
    let worst = chosen.iter().map(|f| f.touched_share).fold(0.0, f64::max);
    let fitness = Fitness::of(worst);
    let cores: Vec<usize> = chosen.iter().map(|f| f.cpu).collect();
    let summary = summary(fitness, &cores, worst, scale_us);
    let advice = advice(c, fitness, &cores, &per_core);
    HostVerdict {
        fitness,
        cores,
        scale_us,
        per_core,
        summary,
        advice,
    }
}

/// One core's figures: its spin's gaps, and its probe's wake-ups when one ran there.
fn core_fit(j: &CoreJitter, woken: Option<&StallReport>, scale_us: f64) -> CoreFit {
    let seconds = j.seconds.max(1e-9);
    let lost_share = j.lost_over_10us / 1e6 / seconds;
    let gaps_per_s = j.gaps_over_10us as f64 / seconds;
    let touched_share = touched_at_scale(gaps_per_s, lost_share, scale_us);
    CoreFit {
        cpu: j.cpu,
        lost_share,
        gaps_per_s,
        long_gaps_per_s: j.gaps_over_100us as f64 / seconds,
        touched_share,
        woken_over_1ms: woken.map(|w| w.stalls_over_1ms),
        fitness: Fitness::of(touched_share),
    }
}

/// `cores 0 and 1`, `core 3`.
fn cores_text(cores: &[usize]) -> String {
    match cores {
        [one] => format!("core {one}"),
        _ => format!(
            "cores {}",
            cores
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    }
}

/// The verdict in a sentence: `worst` is the share its cores' gaps touch at `scale_us`.
fn summary(fitness: Fitness, cores: &[usize], worst: f64, scale_us: f64) -> String {
    let on = cores_text(cores);
    let touched = format!(
        "gaps over 10 µs touch {:.1}% of requests as long as its loopback round trip ({scale_us:.1} µs)",
        worst * 100.0
    );
    let p99 = FIT_TOUCHED_SHARE * 100.0;
    let most = MAX_TOUCHED_SHARE * 100.0;
    match fitness {
        Fitness::Fit => format!(
            "fit for microsecond tails on {on}: their {touched}, fewer than the {p99:.0}% a p99 holds, so every request's p99 is the service's"
        ),
        Fitness::FitWithoutStalls => format!(
            "fit on {on} for the tail without stalls, not for every request's: their {touched}, more than the {p99:.0}% a p99 holds and at most the {most:.0}% vernier judges the tail without stalls at"
        ),
        Fitness::Unfit => format!(
            "unfit for tails at the scale of its loopback round trip: even on {on} {touched}, beyond the {most:.0}% vernier judges the tail without stalls at"
        ),
    }
}

/// What to do, in the order a person would act: where to run, which tail to read, the
/// host's settings, the timestamps.
fn advice(c: &Calibration, fitness: Fitness, cores: &[usize], per_core: &[CoreFit]) -> Vec<String> {
    let mut advice = Vec::new();
    match (fitness, cores) {
        (Fitness::Unfit, _) => advice.push(
            "measure on a quieter host (dedicated cores: isolcpus and nohz_full, or vCPUs pinned by the hypervisor; bare metal): here tails at the scale of microseconds are the host's".into(),
        ),
        (_, [client, target, ..]) => advice.push(format!(
            "give the target core {target} and vernier's client core {client}: taskset -c {target} <server>, then vernier run … --cpus {client}"
        )),
        (_, [only]) => advice.push(format!(
            "one core ({only}): the client and the target share it, and each waits for the other; a second core gives each its own"
        )),
        _ => {}
    }
    let others: Vec<String> = per_core
        .iter()
        .filter(|f| !cores.contains(&f.cpu) && f.fitness != Fitness::Fit)
        .map(|f| format!("{} ({:.1}% touched)", f.cpu, f.touched_share * 100.0))
        .collect();
    if fitness != Fitness::Unfit && !others.is_empty() {
        advice.push(format!("keep both off cores {}", others.join(", ")));
    }
    if fitness == Fitness::FitWithoutStalls {
        advice.push(
            "read the tail without stalls (vernier's default, `ci.tail: without_stalls`): every request's tail here holds the host's stalls; dedicated cores would make it the service's too".into(),
        );
    }
    let woken: Vec<String> = per_core
        .iter()
        .filter(|f| cores.contains(&f.cpu) && f.woken_over_1ms.is_some_and(woken_over_1ms))
        .map(|f| format!("{} ({}×)", f.cpu, f.woken_over_1ms.unwrap_or(0)))
        .collect();
    if !woken.is_empty() {
        advice.push(format!(
            "a sleeping thread on cores {} woke over 1 ms late: the core was taken away; vernier marks the requests such stalls touch, and `poll: spin` keeps its worker from sleeping (it then needs a core of its own)",
            woken.join(", ")
        ));
    }
    let rtt = &c.loopback_rtt_us;
    if rtt.client_cpu == rtt.server_cpu {
        advice.push(format!(
            "the round trip's two ends shared CPU {}: they blocked rather than busy-polled, so it holds a context switch each way; --cpus A,B gives each its own core",
            rtt.client_cpu
        ));
    }
    if c.idle.halts_at_once() {
        advice.push(
            "idle vCPUs halt at once (guest_halt_poll_ns = 0): a scenario's `halt_poll: 200us` lets them poll for the run (root), which saves a sleeping server a trip through the hypervisor on each request".into(),
        );
    }
    if !c.timestamp_sources.kernel_on_loopback.works() {
        advice.push(
            "kernel timestamps did not work on loopback: runs here take user-space stamps (--timestamps user)".into(),
        );
    }
    advice
}
