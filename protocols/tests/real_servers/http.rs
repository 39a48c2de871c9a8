//! HTTP/1.1 against nginx (Debian package nginx), with a configuration of its own.

use vernier_protocols::{Protocol, Reply, ReplyKind, Request};

use crate::conn::Conn;
use vernier_fixtures::ExternalServer;

const HELLO: &[u8] = b"hello, vernier\n";
const BIG_LEN: usize = 300_000;

/// nginx serving the scratch site: plain files, an SSI page (no length known in advance,
/// so nginx sends it chunked), and a directory whose replies close the connection.
fn nginx() -> ExternalServer {
    ExternalServer::nginx(
        |www| {
            std::fs::create_dir_all(www.join("ssi"))?;
            std::fs::create_dir_all(www.join("close"))?;
            std::fs::write(www.join("hello.txt"), HELLO)?;
            std::fs::write(www.join("close/hello.txt"), HELLO)?;
            std::fs::write(www.join("big.bin"), vec![b'v'; BIG_LEN])?;
            std::fs::write(
                www.join("ssi/page.html"),
                r#"A<!--# echo var="unset" default="xyz" -->B"#,
            )
        },
        "location /ssi/ { ssi on; } location /close/ { keepalive_timeout 0; }",
    )
    .unwrap()
}

fn get(key: &[u8]) -> Request<'_> {
    Request::Get { key }
}

fn summary(reply: Reply) -> (ReplyKind, usize, Option<u16>, bool) {
    (reply.kind, reply.value_len, reply.status, reply.close)
}

#[test]
fn keep_alive_gets() {
    let server = nginx();
    let mut conn = Conn::open(server.addr(), Protocol::http());
    let hello = (ReplyKind::Ok, HELLO.len(), Some(200), false);
    assert_eq!(summary(conn.call(get(b"hello.txt"), 0)), hello);
    let missing = summary(conn.call(get(b"missing"), 0));
    assert_eq!(
        (missing.0, missing.2, missing.3),
        (ReplyKind::Miss, Some(404), false)
    );
    assert!(missing.1 > 0, "nginx's 404 page has a body");
    assert_eq!(
        summary(conn.call(get(b"big.bin"), 0)),
        (ReplyKind::Ok, BIG_LEN, Some(200), false)
    );

    // Pipelined on the same connection.
    conn.send(&[
        (get(b"hello.txt"), 0),
        (get(b"big.bin"), 0),
        (get(b"hello.txt"), 0),
    ]);
    assert_eq!(summary(conn.reply()), hello);
    assert_eq!(summary(conn.reply()).1, BIG_LEN);
    assert_eq!(summary(conn.reply()), hello);
    conn.assert_drained();
}

#[test]
fn chunked_replies() {
    let server = nginx();
    let mut conn = Conn::open(server.addr(), Protocol::http());
    for _ in 0..2 {
        conn.send(&[(get(b"ssi/page.html"), 0)]);
        let (reply, bytes) = conn.reply_with_bytes();
        assert!(
            bytes
                .windows(26)
                .any(|w| w.eq_ignore_ascii_case(b"transfer-encoding: chunked")),
            "nginx did not chunk: {}",
            bytes.escape_ascii()
        );
        assert_eq!(
            summary(reply),
            (ReplyKind::Ok, "AxyzB".len(), Some(200), false)
        );
    }
    conn.assert_drained();
}

#[test]
fn connection_close_is_reported() {
    let server = nginx();
    let mut conn = Conn::open(server.addr(), Protocol::http());
    assert_eq!(
        summary(conn.call(get(b"close/hello.txt"), 0)),
        (ReplyKind::Ok, HELLO.len(), Some(200), true)
    );
    conn.assert_closed_by_server();
}
