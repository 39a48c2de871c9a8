//! How fit a host's cores are for microsecond tails, by the share of requests their stalls
//! touch: what `vernier calibrate` judges each core by, and what a run says of its host.

use serde::{Deserialize, Serialize};

use super::policy::{fit_for_every_request, fit_without_stalls};

/// How fit a core, or the host, is for tails at a scale: by the share of requests that long
/// its stalls touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fitness {
    /// Its gaps touch fewer requests than a p99 holds: every request's tail is the
    /// service's.
    Fit,
    /// They touch more, but no more than the tail without stalls is judged at: that tail
    /// (vernier's default) answers; every request's holds the host's stalls.
    FitWithoutStalls,
    /// They touch more than that: no tail at this scale is the service's here.
    Unfit,
}

impl Fitness {
    /// The fitness of a core whose gaps touch `touched` of the requests.
    pub fn of(touched: f64) -> Fitness {
        if fit_for_every_request(touched) {
            Fitness::Fit
        } else if fit_without_stalls(touched) {
            Fitness::FitWithoutStalls
        } else {
            Fitness::Unfit
        }
    }

    /// As the table says it.
    pub fn name(self) -> &'static str {
        match self {
            Fitness::Fit => "fit",
            Fitness::FitWithoutStalls => "fit without stalls",
            Fitness::Unfit => "unfit",
        }
    }
}
