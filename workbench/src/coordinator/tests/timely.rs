//! A point ends when its answer is settled or hopeless, not at its limit: a share touched
//! that hovers at the bound is called by a set time, a dependence whose need lies beyond
//! the limit ends N/A at the looks that show it, and looks whose stop cannot fit end it at
//! once; each N/A says what more time would buy.

use super::*;
use crate::coordinator::check_next::Ending;
use crate::coordinator::{CalledBy, TouchedCall, TouchedSide, WithoutStalls};

/// A point asked for the tail without stalls within 10 µs (some 40 s of untouched
/// requests at 2,000 req/s, so that the share is read before the tail settles), on a host
/// that takes `stall_us` (± all of it, drawn) of every 20 ms: about a quarter of the
/// requests touched, the share's interval straddling 25% for minutes.
fn hovering(seed: u64, stall_us: f64) -> (PointResult, Vec<Event>) {
    let mut asked = vernier();
    asked.ci.tail = Tail::WithoutStalls;
    asked.ci.width = CiWidth::Absolute(Duration::from_micros(10));
    asked.limits.max_duration = Duration::from_secs(120);
    let mut c = Coordinator::new(asked, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(seed, exp_latency(50.0));
    agent.host_stall = (1, stall_us);
    agent.host_stall_spread = 1.0;
    let events = drive(&mut c, &mut agent, Duration::from_secs(300));
    (c.results()[0].clone(), events)
}

/// The tail without stalls of `result` and its share's call, asserted made on `side` by
/// the estimate.
fn called(result: &PointResult, side: TouchedSide) -> (&WithoutStalls, TouchedCall) {
    let w = result.without_stalls.as_ref().unwrap();
    let call = w.touched_call.expect("the share was called");
    assert_eq!((call.side, call.by), (side, CalledBy::Estimate), "{w:?}");
    (w, call)
}

/// A share touched near the bound is called by its estimate once the set time has passed
/// (`policy::TOUCHED_CALL_AFTER_S`): over, the point ends then, N/A `touched` for the tail
/// without stalls and every request's tail judged on what it holds; under, the tail asked
/// for drives the looks to its stop whatever the share's estimate does next. Before, the
/// looks went to whichever tail the share's estimate at each look picked.
#[test]
fn a_share_touched_at_the_bound_is_called_by_a_set_time_and_the_tail_asked_drives_the_stop() {
    // Over: 25.1% touched, its interval [24.3, 25.9] at 20 s.
    let (over, events) = hovering(46, 4_550.0);
    let (w, call) = called(&over, TouchedSide::Over);
    assert!(call.low <= 0.25 && call.high >= 0.25, "{call:?}");
    assert!((0.24..0.26).contains(&w.touched_share), "{w:?}");
    assert!(
        matches!(w.short, Some(crate::coordinator::Why::Touched(_))),
        "{w:?}"
    );
    assert_eq!(over.answer(), Verdict::NotAvailable);
    // At the call, not at the limit: warm-up, the inter-arrival gaps, 20 s of requests.
    assert!(over.duration_s < 30.0, "{}", over.duration_s);
    let ended = checks(&events, CheckKind::Confidence);
    assert!(
        ended
            .iter()
            .any(|c| !c.pass && c.statistic == Some(call.share)),
        "{ended:#?}"
    );
    // Every request's tail, stall-bound, cannot narrow to 10 µs: N/A saying how long.
    assert_eq!(over.verdict, Verdict::NotAvailable);
    assert!(over.more_time_s.is_some_and(|s| s > 120.0), "{over:#?}");

    // Under: 25.0% touched, [24.0, 26.0] at 20 s; the tail without stalls stops on its
    // own and is the answer, though the share at the end reads 25.2%.
    let (under, _) = hovering(48, 4_650.0);
    let (w, _) = called(&under, TouchedSide::Under);
    assert_eq!(w.verdict, Verdict::Converged, "{w:?}");
    assert_eq!(under.answer(), Verdict::Converged);
    assert!(w.ci_width_us.unwrap() <= 10.0, "{w:?}");
    assert!(under.duration_s < 60.0, "{}", under.duration_s);
}

/// A point asked for every request's p99 within `width` of its value, limited to
/// `limit_s`, at `rate` from `agent`, driven to its end.
fn every_request(
    width: f64,
    limit_s: u64,
    rate: f64,
    mut agent: FakeAgent,
) -> (PointResult, Vec<Event>) {
    let mut asked = vernier();
    asked.ci.width = CiWidth::Relative(width);
    asked.limits.max_duration = Duration::from_secs(limit_s);
    let mut c = Coordinator::new(asked, &LoadPlan::Fixed(rate));
    let events = drive(&mut c, &mut agent, Duration::from_secs(2 * limit_s));
    (c.results()[0].clone(), events)
}

/// Latency with a dependence that lasts: an exponential (mean 50 µs) plus an offset that
/// wanders (AR(1), time constant `tau_s` at `rate`, standard deviation `sigma_us`).
fn wandering(tau_s: f64, sigma_us: f64, rate: f64) -> impl FnMut(f64, &mut SmallRng, f64) -> f64 {
    let phi = (-1.0 / (tau_s * rate)).exp();
    let mut offset = 0.0f64;
    move |_, rng, _| {
        // Box-Muller: a standard normal from two uniforms.
        let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        offset = phi * offset + sigma_us * (1.0 - phi * phi).sqrt() * z;
        (-50.0 * (1.0 - rng.random::<f64>()).ln() + offset).max(0.1)
    }
}

/// A dependence whose p99 needs some 6 million samples (10,000 req/s, a 5-minute limit
/// that holds 2.7 million): within ten times the limit, so no single look ends the point,
/// and the looks used to go on to the last whose stop fitted (227 s). Two looks in a row
/// that plan the stop beyond the limit end it N/A, with the time the samples would take.
#[test]
fn a_dependence_that_needs_millions_more_than_the_limit_holds_ends_at_the_looks_that_show_it() {
    let agent = FakeAgent::new(51, wandering(0.3, 400.0, 10_000.0));
    let (result, events) = every_request(0.2, 300, 10_000.0, agent);
    let result = &result;
    assert_eq!(result.verdict, Verdict::NotAvailable, "{result:#?}");
    assert!(result.duration_s < 150.0, "{}", result.duration_s);
    let reason = &result.reasons[0];
    assert!(reason.kind().more_samples_help(), "{reason:?}");
    let more = reason.more_time.expect("what more time would buy");
    // Millions of samples, minutes beyond what was left.
    assert!(more.samples > 4_000_000, "{more:?}");
    assert!(more.seconds > 300.0 - result.duration_s, "{more:?}");
    assert_eq!(result.more_time_s, Some(more.seconds.get()));
    // The last two looks each planned the stop beyond the limit.
    let looks = checks(&events, CheckKind::Confidence);
    assert!(
        looks.len() >= 2 && looks.iter().all(|k| !k.pass),
        "{looks:#?}"
    );
}

/// Looks whose stop cannot fit in the time left end the point at once: p99 of an
/// exponential within 2% needs some 300,000 samples, where 60 s at 2,000 req/s hold about
/// 105,000. The looks used to go on until none was left whose stop fitted (42.5 s). The CI
/// is valid, only wide: that is the answer.
#[test]
fn looks_whose_stop_cannot_fit_in_the_time_left_end_the_point_at_once() {
    let agent = FakeAgent::new(61, exp_latency(50.0));
    let (result, events) = every_request(0.02, 60, 2_000.0, agent);
    let result = &result;
    assert_eq!(result.verdict, Verdict::Wide);
    // Warm-up, the gaps, and two looks: on 10,000 and 20,000 samples.
    assert!(result.duration_s < 20.0, "{}", result.duration_s);
    assert_eq!(checks(&events, CheckKind::Confidence).len(), 2);
    let more = result.more_time_s.expect("what more time would buy");
    let needed = result.reasons[0]
        .more_time
        .map(|m| m.samples as f64)
        .unwrap();
    assert!((200_000.0..600_000.0).contains(&needed), "{needed}");
    let predicted = (needed - result.samples as f64) / 2_000.0;
    assert!(
        (more - predicted).abs() < 0.1 * predicted,
        "{more} against {predicted}"
    );
}

/// The tail asked for is the answer, and so is its figure: a tail without stalls still
/// wide at the end answers wide, and says what more time would buy it (its own need, not every
/// request's, which the stalls make far larger), and the point's `more_time_s` is that.
#[test]
fn an_unsettled_tail_without_stalls_says_what_more_time_would_buy_it() {
    let mut asked = vernier();
    asked.ci.tail = Tail::WithoutStalls;
    asked.ci.width = CiWidth::Absolute(Duration::from_micros(8));
    asked.limits.max_duration = Duration::from_secs(30);
    let mut c = Coordinator::new(asked, &LoadPlan::Fixed(2_000.0));
    let mut agent = FakeAgent::new(71, exp_latency(50.0));
    // 3 ms taken away every 200 ms: 1.5% of the requests touched.
    agent.host_stall = (10, 3_000.0);
    drive(&mut c, &mut agent, Duration::from_secs(60));
    let result = &c.results()[0];
    let w = result.without_stalls.as_ref().unwrap();
    assert_eq!(result.answer(), Verdict::Wide, "{w:?}");
    assert_eq!(w.verdict, Verdict::Wide, "{w:?}");
    let more = w.more_time.unwrap_or_else(|| panic!("{w:?}"));
    assert!(more.samples > w.samples && more.seconds > 0.0, "{more:?}");
    assert_eq!(result.more_time_s, Some(more.seconds.get()));
    let whole = result.reasons.iter().find_map(|r| r.more_time);
    assert!(
        whole.is_none_or(|m| m.seconds > more.seconds),
        "{whole:?} {more:?}"
    );
}

/// A latency whose mean alternates between 50 and 100 µs every 10 s (20,000 requests at
/// 2,000 req/s): the p99 drifts, its CI stops shrinking as 1/√n, and the point answers
/// with the CI it has, naming the drift and its windows, saying no time would do (no
/// `more_time_s`). Its looks rest on every request's dependence, so that the CI is mostly
/// too few for (its batches correlated over the half-periods), and the ending at two looks
/// in a row whose CI drifts is not the one reached here.
#[test]
fn a_latency_that_drifts_is_named_and_no_time_is_said_to_do() {
    let agent = FakeAgent::new(81, alternating(20_000, 50.0, 100.0));
    let (result, events) = every_request(0.1, 240, 2_000.0, agent);
    let drift = result.drift.expect("the drift figures");
    assert!(drift.drifting, "{drift:?}");
    assert!(drift.high_us > 1.5 * drift.low_us, "{drift:?}");
    assert_eq!(result.verdict, Verdict::Wide, "{:?}", result.reasons);
    assert_eq!(result.more_time_s, None, "{result:?}");
    let looks = checks(&events, CheckKind::Confidence);
    let last = looks.last().expect("a look");
    assert!(matches!(last.next, Some(CheckNext::Ending(_))), "{last:?}");
    // The windows: the slow half-periods hold the highest p99, the fast ones the lowest.
    assert!(drift.window_s >= 5.0, "{drift:?}");
    assert_ne!(
        (drift.high_at_s / 10.0).floor() as u64 % 2,
        (drift.low_at_s / 10.0).floor() as u64 % 2,
        "{drift:?}"
    );

    // The same service without the alternation does not drift.
    let agent = FakeAgent::new(81, exp_latency(50.0));
    let (steady, _) = every_request(0.03, 60, 2_000.0, agent);
    assert!(
        steady.drift.is_some_and(|d| !d.drifting),
        "{:?}",
        steady.drift
    );
}

/// An exponential latency whose mean alternates between `low` and `high` every `half`
/// requests.
fn alternating(half: u64, low: f64, high: f64) -> impl FnMut(f64, &mut SmallRng, f64) -> f64 {
    let mut requests = 0u64;
    move |_, rng, _| {
        requests += 1;
        let mean = if (requests / half).is_multiple_of(2) {
            low
        } else {
            high
        };
        -mean * (1.0 - rng.random::<f64>()).ln()
    }
}

/// Latency of mean 50 µs for its first 40,000 requests (20 s at 2,000 req/s), then a
/// mean alternating between `low` and `high` every 20,000 (10 s): the looks of the first
/// 20 s earn a valid CI, and the later ones, their batches correlated over the half-periods,
/// have none.
fn steady_then_alternating(low: f64, high: f64) -> impl FnMut(f64, &mut SmallRng, f64) -> f64 {
    let mut requests = 0u64;
    move |_, rng, _| {
        requests += 1;
        let mean = if requests < 40_000 {
            50.0
        } else if (requests / 20_000).is_multiple_of(2) {
            low
        } else {
            high
        };
        -mean * (1.0 - rng.random::<f64>()).ln()
    }
}

/// A point that ends on a look without a CI answers with the CI an earlier look earned
/// when that CI holds the ending look's estimate (here wide: 21.7 µs against 11.3 asked,
/// so `wide`, its value and CI the earned look's), and is N/A when the estimate has moved
/// out of it (35/65 µs: 248.0 µs, beyond the earned [210.3, 235.2]), saying so either way,
/// and that more time would not do (the latency drifts).
#[test]
fn a_point_without_a_ci_at_its_end_answers_with_the_ci_it_earned_if_that_holds_the_end() {
    let agent = FakeAgent::new(1, steady_then_alternating(40.0, 60.0));
    let (result, events) = every_request(0.05, 60, 2_000.0, agent);
    let earned = result.earned.expect("the earned look");
    assert!(earned.answers, "{earned:?}");
    assert!(earned.samples < earned.ending_samples, "{earned:?}");
    assert!(earned.low_us <= earned.ending_value_us && earned.ending_value_us <= earned.high_us);
    assert_eq!(result.verdict, Verdict::Wide, "{:?}", result.reasons);
    assert_eq!(result.answer(), Verdict::Wide);
    let target = result.target().expect("the target percentile");
    assert_eq!(
        (target.value, target.ci_low, target.ci_high),
        (earned.value_us, Some(earned.low_us), Some(earned.high_us))
    );
    let Why::Confidence(Confidence::Wide(wide)) = &result.reasons[0].why else {
        panic!("{:?}", result.reasons);
    };
    assert_eq!(wide.samples, earned.samples);
    let looks = checks(&events, CheckKind::Confidence);
    let last = looks.last().expect("a look");
    assert_eq!(
        last.next,
        Some(CheckNext::Ending(Ending::Earlier {
            look: earned.look,
            samples: earned.samples
        }))
    );

    let agent = FakeAgent::new(1, steady_then_alternating(35.0, 65.0));
    let (result, _) = every_request(0.05, 60, 2_000.0, agent);
    let earned = result.earned.expect("the earned look");
    assert!(!earned.answers, "{earned:?}");
    assert!(
        earned.ending_value_us > earned.high_us || earned.ending_value_us < earned.low_us,
        "{earned:?}"
    );
    assert_eq!(
        result.verdict,
        Verdict::NotAvailable,
        "{:?}",
        result.reasons
    );
    // The latency drifts: its reason's need is one no time would meet, and says so.
    assert!(
        result.drift.is_some_and(|d| d.drifting),
        "{:?}",
        result.drift
    );
    let reason = &result.reasons[0];
    assert!(reason.drifts && reason.more_time.is_none(), "{reason:?}");
    assert!(
        reason.detail().contains("no time would bring"),
        "{}",
        reason.detail()
    );
    let words = crate::coordinator::text::earned(&earned);
    assert!(words.contains("the latency moved"), "{words}");
}

/// A point ended by two drifting looks in a row is wide with the need its last look
/// predicted at 1/√n, and says that no time would meet it (no `more_time`): a mean
/// alternating between 50 and 70 µs every 10,000 requests (5 s at 2,000 req/s).
#[test]
fn a_point_ended_by_its_drift_says_its_need_is_one_no_time_would_meet() {
    let agent = FakeAgent::new(1, alternating(10_000, 50.0, 70.0));
    let (result, events) = every_request(0.1, 60, 2_000.0, agent);
    let looks = checks(&events, CheckKind::Confidence);
    let last = looks.last().expect("a look");
    assert_eq!(
        last.next,
        Some(CheckNext::Ending(Ending::Drifts)),
        "{last:?}"
    );
    assert_eq!(result.verdict, Verdict::Wide, "{:?}", result.reasons);
    let reason = &result.reasons[0];
    assert!(
        matches!(reason.why, Why::Confidence(Confidence::Wide(_))),
        "{reason:?}"
    );
    assert!(reason.drifts && reason.more_time.is_none(), "{reason:?}");
    assert!(
        reason.detail().contains("no time would"),
        "{}",
        reason.detail()
    );
    assert_eq!(result.more_time_s, None);
}
