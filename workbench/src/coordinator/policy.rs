//! Every threshold, factor and limit of the methodology, each with the reason for its
//! value. Code elsewhere names these; it never repeats a number.

use std::time::Duration;

use vernier_stats::{Percentile, Rule};

use super::reason::ReasonKind;
use super::result::{CalledBy, TouchedSide};

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
/// than this many by its time limit (32 bytes each: 320 MB; an evaluation copies and sorts
/// them once more), when it keeps a systematic 1-in-k and says so in the phase line.
pub(crate) const MAX_KEPT_SAMPLES: f64 = 10e6;
/// The most samples an agent keeps a second under `method: vernier`: correlated
/// neighbours add little to the CI (the tail's clusters count, not its requests), and every
/// look sorts all that is kept on the cores being measured; the HDR histograms still hold
/// every request. The tail without stalls marks the kept ones by the busy stretch each
/// carries (`vernier_stats::untouched_kept`). Measured in docs/history/results-2026-11-24-to-29.md ("Time to a
/// verdict").
pub(crate) const MAX_KEPT_PER_SECOND: f64 = 10_000.0;
/// A request left "on schedule" when its send lag (kernel TX stamp minus scheduled
/// departure) is within the tolerance asked ([`DEPARTURE_SHARE_OF_WIDTH`] of the CI width),
/// and never less than this: the agent's (whose pacer aims at it too).
pub(crate) const ON_SCHEDULE_NS: u32 = vernier_agent::ON_SCHEDULE_NS;
/// A backlog is the load's own (a closed loop) when requests waited for a free slot in
/// more than this share of the measuring round's reports (each worker reports every 20 ms):
/// a pause of the target or a stall of the host fills every slot for a report or two, a
/// load the connections cannot carry keeps them full (docs/RESULTS.md, "What does
/// each constant in policy.rs rest on?").
pub(crate) const CLOSED_LOOP_SHARE: f64 = 0.5;
/// The departure check passes when the target percentile of the requests sent on schedule
/// and of all requests differ by at most this share of the CI width the user asked for
/// (its half-width: the ± precision asked), or when the on-schedule requests' own interval
/// reaches that band: the client's lateness is then not shown to move the answer by more
/// than the precision asked.
pub(crate) const DEPARTURE_SHARE_OF_WIDTH: f64 = 0.5;
/// The agents are told a new pacing tolerance (see `Action::Pace`) when the estimate moves
/// it by more than this share: a worker's lead follows its tolerance, and a message per
/// progress tick for a few percent of drift would buy nothing.
pub(crate) const PACE_CHANGE: f64 = 0.25;
/// The on-schedule requests must be at least this share of all for their percentile to
/// stand for the requests the user asked for.
pub(crate) const MIN_ON_SCHEDULE_SHARE: f64 = 0.2;
/// A CI whose order-statistic width is this many times an exponential tail's (from the
/// same number of samples, at the same percentile) comes from a heavy tail: the
/// distribution's own shape, not dependence, is what keeps it wide.
pub(crate) const HEAVY_TAIL_FACTOR: f64 = 2.0;
/// The percentile a tail must be heavy at too, when the host probe saw stalls that reach
/// the target percentile: a service's own heavy tail is heavy inside the tail as well,
/// while the host's stalls fatten only the last percents (docs/history/results-2026-11-24-to-29.md, "The server's
/// own tail on a host that stalls").
pub(crate) const HEAVY_TAIL_ALSO_AT: Percentile = Percentile::P90;
/// The host's stalls are named as a tail's cause only when the time they took is at least
/// this share of the tail beyond the percentile (1% for p99): the requests a stall catches
/// are about its share of the time, and fewer than a tenth of the tail cannot make it come
/// in clusters (docs/history/results-2026-11-24-to-29.md, "The server's own tail on a host that stalls").
pub(crate) const HOST_SHARE_OF_TAIL: f64 = 0.1;
/// When to look again and when to stop (`method: vernier`): steps sized from the width,
/// between 1.25× and 2× the samples; a stop needs more effective tail samples the more
/// looks came before it, and a narrow interval confirmed by the next look (the reasons, and
/// the literature, in stats/src/sequential.rs; its coverage as it runs in docs/RESULTS.md).
pub(crate) const STOPPING_RULE: Rule = Rule::METHODOLOGY;

