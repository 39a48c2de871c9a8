//! A point's latency budget: where the median's microseconds went ("Where has my time
//! gone?", Zilberman et al.). The measured p50 is split into
//!
//! - the **floor** of the path: the p50 round trip of a busy-polling ping-pong between
//!   the agent's core and the target's, measured when the run starts (`vernier
//!   calibrate`'s ping-pong), the least any request can take here; blocking instead where
//!   this process has one core for both ends (`budget::start` says why);
//! - the **client's share**: what the agent's own measurement path (its timestamps, its
//!   way of waiting for replies) and a bare server's handling add to the floor, calibrated
//!   when the run starts against vernier's zero-service synthetic server. The agent's
//!   samples carry one stamp per request, so kernel and user stamps cannot be compared
//!   request by request; the calibrated figure stands in, and says so;
//! - **host interference**: what the run's stall probes saw while the point measured: the
//!   share of requests whose window held a stall, its size, and (where the ideal model
//!   gives the latency distribution) how far that share moves the median;
//! - **what remains**: the server and its queue. Where the service time is known (the
//!   synthetic protocol's `service:`), by the ideal M/G/1 model, independent of the
//!   measurement: how far the model's times, added request by request to the client
//!   calibration's latencies, move their median; everywhere, the measured median less the
//!   parts above, by difference.
//!
//! With `budget: {probe: SHARE}` the path is also measured while each point measures
//! ([`probe`]): the start-of-run calibration is moved to the probe's p50 (less the ideal
//! model's wait for it), the queue beyond the ideal model is a part, and the parts' sum
//! carries the probe's CI, so that "the parts add up" is judged against both uncertainties
//! rather than against a calibration minutes old.
//!
//! Where the server says in its replies how long it served each request (vernier's
//! synthetic server), the **service beyond what was asked** is a part too: a spin
//! overshoots, and the OS or the hypervisor takes the server's core mid-request.
//!
//! The budget is of the p50: the floor and the client's share are medians, and a median
//! of a sum is the sum of medians when all parts but one are nearly constant, as the path
//! is on a quiet host. Where the path varies (a tenth of its requests several µs slow), a
//! spread-out service time moves the median by more than its own median, which is why the
//! server's part adds the model to the path's measured latencies rather than quoting the
//! model's p50. Higher percentiles do not split at all (the p99 of a sum is not the sum of
//! p99s). A figure that cannot be measured on a given host or path is `None` with the
//! reason, never a guess.

use vernier_agent::{PollMode, StallReport, Workload};
use vernier_fixtures::{Fcfs, ModelConfig, simulate};
use vernier_protocols::Dist;

use crate::coordinator::PointResult;
use crate::scenario::{AgentSpec, Scenario};

pub mod probe;
mod start;
pub use crate::coordinator::{Budget, HostPart, Part, ProbeWindow};

/// The percentile a budget splits, in percent.
pub const BUDGET_PERCENTILE: f64 = 50.0;

/// Requests the ideal model simulates per point (after a tenth as many of warm-up): its
/// median is then good to a fraction of a per cent, in a few tens of ms.
const MODEL_REQUESTS: usize = 200_000;

/// Why a workload other than the synthetic one has no ideal model.
const NO_MODEL: &str =
    "no ideal model: the WORKLOAD server's service time is its own, unknown to vernier";

/// The figures of a run's start that every point's budget shares, and what the budgets
/// need of the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The path's floor.
    pub floor: Part,
    /// The client's share.
    pub client: Part,
    /// The synthetic service time, or why the server has no model.
    service: Result<Dist, String>,
    seed: u64,
    /// The workers sleep between events (`poll: sleep`).
    sleeps: bool,
    /// The latencies of the client's calibration (floor and client together, request by
    /// request), µs, at the [`GRID`]'s quantiles; empty when not measured.
    path: Vec<f64>,
}

