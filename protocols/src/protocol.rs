//! The protocols vernier speaks: one [`Protocol`] value that encodes a [`Request`] into the
//! caller's buffer and parses [`Reply`]s incrementally, so the agent is written once for all.

mod declare;
mod echo;
mod error;
mod http;
#[cfg(test)]
mod made_up;
mod memcached;
mod memcached_binary;
mod redis;
mod registry;
mod simple;
mod synthetic;
#[cfg(test)]
mod testing;
pub(crate) mod wire;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

pub use error::{EncodeError, ParseError};

use crate::declared::{Declaration, DeclareError, Declared};
use crate::spec::SpecError;

/// The largest value vernier sends or accepts, 512 MiB (Redis's default
/// `proto-max-bulk-len`). A reply announcing more is refused at once, rather than buffered
/// until it arrives, so a confused or hostile server cannot make the agent grow its buffer
/// without bound.
pub const MAX_VALUE_LEN: usize = 512 << 20;

/// What a protocol is. Each protocol is one file: a type that implements `Speak`, and an
/// [`Entry`] listed once in `protocol/registry.rs`'s `PROTOCOLS`, from which every list of protocols
/// (URL schemes, messages, help, the agent's wire form, the validator's checks) is derived.
pub trait Speak: fmt::Debug + Send + Sync + 'static {
    /// The protocol's entry in the registry: its name, URL scheme, defaults and workload.
    fn entry(&self) -> &'static Entry;

    /// The spec a scenario writes for this protocol (`echo:64`, `memcached-binary:getk`).
    fn spec(&self) -> String {
        self.entry().name.to_owned()
    }

    /// Appends `request` to `out` (see [`Protocol::encode`]).
    fn encode(
        &self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError>;

    /// Parses the first reply in `buf`, sans I/O (see [`Protocol::parse`]): "incomplete" is
    /// `Ok(None)`, a normal answer. What counts as success is the reply's
    /// [`kind`](Reply::kind): anything but [`ReplyKind::Error`].
    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError>;

    /// How a reply finds its request.
    fn matching(&self) -> Matching {
        Matching::InOrder
    }

    /// The declaration, for a protocol declared in a scenario.
    fn declared(&self) -> Option<&Declared> {
        None
    }

    /// A new connection's own state, for a protocol that keeps one (HTTP/2's streams,
    /// flow-control windows and header tables): the connection then encodes and parses
    /// through it rather than through [`encode`](Speak::encode) and
    /// [`parse`](Speak::parse). `None` (the default) for a protocol whose connections are
    /// alike.
    fn session(&self) -> Option<Box<dyn Session>> {
        None
    }

    /// The protocol's serde form when it is a mapping rather than its spec (a declared
    /// protocol's declaration; a gRPC method's, with its descriptors), as JSON. It is also
    /// what tells two such protocols apart.
    fn mapping(&self) -> Option<serde_json::Value> {
        None
    }
}

/// A connection's state, for a protocol whose connections each keep their own (see
/// [`Speak::session`]). Sans I/O, as [`Speak`] is: what it must send of its own accord
/// (a preface, acknowledgements, window updates) it appends to the caller's buffer, and the
/// caller counts those bytes as no request's.
pub trait Session: Send + fmt::Debug {
    /// Appends what a new connection sends before its first request.
    fn open(&mut self, out: &mut Vec<u8>);

    /// Whether another request may go now (a stream free, room in the windows).
    fn ready(&self) -> bool;

    /// Whether the connection is of no more use: the peer asked for no new requests
    /// (HTTP/2's GOAWAY) and those it will still answer are answered. The caller then
    /// replaces it; requests still open on it fail.
    fn spent(&self) -> bool {
        false
    }

    /// Appends `request` to `out`, as [`Speak::encode`].
    fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError>;

