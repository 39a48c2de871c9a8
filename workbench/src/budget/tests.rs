use std::time::Duration;

use vernier_agent::StallReport;
use vernier_protocols::Dist;
use vernier_stats::Percentile;

use super::grid::median_of_sum;
use super::parts::NO_MODEL;
use super::queue::Model;
use super::*;
use crate::coordinator::{PercentileResult, PointResult, Verdict};

/// A probe's report of `seconds` on `cpu` with `stalls` wake-ups over 1 ms late and
/// `share` of the time lost beyond 100 µs.
fn probe(cpu: Option<usize>, seconds: f64, stalls: u64, share: f64) -> StallReport {
    let mut r = StallReport::default();
    r.cpu = cpu;
    r.realtime = true;
    r.period_us = 1000.0;
    r.seconds = seconds;
    r.wakeups = (seconds * 1000.0) as u64;
    r.late_p50_us = 50.0;
    r.late_max_us = if stalls > 0 { 4_000.0 } else { 90.0 };
    r.stalls_over_1ms = stalls;
    r.stalled_share = share;
    r
}

/// A point at `rate` whose p50 is `p50` with the CI `ci`, its host seen by `host`.
fn point(rate: f64, p50: f64, ci: Option<(f64, f64)>, host: Vec<StallReport>) -> PointResult {
    PointResult {
        target_percentile: Percentile::P50,
        host,
        ..PointResult::example(
            rate,
            Verdict::Converged,
            vec![
                PercentileResult::example(50.0, p50, ci),
                PercentileResult::example(99.0, 3.0 * p50, None),
            ],
        )
    }
}

fn baseline(service: &str) -> Baseline {
    Baseline::given(
        Part::known(6.0, "ping-pong"),
        Part::known(1.0, "calibrated"),
        Ok(service.parse().unwrap()),
        0,
    )
}

#[test]
fn the_parts_of_a_synthetic_point_add_up_to_its_median() {
    // Fixed 20 µs at 5,000 req/s: load 0.1, and the ideal median is the service time
    // itself (nine requests in ten find the server idle).
    let quiet = vec![probe(Some(1), 10.0, 0, 0.0), probe(None, 10.0, 0, 0.0)];
    let b = baseline("fixed:20us").budget(
        &point(5000.0, 27.4, Some((26.8, 28.0)), quiet),
        During::default(),
    );
    assert_eq!(b.p, 50.0);
    assert_eq!(b.measured_us, Some(27.4));
    assert_eq!(b.ci_us, Some((26.8, 28.0)));
    assert_eq!(b.floor.us, Some(6.0));
    assert_eq!(b.client.us, Some(1.0));
    assert_eq!(b.host.part.us, Some(0.0));
    assert_eq!(b.host.requests_share, Some(0.0));
    assert!((b.model.us.unwrap() - 20.0).abs() < 0.01, "{b:?}");
    assert!(
        b.model.how.contains("fixed:20us at 5000 req/s, load 0.10"),
        "{}",
        b.model.how
    );
    // By difference: the measurement less floor, client and host.
    assert!((b.remains.us.unwrap() - 20.4).abs() < 1e-9, "{b:?}");
    assert!((b.sum_us().unwrap() - 27.0).abs() < 0.01);
    assert!((b.unexplained_us().unwrap() - 0.4).abs() < 0.01);
    assert_eq!(b.adds_up(), Some(true));
    assert_eq!(
        b.summary(),
        "p50 27.4 [26.8, 28.0] µs; parts 27.0 µs, within the CI"
    );
    assert_eq!(
        b.line(),
        "floor 6.0 µs, client 1.0 µs, host 0.0 µs, server (model) 20.0 µs; p50 27.4 [26.8, 28.0] µs; parts 27.0 µs, within the CI"
    );
    // Outside the CI, the summary says by how much.
    let slow = baseline("fixed:20us").budget(
        &point(
            5000.0,
            35.0,
            Some((34.0, 36.0)),
            vec![probe(Some(1), 10.0, 0, 0.0)],
        ),
        During::default(),
    );
    assert_eq!(slow.adds_up(), Some(false));
    assert!(
        slow.summary()
            .ends_with("parts 27.0 µs, +8.0 µs unexplained"),
        "{}",
        slow.summary()
    );
}

