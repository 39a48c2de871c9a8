//! `protocol: {grpc: ...}`: a gRPC method, from a `.proto` file (compiled here) or a
//! descriptor set, with its request as JSON (or as YAML, written out as JSON). Paths are
//! relative to the scenario file. The agents get the compiled descriptors, not the files.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_yaml::Value;
use vernier_protocols::Protocol;
use vernier_protocols::grpc::{Grpc, compile_proto, read_descriptor_set};

use super::context::Context;
use super::error::ScenarioError;

/// The field a gRPC protocol's mapping is under.
pub(super) const KEY: &str = "grpc";

/// `protocol: {grpc: {...}}` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrpcFile {
    /// The `.proto` file that declares the method.
    proto: Option<PathBuf>,
    /// Or an encoded `FileDescriptorSet` (`protoc --include_imports -o FILE`).
    descriptor_set: Option<PathBuf>,
    /// Directories the `.proto`'s imports are found in (its own is always one).
    #[serde(default)]
    includes: Vec<PathBuf>,
    /// `package.Service/Method`.
    method: String,
    /// The request message: JSON text, or YAML written out as JSON. `{}` when absent.
    request: Option<Value>,
    /// The `:authority` of every call; the target's `host:port` when absent.
    authority: Option<String>,
}

/// What `protocol: {grpc: ...}` shows as an example.
pub(crate) const EXAMPLE: &str = "protocol: {grpc: {proto: bench.proto, method: bench.Echo/Call, \
     request: '{\"key\": \"{key}\"}'}}";

/// The gRPC protocol `value` (the mapping under `grpc:`) declares, calling `target`.
pub(super) fn protocol(
    context: &Context<'_>,
    value: Value,
    target: &str,
) -> Result<Protocol, ScenarioError> {
    let field = "protocol.grpc";
    let file: GrpcFile = serde_yaml::from_value(value).map_err(|e| {
        context.invalid(
            field,
            None,
            format!("a gRPC method's mapping: {e}; as in {EXAMPLE}"),
        )
    })?;
    let relative = |path: &Path| match context.source.and_then(|s| s.parent()) {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    };
    let descriptors = match (&file.proto, &file.descriptor_set) {
        (Some(proto), None) => {
            let includes: Vec<PathBuf> = file.includes.iter().map(|p| relative(p)).collect();
            compile_proto(&relative(proto), &includes)
                .map_err(|e| context.invalid(&format!("{field}.proto"), None, e.to_string()))?
        }
        (None, Some(set)) => read_descriptor_set(&relative(set)).map_err(|e| {
            context.invalid(&format!("{field}.descriptor_set"), None, e.to_string())
        })?,
        _ => {
            return Err(context.invalid(
                field,
                None,
                "exactly one of proto (a .proto file) or descriptor_set (protoc \
                 --include_imports -o FILE), relative to the scenario",
            ));
        }
    };
    let request = match file.request {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(json)) => json,
        Some(yaml) => serde_json::to_string(&yaml).map_err(|e| {
            context.invalid(
                &format!("{field}.request"),
                None,
                format!("a request message that JSON can hold: {e}"),
            )
        })?,
    };
    let authority = file.authority.unwrap_or_else(|| target.to_owned());
    Grpc::protocol(&descriptors, &file.method, &request, &authority)
        .map_err(|e| context.invalid(field, None, e.to_string()))
}
