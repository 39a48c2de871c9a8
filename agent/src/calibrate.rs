//! `vernier calibrate`: the floor under any measurement on this host.
//!
//! A latency tool cannot report a tail finer than the host it runs on lets it see. Four
//! figures bound that, each measured here in a few seconds:
//!
//! - [`ClockReadCost`]: what one clock read costs (quanta's TSC clock and
//!   `clock_gettime` on the monotonic and realtime clocks), the price of every user-space
//!   timestamp;
//! - [`LoopbackRtt`]: the round-trip time of a minimal busy-polling ping-pong over
//!   loopback TCP, 8-byte messages, client and server pinned to different cores: the
//!   lowest latency any request can have here, which the agent's reported p50 must
//!   approach (within 1 µs with kernel timestamps). With one core for both ends the
//!   ping-pong blocks rather than spins ([`Wait`]), and says so;
//! - [`TimestampSources`]: what each interface can timestamp (what `ethtool -T` shows),
//!   and whether kernel software timestamps actually work on loopback (tried);
//! - [`CoreJitter`]: the largest gaps between consecutive clock reads in a tight spin on
//!   each core ("Where Has My Time Gone?", Primorac, Bugnion and Argyraki, 2017): time
//!   the thread lost to interrupts, the hypervisor and other tasks. A p99.99 target
//!   finer than a core's jitter cannot be measured from that core.
//!
//! ```no_run
//! use std::time::Duration;
//! use vernier_agent::calibrate::{CalibrateOptions, run};
//!
//! let calibration = run(&CalibrateOptions { jitter: Duration::from_millis(200), ..CalibrateOptions::default() })?;
//! println!("p50 RTT {} µs", calibration.loopback_rtt_us.p50);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod clocks;
mod error;
mod jitter;
mod options;
mod pingpong;
mod sources;
mod spread;
mod wakeup;

use serde::Serialize;

use crate::sys::available_cpus;

pub use clocks::ClockReadCost;
pub use error::CalibrateError;
pub use jitter::CoreJitter;
pub use options::{CalibrateOptions, PingPong, WARMUP_ROUND_TRIPS};
pub use pingpong::{LoopbackRtt, STALL as PING_PONG_STALL, Wait};
pub use sources::{
    InterfaceSource, KernelTimestampCheck, LoopbackKernelTimestamps, TimestampSources,
};
pub use spread::Spread;

/// The floor under measurements on this host; printed as JSON by `vernier calibrate`.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    /// The median cost of one read of each clock, in ns.
    pub clock_read_ns: ClockReadCost,
    /// The busy-polling loopback ping-pong's round-trip times, in µs.
    pub loopback_rtt_us: LoopbackRtt,
    /// What each interface can timestamp, and whether kernel timestamps work on loopback.
    pub timestamp_sources: TimestampSources,
    /// The gaps between consecutive clock reads on each core, in µs.
    pub host_jitter_us: Vec<CoreJitter>,
    /// How late a sleeping thread woke on each core (the agent's stall probe, for as long
    /// as the spin ran).
    pub wake_up: Vec<crate::probe::StallReport>,
    /// How idle cores wait (the cpuidle driver, and a KVM guest's halt polling).
    pub idle: crate::sys::IdleState,
    /// The figures above in the layout of "Where has my time gone?" (Zilberman et al.),
    /// Table 1: one row per contributor to a request's latency, each with its spread.
    pub contributors: Vec<Contributor>,
    /// Caveats about these figures (e.g. client and server sharing a core).
    pub notes: Vec<String>,
}

/// One row of the contributors' table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contributor {
    /// What adds to the latency.
    pub contributor: String,
    /// How it was measured, and what one value of the spread is.
    pub how: String,
    /// The unit of the spread: `ns` or `µs`.
    pub unit: &'static str,
    /// Its spread, in `unit`; flattened into the row, as the paper's table has it.
    #[serde(flatten)]
    pub spread: Spread,
}