    /// Parses the next unit of `buf` (an HTTP/2 frame): `Ok(None)`, incomplete;
    /// `Ok(Some((reply, n)))`, the first `n` bytes were read, and ended a reply when
    /// `reply` is `Some` (`n` may then be 0: a reply the session had already read, as
    /// TLS decrypts several frames at once). What the connection must send in answer is
    /// appended to `answer`.
    fn parse(
        &mut self,
        buf: &[u8],
        answer: &mut Vec<u8>,
    ) -> Result<Option<(Option<Reply>, usize)>, ParseError>;
}

/// How replies are matched to requests on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// Replies come back in request order (pipelined FIFO).
    InOrder,
    /// A reply's [`opaque`](Reply::opaque) echoes its request's: `opaque == seq & mask`,
    /// in whatever order the server answers.
    ById {
        /// The bits of the request's sequence number that the reply's id field carries.
        mask: u32,
    },
}

/// What a protocol's requests carry, which decides the workload a scenario gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// A service time per request, drawn by the client (the synthetic protocol).
    Service,
    /// Key-value operations: keys, values, a read ratio (memcached, Redis, HTTP).
    KeyValue,
    /// Nothing: every request is the same (echo).
    Fixed,
    /// Keys only: the protocol's own requests say their mix and sizes (a declared
    /// protocol).
    Keys,
}

/// A protocol's line in the registry: everything about it that does not depend on a
/// spec's parameters.
#[derive(Debug)]
pub struct Entry {
    /// Its name in specs and messages (`memcached-binary`).
    pub name: &'static str,
    /// The URL scheme that names it (`memcached-binary://host:port`).
    pub scheme: &'static str,
    /// The specs it accepts, for messages and help (`echo:N`; `memcached-binary`,
    /// `memcached-binary:getk`).
    pub forms: &'static [&'static str],
    /// The spec a URL of its scheme gives (`echo:64`).
    pub url_spec: &'static str,
    /// A port for examples in messages.
    pub example_port: u16,
    /// What its requests carry.
    pub workload: WorkloadKind,
    /// The default request path, for a protocol whose requests name one (HTTP's `/`).
    pub default_path: Option<&'static str>,
    /// A URL's path names the method to call (gRPC's `/package.Service/Method`).
    pub url_method: bool,
    /// One line for help.
    pub about: &'static str,
    /// Builds the protocol from a spec: `None` for the bare name, `Some(params)` for what
    /// follows `name:`. The error says what was expected.
    pub build: fn(Option<&str>) -> Result<Protocol, String>,
}

/// A wire protocol: one of the registry's ([`Protocol::all`]), or one declared in a scenario. Cheap to
/// clone. Spec (and serde form) of the built-in ones: `echo:64`, `synthetic`, `memcached`,
/// `memcached-binary`, `memcached-binary:getk`, `redis`, `http`; a declared protocol's
/// serde form is its [`Declaration`], a mapping.
#[derive(Clone)]
pub struct Protocol(Arc<dyn Speak>);

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
    /// A declared protocol's request number `index` (see [`Declared::pick`]), for `key`,
    /// its random fields drawn from `entropy`.
    Template {
        /// Which of the declared requests.
        index: usize,
        /// The workload's key.
        key: &'a [u8],
        /// A random number, from which the request's random sizes and bytes are derived.
        entropy: u64,
    },
}

