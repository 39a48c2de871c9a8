//! `protocol:` and what it carries: a built-in protocol's spec (`memcached`, `echo:64`) or
//! a declared protocol's mapping, and the workload its kind of request takes (a service
//! time, a key-value workload, keys only, or nothing). Every check asks the protocol's
//! registry entry, never a protocol's name.

use serde_yaml::Value;
use vernier_agent::Workload;
use vernier_protocols::{
    Declaration, Dist, KvWorkload, Protocol, Request, SizeDist, SpecError, WorkloadError,
    WorkloadKind,
};

use super::context::Context;
use super::defaults;
use super::error::ScenarioError;
use super::file::WorkloadFile;

/// `protocol:`, a spec or a declared protocol's mapping.
pub(super) fn protocol(
    context: &Context<'_>,
    value: Option<Value>,
    target: &str,
) -> Result<Protocol, ScenarioError> {
    let value = value.ok_or_else(|| {
        context.missing(
            "protocol",
            &format!("what the server speaks: {}", Protocol::forms()),
        )
    })?;
    match value {
        Value::String(spec) => spec
            .parse()
            .map_err(|e: SpecError| context.bad("protocol", &spec, e.expected())),
        Value::Mapping(mut mapping) if mapping.contains_key(super::grpc::KEY) => {
            let grpc = mapping.remove(super::grpc::KEY).unwrap_or_default();
            if let Some((other, _)) = mapping.iter().next() {
                return Err(context.bad(
                    "protocol",
                    super::value::show(other),
                    format!("expected grpc alone, as in {}", super::grpc::EXAMPLE),
                ));
            }
            super::grpc::protocol(context, grpc, target)
        }
        Value::Mapping(_) => {
            let declaration: Declaration = serde_yaml::from_value(value).map_err(|e| {
                context.invalid(
                    "protocol",
                    None,
                    format!("a declared protocol's mapping: {e}"),
                )
            })?;
            Protocol::declare(declaration)
                .map_err(|e| context.invalid("protocol", None, e.to_string()))
        }
        other => Err(context.bad(
            "protocol",
            super::value::show(&other),
            format!(
                "expected {} (a mapping for a declared protocol)",
                Protocol::forms()
            ),
        )),
    }
}

/// The workload the protocol carries, by its registry entry's kind: a service time for
/// synthetic, a key-value workload for memcached, Redis and HTTP (or, for a protocol with
/// a default path, the one path every request asks for), keys for a declared protocol,
/// nothing for echo; and whether it is the default one ([`defaults::KEY_VALUE`],
/// the registry entry's default path, HTTP's `/` as wrk and oha ask for a URL without one), taken when the scenario names none. A field the protocol
/// would ignore is an error, since whoever wrote it expected it to matter.
pub(super) fn workload(
    context: &Context<'_>,
    protocol: &Protocol,
    service: Option<String>,
    kv: Option<WorkloadFile>,
    path: Option<String>,
) -> Result<(Workload, bool), ScenarioError> {
    let kind = protocol.workload();
    let default_path = protocol.entry().default_path;
    if let Some(service) = service.as_ref().filter(|_| kind != WorkloadKind::Service) {
        return Err(context.bad(
            "service",
            service,
            format!(
                "expected no service time: only the synthetic protocol carries one; a {} \
                 server's is its own",
                protocol.name()
            ),
        ));
    }
    if let Some(path) = path.as_ref().filter(|_| default_path.is_none()) {
        return Err(context.bad(
            "path",
            path,
            format!(
                "expected no path: only http asks for one, not {}",
                protocol.name()
            ),
        ));
    }
    let refuse_kv = |uses: &str| {
        context.invalid(
            "workload",
            None,
            format!(
                "expected no key-value workload: only memcached, redis, http, declared \
                 protocols and grpc take one; {} {uses}",
                protocol.name()
            ),
        )
    };
    match kind {
        WorkloadKind::Service => {
            if kv.is_some() {
                return Err(refuse_kv("takes service, as in service: exp:20us"));
            }
            let service = service.ok_or_else(|| {
                context.missing(
                    "service",
                    "the synthetic server's service-time distribution, as in service: exp:20us",
                )
            })?;
            let dist: Dist = service
                .parse()
                .map_err(|e: SpecError| context.bad("service", &service, e.expected()))?;
            let workload = Workload::Synthetic {
                service: dist,
                probe: 0.0,
            };
            Ok((workload, false))
        }
        WorkloadKind::Fixed => match kv {
            Some(_) => Err(refuse_kv("sends fixed-size requests")),
            None => Ok((Workload::Echo, false)),
        },
        WorkloadKind::Keys => {
            let (kv, default) = match kv {
                Some(file) => (keys_only(context, file)?, false),
                None => (defaults::key_value(), true),
            };
            checked(context, &kv)?;
            Ok((Workload::KeyValue(kv), default))
        }
        WorkloadKind::KeyValue => {
            let (kv, default) = match (kv, path) {
                (Some(_), Some(path)) => {
                    return Err(context.bad(
                        "path",
                        path,
                        "expected no path with workload: a path is the one request target, \
                         where workload: draws keys; keep one of them",
                    ));
                }
                (Some(file), None) => (key_value(context, file)?, false),
                (None, Some(path)) => (http_path(context, protocol, &path)?, false),
                (None, None) => match default_path {
                    Some(path) => (http_path(context, protocol, path)?, true),
                    None => (defaults::key_value(), true),
                },
            };
            checked(context, &kv)?;
            Ok((Workload::KeyValue(kv), default))
        }
    }
}

