//! The record's reader: every format a vernier has written, read into today's types.
//!
//! - Format 2 (today's) reads as written.
//! - Format 1 wrote a point's every-request verdict as `verdict` (today's
//!   `every_request`): it is moved there, and each point's answer worked out from it.
//! - Checks written before checks carried their role get the role their scenario gives
//!   them, one by one.
//! - Reasons written before reasons had types, and every check (records hold a check's
//!   words, not its findings), read into the forms displays show ([`super::shown`]).
//!
//! `fixtures/runs/` keeps a record of each: `demo` and `demo-sweep` (format 1, reasons
//! without types, checks without roles in `demo-sweep`), `memcached-30k` (format 2).

use std::fs;
use std::path::Path;

use super::content::{FORMAT, RunRecord};
use super::shown::ShownPoint;
use crate::coordinator::{CheckRole, EventKind};
use crate::error::Error;
use crate::scenario::Scenario;

/// The format before a point's `verdict` was its answer's.
const FORMAT_1: &str = "vernier-run/1";

/// Reads a run directory's run.json.
pub fn read_record(dir: &Path) -> Result<RunRecord, Error> {
    let path = dir.join("run.json");
    let text = fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    let not_a_record = |e: serde_json::Error| {
        Error::input(
            &path,
            Some(e.line()),
            format!("not a vernier run record: {e}"),
        )
    };
    let mut value: serde_json::Value = serde_json::from_str(&text).map_err(not_a_record)?;
    let format = value
        .get("format")
        .and_then(|f| f.as_str())
        .map(str::to_string);
    let first = format.as_deref() == Some(FORMAT_1);
    if first {
        every_request_verdict_of_format_1(&mut value);
    }
    let roleless = checks_without_role(&value);
    let mut record: RunRecord = serde_json::from_value(value)
        .map_err(|e| Error::input(&path, None, format!("not a vernier run record: {e}")))?;
    if first {
        record.format = FORMAT.to_string();
        settle_answers(&mut record);
    } else if record.format != FORMAT {
        return Err(Error::input(
            &path,
            None,
            format!(
                "format {:?}: this vernier reads {FORMAT:?} and {FORMAT_1:?}",
                record.format
            ),
        ));
    }
    infer_check_roles(&mut record, &roleless);
    Ok(record)
}

/// The events of a record's JSON that are checks written before checks carried their role
/// (format 1 only: from format 2 on every check has one), by index.
fn checks_without_role(value: &serde_json::Value) -> Vec<usize> {
    let events = value.get("events").and_then(|e| e.as_array());
    (events.into_iter().flatten().enumerate())
        .filter(|(_, e)| e.get("kind").and_then(|k| k.as_str()) == Some("check"))
        .filter(|(_, e)| e.get("role").is_none())
        .map(|(i, _)| i)
        .collect()
}

/// A format-1 record's points (every object with a point's `target_percentile` and
/// `percentiles`, wherever it sits: the points, the verdict events, a replicated point's
/// runs) wrote every request's verdict as `verdict`: it becomes `every_request`, and the
/// answer is worked out once the record is read ([`settle_answers`]).
fn every_request_verdict_of_format_1(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            let a_point = map.contains_key("target_percentile") && map.contains_key("percentiles");
            if a_point
                && !map.contains_key("every_request")
                && let Some(verdict) = map.get("verdict").cloned()
            {
                map.insert("every_request".into(), verdict);
            }
            for v in map.values_mut() {
                every_request_verdict_of_format_1(v);
            }
        }
        serde_json::Value::Array(items) => {
            items.iter_mut().for_each(every_request_verdict_of_format_1)
        }
        _ => {}
    }
}

/// Works out every point's answer from its verdicts ([`PointResult::settle_answer`]): the
/// points, the verdict and run events, and a replicated point's runs.
fn settle_answers(record: &mut RunRecord) {
    fn settle(point: &mut ShownPoint) {
        if let Some(replication) = &mut point.replication {
            replication.runs.iter_mut().for_each(settle);
        }
        point.settle_answer();
    }
    record.points.iter_mut().for_each(settle);
    for event in &mut record.events {
        if let EventKind::Verdict(point) | EventKind::Run(point) = &mut event.kind {
            settle(point);
        }
    }
}

