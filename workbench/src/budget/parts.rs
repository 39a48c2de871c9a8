//! The parts' arithmetic: the figures of a run's start every point's budget shares
//! ([`Baseline`]), what was seen while a point measured ([`During`]), and how a point's
//! budget is made from its few figures ([`Figures`]) and those.

use vernier_agent::{PollMode, StallReport, Workload};
use vernier_protocols::Dist;

use super::grid::median_of_sum;
use super::host::host;
use super::policy::{
    AS_SENT_MAX_RATE, BUDGET_PERCENTILE, all_kept, beyond_as_sent, enough_for_spread,
};
use super::queue::{Model, Queue, served_beyond};
use super::start;
use crate::coordinator::{Budget, Part, PointResult, ProbeWindow};
use crate::scenario::{AgentSpec, Scenario};

/// Why a workload other than the synthetic one has no ideal model.
pub(super) const NO_MODEL: &str =
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
    /// request), µs, at the [`GRID`](super::GRID)'s quantiles; empty when not measured.
    path: Vec<f64>,
}

/// The few figures of a point's result its budget reads: its measured p50 and the CI
/// around it, its rates, and what the host's stall probes reported while it measured.
#[derive(Debug, Clone, Copy)]
pub struct Figures<'a> {
    /// The measured p50, µs (`None`: the point reported none).
    pub measured_us: Option<f64>,
    /// The CI around it, µs.
    pub ci_us: Option<(f64, f64)>,
    /// The point's offered rate, requests/s: the ideal model's arrivals.
    pub target_rate: f64,
    /// The share of its requests the point kept.
    pub sampling_rate: f64,
    /// The host probes' reports of the point's measuring round.
    pub host: &'a [StallReport],
}

impl<'a> Figures<'a> {
    /// The figures of `result`.
    pub fn of<R>(result: &'a PointResult<R>) -> Figures<'a> {
        let measured = result.percentile(BUDGET_PERCENTILE);
        Figures {
            measured_us: measured.map(|q| q.value),
            ci_us: measured.and_then(|q| q.ci_low.zip(q.ci_high)),
            target_rate: result.target_rate,
            sampling_rate: result.sampling_rate,
            host: &result.host,
        }
    }
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
    /// those requests asked for, µs at the [`GRID`](super::GRID)'s quantiles (empty: its
    /// replies do not say).
    pub served: (Vec<f64>, Vec<f64>),
    /// The median latency of each of the load's connections and its standard error, µs:
    /// how far their paths differ (connections keep their placement, and their paths, for
    /// the whole run).
    pub connections: Vec<(f64, f64)>,
}

/// The path's move by the probe, and how it was found.
struct Tracked {
    shift: f64,
    how: String,
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

    /// The same, with the path's latencies (µs at the [`GRID`](super::GRID)'s quantiles,
    /// ascending) that the server's time is added to, request by request.
    pub fn with_path(self, path: Vec<f64>) -> Self {
        Baseline { path, ..self }
    }

    /// The budget of `result`'s median, with what was seen while the point measured: the
    /// budget of its [`Figures`], for a caller holding the whole result.
    pub fn budget<R>(&self, result: &PointResult<R>, during: During) -> Budget {
        self.budget_from(Figures::of(result), during)
    }

