//! A made-up protocol, compiled only into this crate's tests, that shows what adding a
//! protocol takes: this file and one line in the registry. `knock`: a request is `KNOCK
//! KEY\n`, a reply is `ok\n` or `no\n`.

use super::vocab::{
    EncodeError, Entry, ParseError, Protocol, Reply, ReplyKind, Request, Speak, WorkloadKind,
};
use super::wire::{Reader, finish};

pub(super) static ENTRY: Entry = Entry {
    name: "knock",
    scheme: "knock",
    forms: &["knock"],
    url_spec: "knock",
    example_port: 4000,
    workload: WorkloadKind::KeyValue,
    default_path: None,
    url_method: false,
    mapping: None,
    about: "a made-up protocol for the registry's tests",
    build: |_| Ok(Protocol::new(Knock)),
};

#[derive(Debug)]
struct Knock;

impl Speak for Knock {
    fn entry(&self) -> &'static Entry {
        &ENTRY
    }

    fn encode(&self, request: &Request<'_>, _: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let (Request::Get { key } | Request::Set { key, .. }) = *request else {
            return Err(EncodeError::unsupported("knock", request));
        };
        out.extend_from_slice(b"KNOCK ");
        out.extend_from_slice(key);
        out.push(b'\n');
        Ok(())
    }

    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        let mut reader = Reader::new("knock", buf);
        finish(reader.take(3).map(|word| {
            let kind = if word == b"ok\n" {
                ReplyKind::Ok
            } else {
                ReplyKind::Error
            };
            (Reply::new(kind, 0), 3)
        }))
    }
}
