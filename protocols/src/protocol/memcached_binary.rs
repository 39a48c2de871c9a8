//! memcached's binary protocol (the "Binary Protocol Revamped" document): GET, GETK, SET,
//! each carrying an opaque that the reply echoes, so a reply can be matched to its request
//! however the server orders them.

use super::vocab::{EncodeError, Reply, ReplyKind, Request};
use super::vocab::{Entry, ParseError, Protocol, Speak, WorkloadKind};
use super::wire::finish;
use super::wire::{MEMCACHED_MAX_KEY, Reader, Step, check_key, check_value_len, push_filler};

const NAME: &str = "memcached-binary";

pub(super) static ENTRY: Entry = Entry {
    name: NAME,
    scheme: NAME,
    forms: &[NAME, "memcached-binary:getk"],
    url_spec: NAME,
    example_port: 11211,
    workload: WorkloadKind::KeyValue,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "memcached's binary protocol: GET (or GETK), SET, each with an opaque",
    build: |params| match params {
        None => Ok(Protocol::memcached_binary(false)),
        Some("getk") => Ok(Protocol::memcached_binary(true)),
        Some(_) => Err(format!("expected {NAME} or {NAME}:getk")),
    },
};

/// memcached's binary protocol.
#[derive(Debug)]
struct MemcachedBinary {
    /// Send GETK rather than GET: the reply then carries the key too (more bytes back,
    /// as some clients do).
    getk: bool,
}

impl Protocol {
    /// memcached's binary protocol: GET, or GETK when `getk`, and SET, each carrying the
    /// caller's opaque.
    pub fn memcached_binary(getk: bool) -> Protocol {
        Protocol::new(MemcachedBinary { getk })
    }
}

impl Speak for MemcachedBinary {
    fn entry(&self) -> &'static Entry {
        &ENTRY
    }

    fn spec(&self) -> String {
        if self.getk {
            format!("{NAME}:getk")
        } else {
            NAME.to_owned()
        }
    }

    fn encode(
        &self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        encode(request, self.getk, opaque, out)
    }

    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        finish(parse(buf))
    }
}

const REQUEST_MAGIC: u8 = 0x80;
const RESPONSE_MAGIC: u8 = 0x81;
const HEADER_LEN: usize = 24;

const OP_GET: u8 = 0x00;
const OP_SET: u8 = 0x01;
const OP_GETK: u8 = 0x0c;

/// SET's extras: 4 bytes of flags, 4 of expiry, both zero here.
const SET_EXTRAS: [u8; 8] = [0; 8];

const STATUS_OK: u16 = 0x0000;
const STATUS_KEY_NOT_FOUND: u16 = 0x0001;
const STATUS_KEY_EXISTS: u16 = 0x0002;
const STATUS_NOT_STORED: u16 = 0x0005;

fn encode(
    request: &Request<'_>,
    getk: bool,
    opaque: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match *request {
        Request::Get { key } => {
            check(key)?;
            let opcode = if getk { OP_GETK } else { OP_GET };
            push_header(out, opcode, key, 0, 0, opaque);
            out.extend_from_slice(key);
        }
        Request::Set { key, value_len } => {
            check(key)?;
            check_value_len(NAME, value_len)?;
            push_header(out, OP_SET, key, SET_EXTRAS.len(), value_len, opaque);
            out.extend_from_slice(&SET_EXTRAS);
            out.extend_from_slice(key);
            push_filler(out, value_len);
        }
        Request::Spin { .. } | Request::Template { .. } => {
            return Err(EncodeError::unsupported(NAME, request));
        }
    }
    Ok(())
}

/// A binary key may hold any byte, but memcached still wants 1 to 250 of them.
fn check(key: &[u8]) -> Result<(), EncodeError> {
    if key.is_empty() {
        return Err(EncodeError::invalid_key(NAME, key, "a key cannot be empty"));
    }
    check_key(NAME, key, MEMCACHED_MAX_KEY, |_| true, "")
}