impl Baseline {
    /// Measures the floor and the client's share for `scenario`'s path: about a second,
    /// before any load, and never longer than the limits of `budget::start` allow. Each
    /// measurement is announced in a line to `say` as it starts. Never fails: what cannot
    /// be measured is a part with its reason.
    pub fn measure(scenario: &Scenario, mut say: impl FnMut(String)) -> Baseline {
        let service = match &scenario.workload {
            Workload::Synthetic { service, .. } => Ok(*service),
            Workload::KeyValue(_) => Err(NO_MODEL.replace("WORKLOAD", "key-value")),
            Workload::Echo => Err(NO_MODEL.replace("WORKLOAD", "echo")),
        };
        let local = scenario
            .agents
            .iter()
            .any(|a| matches!(a, AgentSpec::Local { .. }));
        if !local {
            let why = "the agents run on other hosts, and vernier measures a floor and calibrates a client only on its own";
            say(format!(
                "latency budget: no floor or client calibration: {why}"
            ));
            return Baseline::given(
                Part::unknown(why),
                Part::unknown(why),
                service,
                scenario.seed,
            );
        }
        let cores = start::Cores::of(scenario);
        let (floor, loopback) = start::floor(scenario, &cores, &mut say);
        let (client, path) = match loopback {
            Ok(p50) => start::client(scenario, &cores, p50, &mut say),
            Err(why) => (
                Part::unknown(format!("no floor to calibrate against: {why}")),
                Vec::new(),
            ),
        };
        Baseline {
            sleeps: scenario.poll == PollMode::Sleep,
            ..Baseline::given(floor, client, service, scenario.seed).with_path(path)
        }
    }

    /// Figures given rather than measured, for tests and replays.
    pub fn given(floor: Part, client: Part, service: Result<Dist, String>, seed: u64) -> Self {
        Baseline {
            floor,
            client,
            service,
            seed,
            sleeps: false,
            path: Vec::new(),
        }
    }

    /// The same, with the path's latencies (µs at the [`GRID`]'s quantiles, ascending)
    /// that the server's time is added to, request by request.
    pub fn with_path(self, path: Vec<f64>) -> Self {
        Baseline { path, ..self }
    }

