//! The server's own tail on a host that stalls: which requests a host stall touched, and
//! the percentiles of those it did not, corrected for the bias of leaving the others out.
//!
//! A hypervisor takes a vCPU away for milliseconds; every request in flight on that core
//! waits it out, and the server's queue drains behind it. Given each stall as an interval
//! (in the clock of the requests' send times, as a probe knows it: a little wider than the
//! stall itself), a request is **touched** when its span, from its scheduled send to its
//! reply, meets the stall's *reach*: from the stall's start to the first moment after its
//! end at which nothing this client sent was in flight ([`Reach::Drain`]).
//!
//! Why that moment bounds the drain: for a FIFO server (Lindley's recursion), the server
//! that stalled and the same server without the stall see the same arrivals and the same
//! work; the one that stalled never holds less work than the other. Once it holds none
//! (nothing in flight: every request sent was answered), neither does the other, and from
//! then on the two are the same queue until the next stall. Requests sent from then on
//! have the latency they would have had on a host that never stalled. It is a bound, not an
//! estimate: a server busy with other clients' requests may still be draining, which this
//! client cannot see, and at a high load an idle moment may be long in coming (every
//! request until then is touched, and the share touched says so).
//!
//! The requests left are not a fair sample: a longer request is likelier to meet a stall,
//! and so is one sent late in a long busy stretch, whose latency a stall anywhere in the
//! stretch would have changed. A request's window W runs from the start of its busy
//! stretch (the last send before it with nothing in flight) to its reply; it escapes
//! every reach only when that window fits in a gap between reaches, a share free(W) =
//! Σ max(0, g − W) / T of the run (the gap after the last reach selects nothing: no reach
//! follows it). Weighting each untouched request by 1/free(W) (inverse-probability
//! weighting, Horvitz & Thompson 1952) undoes the selection, given that the stalls come
//! independently of the server's own work. Weighting by the latency alone leaves the tail
//! low where pauses are short and frequent (−7.8% at p50, M/M/1 at ρ 0.6 with 0.2 ms pauses
//! 20% of the time; −0.2% by the window: docs/RESULTS.md). The
//! percentiles are then those of the weighted samples, with the dependence-valid interval
//! ([`crate::WeightedSamples`]). `vernier validate --stall-coverage` measures how often it
//! covers the no-stall truth of a queue with known stalls.

use serde::{Deserialize, Serialize};

use crate::analysis::PercentileEstimate;
use crate::error::{StatsError, check_finite};
use crate::weighted::WeightedSamples;

/// A time a core was not the guest's: start and end in the clock (and unit) of the
/// requests' send times.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    /// When it began (at the latest).
    pub start: f64,
    /// When it ended (at the earliest).
    pub end: f64,
}

/// How far a stall reaches past its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// To the first moment nothing was in flight: the server's queue has drained (the
    /// module's bound).
    Drain,
    /// To its end only: what dropping the requests that overlap a stall gives, kept to
    /// show what the drain is worth.
    StallOnly,
}

/// Requests in send order: each one's scheduled send time and its latency from it, in the
/// stalls' unit.
#[derive(Debug, Clone, Copy)]
pub struct Spans<'a> {
    /// Scheduled send times.
    pub send: &'a [f64],
    /// Latencies from the scheduled send.
    pub latency: &'a [f64],
}

/// Which requests the stalls touched, and the time they left untouched.
#[derive(Debug, Clone, PartialEq)]
pub struct Marks {
    /// One per request, in the order given: whether a stall's reach met its span.
    pub touched: Vec<bool>,
    /// The reaches, sorted and disjoint.
    pub reaches: Vec<Stall>,
    /// The gaps between reaches within the run that a reach closes (from the first send or
    /// a reach's end to the next reach's start), ascending.
    gaps: Vec<f64>,
    /// `suffix[i]`: the sum of `gaps[i..]`.
    suffix: Vec<f64>,
    /// The gap after the last reach, to the run's last reply: no reach follows to touch
    /// what is sent in it, so it selects nothing.
    open: f64,
    /// The send times, ascending, at which nothing sent earlier was in flight (with
    /// [`Reach::Drain`]; none with [`Reach::StallOnly`]).
    idle: Vec<f64>,
}

