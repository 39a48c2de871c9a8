//! Tests of `reason`.

use super::*;
use crate::coordinator::policy::STOPPING_RULE;
use vernier_stats::{DependentCi, Step, effective_tail};

/// The demo's 2,000 req/s point at its last look: p99 CI 39.6 µs wide against 88.3
/// asked on 54,361 samples, on enough effective tail samples (inflated 2×: 272, where
/// look 6 needs 84).
fn demo_ci() -> DependentCi {
    DependentCi {
        low: 480.0,
        high: 519.6,
        method: vernier_stats::CiMethod::BatchedIndicator,
        batch_size: 1_000,
        batches: 54,
        variance_inflation: 2.0,
        batch_lag1: 0.0,
    }
}

fn wide(samples_needed: usize) -> Wide {
    Wide {
        p: Percentile::P99,
        ci_width_us: 39.6.into(),
        target_us: 88.3.into(),
        samples: 54_361,
        samples_needed,
        variance_inflation: Some(2.0),
        batch_size: Some(1_000),
        heaviness: None,
        heaviness_inside: None,
        inside: None,
        stalls: None,
    }
}

/// The demo's N/A: `host_stalls`, "the p99 CI is still 39.6 µs wide … needs about 54361
/// samples, beyond the limits", with 54,361 in hand and no more time; or with the
/// confirming look's 67,952. Each contradicts its figures.
#[test]
fn the_demo_s_host_stalls_reason_contradicts_its_figures() {
    for needed in [54_361, 67_952] {
        let reason = Reason::new(Why::HostStalls(HostStalls {
            host: StallReport::default(),
            value_us: 494.0.into(),
            host_late_p99_us: 400.0.into(),
            host_late_max_us: 8_000.0.into(),
            host_stalled_share: 0.005.into(),
            kept: HostKept::Wide(wide(needed)),
        }));
        let found = contradictions(&reason);
        assert!(!found.is_empty(), "{needed}: {}", reason.detail());
        let as_confidence = Reason::new(Why::Confidence(Confidence::Wide(wide(needed))));
        assert!(!contradictions(&as_confidence).is_empty(), "{needed}");
    }
}

/// The same figures through the stopping rule as the point runs it: the look is narrow
/// and steady, its confirmation needs 67,952 samples, which 30 s at 2,000 req/s with
/// some 27 s gone cannot give, and the reason says so, with the time it would take.
#[test]
fn the_demo_s_figures_give_a_narrow_look_awaiting_its_confirmation() {
    let ci = demo_ci();
    let (n, p, target) = (54_361, 0.99, 88.3);
    let look = 6;
    let step = STOPPING_RULE.step(look, n, p, Ok(&ci), target, false);
    assert!(
        matches!(
            step,
            Step::More {
                confirming: true,
                ..
            }
        ),
        "{step:?}"
    );
    let needed = STOPPING_RULE.needed(look, n, p, &ci, target);
    assert_eq!(needed, 67_952);
    // What 3 s more at 2,000 req/s holds: not the confirmation.
    assert_eq!(STOPPING_RULE.within(step, n, n + 6_000), None);
    let narrow = Narrow {
        p: Percentile::P99,
        ci_width_us: ci.width().into(),
        target_us: target.into(),
        samples: n,
        samples_needed: needed,
        look,
        effective_tail: effective_tail(n, p, &ci).into(),
        tail_needed: STOPPING_RULE.tail_needed(look).into(),
        waits: Awaited::Confirmation,
    };
    let mut reason = Reason::new(Why::Confidence(Confidence::Narrow(narrow)));
    // Without the time the confirmation would take, it still says too little.
    assert!(!contradictions(&reason).is_empty());
    reason.more_time = Some(MoreTime {
        samples: needed,
        seconds: ((needed - n) as f64 / 2_000.0).into(),
    });
    assert_eq!(contradictions(&reason), Vec::<String>::new());
    assert_eq!(reason.kind(), ReasonKind::Confidence);
    // Read back from a record as it was written.
    let json = serde_json::to_string(&reason).unwrap();
    let back: Reason = serde_json::from_str(&json).unwrap();
    assert_eq!(back, reason, "{json}");
}

