//! `synthetic`: the request is 8 bytes, the service time in nanoseconds (little-endian), for
//! vernier's synthetic server to spin; the reply is 8 bytes. The client draws the service
//! time so that the true service time of every request is known.

use super::wire::{Reader, Step};
use super::{EncodeError, Reply, ReplyKind, Request};

const NAME: &str = "synthetic";

/// The size of a request and of a reply.
const MESSAGE_LEN: usize = 8;

pub(super) fn encode(request: &Request<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match *request {
        Request::Spin { service_ns } => {
            out.extend_from_slice(&service_ns.to_le_bytes());
            Ok(())
        }
        _ => Err(EncodeError::unsupported(NAME, request)),
    }
}

/// Any 8 bytes are a reply; the content is the server's (the client does not read it).
pub(super) fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new(NAME, buf);
    reader.take(MESSAGE_LEN)?;
    Ok((Reply::new(ReplyKind::Ok, MESSAGE_LEN), reader.consumed()))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_coalesced, assert_incremental, encoded};
    use super::super::{EncodeError, Protocol, Reply, ReplyKind, Request};

    #[test]
    fn requests_carry_the_service_time_little_endian() {
        assert_eq!(
            encoded(Protocol::Synthetic, &Request::Spin { service_ns: 10_000 }),
            b"\x10\x27\0\0\0\0\0\0"
        );
        assert_eq!(
            Protocol::Synthetic.encode(&Request::Get { key: b"k" }, 0, &mut Vec::new()),
            Err(EncodeError::Unsupported {
                protocol: "synthetic",
                request: "get"
            })
        );
    }

    #[test]
    fn replies_are_eight_bytes() {
        let ok = Reply::new(ReplyKind::Ok, 8);
        assert_incremental(Protocol::Synthetic, b"\x10\x27\0\0\0\0\0\0", ok);
        assert_coalesced(
            Protocol::Synthetic,
            &[(&[1u8; 8][..], ok), (&[0u8; 8], ok), (&[0xffu8; 8], ok)],
        );
    }
}