impl Marks {
    /// The share of requests touched.
    pub fn touched_share(&self) -> f64 {
        if self.touched.is_empty() {
            return 0.0;
        }
        self.touched.iter().filter(|&&t| t).count() as f64 / self.touched.len() as f64
    }

    /// The time within the run at which a request whose stall-free latency depends on a
    /// `window` this long (see [`Marks::busy_since`]) could have been sent and met no
    /// reach: Σ max(0, g − window) over the gaps a reach closes, and the whole last gap.
    pub fn free_time(&self, window: f64) -> f64 {
        let i = self.gaps.partition_point(|&g| g <= window);
        self.suffix[i] - (self.gaps.len() - i) as f64 * window + self.open
    }

    /// When the busy stretch a request sent at `send` joined began: the last send at or
    /// before it with nothing in flight (`send` itself with [`Reach::StallOnly`]). A stall
    /// anywhere from then to the request's reply changes its latency, so that whole
    /// window, not the request's latency alone, must fit between reaches: a request deep in
    /// a long busy stretch (a long one, as a rule) is the likelier to be touched.
    pub fn busy_since(&self, send: f64) -> f64 {
        match self.idle.partition_point(|&t| t <= send) {
            0 => send,
            i => self.idle[i - 1],
        }
    }
}

/// Checks the spans and the stalls (finite, latencies ≥ 0, each stall's end not before its
/// start).
fn check(spans: Spans<'_>, stalls: &[Stall]) -> Result<(), StatsError> {
    if spans.send.len() != spans.latency.len() {
        return Err(StatsError::InvalidParameter {
            name: "latency",
            value: spans.latency.len() as f64,
            expected: "one latency per send time",
        });
    }
    check_finite(spans.send)?;
    check_finite(spans.latency)?;
    if let Some(&l) = spans.latency.iter().find(|&&l| l < 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "latency",
            value: l,
            expected: "latencies of zero or more",
        });
    }
    for s in stalls {
        if !(s.start.is_finite() && s.end.is_finite() && s.end >= s.start) {
            return Err(StatsError::InvalidParameter {
                name: "stall",
                value: s.start,
                expected: "a finite interval whose end is not before its start",
            });
        }
    }
    Ok(())
}

