//! The budget's policy: every threshold, limit and level its decisions use, each with
//! the reason for its value. Code elsewhere in the budget names these, never repeats them.

/// The percentile a budget splits, in percent.
pub const BUDGET_PERCENTILE: f64 = 50.0;

/// Requests the ideal model simulates per point (after a tenth as many of warm-up): its
/// median is then good to a fraction of a per cent, in a few tens of ms.
pub(super) const MODEL_REQUESTS: usize = 200_000;

/// Service times drawn for the service time's quantiles at the grid (`Model::service_grid`).
pub(super) const SERVICE_DRAWS: usize = 100_000;

/// Random instants the waits of the ideal server fed the requests as sent
/// (`Queue::as_sent`) are read at.
pub(super) const WAIT_INSTANTS: usize = 20_000;

/// The share of its requests a point must have kept for the ideal server to be fed them as
/// they were sent: a queue built from a thinned sample would leave out the requests that
/// queue behind the kept ones, so it needs them all; the share kept is computed (a rate
/// over another), hence a hair below 1 rather than 1 itself.
pub(super) const ALL_KEPT: f64 = 0.999;

/// The highest rate, req/s on one agent, at which the ideal server is fed the requests as
/// sent; beyond it the Poisson model stands in. The model fed the requests of faster loads
/// is not checked: fed the 5,000 a second of the budget's end-to-end test, its queue part
/// came out below the bound that test sets (docs/history/results-2026-11-24-to-29.md, "Where the median goes, part
/// by part").
pub(super) const AS_SENT_MAX_RATE: f64 = 2_000.0;

/// Departures too few for a queue fed the requests as sent: below this many, the
/// Poisson model stands in.
pub(super) const MIN_SENT_DEPARTURES: usize = 1_000;

/// The server's replies read as the time it served each request unless their median is
/// below this share of the median service asked (less [`SERVED_SLACK_US`]): a server
/// cannot serve a request for less than it asked, so replies well below that are not the
/// time served; the share and the slack leave room for the times' rounding.
pub(super) const SERVED_SHARE_OF_ASKED: f64 = 0.99;

/// The absolute slack, µs, beside [`SERVED_SHARE_OF_ASKED`], for service times so short
/// that a share of them is below the replies' resolution.
pub(super) const SERVED_SLACK_US: f64 = 0.05;

/// The share of requests meeting a stall at or above which the host's part is unknown:
/// with half the requests or more stalled, the median itself is a stalled request's, and
/// the ideal model's distribution cannot say where it moved (the p50 would move to its
/// p100 or beyond).
pub(super) const STALLED_MEDIAN_SHARE: f64 = 0.5;

/// The confidence level of the path probe's CI around its p50 (95%, as vernier's other
/// confidence intervals).
pub(super) const PROBE_CI_LEVEL: f64 = 0.95;

/// The fewest answered probe requests a probe window is made from: below three, a window
/// has no median with order statistics either side to bound it.
pub(super) const MIN_PROBE_REQUESTS: usize = 3;

/// The fewest connections whose medians make a spread of paths: with two, the spread's
/// single degree of freedom says too little to report.
pub(super) const MIN_SPREAD_CONNECTIONS: usize = 3;

/// Samples a connection needs for its median to count in the budget's spread of paths.
pub(super) const MIN_CONNECTION_SAMPLES: usize = 50;

/// The confidence level of each connection's order-statistic CI around its median, from
/// which its standard error is read (see [`Z_95`]).
pub(super) const CONNECTION_CI_LEVEL: f64 = 0.95;

/// The standard normal's 97.5% quantile: a 95% CI's width over twice this is the standard
/// error of the figure it bounds.
pub(super) const Z_95: f64 = 1.959_964;

// ---- each threshold above applied by one function, which every caller asks ----

/// Whether the host's stalls took a small enough `share` of the time for the median they
/// move to be read from the model ([`STALLED_MEDIAN_SHARE`]).
pub(super) fn median_movable(share: f64) -> bool {
    share < STALLED_MEDIAN_SHARE
}

/// Whether a point at `sampling_rate` kept every request ([`ALL_KEPT`]).
pub(super) fn all_kept(sampling_rate: f64) -> bool {
    sampling_rate >= ALL_KEPT
}

/// Whether `departures` sent at `rate` req/s are beyond what the model fed the requests as
/// sent is checked at ([`AS_SENT_MAX_RATE`], with enough of them to say so).
pub(super) fn beyond_as_sent(rate: f64, departures: usize) -> bool {
    rate > AS_SENT_MAX_RATE && enough_departures(departures)
}

/// Whether `departures` are enough for a queue ([`MIN_SENT_DEPARTURES`]).
pub(super) fn enough_departures(departures: usize) -> bool {
    departures >= MIN_SENT_DEPARTURES
}

/// Whether `connections` medians are enough for their spread ([`MIN_SPREAD_CONNECTIONS`]).
pub(super) fn enough_for_spread(connections: usize) -> bool {
    connections >= MIN_SPREAD_CONNECTIONS
}

/// Whether `requests` are enough for a probe window ([`MIN_PROBE_REQUESTS`]).
pub(super) fn enough_probe_requests(requests: usize) -> bool {
    requests >= MIN_PROBE_REQUESTS
}

/// Whether a connection's `samples` are enough for its median ([`MIN_CONNECTION_SAMPLES`]).
pub(super) fn enough_connection_samples(samples: usize) -> bool {
    samples >= MIN_CONNECTION_SAMPLES
}

/// Whether a served median `served_p50` falls short of the asked one `asked_p50` (µs)
/// beyond the model's own noise ([`SERVED_SHARE_OF_ASKED`], [`SERVED_SLACK_US`]).
pub(super) fn served_below_asked(served_p50: f64, asked_p50: f64) -> bool {
    served_p50 < asked_p50 * SERVED_SHARE_OF_ASKED - SERVED_SLACK_US
}