/// A point ends N/A at once, rather than at its time limit, when the samples the stopping
/// rule predicts the precision asked needs (its last look's `Rule::needed`) are more than
/// this many times the samples the point can hold by its limit: ten times is beyond what
/// the noise of one look's width has explained (the largest overshoot measured is 8.5
/// times, docs/history/results-2026-11-24-to-29.md, "A one-liner within its limit"). Closer than that, the point
/// goes on looking, its looks planned within the limit (`Rule::within`).
pub(crate) const FAR_BEYOND_REACH: f64 = 10.0;
/// The tail without the host's stalls is judged only while stalls touched at most this
/// share of the point's requests: the coverage harness covers up to 24.9% touched
/// (docs/RESULTS.md, "Does the tail without stalls' CI cover?"); beyond it the
/// untouched requests are a minority whose weights stand for a tail nothing has checked.
pub(crate) const MAX_TOUCHED_SHARE: f64 = 0.25;
/// The point ends N/A for the tail without stalls once the share touched is surely beyond
/// [`MAX_TOUCHED_SHARE`], but not on less than this many seconds of requests: stalls come
/// in bursts of seconds, and a share read over one burst says little of the next minute
/// (docs/history/results-2026-11-24-to-29.md, "The target's core found, the share touched read between looks").
pub(crate) const TOUCHED_SEEN_FOR_S: f64 = 10.0;
/// Between the stopping rule's looks (which may be a minute apart), the share touched is
/// checked this often at least, so that the N/A comes when the share is known.
pub(crate) const TOUCHED_EVERY: Duration = Duration::from_secs(5);
/// The share touched is checked at most every this share of the round's time so far:
/// marking the requests costs the coordinator's thread, which shares the workers' core,
/// time in proportion to the requests (docs/history/results-2026-11-24-to-29.md, "The target's core found, the share
/// touched read between looks").
pub(crate) const TOUCHED_EVERY_SHARE: u32 = 8;
/// Once this many seconds of requests are in, a share touched whose interval still
/// straddles [`MAX_TOUCHED_SHARE`] is called by its estimate ([`call_touched`]), and the
/// result says so: the interval narrows as 1/√t, so a share near the bound straddles it for
/// minutes. Twice [`TOUCHED_SEEN_FOR_S`] reads the share over more than one burst of
/// stalls and leaves two thirds of a one-minute point for the looks of the tail it decides.
pub(crate) const TOUCHED_CALL_AFTER_S: f64 = 20.0;
/// A look whose stop (with the look that confirms it) is planned beyond the samples the
/// time left allows is looked at again on twice its samples; the point ends N/A then if
/// that look plans beyond too, with a need at least this share of the first's. A width
/// that narrows as 1/√n keeps its need; one inflated by a few stalls early on narrows
/// faster, its need falling by about a third per doubling (docs/history/results-2026-11-24-to-29.md, "A one-liner
/// within its limit"), and that point goes on.
pub(crate) const BEYOND_REACH_HOLDS: f64 = 0.75;
/// A CI's variance inflation that grows at least as this power of the samples between two
/// looks (the inflation ∝ n^g) leaves the CI's width ∝ n^((g − 1)/2): at 1 it no longer
/// shrinks, as under a drift whose period outlasts the batches (stats/src/drift.rs). On redis
/// at 10,000 req/s here the p99's went ×6.2, 11.7, 23.4, 33.8, 93.9 at 23,000, 44,000,
/// 84,000, 169,000 and 353,000 samples: 0.97, 1.05, 0.53, 1.38.
pub(crate) const INFLATION_PACE: f64 = 1.0;

/// Whether a variance inflation of `vif0` on `n0` samples that became `vif` on `n` grew at
/// least as fast as the samples ([`INFLATION_PACE`]).
pub(crate) fn inflation_keeps_pace(n0: usize, vif0: f64, n: usize, vif: f64) -> bool {
    n > n0
        && vif0 > 0.0
        && vif > vif0
        && (vif / vif0).ln() / (n as f64 / n0 as f64).ln() >= INFLATION_PACE
}

/// The windows a result reports its target percentile over, to say where a drift went:
/// at least this long, so that a window spans many of the host's stall clusters...
pub(crate) const DRIFT_WINDOW_S: f64 = 5.0;
/// ... and at least this many samples beyond the percentile each, so that a window's own
/// percentile is known to a few percent.
pub(crate) const DRIFT_WINDOW_TAIL: f64 = 100.0;