/// The contributors' table of a calibration's figures.
fn contributors(
    clocks: &ClockReadCost,
    rtt: &LoopbackRtt,
    jitter: &[CoreJitter],
) -> Vec<Contributor> {
    let mut rows = vec![
        Contributor {
            contributor: "clock read (user-space timestamp)".into(),
            how: format!(
                "clock_gettime(CLOCK_MONOTONIC) through the vDSO on CPU {}: each value the mean of 1,000 reads",
                rtt.client_cpu
            ),
            unit: "ns",
            spread: clocks.monotonic_spread,
        },
        Contributor {
            contributor: "user space and kernel, one local round trip".into(),
            how: format!(
                "{} TCP ping-pong over loopback, {}-byte messages, CPU {} to CPU {}: each value one round trip",
                rtt.wait.name(),
                rtt.message_bytes,
                rtt.client_cpu,
                rtt.server_cpu
            ),
            unit: "µs",
            spread: Spread {
                min: rtt.min,
                p50: rtt.p50,
                p99: rtt.p99,
                max: rtt.max,
                count: rtt.round_trips,
            },
        },
    ];
    for core in jitter {
        rows.push(Contributor {
            contributor: format!("host interference on CPU {}", core.cpu),
            how: format!(
                "gaps over 10 µs between consecutive clock reads in a {:.1} s spin ({:.1} ms lost in all)",
                core.seconds,
                core.lost_over_10us / 1e3
            ),
            unit: "µs",
            spread: core.stalls.unwrap_or_default(),
        });
    }
    rows
}

/// Measures everything [`Calibration`] holds. Takes about `jitter` plus the ping-pong's
/// time (a second by default) plus a fraction of a second; the calling thread is not
/// pinned (each measurement runs in threads of its own).
pub fn run(options: &CalibrateOptions) -> Result<Calibration, CalibrateError> {
    if options.round_trips == 0 && options.duration.is_none_or(|d| d.is_zero()) {
        return Err(CalibrateError::Options(
            "the ping-pong needs round trips or a duration".into(),
        ));
    }
    if options.jitter.is_zero() {
        return Err(CalibrateError::Options(
            "the jitter test needs a non-zero duration".into(),
        ));
    }
    let mut notes = Vec::new();
    let cpus = usable(&options.cpus)?;
    let (client_cpu, server_cpu) = match cpus.as_slice() {
        [] => {
            return Err(CalibrateError::Options(
                "this process may run on no CPU it can name".into(),
            ));
        }
        [only] => (*only, *only),
        [client, server, ..] => (*client, *server),
    };
    if client_cpu == server_cpu {
        notes.push(format!(
            "the ping-pong's client and server share CPU {client_cpu}: they block in read \
             rather than busy-poll (two spinning ends on one core would take turns at the \
             scheduler's time slices), so its RTT holds a context switch each way; give two \
             cores (--cpus A,B) for the busy-polling floor"
        ));
    }
    let clock_read_ns = clocks::measure(client_cpu)?;
    let timestamp_sources = sources::survey(options.interfaces.as_deref());
    let loopback_rtt_us = pingpong::run(
        client_cpu,
        server_cpu,
        pingpong::Length {
            round_trips: options.round_trips,
            duration: options.duration,
            limit: None,
        },
    )?;
    // Every core this process may use, unless told which: a verdict names the fit ones.
    let cores = if options.cpus.is_empty() {
        available_cpus()
    } else {
        cpus.clone()
    };
    let host_jitter_us = jitter::measure(&cores, options.jitter)?;
    let wake_up = wakeup::measure(&cores, options.jitter)?;
    if !timestamp_sources.kernel_on_loopback.works() {
        notes.push(
            "kernel software timestamps did not work on loopback: only --timestamps user \
             is available on this host"
                .into(),
        );
    }
    let idle = crate::sys::IdleState::read();
    if idle.halts_at_once() {
        notes.push(
            "idle vCPUs halt at once (haltpoll guest_halt_poll_ns = 0): a server or agent that \
             sleeps between requests is woken through the hypervisor each time, which the \
             busy-polling ping-pong above never pays (on this project's KVM guest ~30 µs on \
             memcached's median at 10,000 req/s); a scenario's `halt_poll: 200us` lets idle \
             vCPUs poll for the run (root)"
                .into(),
        );
    }
    Ok(Calibration {
        contributors: contributors(&clock_read_ns, &loopback_rtt_us, &host_jitter_us),
        clock_read_ns,
        loopback_rtt_us,
        timestamp_sources,
        host_jitter_us,
        wake_up,
        idle,
        notes,
    })
}

