//! The protocols vernier speaks: one [`Protocol`] value that encodes a [`Request`] into the
//! caller's buffer and parses [`Reply`]s incrementally, so the agent is written once for all.
//!
//! The files stand in layers: [`vocab`] is what every protocol speaks and names none of
//! them; each protocol (the built-in ones here, [`crate::declared`], [`crate::grpc`])
//! builds on it alone; the registry and the serde form, here, list and read them all.

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
mod request;
mod simple;
mod synthetic;
#[cfg(test)]
mod testing;
pub(crate) mod vocab;
pub(crate) mod wire;

use std::fmt;
use std::str::FromStr;

pub use vocab::{
    EncodeError, Entry, MAX_VALUE_LEN, MappingForm, Matching, ParseError, Parsed, Protocol, Reply,
    ReplyKind, Request, Session, SessionContext, Speak, WorkloadKind,
};

use crate::spec::SpecError;

impl Protocol {
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

/// The registry's form for `mapping`: the one whose key it has (a gRPC method's `grpc`),
/// else the one every other mapping is (a declared protocol's).
fn mapping_form(mapping: &serde_json::Map<String, serde_json::Value>) -> Option<MappingForm> {
    let forms = || registry::PROTOCOLS.iter().filter_map(|e| e.mapping);
    forms()
        .find(|f| f.key.is_some_and(|key| mapping.contains_key(key)))
        .or_else(|| forms().find(|f| f.key.is_none()))
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
                let mapping = <serde_json::Map<String, serde_json::Value> as serde::Deserialize>::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                let form = mapping_form(&mapping).ok_or_else(|| {
                    serde::de::Error::custom("no protocol is written as a mapping")
                })?;
                (form.parse)(mapping).map_err(serde::de::Error::custom)
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

    /// A protocol whose connections are alike speaks through a session that forwards to
    /// its encode and parse, and says so without building one.
    #[test]
    fn a_stateless_protocol_s_session_is_its_encode_and_parse() {
        let knock: Protocol = "knock".parse().unwrap();
        assert!(!knock.keeps_state());
        let mut session = knock.session();
        assert!(session.ready() && !session.spent());
        let mut out = Vec::new();
        session.open(&mut out);
        assert!(out.is_empty(), "nothing to send first");
        session
            .encode(&Request::Get { key: b"door" }, 0, &mut out)
            .unwrap();
        assert_eq!(out, b"KNOCK door\n");
        let mut answer = Vec::new();
        assert_eq!(session.parse(b"ok", &mut answer), Ok(Parsed::Incomplete));
        assert_eq!(
            session.parse(b"ok\nno\n", &mut answer),
            Ok(Parsed::Reply(Reply::new(ReplyKind::Ok, 0), 3))
        );
        assert!(answer.is_empty(), "nothing answered");
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
