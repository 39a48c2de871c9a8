//! HTTP/1.1 `GET` on a kept-alive connection (RFC 9112), with `httparse` reading the status
//! line and headers. Bodies are framed by `Content-Length` or chunked transfer coding; a
//! reply that says the connection will close is flagged so the agent reconnects.

use super::simple::{Simple, bare};
use super::vocab::{EncodeError, MAX_VALUE_LEN, Reply, ReplyKind, Request};
use super::vocab::{Entry, Protocol, WorkloadKind};
use super::wire::{Reader, Step, Stop, check_key, decimal};

const NAME: &str = "http";

pub(super) static ENTRY: Entry = Entry {
    name: NAME,
    scheme: NAME,
    forms: &[NAME],
    url_spec: NAME,
    example_port: 8080,
    workload: WorkloadKind::KeyValue,
    default_path: Some("/"),
    url_method: false,
    mapping: None,
    about: "HTTP/1.1 GET /KEY on a kept-alive connection",
    build: |params| bare(NAME, params, Protocol::http),
};

impl Protocol {
    /// HTTP/1.1 `GET /KEY` on a kept-alive connection.
    pub fn http() -> Protocol {
        Protocol::new(Simple {
            entry: &ENTRY,
            encode,
            parse,
        })
    }
}

/// The `Host` header sent: the request's target is a loopback or lab server, normally
/// serving one site, whose default virtual host answers any name.
const HOST: &[u8] = b"localhost";

/// The most header fields a reply may have, and the most trailer fields after a chunked
/// body. Servers send a handful; the limit bounds the parser's stack array.
const MAX_HEADERS: usize = 64;

/// The longest status line and headers accepted, as common servers limit requests.
const MAX_HEAD: usize = 64 << 10;

/// The longest key (request target) sent: RFC 9112 §3 recommends servers accept request
/// lines of at least 8000 octets.
const MAX_KEY: usize = 7_900;

/// `GET /KEY HTTP/1.1`. Keep-alive is HTTP/1.1's default, so no `Connection` header.
fn encode(request: &Request<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let Request::Get { key } = *request else {
        return Err(EncodeError::unsupported(NAME, request));
    };
    check_key(
        NAME,
        key,
        MAX_KEY,
        |b| b.is_ascii_graphic(),
        "a request target holds only visible ASCII (percent-encode the rest)",
    )?;
    out.extend_from_slice(b"GET /");
    out.extend_from_slice(key);
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(HOST);
    out.extend_from_slice(b"\r\n\r\n");
    Ok(())
}

/// How the body of a reply ends.
enum Framing {
    /// No body (204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
}

