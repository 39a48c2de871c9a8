//! `synthetic`: the request is 8 bytes, the service time in nanoseconds (little-endian), for
//! vernier's synthetic server to spin; the reply is 8 bytes, the time the server says it
//! served the request, in the same form (vernier's server: the time it spun, which the OS
//! or the hypervisor may lengthen by taking its core; a server that echoes the request
//! says it served exactly what was asked). The client draws the service time so that the
//! service time asked of every request is known.

use super::simple::{Simple, bare};
use super::vocab::{EncodeError, Entry, Protocol, Reply, ReplyKind, Request, WorkloadKind};
use super::wire::{Reader, Step};

const NAME: &str = "synthetic";

pub(super) static ENTRY: Entry = Entry {
    name: NAME,
    scheme: NAME,
    forms: &[NAME],
    url_spec: NAME,
    example_port: 7000,
    workload: WorkloadKind::Service,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "vernier's synthetic server: each request carries the service time to spin",
    build: |params| bare(NAME, params, Protocol::synthetic),
};

impl Protocol {
    /// vernier's synthetic server: the request is the service time to spin, 8 bytes of
    /// nanoseconds, little-endian; the reply is 8 bytes.
    pub fn synthetic() -> Protocol {
        Protocol::new(Simple {
            entry: &ENTRY,
            encode,
            parse,
        })
    }
}

/// The size of a request and of a reply.
const MESSAGE_LEN: usize = 8;

fn encode(request: &Request<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    match *request {
        Request::Spin { service_ns } => {
            out.extend_from_slice(&service_ns.to_le_bytes());
            Ok(())
        }
        _ => Err(EncodeError::unsupported(NAME, request)),
    }
}

/// Any 8 bytes are a reply, read as the time served.
fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
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
            encoded(
                &Protocol::synthetic(),
                &Request::Spin { service_ns: 10_000 }
            ),
            b"\x10\x27\0\0\0\0\0\0"
        );
        assert_eq!(
            Protocol::synthetic().encode(&Request::Get { key: b"k" }, 0, &mut Vec::new()),
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
        assert_incremental(
            &Protocol::synthetic(),
            b"\x10\x27\0\0\0\0\0\0",
            served(10_000),
        );
        assert_coalesced(
            &Protocol::synthetic(),
            &[
                (&[1u8; 8][..], served(0x0101_0101_0101_0101)),
                (&[0u8; 8], served(0)),
                (&[0xffu8; 8], served(u64::MAX)),
            ],
        );
    }
}