/// Sorted, disjoint intervals covering the same time as `intervals`.
pub(crate) fn merged(mut intervals: Vec<Stall>) -> Vec<Stall> {
    intervals.sort_by(|a, b| a.start.total_cmp(&b.start));
    let mut out: Vec<Stall> = Vec::with_capacity(intervals.len());
    for s in intervals {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// The send times, ascending, at which nothing sent earlier was still in flight.
fn idle_sends(spans: Spans<'_>) -> Vec<f64> {
    let mut order: Vec<usize> = (0..spans.send.len()).collect();
    order.sort_by(|&a, &b| spans.send[a].total_cmp(&spans.send[b]));
    let mut busy_until = f64::NEG_INFINITY;
    let mut idle = Vec::new();
    for i in order {
        let s = spans.send[i];
        if busy_until <= s {
            idle.push(s);
        }
        busy_until = busy_until.max(s + spans.latency[i]);
    }
    idle
}

/// Marks which requests the `stalls` touched, each reaching as `reach` says.
pub fn mark(spans: Spans<'_>, stalls: &[Stall], reach: Reach) -> Result<Marks, StatsError> {
    check(spans, stalls)?;
    let stalls = merged(stalls.to_vec());
    let idle = match reach {
        Reach::Drain => idle_sends(spans),
        Reach::StallOnly => Vec::new(),
    };
    let reaches = merged(
        stalls
            .iter()
            .map(|s| {
                let end = match reach {
                    Reach::StallOnly => s.end,
                    Reach::Drain => {
                        let i = idle.partition_point(|&t| t < s.end);
                        idle.get(i).copied().unwrap_or(f64::INFINITY)
                    }
                };
                Stall {
                    start: s.start,
                    end,
                }
            })
            .collect(),
    );
    let touched = spans
        .send
        .iter()
        .zip(spans.latency)
        .map(|(&s, &l)| {
            // The last reach starting before the reply; earlier ones end before it starts.
            let i = reaches.partition_point(|r| r.start < s + l);
            i > 0 && reaches[i - 1].end > s
        })
        .collect();
    let first = spans.send.iter().copied().fold(f64::INFINITY, f64::min);
    let last = spans
        .send
        .iter()
        .zip(spans.latency)
        .map(|(s, l)| s + l)
        .fold(f64::NEG_INFINITY, f64::max);
    Ok(Marks::of_reaches(touched, reaches, first..last, idle))
}

impl Marks {
    /// The marks `touched`, with the gaps that the `reaches` (sorted, disjoint) leave in
    /// the run from its first send to its last reply (`run`), and the `idle` sends.
    pub(crate) fn of_reaches(
        touched: Vec<bool>,
        reaches: Vec<Stall>,
        run: std::ops::Range<f64>,
        idle: Vec<f64>,
    ) -> Marks {
        let mut gaps = Vec::new();
        let mut from = run.start;
        for r in reaches.iter().take_while(|r| r.start < run.end) {
            if r.start > from {
                gaps.push(r.start - from);
            }
            from = from.max(r.end);
        }
        let open = (run.end - from).max(0.0);
        gaps.sort_by(f64::total_cmp);
        let mut suffix = vec![0.0; gaps.len() + 1];
        for i in (0..gaps.len()).rev() {
            suffix[i] = suffix[i + 1] + gaps[i];
        }
        Marks {
            touched,
            reaches,
            gaps,
            suffix,
            open,
            idle,
        }
    }
}

/// The tail without the host's stalls: the requests no stall reached, weighted against the
/// selection, with the same shape as [`crate::Analysis`]'s percentiles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WithoutStalls {
    /// Requests no stall touched.
    pub n: usize,
    /// The share of requests touched.
    pub touched_share: f64,
    /// Stalls given (before merging).
    pub stalls: usize,
    /// Each percentile of the untouched requests, with its intervals.
    pub percentiles: Vec<PercentileEstimate>,
}

/// The untouched requests' `values` (one per span: their latencies, or another measure
/// of them) in the order given, each with its weight against the selection, 1/free(W) of
/// its window W (from the start of its busy stretch to its reply), scaled to mean 1.
pub fn untouched(spans: Spans<'_>, marks: &Marks, values: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let windows = spans
        .send
        .iter()
        .zip(spans.latency)
        .map(|(&send, &latency)| send + latency - marks.busy_since(send));
    weighed(marks, values, windows)
}

/// The untouched requests' `values` with their weights, 1/free(W) of each one's `windows`
/// W, scaled to mean 1 (see [`untouched`]).
fn weighed(
    marks: &Marks,
    values: &[f64],
    windows: impl Iterator<Item = f64>,
) -> (Vec<f64>, Vec<f64>) {
    let (kept, mut weights): (Vec<f64>, Vec<f64>) = values
        .iter()
        .zip(windows)
        .zip(&marks.touched)
        .filter(|(_, t)| !**t)
        .map(|((&v, window), _)| (v, 1.0 / marks.free_time(window).max(f64::MIN_POSITIVE)))
        .unzip();
    let mean = weights.iter().sum::<f64>() / weights.len().max(1) as f64;
    if mean > 0.0 {
        weights.iter_mut().for_each(|w| *w /= mean);
    }
    (kept, weights)
}

/// A request as a client records it, on the clock of its stalls, in ns: when it left, how
/// much later than its schedule, and its latency from when it left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// When it left.
    pub departure_ns: u64,
    /// How long after its scheduled send it left.
    pub late_ns: u64,
    /// From when it left to its reply.
    pub latency_ns: u64,
}

/// A client's requests with the stalls' reach taken out ([`untouched_sent`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Untouched {
    /// The untouched requests' latencies (from when each left), µs, in send order.
    pub latency_us: Vec<f64>,
    /// Each one's weight against the selection, scaled to mean 1.
    pub weights: Vec<f64>,
    /// The share of the requests touched.
    pub touched_share: f64,
    /// The requests given, touched or not.
    pub requests: usize,
    /// Each request's mark, in send order.
    pub touched: Vec<bool>,
}

