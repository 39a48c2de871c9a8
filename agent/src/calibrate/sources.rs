//! Which timestamps this host offers: each interface's capabilities, and a real try of
//! kernel software timestamps on loopback.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::spread::us;
use crate::sys::{
    TimestampCapabilities, TimestampMode, Transport, TsSocket, interface_timestamping, interfaces,
};

/// How long the loopback try waits for each step; loopback takes microseconds.
const PATIENCE: Duration = Duration::from_secs(1);

/// What timestamps this host offers.
#[derive(Debug, Clone, Serialize)]
pub struct TimestampSources {
    /// Each interface, as `ethtool -T` shows it.
    pub interfaces: Vec<InterfaceSource>,
    /// Kernel software timestamps, tried on loopback.
    pub kernel_on_loopback: LoopbackKernelTimestamps,
}

/// One interface's timestamping.
#[derive(Debug, Clone, Serialize)]
pub struct InterfaceSource {
    /// The interface.
    pub interface: String,
    /// Whether the kernel stamps its traffic in software both ways (`--timestamps kernel`).
    pub software: bool,
    /// Whether its NIC can stamp every packet both ways (`--timestamps hw`).
    pub hardware: bool,
    /// What `ethtool -T` shows, if it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ethtool: Option<TimestampCapabilities>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Kernel software timestamps tried over loopback TCP and UDP.
#[derive(Debug, Clone, Serialize)]
pub struct LoopbackKernelTimestamps {
    /// Over TCP.
    pub tcp: KernelTimestampCheck,
    /// Over UDP.
    pub udp: KernelTimestampCheck,
}

impl LoopbackKernelTimestamps {
    /// Whether both transports got TX and RX stamps.
    pub fn works(&self) -> bool {
        self.tcp.works() && self.udp.works()
    }
}

/// One try: a message to an echo peer and back through a kernel-mode [`TsSocket`].
#[derive(Debug, Clone, Serialize)]
pub struct KernelTimestampCheck {
    /// Whether the message's TX timestamp came back on the error queue.
    pub tx: bool,
    /// Whether the reply carried an RX timestamp.
    pub rx: bool,
    /// The reply's RX stamp minus the message's TX stamp, in µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<f64>,
    /// What went wrong, if anything did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl KernelTimestampCheck {
    /// Whether both stamps came.
    pub fn works(&self) -> bool {
        self.tx && self.rx
    }
}

/// Surveys `only` (or every interface) and tries kernel timestamps on loopback.
pub(super) fn survey(only: Option<&[String]>) -> TimestampSources {
    let names = only.map_or_else(interfaces, <[String]>::to_vec);
    TimestampSources {
        interfaces: names.into_iter().map(interface).collect(),
        kernel_on_loopback: LoopbackKernelTimestamps {
            tcp: try_kernel(Transport::Tcp),
            udp: try_kernel(Transport::Udp),
        },
    }
}

fn interface(name: String) -> InterfaceSource {
    match interface_timestamping(&name) {
        Ok(caps) => InterfaceSource {
            interface: name,
            software: caps.has_software(),
            hardware: caps.hardware_missing().is_none(),
            ethtool: Some(caps),
            error: None,
        },
        Err(e) => InterfaceSource {
            interface: name,
            software: false,
            hardware: false,
            ethtool: None,
            error: Some(e.to_string()),
        },
    }
}

fn try_kernel(transport: Transport) -> KernelTimestampCheck {
    match exchange(transport) {
        Ok((tx, rx)) => KernelTimestampCheck {
            tx: tx.is_some(),
            rx: rx.is_some(),
            rtt_us: tx.zip(rx).map(|(tx, rx)| us(rx.saturating_sub(tx))),
            error: match (tx, rx) {
                (Some(_), Some(_)) => None,
                (None, _) => Some("no TX timestamp came back on the error queue".into()),
                (_, None) => Some("the reply carried no RX timestamp".into()),
            },
        },
        Err(e) => KernelTimestampCheck {
            tx: false,
            rx: false,
            rtt_us: None,
            error: Some(e),
        },
    }
}

/// Sends 8 bytes to an echo peer on loopback and reads them back: the TX and RX stamps.
fn exchange(transport: Transport) -> Result<(Option<u64>, Option<u64>), String> {
    let peer = echo_peer(transport).map_err(|e| format!("echo peer: {e}"))?;
    let socket = TsSocket::connect(peer, transport, &TimestampMode::Kernel, None)
        .map_err(|e| e.to_string())?;
    socket
        .wait_connected(PATIENCE)
        .map_err(|e| format!("connect: {e}"))?;
    let message = *b"vernier!";
    let deadline = Instant::now() + PATIENCE;
    loop {
        match socket.send(&message) {
            Ok(n) if n == message.len() => break,
            Ok(n) => return Err(format!("sent {n} of {} bytes", message.len())),
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {}
            Err(e) => return Err(format!("send: {e}")),
        }
    }
    let mut reply = [0u8; 8];
    let mut got = 0;
    let mut rx = None;
    while got < reply.len() {
        match socket.recv(&mut reply[got..]) {
            Ok((0, _)) => return Err("the echo peer closed".into()),
            Ok((n, stamp)) => {
                got += n;
                rx = stamp;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::yield_now();
            }
            Err(e) => return Err(format!("recv: {e}")),
        }
    }
    let mut tx = None;
    while tx.is_none() && Instant::now() < deadline {
        socket
            .drain_tx_timestamps(|_, ns| tx = Some(ns))
            .map_err(|e| format!("reading the error queue: {e}"))?;
    }
    Ok((tx, rx))
}

/// A peer on loopback that echoes one message (TCP: 8 bytes; UDP: one datagram) in a
/// thread of its own, giving up after [`PATIENCE`].
fn echo_peer(transport: Transport) -> std::io::Result<SocketAddr> {
    match transport {
        Transport::Tcp => {
            let listener = TcpListener::bind(("127.0.0.1", 0))?;
            let addr = listener.local_addr()?;
            std::thread::spawn(move || -> std::io::Result<()> {
                let (mut stream, _) = listener.accept()?;
                stream.set_read_timeout(Some(PATIENCE))?;
                let mut buf = [0u8; 8];
                stream.read_exact(&mut buf)?;
                stream.write_all(&buf)?;
                // Wait for the client to close, so the reply is not cut by a reset.
                let _ = stream.read(&mut buf);
                Ok(())
            });
            Ok(addr)
        }
        Transport::Udp => {
            let socket = UdpSocket::bind(("127.0.0.1", 0))?;
            let addr = socket.local_addr()?;
            std::thread::spawn(move || -> std::io::Result<()> {
                socket.set_read_timeout(Some(PATIENCE))?;
                let mut buf = [0u8; 64];
                let (n, from) = socket.recv_from(&mut buf)?;
                socket.send_to(&buf[..n], from)?;
                Ok(())
            });
            Ok(addr)
        }
    }
}
