//! Tests of `probe`.

use super::*;
use crate::StallInterval;

#[test]
fn wakes_about_once_a_period_and_takes_deltas() {
    let probe = HostProbe::start(None, Duration::from_millis(1)).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let report = probe.take();
    assert!(
        (100..=220).contains(&report.wakeups),
        "{} wake-ups in {:.3} s: {report}",
        report.wakeups,
        report.seconds
    );
    assert!(
        (0.19..0.5).contains(&report.seconds),
        "{:.3} s",
        report.seconds
    );
    assert!(report.late_p50_us < 3_000.0, "{report}");
    assert!(report.late_p50_us <= report.late_p99_us, "{report}");
    assert!(report.late_p99_us <= report.late_max_us * 1.001, "{report}");
    assert_eq!(report.cpu, None);
    assert!((report.period_us - 1000.0).abs() < 1e-9);
    assert!((0.0..=1.0).contains(&report.stalled_share), "{report}");
    assert!(
        report
            .to_string()
            .starts_with("wake-ups 1 ms apart came p50 ")
    );

    // A delta: right after a take there is (almost) nothing new.
    let again = probe.take();
    assert!(again.wakeups < 20, "{again:?}");
    assert!(again.seconds < 0.1, "{again:?}");
}

#[test]
fn a_pinned_probe_names_its_core_and_a_bad_one_is_refused() {
    let cpus = crate::sys::available_cpus();
    let last = cpus[cpus.len() - 1];
    let probe = HostProbe::start(Some(last), Duration::from_millis(2)).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let report = probe.take();
    assert_eq!(report.cpu, Some(last));
    assert!(report.wakeups >= 3, "{report:?}");

    let err = HostProbe::start(Some(nix::sched::CpuSet::count() + 5), DEFAULT_PERIOD)
        .unwrap_err()
        .to_string();
    assert!(err.contains("may run on"), "{err}");
    let err = HostProbe::start(None, Duration::ZERO).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn an_agent_probes_each_of_its_cores_once() {
    let cpus = crate::sys::available_cpus();
    let probes = HostProbe::on_cores(&[cpus[0], cpus[0]]);
    assert_eq!(
        probes.iter().map(HostProbe::cpu).collect::<Vec<_>>(),
        [Some(cpus[0])]
    );
    let probes = HostProbe::on_cores(&[]);
    assert_eq!(
        probes.iter().map(HostProbe::cpu).collect::<Vec<_>>(),
        [None]
    );
}

#[test]
fn dropping_the_probe_stops_its_thread() {
    let probe = HostProbe::start(None, Duration::from_millis(1)).unwrap();
    let tally = Arc::downgrade(&probe.tally);
    std::thread::sleep(Duration::from_millis(5));
    drop(probe);
    // The thread held the other reference: joined, it is gone.
    assert!(tally.upgrade().is_none());
}

#[test]
fn missed_deadlines_are_skipped_not_fired_at_once() {
    assert_eq!(next_deadline(1_000, 100, 1_050), 1_100);
    // A stall of 5 periods past 1,000: the next deadline is the first one after now.
    assert_eq!(next_deadline(1_000, 100, 1_530), 1_600);
    assert_eq!(next_deadline(1_000, 100, 1_100), 1_200);
}

fn report_of(late_us: &[u64], seconds: f64) -> StallReport {
    let mut tally = Tally::new(0);
    for &us in late_us {
        tally.record(us * 1_000);
    }
    tally.report(
        Some(1),
        Duration::from_millis(1),
        true,
        (seconds * 1e9) as u64,
    )
}

#[test]
fn a_late_wakeup_is_kept_as_an_interval_beside_the_tallies() {
    // Simulated wake-ups 200 µs apart, 40 µs late, but the one due at 1.2 ms comes at
    // 3.5 ms: the core was away at 1.2 ms (the deadline missed) and until 3.5 ms.
    let mut tally = Tally::new(0);
    let mut previous = 0;
    for k in 1..=5u64 {
        let deadline = k * 200_000;
        tally.wakeup(previous, deadline, deadline + 40_000, Some(2));
        previous = deadline + 40_000;
    }
    tally.wakeup(previous, 1_200_000, 3_500_000, Some(2));
    tally.wakeup(3_500_000, 3_600_000, 3_640_000, Some(2));
    assert_eq!(
        tally.intervals.intervals,
        [StallInterval {
            start_ns: 1_200_000,
            end_ns: 3_500_000,
            core: Some(2),
            source: crate::StallSource::Probe,
        }]
    );
    assert_eq!(tally.intervals.dropped, 0);
    let report = tally.report(Some(2), DEFAULT_PERIOD, true, 3_640_000);
    assert_eq!((report.wakeups, report.stalls_over_1ms), (7, 1));
}

#[test]
fn a_take_gives_the_intervals_once() {
    let probe = HostProbe::start(None, DEFAULT_PERIOD).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // Whatever this host did meanwhile, each interval is one of a late wake-up.
    let (report, stalls) = probe.take_all();
    assert!(report.wakeups > 0, "{report:?}");
    assert!(stalls.intervals.len() as u64 <= report.wakeups);
    for s in &stalls.intervals {
        assert!(s.end_ns > s.start_ns && s.core.is_none(), "{s:?}");
    }
    // Planted and taken: a second take starts afresh.
    lock(&probe.tally).intervals.push(StallInterval {
        start_ns: 1,
        end_ns: 2,
        core: None,
        source: crate::StallSource::Probe,
    });
    let taken = probe.take_stalls().intervals;
    assert!(taken.iter().any(|s| s.start_ns == 1), "{taken:?}");
    let again = probe.take_all().1.intervals;
    assert!(again.iter().all(|s| s.start_ns != 1), "{again:?}");
}

#[test]
fn an_ordinary_priority_probe_says_so_and_a_merge_with_one_is_ordinary() {
    let mut rt = report_of(&[50, 60], 0.002);
    assert!(!rt.to_string().contains("ordinary"), "{rt}");
    let mut tally = Tally::new(0);
    tally.record(70_000);
    let ordinary = tally.report(None, DEFAULT_PERIOD, false, 1_000_000);
    assert!(
        ordinary.to_string().contains("ordinary-priority probe"),
        "{ordinary}"
    );
    rt.merge(&ordinary);
    assert!(!rt.realtime);
    assert_eq!(rt.wakeups, 3);
}

#[test]
fn the_figures_and_their_merge() {
    // 98 quiet wake-ups (50 µs), one at 1.5 ms, one at 3.4 ms: 0.1 s.
    let mut late = vec![50; 98];
    late.extend([1_500, 3_400]);
    let a = report_of(&late, 0.1);
    assert_eq!(a.wakeups, 100);
    assert_eq!(a.stalls_over_1ms, 2);
    assert!((a.late_p50_us - 50.0).abs() < 0.1, "{a:?}");
    assert!((a.late_p99_us - 1_500.0).abs() < 2.0, "{a:?}");
    assert!((a.late_max_us - 3_400.0).abs() < 1e-9, "{a:?}");
    // (1,400 + 3,300) µs beyond 100 µs in 0.1 s.
    assert!((a.stalled_share - 0.047).abs() < 1e-9, "{a:?}");
    assert_eq!(
        a.to_string(),
        "wake-ups 1 ms apart came p50 50 µs, p99 1.5 ms, max 3.4 ms late; 2 stalls > 1 ms in 0.1 s (4.7% of the time)"
    );
    assert_eq!(
        a.short(),
        "p99 1.5 ms, max 3.4 ms, 2 stalls > 1 ms, 4.7% stalled"
    );

    // Merged from nothing, then with a quiet 0.9 s of 900 wake-ups at 20 µs: the
    // p99 of the pooled wake-ups is now a quiet one.
    let b = report_of(&[20; 900], 0.9);
    let mut sum = StallReport::default();
    sum.merge(&a);
    assert_eq!(sum, a);
    sum.merge(&b);
    assert_eq!(sum.cpu, Some(1));
    assert_eq!(sum.wakeups, 1_000);
    assert_eq!(sum.stalls_over_1ms, 2);
    assert!((sum.seconds - 1.0).abs() < 1e-9);
    assert!((sum.late_max_us - 3_400.0).abs() < 1e-9);
    assert!((sum.late_p50_us - 20.0).abs() < 0.1, "{sum:?}");
    assert!((sum.late_p99_us - 50.0).abs() < 0.1, "{sum:?}");
    assert!((sum.stalled_share - 0.0047).abs() < 1e-9, "{sum:?}");

    // Read back from JSON: no histogram, so the p99 is the larger one (a bound).
    let json = serde_json::to_string(&a).unwrap();
    assert!(!json.contains("late\""), "{json}");
    let back: StallReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
    let mut approx = back.clone();
    approx.merge(&b.without_histogram());
    assert_eq!(approx.wakeups, 1_000);
    assert!((approx.late_p99_us - 1_500.0).abs() < 2.0, "{approx:?}");
    assert!((approx.late_p50_us - (50.0 * 100.0 + 20.0 * 900.0) / 1_000.0).abs() < 0.1);
    assert!(format!("{approx:?}").contains("Lateness(none)"));
}

#[test]
fn latenesses_read_as_people_write_them() {
    assert_eq!(fmt_late(55.2), "55 µs");
    assert_eq!(fmt_late(999.0), "999 µs");
    assert_eq!(fmt_late(1_000.0), "1 ms");
    assert_eq!(fmt_late(1_234.0), "1.2 ms");
    assert_eq!(fmt_late(14_000.0), "14 ms");
    assert_eq!(fmt_late(1_250_000.0), "1.25 s");
    assert_eq!(percent(0.013), "1.3%");
    assert_eq!(percent(0.0002), "0.02%");
    assert_eq!(percent(0.0), "0.0%");
    assert_eq!(
        StallReport::default().to_string(),
        "no wake-ups measured in 0.0 s"
    );
}
