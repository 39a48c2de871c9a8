//! The latency budget a point's result carries: the parts its median splits into, each
//! with how it was measured or why it could not be, and their sum. A result type like the
//! rest of [`super::result`]'s; [`crate::budget`] fills it from the run's start-of-run
//! calibration and the point's own figures.

use serde::{Deserialize, Serialize};

/// One part of a budget: its size, µs, and how it was measured; or, without a size, why
/// it could not be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// µs; `None`: unknown on this host or path (see `how`).
    #[serde(default)]
    pub us: Option<f64>,
    /// How it was measured, or why it is unknown.
    pub how: String,
}

impl Part {
    /// A part of `us` µs, measured as `how` says.
    pub fn known(us: f64, how: impl Into<String>) -> Part {
        Part {
            us: Some(us),
            how: how.into(),
        }
    }

    /// A part that could not be measured, for the reason `why`.
    pub fn unknown(why: impl Into<String>) -> Part {
        Part {
            us: None,
            how: why.into(),
        }
    }

    /// `12.3 µs`, or `unknown`.
    pub fn text(&self) -> String {
        self.us
            .map_or("unknown".to_string(), |us| format!("{us:.1} µs"))
    }
}

/// What the stall probes saw, as a part of the budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostPart {
    /// How far the stalls move the median, µs.
    #[serde(flatten)]
    pub part: Part,
    /// The share of requests whose window (send to reply, the median's length) held a
    /// stall or time the core was not the probe's.
    #[serde(default)]
    pub requests_share: Option<f64>,
    /// Wake-ups more than 1 ms late, on the probes counted.
    #[serde(default)]
    pub stalls: u64,
    /// Time the cores were not the probes' (lateness beyond 100 µs) per stall, µs.
    #[serde(default)]
    pub stall_mean_us: Option<f64>,
    /// The latest wake-up's lateness, µs.
    #[serde(default)]
    pub stall_max_us: Option<f64>,
}

/// A point's latency budget (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The percentile split, in percent (50).
    pub p: f64,
    /// The measured percentile, µs (`None` when the point reported none).
    pub measured_us: Option<f64>,
    /// Its CI, µs.
    #[serde(default)]
    pub ci_us: Option<(f64, f64)>,
    /// The path's floor.
    pub floor: Part,
    /// The client's share, as calibrated at the run's start.
    pub client: Part,
    /// How far the path the probe met lies from the calibration's (only with a probe).
    #[serde(default)]
    pub path_moved: Option<Part>,
    /// Host interference.
    pub host: HostPart,
    /// The server and its queue by the ideal model, where the service time is known.
    pub model: Part,
    /// The measured percentile less the floor, the client and the host: the server and its
    /// queue, by difference.
    pub remains: Part,
    /// The path probe's measurement over the point, when the scenario asked for one.
    #[serde(default)]
    pub probe: Option<ProbeWindow>,
    /// The CI of the parts' sum, µs, when a part carries one (the probe's p50).
    #[serde(default)]
    pub sum_ci_us: Option<(f64, f64)>,
    /// The server's queue beyond the ideal model's, measured by the path probe's waits
    /// (only with a probe).
    #[serde(default)]
    pub queue: Option<Part>,
    /// How far the load's connections' paths differ, µs (the standard deviation of their
    /// medians beyond their sampling error): connections keep their paths for a run.
    #[serde(default)]
    pub connection_sd_us: Option<f64>,
    /// The server's time beyond the service asked (the OS or the hypervisor taking its
    /// core mid-request, its loop's overshoot), where its replies say how long it served
    /// each request (vernier's synthetic server) and the service asked is known.
    #[serde(default)]
    pub served: Option<Part>,
}

impl Budget {
    /// The parts the budget adds up, in order: floor, client, host, the server by the
    /// model, and with the path probe the queue beyond the model (`None` for any unknown).
    pub fn parts(&self) -> Vec<(&'static str, Option<f64>)> {
        let mut parts = vec![("floor", self.floor.us), ("client", self.client.us)];
        if let Some(moved) = &self.path_moved {
            parts.push(("path moved", moved.us));
        }
        parts.extend([
            ("host", self.host.part.us),
            ("server (model)", self.model.us),
        ]);
        if let Some(queue) = &self.queue {
            parts.push(("queue beyond", queue.us));
        }
        if let Some(served) = &self.served {
            parts.push(("service beyond", served.us));
        }
        parts
    }

    /// The sum of [`Budget::parts`], when every one is known.
    pub fn sum_us(&self) -> Option<f64> {
        self.parts().iter().map(|(_, us)| *us).sum()
    }

    /// What the measurement holds beyond the parts (negative: less), when all are known.
    pub fn unexplained_us(&self) -> Option<f64> {
        Some(self.measured_us? - self.sum_us()?)
    }