/// One client's `requests` (any order) marked by the `stalls` its cores met
/// ([`Reach::Drain`]), each request's span from its *scheduled* send to its reply. A
/// request that left more than `late_ns` after its schedule shows its client's core taken
/// (or the client held) that long: a stall known to the µs from its schedule to its
/// departure, which a probe waking every millisecond misses when shorter. What is left,
/// weighted against the selection ([`untouched`]), is the tail without stalls.
pub fn untouched_sent(
    requests: &mut [Sent],
    mut stalls: Vec<Stall>,
    late_ns: u64,
) -> Result<Untouched, StatsError> {
    requests.sort_by_key(|r| r.departure_ns);
    let scheduled = |r: &Sent| r.departure_ns.saturating_sub(r.late_ns) as f64;
    stalls.extend(
        requests
            .iter()
            .filter(|r| r.late_ns > late_ns)
            .map(|r| Stall {
                start: scheduled(r),
                end: r.departure_ns as f64,
            }),
    );
    let send: Vec<f64> = requests.iter().map(scheduled).collect();
    let span: Vec<f64> = requests
        .iter()
        .map(|r| (r.latency_ns + r.late_ns) as f64)
        .collect();
    let latency_us: Vec<f64> = requests.iter().map(|r| r.latency_ns as f64 / 1e3).collect();
    let spans = Spans {
        send: &send,
        latency: &span,
    };
    let marks = mark(spans, &stalls, Reach::Drain)?;
    let windows = (spans.send.iter().zip(spans.latency))
        .map(|(&send, &latency)| send + latency - marks.busy_since(send));
    Ok(untouched_of(&marks, &latency_us, windows))
}

/// The requests `marks` left untouched, with their `latency_us` and their weights from
/// each one's `windows` ([`weighed`]).
pub(crate) fn untouched_of(
    marks: &Marks,
    latency_us: &[f64],
    windows: impl Iterator<Item = f64>,
) -> Untouched {
    let (latency_us, weights) = weighed(marks, latency_us, windows);
    Untouched {
        latency_us,
        weights,
        touched_share: marks.touched_share(),
        requests: marks.touched.len(),
        touched: marks.touched.clone(),
    }
}

/// The `percentiles` (fractions) of the requests no stall touched ([`Reach::Drain`]),
/// weighted against the selection, each with its iid and its dependence-valid interval at
/// `confidence`.
pub fn without_stalls(
    spans: Spans<'_>,
    stalls: &[Stall],
    percentiles: &[f64],
    confidence: f64,
) -> Result<WithoutStalls, StatsError> {
    let marks = mark(spans, stalls, Reach::Drain)?;
    let (latency, weights) = untouched(spans, &marks, spans.latency);
    let samples = WeightedSamples::new(latency, &weights)?;
    summarised(
        &samples,
        marks.touched_share(),
        stalls.len(),
        percentiles,
        confidence,
    )
}

/// [`without_stalls`] of one client's `requests` as it recorded them, each also marked by
/// its own send when that left more than `late_ns` after its schedule
/// ([`untouched_sent`]): the percentiles in ns, `stalls` counting those given.
pub fn without_stalls_sent(
    requests: &mut [Sent],
    stalls: Vec<Stall>,
    late_ns: u64,
    percentiles: &[f64],
    confidence: f64,
) -> Result<WithoutStalls, StatsError> {
    let given = stalls.len();
    let part = untouched_sent(requests, stalls, late_ns)?;
    summarised_part(&part, given, percentiles, confidence)
}

/// A client's untouched requests (`part`) as [`WithoutStalls`]: the `percentiles` in ns,
/// `given` the stalls given.
pub(crate) fn summarised_part(
    part: &Untouched,
    given: usize,
    percentiles: &[f64],
    confidence: f64,
) -> Result<WithoutStalls, StatsError> {
    let latency_ns: Vec<f64> = part.latency_us.iter().map(|l| l * 1e3).collect();
    let samples = WeightedSamples::new(latency_ns, &part.weights)?;
    summarised(&samples, part.touched_share, given, percentiles, confidence)
}

/// The untouched requests' `percentiles`, each with its intervals.
fn summarised(
    samples: &WeightedSamples,
    touched_share: f64,
    stalls: usize,
    percentiles: &[f64],
    confidence: f64,
) -> Result<WithoutStalls, StatsError> {
    let percentiles = percentiles
        .iter()
        .map(|&p| estimate(samples, p, confidence))
        .collect::<Result<_, _>>()?;
    Ok(WithoutStalls {
        n: samples.len(),
        touched_share,
        stalls,
        percentiles,
    })
}

