//! `vernier calibrate` for a person: a row per core, the host's figures, the verdict and
//! what to do.

use vernier_agent::calibrate::Calibration;

use super::verdict::HostVerdict;

/// The whole text: the cores' table, the host's lines, the verdict and the advice.
pub(super) fn text(c: &Calibration, v: &HostVerdict) -> String {
    let mut s = format!(
        "{:>4}  {:>9}  {:>9}  {:>10}  {:>9}  {:>24}  {:>9}  {}\n",
        "core",
        "lost",
        "gaps/s",
        ">100 µs/s",
        "longest",
        "woken late p50/p99/max",
        "touched",
        "fitness"
    );
    for f in &v.per_core {
        let jitter = c.host_jitter_us.iter().find(|j| j.cpu == f.cpu);
        let woken = c
            .wake_up
            .iter()
            .find(|w| w.cpu == Some(f.cpu))
            .map_or("-".to_string(), |w| {
                format!(
                    "{:.0} / {:.0} / {:.0} µs",
                    w.late_p50_us, w.late_p99_us, w.late_max_us
                )
            });
        s += &format!(
            "{:>4}  {:>8.2}%  {:>9.0}  {:>10.1}  {:>6.0} µs  {:>24}  {:>8.1}%  {}\n",
            f.cpu,
            f.lost_share * 100.0,
            f.gaps_per_s,
            f.long_gaps_per_s,
            jitter.map_or(f64::NAN, |j| j.max),
            woken,
            f.touched_share * 100.0,
            f.fitness.name()
        );
    }
    let seconds = c.host_jitter_us.first().map_or(0.0, |j| j.seconds);
    s += &format!(
        "      lost: time lost to gaps over 10 µs in a {seconds:.1} s spin; gaps/s: how many a second; woken late: a thread sleeping 1 ms at a time; touched: the share of requests {:.1} µs long a gap meets\n\n",
        v.scale_us
    );
    s += &host_lines(c);
    s += &format!("\nverdict: {}\n", v.summary);
    if !v.advice.is_empty() {
        s += "what to do:\n";
        for a in &v.advice {
            s += &format!("  - {a}\n");
        }
    }
    s
}

/// The host-wide figures: the loopback round trip, the clocks, the timestamps, idling.
fn host_lines(c: &Calibration) -> String {
    let rtt = &c.loopback_rtt_us;
    let hardware: Vec<&str> = c
        .timestamp_sources
        .interfaces
        .iter()
        .filter(|i| i.hardware)
        .map(|i| i.interface.as_str())
        .collect();
    let idle = if c.idle.driver.is_empty() {
        "no cpuidle driver".to_string()
    } else {
        match c.idle.guest_halt_poll_ns {
            Some(ns) => format!("{} (guest_halt_poll_ns {ns})", c.idle.driver),
            None => c.idle.driver.clone(),
        }
    };
    format!(
        "loopback round trip, CPU {} to CPU {}, {}: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs ({} round trips)\n\
         clock read: {:.0} ns (clock_gettime), {:.0} ns (TSC)\n\
         timestamps: kernel software on loopback {}; NIC hardware {}\n\
         idle cores: {idle}\n",
        rtt.client_cpu,
        rtt.server_cpu,
        rtt.wait.name(),
        rtt.p50,
        rtt.p99,
        rtt.max,
        rtt.round_trips,
        c.clock_read_ns.clock_gettime_monotonic,
        c.clock_read_ns.quanta,
        if c.timestamp_sources.kernel_on_loopback.works() {
            "works"
        } else {
            "does not work"
        },
        if hardware.is_empty() {
            "on no interface".to_string()
        } else {
            format!("on {}", hardware.join(", "))
        },
    )
}