/// `cpus`, or the first two CPUs this process may use when empty (one, on a one-CPU
/// process); an error naming the CPU when one of `cpus` is not one this process may use.
/// Checked before any thread starts, so that the error names the core rather than what
/// its absence broke (a server that never listened); and checked against the process's
/// affinity, not only the host's, since a thread may pin itself outside the mask the
/// process was started with (`taskset`), which would take vernier where it was told not
/// to go.
fn usable(cpus: &[usize]) -> Result<Vec<usize>, CalibrateError> {
    let allowed = available_cpus();
    if cpus.is_empty() {
        return Ok(allowed.into_iter().take(2).collect());
    }
    if let Some(&cpu) = cpus.iter().find(|cpu| !allowed.contains(cpu)) {
        return Err(CalibrateError::Options(format!(
            "CPU {cpu} is not one this process may run on ({})",
            allowed
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(cpus.to_vec())
}

/// The ping-pong alone, for a caller that needs only the floor (a run's latency budget):
/// what [`PingPong`] asks, busy-polling when its two ends are on distinct cores and
/// blocking when on one ([`Wait::between`]). Ends within its `limit` plus one
/// [`PING_PONG_STALL`] (the longest one message may take).
pub fn loopback(ping_pong: &PingPong) -> Result<LoopbackRtt, CalibrateError> {
    if ping_pong.round_trips == 0 {
        return Err(CalibrateError::Options(
            "the ping-pong needs round trips".into(),
        ));
    }
    usable(&[ping_pong.client_cpu, ping_pong.server_cpu])?;
    pingpong::run(
        ping_pong.client_cpu,
        ping_pong.server_cpu,
        pingpong::Length {
            round_trips: ping_pong.round_trips,
            duration: None,
            limit: Some(ping_pong.limit),
        },
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_short_calibration_has_plausible_figures() {
        let calibration = run(&CalibrateOptions {
            round_trips: 2_000,
            jitter: Duration::from_millis(100),
            interfaces: Some(vec!["lo".into()]),
            ..CalibrateOptions::default()
        })
        .unwrap();
        let clocks = &calibration.clock_read_ns;
        for (name, ns) in [
            ("quanta", clocks.quanta),
            ("monotonic", clocks.clock_gettime_monotonic),
            ("realtime", clocks.clock_gettime_realtime),
        ] {
            assert!(ns > 0.0 && ns < 1_000.0, "{name} clock read {ns} ns");
        }
        let rtt = &calibration.loopback_rtt_us;
        assert!(rtt.p50 > 0.0 && rtt.p50 < 1_000.0, "{rtt:?}");
        assert!(
            rtt.p50 <= rtt.p99 && rtt.p99 <= rtt.p999 && rtt.p999 <= rtt.max,
            "{rtt:?}"
        );
        assert_eq!(rtt.round_trips, 2_000);
        let sources = &calibration.timestamp_sources;
        assert_eq!(sources.interfaces.len(), 1);
        assert!(sources.interfaces[0].software, "{sources:?}");
        assert!(!sources.interfaces[0].hardware, "{sources:?}");
        assert!(sources.kernel_on_loopback.works(), "{sources:?}");
        assert!(!calibration.host_jitter_us.is_empty());
        for core in &calibration.host_jitter_us {
            assert!(core.reads > 1_000, "{core:?}");
            assert!(core.max >= core.p9999 && core.p9999 > 0.0, "{core:?}");
        }
        let json = serde_json::to_value(&calibration).unwrap();
        for field in [
            "clock_read_ns",
            "loopback_rtt_us",
            "timestamp_sources",
            "host_jitter_us",
        ] {
            assert!(json.get(field).is_some(), "{field} missing from {json}");
        }
        assert!(json["loopback_rtt_us"]["p999"].is_number(), "{json}");
        // The paper's layout: the clock read, the round trip, each core's interference.
        let rows = &calibration.contributors;
        assert_eq!(rows.len(), 2 + calibration.host_jitter_us.len(), "{rows:?}");
        assert_eq!(rows[0].spread.count, 201, "{rows:?}");
        assert!(
            (rows[0].spread.p50 - clocks.clock_gettime_monotonic).abs() < 0.01,
            "{rows:?}"
        );
        assert_eq!((rows[1].spread.p50, rows[1].spread.count), (rtt.p50, 2_000));
        for row in rows {
            let s = row.spread;
            assert!(
                s.count == 0 || (s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max),
                "{row:?}"
            );
        }
        for (core, row) in calibration.host_jitter_us.iter().zip(&rows[2..]) {
            assert_eq!(row.spread.count, core.gaps_over_10us, "{row:?}");
            assert!(row.spread.count == 0 || row.spread.min >= 10.0, "{row:?}");
        }
        assert_eq!(json["contributors"][1]["unit"], "µs", "{json}");
        assert!(json["contributors"][1]["p99"].is_number(), "{json}");
    }

    #[test]
    fn a_spread_is_of_nearest_ranks() {
        let values: Vec<f64> = (1..=200).map(f64::from).collect();
        let s = Spread::of_sorted(&values);
        assert_eq!(
            (s.min, s.p50, s.p99, s.max, s.count),
            (1.0, 100.0, 198.0, 200.0, 200)
        );
        assert_eq!(Spread::of_sorted(&[]), Spread::default());
        let one = Spread::of_sorted(&[7.0]);
        assert_eq!((one.min, one.p50, one.p99, one.max), (7.0, 7.0, 7.0, 7.0));
    }

    #[test]
    fn nothing_to_measure_is_refused() {
        let err = run(&CalibrateOptions {
            round_trips: 0,
            ..CalibrateOptions::default()
        })
        .unwrap_err();
        assert!(err.is_usage(), "{err}");
        let err = run(&CalibrateOptions {
            jitter: Duration::ZERO,
            ..CalibrateOptions::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("jitter"), "{err}");
    }

    /// Both ends on one core block rather than spin: the round trips all finish, in a
    /// fraction of the time two spinning ends need (a scheduler time slice a message).
    #[test]
    fn a_ping_pong_on_one_core_blocks_and_ends() {
        let cpu = available_cpus()[0];
        let started = std::time::Instant::now();
        let rtt = loopback(&PingPong {
            client_cpu: cpu,
            server_cpu: cpu,
            round_trips: 5_000,
            limit: Duration::from_secs(20),
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rtt.wait, Wait::Blocking, "{rtt:?}");
        assert_eq!((rtt.round_trips, rtt.stopped_at_limit), (5_000, false));
        assert!((rtt.client_cpu, rtt.server_cpu) == (cpu, cpu), "{rtt:?}");
        // 6,000 round trips at a context switch each way: well under a second; spinning,
        // they took over a minute.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let json = serde_json::to_value(rtt).unwrap_or_default();
        assert_eq!(json["wait"], "blocking", "{json}");
    }

    /// A ping-pong longer than its limit stops there with what it measured; one that
    /// cannot finish its warm-up in it is an error naming the limit.
    #[test]
    fn a_ping_pong_stops_at_its_limit() {
        let cpus = available_cpus();
        let (client, server) = (cpus[0], cpus[cpus.len() - 1]);
        let started = std::time::Instant::now();
        let rtt = loopback(&PingPong {
            client_cpu: client,
            server_cpu: server,
            round_trips: u64::MAX,
            limit: Duration::from_millis(300),
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(rtt.stopped_at_limit, "{rtt:?}");
        assert!(rtt.round_trips > 0, "{rtt:?}");
        assert_eq!(rtt.wait, Wait::between(client, server));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );

        let err = loopback(&PingPong {
            client_cpu: client,
            server_cpu: server,
            round_trips: 10,
            limit: Duration::from_nanos(1),
        })
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the ping-pong reached its limit of 1ns after 1 of its 1000 warm-up"),
            "{err}"
        );
    }

    #[test]
    fn a_core_that_does_not_exist_is_a_usage_error() {
        let err = run(&CalibrateOptions {
            cpus: vec![100_000],
            round_trips: 10,
            jitter: Duration::from_millis(10),
            ..CalibrateOptions::default()
        })
        .unwrap_err();
        assert!(err.is_usage(), "{err}");
        assert!(
            err.to_string()
                .starts_with("CPU 100000 is not one this process may run on"),
            "{err}"
        );
    }
}
