//! The deterministic terms of the ADF regression, which its critical values and p-values
//! (MacKinnon's tables) depend on as much as the regression itself.

use serde::Serialize;

/// The deterministic terms of the ADF regression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Regression {
    /// No constant, no trend.
    N,
    /// A constant (the default).
    #[default]
    C,
    /// A constant and a linear trend.
    Ct,
}

impl Regression {
    /// The deterministic terms' count: 0, 1 or 2.
    pub(super) fn ntrend(self) -> usize {
        match self {
            Regression::N => 0,
            Regression::C => 1,
            Regression::Ct => 2,
        }
    }
}