#[test]
fn what_cannot_be_measured_is_unknown_with_the_reason() {
    let remote = Baseline::given(
        Part::unknown("the agents run on other hosts"),
        Part::unknown("the agents run on other hosts"),
        Err(NO_MODEL.replace("WORKLOAD", "key-value")),
        0,
    );
    let b = remote.budget(
        &point(10_000.0, 40.0, Some((39.0, 41.0)), vec![]),
        During::default(),
    );
    assert_eq!(b.floor.us, None);
    assert_eq!(b.floor.text(), "unknown");
    assert_eq!(b.model.us, None);
    assert!(
        b.model.how.contains("key-value server's service time"),
        "{}",
        b.model.how
    );
    // No probe ran: the host is unknown, not zero.
    assert_eq!(b.host.part.us, None);
    assert!(
        b.host.part.how.contains("no stall probe ran"),
        "{:?}",
        b.host
    );
    assert_eq!(b.remains.us, None);
    assert_eq!((b.sum_us(), b.adds_up()), (None, None));
    assert_eq!(
        b.summary(),
        "p50 40.0 [39.0, 41.0] µs; parts unknown: floor, client, host, server (model)"
    );
    // Stalls seen, but no distribution to tell how far they move the median: the share and
    // the size are known, the µs are not.
    let stalled = vec![probe(Some(1), 10.0, 20, 0.01)];
    let b = remote.budget(&point(10_000.0, 40.0, None, stalled), During::default());
    assert_eq!(b.host.part.us, None);
    assert!(b.host.requests_share.unwrap() > 0.01);
    assert_eq!(b.host.stalls, 20);
    assert!(
        b.host.part.how.contains("needs the ideal model"),
        "{}",
        b.host.part.how
    );
    // A point without a p50 has nothing to split.
    let mut none = point(10_000.0, 40.0, None, vec![]);
    none.percentiles.remove(0);
    let b = remote.budget(&none, During::default());
    assert_eq!(b.measured_us, None);
    assert_eq!(b.summary(), "no p50 reported: nothing to split");
}

#[test]
fn stalls_count_the_requests_whose_window_they_overlap() {
    // 20 stalls and 100 ms lost in 10 s on the workers' core; the coordinator's unpinned
    // probe is left out when a pinned one reported.
    let host = vec![probe(Some(1), 10.0, 20, 0.01), probe(None, 10.0, 500, 0.5)];
    let b = baseline("exp:20us").budget(
        &point(5000.0, 40.0, Some((39.0, 41.0)), host),
        During::default(),
    );
    // (100 ms + 20 × 40 µs) / 10 s.
    let share = (100_000.0 + 20.0 * 40.0) / 10e6;
    assert!(
        (b.host.requests_share.unwrap() - share).abs() < 1e-12,
        "{:?}",
        b.host
    );
    assert_eq!(b.host.stalls, 20);
    assert!((b.host.stall_mean_us.unwrap() - 5_000.0).abs() < 1e-6);
    assert_eq!(b.host.stall_max_us, Some(4_000.0));
    assert!(
        b.host.part.how.starts_with("probes on cpu 1: 1.01%"),
        "{}",
        b.host.part.how
    );
    // The median moves to the model's p50.51: for exp service a fraction of a µs, more
    // than nothing.
    let moved = b.host.part.us.unwrap();
    assert!(moved > 0.05 && moved < 2.0, "{moved}");
    // Half the requests stalled: the median is the stalls', and no model says by how much.
    let b = baseline("exp:20us").budget(
        &point(5000.0, 40.0, None, vec![probe(Some(1), 1.0, 10, 0.6)]),
        During::default(),
    );
    assert_eq!(b.host.part.us, None);
    assert!(
        b.host.part.how.contains("half the requests or more"),
        "{}",
        b.host.part.how
    );
}

#[test]
fn a_model_beyond_capacity_is_unknown_not_infinite() {
    let b = baseline("fixed:20us").budget(&point(60_000.0, 500.0, None, vec![]), During::default());
    assert_eq!(b.model.us, None);
    assert!(
        b.model.how.contains("no ideal model at 60000 req/s"),
        "{}",
        b.model.how
    );
}

