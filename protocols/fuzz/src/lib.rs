//! The properties every reply parser must have on any input, checked by each fuzz target.

use vernier_protocols::{Declared, Protocol};

/// Parses `data` as replies of `protocol`, one after another as an agent would, and checks:
/// no panic; a reply consumes at least one byte and no more than there are; a reply is the
/// same whether or not bytes follow it; and a reply is incomplete (not an error, not another
/// reply) one byte short of its end.
pub fn check_parser(protocol: Protocol, data: &[u8]) {
    let mut rest = data;
    while let Ok(Some((reply, consumed))) = protocol.parse(rest) {
        assert!(
            (1..=rest.len()).contains(&consumed),
            "{protocol}: consumed {consumed} of {} bytes",
            rest.len()
        );
        assert_eq!(
            protocol.parse(&rest[..consumed]),
            Ok(Some((reply, consumed))),
            "{protocol}: the reply alone parses differently"
        );
        assert_eq!(
            protocol.parse(&rest[..consumed - 1]),
            Ok(None),
            "{protocol}: one byte short of a reply is not incomplete"
        );
        rest = &rest[consumed..];
    }
}

/// [`check_parser`]'s checks for a protocol declared in a scenario.
pub fn check_declared(declared: &Declared, data: &[u8]) {
    check_parser(Protocol::new(declared.clone()), data);
}

/// Reads `data` as back-to-back HTTP/2 frames, as a gRPC connection does, and checks: no
/// panic; a frame takes its 9-byte head and its payload, no more than there are; it reads
/// the same alone as with bytes after it; one byte short of its end it is incomplete.
pub fn check_frames(data: &[u8]) {
    use vernier_protocols::grpc::frame_len;
    let mut rest = data;
    while let Ok(Some(n)) = frame_len(rest) {
        assert!((9..=rest.len()).contains(&n), "took {n} of {} bytes", rest.len());
        assert_eq!(frame_len(&rest[..n]), Ok(Some(n)), "the frame alone reads differently");
        assert_eq!(frame_len(&rest[..n - 1]), Ok(None), "one byte short is not incomplete");
        rest = &rest[n..];
    }
}

/// The calls [`check_session`] sends before the server's bytes are read.
const CALLS: u32 = 8;

/// A gRPC method of the test fixtures' `bench.proto`, compiled once.
static GRPC: std::sync::LazyLock<Protocol> = std::sync::LazyLock::new(|| {
    let proto = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/grpc/bench.proto");
    let mut compiler =
        protox::Compiler::new([proto.parent().expect("a directory")]).expect("an include path");
    compiler
        .include_imports(true)
        .open_file(&proto)
        .expect("fixtures/grpc/bench.proto compiles");
    let descriptors = compiler.encode_file_descriptor_set();
    let request = r#"{"key": "{key}", "seq": "{seq}"}"#;
    vernier_protocols::grpc::Grpc::protocol(&descriptors, "bench.Echo/Call", request, "x:1", None)
        .expect("the fuzz target's method is bench.proto's")
});

/// Opens a gRPC session, sends [`CALLS`] calls, and parses `data` as the server's bytes
/// until it is incomplete or an error: no panic; each step takes no more bytes than there
/// are; a step that takes none moves the session on (a reply handed back, no more of those
/// than calls sent; or a frame it had already decrypted).
pub fn check_session(data: &[u8]) {
    use vernier_protocols::{Parsed, Request};
    assert!(GRPC.keeps_state(), "gRPC keeps a session per connection");
    let mut session = GRPC.session();
    let mut out = Vec::new();
    session.open(&mut out);
    for opaque in 0..CALLS {
        let request = Request::Template {
            index: 0,
            key: b"user:7",
            entropy: 0,
        };
        session
            .encode(&request, opaque, &mut out)
            .expect("a call fits a new connection");
    }
    let (mut rest, mut replies_without_bytes) = (data, 0);
    loop {
        let n = match session.parse(rest, &mut out) {
            Ok(Parsed::Incomplete) | Err(_) => break,
            // h2c reads frames of the caller's bytes only: a control frame takes its 9-byte
            // head at least.
            Ok(Parsed::Consumed(n)) => {
                assert!(n >= 9, "a control frame of {n} bytes");
                n
            }
            Ok(Parsed::Reply(_, n)) => {
                if n == 0 {
                    replies_without_bytes += 1;
                    assert!(replies_without_bytes <= CALLS, "more replies than calls");
                }
                n
            }
        };
        assert!(n <= rest.len(), "took {n} of {} bytes", rest.len());
        rest = &rest[n..];
        let _ = session.spent();
        let _ = session.ready();
    }
}