/// Gives each check of `record` at the event indices `roleless` the role its scenario gives
/// it ([`CheckRole::of`]); a record whose scenario no longer reads keeps them as read
/// (gates).
fn infer_check_roles(record: &mut RunRecord, roleless: &[usize]) {
    if roleless.is_empty() {
        return;
    }
    let Ok(scenario) = Scenario::from_yaml(&record.scenario, None, &[]) else {
        return;
    };
    for &i in roleless {
        if let Some(EventKind::Check(check)) = record.events.get_mut(i).map(|e| &mut e.kind) {
            check.role =
                CheckRole::of(check.check, scenario.method, scenario.interarrival_enforced);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    use serde_json::Value;

    use super::*;
    use crate::coordinator::{CheckRole, EventKind, Verdict};
    use crate::scenario::Tail;

    fn demo_sweep() -> (String, Value) {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs/demo-sweep/run.json");
        let text = fs::read_to_string(path).unwrap();
        let value = serde_json::from_str(&text).unwrap();
        (text, value)
    }

    /// A record of format 1 wrote every request's verdict as a point's `verdict`: read
    /// today, that is `every_request` (`PointResult::verdict`), and the answer is worked
    /// out from it and the tail asked, in the points and in the verdict events alike.
    #[test]
    fn a_format_1_record_reads_every_request_s_verdict_and_works_out_the_answer() {
        let (text, value) = demo_sweep();
        assert_eq!(value["format"], FORMAT_1);
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.json"), &text).unwrap();
        let record = read_record(dir.path()).unwrap();
        assert_eq!(record.format, FORMAT);
        assert_eq!(
            record.points.len(),
            value["points"].as_array().unwrap().len()
        );
        for (point, written) in record
            .points
            .iter()
            .zip(value["points"].as_array().unwrap())
        {
            let verdict: Verdict = serde_json::from_value(written["verdict"].clone()).unwrap();
            assert_eq!(point.verdict, verdict);
            // The demo's record predates the tail asked: every request's is the answer.
            assert_eq!(point.tail, Tail::WithStalls);
            assert_eq!(point.answer(), verdict);
        }

        // The same point asked for the tail without stalls, which converged while every
        // request's did not: the answer is the tail without stalls'.
        let mut asked = value.clone();
        let point = &mut asked["points"][0];
        point["tail"] = "without_stalls".into();
        point["verdict"] = "n/a".into();
        point["without_stalls"] = serde_json::json!({
            "verdict": "converged",
            "percentiles": [],
            "ci_width_us": 1.0,
            "touched_share": 0.01,
            "touched_by_agent": [0.01],
            "samples": 1000,
            "stalls": 3,
            "probed": "client_and_target",
        });
        fs::write(dir.path().join("run.json"), asked.to_string()).unwrap();
        let record = read_record(dir.path()).unwrap();
        assert_eq!(record.points[0].verdict, Verdict::NotAvailable);
        assert_eq!(record.points[0].answer(), Verdict::Converged);
    }

    /// Today's records write the answer as `verdict` and every request's as
    /// `every_request`, and read back the same.
    #[test]
    fn a_record_writes_the_answer_as_verdict_and_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let (text, _) = demo_sweep();
        fs::write(dir.path().join("run.json"), &text).unwrap();
        let mut record = read_record(dir.path()).unwrap();
        let point = &mut record.points[0];
        point.verdict = Verdict::Wide;
        point.tail = Tail::WithStalls;
        point.settle_answer();
        let written = serde_json::to_value(&record).unwrap();
        assert_eq!(written["format"], FORMAT);
        assert_eq!(written["points"][0]["verdict"], "wide");
        assert_eq!(written["points"][0]["every_request"], "wide");
        fs::write(dir.path().join("run.json"), written.to_string()).unwrap();
        let back = read_record(dir.path()).unwrap();
        assert_eq!(back.points[0].verdict, Verdict::Wide);
        assert_eq!(back.points[0].answer(), Verdict::Wide);
        let again = serde_json::to_value(&back).unwrap();
        assert_eq!(
            again["points"][1]["verdict"],
            written["points"][1]["verdict"]
        );
        assert_eq!(
            again["points"][1]["every_request"],
            written["points"][1]["every_request"]
        );
    }

    /// A check written before checks carried their role gets the one its scenario gives it
    /// (the demo's inter-arrival test, under `method: vernier`, is only reported); one that
    /// says its role keeps it, whatever the others say.
    #[test]
    fn a_check_without_its_role_gets_its_scenario_s_and_one_with_a_role_keeps_it() {
        let (_, mut value) = demo_sweep();
        let events = value["events"].as_array_mut().unwrap();
        let interarrival: Vec<usize> = (events.iter().enumerate())
            .filter(|(_, e)| e["kind"] == "check" && e["check"] == "interarrival")
            .map(|(i, _)| i)
            .collect();
        events[interarrival[0]]["role"] = "gate".into();
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("run.json"), value.to_string()).unwrap();
        let record = read_record(dir.path()).unwrap();
        let role = |i: usize| match &record.events[i].kind {
            EventKind::Check(c) => c.role,
            other => panic!("{other:?}"),
        };
        assert_eq!(role(interarrival[0]), CheckRole::Gate);
        for &i in &interarrival[1..] {
            assert_eq!(role(i), CheckRole::Report);
        }
    }

    /// Each record the fixtures keep, of each past format, reads into today's types and
    /// writes back what it holds: every point's reasons (those written before reasons had
    /// types as they were written) and every check's words.
    #[test]
    fn every_kept_record_reads_into_today_s_types_and_writes_its_words_back() {
        use crate::record::ShownReason;
        for (name, untyped) in [
            ("demo-sweep", true),
            ("demo", true),
            ("memcached-30k", false),
        ] {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fixtures/runs")
                .join(name);
            let text = fs::read_to_string(dir.join("run.json")).unwrap();
            let written: Value = serde_json::from_str(&text).unwrap();
            let record = read_record(&dir).unwrap();
            let again = serde_json::to_value(&record).unwrap();
            let points = written["points"].as_array().unwrap();
            assert!(!points.is_empty(), "{name}");
            for (i, point) in points.iter().enumerate() {
                assert_eq!(
                    again["points"][i]["reasons"], point["reasons"],
                    "{name}: point {i}"
                );
            }
            let events = written["events"].as_array().unwrap();
            let checks = (events.iter().enumerate()).filter(|(_, e)| e["kind"] == "check");
            for (i, check) in checks {
                for words in ["detail", "decision"] {
                    assert_eq!(again["events"][i][words], check[words], "{name}: event {i}");
                }
            }
            let reasons = record.points.iter().flat_map(|p| &p.reasons);
            let read_untyped = reasons
                .filter(|r| matches!(r, ShownReason::Untyped(_)))
                .count();
            assert_eq!(read_untyped > 0, untyped, "{name}: {read_untyped} untyped");
        }
    }
}