impl Request<'_> {
    /// The request's name in messages.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Get { .. } => "get",
            Request::Set { .. } => "set",
            Request::Spin { .. } => "spin",
            Request::Template { .. } => "declared",
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
    /// The server refused the request before processing any of it (an HTTP/2 stream above
    /// a GOAWAY's last stream id, or reset with REFUSED_STREAM): safe to send again, and
    /// sent again, on a connection that takes it. Neither a success nor an error.
    Refused,
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
    /// A protocol of `speak`'s type.
    pub fn new(speak: impl Speak) -> Protocol {
        Protocol(Arc::new(speak))
    }

    /// A protocol declared in a scenario, checked.
    pub fn declare(declaration: Declaration) -> Result<Protocol, DeclareError> {
        Ok(Protocol::new(Declared::new(declaration)?))
    }

    /// The protocol's name in specs and messages.
    pub fn name(&self) -> &'static str {
        self.0.entry().name
    }

    /// The protocol's entry in the registry.
    pub fn entry(&self) -> &'static Entry {
        self.0.entry()
    }

    /// What its requests carry.
    pub fn workload(&self) -> WorkloadKind {
        self.0.entry().workload
    }

    /// How its replies find their requests.
    pub fn matching(&self) -> Matching {
        self.0.matching()
    }

    /// The declaration, for a declared protocol.
    pub fn declared(&self) -> Option<&Declared> {
        self.0.declared()
    }

    /// A new connection's own state, for a protocol that keeps one (see
    /// [`Speak::session`]).
    pub fn session(&self) -> Option<Box<dyn Session>> {
        self.0.session()
    }

    /// Whether its serde form is a mapping (a declared protocol's, a gRPC method's) rather
    /// than a spec.
    pub fn is_mapping(&self) -> bool {
        self.0.mapping().is_some()
    }

    /// Appends `request` to `out`, ready to send. Nothing is allocated beyond `out`'s own
    /// growth, so a buffer reused across requests stops allocating once it is large enough.
    ///
    /// `opaque` is carried by the protocols that carry one (memcached binary, a declared
    /// `{seq}`) and comes back in [`Reply::opaque`]; the others answer in request order and
    /// ignore it.
    ///
    /// On error `out` is left as it was.
    #[inline]
    pub fn encode(
        &self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let start = out.len();
        let result = self.0.encode(request, opaque, out);
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
    #[inline]
    pub fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        self.0.parse(buf)
    }

    /// The registry's entry whose URL scheme is `scheme`.
    pub fn by_scheme(scheme: &str) -> Option<&'static Entry> {
        registry::PROTOCOLS
            .iter()
            .copied()
            .find(|e| e.scheme == scheme)
    }

    /// Every protocol in the registry, in its order.
    pub fn all() -> &'static [&'static Entry] {
        registry::PROTOCOLS
    }

    /// Every spec form the registry accepts, as a message lists them: `echo:N, synthetic,
    /// ..., redis or http`.
    pub fn forms() -> String {
        let forms: Vec<&str> = registry::PROTOCOLS
            .iter()
            .flat_map(|e| e.forms.iter().copied())
            .collect();
        match forms.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for Protocol {
    fn eq(&self, other: &Protocol) -> bool {
        self.name() == other.name()
            && self.0.spec() == other.0.spec()
            && self.0.mapping() == other.0.mapping()
    }
}

const WHAT: &str = "protocol";

impl FromStr for Protocol {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<Protocol, SpecError> {
        let trimmed = spec.trim();
        let (name, params) = match trimmed.split_once(':') {
            Some((name, params)) => (name, Some(params)),
            None => (trimmed, None),
        };
        let entry = registry::PROTOCOLS
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| SpecError::new(WHAT, spec, format!("expected {}", Protocol::forms())))?;
        (entry.build)(params).map_err(|expected| SpecError::new(WHAT, spec, expected))
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.spec())
    }
}

