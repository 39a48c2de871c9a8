//! Redis RESP2 against `redis-server` (Debian package redis-server).

use vernier_protocols::{Protocol, Reply, ReplyKind, Request};

use crate::conn::Conn;
use vernier_fixtures::ExternalServer;

fn redis() -> ExternalServer {
    ExternalServer::redis().unwrap()
}

#[test]
fn get_and_set() {
    let server = redis();
    let mut conn = Conn::open(server.addr(), Protocol::redis());
    let kind = |reply: Reply| (reply.kind, reply.value_len);
    let get = |key| Request::Get { key };
    let set = |key, value_len| Request::Set { key, value_len };

    assert_eq!(kind(conn.call(get(b"missing"), 0)), (ReplyKind::Miss, 0));
    assert_eq!(kind(conn.call(set(b"k", 5), 0)), (ReplyKind::Ok, 0));
    assert_eq!(kind(conn.call(get(b"k"), 0)), (ReplyKind::Hit, 5));
    assert_eq!(kind(conn.call(set(b"", 0), 0)), (ReplyKind::Ok, 0));
    assert_eq!(kind(conn.call(get(b""), 0)), (ReplyKind::Hit, 0));
    let binary_key = b"a key\r\n$3\r\n";
    assert_eq!(kind(conn.call(set(binary_key, 2), 0)), (ReplyKind::Ok, 0));
    assert_eq!(kind(conn.call(get(binary_key), 0)), (ReplyKind::Hit, 2));

    // Pipelined, with a value that takes several reads.
    conn.send(&[
        (set(b"big", 1 << 20), 0),
        (get(b"big"), 0),
        (get(b"nope"), 0),
        (get(b"k"), 0),
    ]);
    assert_eq!(kind(conn.reply()), (ReplyKind::Ok, 0));
    assert_eq!(kind(conn.reply()), (ReplyKind::Hit, 1 << 20));
    assert_eq!(kind(conn.reply()), (ReplyKind::Miss, 0));
    assert_eq!(kind(conn.reply()), (ReplyKind::Hit, 5));
    conn.assert_drained();
}

#[test]
fn errors_and_integers() {
    let server = redis();
    let mut conn = Conn::open(server.addr(), Protocol::redis());
    conn.call(
        Request::Set {
            key: b"k",
            value_len: 3,
        },
        0,
    );
    // -ERR: an unknown command; a command on the wrong kind of value.
    conn.send_raw(b"*1\r\n$5\r\nBOGUS\r\n");
    assert_eq!(conn.reply().kind, ReplyKind::Error);
    conn.send_raw(b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n");
    assert_eq!(conn.reply().kind, ReplyKind::Error);
    // Integers, negative ones included: TTL of a missing key is -2, DECR of none is -1.
    for (command, integer) in [
        (
            &b"*2\r\n$3\r\nTTL\r\n$7\r\nmissing\r\n"[..],
            &b":-2\r\n"[..],
        ),
        (b"*2\r\n$4\r\nDECR\r\n$1\r\nc\r\n", b":-1\r\n"),
        (b"*2\r\n$4\r\nINCR\r\n$1\r\nd\r\n", b":1\r\n"),
    ] {
        conn.send_raw(command);
        let (reply, bytes) = conn.reply_with_bytes();
        assert_eq!(reply.kind, ReplyKind::Ok);
        assert_eq!(bytes, integer);
    }
    conn.assert_drained();
}
