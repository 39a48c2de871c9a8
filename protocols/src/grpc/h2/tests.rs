//! The HTTP/2 client side, sans I/O: frames written by hand (the server's header blocks by
//! an HPACK encoder with its dynamic table, as servers write them) and read back.

use std::path::Path;

use loona_hpack::Encoder;

use super::*;
use crate::grpc::{GrpcMapping, compile_proto};

fn grpc() -> Grpc {
    let proto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc/bench.proto");
    let descriptors = compile_proto(&proto, &[]).unwrap();
    let mapping = GrpcMapping {
        method: "bench.Echo/Call".into(),
        request: r#"{"key": "{key}", "seq": "{seq}"}"#.into(),
        authority: "127.0.0.1:50051".into(),
        descriptors: String::new(),
        tls: None,
    };
    Grpc::new(mapping, &descriptors).unwrap()
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame_header(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

/// Every frame in `bytes`: (type, flags, stream, payload).
fn frames(mut bytes: &[u8]) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut all = Vec::new();
    while bytes.len() >= 9 {
        let len = u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
        let stream = be32(&bytes[5..]).unwrap();
        all.push((bytes[3], bytes[4], stream, bytes[9..9 + len].to_vec()));
        bytes = &bytes[9 + len..];
    }
    assert!(bytes.is_empty(), "a partial frame left: {bytes:?}");
    all
}

/// Parses every frame of `bytes`: the replies, and what was answered.
fn read(conn: &mut Connection, bytes: &[u8]) -> (Vec<Reply>, Vec<u8>) {
    let (mut replies, mut answer, mut used) = (Vec::new(), Vec::new(), 0);
    while let Some((reply, n)) = conn.parse(&bytes[used..], &mut answer).unwrap() {
        used += n;
        replies.extend(reply);
    }
    assert_eq!(used, bytes.len(), "bytes left unread");
    (replies, answer)
}

fn request(conn: &mut Connection, opaque: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let request = Request::Template {
        index: 0,
        key: b"user:7",
        entropy: 0,
    };
    conn.encode(&request, opaque, &mut out).unwrap();
    out
}

fn headers(encoder: &mut Encoder<'_>, fields: &[(&str, &str)]) -> Vec<u8> {
    encoder.encode(fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())))
}

#[test]
fn a_connection_opens_with_the_preface_its_settings_and_a_window() {
    let mut conn = Connection::new(grpc());
    let mut out = Vec::new();
    conn.open(&mut out);
    assert!(out.starts_with(PREFACE));
    let f = frames(&out[PREFACE.len()..]);
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].0, f[0].1, f[0].2), (SETTINGS, 0, 0));
    assert_eq!(f[0].3, [0, 2, 0, 0, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff]);
    assert_eq!((f[1].0, f[1].2), (WINDOW_UPDATE, 0));
    assert_eq!(be32(&f[1].3), Some(MAX_WINDOW - 65_535));
}

#[test]
fn a_call_is_headers_then_data_with_the_grpc_prefix_on_odd_streams() {
    let mut conn = Connection::new(grpc());
    let first = frames(&request(&mut conn, 10));
    let second = frames(&request(&mut conn, 11));
    assert_eq!(first[0].2, 1);
    assert_eq!(second[0].2, 3);
    let (kind, flags, _, block) = &first[0];
    assert_eq!((*kind, *flags), (HEADERS, END_HEADERS));
    let mut decoded = Vec::new();
    Decoder::new()
        .decode_with_cb(block, |n, v| decoded.push((n.to_vec(), v.to_vec())))
        .unwrap();
    let has = |n: &str, v: &str| decoded.contains(&(n.as_bytes().to_vec(), v.as_bytes().to_vec()));
    assert!(
        has(":method", "POST") && has(":scheme", "http"),
        "{decoded:?}"
    );
    assert!(has(":path", "/bench.Echo/Call") && has(":authority", "127.0.0.1:50051"));
    assert!(has("content-type", "application/grpc") && has("te", "trailers"));
    let (kind, flags, _, data) = &first[1];
    assert_eq!((*kind, *flags), (DATA, END_STREAM));
    assert_eq!(data[0], 0, "not compressed");
    assert_eq!(be32(&data[1..]).unwrap() as usize, data.len() - GRPC_PREFIX);
    // The message: key "user:7" (field 1) and seq 10 (field 2).
    assert_eq!(&data[GRPC_PREFIX..], b"\x0a\x06user:7\x10\x0a");
}

#[test]
fn a_reply_ends_with_its_trailers_and_finds_its_request_by_stream() {
    let mut conn = Connection::new(grpc());
    request(&mut conn, 10);
    request(&mut conn, 11);
    let mut encoder = Encoder::new();
    let mut server = Vec::new();
    // Stream 3 answers first, stream 1 after: each by its own opaque.
    for stream in [3, 1] {
        let h = headers(
            &mut encoder,
            &[(":status", "200"), ("content-type", "application/grpc")],
        );
        server.extend(frame(HEADERS, END_HEADERS, stream, &h));
        server.extend(frame(DATA, 0, stream, b"\x00\x00\x00\x00\x03abc"));
        let t = headers(&mut encoder, &[("grpc-status", "0"), ("grpc-message", "")]);
        server.extend(frame(HEADERS, END_HEADERS | END_STREAM, stream, &t));
    }
    // Cut anywhere, the frames read the same once whole.
    assert_eq!(conn.parse(&server[..20], &mut Vec::new()), Ok(None));
    let (replies, answer) = read(&mut conn, &server);
    assert!(answer.is_empty());
    let ok = |opaque| Reply {
        opaque: Some(opaque),
        status: Some(0),
        ..Reply::new(ReplyKind::Ok, 3)
    };
    assert_eq!(replies, [ok(11), ok(10)]);
}

