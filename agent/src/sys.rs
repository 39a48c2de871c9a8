//! The operating system under the data plane: sockets that carry kernel or NIC timestamps,
//! the interfaces' timestamping capabilities, clocks, and thread pinning.
//!
//! This is the only module of vernier allowed `unsafe`, and it uses it only where nix has
//! no safe API: the two interface ioctls (`SIOCETHTOOL` for `ETHTOOL_GET_TS_INFO` and
//! `SIOCSHWTSTAMP`) and a thread's own priority (`setpriority`, `sched_setscheduler`). Sockets, `SO_TIMESTAMPING`, the error queue and affinity go through
//! nix and socket2.
//!
//! Where the timestamps come from, best first:
//!
//! - [`TimestampMode::Hardware`]: the NIC stamps the packet as it leaves and as it arrives
//!   (`SO_TIMESTAMPING` with `RAW_HARDWARE`, after `SIOCSHWTSTAMP` switched the interface
//!   on). The values are read from the NIC's PTP hardware clock, not the host's clocks;
//!   [`ClockMap`] puts them on a host clock from readings of both ([`Phc`],
//!   [`read_clocks`]), as phc2sys measures them.
//! - [`TimestampMode::Kernel`]: the kernel stamps the packet in the driver's transmit path
//!   and on reception (`TX_SOFTWARE`, `RX_SOFTWARE`), in `CLOCK_REALTIME` nanoseconds (so
//!   [`realtime_ns`] is the matching user-space clock).
//! - [`TimestampMode::User`]: the caller reads a clock around `send` and `recv` itself; the
//!   socket reports nothing. Such timestamps are comparable with each other only.
//!
//! ```no_run
//! use vernier_agent::sys::{TimestampMode, Transport, TsSocket};
//!
//! let socket = TsSocket::connect("127.0.0.1:11211".parse()?, Transport::Tcp, &TimestampMode::Kernel, None)?;
//! socket.wait_connected(std::time::Duration::from_secs(1))?;
//! socket.send(b"get k\r\n")?;
//! // ... once the socket polls readable:
//! let mut buf = [0u8; 4096];
//! let (n, rx_ns) = socket.recv(&mut buf)?;
//! socket.drain_tx_timestamps(|last_byte, tx_ns| println!("bytes ..={last_byte} left at {tx_ns}"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod clock;
mod error;
mod ethtool;
mod idle;
mod mode;
mod phc;
mod socket;
mod thread;
mod transport;

pub use clock::{
    ClockMap, ClockPair, ClockReading, PHC_READINGS, PHC_REFRESH, monotonic_ns, read_clocks,
    realtime_ns, sleep_until,
};
pub use error::SysError;
pub use ethtool::{TimestampCapabilities, interface_timestamping, interfaces};
pub use idle::{HaltPoll, IdleState};
pub use mode::TimestampMode;
pub use phc::Phc;
pub use socket::{BusyPoll, TsSocket};
pub use thread::{
    Confinement, available_cpus, confine_process, pin_current_thread, set_thread_nice,
    set_thread_realtime,
};
pub use transport::Transport;