#[test]
fn the_model_quantile_is_linear_between_ccdf_levels() {
    let m = Model {
        service: Dist::fixed(Duration::from_micros(10)),
        load: 0.5,
        p50: 20.0,
        waits: Vec::new(),
        ccdf: vec![(10.0, 1.0), (20.0, 0.5), (40.0, 0.1)],
    };
    assert_eq!(m.quantile(0.5), Some(20.0));
    assert!((m.quantile(0.7).unwrap() - 30.0).abs() < 1e-9);
    assert_eq!(m.quantile(0.0), Some(10.0));
    assert_eq!(m.quantile(0.95), None);
}

#[test]
fn a_result_without_a_budget_still_loads_and_one_with_it_round_trips() {
    let mut result = point(
        5000.0,
        27.4,
        Some((26.8, 28.0)),
        vec![probe(Some(1), 10.0, 0, 0.0)],
    );
    let old = serde_json::to_value(&result).unwrap();
    assert!(old.get("budget").is_none(), "{old}");
    let back: PointResult = serde_json::from_value(old).unwrap();
    assert_eq!(back.budget, None);
    result.budget = Some(baseline("fixed:20us").budget(&result, During::default()));
    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["budget"]["floor"]["us"], 6.0, "{json}");
    assert_eq!(json["budget"]["host"]["requests_share"], 0.0, "{json}");
    let back: PointResult = serde_json::from_value(json).unwrap();
    assert_eq!(back, result);
}

#[test]
fn the_server_is_added_to_the_path_request_by_request() {
    let quiet = || vec![probe(Some(1), 10.0, 0, 0.0)];
    // A constant path: the server's part is the model's p50 itself.
    let constant = baseline("fixed:20us").with_path(vec![4.5; GRID]);
    let b = constant.budget(
        &point(5000.0, 24.5, Some((24.4, 24.6)), quiet()),
        During::default(),
    );
    assert!((b.model.us.unwrap() - 20.0).abs() < 1e-9, "{:?}", b.model);
    assert!(b.model.how.contains("median 4.50 µs"), "{}", b.model.how);
    // A path whose slowest tenth takes 30 µs: fixed service still adds its 20 µs, but an
    // exponential one (the model's p50 15.3 µs) moves the median by more than its own p50.
    let path: Vec<f64> = (0..GRID)
        .map(|i| if i < 900 { 4.5 } else { 30.0 })
        .collect();
    let fixed = baseline("fixed:20us").with_path(path.clone());
    let b = fixed.budget(&point(5000.0, 24.5, None, quiet()), During::default());
    assert!((b.model.us.unwrap() - 20.0).abs() < 1e-9, "{:?}", b.model);
    let alone = baseline("exp:20us").budget(&point(5000.0, 24.5, None, quiet()), During::default());
    let spread = baseline("exp:20us").with_path(path);
    let b = spread.budget(&point(5000.0, 24.5, None, quiet()), During::default());
    let (model_p50, added) = (alone.model.us.unwrap(), b.model.us.unwrap());
    assert!((model_p50 - 15.4).abs() < 0.3, "{model_p50}");
    assert!(
        added > model_p50 + 0.5 && added < model_p50 + 5.0,
        "{added} against {model_p50}"
    );
}

#[test]
fn the_median_of_a_sum_is_taken_over_every_pair() {
    assert_eq!(median_of_sum(&[0.0], &[1.0, 2.0, 3.0]), 2.0);
    assert_eq!(median_of_sum(&[10.0, 20.0, 30.0], &[1.0, 2.0, 3.0]), 22.0);
    assert!(median_of_sum(&[], &[1.0]).is_nan());
}

/// What a point met: the path probe's `window` only.
fn probed(window: ProbeWindow) -> During {
    During {
        probe: Some(window),
        ..During::default()
    }
}

