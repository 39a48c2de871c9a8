//! `synthetic`: the request is 8 bytes, the service time in nanoseconds (little-endian), for
//! vernier's synthetic server to spin; the reply is 8 bytes, the time the server says it
//! served the request, in the same form (vernier's server: the time it spun, which the OS
//! or the hypervisor may lengthen by taking its core; a server that echoes the request
//! says it served exactly what was asked). The client draws the service time so that the
//! service time asked of every request is known.

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

/// Any 8 bytes are a reply, read as the time served.
pub(super) fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new(NAME, buf);
    let message = reader.take(MESSAGE_LEN)?;
    let served = u64::from_le_bytes(message.try_into().unwrap_or_default());
    let reply = Reply {
        served_ns: Some(served),
        ..Reply::new(ReplyKind::Ok, MESSAGE_LEN)
    };
    Ok((reply, reader.consumed()))
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
    fn replies_are_eight_bytes_of_the_time_served() {
        let served = |ns| Reply {
            served_ns: Some(ns),
            ..Reply::new(ReplyKind::Ok, 8)
        };
        assert_incremental(Protocol::Synthetic, b"\x10\x27\0\0\0\0\0\0", served(10_000));
        assert_coalesced(
            Protocol::Synthetic,
            &[
                (&[1u8; 8][..], served(0x0101_0101_0101_0101)),
                (&[0u8; 8], served(0)),
                (&[0xffu8; 8], served(u64::MAX)),
            ],
        );
    }
}
