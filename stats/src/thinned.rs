//! The tail without stalls of a point that kept one request in several: each kept request
//! carries when its client's busy stretch began, which is all that deciding whether a
//! stall touched it needs, and the weights' gaps between reaches come from the stretches
//! the kept requests saw.
//!
//! With every request at hand ([`untouched_sent`](crate::untouched_sent)) a stall reaches
//! from its start to the first send after its end that found nothing in flight, and a
//! request is touched when a reach meets its span. The reach of a stall `s` passes the
//! scheduled send of a request exactly when no send in `[s.end, send]` found nothing in
//! flight, that is when the request's stretch began before `s.end`: the request is
//! touched when a stall meets its window, from its stretch's start to its reply. That
//! needs nothing of the requests not kept, and marks each kept request as the whole
//! sample would.
//!
//! The weights (1/free(W), [`crate::untouched`]) need the gaps between reaches, whose ends
//! are sends that found nothing in flight: known here only where a kept request's stretch
//! began. A reach is taken to end at the first such start after its stall, at most a few
//! kept requests' spacing later than the first idle send itself: the gaps come out that
//! much shorter (at 30,000 requests a second kept one in three, 0.1 ms a reach against
//! gaps of tens of milliseconds).
//!
//! A client of several workers keeps each worker's own stretches (a worker sees only its
//! own requests), where the sweep over every request of the client runs one stretch over
//! them all: a send is busy while any worker's request is awaiting its reply. That stretch
//! is the union of the workers' stretches, so each kept request's window is taken from the
//! start of the union of the kept windows that meet it ([`joined_since`],
//! [`Stretches::Joined`]): with every request kept, exactly the sweep's; thinned, never
//! shorter than its worker's own. One worker's are taken as they come
//! ([`Stretches::Carried`]).

use crate::error::StatsError;
use crate::stalls::{
    Marks, Sent, Stall, Untouched, WithoutStalls, merged, summarised_part, untouched_of,
    untouched_sent,
};

/// A kept request as its client recorded it, in ns: when it left, how late, its latency,
/// and how long before its scheduled send its busy stretch began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// When it left, how much after its schedule, and its latency from when it left.
    pub sent: Sent,
    /// From the start of its busy stretch (the last scheduled send at or before its own
    /// that found none of its client's requests in flight) to its own scheduled send.
    pub busy_ns: u64,
}

impl Kept {
    fn scheduled(&self) -> f64 {
        self.sent.departure_ns.saturating_sub(self.sent.late_ns) as f64
    }

    fn since(&self) -> f64 {
        self.scheduled() - self.busy_ns as f64
    }

    fn reply(&self) -> f64 {
        (self.sent.departure_ns + self.sent.latency_ns) as f64
    }
}

/// Where a client's requests' busy stretches come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stretches {
    /// Every request is at hand: a sweep over them finds the stretches.
    Swept,
    /// A share of one worker's requests, each carrying its stretch.
    Carried,
    /// A share of several workers' requests, each carrying its own worker's stretch:
    /// joined where they meet ([`joined_since`]).
    Joined,
}

impl Stretches {
    /// Where a client's stretches come from: every request at hand unless the point was
    /// `thinned`; thinned, carried by one worker's requests or joined across `workers`.
    pub fn of(thinned: bool, workers: usize) -> Stretches {
        match (thinned, workers) {
            (false, _) => Stretches::Swept,
            (true, 0 | 1) => Stretches::Carried,
            (true, _) => Stretches::Joined,
        }
    }
}

/// One client's kept `requests` (any order; a share of all it sent, each carrying its
/// stretch) marked by the `stalls` its cores met and by the kept requests' own sends
/// more than `late_ns` after their schedule (the client passes those it did not keep among
/// the `stalls`), weighted against the selection: [`untouched_sent`](crate::untouched_sent)
/// for a thinned sample of one worker's requests.
pub fn untouched_kept(
    requests: &mut [Kept],
    stalls: Vec<Stall>,
    late_ns: u64,
) -> Result<Untouched, StatsError> {
    requests.sort_by_key(|r| r.sent.departure_ns);
    let since = requests.iter().map(Kept::since).collect();
    marked(requests, stalls, late_ns, since)
}

/// [`untouched_kept`] for a thinned sample of several workers' requests: their stretches
/// joined ([`joined_since`]).
pub fn untouched_joined(
    requests: &mut [Kept],
    stalls: Vec<Stall>,
    late_ns: u64,
) -> Result<Untouched, StatsError> {
    requests.sort_by_key(|r| r.sent.departure_ns);
    let since = joined_since(requests);
    marked(requests, stalls, late_ns, since)
}