/// One reply: status line, headers, and the body they frame. 2xx is [`ReplyKind::Ok`], 404
/// [`ReplyKind::Miss`], anything else [`ReplyKind::Error`].
fn parse(buf: &[u8]) -> Step<(Reply, usize)> {
    let mut reader = Reader::new(NAME, buf);
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(reader.malformed(format!("no end of headers within {MAX_HEAD} bytes"), 0));
        }
        Ok(httparse::Status::Partial) => return Err(Stop::Incomplete),
        Err(error) => return Err(reader.malformed(format!("{error}"), 0)),
    };
    // A complete head always has a code and a version.
    let (Some(code), Some(minor)) = (response.code, response.version) else {
        return Err(reader.malformed("no status code", 0));
    };
    if (100..200).contains(&code) {
        return Err(reader.malformed("an interim 1xx reply to a request that asked for none", 0));
    }

    let mut close = minor == 0; // HTTP/1.0 closes unless it says keep-alive
    let mut framing = None;
    for header in response.headers.iter() {
        let value = header.value.trim_ascii();
        if header.name.eq_ignore_ascii_case("connection") {
            for option in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if option.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if option.eq_ignore_ascii_case(b"keep-alive") && minor == 0 {
                    close = false;
                }
            }
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            // The final coding decides (RFC 9112 §6.3); it must be chunked for the reply to
            // end before the connection does. Transfer-Encoding overrides Content-Length.
            let last = value.rsplit(|&b| b == b',').next().unwrap_or_default();
            if !last.trim_ascii().eq_ignore_ascii_case(b"chunked") {
                return Err(reader.malformed(
                    "a body that only the connection's close ends (Transfer-Encoding without \
                     chunked last)",
                    0,
                ));
            }
            framing = Some(Framing::Chunked);
        } else if header.name.eq_ignore_ascii_case("content-length") {
            let length = decimal(value)
                .ok_or_else(|| reader.malformed("a Content-Length that is not a number", 0))?;
            match framing {
                Some(Framing::Chunked) => {}
                Some(Framing::Length(other)) if other != length => {
                    return Err(reader.malformed("two different Content-Lengths", 0));
                }
                _ => framing = Some(Framing::Length(length)),
            }
        }
    }
    if code == 204 || code == 304 {
        framing = Some(Framing::Empty);
    }
    let Some(framing) = framing else {
        return Err(reader.malformed(
            "a body that only the connection's close ends (no Content-Length, not chunked)",
            0,
        ));
    };

    reader.take(head_len)?;
    let value_len = match framing {
        Framing::Empty => 0,
        Framing::Length(length) => {
            let length = reader.value_len(length, 0)?;
            reader.take(length)?;
            length
        }
        Framing::Chunked => chunked_body(&mut reader)?,
    };
    let kind = match code {
        200..=299 => ReplyKind::Ok,
        404 => ReplyKind::Miss,
        _ => ReplyKind::Error,
    };
    let reply = Reply {
        status: Some(code),
        close,
        ..Reply::new(kind, value_len)
    };
    Ok((reply, reader.consumed()))
}

/// A chunked body (RFC 9112 §7.1): chunks of `HEX-SIZE[;ext]\r\nDATA\r\n`, a last chunk of
/// size 0, trailer fields, an empty line. Returns the total data length.
fn chunked_body(reader: &mut Reader<'_>) -> Step<usize> {
    let mut total: usize = 0;
    loop {
        let at = reader.consumed();
        let line = reader.line()?;
        let size = line
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        let size = hex(size).ok_or_else(|| reader.malformed("a chunk size that is not hex", at))?;
        if size == 0 {
            break;
        }
        let size = reader.value_len(size, at)?;
        total = total.saturating_add(size);
        if total > MAX_VALUE_LEN {
            return Err(reader.malformed(format!("a body over {MAX_VALUE_LEN} bytes"), at));
        }
        reader.take(size)?;
        reader.expect(b"\r\n", "a chunk does not end where its size says")?;
    }
    for _ in 0..=MAX_HEADERS {
        if reader.line()?.is_empty() {
            return Ok(total);
        }
    }
    let at = reader.consumed();
    Err(reader.malformed(format!("more than {MAX_HEADERS} trailer fields"), at))
}