/// The windows a series of `n` samples kept at `per_second` a second is cut into for the
/// percentile of tail share `tail` ([`DRIFT_WINDOW_S`], [`DRIFT_WINDOW_TAIL`]): at least 1.
pub(crate) fn drift_windows(n: usize, per_second: f64, tail: f64) -> usize {
    let by_time = n as f64 / per_second.max(1e-9) / DRIFT_WINDOW_S;
    let by_tail = n as f64 * tail / DRIFT_WINDOW_TAIL;
    (by_time.min(by_tail).floor() as usize).clamp(1, n.max(1))
}

// ---- steps and margins of the sample counts ----

/// `method: lancet` asks for this many times the samples its width predicts (or the least
/// a CI needs): the 1/√n prediction comes from one noisy width, and falling just short
/// costs a whole round.
pub(crate) const PREDICTION_MARGIN: f64 = 1.1;
/// A step in the samples asked is at least a quarter more than now (`n + n / 4`, integer
/// division): a smaller one gives a width barely different from the last.
pub(crate) const LEAST_STEP_DIVISOR: usize = 4;
/// A failed agreement or stationarity test asks for this many times the samples wanted:
/// the test then judges a series twice as long.
pub(crate) const RETRY_FACTOR: usize = 2;
/// The share of the time left that collecting may use: the last tenth is kept back for
/// the last evaluation (and, on "continue", the time predicted is divided by it).
pub(crate) const COLLECT_SHARE_OF_TIME: f64 = 0.9;
/// The sampling counts as held at [`MAX_KEPT_PER_SECOND`] when within this factor of it
/// (the rate kept comes from a division, so equality is not exact).
pub(crate) const AT_KEPT_CAP: f64 = 0.999;

/// `n + n / LEAST_STEP_DIVISOR` (integer arithmetic): the least real step beyond `n`
/// samples.
pub(crate) fn least_step(n: usize) -> usize {
    n + n / LEAST_STEP_DIVISOR
}

// ---- warm-up and the load ----

/// Rates are judged with this many standard deviations of chance on top of the tolerance
/// asked (a Poisson count's relative √n⁻¹ over the judged windows, the mean of n
/// exponential gaps' the same): a low rate is not failed by chance.
pub(crate) const CHANCE_SIGMAS: f64 = 3.0;
/// During warm-up each agent keeps gaps at this many times the inter-arrival test's sample
/// count a second (never below the measurement's rate, never above every request): the
/// test has its gaps within a fraction of a second once warm-up ends.
pub(crate) const WARMUP_GAPS_FACTOR: f64 = 4.0;
/// The slots a closed loop's cure names: Little's law's outstanding requests plus this
/// many Poisson standard deviations (√ of them) and one, so that the load's own bursts
/// find a free slot too.
pub(crate) const SLOT_MARGIN_SIGMAS: f64 = 3.0;
/// Warm-up is judged hopeless only once 1/this of its judged windows have closed, so that
/// the rates quoted are not the ramp's.
pub(crate) const HOPELESS_AFTER_WINDOWS_DIVISOR: usize = 2;
/// A backlog is hopeless ([`HOPELESS_BACKLOG_S`]) only with more than this many requests
/// waiting: at a low rate half a second is a few requests, which a moment's wait holds back.
pub(crate) const HOPELESS_BACKLOG_MIN: u64 = 100;

// ---- the tail ----

/// A percentile estimate stands (the on-schedule requests' in the departure check, a level
/// of the live CCDF) only with at least this many samples beyond it: with fewer, its
/// value is one or two samples'.
pub(crate) const MIN_TAIL_SAMPLES: f64 = 10.0;
/// The host's stalls reach as far as the longer of their lateness's p99 and this share of
/// their longest (`Point::host_cause`): the longest is a single wake-up, so only half of it
/// is counted on.
pub(crate) const HOST_REACH_OF_LONGEST: f64 = 0.5;
/// The host's stalls reach a percentile when their reach is at least this share of its
/// value: a stall of half a request's latency is enough to move it into the tail.
pub(crate) const HOST_REACH_OF_VALUE: f64 = 0.5;
/// The departure check blames the client's host when the probe's longest lateness is at
/// least this share of the longest send lag: stalls of that order can account for it.
pub(crate) const HOST_STALL_SHARE_OF_LAG: f64 = 0.5;

