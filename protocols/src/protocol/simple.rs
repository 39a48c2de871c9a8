//! What a protocol without parameters of its own is: its registry entry and two functions,
//! one that encodes a request and one that parses a reply. memcached's text protocol,
//! Redis, HTTP and the synthetic protocol are each one of these.

use super::vocab::{EncodeError, Entry, ParseError, Protocol, Reply, Request, Speak};
use super::wire::{Step, finish};

/// A protocol that is its entry and its two functions.
#[derive(Debug)]
pub(super) struct Simple {
    pub(super) entry: &'static Entry,
    pub(super) encode: fn(&Request<'_>, &mut Vec<u8>) -> Result<(), EncodeError>,
    pub(super) parse: fn(&[u8]) -> Step<(Reply, usize)>,
}

impl Speak for Simple {
    fn entry(&self) -> &'static Entry {
        self.entry
    }

    #[inline]
    fn encode(&self, request: &Request<'_>, _: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        (self.encode)(request, out)
    }

    #[inline]
    fn parse(&self, buf: &[u8]) -> Result<Option<(Reply, usize)>, ParseError> {
        finish((self.parse)(buf))
    }
}

/// An entry's `build` for a protocol whose spec is its bare name: `make`'s protocol, or
/// what was expected of a spec with parameters.
pub(super) fn bare(
    name: &str,
    params: Option<&str>,
    make: fn() -> Protocol,
) -> Result<Protocol, String> {
    match params {
        None => Ok(make()),
        Some(_) => Err(format!("expected {name}, with no parameters")),
    }
}
