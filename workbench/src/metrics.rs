//! Live figures for dashboards: `vernier run --metrics ADDR` serves, at `/metrics`, the
//! asked and achieved rates, each agent's latency histogram, the methodology's phase and
//! each point's verdict, in the OpenMetrics text format (which Prometheus scrapes) through
//! the `prometheus-client` crate.
//!
//! The session feeds [`LiveMetrics`] the events it records and the latency histograms of
//! the batches it takes (every request, not only the samples kept); a scrape renders what
//! it holds then. Labels: `point` (0-based, in the order measured) and `agent` (its index
//! in the scenario). `vernier agent --metrics ADDR` serves an agent's own figures
//! ([`agent_text`]): the rate asked of it, its workers' counters and its latencies.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use hdrhistogram::Histogram;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::coordinator::{Event, EventKind, Phase, Verdict};
use crate::error::Error;

/// Upper bounds of the latency histogram's buckets, seconds: 1 µs to 1 s, 1-2-5.
const BUCKETS_S: [f64; 19] = [
    1e-6, 2e-6, 5e-6, 10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3,
    50e-3, 100e-3, 200e-3, 500e-3, 1.0,
];

/// The most a scrape's request may be: a request line and a few headers.
const MAX_REQUEST: usize = 8 << 10;

#[derive(Debug, Default)]
struct AgentState {
    sent_rate: f64,
    achieved_rate: f64,
    /// Latency of every request answered in the point, ns.
    latency: Option<Histogram<u64>>,
}

#[derive(Debug, Default)]
struct PointState {
    rate: f64,
    phase: Option<Phase>,
    verdict: Option<Verdict>,
    samples: usize,
    ci_width_us: Option<f64>,
    ci_target_us: Option<f64>,
    agents: BTreeMap<usize, AgentState>,
}

#[derive(Debug, Default)]
struct State {
    points: BTreeMap<usize, PointState>,
}

/// What a scrape shows, fed by the session.
#[derive(Debug, Clone, Default)]
pub struct LiveMetrics {
    state: Arc<Mutex<State>>,
}

/// A serde name (`warmup`, `n/a`) as a label value.
fn name_of(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

impl LiveMetrics {
    /// Nothing to show yet: a scrape before the first event has no point to describe.
    pub fn new() -> LiveMetrics {
        LiveMetrics::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Takes in what an event says: the point's rate, phase, live figures or verdict.
    pub fn event(&self, event: &Event) {
        self.with(|s| {
            let point = s.points.entry(event.point).or_default();
            point.rate = event.rate;
            match &event.kind {
                EventKind::Phase { phase, .. } => point.phase = Some(*phase),
                EventKind::Progress(p) => {
                    point.phase = Some(p.phase);
                    point.samples = p.samples;
                    point.ci_width_us = p.ci_width_us;
                    point.ci_target_us = p.ci_target_us;
                    for (i, a) in p.agents.iter().enumerate() {
                        let agent = point.agents.entry(i).or_default();
                        agent.sent_rate = a.sent_rate;
                        agent.achieved_rate = a.achieved_rate;
                    }
                }
                EventKind::Verdict(result) => point.verdict = Some(result.answer()),
                EventKind::Window { .. }
                | EventKind::Check(_)
                | EventKind::Command { .. }
                | EventKind::Run(_) => {}
            }
        });
    }

    /// Adds a batch's latencies (ns, every request it answered) to the point's agent.
    pub fn latency(&self, point: usize, agent: usize, latency: &Histogram<u64>) {
        if latency.is_empty() {
            return;
        }
        self.with(|s| {
            let agent = s
                .points
                .entry(point)
                .or_default()
                .agents
                .entry(agent)
                .or_default();
            match &mut agent.latency {
                Some(h) => {
                    // Same bounds as the agents' own histograms; a value beyond them is
                    // dropped rather than stop the figures.
                    let _ = h.add(latency);
                }
                None => agent.latency = Some(latency.clone()),
            }
        });
    }

    /// The OpenMetrics text of what is held now.
    pub fn render(&self) -> String {
        encode(self.clone())
    }

    /// Serves `/metrics` at `addr` until the returned [`Serving`] is dropped: the address it
    /// listens on (port 0 picks one) and the server.
    pub async fn serve(&self, addr: SocketAddr) -> Result<(SocketAddr, Serving), Error> {
        let metrics = self.clone();
        serve(addr, Arc::new(move || metrics.render())).await
    }
}

/// What renders the figures at each scrape.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// Serves `render`'s text at `/metrics` on `addr` until the returned [`Serving`] is
/// dropped: the address it listens on (port 0 picks one) and the server.
pub async fn serve(addr: SocketAddr, render: Render) -> Result<(SocketAddr, Serving), Error> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Usage(format!("--metrics {addr}: cannot listen there: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Error::Failed(format!("--metrics {addr}: {e}")))?;
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let render = Arc::clone(&render);
            tokio::spawn(async move {
                // A scraper that goes away or sends garbage only loses its answer.
                let _ = answer(stream, &render).await;
            });
        }
    });
    Ok((local, Serving(task)))
}

