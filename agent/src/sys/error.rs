//! What can go wrong below the data plane, each error naming what was asked and where.

use std::io;
use std::net::SocketAddr;

use thiserror::Error;

use super::transport::Transport;

/// An error from the [`sys`](super) layer.
#[derive(Debug, Error)]
pub enum SysError {
    /// The interface does not exist on this host (or in this network namespace).
    #[error("no network interface named {interface:?} (this host has: {})", available.join(", "))]
    InterfaceNotFound {
        /// The name asked for.
        interface: String,
        /// The interfaces that do exist.
        available: Vec<String>,
    },
    /// Hardware timestamps were asked for with no interface to take them on.
    #[error(
        "hardware timestamps need the interface whose NIC takes them (--interface IFACE); \
         this host has: {}", available.join(", ")
    )]
    NoInterfaceGiven {
        /// The interfaces that exist.
        available: Vec<String>,
    },
    /// The interface's NIC or driver cannot timestamp in hardware; `ethtool` is the
    /// summary of what `ethtool -T` shows for it.
    #[error(
        "interface {interface} has no hardware timestamping: `ethtool -T {interface}` shows {ethtool}; \
         {missing}; use --timestamps kernel"
    )]
    NoHardwareTimestamping {
        /// The interface.
        interface: String,
        /// What `ethtool -T` would show, in its words.
        ethtool: String,
        /// What hardware timestamping of arbitrary traffic needs and the interface lacks.
        missing: String,
    },
    /// An interface ioctl failed (`what` names it).
    #[error("{what} on interface {interface}: {source}{}", hint(source))]
    Ioctl {
        /// The request, e.g. "SIOCETHTOOL ETHTOOL_GET_TS_INFO".
        what: &'static str,
        /// The interface.
        interface: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The driver accepted `SIOCSHWTSTAMP` but left receive timestamping off.
    #[error(
        "interface {interface} refused to timestamp all received packets in hardware \
         (SIOCSHWTSTAMP answered rx filter none); use --timestamps kernel"
    )]
    HardwareRxFilterRefused {
        /// The interface.
        interface: String,
    },
    /// Hardware timestamps were asked for on an interface whose NIC has no PTP hardware
    /// clock to read them against the host's clock.
    #[error(
        "interface {interface} has no PTP hardware clock (`ethtool -T {interface}` shows {ethtool}): \
         its NIC's timestamps cannot be put on the host's clock; use --timestamps kernel"
    )]
    NoPtpClock {
        /// The interface.
        interface: String,
        /// What `ethtool -T` would show, in its words.
        ethtool: String,
    },
    /// A PTP hardware clock could not be opened or read.
    #[error("cannot read PTP hardware clock {}: {source}{}", device.display(), hint(source))]
    PtpClock {
        /// The device, `/dev/ptpN`.
        device: std::path::PathBuf,
        /// The operating system's error (`EINVAL`: not a PTP clock).
        source: io::Error,
    },
    /// A socket could not be made or configured (`what` names the call or option).
    #[error("{transport} socket to {addr}: {what}: {source}{}", hint(source))]
    Socket {
        /// The call or option that failed, e.g. "setsockopt(SO_TIMESTAMPING)".
        what: &'static str,
        /// The peer.
        addr: SocketAddr,
        /// TCP or UDP.
        transport: Transport,
        /// The operating system's error.
        source: io::Error,
    },
    /// The connection was refused or failed.
    #[error("cannot connect over {transport} to {addr}: {source}")]
    Connect {
        /// The peer.
        addr: SocketAddr,
        /// TCP or UDP.
        transport: Transport,
        /// The operating system's error.
        source: io::Error,
    },
    /// The thread could not be pinned.
    #[error(
        "cannot pin this thread to CPU {cpu}: {source} (this process may run on CPUs {})",
        allowed.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    Pin {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs this process may run on.
        allowed: Vec<usize>,
        /// The operating system's error.
        source: io::Error,
    },
    /// A timestamp mode or transport could not be parsed.
    #[error("{what} {value:?} is not one of {expected}")]
    Parse {
        /// "timestamp mode" or "transport".
        what: &'static str,
        /// The text given.
        value: String,
        /// The accepted spellings.
        expected: &'static str,
    },
    /// A kernel setting could not be read or changed.
    #[error("{setting}: {source}")]
    Setting {
        /// The file, and what it is.
        setting: String,
        /// Why.
        source: io::Error,
    },
}

/// A word on the errors whose fix is not obvious from errno alone.
fn hint(source: &io::Error) -> &'static str {
    match source.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => " (needs root or CAP_NET_ADMIN)",
        _ => "",
    }
}
