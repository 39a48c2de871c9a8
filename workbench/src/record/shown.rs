//! What displays show and records hold of a run: its events with each check in words
//! ([`ShownCheck`]) and each point's reasons as [`ShownReason`]s, typed or, from a record
//! written before reasons had types, as that record wrote them. The coordinator's events
//! become these where a display or the record takes them; the record's reader
//! ([`super::read_record`]) reads every format into them.

use serde::{Deserialize, Serialize};

pub use crate::coordinator::text::check::ShownCheck;
use crate::coordinator::{Event, EventKind, PointResult, Reason, ReasonKind};

/// An event as displays show it and records hold it.
pub type ShownEvent = Event<ShownCheck, ShownPoint>;

/// A point's result as displays show it and records hold it.
pub type ShownPoint = PointResult<ShownReason>;

/// A reason as displays show it and records hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ShownReason {
    /// With its figures typed, as every record since reasons had types holds it.
    Typed(Box<Reason>),
    /// As a record written before reasons had types holds it (and is written back).
    Untyped(UntypedReason),
}

/// A reason of a record written before reasons had types: its kind, its sentence and
/// whatever figures it had, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntypedReason {
    /// Its kind.
    #[serde(rename = "check")]
    pub kind: ReasonKind,
    /// Its sentence, as it was written.
    pub detail: String,
    /// Its figures, as they were named (any shape a record holds).
    #[serde(default)]
    pub figures: serde_json::Map<String, serde_json::Value>,
}

impl ShownReason {
    /// Its kind.
    pub fn kind(&self) -> ReasonKind {
        match self {
            ShownReason::Typed(r) => r.kind(),
            ShownReason::Untyped(r) => r.kind,
        }
    }

    /// The sentence a person reads.
    pub fn detail(&self) -> String {
        match self {
            ShownReason::Typed(r) => r.detail(),
            ShownReason::Untyped(r) => r.detail.clone(),
        }
    }
}

impl From<Reason> for ShownReason {
    fn from(reason: Reason) -> ShownReason {
        ShownReason::Typed(Box::new(reason))
    }
}

impl From<PointResult> for ShownPoint {
    fn from(result: PointResult) -> ShownPoint {
        result.map_reasons(&ShownReason::from)
    }
}

impl From<&Event> for ShownEvent {
    fn from(e: &Event) -> ShownEvent {
        let kind = match &e.kind {
            EventKind::Phase { phase, detail } => EventKind::Phase {
                phase: *phase,
                detail: detail.clone(),
            },
            EventKind::Window {
                sent_rate,
                achieved_rate,
                latency_mean_us,
            } => EventKind::Window {
                sent_rate: *sent_rate,
                achieved_rate: *achieved_rate,
                latency_mean_us: *latency_mean_us,
            },
            EventKind::Check(c) => EventKind::Check(c.into()),
            EventKind::Progress(p) => EventKind::Progress(p.clone()),
            EventKind::Command { command } => EventKind::Command {
                command: command.clone(),
            },
            EventKind::Verdict(r) => EventKind::Verdict(Box::new((**r).clone().into())),
            EventKind::Run(r) => EventKind::Run(Box::new((**r).clone().into())),
        };
        Event {
            at: e.at,
            point: e.point,
            rate: e.rate,
            kind,
        }
    }
}