// ---- the inter-arrival test's shapes ----

/// Fixed gaps pass when their coefficient of variation is below this.
pub(crate) const FIXED_MAX_CV: f64 = 0.1;
/// A floor under the gaps is looked for at their 1/this-th (the 0.5th percentile), and
/// only with at least this many gaps, so that it is a real gap.
pub(crate) const GAP_FLOOR_RANK: usize = 200;
/// An exponential's 0.5th percentile, as a share of its mean (−ln 0.995 ≈ 0.005).
pub(crate) const EXP_GAP_FLOOR: f64 = 0.005;
/// The gaps have a floor when their 0.5th percentile is more than this many times an
/// exponential's (and [`GAP_FLOOR_MIN_SHARE`] holds).
pub(crate) const GAP_FLOOR_FACTOR: f64 = 4.0;
/// The gaps have a floor (with [`GAP_FLOOR_FACTOR`]) only when an exponential would have
/// more than this share of its gaps below it: the agent then cannot draw the short gaps.
pub(crate) const GAP_FLOOR_MIN_SHARE: f64 = 0.02;
/// A short gap is under this share of the mean.
pub(crate) const SHORT_GAP_SHARE: f64 = 0.1;
/// Departures come in bursts when this many times an exponential's share of the gaps are
/// short ([`SHORT_GAP_SHARE`]).
pub(crate) const BURST_FACTOR: f64 = 1.5;

// ---- the SLO search ----

/// The SLO search multiplies the load by this while every load tried meets the objective:
/// doubling finds the bracket in a few points from any start, then bisection narrows it.
pub(crate) const SEARCH_GROWTH: f64 = 2.0;

// ---- replicated points ----

/// The least share of the runs' spread beyond their own CIs (I²) that is called
/// hysteresis: below it, the runs' own noise explains most of their differences.
pub const HYSTERESIS_I2: f64 = 0.5;

// ---- the rules: each judgement one function, which a point and a comparison's blocks
// both call, so that the two never judge the same figures differently ----

/// How a count (of requests sent or answered, or a rate) stands against the one asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RateStanding {
    /// Short of it by more than the error allowed: the load was not reached.
    Short,
    /// Within the error allowed.
    Within,
    /// Beyond it by more than the error allowed (warm-up waits for that to settle too).
    Over,
}

/// The relative error a rate is allowed: the `tolerance` asked plus [`CHANCE_SIGMAS`]
/// standard deviations of a Poisson count whose mean is `expected_count` (the requests the
/// rate asks for over the span judged), so that a low rate is not failed by chance.
pub(crate) fn rate_error_allowed(tolerance: f64, expected_count: f64) -> f64 {
    tolerance + CHANCE_SIGMAS / expected_count.max(1.0).sqrt()
}

/// Where `observed` stands against `expected` (both counts, or both rates) with the
/// relative error `allowed` ([`rate_error_allowed`]). Nothing expected is never short.
pub(crate) fn rate_standing(observed: f64, expected: f64, allowed: f64) -> RateStanding {
    if expected <= 0.0 {
        return RateStanding::Within;
    }
    let off = (observed - expected) / expected;
    if off < -allowed {
        RateStanding::Short
    } else if off > allowed {
        RateStanding::Over
    } else {
        RateStanding::Within
    }
}

/// A rate achieved under this share of the one asked is shown short (red) in the TUI's
/// agents panel: the default warm-up tolerance's 5%, without a point's allowance for
/// chance (the panel shows a second's rate, not a point's count).
const SHOWN_SHORT_SHARE: f64 = 0.95;

/// Whether a person is shown an `achieved` rate as short of the `asked` one
/// ([`SHOWN_SHORT_SHARE`]).
pub(crate) fn shown_short(achieved: f64, asked: f64) -> bool {
    achieved < SHOWN_SHORT_SHARE * asked
}

/// `vernier bench-agent`'s open-loop capacity: a rate holds while at least this share of
/// it is answered (and the departure check passes).
const BENCH_HELD_SHARE: f64 = 0.98;

/// Whether `vernier bench-agent`'s worker held the `offered` rate, `achieved` answered a
/// second ([`BENCH_HELD_SHARE`]).
pub(crate) fn bench_rate_held(achieved: f64, offered: f64) -> bool {
    achieved >= BENCH_HELD_SHARE * offered
}

