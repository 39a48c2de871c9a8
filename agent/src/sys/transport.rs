//! The transport a socket speaks, TCP or UDP (read from text in `mode.rs`, beside the
//! timestamp mode).

use std::fmt;

use serde::Serialize;

/// The transport a socket speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A byte stream: TX timestamps are keyed by byte offset.
    Tcp,
    /// Datagrams: TX timestamps are keyed by datagram count.
    Udp,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        })
    }
}