    /// The budget of `result`'s median, with what was seen while the point measured.
    pub fn budget(&self, result: &PointResult, during: During) -> Budget {
        let During {
            probe,
            sent,
            connections,
            served,
        } = during;
        let p = BUDGET_PERCENTILE;
        let measured = result.percentile(p);
        let measured_us = measured.map(|q| q.value);
        let ci_us = measured.and_then(|q| q.ci_low.zip(q.ci_high));
        let model = self.model(result.target_rate);
        let host = host(&result.host, measured_us, model.as_ref().ok());
        // The server's queue: fed the requests as they were sent when every one of them is
        // known, else Poisson arrivals at the point's rate.
        let ideal = model.as_ref().map_err(Clone::clone).map(|m| {
            let poisson = Queue::poisson(m);
            let as_sent = match sent {
                Some(Ok(departures)) if result.sampling_rate >= 0.999 => {
                    self.sent_queue(m, &departures)
                }
                Some(Ok(_)) => Err(format!(
                    "the point kept 1 request in {:.0}, and a queue fed the requests as sent needs them all",
                    1.0 / result.sampling_rate
                )),
                Some(Err(why)) => Err(why),
                None => Err("the requests' departures were not collected".into()),
            };
            let queue = match as_sent {
                Ok(q) => q.beside(&poisson, &self.path),
                Err(why) => poisson.because(&why),
            };
            (m, queue)
        });
        let model_part = match &ideal {
            Ok((m, q)) => self.server(m, result.target_rate, q),
            Err(why) => Part::unknown(why.clone()),
        };
        let tracked = probe.as_ref().map(|w| match &ideal {
            Ok((_, q)) => self.track(w, q),
            Err(_) => Err("no ideal model, so no wait to take out of its latencies".into()),
        });
        let (client, path_moved) = match &tracked {
            Some(Ok(t)) => (
                self.client.clone(),
                Some(Part::known(t.shift, t.how.clone())),
            ),
            Some(Err(why)) => (
                Part {
                    us: self.client.us,
                    how: format!("{}; the path probe was not used: {why}", self.client.how),
                },
                None,
            ),
            None => (self.client.clone(), None),
        };
        let moved = path_moved.as_ref().map_or(Some(0.0), |p| p.us);
        let remains = match (measured_us, self.floor.us, client.us, moved, host.part.us) {
            (Some(m), Some(f), Some(c), Some(d), Some(h)) => Part::known(
                m - f - c - d - h,
                if path_moved.is_some() {
                    "the measured p50 less the floor, the client, the path's move and the host: the server and its queue, by difference"
                } else {
                    "the measured p50 less the floor, the client and the host: the server and its queue, by difference"
                },
            ),
            (None, ..) => Part::unknown("the point reported no p50"),
            _ => Part::unknown("a part it would be the difference from is unknown"),
        };
        // With the probe, the server's queue as it was: a request of the load waits what a
        // zero-service probe arriving at random waits (PASTA), then is served; so the
        // load's median is the probe's latencies plus the service time, request by request.
        // What that holds beyond the parts above is the queue the ideal model misses.
        let queue_part = match (&tracked, &probe, &ideal) {
            (Some(Ok(t)), Some(w), Ok((m, q))) => {
                let service = self.service_grid(m);
                let predicted = median_of_sum(&w.grid, &service);
                // The path as the probe moved it (tracking needs the calibration's).
                let path: Vec<f64> = self.path.iter().map(|x| x + t.shift).collect();
                let modelled = median_of_sum(&path, &q.sojourns);
                let beyond = predicted - modelled - host.part.us.unwrap_or(0.0);
                Some(Part::known(
                    beyond,
                    format!(
                        "the probe's latencies plus the service time ({}), request by request, have a median of {predicted:.2} µs (the load's requests wait what a probe arriving at random waits, then are served); the path plus the ideal server's queue, {modelled:.2} µs, and the host's part leave this: the server's queue beyond the ideal model (its own work on each request, arrivals burstier than the model's)",
                        m.service
                    ),
                ))
            }
            _ => None,
        };
        let served_part = match &served {
            (served, asked) if !served.is_empty() && served.len() == asked.len() => {
                let base = match &probe {
                    Some(w) => (&w.grid[..], "the path probe's latencies"),
                    None => (&self.path[..], "the client calibration's latencies"),
                };
                Some(served_beyond(served, asked, base, measured_us))
            }
            _ => None,
        };
        let mut budget = Budget {
            p,
            measured_us,
            ci_us,
            floor: self.floor.clone(),
            client,
            path_moved,
            host,
            model: model_part,
            remains,
            probe,
            sum_ci_us: None,
            queue: queue_part,
            connection_sd_us: None,
            served: served_part,
        };
        // The probe's p50 is the one part measured with sampling error of its own (its
        // requests take turns on the load's connections, so no placement error is added).
        if let (Some(Ok(_)), Some(w), Some(sum)) = (&tracked, &budget.probe, budget.sum_us())
            && let Some((lo, hi)) = w.ci_us
        {
            budget.sum_ci_us = Some((sum - (w.p50_us - lo), sum + (hi - w.p50_us)));
        }
        // How far the load's connections' paths differ: a finding of its own (a probe over
        // connections of its own, or a run over few, would meet this much chance).
        budget.connection_sd_us = connection_spread(&connections);
        budget
    }

    /// The service time's quantiles at the [`GRID`], µs: drawn, so any distribution does.
    fn service_grid(&self, m: &Model) -> Vec<f64> {
        use rand::SeedableRng;
        let mut rng =
            rand::rngs::SmallRng::seed_from_u64(vernier_protocols::worker_seed(self.seed, 1));
        let sampler = m.service.sampler();
        let mut draws: Vec<f64> = (0..SERVICE_DRAWS)
            .map(|_| sampler.sample(&mut rng).max(0.0) / 1e3)
            .collect();
        draws.sort_unstable_by(f64::total_cmp);
        on_grid(&draws)
    }

