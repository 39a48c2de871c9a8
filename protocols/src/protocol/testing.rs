//! The checks every parser's tests make: every split point, coalesced replies, goldens.

use super::vocab::{Protocol, Reply, Request};

/// The bytes `protocol` sends for `request` (opaque 0).
pub(super) fn encoded(protocol: &Protocol, request: &Request<'_>) -> Vec<u8> {
    encoded_with_opaque(protocol, request, 0)
}

/// The bytes `protocol` sends for `request` with `opaque`.
pub(super) fn encoded_with_opaque(
    protocol: &Protocol,
    request: &Request<'_>,
    opaque: u32,
) -> Vec<u8> {
    let mut out = Vec::new();
    protocol
        .encode(request, opaque, &mut out)
        .unwrap_or_else(|e| panic!("{protocol} should encode {request:?}: {e}"));
    out
}

/// `bytes` is exactly one reply, `expected`: every proper prefix is incomplete (`None`,
/// not an error), the whole is the reply and consumes every byte, and bytes after it are
/// left alone.
pub(super) fn assert_incremental(protocol: &Protocol, bytes: &[u8], expected: Reply) {
    let show = || bytes.escape_ascii().to_string();
    for split in 0..bytes.len() {
        assert_eq!(
            protocol.parse(&bytes[..split]),
            Ok(None),
            "{protocol}: {split} of {} bytes of \"{}\" should be incomplete",
            bytes.len(),
            show()
        );
    }
    assert_eq!(
        protocol.parse(bytes),
        Ok(Some((expected, bytes.len()))),
        "{protocol}: \"{}\"",
        show()
    );
    let mut followed = bytes.to_vec();
    followed.extend_from_slice(b"\r\nEXTRA");
    assert_eq!(
        protocol.parse(&followed),
        Ok(Some((expected, bytes.len()))),
        "{protocol}: \"{}\" followed by more bytes",
        show()
    );
}

/// The replies, sent back to back in one buffer, parse one after another, each where the
/// previous one ended.
pub(super) fn assert_coalesced(protocol: &Protocol, replies: &[(&[u8], Reply)]) {
    let buf: Vec<u8> = replies
        .iter()
        .flat_map(|(bytes, _)| bytes.iter().copied())
        .collect();
    let mut at = 0;
    for (i, (bytes, expected)) in replies.iter().enumerate() {
        assert_eq!(
            protocol.parse(&buf[at..]),
            Ok(Some((*expected, bytes.len()))),
            "{protocol}: reply {i} of the coalesced buffer"
        );
        at += bytes.len();
    }
    assert_eq!(protocol.parse(&buf[at..]), Ok(None));
}

/// `bytes` is not a reply: the error names the protocol and says `problem`. Every prefix
/// is either incomplete or already the same kind of error, never a panic or a reply.
pub(super) fn assert_malformed(protocol: &Protocol, bytes: &[u8], problem: &str) {
    match protocol.parse(bytes) {
        Err(error) => {
            assert_eq!(error.protocol(), protocol.name());
            assert!(
                error.problem().contains(problem),
                "{protocol}: \"{}\" gave {error}, expected a problem with {problem:?}",
                bytes.escape_ascii()
            );
        }
        other => panic!(
            "{protocol}: \"{}\" should be malformed, got {other:?}",
            bytes.escape_ascii()
        ),
    }
    for split in 0..bytes.len() {
        assert!(
            !matches!(protocol.parse(&bytes[..split]), Ok(Some(_))),
            "{protocol}: a prefix of malformed \"{}\" parsed as a reply",
            bytes.escape_ascii()
        );
    }
}