/// A probe window whose p50 is `p50` with the CI `ci`, its latencies all `p50`.
fn window(p50: f64, ci: Option<(f64, f64)>) -> ProbeWindow {
    ProbeWindow {
        rate: 1000.0,
        connections: 2,
        requests: 10_000,
        p50_us: p50,
        ci_us: ci,
        ci_how: "given".into(),
        grid: vec![p50; GRID],
    }
}

#[test]
fn the_path_probe_moves_the_calibration_to_the_path_the_point_met() {
    let quiet = || vec![probe(Some(1), 10.0, 0, 0.0)];
    // Calibrated at 6 + 1 = 7 µs at the run's start; during the point the path took 7.6
    // (the probe's p50, its waits behind the load taken out by the model: at load 0.1, nine
    // in ten find the server idle, so the median wait is 0).
    let calibrated = baseline("fixed:20us").with_path(vec![7.0; GRID]);
    let measured = point(5000.0, 27.6, Some((27.5, 27.7)), quiet());
    let stale = calibrated.budget(&measured, During::default());
    assert_eq!(stale.adds_up(), Some(false), "{}", stale.summary());
    assert_eq!(stale.sum_ci_us, None);

    let b = calibrated.budget(&measured, probed(window(7.6, Some((7.5, 7.7)))));
    // The client stays as calibrated; the path's move is a part of its own.
    assert_eq!(b.client, calibrated.client);
    let moved = b.path_moved.clone().expect("the path's move");
    assert!((moved.us.unwrap() - 0.6).abs() < 1e-9, "{moved:?}");
    assert!(moved.how.contains("moved by +0.60 µs"), "{}", moved.how);
    assert!(moved.how.contains("10000 answered"), "{}", moved.how);
    assert_eq!(b.parts()[2].0, "path moved");
    assert_eq!(b.rows()[2].0, "moved");
    let remains = b.remains.us.unwrap();
    assert!(
        (remains - (27.6 - 6.0 - 1.0 - 0.6 - 0.0)).abs() < 1e-9,
        "{remains}"
    );
    let sum = b.sum_us().unwrap();
    assert!((sum - 27.6).abs() < 1e-6, "{sum}");
    let (lo, hi) = b.sum_ci_us.unwrap();
    assert!(
        (lo - 27.5).abs() < 1e-6 && (hi - 27.7).abs() < 1e-6,
        "{lo} {hi}"
    );
    assert_eq!(b.adds_up(), Some(true), "{}", b.summary());
    assert!(
        b.summary()
            .ends_with("parts 27.6 [27.5, 27.7] µs, within the CIs"),
        "{}",
        b.summary()
    );
    assert_eq!(b.probe.as_ref().map(|w| w.requests), Some(10_000));

    // Both CIs count, their half-widths (0.1 and 0.2 µs) added in quadrature: 0.22 µs.
    let apart = |m: f64| {
        calibrated
            .budget(
                &point(5000.0, m, Some((m - 0.1, m + 0.1)), quiet()),
                probed(window(7.6, Some((7.4, 7.8)))),
            )
            .adds_up()
    };
    assert_eq!(apart(27.8), Some(true));
    assert_eq!(apart(27.85), Some(false));
    assert_eq!(apart(27.4), Some(true));
    assert_eq!(apart(27.35), Some(false));
}

#[test]
fn the_probe_takes_out_the_model_s_wait_at_a_busy_server() {
    // At load 0.6 most probe requests wait behind the load: their p50 is the path's plus
    // the model's median wait, and the path has not moved.
    let calibrated = baseline("fixed:20us").with_path(vec![7.0; GRID]);
    let idle = calibrated.budget(
        &point(30_000.0, 40.0, None, vec![]),
        probed(window(7.0, None)),
    );
    let shift = idle.path_moved.unwrap().us.unwrap();
    assert!(shift < -1.0, "the probe's own wait is taken out: {shift}");
    let model = calibrated.model(30_000.0).unwrap();
    let waited = median_of_sum(&[7.0], &model.waits);
    let b = calibrated.budget(
        &point(30_000.0, 40.0, None, vec![]),
        probed(window(waited, None)),
    );
    let moved = b.path_moved.unwrap();
    assert!(moved.us.unwrap().abs() < 1e-9, "{moved:?}");
    // No CI on the probe: the sum has none either.
    assert_eq!(b.sum_ci_us, None);
}