/// Whether `backlog` requests waiting for a free slot at `rate` req/s mean the load has gone
/// closed-loop for good: more than [`HOPELESS_BACKLOG_S`] of requests, and more than
/// [`HOPELESS_BACKLOG_MIN`].
pub(crate) fn backlog_is_closed_loop(backlog: u64, rate: f64) -> bool {
    backlog as f64 > rate * HOPELESS_BACKLOG_S && backlog > HOPELESS_BACKLOG_MIN
}

/// What a load point's warm-up, or a comparison's block, saw of the load: the rates (or
/// counts) sent and answered against the one asked, and the backlog of requests waiting
/// for a free slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LoadSeen {
    /// The rate asked, in the unit of `sent` and `answered` (a second's, or a span's).
    pub(crate) asked: f64,
    /// Requests the rate asks for over the span judged: the Poisson count whose chance
    /// the error allowed includes.
    pub(crate) asked_count: f64,
    /// Requests sent, in `asked`'s unit.
    pub(crate) sent: f64,
    /// Replies, in `asked`'s unit.
    pub(crate) answered: f64,
    /// The rate asked, req/s: what a backlog is measured against.
    pub(crate) rate: f64,
    /// Requests waiting for a free slot (now, or the most at once where only that is
    /// known).
    pub(crate) backlog: u64,
    /// The most that waited at once.
    pub(crate) backlog_max: u64,
    /// The relative error the scenario allows (`warmup.tolerance`).
    pub(crate) tolerance: f64,
}

/// What a load beyond the rate asked means where it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Beyond {
    /// Not settled: warm-up waits for the rate to come within the tolerance on both sides,
    /// and ends N/A when it never does.
    Unsettled,
    /// Reached: a comparison's block that sends more than its rate's count is catching up
    /// after a stall of the client, which its on-schedule share judges.
    Reached,
}

/// What is wrong with the load `seen`, judged alike for a load point and a comparison's
/// block: a backlog of half a second of requests is a closed loop
/// ([`backlog_is_closed_loop`]); sends or replies short of the rate asked by more than the
/// error allowed ([`rate_error_allowed`]), or beyond it where that means unsettled
/// (`beyond`), are a closed loop when requests waited for a slot, and otherwise the load
/// not reached. `None` when the load is as asked.
pub(crate) fn load_problem(seen: &LoadSeen, beyond: Beyond) -> Option<ReasonKind> {
    if backlog_is_closed_loop(seen.backlog, seen.rate) {
        return Some(ReasonKind::ClosedLoop);
    }
    let allowed = rate_error_allowed(seen.tolerance, seen.asked_count);
    let off = |x: f64| match rate_standing(x, seen.asked, allowed) {
        RateStanding::Short => true,
        RateStanding::Within => false,
        RateStanding::Over => beyond == Beyond::Unsettled,
    };
    if off(seen.sent) || off(seen.answered) {
        return Some(if seen.backlog_max > 0 {
            ReasonKind::ClosedLoop
        } else {
            ReasonKind::LoadNotReached
        });
    }
    None
}

/// How the share touched stands against [`MAX_TOUCHED_SHARE`]: its interval `[low, high]`
/// wholly above it is over, called by the interval; still straddling it after
/// [`TOUCHED_CALL_AFTER_S`] of requests (`seen_s`), its estimate `share` calls it; `None`
/// while it may yet go either way, or lies wholly below.
pub(crate) fn call_touched(
    share: f64,
    low: f64,
    high: f64,
    seen_s: f64,
) -> Option<(TouchedSide, CalledBy)> {
    if low > MAX_TOUCHED_SHARE {
        return Some((TouchedSide::Over, CalledBy::Interval));
    }
    if high < MAX_TOUCHED_SHARE || seen_s < TOUCHED_CALL_AFTER_S {
        return None;
    }
    let side = if share > MAX_TOUCHED_SHARE {
        TouchedSide::Over
    } else {
        TouchedSide::Under
    };
    Some((side, CalledBy::Estimate))
}

/// How late a request may leave and still count as sent on schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OnSchedule {
    /// The send lag allowed, ns.
    limit_ns: u32,
}

