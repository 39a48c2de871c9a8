//! What an interface can timestamp (the `ETHTOOL_GET_TS_INFO` request behind
//! `ethtool -T`), and switching its NIC's hardware timestamping on (`SIOCSHWTSTAMP`).
//!
//! Both are ioctls on any socket, with a `struct ifreq` naming the interface; nix has no
//! safe wrapper for either, so this file holds the crate's `unsafe` blocks.

use std::ffi::c_char;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use nix::net::if_::{if_nameindex, if_nametoindex};
use nix::sys::socket::{AddressFamily, SockFlag, SockType, socket};
use serde::Serialize;

use super::error::SysError;

/// `ETHTOOL_GET_TS_INFO` from `<linux/ethtool.h>` (libc does not export it).
const ETHTOOL_GET_TS_INFO: u32 = 0x41;

/// `struct ethtool_ts_info` from `<linux/ethtool.h>` (libc does not define it).
#[repr(C)]
#[derive(Debug, Default)]
struct EthtoolTsInfo {
    cmd: u32,
    so_timestamping: u32,
    phc_index: i32,
    tx_types: u32,
    tx_reserved: [u32; 3],
    rx_filters: u32,
    rx_reserved: [u32; 3],
}

/// `SOF_TIMESTAMPING_*` bits in order, in `ethtool -T`'s words (ethtool's
/// `so_timestamping_labels`).
const SO_TIMESTAMPING_NAMES: [&str; 19] = [
    "hardware-transmit",
    "software-transmit",
    "hardware-receive",
    "software-receive",
    "software-system-clock",
    "hardware-legacy-clock",
    "hardware-raw-clock",
    "opt-id",
    "tx-sched",
    "tx-ack",
    "opt-cmsg",
    "opt-tsonly",
    "opt-stats",
    "opt-pktinfo",
    "opt-tx-swhw",
    "bind-phc",
    "opt-id-tcp",
    "opt-rx-filter",
    "tx-completion",
];

/// `HWTSTAMP_TX_*` values in order, in `ethtool -T`'s words.
const TX_TYPE_NAMES: [&str; 4] = ["off", "on", "onestep-sync", "onestep-p2p"];

/// `HWTSTAMP_FILTER_*` values in order, in `ethtool -T`'s words.
const RX_FILTER_NAMES: [&str; 16] = [
    "none",
    "all",
    "some",
    "ptpv1-l4-event",
    "ptpv1-l4-sync",
    "ptpv1-l4-delay-req",
    "ptpv2-l4-event",
    "ptpv2-l4-sync",
    "ptpv2-l4-delay-req",
    "ptpv2-l2-event",
    "ptpv2-l2-sync",
    "ptpv2-l2-delay-req",
    "ptpv2-event",
    "ptpv2-sync",
    "ptpv2-delay-req",
    "ntp-all",
];

/// What an interface can timestamp: what `ethtool -T IFACE` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimestampCapabilities {
    /// The interface.
    pub interface: String,
    /// The `SOF_TIMESTAMPING_*` flags the interface supports, as the kernel reports them.
    pub so_timestamping: u32,
    /// Those flags in `ethtool -T`'s words ("software-transmit", "hardware-raw-clock"...).
    pub capabilities: Vec<&'static str>,
    /// The index of the NIC's PTP hardware clock (`/dev/ptpN`), if it has one.
    pub phc_index: Option<u32>,
    /// The hardware transmit timestamp modes ("off", "on", ...).
    pub tx_types: Vec<&'static str>,
    /// The hardware receive filters ("none", "all", "ptpv2-event", ...).
    pub rx_filters: Vec<&'static str>,
}

impl TimestampCapabilities {
    /// Whether the kernel can stamp this interface's traffic in software both ways: what
    /// [`TimestampMode::Kernel`](super::TimestampMode::Kernel) needs.
    pub fn has_software(&self) -> bool {
        let need = libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_RX_SOFTWARE;
        self.so_timestamping & need == need
    }

    /// What hardware timestamping of every request and reply needs and this interface
    /// lacks (`None` when it has it all): transmit and receive stamps in raw hardware
    /// time, transmit mode "on", and the receive filter "all" (a PTP-only filter would
    /// leave the replies unstamped).
    pub fn hardware_missing(&self) -> Option<String> {
        let mut missing = Vec::new();
        for (flag, name) in [
            (libc::SOF_TIMESTAMPING_TX_HARDWARE, "hardware-transmit"),
            (libc::SOF_TIMESTAMPING_RX_HARDWARE, "hardware-receive"),
            (libc::SOF_TIMESTAMPING_RAW_HARDWARE, "hardware-raw-clock"),
        ] {
            if self.so_timestamping & flag == 0 {
                missing.push(name);
            }
        }
        if !self.tx_types.contains(&"on") {
            missing.push("hardware transmit mode \"on\"");
        }
        if !self.rx_filters.contains(&"all") {
            missing.push("hardware receive filter \"all\"");
        }
        (!missing.is_empty()).then(|| format!("no {}", missing.join("/")))
    }

