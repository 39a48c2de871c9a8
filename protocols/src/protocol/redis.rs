//! Redis's RESP2 (the "Redis serialization protocol" specification): `GET` and `SET` sent as
//! arrays of bulk strings, the form every Redis client uses.

use super::simple::{Simple, bare};
use super::vocab::{EncodeError, Reply, ReplyKind, Request};
use super::vocab::{Entry, Protocol, WorkloadKind};
use super::wire::{Reader, Step, check_value_len, push_decimal, push_filler, signed_decimal};

const NAME: &str = "redis";

pub(super) static ENTRY: Entry = Entry {
    name: NAME,
    scheme: NAME,
    forms: &[NAME],
    url_spec: NAME,
    example_port: 6379,
    workload: WorkloadKind::KeyValue,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "Redis's RESP2: GET, SET",
    build: |params| bare(NAME, params, Protocol::redis),
};

impl Protocol {
    /// Redis's RESP2: `GET`, `SET`.
    pub fn redis() -> Protocol {
        Protocol::new(Simple {
            entry: &ENTRY,
            encode,
            parse,
        })
    }
}

/// `*2 GET key` or `*3 SET key value`, each element a bulk string. Keys are binary-safe.
fn encode(request: &Request<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match *request {
        Request::Get { key } => {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
            push_bulk(out, key);
        }
        Request::Set { key, value_len } => {
            check_value_len(NAME, value_len)?;
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
            push_bulk(out, key);
            push_bulk_len(out, value_len);
            push_filler(out, value_len);
            out.extend_from_slice(b"\r\n");
        }
        Request::Spin { .. } | Request::Template { .. } => {
            return Err(EncodeError::unsupported(NAME, request));
        }
    }
    Ok(())
}

fn push_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    push_bulk_len(out, bytes.len());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

fn push_bulk_len(out: &mut Vec<u8>, len: usize) {
    out.push(b'$');
    push_decimal(out, len as u64);
    out.extend_from_slice(b"\r\n");
}

/// One reply: `+simple`, `-error`, `:integer` (possibly negative), `$len` bulk string or
/// `$-1` null bulk (a miss). Arrays answer neither GET nor SET and are refused.
fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new(NAME, buf);
    let line = reader.line()?;
    let Some((&tag, rest)) = line.split_first() else {
        return Err(reader.malformed("an empty line", 0));
    };
    let reply = match tag {
        b'+' => Reply::new(ReplyKind::Ok, 0),
        b'-' => Reply::new(ReplyKind::Error, 0),
        b':' => match signed_decimal(rest) {
            Some(_) => Reply::new(ReplyKind::Ok, 0),
            None => return Err(reader.malformed("an integer reply that is not one", 0)),
        },
        b'$' => match signed_decimal(rest) {
            Some(-1) => Reply::new(ReplyKind::Miss, 0),
            Some(len) => {
                let len = u64::try_from(len)
                    .map_err(|_| reader.malformed("a negative bulk length other than -1", 0))?;
                let len = reader.value_len(len, 0)?;
                reader.take(len)?;
                reader.expect(
                    b"\r\n",
                    "the bulk string does not end where its length says",
                )?;
                Reply::new(ReplyKind::Hit, len)
            }
            None => return Err(reader.malformed("a bulk length that is not a number", 0)),
        },
        b'*' => return Err(reader.malformed("an array, which answers neither GET nor SET", 0)),
        _ => return Err(reader.malformed("an unknown reply type", 0)),
    };
    Ok((reply, reader.consumed()))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_coalesced, assert_incremental, assert_malformed, encoded};
    use super::super::{EncodeError, Protocol, Reply, ReplyKind, Request};
    use std::sync::LazyLock;

    static P: LazyLock<Protocol> = LazyLock::new(Protocol::redis);

    #[test]
    fn request_goldens() {
        assert_eq!(
            encoded(&P, &Request::Get { key: b"user:42" }),
            b"*2\r\n$3\r\nGET\r\n$7\r\nuser:42\r\n"
        );
        assert_eq!(
            encoded(
                &P,
                &Request::Set {
                    key: b"a b\r\n",
                    value_len: 3
                }
            ),
            b"*3\r\n$3\r\nSET\r\n$5\r\na b\r\n\r\n$3\r\nxxx\r\n"
        );
        assert_eq!(
            encoded(&P, &Request::Get { key: b"" }),
            b"*2\r\n$3\r\nGET\r\n$0\r\n\r\n"
        );
        assert!(matches!(
            P.encode(
                &Request::Set {
                    key: b"k",
                    value_len: crate::MAX_VALUE_LEN + 1
                },
                0,
                &mut Vec::new()
            ),
            Err(EncodeError::ValueTooLarge { .. })
        ));
    }

    #[test]
    fn every_reply_at_every_split_point() {
        let cases: [(&[u8], Reply); 9] = [
            (b"$5\r\nhello\r\n", Reply::new(ReplyKind::Hit, 5)),
            (b"$0\r\n\r\n", Reply::new(ReplyKind::Hit, 0)),
            // Binary-safe: the value holds CRLF.
            (b"$4\r\n\r\n\r\n\r\n", Reply::new(ReplyKind::Hit, 4)),
            (b"$-1\r\n", Reply::new(ReplyKind::Miss, 0)),
            (b"+OK\r\n", Reply::new(ReplyKind::Ok, 0)),
            (
                b"-ERR unknown command 'FOO'\r\n",
                Reply::new(ReplyKind::Error, 0),
            ),
            (b":0\r\n", Reply::new(ReplyKind::Ok, 0)),
            (b":-42\r\n", Reply::new(ReplyKind::Ok, 0)),
            (b":-9223372036854775808\r\n", Reply::new(ReplyKind::Ok, 0)),
        ];
        for (bytes, expected) in cases {
            assert_incremental(&P, bytes, expected);
        }
    }

    #[test]
    fn coalesced_replies() {
        assert_coalesced(
            &P,
            &[
                (b"+OK\r\n", Reply::new(ReplyKind::Ok, 0)),
                (b"$3\r\n$-1\r\n", Reply::new(ReplyKind::Hit, 3)),
                (b"$-1\r\n", Reply::new(ReplyKind::Miss, 0)),
                (b":-1\r\n", Reply::new(ReplyKind::Ok, 0)),
                (b"-WRONGTYPE\r\n", Reply::new(ReplyKind::Error, 0)),
            ],
        );
    }

    #[test]
    fn malformed_replies() {
        let cases: [(&[u8], &str); 12] = [
            (b"\r\n", "an empty line"),
            (b"?OK\r\n", "an unknown reply type"),
            (b"*1\r\n$1\r\na\r\n", "an array"),
            (b":\r\n", "an integer reply"),
            (b":-\r\n", "an integer reply"),
            (b":12a\r\n", "an integer reply"),
            (b":9223372036854775808\r\n", "an integer reply"),
            (b"$-2\r\n", "a negative bulk length"),
            (b"$x\r\n", "a bulk length"),
            (b"$3\r\nabcd\r\n", "does not end where"),
            (b"$9999999999\r\n", "over the"),
            (b"+OK\n", "bare LF"),
        ];
        for (bytes, problem) in cases {
            assert_malformed(&P, bytes, problem);
        }
    }
}