    /// How far the path moved between the run's start and the point, by the probe: its
    /// p50 against the calibration's latencies plus the ideal model's waits (the probe's
    /// requests queue behind the load's, and need no service themselves).
    fn track(&self, w: &ProbeWindow, q: &Queue) -> Result<Tracked, String> {
        let Some(c) = self.client.us else {
            return Err("the client's calibration has no figure to move".into());
        };
        if self.path.is_empty() {
            return Err("the client's calibration kept no latencies to move".into());
        }
        let expected = median_of_sum(&self.path, &q.waits);
        let shift = w.p50_us - expected;
        let ci = match w.ci_us {
            Some((lo, hi)) => format!("[{lo:.2}, {hi:.2}] µs, {}", w.ci_how),
            None => w.ci_how.clone(),
        };
        // Measured here: poll: sleep left 0.45–0.55 µs unexplained at 50 µs of service and
        // 2,000 req/s in three runs, poll: adaptive 0.10–0.12 µs in two (docs/RESULTS.md).
        let sleeping = if self.sleeps {
            "; the workers sleep between events (poll: sleep), so a probe's reply, a few µs after it left, finds the worker's core awake while a reply after a longer service may find it gone idle, which on a virtual host lengthens kernel-stamped latencies too (by about 0.5 µs at 50 µs of service and 2,000 req/s on vernier's own 2-vCPU host; poll: adaptive keeps the core awake for both)"
        } else {
            ""
        };
        Ok(Tracked {
            shift,
            how: format!(
                "the path as the point met it, against the floor and the client's share calibrated at the run's start ({c:+.2} µs): moved by {shift:+.2} µs to the path probe's (requests asking the target for no service time, {:.0} req/s sent by the load's workers among its requests over its {} connections: {} answered, p50 {:.2} µs {ci}), against which the calibration's latencies plus the ideal server's waits for such requests (p50 {expected:.2} µs) are set. A calibration minutes old, the connections' use, and the target's own handling of a request beyond the calibrating server's (a server that sleeps between requests wakes for each) all move it{sleeping}",
                w.rate, w.connections, w.requests, w.p50_us
            ),
        })
    }

    /// The server's part by the model: its p50 alone when the path's latencies are not
    /// known; otherwise how far the model's times, added request by request to the path's,
    /// move the path's median. Medians of varying parts do not simply add (the path's rare
    /// slow requests lift the median of a spread-out service time, not of a fixed one), so
    /// this is what the server adds to the floor and the client as measured.
    fn server(&self, m: &Model, rate: f64, queue: &Queue) -> Part {
        let how = format!(
            "the ideal server fed {}: FCFS, one worker assumed (the scenario does not say how many the target has), no network, client or server overhead; service {} at {rate:.0} req/s, load {:.2}",
            queue.how, m.service, m.load
        );
        if self.path.is_empty() {
            let p50 = median_of_sum(&[0.0], &queue.sojourns);
            return Part::known(
                p50,
                format!("{how}; its p50 {p50:.2} µs, with no path latencies to add it to"),
            );
        }
        let alone = median_of_sum(&[0.0], &self.path);
        Part::known(
            median_of_sum(&queue.sojourns, &self.path) - alone,
            format!(
                "{how}; added request by request to the latencies of the client's calibration (median {alone:.2} µs), it moves their median by this much"
            ),
        )
    }

    fn model(&self, rate: f64) -> Result<Model, String> {
        let service = self.service.clone()?;
        let mean_s = service.mean_ns() / 1e9;
        let load = rate * mean_s;
        let result = simulate(&ModelConfig {
            requests: MODEL_REQUESTS,
            warmup: MODEL_REQUESTS / 10,
            seed: self.seed,
            ccdf: true,
            waits: true,
            ..ModelConfig::new(service, load)
        })
        .map_err(|e| format!("no ideal model at {rate:.0} req/s of service {service}: {e}"))?;
        let p50 = result
            .percentiles
            .iter()
            .find(|q| (q.p - 0.5).abs() < 1e-9)
            .map(|q| q.value)
            .ok_or_else(|| "the ideal model reported no p50".to_string())?;
        let waits = on_grid(&result.waits_us);
        Ok(Model {
            service,
            load,
            p50,
            waits,
            ccdf: result.ccdf.iter().map(|c| (c.latency_us, c.ccdf)).collect(),
        })
    }
}

/// The ideal model's answer at a point's load.
struct Model {
    service: Dist,
    load: f64,
    p50: f64,
    /// Its waits before service, µs, at the [`GRID`]'s quantiles (what a request needing no
    /// service would wait, arriving at random).
    waits: Vec<f64>,
    /// (µs, share above), ascending in µs.
    ccdf: Vec<(f64, f64)>,
}

