//! The protocols vernier speaks: one [`Protocol`] value that encodes a [`Request`] into the
//! caller's buffer and parses [`Reply`]s incrementally, so the agent is written once for all.

mod echo;
mod error;
mod http;
mod memcached;
mod memcached_binary;
mod redis;
mod synthetic;
#[cfg(test)]
mod testing;
mod wire;

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

pub use error::{EncodeError, ParseError};

use crate::spec::{SpecError, serde_as_spec_string};

/// The largest value vernier sends or accepts, 512 MiB (Redis's default
/// `proto-max-bulk-len`). A reply announcing more is refused at once, rather than buffered
/// until it arrives, so a confused or hostile server cannot make the agent grow its buffer
/// without bound.
pub const MAX_VALUE_LEN: usize = 512 << 20;

/// A wire protocol. Spec (and serde form): `echo:64`, `synthetic`, `memcached`,
/// `memcached-binary`, `memcached-binary:getk`, `redis`, `http`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `len` arbitrary bytes out, the same number back (an echo server). Every request, of
    /// whatever kind, is `len` bytes.
    Echo {
        /// The size of each request and of each reply.
        len: NonZeroUsize,
    },
    /// vernier's synthetic server: the request is the service time to spin, 8 bytes of
    /// nanoseconds, little-endian; the reply is 8 bytes. The client draws the service time so
    /// that it is known per request.
    Synthetic,
    /// memcached's text protocol: `get`, `set`.
    Memcached,
    /// memcached's binary protocol: GET (or GETK), SET, each carrying the caller's opaque.
    MemcachedBinary {
        /// Send GETK rather than GET: the reply then carries the key too (more bytes back,
        /// as some clients do).
        getk: bool,
    },
    /// Redis's RESP2: `GET`, `SET`.
    Redis,
    /// HTTP/1.1 `GET /KEY` on a kept-alive connection.
    Http,
}

/// What to ask of the server, independent of how a protocol spells it. Borrowed, so that a
/// workload generator hands out its pre-generated keys without copying them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    /// Read `key`: memcached `get`, binary GET/GETK, Redis `GET`, HTTP `GET /key`.
    Get {
        /// The key.
        key: &'a [u8],
    },
    /// Write a value of `value_len` bytes under `key`: memcached `set`, binary SET, Redis
    /// `SET`. The value's bytes are filler; only its size matters to a latency measurement.
    Set {
        /// The key.
        key: &'a [u8],
        /// The size of the value.
        value_len: usize,
    },
    /// Ask the synthetic server to spin for `service_ns` nanoseconds.
    Spin {
        /// The service time, in nanoseconds.
        service_ns: u64,
    },
}

impl Request<'_> {
    /// The request's name in messages.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Get { .. } => "get",
            Request::Set { .. } => "set",
            Request::Spin { .. } => "spin",
        }
    }
}

/// What a reply meant, summarised the same way for every protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    /// A read found its key (memcached `VALUE`, Redis bulk string, binary GET success).
    Hit,
    /// A read did not (memcached `END` alone, Redis null bulk, binary "key not found",
    /// HTTP 404).
    Miss,
    /// A write was stored (memcached `STORED`, binary SET success).
    Stored,
    /// A write was refused without error (memcached `NOT_STORED`, binary "item not
    /// stored" or "key exists").
    NotStored,
    /// Success with no more specific meaning (Redis `+OK` and integers, HTTP 2xx, echo,
    /// synthetic).
    Ok,
    /// The server reported an error (memcached `ERROR`/`CLIENT_ERROR`/`SERVER_ERROR`, Redis
    /// `-ERR`, binary error statuses, HTTP statuses other than 2xx and 404).
    Error,
}

/// One parsed reply, summarised for latency accounting; the value itself is not copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply {
    /// What the reply meant.
    pub kind: ReplyKind,
    /// The size of the value or body it carried (0 if none).
    pub value_len: usize,
    /// The opaque the request carried, for memcached binary; `None` for other protocols,
    /// whose replies come back in request order.
    pub opaque: Option<u32>,
    /// The protocol's status code where it has one: the HTTP status, the memcached binary
    /// status.
    pub status: Option<u16>,
    /// The server will close the connection after this reply (HTTP `Connection: close`, or
    /// HTTP/1.0 without keep-alive): the agent must reconnect before sending more.
    pub close: bool,
    /// The time the server says it served the request, ns (the synthetic protocol's reply;
    /// `None` for the others).
    pub served_ns: Option<u64>,
}

impl Reply {
    /// A reply of `kind` carrying `value_len` bytes, with no opaque, status, close or
    /// service time.
    pub(crate) fn new(kind: ReplyKind, value_len: usize) -> Reply {
        Reply {
            kind,
            value_len,
            opaque: None,
            status: None,
            close: false,
            served_ns: None,
        }
    }
}