    /// Whether the parts add up to the measured percentile: the sum within the
    /// measurement's CI or, when the sum has a CI too, 0 within the CI of their difference
    /// (each side's half-widths added in quadrature).
    pub fn adds_up(&self) -> Option<bool> {
        let (lo, hi) = self.difference_ci()?;
        Some(lo <= 0.0 && 0.0 <= hi)
    }

    /// The CI of the measured percentile less the parts' sum, µs: the measurement's CI less
    /// the sum, widened by the sum's own CI when it has one.
    pub fn difference_ci(&self) -> Option<(f64, f64)> {
        let sum = self.sum_us()?;
        let measured = self.measured_us?;
        let (low, high) = self.ci_us?;
        let d = measured - sum;
        let (below, above) = (measured - low, high - measured);
        Some(match self.sum_ci_us {
            Some((s_low, s_high)) => (d - below.hypot(s_high - sum), d + above.hypot(sum - s_low)),
            None => (d - below, d + above),
        })
    }

    /// One line per part as displays show it: its name, its size (or `unknown`) and how it
    /// was measured (or why it could not be).
    pub fn rows(&self) -> Vec<(&'static str, String, &str)> {
        let mut rows = vec![
            ("floor", self.floor.text(), self.floor.how.as_str()),
            ("client", self.client.text(), &self.client.how),
        ];
        if let Some(moved) = &self.path_moved {
            rows.push(("moved", moved.text(), &moved.how));
        }
        rows.extend([
            ("host", self.host.part.text(), self.host.part.how.as_str()),
            ("server", self.model.text(), &self.model.how),
        ]);
        if let Some(queue) = &self.queue {
            rows.push(("queue", queue.text(), &queue.how));
        }
        if let Some(served) = &self.served {
            rows.push(("served", served.text(), &served.how));
        }
        rows.push(("remains", self.remains.text(), &self.remains.how));
        rows
    }

    /// The parts and the summary in one line, as tables print it: `floor 5.5 µs, client
    /// -1.1 µs, host 0.0 µs, server (model) 20.0 µs; p50 24.6 [24.5, 24.7] µs; parts 24.4
    /// µs, +0.2 µs unexplained`.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .parts()
            .iter()
            .map(|(name, us)| match us {
                Some(us) => format!("{name} {us:.1} µs"),
                None => format!("{name} unknown"),
            })
            .collect();
        format!("{}; {}", parts.join(", "), self.summary())
    }

    /// The measurement against the parts' sum, in a line: `p50 29.8 [29.4, 30.2] µs; parts
    /// 29.6 µs, within the CI`.
    pub fn summary(&self) -> String {
        let measured = match (self.measured_us, self.ci_us) {
            (None, _) => return "no p50 reported: nothing to split".into(),
            (Some(m), Some((lo, hi))) => format!("p50 {m:.1} [{lo:.1}, {hi:.1}] µs"),
            (Some(m), None) => format!("p50 {m:.1} µs [no CI]"),
        };
        let unknown: Vec<&str> = self
            .parts()
            .iter()
            .filter(|(_, us)| us.is_none())
            .map(|(name, _)| *name)
            .collect();
        let parts = |sum: f64| match self.sum_ci_us {
            Some((lo, hi)) => format!("parts {sum:.1} [{lo:.1}, {hi:.1}] µs"),
            None => format!("parts {sum:.1} µs"),
        };
        let within = if self.sum_ci_us.is_some() {
            "within the CIs"
        } else {
            "within the CI"
        };
        match (self.sum_us(), self.unexplained_us(), self.adds_up()) {
            (Some(sum), _, Some(true)) => {
                format!("{measured}; {}, {within}", parts(sum))
            }
            (Some(sum), Some(left), _) => {
                format!("{measured}; {}, {left:+.1} µs unexplained", parts(sum))
            }
            _ => format!("{measured}; parts unknown: {}", unknown.join(", ")),
        }
    }
}

/// What the probe measured over one point: the p50 of its requests, with a CI, and its
/// latencies at the budget's grid of quantiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeWindow {
    /// Its rate, req/s.
    pub rate: f64,
    /// Its connections.
    #[serde(default)]
    pub connections: usize,
    /// Requests answered while the point measured.
    pub requests: usize,
    /// Their p50, µs.
    pub p50_us: f64,
    /// Its 95% CI, µs, when one could be built.
    pub ci_us: Option<(f64, f64)>,
    /// How the CI was built (or why there is none).
    pub ci_how: String,
    /// The latencies at the budget's grid (`crate::budget::GRID`) of quantiles, µs, ascending.
    #[serde(skip)]
    pub grid: Vec<f64>,
}
