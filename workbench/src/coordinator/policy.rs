//! Every threshold, factor and limit of the methodology, each with the reason for its
//! value. Code elsewhere names these; it never repeats a number.

use std::time::Duration;

use vernier_stats::{Percentile, Rule};

/// Inter-arrival tests before the point is N/A (`method: lancet`, or an enforced test).
pub(crate) const INTERARRIVAL_TRIES: u32 = 5;
/// The lowest sampling rate the independence search may reach (`method: lancet`).
pub(crate) const MIN_SAMPLING: f64 = 1e-4;
/// Progress events are this far apart: twice a second is live enough for a person.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(500);
/// A backlog of this many seconds of requests means the load has gone closed-loop for good.
pub(crate) const HOPELESS_BACKLOG_S: f64 = 0.5;
/// Requests sent this late (median) mean the agent cannot generate the load.
pub(crate) const HOPELESS_SEND_LAG_NS: u64 = 200_000_000;
/// How long an agent may see only failures before the target is declared failed.
pub(crate) const TARGET_FAILED_AFTER: Duration = Duration::from_secs(1);

/// `method: vernier` keeps every request as a sample unless the point could then hold more
/// than this many by its time limit (24 bytes each: 240 MB; an evaluation copies and sorts
/// them once more), when it keeps a systematic 1-in-k and says so in the phase line.
pub(crate) const MAX_KEPT_SAMPLES: f64 = 10e6;
/// ... or unless an agent would send more than this many a second. Correlated neighbours
/// add little: on this host's keep-all records (`cargo run --release --example kept_share`,
/// docs/RESULTS.md) memcached at 10,000 req/s had 19.8 effective samples beyond p99 with
/// every request kept and 17.4-20.9 with 1 in 2 to 1 in 16, the demo at 4,000 req/s 16.6
/// with all and 16.8 with half: the tail's clusters, not the requests, are what count. Every
/// look sorts and tests all that is kept, on the cores being measured (memcached with every
/// request kept: p99 256-454 µs, the agent's core stalled 2.6% of the time), so more buys
/// nothing there; the HDR histograms still hold every request.
pub(crate) const MAX_KEPT_PER_SECOND: f64 = 2000.0;
/// A request left "on schedule" when its send lag (kernel TX stamp minus scheduled
/// departure) is within the tolerance asked ([`DEPARTURE_SHARE_OF_WIDTH`] of the CI width),
/// and never less than this: the agent's own send path costs 4–7 µs on loopback, so a
/// tighter bound would call every request of a burst late.
pub(crate) const ON_SCHEDULE_NS: u32 = 10_000;
/// A backlog is the load's own (a closed loop) when requests waited for a free slot in
/// more than this share of the measuring round's reports (each worker reports every 20 ms).
/// A pause of the target or a stall of the host fills every slot for a report or two, and
/// the requests it delays are late because of it; a load the connections cannot carry
/// keeps them full. On this host the demo's 32 connections at 2,000 req/s were full for an
/// instant of a 13 ms stall while its sleeping worker woke 60 µs late for most requests,
/// which had read as a closed loop.
pub(crate) const CLOSED_LOOP_SHARE: f64 = 0.5;
/// The departure check passes when the target percentile of the requests sent on schedule
/// and of all requests differ by at most this share of the CI width the user asked for
/// (its half-width: the ± precision asked), or when the on-schedule requests' own interval
/// reaches that band: the client's lateness is then not shown to move the answer by more
/// than the precision asked.
pub(crate) const DEPARTURE_SHARE_OF_WIDTH: f64 = 0.5;
/// The on-schedule requests must be at least this share of all for their percentile to
/// stand for the requests the user asked for.
pub(crate) const MIN_ON_SCHEDULE_SHARE: f64 = 0.2;
/// A CI whose order-statistic width is this many times an exponential tail's (from the
/// same number of samples, at the same percentile) comes from a heavy tail: the
/// distribution's own shape, not dependence, is what keeps it wide.
pub(crate) const HEAVY_TAIL_FACTOR: f64 = 2.0;
/// ... and, when the host probe saw stalls that reach the percentile, heavy at this
/// percentile too: a service's own heavy tail is heavy inside the tail as well, while the
/// host's stalls catch 1-2% of requests and fatten only the last percents (fixed service at
/// 30% load on this host was wrongly named heavy at p99 alone).
pub(crate) const HEAVY_TAIL_ALSO_AT: Percentile = Percentile::P90;
/// The host's stalls are named as a tail's cause only when the time they took is at least
/// this share of the tail beyond the percentile (1% for p99): the requests a stall catches
/// are about its share of the time, and fewer than a tenth of the tail cannot make it come
/// in clusters. On this kind of host, with vernier's threads off the server's core, a
/// 100 s run saw 0.01-0.08% of its time stalled (a real-time probe) while its p99 still
/// drifted with the host's load, which is not a stall.
pub(crate) const HOST_SHARE_OF_TAIL: f64 = 0.1;
/// When to look again and when to stop (`method: vernier`): steps sized from the width,
/// between 1.25× and 2× the samples; a stop needs more effective tail samples the more
/// looks came before it, and a narrow interval confirmed by the next look (the reasons, and
/// the literature, in stats/src/sequential.rs; its coverage as it runs in docs/RESULTS.md).
pub(crate) const STOPPING_RULE: Rule = Rule::METHODOLOGY;