/// A server of figures, stopped when dropped.
#[derive(Debug)]
pub struct Serving(tokio::task::JoinHandle<()>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Answers one HTTP/1.x request: `GET /metrics` with the figures, anything else 404 or
/// 405; the connection closes after the answer.
async fn answer(mut stream: tokio::net::TcpStream, render: &Render) -> std::io::Result<()> {
    let mut request = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        if request.len() > MAX_REQUEST {
            return respond(
                &mut stream,
                "431 Request Header Fields Too Large",
                "text/plain",
                "",
            )
            .await;
        }
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        if n == 0 {
            return Ok(());
        }
        request.extend_from_slice(&chunk[..n]);
    }
    let line = request
        .split(|&b| b == b'\r')
        .next()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let mut parts = line.split(' ');
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    match (method, path) {
        ("GET", "/metrics") => {
            let body = render();
            respond(
                &mut stream,
                "200 OK",
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                &body,
            )
            .await
        }
        (_, "/metrics") => respond(&mut stream, "405 Method Not Allowed", "text/plain", "").await,
        _ => {
            respond(
                &mut stream,
                "404 Not Found",
                "text/plain",
                "vernier serves its figures at /metrics\n",
            )
            .await
        }
    }
}

async fn respond(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// A gauge's value for [`gauges`].
type GaugeRows = Vec<(Vec<(&'static str, String)>, f64)>;

/// Writes one gauge family.
fn gauges(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: GaugeRows,
) -> Result<(), std::fmt::Error> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, value) in rows {
        if labels.is_empty() {
            family.encode_gauge(&value)?;
        } else {
            family.encode_family(&labels)?.encode_gauge(&value)?;
        }
    }
    Ok(())
}

impl Collector for LiveMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let point = |p: usize| vec![("point", p.to_string())];
        let agent = |p: usize, a: usize| vec![("point", p.to_string()), ("agent", a.to_string())];
        let points = &state.points;
        gauges(
            &mut encoder,
            "vernier_asked_rate",
            "The load asked of the point, requests per second over all agents.",
            points.iter().map(|(&p, s)| (point(p), s.rate)).collect(),
        )?;
        let per_agent = |f: fn(&AgentState) -> f64| -> GaugeRows {
            points
                .iter()
                .flat_map(|(&p, s)| s.agents.iter().map(move |(&a, st)| (agent(p, a), f(st))))
                .collect()
        };
        gauges(
            &mut encoder,
            "vernier_sent_rate",
            "Requests sent per second by the agent, over the last half second.",
            per_agent(|a| a.sent_rate),
        )?;
        gauges(
            &mut encoder,
            "vernier_achieved_rate",
            "Replies per second to the agent, over the last half second.",
            per_agent(|a| a.achieved_rate),
        )?;
        let (phases, verdicts) = phases_and_verdicts(points);
        gauges(
            &mut encoder,
            "vernier_phase",
            "1 for the methodology's current phase of the point.",
            phases,
        )?;
        gauges(
            &mut encoder,
            "vernier_verdict",
            "1 for the point's verdict (the answer's: the tail asked), once it has one.",
            verdicts,
        )?;
        gauges(
            &mut encoder,
            "vernier_samples",
            "Samples kept in the point's current measurement, all agents.",
            points
                .iter()
                .map(|(&p, s)| (point(p), s.samples as f64))
                .collect(),
        )?;
        gauges(
            &mut encoder,
            "vernier_ci_width_seconds",
            "The width of the target percentile's confidence interval at the last check.",
            points
                .iter()
                .filter_map(|(&p, s)| s.ci_width_us.map(|w| (point(p), w / 1e6)))
                .collect(),
        )?;
        gauges(
            &mut encoder,
            "vernier_ci_target_seconds",
            "The confidence interval's width asked for.",
            points
                .iter()
                .filter_map(|(&p, s)| s.ci_target_us.map(|w| (point(p), w / 1e6)))
                .collect(),
        )?;
        latency_histograms(&mut encoder, points)
    }
}

/// Each point's phase and verdict, as gauges of 1 labelled with their names.
fn phases_and_verdicts(points: &BTreeMap<usize, PointState>) -> (GaugeRows, GaugeRows) {
    let mut phases = GaugeRows::new();
    let mut verdicts = GaugeRows::new();
    for (&p, s) in points {
        if let Some(phase) = s.phase {
            phases.push((
                vec![("point", p.to_string()), ("phase", name_of(&phase))],
                1.0,
            ));
        }
        if let Some(verdict) = s.verdict {
            verdicts.push((
                vec![("point", p.to_string()), ("verdict", name_of(&verdict))],
                1.0,
            ));
        }
    }
    (phases, verdicts)
}