/// One percentile of weighted samples, in [`PercentileEstimate`]'s shape.
fn estimate(
    samples: &WeightedSamples,
    p: f64,
    confidence: f64,
) -> Result<PercentileEstimate, StatsError> {
    let (ci_under_dependence, ci_under_dependence_reason) =
        match samples.percentile_ci_dependent(p, confidence)? {
            Ok(ci) => (Some(ci), None),
            Err(need) => (
                None,
                Some(format!(
                    "{}: about {} samples needed, have {}",
                    need.reason, need.needed, need.have
                )),
            ),
        };
    let iid = samples.percentile_ci(p, confidence);
    Ok(PercentileEstimate {
        p,
        value: samples.percentile(p).unwrap_or(f64::NAN),
        ci_low: iid.map(|(lo, _)| lo),
        ci_high: iid.map(|(_, hi)| hi),
        ci_note: iid.is_none().then(|| {
            format!(
                "too few untouched samples ({}) for an interval",
                samples.len()
            )
        }),
        ci_under_dependence,
        ci_under_dependence_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans<'a>(send: &'a [f64], latency: &'a [f64]) -> Spans<'a> {
        Spans { send, latency }
    }

    #[test]
    fn a_stall_reaches_until_nothing_is_in_flight() {
        // Requests every 10, latency 3, except those the stall at [25, 40] held: sent at 20
        // (answered at 41), 30 (44), 40 (47, still draining), 50 (53: sent with nothing in
        // flight, the queue drained).
        let send = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0];
        let latency = [3.0, 3.0, 21.0, 14.0, 7.0, 3.0, 3.0];
        let stalls = [Stall {
            start: 25.0,
            end: 40.0,
        }];
        let marks = mark(spans(&send, &latency), &stalls, Reach::Drain).unwrap();
        assert_eq!(
            marks.touched,
            [false, false, true, true, true, false, false]
        );
        assert_eq!(
            marks.reaches,
            [Stall {
                start: 25.0,
                end: 50.0
            }]
        );
        // Overlap alone misses the request that queued behind the stall.
        let only = mark(spans(&send, &latency), &stalls, Reach::StallOnly).unwrap();
        assert_eq!(
            only.touched,
            [false, false, true, true, false, false, false]
        );
        let late = [3.0, 3.0, 21.0, 14.0, 12.0, 8.0, 3.0];
        let drain = mark(spans(&send, &late), &stalls, Reach::Drain).unwrap();
        let only = mark(spans(&send, &late), &stalls, Reach::StallOnly).unwrap();
        // Sent at 50 while the one sent at 40 (answered at 52) was in flight: drained only
        // at 60.
        assert_eq!(drain.touched, [false, false, true, true, true, true, false]);
        assert_eq!(
            only.touched,
            [false, false, true, true, false, false, false]
        );
    }

    #[test]
    fn the_free_time_shrinks_with_the_latency() {
        let send = [0.0, 100.0];
        let latency = [1.0, 0.0];
        let stalls = [Stall {
            start: 40.0,
            end: 50.0,
        }];
        let marks = mark(spans(&send, &latency), &stalls, Reach::StallOnly).unwrap();
        // A gap of 40 a reach closes, and one of 50 after the last reach, open.
        assert_eq!(marks.free_time(0.0), 90.0);
        assert_eq!(marks.free_time(10.0), 80.0);
        assert_eq!(marks.free_time(45.0), 50.0);
        assert_eq!(marks.free_time(60.0), 50.0);
        let stalls = [
            stalls[0],
            Stall {
                start: 70.0,
                end: 80.0,
            },
        ];
        let marks = mark(spans(&send, &latency), &stalls, Reach::StallOnly).unwrap();
        // Closed gaps of 40 and 20, an open one of 20.
        assert_eq!(marks.free_time(10.0), 30.0 + 10.0 + 20.0);
        assert_eq!(marks.free_time(30.0), 10.0 + 20.0);
    }

    #[test]
    fn a_requests_window_starts_with_its_busy_stretch() {
        // Sent at 0 (answered at 5), 4 (at 9: the one sent at 0 still in flight), 10 (at 12,
        // nothing in flight), 11 (at 20), 30 (at 31); a stall at [40, 41] after them all.
        let send = [0.0, 4.0, 10.0, 11.0, 30.0, 50.0];
        let latency = [5.0, 5.0, 2.0, 9.0, 1.0, 1.0];
        let stalls = [Stall {
            start: 40.0,
            end: 41.0,
        }];
        let marks = mark(spans(&send, &latency), &stalls, Reach::Drain).unwrap();
        assert_eq!(marks.busy_since(4.0), 0.0);
        assert_eq!(marks.busy_since(11.0), 10.0);
        assert_eq!(marks.busy_since(30.0), 30.0);
        // The one sent at 4 has a window of 9 (from 0), the one at 11 of 10 (from 10); the
        // gap from the first send to the stall (40) is closed, the one after its drain (50
        // to the last reply, 51) open.
        let (_, weights) = untouched(spans(&send, &latency), &marks, &latency);
        let free = |w: f64| 40.0 - w + 1.0;
        let raw = [
            free(5.0),
            free(9.0),
            free(2.0),
            free(10.0),
            free(1.0),
            free(1.0),
        ]
        .map(|f| 1.0 / f);
        let mean = raw.iter().sum::<f64>() / raw.len() as f64;
        for (w, r) in weights.iter().zip(raw) {
            assert!((w - r / mean).abs() < 1e-12, "{weights:?}");
        }
    }

    #[test]
    fn without_stalls_leaves_out_what_they_touched() {
        // Latency 10-16, but the five requests sent during a stall every 1,000 sends are
        // answered just after it ends.
        let n = 200_000;
        let send: Vec<f64> = (0..n).map(|i| i as f64 * 100.0).collect();
        let mut stalls = Vec::new();
        let latency: Vec<f64> = (0..n)
            .map(|i| {
                if i % 1_000 < 5 {
                    if i % 1_000 == 0 {
                        stalls.push(Stall {
                            start: send[i] - 1.0,
                            end: send[i] + 450.0,
                        });
                    }
                    send[i - i % 1_000] + 455.0 - send[i]
                } else {
                    10.0 + (i % 7) as f64
                }
            })
            .collect();
        let all = without_stalls(spans(&send, &latency), &[], &[0.99, 0.999], 0.95).unwrap();
        assert_eq!(all.n, n);
        assert!(all.percentiles[1].value > 50.0, "{all:?}");
        let own = without_stalls(spans(&send, &latency), &stalls, &[0.99, 0.999], 0.95).unwrap();
        assert!((own.touched_share - 0.005).abs() < 1e-9, "{own:?}");
        assert_eq!(own.percentiles[1].value, 16.0);
        let ci = own.percentiles[1].ci_under_dependence.as_ref().unwrap();
        assert!(ci.high <= 16.0, "{ci:?}");
    }

    #[test]
    fn rejects_bad_spans_and_stalls() {
        let send = [0.0, 1.0];
        assert!(mark(spans(&send, &[1.0]), &[], Reach::Drain).is_err());
        assert!(mark(spans(&send, &[1.0, -1.0]), &[], Reach::Drain).is_err());
        let backwards = Stall {
            start: 2.0,
            end: 1.0,
        };
        assert!(mark(spans(&send, &[1.0, 1.0]), &[backwards], Reach::Drain).is_err());
    }

    #[test]
    fn a_clients_late_send_is_a_stall_of_its_own_known_to_the_ns() {
        // A request every 1,000 ns, 100 ns each, given out of order; the one due at 5,000
        // left at 5,400 (400 ns late): a stall of the client from 5,000 to 5,400, which
        // touches it and nothing else (the one due at 6,000 went out with nothing in
        // flight). A probe's stall over [8,050, 8,500] touches the one sent at 8,000.
        let mut sent: Vec<Sent> = (0..10u64)
            .rev()
            .map(|i| Sent {
                departure_ns: i * 1_000 + if i == 5 { 400 } else { 0 },
                late_ns: if i == 5 { 400 } else { 0 },
                latency_ns: 100,
            })
            .collect();
        let probe = vec![Stall {
            start: 8_050.0,
            end: 8_500.0,
        }];
        let left = untouched_sent(&mut sent, probe.clone(), 300).unwrap();
        assert_eq!(left.requests, 10);
        assert!((left.touched_share - 0.2).abs() < 1e-12, "{left:?}");
        assert_eq!(left.latency_us, vec![0.1; 8]);
        assert!(
            sent.windows(2)
                .all(|w| w[0].departure_ns < w[1].departure_ns)
        );
        // Late by less than the threshold: only the probe's stall.
        let left = untouched_sent(&mut sent, probe, 500).unwrap();
        assert!((left.touched_share - 0.1).abs() < 1e-12, "{left:?}");
    }
}
