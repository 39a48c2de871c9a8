//! The vocabulary every protocol speaks: the [`Speak`] trait and a connection's
//! [`Session`], the [`Request`] asked, the [`Reply`] read, how replies find their requests
//! and a protocol's [`Entry`] in the registry. It names no protocol: each protocol builds
//! on it, and the registry (and the serde form that reads a protocol back) on both.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use rustls::RootCertStore;

pub use super::error::{EncodeError, ParseError};
pub use super::request::Request;

/// The largest value vernier sends or accepts, 512 MiB (Redis's default
/// `proto-max-bulk-len`). A reply announcing more is refused at once, rather than buffered
/// until it arrives, so a confused or hostile server cannot make the agent grow its buffer
/// without bound.
pub const MAX_VALUE_LEN: usize = 512 << 20;

/// What a protocol is. Each protocol is one file: a type that implements `Speak`, and an
/// [`Entry`] listed once in `protocol/registry.rs`'s `PROTOCOLS`, from which every list of
/// protocols (URL schemes, messages, help, the agent's wire form, the validator's checks) is
/// derived.
///
/// A connection speaks through a [`Session`] ([`Protocol::session`]): a protocol whose
/// connections are alike gets one that forwards to [`encode`](Speak::encode) and
/// [`parse`](Speak::parse); one that keeps state per connection (HTTP/2) gives its own.
pub trait Speak: Any + fmt::Debug + Send + Sync {
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

    /// Whether each connection keeps its own state (HTTP/2's streams, windows and header
    /// tables), given by [`session`](Speak::session); asked without building one.
    fn keeps_state(&self) -> bool {
        false
    }

    /// A new connection's own state, for a protocol that [keeps one](Speak::keeps_state)
    /// (`Some` exactly then): the connection encodes and parses through it. `None` (the
    /// default) for a protocol whose connections are alike, which
    /// [`Protocol::session`] gives a session forwarding to [`encode`](Speak::encode) and
    /// [`parse`](Speak::parse). What only the caller can read (the system's CA
    /// certificates) comes in `context`.
    fn session(&self, context: &SessionContext) -> Option<Box<dyn Session>> {
        let _ = context;
        None
    }

    /// Why no connection of this protocol can start on this host, given what the caller
    /// reads for it (a server checked against the system's CA certificates, on a system with
    /// none): asked once before the load starts, so that it fails then, not at each call.
    fn unusable(&self, context: &SessionContext) -> Option<String> {
        let _ = context;
        None
    }

    /// The protocol's serde form when it is a mapping rather than its spec (a declared
    /// protocol's declaration; a gRPC method's, with its descriptors), as JSON. It is also
    /// what tells two such protocols apart.
    fn mapping(&self) -> Option<serde_json::Value> {
        None
    }
}

/// What a connection's session may need that only the caller reads (the crate does no
/// I/O): the system's CA certificates, asked for only by a session that checks a server
/// against them, so a caller may load them once, when first asked.
#[derive(Debug, Clone, Copy)]
pub struct SessionContext {
    /// The system's CA certificates.
    pub system_roots: fn() -> Arc<RootCertStore>,
}

impl Default for SessionContext {
    /// No system CA certificates: a TLS session that needs them fails, saying so.
    fn default() -> SessionContext {
        SessionContext {
            system_roots: || Arc::new(RootCertStore::empty()),
        }
    }
}

/// A connection's state (see [`Protocol::session`]). Sans I/O, as [`Speak`] is: what it
/// must send of its own accord (a preface, acknowledgements, window updates) it appends to
/// the caller's buffer, and the caller counts those bytes as no request's.
pub trait Session: Send + fmt::Debug {
    /// Appends what a new connection sends before its first request (nothing, by default).
    fn open(&mut self, _out: &mut Vec<u8>) {}

    /// Whether another request may go now (a stream free, room in the windows); always,
    /// by default.
    fn ready(&self) -> bool {
        true
    }

    /// Whether the connection is of no more use: the peer asked for no new requests
    /// (HTTP/2's GOAWAY) and those it will still answer are answered. The caller then
    /// replaces it; requests still open on it fail.
    fn spent(&self) -> bool {
        false
    }