/// What was seen while a point measured, beyond its result.
#[derive(Debug, Clone, Default)]
pub struct During {
    /// The path probe's window, when the scenario ran one.
    pub probe: Option<ProbeWindow>,
    /// The kernel (or user) departure times of the point's kept requests, ns on one
    /// agent's clock, or why they are not known; `None`: not collected.
    pub sent: Option<Result<Vec<u64>, String>>,
    /// The times the server says it served the point's requests, and the service times
    /// those requests asked for, µs at the [`GRID`]'s quantiles (empty: its replies do not
    /// say).
    pub served: (Vec<f64>, Vec<f64>),
    /// The median latency of each of the load's connections and its standard error, µs:
    /// how far their paths differ (connections keep their placement, and their paths, for
    /// the whole run).
    pub connections: Vec<(f64, f64)>,
}

/// The ideal server's queue the server's part is read from: its sojourn times and the
/// waits of a request needing no service arriving at random, at the [`GRID`]'s quantiles.
struct Queue {
    sojourns: Vec<f64>,
    waits: Vec<f64>,
    how: String,
}

impl Queue {
    /// The M/G/1 model's: Poisson arrivals at the point's rate.
    fn poisson(m: &Model) -> Queue {
        Queue {
            sojourns: grid().map(|q| m.quantile(q).unwrap_or(m.max())).collect(),
            waits: m.waits.clone(),
            how: format!(
                "Poisson arrivals (the M/G/1 model, {MODEL_REQUESTS} simulated requests; its p50 {:.2} µs)",
                m.p50
            ),
        }
    }

    /// This queue, saying why it is the Poisson one.
    fn because(mut self, why: &str) -> Queue {
        self.how = format!("{} — not the arrivals as sent: {why}", self.how);
        self
    }

    /// This queue, saying how far the Poisson one would differ at the median of `path`.
    fn beside(mut self, poisson: &Queue, path: &[f64]) -> Queue {
        let path = if path.is_empty() { &[0.0][..] } else { path };
        let ours = median_of_sum(&self.sojourns, path);
        let theirs = median_of_sum(&poisson.sojourns, path);
        self.how = format!(
            "{}; Poisson arrivals at the same rate would give {:+.2} µs at the median (the sends' bunching, e.g. several requests due while the agent's core woke late, makes the difference)",
            self.how,
            theirs - ours
        );
        self
    }
}

