//! memcached's text protocol (`protocol.txt` in memcached's sources): `get` and `set`.

use super::simple::{Simple, bare};
use super::vocab::{EncodeError, Reply, ReplyKind, Request};
use super::vocab::{Entry, Protocol, WorkloadKind};
use super::wire::{
    MEMCACHED_MAX_KEY, Reader, Step, check_key, check_value_len, decimal, push_decimal, push_filler,
};

const NAME: &str = "memcached";

pub(super) static ENTRY: Entry = Entry {
    name: NAME,
    scheme: NAME,
    forms: &[NAME],
    url_spec: NAME,
    example_port: 11211,
    workload: WorkloadKind::KeyValue,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "memcached's text protocol: get, set",
    build: |params| bare(NAME, params, Protocol::memcached),
};

impl Protocol {
    /// memcached's text protocol: `get`, `set`.
    pub fn memcached() -> Protocol {
        Protocol::new(Simple {
            entry: &ENTRY,
            encode,
            parse,
        })
    }
}

/// `get KEY\r\n`, or `set KEY 0 0 LEN\r\nVALUE\r\n` (flags 0, no expiry).
fn encode(request: &Request<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match *request {
        Request::Get { key } => {
            check(key)?;
            out.extend_from_slice(b"get ");
            out.extend_from_slice(key);
            out.extend_from_slice(b"\r\n");
        }
        Request::Set { key, value_len } => {
            check(key)?;
            check_value_len(NAME, value_len)?;
            out.extend_from_slice(b"set ");
            out.extend_from_slice(key);
            out.extend_from_slice(b" 0 0 ");
            push_decimal(out, value_len as u64);
            out.extend_from_slice(b"\r\n");
            push_filler(out, value_len);
            out.extend_from_slice(b"\r\n");
        }
        Request::Spin { .. } | Request::Template { .. } => {
            return Err(EncodeError::unsupported(NAME, request));
        }
    }
    Ok(())
}

/// A text key is 1 to 250 bytes with no control characters or spaces, which would end it.
fn check(key: &[u8]) -> Result<(), EncodeError> {
    if key.is_empty() {
        return Err(EncodeError::invalid_key(NAME, key, "a key cannot be empty"));
    }
    check_key(
        NAME,
        key,
        MEMCACHED_MAX_KEY,
        |b| b > b' ' && b != 0x7f,
        "a text key cannot hold spaces or control characters",
    )
}

/// One reply: `VALUE KEY FLAGS BYTES [CAS]\r\nDATA\r\n`… `END\r\n` (a hit; a miss is `END`
/// alone), `STORED`, `NOT_STORED`, `ERROR`, `CLIENT_ERROR …`, `SERVER_ERROR …`.
fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new(NAME, buf);
    let line = reader.line()?;
    let kind = match line {
        b"END" => ReplyKind::Miss,
        b"STORED" => ReplyKind::Stored,
        b"NOT_STORED" => ReplyKind::NotStored,
        b"ERROR" => ReplyKind::Error,
        _ if line.starts_with(b"CLIENT_ERROR ") || line.starts_with(b"SERVER_ERROR ") => {
            ReplyKind::Error
        }
        _ if line.starts_with(b"VALUE ") => {
            let value_len = values(&mut reader, line)?;
            return Ok((Reply::new(ReplyKind::Hit, value_len), reader.consumed()));
        }
        _ => return Err(reader.malformed("not a reply line", 0)),
    };
    Ok((Reply::new(kind, 0), reader.consumed()))
}

/// The `VALUE` blocks of a hit, from the already-read `line` (the reply's first) to `END`
/// inclusive; returns their total data length. One `get` has one block; a multi-key get,
/// which vernier does not send, would have several.
fn values<'a>(reader: &mut Reader<'a>, mut line: &'a [u8]) -> Step<usize> {
    let mut total: usize = 0;
    let mut line_at = 0;
    loop {
        let len = value_line(line)
            .ok_or_else(|| reader.malformed("a VALUE line needs KEY FLAGS BYTES [CAS]", line_at))?;
        let len = reader.value_len(len, line_at)?;
        reader.take(len)?;
        reader.expect(
            b"\r\n",
            "the data block does not end where its VALUE line says",
        )?;
        total = total.saturating_add(len);

        line_at = reader.consumed();
        line = reader.line()?;
        if line == b"END" {
            return Ok(total);
        }
        if !line.starts_with(b"VALUE ") {
            return Err(reader.malformed("expected END or VALUE after a data block", line_at));
        }
    }
}