/// The 24-byte request header. The lengths fit: the key is at most 250 bytes and the value
/// at most `MAX_VALUE_LEN` (512 MiB), so the body is under `u32::MAX`.
fn push_header(
    out: &mut Vec<u8>,
    opcode: u8,
    key: &[u8],
    extras_len: usize,
    value_len: usize,
    opaque: u32,
) {
    let body_len = (extras_len + key.len() + value_len) as u32;
    out.extend_from_slice(&[REQUEST_MAGIC, opcode]);
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.extend_from_slice(&[extras_len as u8, 0, 0, 0]); // extras, data type, vbucket
    out.extend_from_slice(&body_len.to_be_bytes());
    out.extend_from_slice(&opaque.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // CAS
}

/// One response: the 24-byte header, then extras, key and value as its lengths say.
fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new(NAME, buf);
    // The magic is checked as soon as it arrives, so a stream that is not binary memcached
    // (a text reply, say) is an error at once rather than a wait for 24 bytes.
    if buf.first().is_some_and(|&magic| magic != RESPONSE_MAGIC) {
        return Err(reader.malformed("not a response (magic byte 0x81)", 0));
    }
    // magic, opcode, key length (2), extras length, data type, status (2), body length (4),
    // opaque (4), CAS (8); big-endian.
    let h = reader.take(HEADER_LEN)?;
    let opcode = h[1];
    let key_len = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let extras_len = usize::from(h[4]);
    let status = u16::from_be_bytes([h[6], h[7]]);
    let body_len = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
    let opaque = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);

    if !matches!(opcode, OP_GET | OP_GETK | OP_SET) {
        return Err(reader.malformed(
            format!("a response to opcode {opcode:#04x}, which vernier does not send"),
            0,
        ));
    }
    let body_len = reader.value_len(u64::from(body_len), 0)?;
    let Some(value_len) = body_len.checked_sub(extras_len + key_len) else {
        return Err(reader.malformed("extras and key are longer than the body", 0));
    };
    reader.take(body_len)?;

    let kind = match (status, opcode) {
        (STATUS_OK, OP_SET) => ReplyKind::Stored,
        (STATUS_OK, _) => ReplyKind::Hit,
        (STATUS_KEY_NOT_FOUND, _) => ReplyKind::Miss,
        (STATUS_KEY_EXISTS | STATUS_NOT_STORED, _) => ReplyKind::NotStored,
        _ => ReplyKind::Error,
    };
    // The body of an error is a message, not a value.
    let value_len = if kind == ReplyKind::Hit { value_len } else { 0 };
    let reply = Reply {
        opaque: Some(opaque),
        status: Some(status),
        ..Reply::new(kind, value_len)
    };
    Ok((reply, reader.consumed()))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{
        assert_coalesced, assert_incremental, assert_malformed, encoded_with_opaque,
    };
    use super::super::{EncodeError, Protocol, Reply, ReplyKind, Request};
    use std::sync::LazyLock;

    static GET: LazyLock<Protocol> = LazyLock::new(|| Protocol::memcached_binary(false));
    static GETK: LazyLock<Protocol> = LazyLock::new(|| Protocol::memcached_binary(true));

    /// A response header, as memcached writes it.
    fn response(
        opcode: u8,
        status: u16,
        extras: &[u8],
        key: &[u8],
        value: &[u8],
        opaque: u32,
    ) -> Vec<u8> {
        let body = (extras.len() + key.len() + value.len()) as u32;
        let mut out = vec![0x81, opcode];
        out.extend_from_slice(&(key.len() as u16).to_be_bytes());
        out.extend_from_slice(&[extras.len() as u8, 0]);
        out.extend_from_slice(&status.to_be_bytes());
        out.extend_from_slice(&body.to_be_bytes());
        out.extend_from_slice(&opaque.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 7]);
        out.extend_from_slice(extras);
        out.extend_from_slice(key);
        out.extend_from_slice(value);
        out
    }

    fn reply(kind: ReplyKind, value_len: usize, status: u16, opaque: u32) -> Reply {
        Reply {
            opaque: Some(opaque),
            status: Some(status),
            ..Reply::new(kind, value_len)
        }
    }

    #[test]
    fn request_goldens() {
        assert_eq!(
            encoded_with_opaque(&GET, &Request::Get { key: b"key" }, 0xdead_beef),
            b"\x80\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x03\xde\xad\xbe\xef\
              \x00\x00\x00\x00\x00\x00\x00\x00key"
        );
        assert_eq!(
            encoded_with_opaque(&GETK, &Request::Get { key: b"k" }, 1),
            b"\x80\x0c\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\
              \x00\x00\x00\x00\x00\x00\x00\x00k"
        );
        assert_eq!(
            encoded_with_opaque(
                &GET,
                &Request::Set {
                    key: b"k",
                    value_len: 2
                },
                2
            ),
            b"\x80\x01\x00\x01\x08\x00\x00\x00\x00\x00\x00\x0b\x00\x00\x00\x02\
              \x00\x00\x00\x00\x00\x00\x00\x00\
              \x00\x00\x00\x00\x00\x00\x00\x00kxx"
        );
        let encode = |key: &[u8]| GET.encode(&Request::Get { key }, 0, &mut Vec::new());
        assert!(encode(b"binary \x00\r\n key").is_ok());
        assert!(matches!(encode(b""), Err(EncodeError::InvalidKey { .. })));
        assert!(matches!(
            encode(&[0; 251]),
            Err(EncodeError::InvalidKey { .. })
        ));
    }

    #[test]
    fn every_reply_at_every_split_point() {
        let cases = [
            (
                response(0x00, 0, &[0, 0, 0, 0], b"", b"hello", 9),
                reply(ReplyKind::Hit, 5, 0, 9),
            ),
            (
                response(0x0c, 0, &[0, 0, 0, 0], b"key", b"hello", 10),
                reply(ReplyKind::Hit, 5, 0, 10),
            ),
            (
                response(0x00, 1, b"", b"", b"Not found", 11),
                reply(ReplyKind::Miss, 0, 1, 11),
            ),
            (
                response(0x01, 0, b"", b"", b"", 12),
                reply(ReplyKind::Stored, 0, 0, 12),
            ),
            (
                response(0x01, 5, b"", b"", b"Not stored", 13),
                reply(ReplyKind::NotStored, 0, 5, 13),
            ),
            (
                response(0x01, 0x82, b"", b"", b"Out of memory", u32::MAX),
                reply(ReplyKind::Error, 0, 0x82, u32::MAX),
            ),
            (
                response(0x00, 4, b"", b"", b"Invalid arguments", 0),
                reply(ReplyKind::Error, 0, 4, 0),
            ),
        ];
        for (bytes, expected) in &cases {
            assert_incremental(&GET, bytes, *expected);
        }
        let coalesced: Vec<(&[u8], Reply)> = cases
            .iter()
            .map(|(bytes, reply)| (&bytes[..], *reply))
            .collect();
        assert_coalesced(&GETK, &coalesced);
    }

    #[test]
    fn malformed_replies() {
        assert_malformed(&GET, b"END\r\n", "magic byte");
        assert_malformed(&GET, &response(0x0a, 0, b"", b"", b"", 0), "opcode 0x0a");
        let mut short_body = response(0x00, 0, &[0; 4], b"key", b"", 0);
        short_body[11] = 6; // body 6 < extras 4 + key 3
        assert_malformed(&GET, &short_body, "longer than the body");
        let mut huge = response(0x00, 0, b"", b"", b"", 0);
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_malformed(&GET, &huge, "over the");
    }
}
