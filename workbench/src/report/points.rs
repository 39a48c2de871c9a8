//! Which load point each result is, and which checks the plots rest on: what the table
//! and the plots both read from a record's events.

use std::collections::BTreeMap;

use crate::coordinator::{CheckKind, EventKind};
use crate::record::RunRecord;
use crate::record::{ShownCheck, ShownEvent, ShownPoint};

/// One load point as the plots see it: its result and where its samples are.
#[derive(Debug, Clone, Copy)]
pub(super) struct Measured<'a> {
    /// The `point` column of the samples (the load point's number in the events).
    pub(super) point: usize,
    /// Its result.
    pub(super) result: &'a ShownPoint,
}

/// Each result's load point number (the samples' `point` column, the events' `point`).
/// The i-th verdict event recorded the i-th result and says which point it was; a record
/// without the events (written by hand) falls back to the position.
pub(super) fn point_numbers(record: &RunRecord) -> Vec<usize> {
    let verdict_points: Vec<usize> = record
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Verdict(_)))
        .map(|e| e.point)
        .collect();
    (0..record.points.len())
        .map(|i| verdict_points.get(i).copied().unwrap_or(i))
        .collect()
}

/// Each finished point with its load point number.
pub(super) fn measured_points(record: &RunRecord) -> Vec<Measured<'_>> {
    point_numbers(record)
        .into_iter()
        .zip(&record.points)
        .map(|(point, result)| Measured { point, result })
        .collect()
}

/// The last check of `kind` carrying plot data for each (point, agent): a check is
/// repeated on every retry or round, and the last is the one the point's result rests on.
pub(super) fn last_checks(
    events: &[ShownEvent],
    kind: CheckKind,
) -> BTreeMap<(usize, Option<usize>), (&ShownEvent, &ShownCheck)> {
    let mut last = BTreeMap::new();
    for event in events {
        if let EventKind::Check(check) = &event.kind
            && check.check == kind
            && check.data.is_some()
        {
            last.insert((event.point, check.agent), (event, check));
        }
    }
    last
}
