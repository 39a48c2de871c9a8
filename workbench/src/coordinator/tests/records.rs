//! Checks as records hold them: a run's checks are written with their words and read back
//! as they were written, and a check an older build wrote reads back with its words.

use std::collections::BTreeSet;

use super::*;
use crate::record::{ShownCheck, ShownEvent};

#[test]
fn a_runs_checks_read_back_as_they_were_written() {
    let mut kinds = BTreeSet::new();
    let mut lancet = FakeAgent::new(1, exp_latency(50.0));
    // Under `method: vernier`, 3% of requests 2 ms late: the departures check fails and
    // its decision quotes the departures' finding.
    let mut late = FakeAgent::new(11, exp_latency(50.0));
    late.late = (0.03, 2000.0);
    for (config, rate, agent) in [
        (config(), 20_000.0, &mut lancet),
        (vernier(), 5000.0, &mut late),
    ] {
        let mut c = Coordinator::new(config, &LoadPlan::Fixed(rate));
        for event in drive(&mut c, agent, Duration::from_secs(60)) {
            let EventKind::Check(check) = &event.kind else {
                continue;
            };
            // The coordinator gives its figures; the words are written from them.
            kinds.insert(check.check);
            // As JSON values: serde_json's text parser may read a float one ulp off.
            let written = serde_json::to_value(&event).unwrap();
            let back: ShownEvent = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(serde_json::to_value(&back).unwrap(), written);
            assert_eq!(
                back.kind,
                EventKind::Check(ShownCheck::from(check)),
                "{written}"
            );
        }
    }
    // Every check but the agents' agreement, which one agent has no need of.
    let one_agent: BTreeSet<CheckKind> = (CheckKind::ALL.iter().copied())
        .filter(|&k| k != CheckKind::Agreement)
        .collect();
    assert_eq!(kinds, one_agent);
}

#[test]
fn an_older_records_check_reads_back_with_its_words() {
    // As the demo's record (fixtures/runs/demo-sweep) holds it: no outcome, no role.
    let detail =
        "p99 = 341.5 µs, 95% CI [315.1, 371.9], width 56.8 µs (target 50.0) from 5003 samples";
    let decision = "collect 7098 per agent (the width narrows as 1/√n)";
    let old = format!(
        r#"{{"at":15.550467355,"point":0,"rate":2000.0,"kind":"check","check":"confidence","agent":null,"pass":false,"statistic":56.783000000000015,"pvalue":null,"n":5003,"detail":"{detail}","decision":"{decision}"}}"#
    );
    let event: ShownEvent = serde_json::from_str(&old).unwrap();
    let EventKind::Check(check) = &event.kind else {
        panic!("{event:?}");
    };
    assert_eq!(
        (check.detail.as_str(), check.decision.as_str()),
        (detail, decision)
    );
    assert_eq!(check.outcome(), CheckOutcome::Failed);
    // Written again, it says the same words, with its outcome and role.
    assert_eq!(
        serde_json::to_string(&event).unwrap(),
        format!(
            r#"{{"at":15.550467355,"point":0,"rate":2000.0,"kind":"check","check":"confidence","agent":null,"pass":false,"outcome":"failed","role":"gate","statistic":56.783000000000015,"pvalue":null,"n":5003,"detail":"{detail}","decision":"{decision}"}}"#
        )
    );
    // A check that decided nothing by itself reads back as one, and is written so again.
    let undecided = old.replace(decision, "");
    let event: ShownEvent = serde_json::from_str(&undecided).unwrap();
    let EventKind::Check(check) = &event.kind else {
        panic!("{event:?}");
    };
    assert_eq!(check.decision, "");
    assert!(
        serde_json::to_string(&event)
            .unwrap()
            .ends_with(r#""decision":""}"#)
    );
}
