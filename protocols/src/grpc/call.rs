//! What every call to a gRPC method has: its header block and its request template. The
//! protocol ([`super::Grpc`]) holds one, and each connection's HTTP/2 state writes calls
//! from it.

use crate::protocol::vocab::EncodeError;

use super::message::Method;

/// The protocol's name in messages.
pub(crate) const NAME: &str = "grpc";

/// A method's calls: the HPACK block every call sends, and how to write its message.
#[derive(Debug)]
pub(super) struct Call {
    method: Method,
    headers: Vec<u8>,
}

impl Call {
    /// The calls to `method`, each sending the header block `headers`.
    pub(super) fn new(method: Method, headers: Vec<u8>) -> Call {
        Call { method, headers }
    }

    /// The HPACK block every call sends.
    pub(super) fn header_block(&self) -> &[u8] {
        &self.headers
    }

    /// Appends the request message for `key` and request `seq`.
    pub(super) fn encode_message(
        &self,
        key: &[u8],
        seq: u32,
        entropy: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        (self.method)
            .encode(key, u64::from(seq), entropy, out)
            .map_err(|e| EncodeError::Invalid {
                protocol: NAME,
                problem: e.to_string(),
            })
    }
}
