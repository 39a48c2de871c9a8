//! A sleeping thread's wake-up lateness on each core: what a worker that sleeps until its
//! next departure meets, measured by the agent's own stall probe.

use std::time::Duration;

use super::error::CalibrateError;
use crate::probe::{DEFAULT_PERIOD, HostProbe, StallReport};

/// Runs a probe on each of `cpus` (each once) for `span`, at the period an agent's
/// probes use, and gives what each saw.
pub(super) fn measure(cpus: &[usize], span: Duration) -> Result<Vec<StallReport>, CalibrateError> {
    let mut unique = cpus.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let probes = unique
        .iter()
        .map(|&cpu| {
            HostProbe::start(Some(cpu), DEFAULT_PERIOD).map_err(|source| CalibrateError::Io {
                what: "starting a wake-up probe",
                source,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    std::thread::sleep(span);
    Ok(probes
        .iter()
        .map(|p| p.take().without_histogram())
        .collect())
}