    /// What `ethtool -T` shows, on one line.
    pub fn ethtool_summary(&self) -> String {
        fn list(items: &[&str]) -> String {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        }
        format!(
            "capabilities {}; PTP hardware clock {}; hardware transmit timestamp modes {}; \
             hardware receive filter modes {}",
            list(&self.capabilities),
            self.phc_index
                .map_or_else(|| "none".to_owned(), |i| i.to_string()),
            list(&self.tx_types),
            list(&self.rx_filters),
        )
    }

    /// The error for asking this interface for hardware timestamps it cannot take, if it
    /// cannot.
    pub(crate) fn require_hardware(&self) -> Result<(), SysError> {
        match self.hardware_missing() {
            None => Ok(()),
            Some(missing) => Err(SysError::NoHardwareTimestamping {
                interface: self.interface.clone(),
                ethtool: self.ethtool_summary(),
                missing,
            }),
        }
    }
}

/// The names of the bits set in `bits`, from a table indexed by bit number; bits past
/// the table's end (newer kernels) are named by their number.
fn bit_names(bits: u32, names: &[&'static str]) -> Vec<&'static str> {
    (0..32)
        .filter(|bit| bits & (1 << bit) != 0)
        .map(|bit| names.get(bit).copied().unwrap_or("(unknown)"))
        .collect()
}

/// The network interfaces on this host (in this network namespace), in the kernel's
/// order; empty if they cannot be listed.
pub fn interfaces() -> Vec<String> {
    if_nameindex()
        .map(|list| {
            list.iter()
                .map(|i| i.name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What `interface` can timestamp, as `ethtool -T` would show it.
///
/// A missing interface is [`SysError::InterfaceNotFound`]; drivers without a
/// `get_ts_info` get the kernel's default (software receive only, or software both ways
/// on kernels that stamp every transmit in the core).
pub fn interface_timestamping(interface: &str) -> Result<TimestampCapabilities, SysError> {
    let mut request = IfRequest::new(interface)?;
    let mut info = EthtoolTsInfo {
        cmd: ETHTOOL_GET_TS_INFO,
        ..EthtoolTsInfo::default()
    };
    request.ioctl(&mut info).map_err(|source| SysError::Ioctl {
        what: EthtoolTsInfo::WHAT,
        interface: interface.to_owned(),
        source,
    })?;
    Ok(TimestampCapabilities {
        interface: interface.to_owned(),
        so_timestamping: info.so_timestamping,
        capabilities: bit_names(info.so_timestamping, &SO_TIMESTAMPING_NAMES),
        phc_index: u32::try_from(info.phc_index).ok(),
        tx_types: bit_names(info.tx_types, &TX_TYPE_NAMES),
        rx_filters: bit_names(info.rx_filters, &RX_FILTER_NAMES),
    })
}

/// Switches `interface`'s NIC to stamp every transmitted packet that asks for it and
/// every received packet (`SIOCSHWTSTAMP`, tx type on, rx filter all), after checking
/// that it can ([`TimestampCapabilities::require_hardware`]).
///
/// This is a setting of the whole interface, not of one socket: it stays on after the
/// agent exits, and `ptp4l` or another tool may change it. Needs CAP_NET_ADMIN.
pub(crate) fn enable_hardware_timestamping(interface: &str) -> Result<(), SysError> {
    interface_timestamping(interface)?.require_hardware()?;
    let mut request = IfRequest::new(interface)?;
    let mut config = libc::hwtstamp_config {
        flags: 0,
        // Both constants are small (1): the casts cannot truncate.
        tx_type: libc::HWTSTAMP_TX_ON as libc::c_int,
        rx_filter: libc::HWTSTAMP_FILTER_ALL as libc::c_int,
    };
    request
        .ioctl(&mut config)
        .map_err(|source| SysError::Ioctl {
            what: libc::hwtstamp_config::WHAT,
            interface: interface.to_owned(),
            source,
        })?;
    // The driver writes back what it applied: it may widen a filter, and must not
    // answer "none" to "all", but a driver that does would leave replies unstamped.
    if config.rx_filter == libc::HWTSTAMP_FILTER_NONE as libc::c_int {
        return Err(SysError::HardwareRxFilterRefused {
            interface: interface.to_owned(),
        });
    }
    Ok(())
}

/// A struct an interface ioctl points `ifr_data` at, with the one request that takes it:
/// what makes [`IfRequest::ioctl`]'s pointer argument sound.
trait IfrData {
    /// The ioctl request.
    const REQUEST: libc::c_ulong;
    /// The request, for error messages.
    const WHAT: &'static str;
}

impl IfrData for EthtoolTsInfo {
    const REQUEST: libc::c_ulong = libc::SIOCETHTOOL;
    const WHAT: &'static str = "SIOCETHTOOL ETHTOOL_GET_TS_INFO";
}

impl IfrData for libc::hwtstamp_config {
    const REQUEST: libc::c_ulong = libc::SIOCSHWTSTAMP;
    const WHAT: &'static str = "SIOCSHWTSTAMP (tx on, rx filter all)";
}

/// A `struct ifreq` naming an interface, and the socket an interface ioctl is made on.
struct IfRequest {
    ifr: libc::ifreq,
    socket: OwnedFd,
}

impl IfRequest {
    /// Checks that `interface` exists, then prepares a request for it.
    fn new(interface: &str) -> Result<Self, SysError> {
        let not_found = || SysError::InterfaceNotFound {
            interface: interface.to_owned(),
            available: interfaces(),
        };
        // if_nametoindex also refuses names with a NUL and names too long for IFNAMSIZ.
        if interface.is_empty() || interface.len() >= libc::IFNAMSIZ {
            return Err(not_found());
        }
        if_nametoindex(interface).map_err(|_| not_found())?;
        // SAFETY: `ifreq` is plain old data (a byte array and a union of integers,
        // sockaddrs and a pointer), for which all-zero bytes are a valid value: an
        // empty name and a null data pointer.
        let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
        // The length was checked above, so the name and its NUL terminator fit.
        for (dst, &src) in ifr.ifr_name.iter_mut().zip(interface.as_bytes()) {
            *dst = src as c_char;
        }
        let socket = socket(
            AddressFamily::Inet,
            SockType::Datagram,
            SockFlag::SOCK_CLOEXEC,
            None,
        )
        .map_err(|errno| SysError::Ioctl {
            what: "socket(AF_INET, SOCK_DGRAM) for interface ioctls",
            interface: interface.to_owned(),
            source: errno.into(),
        })?;
        Ok(IfRequest { ifr, socket })
    }

    /// Makes `T`'s interface ioctl with `ifr_data` pointing at `data`, which the kernel
    /// reads and fills in.
    fn ioctl<T: IfrData>(&mut self, data: &mut T) -> io::Result<()> {
        self.ifr.ifr_ifru.ifru_data = (data as *mut T).cast::<c_char>();
        // SAFETY: `self.ifr` is a valid ifreq holding a NUL-terminated interface name
        // (checked in `new`) and an `ifr_data` pointing at `data`, which the exclusive
        // borrow keeps alive and unaliased for the whole call. `IfrData` pairs each
        // request with the struct it takes (SIOCETHTOOL with an ethtool_ts_info whose
        // `cmd` is ETHTOOL_GET_TS_INFO, SIOCSHWTSTAMP with a hwtstamp_config), and the
        // kernel reads and writes no more than that struct's size. The fd is an open
        // socket we own.
        let rc =
            unsafe { libc::ioctl(self.socket.as_raw_fd(), T::REQUEST as _, &raw mut self.ifr) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_offers_software_timestamps_only() {
        let caps = interface_timestamping("lo").unwrap();
        assert!(caps.has_software(), "{caps:?}");
        assert!(caps.capabilities.contains(&"software-receive"), "{caps:?}");
        assert_eq!(caps.phc_index, None);
        assert!(caps.hardware_missing().is_some());
    }

    #[test]
    fn interfaces_include_loopback() {
        assert!(interfaces().iter().any(|i| i == "lo"));
    }

    #[test]
    fn bits_are_named_like_ethtool_does() {
        assert_eq!(
            bit_names(0b1_1010, &SO_TIMESTAMPING_NAMES),
            [
                "software-transmit",
                "software-receive",
                "software-system-clock"
            ]
        );
        assert_eq!(bit_names(1 << 31, &TX_TYPE_NAMES), ["(unknown)"]);
        assert!(bit_names(0, &RX_FILTER_NAMES).is_empty());
    }

    #[test]
    fn overlong_and_missing_names_are_not_found() {
        for name in ["", "x234567890123456", "vernier-nope0"] {
            let err = interface_timestamping(name).unwrap_err();
            assert!(
                matches!(err, SysError::InterfaceNotFound { .. }),
                "{name}: {err}"
            );
        }
    }
}