/// The data length a `VALUE <key> <flags> <bytes> [<cas unique>]` line announces, if it is
/// one.
fn value_line(line: &[u8]) -> Option<u64> {
    let mut fields = line.split(|&b| b == b' ');
    let (Some(b"VALUE"), Some(key), Some(flags), Some(bytes)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return None;
    };
    let cas = fields.next();
    let valid = !key.is_empty()
        && decimal(flags).is_some()
        && cas.is_none_or(|cas| decimal(cas).is_some())
        && fields.next().is_none();
    decimal(bytes).filter(|_| valid)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_coalesced, assert_incremental, assert_malformed, encoded};
    use super::super::{EncodeError, Protocol, Reply, ReplyKind, Request};
    use std::sync::LazyLock;

    static P: LazyLock<Protocol> = LazyLock::new(Protocol::memcached);

    #[test]
    fn request_goldens() {
        assert_eq!(
            encoded(&P, &Request::Get { key: b"user:42" }),
            b"get user:42\r\n"
        );
        assert_eq!(
            encoded(
                &P,
                &Request::Set {
                    key: b"k",
                    value_len: 3
                }
            ),
            b"set k 0 0 3\r\nxxx\r\n"
        );
        assert_eq!(
            encoded(
                &P,
                &Request::Set {
                    key: b"k",
                    value_len: 0
                }
            ),
            b"set k 0 0 0\r\n\r\n"
        );
    }

    #[test]
    fn keys_that_would_break_the_line_are_refused() {
        let encode = |key: &[u8]| P.encode(&Request::Get { key }, 0, &mut Vec::new());
        for key in [&b""[..], b"a b", b"a\r\nset", b"tab\there", b"\x7f"] {
            assert!(
                matches!(encode(key), Err(EncodeError::InvalidKey { .. })),
                "{:?}",
                key.escape_ascii().to_string()
            );
        }
        assert!(encode(&[b'k'; 250]).is_ok());
        assert!(matches!(
            encode(&[b'k'; 251]),
            Err(EncodeError::InvalidKey { .. })
        ));
        assert!(encode("clé".as_bytes()).is_ok());
        assert!(matches!(
            P.encode(&Request::Spin { service_ns: 1 }, 0, &mut Vec::new()),
            Err(EncodeError::Unsupported { .. })
        ));
    }

    fn reply(kind: ReplyKind, value_len: usize) -> Reply {
        Reply::new(kind, value_len)
    }

    #[test]
    fn every_reply_at_every_split_point() {
        let cases: [(&[u8], Reply); 9] = [
            (b"VALUE k 0 5\r\nhello\r\nEND\r\n", reply(ReplyKind::Hit, 5)),
            (b"VALUE k 7 0\r\n\r\nEND\r\n", reply(ReplyKind::Hit, 0)),
            // With a CAS unique (the answer to `gets`); data holding CRLF and "END".
            (
                b"VALUE k 0 6 99\r\nEND\r\nx\r\nEND\r\n",
                reply(ReplyKind::Hit, 6),
            ),
            // Several blocks, as a multi-key get would get.
            (
                b"VALUE a 0 1\r\n1\r\nVALUE b 0 2\r\n22\r\nEND\r\n",
                reply(ReplyKind::Hit, 3),
            ),
            (b"END\r\n", reply(ReplyKind::Miss, 0)),
            (b"STORED\r\n", reply(ReplyKind::Stored, 0)),
            (b"NOT_STORED\r\n", reply(ReplyKind::NotStored, 0)),
            (b"ERROR\r\n", reply(ReplyKind::Error, 0)),
            (
                b"SERVER_ERROR out of memory storing object\r\n",
                reply(ReplyKind::Error, 0),
            ),
        ];
        for (bytes, expected) in cases {
            assert_incremental(&P, bytes, expected);
        }
        assert_incremental(
            &P,
            b"CLIENT_ERROR bad data chunk\r\n",
            reply(ReplyKind::Error, 0),
        );
    }

    #[test]
    fn coalesced_replies() {
        assert_coalesced(
            &P,
            &[
                (b"STORED\r\n", reply(ReplyKind::Stored, 0)),
                (b"VALUE k 0 3\r\nabc\r\nEND\r\n", reply(ReplyKind::Hit, 3)),
                (b"END\r\n", reply(ReplyKind::Miss, 0)),
                (b"VALUE k 0 3\r\nEND\r\nEND\r\n", reply(ReplyKind::Hit, 3)),
                (b"ERROR\r\n", reply(ReplyKind::Error, 0)),
            ],
        );
    }

    #[test]
    fn malformed_replies() {
        let cases: [(&[u8], &str); 13] = [
            (b"HELLO\r\n", "not a reply line"),
            (b"end\r\n", "not a reply line"),
            (b"END\n", "bare LF"),
            (b"STORED \r\n", "not a reply line"),
            (b"VALUE k 0\r\n", "KEY FLAGS BYTES"),
            (b"VALUE k 0 x\r\n", "KEY FLAGS BYTES"),
            (b"VALUE k 0 -1\r\n", "KEY FLAGS BYTES"),
            (b"VALUE  0 1\r\n", "KEY FLAGS BYTES"),
            (b"VALUE k 0 1 2 3\r\n", "KEY FLAGS BYTES"),
            (b"VALUE k 0 99999999999999999999\r\n", "KEY FLAGS BYTES"),
            (b"VALUE k 0 999999999999\r\n", "over the"),
            (b"VALUE k 0 1\r\nab\r\nEND\r\n", "does not end where"),
            (b"VALUE k 0 1\r\na\r\nSTORED\r\n", "expected END or VALUE"),
        ];
        for (bytes, problem) in cases {
            assert_malformed(&P, bytes, problem);
        }
        let long = [b'E'; 9000];
        assert_malformed(&P, &long, "no CRLF within");
    }

    #[test]
    fn errors_quote_the_offending_line() {
        let error = P.parse(b"END\r\nVALUE k 0 1\r\na\r\nOOPS\r\n");
        assert!(matches!(error, Ok(Some(_))));
        let error = P.parse(b"VALUE k 0 1\r\na\r\nOOPS\r\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"malformed memcached reply: expected END or VALUE after a data block at "OOPS\r\n""#
        );
    }
}