impl OnSchedule {
    /// Within what the send path itself costs ([`ON_SCHEDULE_NS`]): where no precision is
    /// asked yet (a comparison's block, a closed loop's count of late requests).
    pub(crate) const SEND_PATH: OnSchedule = OnSchedule {
        limit_ns: ON_SCHEDULE_NS,
    };

    /// Within `allowed_us` (by Lindley, a delay of at most that cannot move a completion by
    /// more), never stricter than the send path allows.
    pub(crate) fn within_us(allowed_us: f64) -> OnSchedule {
        OnSchedule {
            limit_ns: (allowed_us * 1e3).max(f64::from(ON_SCHEDULE_NS)) as u32,
        }
    }

    /// The send lag allowed, ns.
    pub(crate) fn limit_ns(self) -> u32 {
        self.limit_ns
    }

    /// Whether a request whose send lag was `lag_ns` left on schedule.
    pub(crate) fn holds(self, lag_ns: u64) -> bool {
        lag_ns <= u64::from(self.limit_ns)
    }
}

/// Whether a share `on_schedule` of the requests sent on schedule is enough for their
/// percentile to stand for the load asked ([`MIN_ON_SCHEDULE_SHARE`]); below it the client
/// fell behind (a point's departure check fails, a comparison's block is measured again).
pub(crate) fn enough_on_schedule(on_schedule: f64) -> bool {
    on_schedule >= MIN_ON_SCHEDULE_SHARE
}

/// How far the client's lateness moved percentile `p` (a fraction) of a block or a window:
/// the percentile of every request (`all`, ascending, µs) less that of the requests sent on
/// schedule (`on_schedule`, ascending), µs; `None` when either is empty.
pub(crate) fn late_shift(all: &[f64], on_schedule: &[f64], p: f64) -> Option<f64> {
    Some(vernier_stats::percentile(all, p)? - vernier_stats::percentile(on_schedule, p)?)
}

/// Whether the client's lateness is shown to move a percentile by more than the precision
/// asked: its shift (the percentile of every request less that of the requests sent on
/// schedule, or in a comparison B's shift less A's), `shift_us`, lies beyond ± `allowed_us`
/// ([`DEPARTURE_SHARE_OF_WIDTH`] of the CI width asked), and so does the shift's whole
/// interval `[low, high]` when it has one (non-finite bounds: none). A shift that only may
/// be that large is not shown to be: chance lateness is already in the CI.
pub(crate) fn lateness_matters(shift_us: f64, low: f64, high: f64, allowed_us: f64) -> bool {
    let beyond = shift_us.abs() > allowed_us;
    if !(low.is_finite() && high.is_finite()) {
        return beyond;
    }
    beyond && (low > allowed_us || high < -allowed_us)
}

// ---- each threshold above applied by one function, which every caller asks ----

/// Whether a tail `heaviness` times an exponential's width is heavy ([`HEAVY_TAIL_FACTOR`]).
pub(crate) fn is_heavy(heaviness: f64) -> bool {
    heaviness > HEAVY_TAIL_FACTOR
}

/// Whether a backlog in `backlogged_share` of the round's reports is the load's own: a
/// closed loop rather than a pause or a stall ([`CLOSED_LOOP_SHARE`]).
pub(crate) fn is_closed_loop(backlogged_share: f64) -> bool {
    backlogged_share > CLOSED_LOOP_SHARE
}

/// Whether the host's stalls touched too large a share of the requests for the tail
/// without stalls to be judged ([`MAX_TOUCHED_SHARE`]).
pub(crate) fn too_touched(share: f64) -> bool {
    share > MAX_TOUCHED_SHARE
}

/// Whether `seen_s` seconds of requests are enough to read the share touched
/// ([`TOUCHED_SEEN_FOR_S`]).
pub(crate) fn touched_seen_long_enough(seen_s: f64) -> bool {
    seen_s >= TOUCHED_SEEN_FOR_S
}

/// Whether a percentile estimate with `beyond` samples beyond it stands
/// ([`MIN_TAIL_SAMPLES`]).
pub(crate) fn tail_estimate_stands(beyond: f64) -> bool {
    beyond >= MIN_TAIL_SAMPLES
}

/// Whether the host's longest lateness `late_max_us` can account for the longest send lag
/// `lag_max_us` ([`HOST_STALL_SHARE_OF_LAG`]).
pub(crate) fn host_explains_lag(late_max_us: f64, lag_max_us: f64) -> bool {
    late_max_us >= HOST_STALL_SHARE_OF_LAG * lag_max_us
}

