//! A gRPC method found in protobuf descriptors, and its request message written per call
//! from a JSON template.
//!
//! The descriptors are an encoded `FileDescriptorSet`, handed over as bytes: the caller
//! compiles the `.proto` file or reads the descriptor set (the workbench's
//! `scenario/proto.rs`), and [`check_descriptors`] tells whether they decode. The request
//! is the message in proto3's JSON mapping, in which a JSON string value may hold
//! placeholders, filled in for each call:
//!
//! - `{key}`: the workload's key; in a `string` field as text (bytes that are not UTF-8 each
//!   become U+FFFD, as [`String::from_utf8_lossy`] does), in a `bytes` field as it is.
//! - `{seq}`: the request's sequence number, in decimal in a `string` or `bytes` field. In a
//!   number field (`int32`, `uint64`, `sint64`, `fixed32`, `double`...), whose JSON value is
//!   then the whole string `"{seq}"` (proto3 JSON reads numbers from strings), it is the
//!   number itself, wrapped to the field's width as a cast does (`int32` from 2^31 on is
//!   negative).
//! - `{random:N}`: N random bytes in a `bytes` field, N random lowercase hex digits
//!   (`0-9a-f`) in a `string` field, drawn from the call's entropy; N from 1 to 4 MiB.
//! - `{{` and `}}`: a literal `{` and `}`.
//!
//! A placeholder may be part of a longer text (`"user-{key}"`), in any field: nested
//! messages, repeated fields, map values, oneofs, and the wrapper types
//! (`google.protobuf.StringValue`...), whose JSON is their value's. In a `bytes` field, whose
//! proto3 JSON is base64, a value with a brace is a template instead: its text is written as
//! its UTF-8 bytes (`"id-{key}"` is `b"id-"` and the key), while a value without one is
//! base64 as usual. Refused with an error, never sent as written: a placeholder in a map
//! key, in a field that cannot hold it (`{key}` in an `int32`), and inside the free-form
//! types (`google.protobuf.Struct`, `Value`, `ListValue`, `Any`), extensions and proto2
//! groups; there, and in map keys, strings are otherwise taken as written (`{{` stays
//! `{{`). An unknown placeholder (`{kee}`), a lone brace or a bad size is an error
//! wherever it is written (outside those).
//!
//! At [`Method::new`] the JSON is checked against the message type (prost-reflect reads it,
//! the placeholders replaced by neutral values) and encoded once into a template: the bytes
//! every call has, and the placeholders between them, each inside the length prefixes of
//! the messages around it. [`Method::encode`] writes the template, computing those lengths
//! per call, without allocating beyond the output's growth.

use prost_reflect::{DescriptorPool, DynamicMessage, Kind, MessageDescriptor, MethodDescriptor};
use serde_json::Value as Json;

use error::mismatch;
pub use error::{GrpcError, MAX_RANDOM};
use template::Template;
use walk::{Hole, Holes};

mod error;
mod number;
mod template;
#[cfg(test)]
mod tests;
mod walk;

/// Checks that `descriptors` decode as an encoded `FileDescriptorSet` whose files' imports
/// are all in it; `from` names where they came from in the error (a file).
pub fn check_descriptors(descriptors: &[u8], from: &str) -> Result<(), GrpcError> {
    decode_pool(descriptors, from).map(drop)
}

fn decode_pool(bytes: &[u8], from: &str) -> Result<DescriptorPool, GrpcError> {
    DescriptorPool::decode(bytes).map_err(|e| GrpcError::Descriptors {
        from: from.to_owned(),
        problem: e.to_string(),
    })
}

/// A unary method and how to write its requests. Two methods are equal when they have the
/// same path and write the same requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    path: String,
    template: Template,
}

impl Method {
    /// Finds `method` in `descriptors` (an encoded `FileDescriptorSet`) and reads `request`,
    /// the JSON of its request message (proto3's JSON mapping) with placeholders (see the
    /// [module](self)); an empty request is the empty message `{}`. `method` is
    /// `package.Service/Method`, or `package.Service.Method`, with or without a leading
    /// `/`.
    pub fn new(descriptors: &[u8], method: &str, request: &str) -> Result<Method, GrpcError> {
        let pool = decode_pool(descriptors, "descriptors")?;
        let found = find_method(&pool, method)?;
        let template = request_template(&found.input(), request)?;
        Ok(Method {
            path: format!("/{}/{}", found.parent_service().full_name(), found.name()),
            template,
        })
    }

    /// The HTTP/2 `:path` of its calls, `/package.Service/Method`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Appends the request message's protobuf encoding (without gRPC's 5-byte prefix) for
    /// the workload's `key` and the request's sequence number `seq`, random placeholders
    /// drawn from `entropy` (a random `u64` the caller draws per request). Allocates
    /// nothing but `out`'s growth. It cannot fail today: the `Result` leaves room for limits.
    pub fn encode(
        &self,
        key: &[u8],
        seq: u64,
        entropy: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), GrpcError> {
        self.template.write(key, seq, entropy, out);
        Ok(())
    }

    /// Whether its requests use `{key}` (so that the scenario needs keys).
    pub fn uses_key(&self) -> bool {
        self.template.uses_key()
    }
}

/// `package.Service/Method` (or `.Method`, or with a leading `/`) in `pool`, unary.
fn find_method(pool: &DescriptorPool, method: &str) -> Result<MethodDescriptor, GrpcError> {
    let name = method.strip_prefix('/').unwrap_or(method);
    let (service, name) = name
        .rsplit_once('/')
        .or_else(|| name.rsplit_once('.'))
        .filter(|(service, name)| !service.is_empty() && !name.is_empty())
        .filter(|(service, _)| !service.contains('/'))
        .ok_or_else(|| GrpcError::MethodName {
            method: method.to_owned(),
        })?;
    let Some(found) = pool.get_service_by_name(service) else {
        let known = pool.services().map(|s| s.full_name().to_owned());
        return Err(GrpcError::NoService {
            service: service.to_owned(),
            known: listed(known),
        });
    };
    let Some(method) = found.methods().find(|m| m.name() == name) else {
        return Err(GrpcError::NoMethod {
            service: service.to_owned(),
            method: name.to_owned(),
            known: listed(found.methods().map(|m| m.name().to_owned())),
        });
    };
    let kind = match (method.is_client_streaming(), method.is_server_streaming()) {
        (false, false) => return Ok(method),
        (true, false) => "client streaming",
        (false, true) => "server streaming",
        (true, true) => "bidirectional streaming",
    };
    Err(GrpcError::Streaming {
        method: format!("{}/{}", found.full_name(), method.name()),
        kind,
    })
}

/// `a, b, c`, or `none`.
fn listed(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The template of `request`, a message of type `desc` as JSON with placeholders.
fn request_template(desc: &MessageDescriptor, request: &str) -> Result<Template, GrpcError> {
    let request = if request.trim().is_empty() {
        "{}"
    } else {
        request
    };
    let mut json: Json = serde_json::from_str(request).map_err(|e| GrpcError::Json {
        message_type: desc.full_name().to_owned(),
        problem: e.to_string(),
    })?;
    let holes = match walk::walk_value(&mut json, &Kind::Message(desc.clone()), "")? {
        Some(Hole::Message(holes)) => holes,
        _ => Holes::default(),
    };
    let message = DynamicMessage::deserialize(desc.clone(), json).map_err(|e| mismatch(desc, e))?;
    Template::new(&message, &holes)
}