/// A key-value protocol's `workload:`, every field but `key_dist` required.
fn key_value(context: &Context<'_>, file: WorkloadFile) -> Result<KvWorkload, ScenarioError> {
    let example = defaults::KEY_VALUE;
    Ok(KvWorkload {
        keys: required(context, file.keys, "keys", example)?,
        key_size: required(context, file.key_size, "key_size", example)?,
        value_size: required(context, file.value_size, "value_size", example)?,
        read_ratio: required(context, file.read_ratio, "read_ratio", example)?,
        key_dist: file.key_dist.unwrap_or_default(),
        key: None,
    })
}

/// A declared protocol's `workload:`: keys, key_size and key_dist, as a key-value
/// workload whose values and read ratio nothing reads. A value size or read ratio is an
/// error: the protocol's requests say their own sizes and mix.
fn keys_only(context: &Context<'_>, file: WorkloadFile) -> Result<KvWorkload, ScenarioError> {
    let refuse = |field: &str, value: String| {
        context.bad(
            &format!("workload.{field}"),
            value,
            "expected no value_size or read_ratio: a declared protocol's requests say their \
             own sizes and mix (requests: [{ratio: ..., text: ...}])",
        )
    };
    if let Some(size) = file.value_size {
        return Err(refuse("value_size", size.to_string()));
    }
    if let Some(ratio) = file.read_ratio {
        return Err(refuse("read_ratio", ratio.to_string()));
    }
    Ok(KvWorkload {
        keys: required(context, file.keys, "keys", defaults::KEYS)?,
        key_size: required(context, file.key_size, "key_size", defaults::KEYS)?,
        value_size: SizeDist::fixed(0),
        read_ratio: 1.0,
        key_dist: file.key_dist.unwrap_or_default(),
        key: None,
    })
}

/// `value`, or the error that `workload.FIELD` is missing, with a whole workload as the
/// example.
fn required<T>(
    context: &Context<'_>,
    value: Option<T>,
    field: &str,
    example: &str,
) -> Result<T, ScenarioError> {
    value.ok_or_else(|| {
        context.missing(
            &format!("workload.{field}"),
            &format!("a value, as in workload: {example}"),
        )
    })
}

/// `kv` checked, its error naming the field at fault.
fn checked(context: &Context<'_>, kv: &KvWorkload) -> Result<(), ScenarioError> {
    kv.validate().map_err(|e| {
        let (field, value) = match &e {
            WorkloadError::Keys(keys) => ("workload.keys", keys.to_string()),
            WorkloadError::ReadRatio(ratio) => ("workload.read_ratio", ratio.to_string()),
            WorkloadError::ZipfTheta(theta) => ("workload.key_dist", format!("zipf:{theta}")),
            _ => ("workload", format!("{kv:?}")),
        };
        let message = e.to_string();
        let expected = message
            .split_once(": ")
            .map_or(message.as_str(), |(_, e)| e);
        context.bad(field, value, expected)
    })
}

/// `path:`, HTTP's one request target, as the workload of its one key (the path without
/// its leading `/`), which the protocol must be able to send.
fn http_path(
    context: &Context<'_>,
    protocol: &Protocol,
    path: &str,
) -> Result<KvWorkload, ScenarioError> {
    let key = path.strip_prefix('/').ok_or_else(|| {
        context.bad(
            "path",
            path,
            "expected a request target starting with /, as in /index.html",
        )
    })?;
    protocol
        .encode(
            &Request::Get {
                key: key.as_bytes(),
            },
            0,
            &mut Vec::new(),
        )
        .map_err(|e| context.bad("path", path, format!("expected a path http can send: {e}")))?;
    Ok(defaults::http_path(key))
}
