//! `vernier calibrate`'s table, verdict, text and JSON, on figures made up to be each kind
//! of host.

use vernier_agent::StallReport;
use vernier_agent::calibrate::{
    Calibration, ClockReadCost, Contributor, CoreJitter, KernelTimestampCheck,
    LoopbackKernelTimestamps, LoopbackRtt, Spread, TimestampSources, Wait,
};
use vernier_agent::sys::IdleState;

use super::verdict::{Fitness, HostVerdict, judge};
use super::*;

#[test]
fn the_table_has_a_row_per_contributor() {
    let rows = [
        Contributor {
            contributor: "clock read (user-space timestamp)".into(),
            how: "each value the mean of 1,000 reads".into(),
            unit: "ns",
            spread: Spread::of_sorted(&[20.5, 21.0, 30.25]),
        },
        Contributor {
            contributor: "host interference on CPU 1".into(),
            how: "gaps over 10 µs".into(),
            unit: "µs",
            spread: Spread::default(),
        },
    ];
    let text = table(&rows);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[0].starts_with("contributor") && lines[0].ends_with("count"));
    assert!(
        lines[1].contains("20.500") && lines[1].contains("30.250") && lines[1].ends_with(" 3"),
        "{text}"
    );
    assert!(lines[3].ends_with("none seen"), "{text}");
}

/// A core that spun 1 s and lost `lost_us` to `gaps` gaps over 10 µs (`long` of them over
/// 100 µs).
fn core(cpu: usize, gaps: u64, long: u64, lost_us: f64) -> CoreJitter {
    CoreJitter {
        cpu,
        max: if gaps > 0 { 150.0 } else { 0.0 },
        p9999: 5.0,
        gaps_over_10us: gaps,
        lost_over_10us: lost_us,
        gaps_over_100us: long,
        reads: 50_000_000,
        seconds: 1.0,
        stalls: None,
    }
}

/// A probe's report on `cpu` with `over_1ms` wake-ups over 1 ms late.
fn woken(cpu: usize, over_1ms: u64) -> StallReport {
    let mut r = StallReport::default();
    r.cpu = Some(cpu);
    r.wakeups = 1_000;
    r.seconds = 1.0;
    r.late_p50_us = 20.0;
    r.late_p99_us = 35.0;
    r.late_max_us = if over_1ms > 0 { 4_000.0 } else { 80.0 };
    r.stalls_over_1ms = over_1ms;
    r
}

fn check(works: bool) -> KernelTimestampCheck {
    KernelTimestampCheck {
        tx: works,
        rx: works,
        rtt_us: works.then_some(20.0),
        error: None,
    }
}

/// A calibration of `cores`, a loopback round trip of 20 µs at the median.
fn host(cores: Vec<CoreJitter>, halt_poll_ns: Option<u64>, kernel_stamps: bool) -> Calibration {
    let wake_up = cores.iter().map(|c| woken(c.cpu, 0)).collect();
    Calibration {
        clock_read_ns: ClockReadCost {
            quanta: 12.0,
            clock_gettime_monotonic: 21.0,
            clock_gettime_realtime: 21.5,
            monotonic_spread: Spread::default(),
        },
        loopback_rtt_us: LoopbackRtt {
            p50: 20.0,
            p99: 31.0,
            p999: 60.0,
            min: 15.0,
            max: 400.0,
            mean: 21.0,
            round_trips: 50_000,
            message_bytes: 8,
            client_cpu: 0,
            server_cpu: 1,
            wait: Wait::BusyPoll,
            stopped_at_limit: false,
        },
        timestamp_sources: TimestampSources {
            interfaces: Vec::new(),
            kernel_on_loopback: LoopbackKernelTimestamps {
                tcp: check(kernel_stamps),
                udp: check(kernel_stamps),
            },
        },
        host_jitter_us: cores,
        wake_up,
        idle: IdleState {
            driver: "haltpoll".into(),
            governor: "haltpoll".into(),
            guest_halt_poll_ns: halt_poll_ns,
        },
        contributors: Vec::new(),
        notes: Vec::new(),
    }
}

/// Four cores: 0 loses a third of its time, 3 has the timer tick's thousand gaps a second,
/// 1 and 2 nearly nothing. The verdict is fit on 1 and 2 (touched 0.02% and 0.03% at
/// 20 µs, against the 1% a p99 holds), says where to run and which cores to keep off.
#[test]
fn a_host_with_quiet_cores_is_fit_on_them_and_says_where_to_run() {
    let c = host(
        vec![
            core(0, 20_000, 2_000, 330_000.0),
            core(1, 10, 0, 150.0),
            core(2, 12, 1, 250.0),
            core(3, 1_000, 3, 22_000.0),
        ],
        Some(200_000),
        true,
    );
    let v = judge(&c);
    assert_eq!(v.fitness, Fitness::Fit, "{v:#?}");
    assert_eq!(v.cores, vec![1, 2]);
    let touched: Vec<f64> = v.per_core.iter().map(|f| f.touched_share).collect();
    // 10 gaps/s × 20 µs + 150 µs/s = 0.02% + 0.015%.
    assert!((touched[1] - 0.00035).abs() < 1e-9, "{touched:?}");
    assert_eq!(v.per_core[0].fitness, Fitness::Unfit);
    assert_eq!(v.per_core[3].fitness, Fitness::FitWithoutStalls);
    assert!(
        v.summary
            .starts_with("fit for microsecond tails on cores 1 and 2"),
        "{}",
        v.summary
    );
    assert!(
        v.advice[0].contains("taskset -c 2") && v.advice[0].contains("--cpus 1"),
        "{:?}",
        v.advice
    );
    assert!(
        v.advice[1].starts_with("keep both off cores 0 (73.0% touched), 3 (4.2% touched)"),
        "{:?}",
        v.advice
    );
    assert_eq!(v.advice.len(), 2, "{:?}", v.advice);
}

