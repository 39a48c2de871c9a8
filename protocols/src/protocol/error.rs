//! What can go wrong on the wire: a request that a protocol cannot express, a reply that
//! is not one.

use std::fmt;

/// The most bytes of a key or reply quoted in an error: enough to recognise, short enough
/// for a log line.
const QUOTED_BYTES: usize = 32;

/// Bytes as they appear in a message: escaped (`\r`, `\x00`), truncated with `…`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Quoted(String);

impl Quoted {
    fn new(bytes: &[u8]) -> Quoted {
        let shown = &bytes[..bytes.len().min(QUOTED_BYTES)];
        let ellipsis = if bytes.len() > QUOTED_BYTES {
            "…"
        } else {
            ""
        };
        Quoted(format!("\"{}\"{ellipsis}", shown.escape_ascii()))
    }
}

impl fmt::Display for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A reply that is not valid for its protocol. The message names the protocol, the
/// problem, and the offending bytes (escaped, the first 32), e.g.
/// `malformed redis reply: unknown reply type at "?OK\r\n"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {protocol} reply: {problem} at {bytes}")]
pub struct ParseError {
    protocol: &'static str,
    problem: String,
    bytes: Quoted,
}

impl ParseError {
    pub(crate) fn new(protocol: &'static str, problem: impl Into<String>, bytes: &[u8]) -> Self {
        ParseError {
            protocol,
            problem: problem.into(),
            bytes: Quoted::new(bytes),
        }
    }

    /// The protocol whose reply it was.
    pub fn protocol(&self) -> &'static str {
        self.protocol
    }

    /// What was wrong, without the bytes.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// A request that a protocol cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The protocol has no such request (a `set` over HTTP, a `get` to the synthetic server).
    #[error("{protocol} has no {request} request")]
    Unsupported {
        /// The protocol.
        protocol: &'static str,
        /// The request's name.
        request: &'static str,
    },
    /// The key breaks the protocol's rules for keys.
    #[error("{protocol} cannot send the key {key}: {problem}")]
    InvalidKey {
        /// The protocol.
        protocol: &'static str,
        /// The key, escaped and truncated.
        key: String,
        /// The rule it breaks.
        problem: &'static str,
    },
    /// The value is larger than vernier sends ([`MAX_VALUE_LEN`](crate::MAX_VALUE_LEN)).
    #[error("{protocol} cannot send a value of {len} bytes: the most is {max}")]
    ValueTooLarge {
        /// The protocol.
        protocol: &'static str,
        /// The value's size.
        len: usize,
        /// The largest size allowed.
        max: usize,
    },
    /// A declared protocol has no request of that index.
    #[error("{protocol} has no request {index}: it declares {count}")]
    NoSuchRequest {
        /// The protocol.
        protocol: &'static str,
        /// The index asked for.
        index: usize,
        /// How many requests it declares.
        count: usize,
    },
    /// A number is too large for the field a declared protocol's template writes it in,
    /// as a `{len:u8}` under a 300-byte request; rather than wrap, the request is refused.
    #[error("{protocol} cannot write {value} in {{{field}:{format}}}: it holds at most {max}")]
    FieldOverflow {
        /// The protocol.
        protocol: &'static str,
        /// The field: `len`, `key_len`.
        field: &'static str,
        /// Its format: `u8`, `u16be`, ...
        format: &'static str,
        /// The number that did not fit.
        value: u64,
        /// The largest the field holds.
        max: u64,
    },
    /// A connection has used up something it counts (HTTP/2's stream ids): it must be
    /// replaced.
    #[error("{protocol} has used up the connection's {what}")]
    Exhausted {
        /// The protocol.
        protocol: &'static str,
        /// What ran out.
        what: &'static str,
    },
    /// The request could not be written (a gRPC message whose field cannot hold the key).
    #[error("{protocol} cannot write the request: {problem}")]
    Invalid {
        /// The protocol.
        protocol: &'static str,
        /// Why.
        problem: String,
    },
}

impl EncodeError {
    pub(crate) fn unsupported(
        protocol: &'static str,
        request: &super::request::Request<'_>,
    ) -> Self {
        EncodeError::Unsupported {
            protocol,
            request: request.name(),
        }
    }

    pub(crate) fn invalid_key(protocol: &'static str, key: &[u8], problem: &'static str) -> Self {
        EncodeError::InvalidKey {
            protocol,
            key: Quoted::new(key).0,
            problem,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_escaped_and_truncated() {
        let error = ParseError::new("redis", "unknown reply type", b"?OK\r\n\x00");
        assert_eq!(
            error.to_string(),
            r#"malformed redis reply: unknown reply type at "?OK\r\n\x00""#
        );
        let long = [b'a'; 40];
        let error = ParseError::new("http", "bad", &long);
        assert_eq!(
            error.to_string(),
            format!("malformed http reply: bad at \"{}\"…", "a".repeat(32))
        );
        let error = EncodeError::invalid_key("memcached", b"a b", "no spaces");
        assert_eq!(
            error.to_string(),
            r#"memcached cannot send the key "a b": no spaces"#
        );
    }
}