#[test]
fn a_probe_without_a_model_or_a_calibration_is_reported_unused() {
    let no_model = Baseline::given(
        Part::known(6.0, "ping-pong"),
        Part::known(1.0, "calibrated"),
        Err("no ideal model: the key-value server's".into()),
        0,
    )
    .with_path(vec![7.0; GRID]);
    let b = no_model.budget(
        &point(5000.0, 30.0, None, vec![]),
        probed(window(7.6, None)),
    );
    assert_eq!(b.client.us, Some(1.0));
    assert_eq!(b.path_moved, None);
    assert!(
        b.client
            .how
            .contains("the path probe was not used: no ideal model"),
        "{}",
        b.client.how
    );
    let no_path = baseline("fixed:20us");
    let b = no_path.budget(
        &point(5000.0, 30.0, None, vec![]),
        probed(window(7.6, None)),
    );
    assert_eq!(b.client.us, Some(1.0));
    assert!(
        b.client.how.contains("kept no latencies"),
        "{}",
        b.client.how
    );
}

#[test]
fn a_probe_window_has_the_p50_of_its_samples_and_a_ci_around_it() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
    // 20,000 requests, latencies 5–7 µs uniform, in the order sent.
    let samples: Vec<u64> = (0..20_000)
        .map(|_| rng.random_range(5_000..7_000))
        .collect();
    let w = ProbeWindow::from_latencies(1000.0, 1, &samples).unwrap();
    assert_eq!(w.requests, 20_000);
    assert!((w.p50_us - 6.0).abs() < 0.05, "{}", w.p50_us);
    let (lo, hi) = w.ci_us.unwrap();
    assert!(
        lo <= w.p50_us && w.p50_us <= hi && hi - lo < 0.1,
        "{lo} {hi}"
    );
    assert_eq!(w.grid.len(), GRID);
    assert!(w.grid.windows(2).all(|p| p[0] <= p[1]));
    assert!(w.grid[0] >= 5.0 && w.grid[GRID - 1] < 7.0);
    assert!(ProbeWindow::from_latencies(1000.0, 1, &samples[..2]).is_none());
}

#[test]
fn the_server_is_fed_the_requests_as_they_were_sent_when_every_one_was_kept() {
    // 2,000 sends 1 ms apart, every other one carrying two requests: a third of the
    // requests wait a whole 20 µs service behind their twin, which Poisson arrivals at
    // 3,000 req/s (load 0.06) would not make them do.
    let departures: Vec<u64> = (0..2_000u64)
        .flat_map(|i| {
            let t = i * 1_000_000;
            if i % 2 == 0 { vec![t, t] } else { vec![t] }
        })
        .collect();
    let b = baseline("fixed:20us");
    let m = b.model(3_000.0).unwrap();
    let q = b.sent_queue(&m, &departures).unwrap();
    assert_eq!(q.sojourns.len(), GRID);
    assert!((q.sojourns[100] - 20.0).abs() < 1e-6, "{}", q.sojourns[100]);
    assert!((q.sojourns[900] - 40.0).abs() < 1e-6, "{}", q.sojourns[900]);
    // Work is left 40 µs after each pair, 20 after each single: 3% of the time.
    let busy = q.waits.iter().filter(|&&w| w > 0.0).count();
    assert!((15..=45).contains(&busy), "{busy} of {GRID}");
    assert!(
        q.how.contains("the 3000 requests of the point"),
        "{}",
        q.how
    );

    let sent = |departures: Vec<u64>| During {
        sent: Some(Ok(departures)),
        ..During::default()
    };
    let mut all = point(3_000.0, 27.0, None, vec![]);
    all.sampling_rate = 1.0;
    let budget = b.budget(&all, sent(departures.clone()));
    assert!(
        budget.model.how.contains("fed the arrivals as sent"),
        "{}",
        budget.model.how
    );
    assert!(
        budget
            .model
            .how
            .contains("Poisson arrivals at the same rate would give"),
        "{}",
        budget.model.how
    );
    // Thinned samples do not show the bunching: the Poisson queue, saying why.
    let mut thinned = all.clone();
    thinned.sampling_rate = 0.25;
    let budget = b.budget(&thinned, sent(departures));
    assert!(
        budget
            .model
            .how
            .contains("Poisson arrivals (the M/G/1 model"),
        "{}",
        budget.model.how
    );
    assert!(
        budget.model.how.contains("kept 1 request in 4"),
        "{}",
        budget.model.how
    );
    // Sent faster than the model fed them as sent was checked at: the Poisson queue,
    // saying why.
    let fast: Vec<u64> = (0..3_000u64).map(|i| i * 200_000).collect();
    let budget = b.budget(&all, sent(fast));
    assert!(
        budget
            .model
            .how
            .contains("the point sent 5000 req/s, beyond the 2000 a second"),
        "{}",
        budget.model.how
    );
    // Too few to say anything.
    let budget = b.budget(&all, sent(vec![1, 2, 3]));
    assert!(
        budget.model.how.contains("3 departures are too few"),
        "{}",
        budget.model.how
    );
}

