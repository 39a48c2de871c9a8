//! The clock a worker reads its timestamps on, and with NIC timestamps the map from the
//! NIC's PTP hardware clock to the engine's: its offset and drift, measured from readings
//! of both clocks at start and every [`PHC_REFRESH`] after, as phc2sys follows them.

use std::io;

use super::epoch::Epoch;
use super::error::EngineError;
use super::inflight::StampClock;
use crate::sys::{ClockMap, PHC_READINGS, PHC_REFRESH, Phc, TimestampMode, read_clocks};

/// The PTP hardware clock of the NIC that takes the hardware timestamps, read against the
/// engine's clock every [`PHC_REFRESH`] to keep the map between them current.
pub(super) struct NicClock {
    phc: Phc,
    /// When to read it next, ns since the epoch.
    next_refresh: u64,
}

impl NicClock {
    /// The clock `timestamps` are read on, and with hardware timestamps the NIC's clock
    /// its map is refreshed from (worker `worker`'s, for the error).
    pub(super) fn for_mode(
        worker: u32,
        timestamps: &TimestampMode,
        epoch: Epoch,
    ) -> Result<(StampClock, Option<NicClock>), EngineError> {
        Ok(match timestamps {
            TimestampMode::User => (StampClock::User, None),
            TimestampMode::Kernel => (
                StampClock::Kernel {
                    epoch_realtime_ns: epoch.realtime_ns,
                },
                None,
            ),
            TimestampMode::Hardware { interface } => {
                let (map, nic) = NicClock::open(worker, interface, epoch)?;
                (StampClock::Nic(Box::new(map)), Some(nic))
            }
        })
    }

    /// Opens `interface`'s PTP hardware clock and maps it onto the engine's clock from a
    /// first reading.
    fn open(
        worker: u32,
        interface: &str,
        epoch: Epoch,
    ) -> Result<(ClockMap, NicClock), EngineError> {
        let fail = |source| EngineError::Os {
            worker,
            what: "read the NIC's PTP hardware clock",
            source,
        };
        let phc = Phc::for_interface(interface).map_err(|e| fail(io::Error::other(e)))?;
        let reading =
            read_clocks(&mut phc.against(|| epoch.now_ns()), PHC_READINGS).map_err(fail)?;
        let nic = NicClock {
            phc,
            next_refresh: epoch.now_ns() + PHC_REFRESH.as_nanos() as u64,
        };
        Ok((ClockMap::new(reading), nic))
    }

    /// Re-reads the NIC's clock against the engine's into `map` once [`PHC_REFRESH`] has
    /// passed since the last reading (`now`, ns since `epoch`), so that its drift is
    /// followed.
    pub(super) fn refresh(&mut self, now: u64, epoch: Epoch, map: &mut ClockMap) {
        if now < self.next_refresh {
            return;
        }
        self.next_refresh = now + PHC_REFRESH.as_nanos() as u64;
        // A failed read leaves the map extrapolating at the frequency last measured; the
        // next refresh tries again.
        if let Ok(reading) = read_clocks(&mut self.phc.against(|| epoch.now_ns()), PHC_READINGS) {
            map.update(reading);
        }
    }
}