/// A chunk size: 1 to 16 hex digits.
fn hex(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &b| {
        let digit = char::from(b).to_digit(16)?;
        Some(n << 4 | u64::from(digit))
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{assert_coalesced, assert_incremental, assert_malformed, encoded};
    use super::super::{EncodeError, Protocol, Reply, ReplyKind, Request};
    use std::sync::LazyLock;

    static P: LazyLock<Protocol> = LazyLock::new(Protocol::http);

    fn reply(kind: ReplyKind, value_len: usize, status: u16, close: bool) -> Reply {
        Reply {
            status: Some(status),
            close,
            ..Reply::new(kind, value_len)
        }
    }

    #[test]
    fn request_goldens() {
        assert_eq!(
            encoded(
                &P,
                &Request::Get {
                    key: b"index.html?q=1"
                }
            ),
            b"GET /index.html?q=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
        );
        assert_eq!(
            encoded(&P, &Request::Get { key: b"" }),
            b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
        );
        let encode = |request: Request<'_>| P.encode(&request, 0, &mut Vec::new());
        assert!(matches!(
            encode(Request::Get { key: b"a b" }),
            Err(EncodeError::InvalidKey { .. })
        ));
        assert!(matches!(
            encode(Request::Set {
                key: b"k",
                value_len: 1
            }),
            Err(EncodeError::Unsupported {
                protocol: "http",
                request: "set"
            })
        ));
    }

    #[test]
    fn every_reply_at_every_split_point() {
        let cases: [(&[u8], Reply); 9] = [
            (
                b"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 5\r\n\r\nhello",
                reply(ReplyKind::Ok, 5, 200, false),
            ),
            (
                b"HTTP/1.1 200 OK\r\ncontent-length:0\r\n\r\n",
                reply(ReplyKind::Ok, 0, 200, false),
            ),
            (
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno!",
                reply(ReplyKind::Miss, 3, 404, true),
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                  5\r\nhello\r\nA;name=value\r\n0123456789\r\n0\r\n\r\n",
                reply(ReplyKind::Ok, 15, 200, false),
            ),
            // Trailer fields after the last chunk; CRLF and "0" inside a chunk's data.
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
                  3\r\n0\r\n\r\n0\r\nExpires: never\r\n\r\n",
                reply(ReplyKind::Ok, 3, 200, false),
            ),
            (
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: keep-alive, Close\r\n\r\n",
                reply(ReplyKind::Error, 0, 503, true),
            ),
            (
                b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx",
                reply(ReplyKind::Ok, 1, 200, true),
            ),
            (
                b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\nx",
                reply(ReplyKind::Ok, 1, 200, false),
            ),
            (
                b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
                reply(ReplyKind::Error, 0, 304, false),
            ),
        ];
        for (bytes, expected) in cases {
            assert_incremental(&P, bytes, expected);
        }
    }

    #[test]
    fn coalesced_replies() {
        assert_coalesced(
            &P,
            &[
                (
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                    reply(ReplyKind::Ok, 2, 200, false),
                ),
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
                    reply(ReplyKind::Ok, 2, 200, false),
                ),
                (
                    b"HTTP/1.1 204 No Content\r\n\r\n",
                    reply(ReplyKind::Ok, 0, 204, false),
                ),
                (
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
                    reply(ReplyKind::Miss, 0, 404, false),
                ),
            ],
        );
    }

    #[test]
    fn malformed_replies() {
        let cases: [(&[u8], &str); 10] = [
            (b"SSH-2.0-OpenSSH\r\n\r\n", "invalid"),
            (b"HTTP/1.1 200 OK\r\n\r\n", "no Content-Length, not chunked"),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                "chunked last",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                "Content-Length that is not a number",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "two different Content-Lengths",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
                "over the",
            ),
            (b"HTTP/1.1 100 Continue\r\n\r\n", "interim 1xx"),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "chunk size that is not hex",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
                "a chunk does not end where",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
                "chunk size that is not hex",
            ),
        ];
        for (bytes, problem) in cases {
            assert_malformed(&P, bytes, problem);
        }
        let mut endless_head = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        endless_head.resize(65 << 10, b'y');
        // (Not `assert_malformed`, whose every-prefix check is quadratic.)
        let error = P.parse(&endless_head).unwrap_err();
        assert!(
            error.problem().contains("no end of headers within"),
            "{error}"
        );
        assert_eq!(P.parse(&endless_head[..64 << 10]), Ok(None));
        let mut many_headers = b"HTTP/1.1 200 OK\r\n".to_vec();
        for _ in 0..65 {
            many_headers.extend_from_slice(b"X: y\r\n");
        }
        many_headers.extend_from_slice(b"\r\n");
        assert_malformed(&P, &many_headers, "too many headers");
        let mut many_trailers =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n".to_vec();
        for _ in 0..65 {
            many_trailers.extend_from_slice(b"T: x\r\n");
        }
        many_trailers.extend_from_slice(b"\r\n");
        assert_malformed(&P, &many_trailers, "trailer fields");
    }
}