/// How far the connections' paths differ: the standard deviation of their medians less
/// what each median's own sampling error explains (the method of moments of a
/// random-effects model, as DerSimonian and Laird's τ), from (median, standard error)
/// pairs; `None` for fewer than 3.
fn connection_spread(medians: &[(f64, f64)]) -> Option<f64> {
    let n = medians.len();
    if n < 3 {
        return None;
    }
    let mean = medians.iter().map(|m| m.0).sum::<f64>() / n as f64;
    let var = medians.iter().map(|m| (m.0 - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let noise = medians.iter().map(|m| m.1 * m.1).sum::<f64>() / n as f64;
    Some((var - noise).max(0.0).sqrt())
}

/// Service times drawn for [`Baseline::service_grid`].
const SERVICE_DRAWS: usize = 100_000;

/// Random instants the waits of [`Baseline::sent_queue`] are read at.
const WAIT_INSTANTS: usize = 20_000;

impl Baseline {
    /// The ideal server fed the point's requests as they were sent (`departures`, ns, any
    /// order): FCFS with one worker, service times drawn from the model's distribution.
    /// Its waits are those of requests needing no service at random instants, admitted
    /// among the others (they leave the queue as it was).
    fn sent_queue(&self, m: &Model, departures: &[u64]) -> Result<Queue, String> {
        use rand::{RngExt, SeedableRng};
        if departures.len() < 1_000 {
            return Err(format!(
                "{} departures are too few for a queue",
                departures.len()
            ));
        }
        let mut arrivals: Vec<f64> = departures.iter().map(|&d| d as f64).collect();
        arrivals.sort_unstable_by(f64::total_cmp);
        let (first, last) = (arrivals[0], arrivals[arrivals.len() - 1]);
        let mut rng =
            rand::rngs::SmallRng::seed_from_u64(vernier_protocols::worker_seed(self.seed, 0));
        let mut instants: Vec<f64> = (0..WAIT_INSTANTS)
            .map(|_| rng.random_range(first..=last))
            .collect();
        instants.sort_unstable_by(f64::total_cmp);
        let sampler = m.service.sampler();
        let mut server = Fcfs::new(1);
        let mut sojourns = Vec::with_capacity(arrivals.len());
        let mut waits = Vec::with_capacity(instants.len());
        let mut next = instants.iter().peekable();
        for &a in &arrivals {
            while let Some(&t) = next.next_if(|&&t| t < a) {
                waits.push((server.admit(t, 0.0) - t) / 1e3);
            }
            let service = sampler.sample(&mut rng).max(0.0);
            sojourns.push((server.admit(a, service) + service - a) / 1e3);
        }
        for &t in next {
            waits.push((server.admit(t, 0.0) - t) / 1e3);
        }
        sojourns.sort_unstable_by(f64::total_cmp);
        waits.sort_unstable_by(f64::total_cmp);
        Ok(Queue {
            sojourns: on_grid(&sojourns),
            waits: on_grid(&waits),
            how: format!(
                "the arrivals as sent (the {} requests of the point at the times the agent stamped their departures, {:.1} s)",
                arrivals.len(),
                (last - first) / 1e9
            ),
        })
    }
}

/// The server's time beyond the service asked: how far the times it says it served
/// (`served`, µs at the [`GRID`]), against those the same requests asked for (`asked`),
/// move the median of `base` (latencies, named: the probe's, or the calibration's path)
/// plus each. Unknown when the replies cannot be the time served: a median below what was
/// asked, or above the measured latency's.
fn served_beyond(
    served: &[f64],
    asked: &[f64],
    (base, named): (&[f64], &str),
    measured_us: Option<f64>,
) -> Part {
    let (served_p50, asked_p50) = (served[served.len() / 2], asked[asked.len() / 2]);
    let below = served_p50 < asked_p50 * 0.99 - 0.05;
    let above = measured_us.is_some_and(|p50| served_p50 > p50);
    if below || above {
        return Part::unknown(format!(
            "the server's replies do not read as the time it served each request: their median {served_p50:.2} µs against {asked_p50:.2} µs asked{}",
            measured_us.map_or(String::new(), |p50| format!(
                " and a p50 latency of {p50:.2} µs"
            ))
        ));
    }
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let (us, against) = if base.is_empty() {
        (served_p50 - asked_p50, "alone".to_string())
    } else {
        (
            median_of_sum(base, served) - median_of_sum(base, asked),
            format!("added request by request to {named}"),
        )
    };
    Part::known(
        us,
        format!(
            "the times the server says it served the load's requests (in its replies: median {served_p50:.3} µs, mean {:.3} µs, p99 {:.2} µs) against the service they asked for (median {asked_p50:.3} µs, mean {:.3} µs), {against}: time the OS or the hypervisor took from the server's core mid-request, and its loop's overshoot",
            mean(served),
            served[served.len() * 99 / 100],
            mean(asked),
        ),
    )
}

/// The path's move by the probe, and how it was found.
struct Tracked {
    shift: f64,
    how: String,
}

/// How many quantiles a distribution is kept at for adding two of them: (i + 0.5) / GRID
/// for i below it. A million sums, a few ms.
pub const GRID: usize = 1_000;

/// The [`GRID`]'s quantile levels, ascending.
fn grid() -> impl Iterator<Item = f64> {
    (0..GRID).map(|i| (i as f64 + 0.5) / GRID as f64)
}

/// A histogram of ns at the [`GRID`]'s quantiles, µs (empty for an empty one).
pub fn histogram_grid(h: &hdrhistogram::Histogram<u64>) -> Vec<f64> {
    if h.is_empty() {
        return Vec::new();
    }
    grid()
        // The middle of each value's bucket, not its top (16 ns above at 20 µs).
        .map(|q| h.median_equivalent(h.value_at_quantile(q)) as f64 / 1e3)
        .collect()
}

/// Ascending `sorted` at the [`GRID`]'s quantiles (empty for none).
fn on_grid(sorted: &[f64]) -> Vec<f64> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    grid()
        .map(|q| sorted[((q * n as f64) as usize).min(n - 1)])
        .collect()
}

/// The median of A + B for independent A and B, each given by its quantiles at evenly
/// spaced levels (every pair of them is equally likely).
fn median_of_sum(a: &[f64], b: &[f64]) -> f64 {
    let mut sums: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| x + y))
        .collect();
    if sums.is_empty() {
        return f64::NAN;
    }
    let middle = sums.len() / 2;
    *sums.select_nth_unstable_by(middle, f64::total_cmp).1
}