    /// Appends `request` to `out`, as [`Speak::encode`]; on error `out` may hold part of
    /// it, which the caller drops.
    fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError>;

    /// Parses the next unit at the front of `buf` (a reply; an HTTP/2 frame): what it
    /// was, and how many bytes of `buf` it took (see [`Parsed`]). What the connection
    /// must send in answer is appended to `answer`. `Err`: the bytes are not this
    /// protocol's; the connection cannot be trusted after that.
    fn parse(&mut self, buf: &[u8], answer: &mut Vec<u8>) -> Result<Parsed, ParseError>;
}

/// What a [`Session`] found at the front of the bytes received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// The bytes end inside a unit: call again when more have arrived.
    Incomplete,
    /// The first `n` bytes were the connection's own (a control frame, a TLS handshake or
    /// records still incomplete) and ended no reply. `n` is 0 for a unit the session had
    /// already read (TLS decrypts several frames at once): the session moved on.
    Consumed(usize),
    /// A reply, whose end took the first `n` bytes. `n` is 0 for a reply the session had
    /// already read (TLS decrypts several frames at once) or that the server handed back
    /// unprocessed (an HTTP/2 GOAWAY's).
    Reply(Reply, usize),
}

/// The session of a protocol whose connections are alike: its [`Speak::encode`] and
/// [`Speak::parse`], with no state of its own.
#[derive(Debug)]
struct Stateless(Protocol);

impl Session for Stateless {
    #[inline]
    fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        self.0.0.encode(request, opaque, out)
    }

    #[inline]
    fn parse(&mut self, buf: &[u8], _answer: &mut Vec<u8>) -> Result<Parsed, ParseError> {
        Ok(match self.0.0.parse(buf)? {
            Some((reply, n)) => Parsed::Reply(reply, n),
            None => Parsed::Incomplete,
        })
    }
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
    /// How the protocol is read back when its serde form is a mapping.
    pub mapping: Option<MappingForm>,
}

/// How a protocol written as a mapping (see [`Speak::mapping`]) is read back: the
/// registry's serde form hands the mapping to the form it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct MappingForm {
    /// The key that marks a mapping as this protocol's (a gRPC method's `grpc`); `None` for
    /// the protocol any other mapping is (a declared one).
    pub key: Option<&'static str>,
    /// The protocol of a mapping, or what is wrong with it.
    pub parse: fn(serde_json::Map<String, serde_json::Value>) -> Result<Protocol, String>,
}

/// A wire protocol: one of the registry's ([`Protocol::all`]), or one declared in a scenario. Cheap to
/// clone. Spec (and serde form) of the built-in ones: `echo:64`, `synthetic`, `memcached`,
/// `memcached-binary`, `memcached-binary:getk`, `redis`, `http`; a declared protocol's
/// serde form is its [`Declaration`], a mapping.
#[derive(Clone)]
pub struct Protocol(pub(super) Arc<dyn Speak>);

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

    /// Whether each connection keeps its own state (see [`Speak::keeps_state`]), asked
    /// without building a session.
    pub fn keeps_state(&self) -> bool {
        self.0.keeps_state()
    }

    /// A new connection's state: the protocol's own, for one that keeps one; else a session
    /// forwarding to [`encode`](Protocol::encode) and [`parse`](Protocol::parse). Given no
    /// system CA certificates: see [`session_with`](Protocol::session_with).
    pub fn session(&self) -> Box<dyn Session> {
        self.session_with(&SessionContext::default())
    }

    /// Why no connection can start on this host (see [`Speak::unusable`]), given what the
    /// caller read in `context`.
    pub fn unusable(&self, context: &SessionContext) -> Option<String> {
        self.0.unusable(context)
    }

    /// A new connection's state (see [`session`](Protocol::session)), given what the
    /// caller read for it in `context`.
    pub fn session_with(&self, context: &SessionContext) -> Box<dyn Session> {
        match self.0.session(context) {
            Some(session) => session,
            None => Box::new(Stateless(self.clone())),
        }
    }

    /// The protocol as the trait object it is, for the registry's files to look at its
    /// type.
    pub(super) fn speak(&self) -> &dyn Any {
        let speak: &dyn Speak = &*self.0;
        speak
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

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.spec())
    }
}