#[test]
fn the_probe_measures_the_queue_beyond_the_ideal_model() {
    // Exponential service at 5,000 req/s (load 0.1): half the probes waited 10 µs, far
    // more than the model's tenth: the load's median is the probes' latencies plus the
    // service time, and what that holds beyond the ideal is the queue the model misses.
    let calibrated = baseline("exp:20us").with_path(vec![7.0; GRID]);
    let mut w = window(7.0, Some((6.9, 7.1)));
    w.grid = (0..GRID)
        .map(|i| if i < GRID / 2 { 7.0 } else { 17.0 })
        .collect();
    let b = calibrated.budget(
        &point(
            5000.0,
            30.0,
            Some((29.5, 30.5)),
            vec![probe(Some(1), 10.0, 0, 0.0)],
        ),
        probed(w.clone()),
    );
    let queue = b.queue.clone().expect("a queue part with the probe");
    let service = calibrated.service_grid(&calibrated.model(5000.0).unwrap());
    let predicted = median_of_sum(&w.grid, &service);
    assert!(queue.us.unwrap() > 1.0, "{queue:?}");
    assert!(
        (b.sum_us().unwrap() - predicted).abs() < 1e-6,
        "{} against {predicted}",
        b.sum_us().unwrap()
    );
    assert!(
        queue.how.contains("beyond the ideal model"),
        "{}",
        queue.how
    );
    assert_eq!(b.parts().len(), 6);
    assert_eq!(b.rows()[5].0, "queue");
    // Probes that wait as the model says leave no queue beyond it.
    let model = calibrated.model(5000.0).unwrap();
    let mut w = window(7.0, None);
    w.grid = model.waits.iter().map(|x| x + 7.0).collect();
    w.p50_us = median_of_sum(&[7.0], &model.waits);
    let b = calibrated.budget(&point(5000.0, 30.0, None, vec![]), probed(w));
    assert!(b.queue.unwrap().us.unwrap().abs() < 0.2);
    // Without a probe there is no such part, and the sum is the four others'.
    let b = calibrated.budget(&point(5000.0, 30.0, None, vec![]), During::default());
    assert_eq!(b.queue, None);
    assert_eq!(b.parts().len(), 4);
}

#[test]
fn the_sum_carries_the_probe_s_ci_and_the_connections_spread_is_reported() {
    let calibrated = baseline("fixed:20us").with_path(vec![7.0; GRID]);
    let measured = point(
        5000.0,
        27.6,
        Some((27.5, 27.7)),
        vec![probe(Some(1), 10.0, 0, 0.0)],
    );
    // The budget of a point whose load's connections had these (median, standard error).
    let with = |connections: Vec<(f64, f64)>| {
        let during = During {
            probe: Some(window(7.6, Some((7.5, 7.7)))),
            connections,
            ..During::default()
        };
        calibrated.budget(&measured, during)
    };
    // Eight connections whose medians spread with a standard deviation of 0.245 µs. The
    // probe's requests take turns on the same connections, so the spread is a finding,
    // not a term of the sum's CI, which is the probe's p50's.
    let b = with((0..8).map(|i| (24.5 + 0.1 * i as f64, 0.0)).collect());
    let sd = b.connection_sd_us.unwrap();
    assert!((sd - 0.244_949).abs() < 1e-5, "{sd}");
    let sum = b.sum_us().unwrap();
    let (lo, hi) = b.sum_ci_us.unwrap();
    assert!(
        (sum - lo - 0.1).abs() < 1e-6 && (hi - sum - 0.1).abs() < 1e-6,
        "{lo} {sum} {hi}"
    );
    // Two connections say nothing of the spread.
    assert_eq!(with(vec![(24.5, 0.0), (25.0, 0.0)]).connection_sd_us, None);
    // Medians that differ no more than their own sampling errors say: no spread of paths.
    let noisy = (0..8).map(|i| (24.5 + 0.1 * i as f64, 0.3)).collect();
    assert_eq!(with(noisy).connection_sd_us, Some(0.0));
}