#[test]
fn an_error_status_a_reset_and_a_reply_without_trailers_are_errors() {
    let mut conn = Connection::new(grpc());
    for opaque in 0..3 {
        request(&mut conn, opaque);
    }
    let mut encoder = Encoder::new();
    let mut server = Vec::new();
    // Trailers-only: the status in the one HEADERS frame.
    let h = headers(
        &mut encoder,
        &[
            (":status", "200"),
            ("grpc-status", "3"),
            ("grpc-message", "no"),
        ],
    );
    server.extend(frame(HEADERS, END_HEADERS | END_STREAM, 1, &h));
    server.extend(frame(RST_STREAM, 0, 3, &8u32.to_be_bytes()));
    let h = headers(&mut encoder, &[(":status", "200")]);
    server.extend(frame(HEADERS, END_HEADERS, 5, &h));
    server.extend(frame(DATA, END_STREAM, 5, b"\x00\x00\x00\x00\x00"));
    let (replies, _) = read(&mut conn, &server);
    let kinds: Vec<_> = replies
        .iter()
        .map(|r| (r.kind, r.opaque, r.status))
        .collect();
    assert_eq!(
        kinds,
        [
            (ReplyKind::Error, Some(0), Some(3)),
            (ReplyKind::Error, Some(1), Some(8)),
            (ReplyKind::Error, Some(2), Some(200)),
        ]
    );
}

#[test]
fn settings_and_pings_are_answered_and_windows_followed() {
    let mut conn = Connection::new(grpc());
    let mut server = Vec::new();
    // At most one stream; a stream window of 20 bytes.
    server.extend(frame(
        SETTINGS,
        0,
        0,
        &[0, 3, 0, 0, 0, 1, 0, 4, 0, 0, 0, 20],
    ));
    server.extend(frame(PING, 0, 0, b"12345678"));
    server.extend(frame(SETTINGS, ACK, 0, b""));
    let (replies, answer) = read(&mut conn, &server);
    assert!(replies.is_empty());
    let answered = frames(&answer);
    assert_eq!(answered[0], (SETTINGS, ACK, 0, vec![]));
    assert_eq!(answered[1], (PING, ACK, 0, b"12345678".to_vec()));
    assert!(conn.ready());
    request(&mut conn, 0);
    assert!(!conn.ready(), "one stream open of one allowed");
    // A message over the stream's window is refused, and the buffer left as it was.
    let mut conn = Connection::new(grpc());
    read(&mut conn, &frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0, 8]));
    let mut out = b"before".to_vec();
    let request = Request::Template {
        index: 0,
        key: b"user:7",
        entropy: 0,
    };
    assert!(matches!(
        conn.encode(&request, 0, &mut out),
        Err(EncodeError::ValueTooLarge { .. })
    ));
    assert_eq!(out, b"before");
}

#[test]
fn a_header_block_in_continuation_frames_is_decoded_whole() {
    let mut conn = Connection::new(grpc());
    request(&mut conn, 4);
    let mut encoder = Encoder::new();
    let h = headers(&mut encoder, &[(":status", "200"), ("grpc-status", "0")]);
    let (a, b) = h.split_at(2);
    let mut server = frame(HEADERS, END_STREAM, 1, a);
    server.extend(frame(CONTINUATION, END_HEADERS, 1, b));
    let (replies, _) = read(&mut conn, &server);
    assert_eq!(replies.len(), 1);
    assert_eq!(
        (replies[0].kind, replies[0].opaque),
        (ReplyKind::Ok, Some(4))
    );
}

#[test]
fn bad_frames_are_errors_that_say_what() {
    let error = |bytes: &[u8]| {
        let mut conn = Connection::new(grpc());
        request(&mut conn, 0);
        let mut used = 0;
        loop {
            match conn.parse(&bytes[used..], &mut Vec::new()) {
                Ok(Some((_, n))) => used += n,
                Ok(None) => panic!("no error in {bytes:?}"),
                Err(e) => return e.to_string(),
            }
        }
    };
    let mut big = Vec::new();
    frame_header(&mut big, MAX_FRAME + 1, DATA, 0, 1);
    assert!(
        error(&big).contains("a frame of 16385 bytes"),
        "{}",
        error(&big)
    );
    let goaway = frame(GOAWAY, 0, 0, b"\x00\x00\x00\x01\x00\x00\x00\x02bye");
    assert!(
        error(&goaway).contains("GOAWAY (error code 2, last stream 1"),
        "{}",
        error(&goaway)
    );
    let garbage = frame(HEADERS, END_HEADERS, 1, b"\xff\xff\xff\xff\xff\xff");
    assert!(
        error(&garbage).contains("HPACK cannot decode"),
        "{}",
        error(&garbage)
    );
    let mut interrupted = frame(HEADERS, 0, 1, b"\x88");
    interrupted.extend(frame(PING, 0, 0, b"12345678"));
    assert!(
        error(&interrupted).contains("interrupted"),
        "{}",
        error(&interrupted)
    );
    let padded = frame(DATA, PADDED, 1, b"\x09abc");
    assert!(error(&padded).contains("padding"), "{}", error(&padded));
    let push = frame(PUSH_PROMISE, END_HEADERS, 1, b"\x00\x00\x00\x02");
    assert!(error(&push).contains("PUSH_PROMISE"), "{}", error(&push));
}