/// Each agent's latency histogram of every request it had answered in each point.
fn latency_histograms(
    encoder: &mut DescriptorEncoder,
    points: &BTreeMap<usize, PointState>,
) -> Result<(), std::fmt::Error> {
    let agent = |p: usize, a: usize| vec![("point", p.to_string()), ("agent", a.to_string())];
    let histograms: Vec<_> = points
        .iter()
        .flat_map(|(&p, s)| {
            s.agents
                .iter()
                .filter_map(move |(&a, st)| st.latency.as_ref().map(|h| (agent(p, a), h)))
        })
        .collect();
    if histograms.is_empty() {
        return Ok(());
    }
    let mut family = encoder.encode_descriptor(
        "vernier_latency_seconds",
        "Latency of every request the agent had answered in the point.",
        None,
        MetricType::Histogram,
    )?;
    for (labels, h) in histograms {
        let (sum, count, buckets) = buckets(h);
        family
            .encode_family(&labels)?
            .encode_histogram::<Vec<(String, String)>>(sum, count, &buckets, None)?;
    }
    Ok(())
}

/// An agent's figures, for `vernier agent --metrics`.
#[derive(Debug)]
struct AgentFigures(vernier_agent::control::Figures);

impl Collector for AgentFigures {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let f = &self.0;
        let none = Vec::<(&'static str, String)>::new;
        gauges(
            &mut encoder,
            "vernier_agent_held",
            "1 while a coordinator holds the agent.",
            vec![(none(), if f.held { 1.0 } else { 0.0 })],
        )?;
        gauges(
            &mut encoder,
            "vernier_agent_sessions",
            "Sessions configured since the agent started.",
            vec![(none(), f.sessions as f64)],
        )?;
        gauges(
            &mut encoder,
            "vernier_agent_asked_rate",
            "The rate asked of this agent, requests per second (0 when paused or idle).",
            vec![(none(), f.asked_rate)],
        )?;
        type Field = fn(&vernier_agent::Counters) -> u64;
        let fields: [(&str, &str, Field); 7] = [
            ("vernier_agent_sent", "Requests sent in the session.", |c| {
                c.sent
            }),
            (
                "vernier_agent_received",
                "Replies received in the session.",
                |c| c.received,
            ),
            (
                "vernier_agent_failed",
                "Requests that failed in the session.",
                |c| c.failed,
            ),
            (
                "vernier_agent_timeouts",
                "Requests that timed out in the session.",
                |c| c.timeouts,
            ),
            (
                "vernier_agent_retried",
                "Requests the server refused unprocessed (HTTP/2 GOAWAY, REFUSED_STREAM) and sent again in the session.",
                |c| c.retried,
            ),
            (
                "vernier_agent_in_flight",
                "Requests waiting for a reply now.",
                |c| c.in_flight,
            ),
            (
                "vernier_agent_backlog",
                "Due requests waiting for a free connection slot now.",
                |c| c.backlog,
            ),
        ];
        for (name, help, field) in fields {
            let rows = f
                .workers
                .iter()
                .enumerate()
                .map(|(i, c)| (vec![("worker", i.to_string())], field(c) as f64))
                .collect();
            gauges(&mut encoder, name, help, rows)?;
        }
        if let Some(h) = f.latency.as_ref().filter(|h| !h.is_empty()) {
            let (sum, count, buckets) = buckets(h);
            encoder
                .encode_descriptor(
                    "vernier_agent_latency_seconds",
                    "Latency of every request answered in the session.",
                    None,
                    MetricType::Histogram,
                )?
                .encode_histogram::<Vec<(String, String)>>(sum, count, &buckets, None)?;
        }
        Ok(())
    }
}

/// The OpenMetrics text of an agent's figures.
pub fn agent_text(figures: vernier_agent::control::Figures) -> String {
    encode(AgentFigures(figures))
}

/// The OpenMetrics text of one collector.
fn encode(collector: impl Collector) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(collector));
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}

/// An HDR histogram (ns) as OpenMetrics buckets (seconds, counts per bucket, the last
/// +Inf): its sum, count and buckets.
fn buckets(h: &Histogram<u64>) -> (f64, u64, Vec<(f64, u64)>) {
    let mut counts = vec![0u64; BUCKETS_S.len() + 1];
    for v in h.iter_recorded() {
        let s = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e9;
        let i = BUCKETS_S.partition_point(|&b| b < s);
        counts[i] += v.count_since_last_iteration();
    }
    let bounds = BUCKETS_S
        .iter()
        .copied()
        .chain(std::iter::once(f64::INFINITY));
    let sum = h.mean() * h.len() as f64 / 1e9;
    (sum, h.len(), bounds.zip(counts).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_every_request_once() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for ns in [500, 1_500, 15_000, 15_000, 2_000_000_000] {
            h.record(ns).unwrap();
        }
        let (_, count, b) = buckets(&h);
        assert_eq!(count, 5);
        assert_eq!(b.iter().map(|(_, c)| c).sum::<u64>(), 5);
        // 0.5 µs ≤ 1 µs; 1.5 µs ≤ 2 µs; 15 µs ≤ 20 µs twice; 2 s beyond 1 s.
        assert_eq!(b[0], (1e-6, 1));
        assert_eq!(b[1], (2e-6, 1));
        assert_eq!(b[4], (20e-6, 2));
        assert_eq!(b.last().copied(), Some((f64::INFINITY, 1)));
    }
}