impl Protocol {
    /// The protocol's name in specs and messages.
    pub fn name(&self) -> &'static str {
        match self {
            Protocol::Echo { .. } => "echo",
            Protocol::Synthetic => "synthetic",
            Protocol::Memcached => "memcached",
            Protocol::MemcachedBinary { .. } => "memcached-binary",
            Protocol::Redis => "redis",
            Protocol::Http => "http",
        }
    }

    /// Appends `request` to `out`, ready to send. Nothing is allocated beyond `out`'s own
    /// growth, so a buffer reused across requests stops allocating once it is large enough.
    ///
    /// `opaque` is carried by the protocols that carry one (memcached binary) and comes back
    /// in [`Reply::opaque`]; the others answer in request order and ignore it.
    ///
    /// On error `out` is left as it was.
    pub fn encode(
        &self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        let result = match *self {
            Protocol::Echo { len } => {
                echo::encode(len.get(), out);
                Ok(())
            }
            Protocol::Synthetic => synthetic::encode(request, out),
            Protocol::Memcached => memcached::encode(request, out),
            Protocol::MemcachedBinary { getk } => {
                memcached_binary::encode(request, getk, opaque, out)
            }
            Protocol::Redis => redis::encode(request, out),
            Protocol::Http => http::encode(request, out),
        };
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    /// Parses the first reply in `buf`.
    ///
    /// `Ok(None)`: `buf` holds only part of a reply; call again when more bytes have
    /// arrived. `Ok(Some((reply, n)))`: the reply took the first `n` bytes (never 0); the
    /// next reply, if any, starts at `buf[n..]`. `Err`: the bytes are not a reply of this
    /// protocol; the connection cannot be trusted after that.
    pub fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        let step = match *self {
            Protocol::Echo { len } => echo::parse(len.get(), buf),
            Protocol::Synthetic => synthetic::parse(buf),
            Protocol::Memcached => memcached::parse(buf),
            Protocol::MemcachedBinary { .. } => memcached_binary::parse(buf),
            Protocol::Redis => redis::parse(buf),
            Protocol::Http => http::parse(buf),
        };
        wire::finish(step)
    }
}

const WHAT: &str = "protocol";

impl FromStr for Protocol {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<Protocol, SpecError> {
        let protocol = match spec.trim() {
            "synthetic" => Protocol::Synthetic,
            "memcached" => Protocol::Memcached,
            "memcached-binary" => Protocol::MemcachedBinary { getk: false },
            "memcached-binary:getk" => Protocol::MemcachedBinary { getk: true },
            "redis" => Protocol::Redis,
            "http" => Protocol::Http,
            other => match other.strip_prefix("echo:") {
                Some(len) => {
                    let len = len
                        .parse::<usize>()
                        .ok()
                        .filter(|len| (1..=MAX_VALUE_LEN).contains(len))
                        .and_then(NonZeroUsize::new)
                        .ok_or_else(|| {
                            SpecError::new(
                                WHAT,
                                spec,
                                "expected echo:N with N the bytes of each request and reply, \
                                 from 1 to 536870912, as in echo:64",
                            )
                        })?;
                    Protocol::Echo { len }
                }
                None => {
                    return Err(SpecError::new(
                        WHAT,
                        spec,
                        "expected echo:N, synthetic, memcached, memcached-binary, \
                         memcached-binary:getk, redis or http",
                    ));
                }
            },
        };
        Ok(protocol)
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Protocol::Echo { len } => write!(f, "echo:{len}"),
            Protocol::MemcachedBinary { getk: true } => f.write_str("memcached-binary:getk"),
            other => f.write_str(other.name()),
        }
    }
}

serde_as_spec_string!(
    Protocol,
    "a protocol: echo:N, synthetic, memcached, memcached-binary, redis or http"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip() {
        for spec in [
            "echo:64",
            "echo:1",
            "synthetic",
            "memcached",
            "memcached-binary",
            "memcached-binary:getk",
            "redis",
            "http",
        ] {
            let protocol: Protocol = spec.parse().unwrap();
            assert_eq!(protocol.to_string(), spec);
            let json = serde_json::to_string(&protocol).unwrap();
            assert_eq!(json, format!("{spec:?}"));
            assert_eq!(serde_json::from_str::<Protocol>(&json).unwrap(), protocol);
        }
        assert_eq!(
            "echo:64".parse::<Protocol>().unwrap(),
            Protocol::Echo {
                len: NonZeroUsize::new(64).unwrap()
            }
        );
    }

    #[test]
    fn bad_specs_say_what_was_expected() {
        let error = |spec: &str| spec.parse::<Protocol>().unwrap_err().to_string();
        assert_eq!(
            error("memcache"),
            r#"invalid protocol "memcache": expected echo:N, synthetic, memcached, memcached-binary, memcached-binary:getk, redis or http"#
        );
        for spec in ["echo:0", "echo:", "echo:-1", "echo:1k", "echo:536870913"] {
            assert_eq!(
                error(spec),
                format!(
                    "invalid protocol {spec:?}: expected echo:N with N the bytes of each \
                     request and reply, from 1 to 536870912, as in echo:64"
                )
            );
        }
    }

    #[test]
    fn a_failed_encode_leaves_the_buffer_as_it_was() {
        let mut out = b"earlier request".to_vec();
        let request = Request::Get { key: b"has space" };
        assert!(Protocol::Memcached.encode(&request, 0, &mut out).is_err());
        assert_eq!(out, b"earlier request");
    }
}