    /// The budget of a point's median from its `figures`, with what was seen while it
    /// measured.
    pub fn budget_from(&self, figures: Figures<'_>, during: During) -> Budget {
        let During {
            probe,
            sent,
            connections,
            served,
        } = during;
        let p = BUDGET_PERCENTILE;
        let measured_us = figures.measured_us;
        let model = self.model(figures.target_rate);
        let host = host(figures.host, measured_us, model.as_ref().ok());
        // The server's queue: fed the requests as they were sent when every one of them is
        // known, else Poisson arrivals at the point's rate.
        let ideal = model
            .as_ref()
            .map_err(Clone::clone)
            .map(|m| (m, self.ideal_queue(m, sent, figures.sampling_rate)));
        let model_part = match &ideal {
            Ok((m, q)) => self.server(m, figures.target_rate, q),
            Err(why) => Part::unknown(why.clone()),
        };
        let tracked = probe.as_ref().map(|w| match &ideal {
            Ok((_, q)) => self.track(w, q),
            Err(_) => Err("no ideal model, so no wait to take out of its latencies".into()),
        });
        let (client, path_moved) = self.client_moved(tracked.as_ref());
        let remains = self.remains(measured_us, &client, path_moved.as_ref(), &host.part);
        let queue_part = match (&tracked, &probe, &ideal) {
            (Some(Ok(t)), Some(w), Ok((m, q))) => Some(self.queue_beyond(t, w, m, q, &host.part)),
            _ => None,
        };
        let served_part = self.served(&served, probe.as_ref(), measured_us);
        let mut budget = Budget {
            p,
            measured_us,
            ci_us: figures.ci_us,
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

    /// The ideal server's queue at model `m`: fed the point's requests as they were `sent`
    /// when it kept them all (`sampling_rate`), else Poisson arrivals, saying why.
    fn ideal_queue(
        &self,
        m: &Model,
        sent: Option<Result<Vec<u64>, String>>,
        sampling_rate: f64,
    ) -> Queue {
        let poisson = Queue::poisson(m);
        let as_sent = match sent {
            Some(Ok(departures)) if all_kept(sampling_rate) => match sent_rate(&departures) {
                Some(rate) if beyond_as_sent(rate, departures.len()) => Err(format!(
                    "the point sent {rate:.0} req/s, beyond the {AS_SENT_MAX_RATE:.0} a second the model fed the requests as sent is checked at"
                )),
                _ => self.sent_queue(m, &departures),
            },
            Some(Ok(_)) => Err(format!(
                "the point kept 1 request in {:.0}, and a queue fed the requests as sent needs them all",
                1.0 / sampling_rate
            )),
            Some(Err(why)) => Err(why),
            None => Err("the requests' departures were not collected".into()),
        };
        match as_sent {
            Ok(q) => q.beside(&poisson, &self.path),
            Err(why) => poisson.because(&why),
        }
    }

    /// The client's share, and the path's move by the probe when it was `tracked`; a
    /// probe that could not be used is said in the client's part.
    fn client_moved(&self, tracked: Option<&Result<Tracked, String>>) -> (Part, Option<Part>) {
        match tracked {
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
        }
    }

    /// What remains of the measured p50 less the floor, the `client`, the path's move
    /// and the `host`: the server and its queue, by difference.
    fn remains(
        &self,
        measured_us: Option<f64>,
        client: &Part,
        path_moved: Option<&Part>,
        host: &Part,
    ) -> Part {
        let moved = path_moved.map_or(Some(0.0), |p| p.us);
        match (measured_us, self.floor.us, client.us, moved, host.us) {
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
        }
    }

    /// With the probe, the server's queue as it was: a request of the load waits what a
    /// zero-service probe arriving at random waits (PASTA), then is served; so the load's
    /// median is the probe's latencies plus the service time, request by request. What
    /// that holds beyond the parts above is the queue the ideal model misses.
    fn queue_beyond(
        &self,
        t: &Tracked,
        w: &ProbeWindow,
        m: &Model,
        q: &Queue,
        host: &Part,
    ) -> Part {
        let service = self.service_grid(m);
        let predicted = median_of_sum(&w.grid, &service);
        // The path as the probe moved it (tracking needs the calibration's).
        let path: Vec<f64> = self.path.iter().map(|x| x + t.shift).collect();
        let modelled = median_of_sum(&path, &q.sojourns);
        let beyond = predicted - modelled - host.us.unwrap_or(0.0);
        Part::known(
            beyond,
            format!(
                "the probe's latencies plus the service time ({}), request by request, have a median of {predicted:.2} µs (the load's requests wait what a probe arriving at random waits, then are served); the path plus the ideal server's queue, {modelled:.2} µs, and the host's part leave this: the server's queue beyond the ideal model (its own work on each request, arrivals burstier than the model's)",
                m.service
            ),
        )
    }

    /// The service beyond what was asked, when the server's replies say what it `served`
    /// (against the path probe's latencies with a probe, else the calibration's).
    fn served(
        &self,
        served: &(Vec<f64>, Vec<f64>),
        probe: Option<&ProbeWindow>,
        measured_us: Option<f64>,
    ) -> Option<Part> {
        match served {
            (served, asked) if !served.is_empty() && served.len() == asked.len() => {
                let base = match probe {
                    Some(w) => (&w.grid[..], "the path probe's latencies"),
                    None => (&self.path[..], "the client calibration's latencies"),
                };
                Some(served_beyond(served, asked, base, measured_us))
            }
            _ => None,
        }
    }

    /// The service time's quantiles at the [`GRID`](super::GRID), µs: drawn, so any
    /// distribution does.
    pub(super) fn service_grid(&self, m: &Model) -> Vec<f64> {
        m.service_grid(self.seed)
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

    /// The ideal model at `rate` requests/s, or why there is none.
    pub(super) fn model(&self, rate: f64) -> Result<Model, String> {
        let service = self.service.clone()?;
        Model::at(service, self.seed, rate)
    }

    /// The ideal server fed the point's requests as they were sent (`departures`, ns, any
    /// order); see [`Queue::as_sent`].
    pub(super) fn sent_queue(&self, m: &Model, departures: &[u64]) -> Result<Queue, String> {
        Queue::as_sent(m, departures, self.seed)
    }
}

/// How far the connections' paths differ: the standard deviation of their medians less
/// what each median's own sampling error explains (the method of moments of a
/// random-effects model, as DerSimonian and Laird's τ), from (median, standard error)
/// pairs; `None` for fewer than [`MIN_SPREAD_CONNECTIONS`](super::policy::MIN_SPREAD_CONNECTIONS).
fn connection_spread(medians: &[(f64, f64)]) -> Option<f64> {
    let n = medians.len();
    if !enough_for_spread(n) {
        return None;
    }
    let mean = medians.iter().map(|m| m.0).sum::<f64>() / n as f64;
    let var = medians.iter().map(|m| (m.0 - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let noise = medians.iter().map(|m| m.1 * m.1).sum::<f64>() / n as f64;
    Some((var - noise).max(0.0).sqrt())
}

/// Requests a second over the span of `departures` (ns, any order); `None` for fewer than
/// two or no span.
fn sent_rate(departures: &[u64]) -> Option<f64> {
    let first = departures.iter().min()?;
    let last = departures.iter().max()?;
    let span_s = (last - first) as f64 / 1e9;
    (departures.len() > 1 && span_s > 0.0).then(|| (departures.len() - 1) as f64 / span_s)
}