/// Records hold the time limit's reasons in two shapes: in a phase before measuring
/// (`interarrival`, no percentile) and while measuring (`confidence`, with it). Both read
/// back as one type, and write back as they were.
#[test]
fn out_of_time_of_either_shape_reads_back_as_one_type() {
    let before = r#"{"check":"interarrival","figures":{"max_duration_s":30.0,"ci_width_us":12.5},
        "detail":"out of time: max_duration 30s reached in the inter-arrival phase with the CI 12.5 µs wide"}"#;
    let measuring = r#"{"check":"confidence","figures":{"p":99.0,"max_duration_s":30.0},
        "detail":"out of time: max_duration 30s reached in the measurement phase"}"#;
    let read = |json: &str| -> Reason {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
    };
    let out_of_time = |reason: &Reason| -> OutOfTime {
        match &reason.why {
            Why::Interarrival(Interarrival::OutOfTime(t))
            | Why::Confidence(Confidence::OutOfTime(t)) => t.clone(),
            other => panic!("{other:#?}"),
        }
    };
    let (before, measuring) = (read(before), read(measuring));
    assert_eq!(out_of_time(&before).p, None);
    assert_eq!(out_of_time(&before).ci_width_us, Some(12.5));
    assert_eq!(out_of_time(&measuring).p, Some(Percentile::P99));
    assert_eq!(out_of_time(&measuring).max_duration_s, 30.0);
    assert_eq!(
        before.detail(),
        "out of time: max_duration 30s reached in the inter-arrival phase with the CI 12.5 µs wide"
    );
    assert_eq!(
        measuring.detail(),
        "out of time: max_duration 30s reached in the measurement phase"
    );
    for reason in [before, measuring] {
        let written = serde_json::to_string(&reason).unwrap();
        assert_eq!(read(&written), reason, "{written}");
        assert_eq!(
            written.contains("\"p\""),
            out_of_time(&reason).p.is_some(),
            "{written}"
        );
    }
}

/// How a reason's kind or sentence would contradict its own figures: a CI called wide that
/// is within the width asked, one called narrow that is not, a "needs about N samples"
/// with N already in hand, or, under `method: vernier` (where only the time limits the
/// looks), such a need without the time its samples would take (`more_time`). Empty when
/// the reason follows from its figures.
pub(crate) fn contradictions(reason: &Reason) -> Vec<String> {
    let mut found = Vec::new();
    let mut need = |samples: usize, needed: usize, timed: bool| {
        if needed <= samples {
            found.push(format!("needs {needed} samples with {samples} in hand"));
        }
        let timed = timed && !reason.drifts;
        match reason.more_time {
            Some(_) if reason.drifts => {
                found.push("more_time for a need no time would meet (drifts)".into());
            }
            Some(m) if m.samples <= samples => found.push(format!(
                "more time for {} samples with {samples} in hand",
                m.samples
            )),
            None if timed => found.push(format!("needs {needed} samples, but no more_time")),
            _ => {}
        }
    };
    let mut wide = |w: &Wide| {
        need(w.samples, w.samples_needed, w.variance_inflation.is_some());
        w.ci_width_us <= w.target_us
    };
    let contradicted = match &reason.why {
        Why::Confidence(Confidence::Wide(w))
        | Why::HeavyTail(HeavyTail::Wide(w))
        | Why::HostStalls(HostStalls {
            kept: HostKept::Wide(w),
            ..
        }) => wide(w).then(|| "called wide, within the width asked".to_string()),
        Why::Confidence(Confidence::Narrow(n)) => {
            need(n.samples, n.samples_needed, true);
            (n.ci_width_us > n.target_us).then(|| "called narrow, wider than asked".to_string())
        }
        Why::TooFewSamples(TooFewSamples::Ci(t))
        | Why::HeavyTail(HeavyTail::TooFew(HeavyTooFew { too_few: t, .. }))
        | Why::HostStalls(HostStalls {
            kept: HostKept::TooFew(t),
            ..
        }) => {
            need(t.samples, t.min_samples, t.need.is_some());
            None
        }
        _ => None,
    };
    found.extend(contradicted);
    found
}
