//! `echo:N`: N bytes out, the same N back. The simplest target there is, for measuring the
//! floor of the network path.

use std::num::NonZeroUsize;

use super::vocab::{
    EncodeError, Entry, MAX_VALUE_LEN, ParseError, Protocol, Reply, ReplyKind, Request, Speak,
    WorkloadKind,
};
use super::wire::{Reader, Step, finish, push_filler};

pub(super) static ENTRY: Entry = Entry {
    name: "echo",
    scheme: "echo",
    forms: &["echo:N"],
    url_spec: "echo:64",
    example_port: 7,
    workload: WorkloadKind::Fixed,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "N bytes out, the same N back (an echo server)",
    build,
};

/// `echo:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Echo {
    /// The size of each request and of each reply.
    len: NonZeroUsize,
}

impl Protocol {
    /// `echo:len`: `len` arbitrary bytes out, the same number back.
    pub fn echo(len: NonZeroUsize) -> Protocol {
        Protocol::new(Echo { len })
    }
}

fn build(params: Option<&str>) -> Result<Protocol, String> {
    params
        .and_then(|len| len.parse::<usize>().ok())
        .filter(|len| (1..=MAX_VALUE_LEN).contains(len))
        .and_then(NonZeroUsize::new)
        .map(Protocol::echo)
        .ok_or_else(|| {
            "expected echo:N with N the bytes of each request and reply, from 1 to \
             536870912, as in echo:64"
                .to_owned()
        })
}

impl Speak for Echo {
    fn entry(&self) -> &'static Entry {
        &ENTRY
    }

    fn spec(&self) -> String {
        format!("echo:{}", self.len)
    }

    /// Whatever the request, it is `len` filler bytes: an echo server has no operations.
    fn encode(&self, _: &Request<'_>, _: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        push_filler(out, self.len.get());
        Ok(())
    }

    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        finish(parse(self.len.get(), buf))
    }
}

/// Any `len` bytes are a reply; their content is the server's business.
fn parse(len: usize, buf: &[u8]) -> Step<(Reply, usize)> {
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
        Protocol::echo(NonZeroUsize::new(len).unwrap())
    }

    #[test]
    fn requests_are_n_bytes_whatever_their_kind() {
        assert_eq!(encoded(&echo(4), &Request::Get { key: b"k" }), b"xxxx");
        assert_eq!(encoded(&echo(2), &Request::Spin { service_ns: 9 }), b"xx");
    }

    #[test]
    fn replies_are_n_bytes() {
        let ok = Reply::new(ReplyKind::Ok, 5);
        assert_incremental(&echo(5), b"hello", ok);
        assert_coalesced(
            &echo(5),
            &[(&b"hello"[..], ok), (b"world", ok), (b"\r\n\0\xff!", ok)],
        );
    }
}