#[test]
fn the_server_s_own_account_of_its_service_is_a_part() {
    let calibrated = baseline("fixed:20us").with_path(vec![7.0; GRID]);
    let measured = point(
        5000.0,
        27.7,
        Some((27.5, 27.9)),
        vec![probe(Some(1), 10.0, 0, 0.0)],
    );
    // Every request asked for 20 µs; the server says it served 20.02 µs, and 3% of them
    // 35 µs (the OS took its core mid-spin). Added to a path of 7 µs (the probe's), the
    // median moves by the 0.02 µs of every spin only: 3% is not enough to move it further.
    let asked = vec![20.0; GRID];
    let mut served = vec![20.02; GRID];
    for s in served.iter_mut().skip(GRID - 30) {
        *s = 35.0;
    }
    let during = |served: Vec<f64>, asked: Vec<f64>| During {
        probe: Some(window(7.6, Some((7.5, 7.7)))),
        served: (served, asked),
        ..During::default()
    };
    let b = calibrated.budget(&measured, during(served.clone(), asked.clone()));
    let part = b.served.clone().expect("a served part");
    assert!((part.us.unwrap() - 0.02).abs() < 1e-9, "{part:?}");
    assert!(part.how.contains("median 20.020 µs"), "{}", part.how);
    assert!(part.how.contains("p99 35.00 µs"), "{}", part.how);
    assert!(
        part.how.contains("the path probe's latencies"),
        "{}",
        part.how
    );
    assert_eq!(b.parts().last().unwrap().0, "service beyond");
    assert!(b.rows().iter().any(|r| r.0 == "served"));
    // On a path that varies, a spread of service times moves the median by more than
    // their own: 52% of the paths 6 µs, the rest 8, and a tenth of the services 1 µs
    // longer (their median unmoved) lift the median of the sum from 26 µs to 27.
    let spread = calibrated
        .clone()
        .with_path((0..GRID).map(|i| if i < 520 { 6.0 } else { 8.0 }).collect());
    let mut served = vec![20.0; GRID];
    for s in served.iter_mut().skip(GRID - 100) {
        *s = 21.0;
    }
    let b = spread.budget(
        &measured,
        During {
            served: (served, asked.clone()),
            ..During::default()
        },
    );
    let part = b.served.unwrap();
    assert!(
        part.how.contains("client calibration's latencies"),
        "{}",
        part.how
    );
    assert_eq!(part.us, Some(1.0), "{part:?}");
    // Replies that cannot be the time served: unknown, saying why, never a guess.
    for (served, why) in [
        (vec![0.0; GRID], "0.00 µs against 20.00 µs asked"),
        (vec![1e6; GRID], "and a p50 latency of 27.70 µs"),
    ] {
        let b = calibrated.budget(&measured, during(served, asked.clone()));
        let part = b.served.clone().unwrap();
        assert_eq!(part.us, None);
        assert!(
            part.how.contains("do not read as the time it served"),
            "{}",
            part.how
        );
        assert!(part.how.contains(why), "{}", part.how);
        assert_eq!(b.sum_us(), None);
    }
    // A server that does not say: no such part.
    let b = calibrated.budget(&measured, probed(window(7.6, Some((7.5, 7.7)))));
    assert_eq!(b.served, None);
}
