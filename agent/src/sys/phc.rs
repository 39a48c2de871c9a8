//! A NIC's PTP hardware clock (`/dev/ptpN`), read as a dynamic POSIX clock: the clock
//! its hardware timestamps are taken on, read against a host clock to map them onto it
//! ([`ClockMap`](super::ClockMap)).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use nix::time::{ClockId, clock_gettime};

use super::clock::ClockPair;
use super::error::SysError;
use super::ethtool::interface_timestamping;

/// `CLOCKFD` from the kernel's `posix-timers.h`: the low bits that mark a clock id as a
/// file descriptor's dynamic clock.
const CLOCKFD: libc::clockid_t = 3;

/// An open PTP hardware clock.
#[derive(Debug)]
pub struct Phc {
    device: PathBuf,
    /// Kept open: the clock id names this descriptor.
    file: File,
}

impl Phc {
    /// The PTP hardware clock of `interface`'s NIC, as `ethtool -T` names it.
    ///
    /// An interface without one is [`SysError::NoPtpClock`]: its NIC's stamps could not
    /// be put on the host's clock, and departures would be misplaced in time.
    pub fn for_interface(interface: &str) -> Result<Phc, SysError> {
        let caps = interface_timestamping(interface)?;
        match caps.phc_index {
            Some(index) => Phc::open(Path::new(&format!("/dev/ptp{index}"))),
            None => Err(SysError::NoPtpClock {
                interface: interface.to_owned(),
                ethtool: caps.ethtool_summary(),
            }),
        }
    }

    /// Opens `device` and reads it once, so that a file that is not a PTP clock is
    /// refused here rather than on the worker's first refresh.
    pub fn open(device: &Path) -> Result<Phc, SysError> {
        let fail = |source: io::Error| SysError::PtpClock {
            device: device.to_owned(),
            source,
        };
        // Reading the time needs no write access (adjusting it would).
        let file = File::open(device).map_err(fail)?;
        let phc = Phc {
            device: device.to_owned(),
            file,
        };
        phc.now_ns().map_err(fail)?;
        Ok(phc)
    }

    /// The clock's time, ns.
    pub fn now_ns(&self) -> io::Result<u64> {
        // FD_TO_CLOCKID from the kernel's uapi: the descriptor, inverted, shifted past
        // the marker bits.
        let id = ((!self.file.as_raw_fd()) << 3) | CLOCKFD;
        let ts = clock_gettime(ClockId::from_raw(id))?;
        let secs = u64::try_from(ts.tv_sec()).map_err(io::Error::other)?;
        let nanos = u64::try_from(ts.tv_nsec()).map_err(io::Error::other)?;
        Ok(secs * 1_000_000_000 + nanos)
    }

    /// The device, for messages.
    pub fn device(&self) -> &Path {
        &self.device
    }

    /// This clock paired with the host clock `host` (the engine's, ns since its epoch),
    /// for [`read_clocks`](super::read_clocks).
    pub fn against<H: FnMut() -> u64>(&self, host: H) -> impl ClockPair {
        PhcAgainst { phc: self, host }
    }
}

struct PhcAgainst<'a, H> {
    phc: &'a Phc,
    host: H,
}

impl<H: FnMut() -> u64> ClockPair for PhcAgainst<'_, H> {
    fn nic_ns(&mut self) -> io::Result<u64> {
        self.phc.now_ns()
    }

    fn host_ns(&mut self) -> u64 {
        (self.host)()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_has_no_ptp_clock_and_says_so() {
        let err = Phc::for_interface("lo").unwrap_err();
        assert!(matches!(err, SysError::NoPtpClock { .. }), "{err:?}");
        let text = err.to_string();
        for needle in [
            "interface lo",
            "no PTP hardware clock",
            "--timestamps kernel",
        ] {
            assert!(text.contains(needle), "{needle:?} missing from: {text}");
        }
    }

    #[test]
    fn a_file_that_is_not_a_ptp_clock_is_refused_at_open() {
        let err = Phc::open(Path::new("/dev/null")).unwrap_err();
        assert!(matches!(err, SysError::PtpClock { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("cannot read PTP hardware clock /dev/null"),
            "{err}"
        );
    }
}
