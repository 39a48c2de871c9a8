//! `echo:N`: N bytes out, the same N back. The simplest target there is, for measuring the
//! floor of the network path.

use super::wire::{Reader, Step, push_filler};
use super::{Reply, ReplyKind};

/// Whatever the request, it is `len` filler bytes: an echo server has no operations.
pub(super) fn encode(len: usize, out: &mut Vec<u8>) {
    push_filler(out, len);
}

/// Any `len` bytes are a reply; their content is the server's business.
pub(super) fn parse(len: usize, buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new("echo", buf);
    reader.take(len)?;
    Ok((Reply::new(ReplyKind::Ok, len), reader.consumed()))
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use super::super::testing::{assert_coalesced, assert_incremental, encoded};
    use super::super::{Protocol, Reply, ReplyKind, Request};

    fn echo(len: usize) -> Protocol {
        Protocol::Echo {
            len: NonZeroUsize::new(len).unwrap(),
        }
    }

    #[test]
    fn requests_are_n_bytes_whatever_their_kind() {
        assert_eq!(encoded(echo(4), &Request::Get { key: b"k" }), b"xxxx");
        assert_eq!(encoded(echo(2), &Request::Spin { service_ns: 9 }), b"xx");
    }

    #[test]
    fn replies_are_n_bytes() {
        let ok = Reply::new(ReplyKind::Ok, 5);
        assert_incremental(echo(5), b"hello", ok);
        assert_coalesced(
            echo(5),
            &[(&b"hello"[..], ok), (b"world", ok), (b"\r\n\0\xff!", ok)],
        );
    }
}
