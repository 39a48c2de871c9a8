//! memcached, text and binary, against `memcached` (Debian package memcached).

use vernier_protocols::{Protocol, Reply, ReplyKind, Request};

use crate::conn::Conn;
use vernier_fixtures::ExternalServer;

fn memcached() -> ExternalServer {
    ExternalServer::memcached().unwrap()
}

/// More than memcached's default 1 MiB item limit.
const TOO_LARGE: usize = 2 << 20;

fn get(key: &[u8]) -> Request<'_> {
    Request::Get { key }
}

fn set(key: &[u8], value_len: usize) -> Request<'_> {
    Request::Set { key, value_len }
}

#[test]
fn text_get_and_set() {
    let server = memcached();
    let mut conn = Conn::open(server.addr(), Protocol::memcached());
    let kind = |reply: Reply| (reply.kind, reply.value_len);

    assert_eq!(kind(conn.call(get(b"missing"), 0)), (ReplyKind::Miss, 0));
    assert_eq!(kind(conn.call(set(b"k", 5), 0)), (ReplyKind::Stored, 0));
    assert_eq!(kind(conn.call(get(b"k"), 0)), (ReplyKind::Hit, 5));
    assert_eq!(kind(conn.call(set(b"empty", 0), 0)), (ReplyKind::Stored, 0));
    assert_eq!(kind(conn.call(get(b"empty"), 0)), (ReplyKind::Hit, 0));

    // Pipelined: the replies come back coalesced.
    conn.send(&[
        (set(b"a", 300_000), 0),
        (get(b"a"), 0),
        (get(b"nope"), 0),
        (get(b"k"), 0),
    ]);
    assert_eq!(kind(conn.reply()), (ReplyKind::Stored, 0));
    assert_eq!(kind(conn.reply()), (ReplyKind::Hit, 300_000));
    assert_eq!(kind(conn.reply()), (ReplyKind::Miss, 0));
    assert_eq!(kind(conn.reply()), (ReplyKind::Hit, 5));

    // SERVER_ERROR: memcached refuses the item, swallows its data, and carries on.
    assert_eq!(
        kind(conn.call(set(b"big", TOO_LARGE), 0)),
        (ReplyKind::Error, 0)
    );
    assert_eq!(kind(conn.call(get(b"big"), 0)), (ReplyKind::Miss, 0));
    conn.assert_drained();
}

#[test]
fn text_replies_vernier_does_not_ask_for() {
    let server = memcached();
    let mut conn = Conn::open(server.addr(), Protocol::memcached());
    conn.call(set(b"k", 1), 0);
    // NOT_STORED: `add` of a key that exists.
    conn.send_raw(b"add k 0 0 1\r\nx\r\n");
    assert_eq!(conn.reply().kind, ReplyKind::NotStored);
    // ERROR: an unknown command.
    conn.send_raw(b"bogus\r\n");
    assert_eq!(conn.reply().kind, ReplyKind::Error);
    // CLIENT_ERROR: a malformed command line.
    conn.send_raw(b"set k 0 0 notanumber\r\n");
    assert_eq!(conn.reply().kind, ReplyKind::Error);
    // A `gets` hit carries a CAS unique.
    conn.send_raw(b"gets k\r\n");
    let (reply, bytes) = conn.reply_with_bytes();
    assert_eq!((reply.kind, reply.value_len), (ReplyKind::Hit, 1));
    assert!(
        bytes.starts_with(b"VALUE k 0 1 "),
        "{}",
        bytes.escape_ascii()
    );
    conn.assert_drained();
}

fn binary(getk: bool) {
    let server = memcached();
    let mut conn = Conn::open(server.addr(), Protocol::memcached_binary(getk));
    let summary = |reply: Reply| (reply.kind, reply.value_len, reply.status, reply.opaque);

    assert_eq!(
        summary(conn.call(get(b"missing"), 7)),
        (ReplyKind::Miss, 0, Some(1), Some(7))
    );
    assert_eq!(
        summary(conn.call(set(b"k", 5), 8)),
        (ReplyKind::Stored, 0, Some(0), Some(8))
    );
    assert_eq!(
        summary(conn.call(get(b"k"), 9)),
        (ReplyKind::Hit, 5, Some(0), Some(9))
    );
    // Binary keys need not be text.
    let key = b"\x00binary key\r\n";
    assert_eq!(summary(conn.call(set(key, 3), 10)).0, ReplyKind::Stored);
    assert_eq!(
        summary(conn.call(get(key), 11)),
        (ReplyKind::Hit, 3, Some(0), Some(11))
    );

    // Pipelined, each reply matched by its opaque.
    conn.send(&[
        (set(b"a", 200_000), 100),
        (get(b"a"), 101),
        (get(b"nope"), 102),
        (get(b"k"), u32::MAX),
    ]);
    assert_eq!(
        summary(conn.reply()),
        (ReplyKind::Stored, 0, Some(0), Some(100))
    );
    assert_eq!(
        summary(conn.reply()),
        (ReplyKind::Hit, 200_000, Some(0), Some(101))
    );
    assert_eq!(
        summary(conn.reply()),
        (ReplyKind::Miss, 0, Some(1), Some(102))
    );
    assert_eq!(
        summary(conn.reply()),
        (ReplyKind::Hit, 5, Some(0), Some(u32::MAX))
    );

    // "Value too large" (status 3), then the connection carries on.
    let too_large = conn.call(set(b"big", TOO_LARGE), 12);
    assert_eq!(
        (too_large.kind, too_large.status, too_large.opaque),
        (ReplyKind::Error, Some(3), Some(12))
    );
    assert_eq!(
        summary(conn.call(get(b"k"), 13)),
        (ReplyKind::Hit, 5, Some(0), Some(13))
    );
    conn.assert_drained();
}

#[test]
fn binary_get_and_set() {
    binary(false);
}

#[test]
fn binary_getk_and_set() {
    binary(true);
}
