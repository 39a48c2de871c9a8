//! How this host's idle CPUs wait, and the one setting that decides a virtual machine's
//! wake-up cost: the guest's halt polling (the `haltpoll` cpuidle driver's
//! `guest_halt_poll_ns`). With it at 0 an idle vCPU halts at once, and the next packet or
//! timer has to wake it through the hypervisor, which can be most of a microsecond server's
//! median (docs/history/results-2026-11-24-to-29.md, "Where the median goes").

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::SysError;

const CPUIDLE: &str = "/sys/devices/system/cpu/cpuidle";
const HALT_POLL_NS: &str = "/sys/module/haltpoll/parameters/guest_halt_poll_ns";

/// How the host's idle CPUs wait.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IdleState {
    /// The cpuidle driver (`haltpoll` in a KVM guest that uses it, `intel_idle`,
    /// `acpi_idle`...), empty when the kernel has none.
    pub driver: String,
    /// The cpuidle governor.
    pub governor: String,
    /// How long an idle vCPU polls before it halts, ns, when the `haltpoll` driver is in
    /// use (`None` otherwise).
    pub guest_halt_poll_ns: Option<u64>,
}

impl IdleState {
    /// This host's, from sysfs (fields it does not have are left empty).
    pub fn read() -> IdleState {
        IdleState::read_from(Path::new(CPUIDLE), Path::new(HALT_POLL_NS))
    }

    fn read_from(cpuidle: &Path, halt_poll: &Path) -> IdleState {
        let read = |p: PathBuf| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let governor = match read(cpuidle.join("current_governor")) {
            g if g.is_empty() => read(cpuidle.join("current_governor_ro")),
            g => g,
        };
        IdleState {
            driver: read(cpuidle.join("current_driver")),
            governor,
            guest_halt_poll_ns: read(halt_poll.to_path_buf()).parse().ok(),
        }
    }

    /// A virtual machine's idle vCPUs halt at once: every wake-up goes through the
    /// hypervisor, and a server that sleeps between requests pays it on each.
    pub fn halts_at_once(&self) -> bool {
        self.guest_halt_poll_ns == Some(0)
    }
}

/// The guest's halt polling set for as long as this lives, then put back as it was.
#[derive(Debug)]
pub struct HaltPoll {
    path: PathBuf,
    previous: u64,
}

impl HaltPoll {
    /// Lets idle vCPUs poll `window` before they halt (root, in a guest with the
    /// `haltpoll` cpuidle driver). The cost: an idle core spins up to `window` after its
    /// last work, each time it goes idle.
    pub fn set(window: Duration) -> Result<HaltPoll, SysError> {
        HaltPoll::set_at(Path::new(HALT_POLL_NS), window)
    }

    fn set_at(path: &Path, window: Duration) -> Result<HaltPoll, SysError> {
        let failed = |e: std::io::Error, what: &str| SysError::Setting {
            setting: format!("{} ({what})", path.display()),
            source: e,
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            failed(
                e,
                "the haltpoll cpuidle driver's halt-poll window: not a KVM guest using it",
            )
        })?;
        let previous = text.trim().parse().map_err(|_| {
            failed(
                std::io::Error::other(format!("holds {:?}, not a number", text.trim())),
                "read",
            )
        })?;
        std::fs::write(path, window.as_nanos().to_string())
            .map_err(|e| failed(e, "writing it needs root"))?;
        Ok(HaltPoll {
            path: path.to_path_buf(),
            previous,
        })
    }

    /// The value it replaced, ns.
    pub fn previous_ns(&self) -> u64 {
        self.previous
    }
}

impl Drop for HaltPoll {
    fn drop(&mut self) {
        // Best effort: the file was writable a moment ago.
        let _ = std::fs::write(&self.path, self.previous.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_state_is_read_from_sysfs_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("current_driver"), "haltpoll\n").unwrap();
        std::fs::write(dir.path().join("current_governor_ro"), "haltpoll\n").unwrap();
        let poll = dir.path().join("guest_halt_poll_ns");
        std::fs::write(&poll, "0\n").unwrap();
        let state = IdleState::read_from(dir.path(), &poll);
        assert_eq!(state.driver, "haltpoll");
        assert_eq!(state.governor, "haltpoll");
        assert_eq!(state.guest_halt_poll_ns, Some(0));
        assert!(state.halts_at_once());
        // No haltpoll driver: nothing claimed.
        let none = IdleState::read_from(&dir.path().join("nothing"), &dir.path().join("no"));
        assert_eq!(none, IdleState::default());
        assert!(!none.halts_at_once());
    }

    #[test]
    fn the_halt_poll_window_is_set_and_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let poll = dir.path().join("guest_halt_poll_ns");
        std::fs::write(&poll, "0\n").unwrap();
        let set = HaltPoll::set_at(&poll, Duration::from_micros(200)).unwrap();
        assert_eq!(std::fs::read_to_string(&poll).unwrap(), "200000");
        assert_eq!(set.previous_ns(), 0);
        drop(set);
        assert_eq!(std::fs::read_to_string(&poll).unwrap(), "0");
        // Not there: an error naming the file and what it is.
        let error = HaltPoll::set_at(&dir.path().join("absent"), Duration::from_micros(1))
            .unwrap_err()
            .to_string();
        assert!(error.contains("absent"), "{error}");
        assert!(error.contains("not a KVM guest"), "{error}");
        // Garbage in it: an error, and nothing written.
        std::fs::write(&poll, "fast").unwrap();
        let error = HaltPoll::set_at(&poll, Duration::from_micros(1))
            .unwrap_err()
            .to_string();
        assert!(error.contains("not a number"), "{error}");
        assert_eq!(std::fs::read_to_string(&poll).unwrap(), "fast");
    }
}