impl serde::Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.mapping() {
            Some(mapping) => mapping.serialize(serializer),
            None => serializer.collect_str(self),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Protocol;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "a protocol: {}, or a declared protocol's or a gRPC method's mapping",
                    Protocol::forms()
                )
            }

            fn visit_str<E: serde::de::Error>(self, spec: &str) -> Result<Protocol, E> {
                spec.parse().map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Protocol, A::Error> {
                let mut mapping = <serde_json::Map<String, serde_json::Value> as serde::Deserialize>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                // A gRPC method's mapping has the one key `grpc`; any other is a declared
                // protocol's.
                if let Some(grpc) = mapping.remove(crate::grpc::KEY) {
                    return crate::grpc::Grpc::from_mapping(grpc).map_err(serde::de::Error::custom);
                }

                let declaration: Declaration =
                    serde_json::from_value(serde_json::Value::Object(mapping))
                        .map_err(serde::de::Error::custom)?;
                Protocol::declare(declaration).map_err(serde::de::Error::custom)
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

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
            Protocol::echo(NonZeroUsize::new(64).unwrap())
        );
        assert_ne!(
            Protocol::memcached_binary(true),
            Protocol::memcached_binary(false)
        );
    }

    #[test]
    fn bad_specs_say_what_was_expected() {
        let error = |spec: &str| spec.parse::<Protocol>().unwrap_err().to_string();
        assert_eq!(
            error("memcache"),
            r#"invalid protocol "memcache": expected echo:N, synthetic, memcached, memcached-binary, memcached-binary:getk, redis, http, a declared protocol (a mapping), a gRPC method (a mapping) or knock"#
        );
        for spec in [
            "echo:0",
            "echo:",
            "echo:-1",
            "echo:1k",
            "echo:536870913",
            "echo",
        ] {
            assert_eq!(
                error(spec),
                format!(
                    "invalid protocol {spec:?}: expected echo:N with N the bytes of each \
                     request and reply, from 1 to 536870912, as in echo:64"
                )
            );
        }
        assert_eq!(
            error("redis:6"),
            r#"invalid protocol "redis:6": expected redis, with no parameters"#
        );
        assert!(
            error("declared").contains("written as a mapping"),
            "{}",
            error("declared")
        );
    }

    #[test]
    fn a_failed_encode_leaves_the_buffer_as_it_was() {
        let mut out = b"earlier request".to_vec();
        let request = Request::Get { key: b"has space" };
        assert!(Protocol::memcached().encode(&request, 0, &mut out).is_err());
        assert_eq!(out, b"earlier request");
    }

    /// `made_up.rs` is one file and one line in the registry (under `cfg(test)`): every
    /// list derived from the registry now has it, and it speaks.
    #[test]
    fn a_made_up_protocol_registers_with_one_file_and_one_line() {
        let knock: Protocol = "knock".parse().unwrap();
        assert_eq!(knock.name(), "knock");
        assert_eq!(knock.to_string(), "knock");
        assert_eq!(knock.workload(), WorkloadKind::KeyValue);
        assert_eq!(Protocol::by_scheme("knock").map(|e| e.name), Some("knock"));
        assert!(
            Protocol::forms().ends_with("or knock"),
            "{}",
            Protocol::forms()
        );
        assert!(Protocol::all().iter().any(|e| e.name == "knock"));
        let json = serde_json::to_string(&knock).unwrap();
        assert_eq!(serde_json::from_str::<Protocol>(&json).unwrap(), knock);

        let mut out = Vec::new();
        knock
            .encode(&Request::Get { key: b"door" }, 0, &mut out)
            .unwrap();
        assert_eq!(out, b"KNOCK door\n");
        assert_eq!(knock.parse(b"ok"), Ok(None));
        assert_eq!(
            knock.parse(b"ok\nno\n"),
            Ok(Some((Reply::new(ReplyKind::Ok, 0), 3)))
        );
        assert_eq!(
            knock.parse(b"no\n"),
            Ok(Some((Reply::new(ReplyKind::Error, 0), 3)))
        );
    }

    #[test]
    fn every_entry_has_its_own_name_and_scheme() {
        let entries = Protocol::all();
        for (i, a) in entries.iter().enumerate() {
            for b in &entries[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.scheme, b.scheme);
            }
            if a.workload != WorkloadKind::Keys {
                let protocol: Protocol = a.url_spec.parse().unwrap();
                assert_eq!(protocol.name(), a.name);
            }
        }
    }
}