impl Model {
    /// The largest sojourn time the CCDF shows, µs.
    fn max(&self) -> f64 {
        self.ccdf.last().map_or(self.p50, |c| c.0)
    }

    /// The `q` quantile, linear between the CCDF's levels; `None` beyond them.
    fn quantile(&self, q: f64) -> Option<f64> {
        let above = 1.0 - q;
        self.ccdf.windows(2).find_map(|w| {
            let ((x0, c0), (x1, c1)) = (w[0], w[1]);
            (c0 >= above && above >= c1).then(|| {
                if c0 > c1 {
                    x0 + (x1 - x0) * (c0 - above) / (c0 - c1)
                } else {
                    x0
                }
            })
        })
    }
}

/// Host interference from the probes' reports of the point's measuring round: the probes
/// pinned to the workers' and the target's cores when there are any (the stalls a request
/// meets), else the coordinator's unpinned one.
fn host(reports: &[StallReport], window_us: Option<f64>, model: Option<&Model>) -> HostPart {
    let pinned: Vec<&StallReport> = reports.iter().filter(|r| r.cpu.is_some()).collect();
    let probes = if pinned.is_empty() {
        reports.iter().collect()
    } else {
        pinned
    };
    let seconds = probes.iter().map(|r| r.seconds).fold(0.0, f64::max);
    if probes.is_empty() || seconds <= 0.0 {
        return HostPart {
            part: Part::unknown(
                "no stall probe ran (remote agents only, or the probe could not start)",
            ),
            requests_share: None,
            stalls: 0,
            stall_mean_us: None,
            stall_max_us: None,
        };
    }
    let names = probes
        .iter()
        .map(|r| r.name())
        .collect::<Vec<_>>()
        .join(", ");
    let lost_us: f64 = probes
        .iter()
        .map(|r| r.stalled_share * r.seconds * 1e6)
        .sum();
    let stalls: u64 = probes.iter().map(|r| r.stalls_over_1ms).sum();
    let max_us = probes.iter().map(|r| r.late_max_us).fold(0.0, f64::max);
    let window = window_us.unwrap_or(0.0);
    // A request meets a stall when its window overlaps it: a stall of length L catches the
    // requests sent in the L + window before its end.
    let share = ((lost_us + stalls as f64 * window) / (seconds * 1e6)).min(1.0);
    let sees = if probes.iter().all(|r| r.realtime) {
        "real-time probes see the hypervisor and the kernel taking the cores, not other ordinary threads sharing them"
    } else {
        "ordinary-priority probes: other threads on their cores delay them too"
    };
    let how_share = format!(
        "probes on {names}: {:.2}% of requests' windows ({window:.1} µs) held a stall or time the core was not the probe's ({stalls} wake-ups over 1 ms late, {:.1} ms lost beyond 100 µs, in {seconds:.1} s; {sees})",
        share * 100.0,
        lost_us / 1e3
    );
    let part = if share == 0.0 {
        Part::known(0.0, how_share)
    } else {
        match model {
            Some(m) if share < 0.5 => match (m.quantile(0.5 / (1.0 - share)), m.quantile(0.5)) {
                (Some(moved), Some(p50)) => Part::known(
                    moved - p50,
                    format!(
                        "{how_share}; the median moves from the ideal model's p50 to its p{:.2}, the stalled requests all taken to land above it",
                        50.0 / (1.0 - share)
                    ),
                ),
                _ => Part::unknown(format!(
                    "{how_share}; the model's CCDF does not reach that far"
                )),
            },
            Some(_) => Part::unknown(format!(
                "{how_share}: half the requests or more met a stall, and the median is the stalls'"
            )),
            None => Part::unknown(format!(
                "{how_share}; how far that moves the median needs the ideal model's distribution, which this workload has not"
            )),
        }
    };
    HostPart {
        part,
        requests_share: Some(share),
        stalls,
        stall_mean_us: (stalls > 0).then(|| lost_us / stalls as f64),
        stall_max_us: Some(max_us),
    }
}

#[cfg(test)]
mod tests;