/// This project's kind of host: every core's timer tick takes a thousand gaps of 20-25 µs
/// a second (2-2.5% of its time): fit for the tail without stalls only, and the advice
/// says which tail to read, that the host halts idle vCPUs at once, that a core was
/// taken away for over a millisecond, and that kernel stamps failed.
#[test]
fn a_host_whose_every_core_ticks_is_fit_without_stalls_and_says_which_tail_to_read() {
    let mut c = host(
        vec![core(0, 1_000, 10, 22_000.0), core(1, 1_100, 12, 25_000.0)],
        Some(0),
        false,
    );
    c.wake_up[1] = woken(1, 3);
    let v = judge(&c);
    assert_eq!(v.fitness, Fitness::FitWithoutStalls, "{v:#?}");
    assert!(v.summary.contains("4.7% of requests"), "{}", v.summary);
    let advice = v.advice.join("\n");
    for words in [
        "give the target core 1 and vernier's client core 0",
        "read the tail without stalls",
        "cores 1 (3×) woke over 1 ms late",
        "halt_poll: 200us",
        "--timestamps user",
    ] {
        assert!(advice.contains(words), "{words}: {advice}");
    }
}

/// A host whose quietest cores lose a third of their time is unfit, and the advice is a
/// quieter host, not where to run here; one core alone says the ends share it.
#[test]
fn a_host_that_loses_a_third_of_its_time_is_unfit_and_one_core_says_so() {
    let c = host(
        vec![
            core(0, 20_000, 2_000, 330_000.0),
            core(1, 30_000, 2_500, 400_000.0),
        ],
        Some(200_000),
        true,
    );
    let v = judge(&c);
    assert_eq!(v.fitness, Fitness::Unfit, "{v:#?}");
    assert!(
        v.advice[0].starts_with("measure on a quieter host"),
        "{:?}",
        v.advice
    );
    assert!(
        !v.advice.iter().any(|a| a.contains("taskset")),
        "{:?}",
        v.advice
    );

    let one = host(vec![core(0, 10, 0, 150.0)], Some(200_000), true);
    let v = judge(&one);
    assert_eq!((v.fitness, v.cores.clone()), (Fitness::Fit, vec![0]));
    assert!(v.advice[0].starts_with("one core (0)"), "{:?}", v.advice);
}

/// The text has a row per core with its fitness, the host's lines and the verdict; the
/// JSON holds the figures and the verdict, which reads back as it was and prints again
/// the same.
#[test]
fn the_text_names_each_core_and_the_json_round_trips() {
    let c = host(
        vec![core(0, 1_000, 10, 22_000.0), core(1, 10, 0, 150.0)],
        Some(200_000),
        true,
    );
    let v = judge(&c);
    let text = text::text(&c, &v);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].trim_start().starts_with("core"), "{text}");
    assert!(
        lines[1].trim_start().starts_with("0 ") && lines[1].ends_with("fit without stalls"),
        "{text}"
    );
    assert!(
        lines[2].trim_start().starts_with("1 ") && lines[2].ends_with("fit"),
        "{text}"
    );
    assert!(
        text.contains("loopback round trip, CPU 0 to CPU 1, busy-polling: p50 20.0 µs"),
        "{text}"
    );
    assert!(text.contains(&format!("verdict: {}", v.summary)), "{text}");

    let json = serde_json::to_string(&CalibrationReport {
        calibration: &c,
        verdict: &v,
    })
    .unwrap();
    // Read back: the same verdict (its figures to the last bits a decimal keeps).
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let back: HostVerdict = serde_json::from_value(value["verdict"].clone()).unwrap();
    assert_eq!(
        (back.fitness, &back.cores, &back.summary, &back.advice),
        (v.fitness, &v.cores, &v.summary, &v.advice)
    );
    for (a, b) in back.per_core.iter().zip(&v.per_core) {
        assert_eq!(
            (a.cpu, a.fitness, a.woken_over_1ms),
            (b.cpu, b.fitness, b.woken_over_1ms)
        );
        for (x, y) in [
            (a.touched_share, b.touched_share),
            (a.lost_share, b.lost_share),
            (a.gaps_per_s, b.gaps_per_s),
            (a.long_gaps_per_s, b.long_gaps_per_s),
        ] {
            assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} {y}");
        }
    }
    assert_eq!(back.per_core.len(), v.per_core.len());
    assert_eq!(value["verdict"]["fitness"], "fit_without_stalls");
    assert_eq!(value["loopback_rtt_us"]["p50"], 20.0);
    assert_eq!(value["wake_up"][0]["late_p99_us"], 35.0);
}