/// Whether the host's stalls, reaching `reach_us` and taking `stalled_share` of the time,
/// are a cause of a percentile whose value is `value_us` and whose tail is the share
/// `tail` of requests ([`HOST_REACH_OF_LONGEST`], [`HOST_REACH_OF_VALUE`],
/// [`HOST_SHARE_OF_TAIL`]); the reach is the longer of the lateness's p99 and a share of
/// its longest.
pub(crate) fn stalls_reach(stalls: HostStallFigures, value_us: f64, tail: f64) -> bool {
    stalls
        .late_p99_us
        .max(HOST_REACH_OF_LONGEST * stalls.late_max_us)
        >= HOST_REACH_OF_VALUE * value_us
        && stalls.stalled_share >= HOST_SHARE_OF_TAIL * tail
}

/// The figures of the host's stalls [`stalls_reach`] judges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HostStallFigures {
    /// The p99 of the probe's lateness, µs.
    pub(crate) late_p99_us: f64,
    /// The longest lateness, µs.
    pub(crate) late_max_us: f64,
    /// The share of the time stalled.
    pub(crate) stalled_share: f64,
}

/// Whether a sampling rate `rate` is below the least the independence search may reach
/// ([`MIN_SAMPLING`]).
pub(crate) fn too_thin(rate: f64) -> bool {
    rate < MIN_SAMPLING
}

/// Whether an agent failing for `failing_for` means the target failed
/// ([`TARGET_FAILED_AFTER`]).
pub(crate) fn target_failed_after(failing_for: Duration) -> bool {
    failing_for >= TARGET_FAILED_AFTER
}

/// Whether another inter-arrival test may follow `tries` of them ([`INTERARRIVAL_TRIES`]).
pub(crate) fn interarrival_tries_left(tries: u32) -> bool {
    tries < INTERARRIVAL_TRIES
}

/// Whether a pacing tolerance of `ns` differs enough from the one told, `was`, to be told
/// again ([`PACE_CHANGE`]).
pub(crate) fn pace_changed(ns: u32, was: u32) -> bool {
    (f64::from(ns) - f64::from(was)).abs() > PACE_CHANGE * f64::from(was)
}

/// Whether `needed` samples are so far beyond the `limit` the point can hold that it ends
/// at once ([`FAR_BEYOND_REACH`]).
pub(crate) fn far_beyond_reach(needed: usize, limit: usize) -> bool {
    needed as f64 > FAR_BEYOND_REACH * limit as f64
}

/// Whether a need of `needed` samples, looked at again, holds the `first` one
/// ([`BEYOND_REACH_HOLDS`]).
pub(crate) fn beyond_reach_holds(needed: usize, first: usize) -> bool {
    needed as f64 >= BEYOND_REACH_HOLDS * first as f64
}

/// Whether an agent keeping `kept_per_second` samples a second is held at the cap
/// ([`MAX_KEPT_PER_SECOND`], within [`AT_KEPT_CAP`]).
pub(crate) fn at_kept_cap(kept_per_second: f64) -> bool {
    kept_per_second >= MAX_KEPT_PER_SECOND * AT_KEPT_CAP
}

/// Whether `closed` of warm-up's `windows` judged windows are enough to judge it hopeless
/// ([`HOPELESS_AFTER_WINDOWS_DIVISOR`]).
pub(crate) fn warmup_judgeable(closed: usize, windows: usize) -> bool {
    closed >= windows / HOPELESS_AFTER_WINDOWS_DIVISOR
}

/// Whether a median send lag of `median_ns` means the agent cannot generate the load
/// ([`HOPELESS_SEND_LAG_NS`]).
pub(crate) fn send_lag_hopeless(median_ns: u64) -> bool {
    median_ns > HOPELESS_SEND_LAG_NS
}

/// Whether a progress event is due `since` the last ([`PROGRESS_EVERY`]).
pub(crate) fn progress_due(since: Duration) -> bool {
    since >= PROGRESS_EVERY
}

/// Whether `n` gaps are enough to look for a floor under them ([`GAP_FLOOR_RANK`]).
pub(crate) fn floor_testable(n: usize) -> bool {
    n >= GAP_FLOOR_RANK
}