/// `requests` (sorted by departure) marked and weighed by the windows from each one's
/// stretch start, `since`, to its reply.
fn marked(
    requests: &[Kept],
    mut stalls: Vec<Stall>,
    late_ns: u64,
    since: Vec<f64>,
) -> Result<Untouched, StatsError> {
    if let Some(s) = stalls
        .iter()
        .find(|s| !(s.start.is_finite() && s.end.is_finite() && s.end >= s.start))
    {
        return Err(StatsError::InvalidParameter {
            name: "stall",
            value: s.start,
            expected: "a finite interval whose end is not before its start",
        });
    }
    stalls.extend(
        requests
            .iter()
            .filter(|r| r.sent.late_ns > late_ns)
            .map(|r| Stall {
                start: r.scheduled(),
                end: r.sent.departure_ns as f64,
            }),
    );
    let stalls = merged(stalls);
    let touched: Vec<bool> = (requests.iter().zip(&since))
        .map(|(r, &since)| {
            // Disjoint and sorted: the last stall starting before the reply ends last.
            let i = stalls.partition_point(|s| s.start < r.reply());
            i > 0 && stalls[i - 1].end > since
        })
        .collect();
    let mut idle = since.clone();
    idle.sort_by(f64::total_cmp);
    idle.dedup();
    let reaches = merged(
        stalls
            .iter()
            .map(|s| Stall {
                start: s.start,
                end: idle
                    .get(idle.partition_point(|&t| t < s.end))
                    .copied()
                    .unwrap_or(f64::INFINITY),
            })
            .collect(),
    );
    let first = requests
        .iter()
        .map(Kept::scheduled)
        .fold(f64::INFINITY, f64::min);
    let last = requests
        .iter()
        .map(Kept::reply)
        .fold(f64::NEG_INFINITY, f64::max);
    let marks = Marks::of_reaches(touched, reaches, first..last, idle);
    let latency_us: Vec<f64> = requests
        .iter()
        .map(|r| r.sent.latency_ns as f64 / 1e3)
        .collect();
    let windows = (requests.iter().zip(&since)).map(|(r, &since)| r.reply() - since);
    Ok(untouched_of(&marks, &latency_us, windows))
}

/// Each of `requests`' busy stretch start, ns, across the workers of its client: the start
/// of the union of the kept windows (from a request's own stretch start to its reply)
/// that reaches it. One worker's stretches are disjoint and its kept windows share their
/// stretch's start, so alone it is each request's own; with several, a request sent while
/// another worker's was awaiting its reply joins that one's stretch, as a sweep over every
/// request of the client finds.
pub fn joined_since(requests: &[Kept]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..requests.len()).collect();
    order.sort_by(|&a, &b| requests[a].since().total_cmp(&requests[b].since()));
    let mut since = vec![0.0; requests.len()];
    let (mut start, mut end) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for i in order {
        let r = &requests[i];
        // A window that begins after the union's last reply begins a new union; one that
        // begins exactly at it does too, as a send at a reply's instant finds it answered.
        if r.since() >= end {
            start = r.since();
        }
        end = end.max(r.reply());
        since[i] = start;
    }
    since
}

/// A client's requests marked as the point that kept them marks them: every request at
/// hand ([`untouched_sent`]), or each kept one by the busy stretch it carries
/// ([`untouched_kept`]), joined across workers ([`untouched_joined`]).
pub fn untouched_requests(
    requests: &mut [Kept],
    stalls: Vec<Stall>,
    late_ns: u64,
    stretches: Stretches,
) -> Result<Untouched, StatsError> {
    match stretches {
        Stretches::Carried => untouched_kept(requests, stalls, late_ns),
        Stretches::Joined => untouched_joined(requests, stalls, late_ns),
        Stretches::Swept => {
            let mut every: Vec<Sent> = requests.iter().map(|r| r.sent).collect();
            untouched_sent(&mut every, stalls, late_ns)
        }
    }
}

/// [`untouched_requests`] summarised as [`crate::without_stalls_sent`] summarises every
/// request: the `percentiles` (fractions) in ns, `stalls` counting those given.
pub fn without_stalls_requests(
    requests: &mut [Kept],
    stalls: Vec<Stall>,
    (late_ns, stretches): (u64, Stretches),
    percentiles: &[f64],
    confidence: f64,
) -> Result<WithoutStalls, StatsError> {
    let given = stalls.len();
    let part = untouched_requests(requests, stalls, late_ns, stretches)?;
    summarised_part(&part, given, percentiles, confidence)
}

#[cfg(test)]
mod tests;
