//! gRPC unary calls over HTTP/2 (h2c, or TLS): a method found in protobuf descriptors (an
//! encoded `FileDescriptorSet` the caller compiled or read), its request written as JSON
//! with the workload's key and the request's sequence number filled in per call, and the
//! status in each call's trailers counted as its outcome. Each connection keeps its own HTTP/2 state
//! ([`h2::Connection`], a [`Session`]).
//!
//! The protocol's serde form (the agent's wire form, a record's) is the mapping
//! `{grpc: {method, request, authority, descriptors, tls}}`, the descriptors an encoded
//! `FileDescriptorSet` in base64, so that an agent needs no file of the user's.

mod call;
mod h2;
pub mod message;
mod tls;

use std::fmt;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

pub use h2::frame_len;
pub use message::{GrpcError, Method, check_descriptors};
pub use tls::TlsMapping;

use crate::protocol::vocab::{
    EncodeError, Entry, MappingForm, Matching, ParseError, Protocol, Reply, Request, Session,
    SessionContext, Speak, WorkloadKind,
};
use call::{Call, NAME};

/// The key of a gRPC protocol's mapping.
const KEY: &str = "grpc";

pub(crate) static ENTRY: Entry = GRPC;

/// `grpc://`, h2c.
const GRPC: Entry = Entry {
    name: NAME,
    scheme: "grpc",
    forms: &["a gRPC method (a mapping)"],
    url_spec: NAME,
    example_port: 50051,
    workload: WorkloadKind::Keys,
    default_path: None,
    url_method: true,
    about: "gRPC unary calls over HTTP/2 (h2c), the method from a .proto file or a \
            descriptor set, the request as JSON",
    build: |_| {
        Err(
            "a gRPC protocol is written as a mapping, as in protocol: {grpc: {proto: \
             bench.proto, method: bench.Echo/Call, request: '{\"name\": \"{key}\"}'}}"
                .to_owned(),
        )
    },
    mapping: Some(MappingForm {
        key: Some(KEY),
        parse: |mut mapping| {
            let value = mapping.remove(KEY).unwrap_or_default();
            Grpc::from_mapping(value)
        },
    }),
};

/// `grpcs://`: the same calls over TLS (HTTP/2 by ALPN), the server's certificate checked
/// against the system's CAs unless a scenario's `tls: {ca: FILE}` names others.
pub(crate) static ENTRY_TLS: Entry = Entry {
    name: "grpcs",
    scheme: "grpcs",
    forms: &[],
    url_spec: "grpcs",
    about: "gRPC unary calls over HTTP/2 and TLS",
    ..GRPC
};

/// What a gRPC protocol is, as sent to agents: the method, the request's JSON, the
/// `:authority` and the descriptors (an encoded `FileDescriptorSet`, base64).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcMapping {
    /// `package.Service/Method`.
    pub method: String,
    /// The request message as JSON, with `{key}`, `{seq}` and `{random:N}` fields.
    pub request: String,
    /// The `:authority` every call names (the target's `host:port`).
    pub authority: String,
    /// The encoded `FileDescriptorSet`, base64.
    pub descriptors: String,
    /// TLS, when the server speaks it (h2 by ALPN); h2c (prior knowledge) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsMapping>,
}

/// A gRPC method, ready to call. Cheap to clone.
#[derive(Clone)]
pub struct Grpc(Arc<Inner>);

struct Inner {
    mapping: GrpcMapping,
    /// What every call has, shared with the connections.
    call: Arc<Call>,
    /// The TLS client's configuration, over TLS.
    tls: Option<tls::Tls>,
}

impl Grpc {
    /// The protocol calling `method` (`package.Service/Method`) in `descriptors` (an encoded
    /// `FileDescriptorSet`) with `request` (JSON), naming `authority`; over TLS when `tls`
    /// says how, else h2c.
    pub fn protocol(
        descriptors: &[u8],
        method: &str,
        request: &str,
        authority: &str,
        tls: Option<TlsMapping>,
    ) -> Result<Protocol, GrpcError> {
        let mapping = GrpcMapping {
            method: method.to_owned(),
            request: request.to_owned(),
            authority: authority.to_owned(),
            descriptors: BASE64.encode(descriptors),
            tls,
        };
        Ok(Protocol::new(Grpc::new(mapping, descriptors)?))
    }

    fn new(mapping: GrpcMapping, descriptors: &[u8]) -> Result<Grpc, GrpcError> {
        let method = Method::new(descriptors, &mapping.method, &mapping.request)?;
        let tls = match &mapping.tls {
            Some(t) => Some(tls::Tls::new(t, host(&mapping.authority)).map_err(GrpcError::Tls)?),
            None => None,
        };
        let headers = h2::request_headers(method.path(), &mapping.authority, tls.is_some());
        Ok(Grpc(Arc::new(Inner {
            mapping,
            call: Arc::new(Call::new(method, headers)),
            tls,
        })))
    }

    /// The protocol of a mapping's `grpc:` value, as [`Protocol`]'s serde form writes it.
    fn from_mapping(value: serde_json::Value) -> Result<Protocol, String> {
        let mapping: GrpcMapping =
            serde_json::from_value(value).map_err(|e| format!("grpc: {e}"))?;
        let descriptors = BASE64
            .decode(&mapping.descriptors)
            .map_err(|e| format!("grpc: descriptors: not base64: {e}"))?;
        Ok(Protocol::new(
            Grpc::new(mapping, &descriptors).map_err(|e| format!("grpc: {e}"))?,
        ))
    }

    /// What every call has, for a connection to write calls from.
    fn call(&self) -> Arc<Call> {
        self.0.call.clone()
    }
}

impl fmt::Debug for Grpc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grpc")
            .field("method", &self.0.mapping.method)
            .field("authority", &self.0.mapping.authority)
            .finish()
    }
}

impl Speak for Grpc {
    fn entry(&self) -> &'static Entry {
        if self.0.tls.is_some() {
            &ENTRY_TLS
        } else {
            &ENTRY
        }
    }

    fn spec(&self) -> String {
        format!("grpc {}", self.0.mapping.method)
    }

    /// A call needs its connection's HTTP/2 state: see [`Speak::session`].
    fn encode(
        &self,
        request: &Request<'_>,
        _opaque: u32,
        _out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        Err(EncodeError::unsupported(NAME, request))
    }

    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        Err(ParseError::new(
            NAME,
            "a gRPC reply is read by its connection's HTTP/2 session",
            buf,
        ))
    }

    fn matching(&self) -> Matching {
        Matching::ById { mask: u32::MAX }
    }

    fn keeps_state(&self) -> bool {
        true
    }

    fn session(&self, context: &SessionContext) -> Option<Box<dyn Session>> {
        let h2 = Box::new(h2::Connection::new(self.call()));
        Some(match &self.0.tls {
            Some(tls) => tls.session(h2, context),
            None => h2,
        })
    }

    fn unusable(&self, context: &SessionContext) -> Option<String> {
        self.0.tls.as_ref()?.unusable(context)
    }

    fn mapping(&self) -> Option<serde_json::Value> {
        let mapping = serde_json::to_value(&self.0.mapping).ok()?;
        Some(serde_json::json!({ KEY: mapping }))
    }
}

/// The host of an authority (`host:port`, `[v6]:port`).
fn host(authority: &str) -> &str {
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}