/// Whether gaps whose 0.5th percentile is `floor` (of mean `mean`), below which an
/// exponential would have `below_share` of its gaps, have a floor ([`GAP_FLOOR_FACTOR`],
/// [`EXP_GAP_FLOOR`], [`GAP_FLOOR_MIN_SHARE`]).
pub(crate) fn has_gap_floor(floor: f64, mean: f64, below_share: f64) -> bool {
    floor > GAP_FLOOR_FACTOR * EXP_GAP_FLOOR * mean && below_share > GAP_FLOOR_MIN_SHARE
}

/// Whether a share `seen` of short gaps, where an exponential has `expected`, means
/// bursts ([`BURST_FACTOR`]).
pub(crate) fn bursty(seen: f64, expected: f64) -> bool {
    seen > BURST_FACTOR * expected
}

/// Whether fixed gaps with coefficient of variation `cv` fit ([`FIXED_MAX_CV`]).
pub(crate) fn fixed_gaps_fit(cv: f64) -> bool {
    cv <= FIXED_MAX_CV
}

/// The departure check's tolerance for a CI width asked of `asked_us`: the shift of the
/// percentile allowed, µs ([`DEPARTURE_SHARE_OF_WIDTH`]).
pub(crate) fn lateness_allowed_us(asked_us: f64) -> f64 {
    DEPARTURE_SHARE_OF_WIDTH * asked_us
}

/// The departure check's pass condition, as a point and `vernier bench-agent` apply it:
/// enough requests sent on schedule ([`enough_on_schedule`]), and their percentile agrees
/// with every request's (`agrees`: [`lateness_matters`] says no).
pub(crate) fn departures_hold(on_schedule_share: f64, agrees: bool) -> bool {
    enough_on_schedule(on_schedule_share) && agrees
}

// ---- a host fit for microsecond tails (`vernier calibrate`'s verdict) ----

/// A core is fit for every request's tail at a scale when its gaps touch at most this
/// share of requests that long: fewer than the 1 in 100 a p99 holds, so that the p99 is
/// the service's and not the host's stalls'.
pub(crate) const FIT_TOUCHED_SHARE: f64 = 0.01;

/// The share of requests `scale_us` long that a core's gaps over 10 µs touch: a request
/// meets one when a gap begins while it is in flight (`gaps_per_s` a second) or when it
/// begins inside one (`lost_share`, the time the core was gone).
pub(crate) fn touched_at_scale(gaps_per_s: f64, lost_share: f64, scale_us: f64) -> f64 {
    (gaps_per_s * scale_us / 1e6 + lost_share).clamp(0.0, 1.0)
}

/// Whether a core whose gaps touch `touched` of the requests is fit for every request's
/// tail ([`FIT_TOUCHED_SHARE`]).
pub(crate) fn fit_for_every_request(touched: f64) -> bool {
    touched <= FIT_TOUCHED_SHARE
}

/// Whether it is fit for the tail without stalls at least: stalls touch no more than that
/// tail is judged at ([`MAX_TOUCHED_SHARE`]).
pub(crate) fn fit_without_stalls(touched: f64) -> bool {
    touched <= MAX_TOUCHED_SHARE
}

/// Whether a sleeping thread's wake-ups on a core came over 1 ms late at all: the core was
/// taken away (a hypervisor's doing, on a virtual machine), which a worker that sleeps
/// between departures meets.
pub(crate) fn woken_over_1ms(stalls_over_1ms: u64) -> bool {
    stalls_over_1ms > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The redis run's figures keep pace (or nearly, where one look's batches were lucky);
    /// a queue whose inflation levels off does not, nor does one that falls.
    #[test]
    fn an_inflation_that_grows_with_the_samples_keeps_pace() {
        assert!(inflation_keeps_pace(84_000, 23.4, 169_000, 47.5));
        assert!(inflation_keeps_pace(169_000, 33.8, 353_000, 93.9));
        assert!(!inflation_keeps_pace(84_000, 23.4, 169_000, 33.8));
        assert!(!inflation_keeps_pace(100_000, 5.0, 200_000, 5.5));
        assert!(!inflation_keeps_pace(100_000, 5.0, 200_000, 4.0));
        assert!(!inflation_keeps_pace(100_000, 5.0, 100_000, 50.0));
        assert_eq!(drift_windows(300_000, 10_000.0, 0.01), 6);
        assert_eq!(drift_windows(20_000, 10_000.0, 0.01), 1);
    }
}
