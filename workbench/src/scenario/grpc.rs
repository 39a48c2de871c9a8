//! `protocol: {grpc: ...}`: a gRPC method, from a `.proto` file (compiled by `proto.rs`) or a
//! descriptor set, with its request as JSON (or as YAML, written out as JSON). Paths are
//! relative to the scenario file. The agents get the compiled descriptors, not the files.

use std::path::PathBuf;

use serde::Deserialize;
use serde_yaml::Value;
use vernier_protocols::Protocol;
use vernier_protocols::grpc::{Grpc, TlsMapping};

use super::context::Context;
use super::error::ScenarioError;
use super::proto::{compile_proto, read_descriptor_set};

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
    /// TLS (HTTP/2 by ALPN): `{}` checks the server against the system's CAs; `ca:` names
    /// a PEM file of others, `server_name:` the name to check (the target's host when
    /// absent). h2c without it.
    tls: Option<TlsFile>,
}

/// `tls:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    ca: Option<PathBuf>,
    server_name: Option<String>,
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
    let descriptors = match (&file.proto, &file.descriptor_set) {
        (Some(proto), None) => {
            let includes: Vec<PathBuf> = file.includes.iter().map(|p| context.resolve(p)).collect();
            compile_proto(&context.resolve(proto), &includes)
                .map_err(|e| context.invalid(&format!("{field}.proto"), None, e.to_string()))?
        }
        (None, Some(set)) => read_descriptor_set(&context.resolve(set)).map_err(|e| {
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
    let tls = match file.tls {
        None => None,
        Some(tls) => Some(TlsMapping {
            ca_pem: match tls.ca {
                // The system's certificates, as the agent reads them (once a process) when it
                // connects: a system without any is said here, at once, not by every call.
                None if vernier_agent::system_roots().is_empty() => {
                    return Err(context.invalid(
                        &format!("{field}.tls"),
                        None,
                        "a CA certificate: this system has none; give one with ca:".to_owned(),
                    ));
                }
                None => None,
                Some(ca) => {
                    let path = context.resolve(&ca);
                    Some(std::fs::read_to_string(&path).map_err(|e| {
                        context.invalid(
                            &format!("{field}.tls.ca"),
                            Some(path.display().to_string()),
                            format!("a CA certificate file (PEM) to read: {e}"),
                        )
                    })?)
                }
            },
            server_name: tls.server_name,
        }),
    };
    Grpc::protocol(&descriptors, &file.method, &request, &authority, tls)
        .map_err(|e| context.invalid(field, None, e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::scenario::Scenario;

    fn proto() -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/grpc/bench.proto")
            .display()
            .to_string()
    }

    fn scenario(grpc: &str) -> Result<Scenario, String> {
        let yaml =
            format!("name: g\ntarget: 127.0.0.1:50051\nprotocol:\n  grpc: {grpc}\nload: 1000\n");
        Scenario::from_yaml(&yaml, Some(Path::new("g.yaml")), &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn a_grpc_method_is_compiled_and_travels_as_its_descriptors() {
        let s = scenario(&format!(
            "{{proto: {}, method: bench.Echo/Call, request: {{key: '{{key}}', seq: '{{seq}}'}}}}",
            proto()
        ))
        .unwrap();
        assert_eq!(s.protocol.name(), "grpc");
        // The agents' wire form: the descriptors, not the file, and the same protocol back.
        let wire = serde_json::to_value(&s.protocol).unwrap();
        assert!(
            wire["grpc"]["descriptors"].as_str().unwrap().len() > 100,
            "{wire}"
        );
        assert_eq!(wire["grpc"]["authority"], "127.0.0.1:50051");
        let back: vernier_protocols::Protocol = serde_json::from_value(wire).unwrap();
        assert_eq!(back, s.protocol);
    }

    #[test]
    fn tls_reads_its_ca_relative_to_the_scenario() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let error = scenario(&format!(
            "{{proto: {}, method: bench.Echo/Call, tls: {{ca: {}}}}}",
            proto(),
            missing.display()
        ))
        .unwrap_err();
        assert!(
            error.starts_with("g.yaml") && error.contains("protocol.grpc.tls.ca"),
            "{error}"
        );
        std::fs::write(&missing, "not a certificate").unwrap();
        let error = scenario(&format!(
            "{{proto: {}, method: bench.Echo/Call, tls: {{ca: {}}}}}",
            proto(),
            missing.display()
        ))
        .unwrap_err();
        assert!(error.contains("no certificate in the CA file"), "{error}");
    }

    #[test]
    fn a_grpc_mapping_says_what_it_lacks() {
        let both = scenario(&format!(
            "{{proto: {0}, descriptor_set: {0}, method: bench.Echo/Call}}",
            proto()
        ))
        .unwrap_err();
        assert!(both.contains("exactly one of proto"), "{both}");
        let unknown = scenario("{proto: x.proto, metod: bench.Echo/Call}").unwrap_err();
        assert!(unknown.contains("metod"), "{unknown}");
        let missing = scenario("{proto: nowhere.proto, method: bench.Echo/Call}").unwrap_err();
        assert!(missing.contains("nowhere.proto"), "{missing}");
    }
}
