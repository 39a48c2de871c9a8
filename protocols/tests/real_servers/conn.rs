//! A blocking client connection speaking one protocol through vernier-protocols.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use vernier_protocols::{Protocol, Reply, Request};

pub struct Conn {
    stream: TcpStream,
    protocol: Protocol,
    /// Received bytes not yet parsed.
    buf: Vec<u8>,
}

impl Conn {
    pub fn open(addr: SocketAddr, protocol: Protocol) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect to the server");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("set a timeout");
        stream.set_nodelay(true).expect("set TCP_NODELAY");
        Conn {
            stream,
            protocol,
            buf: Vec::new(),
        }
    }

    /// Sends the requests in one write, so the server sees them pipelined.
    pub fn send(&mut self, requests: &[(Request<'_>, u32)]) {
        let mut out = Vec::new();
        for (request, opaque) in requests {
            self.protocol
                .encode(request, *opaque, &mut out)
                .unwrap_or_else(|e| panic!("encode {request:?}: {e}"));
        }
        self.send_raw(&out);
    }

    /// Sends bytes as they are, for replies vernier's requests do not provoke.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// The next reply, reading until it is complete.
    pub fn reply(&mut self) -> Reply {
        self.reply_with_bytes().0
    }

    /// The next reply and the bytes it was made of.
    pub fn reply_with_bytes(&mut self) -> (Reply, Vec<u8>) {
        let mut chunk = [0u8; 64 << 10];
        loop {
            match self.protocol.parse(&self.buf) {
                Ok(Some((reply, consumed))) => {
                    let bytes = self.buf.drain(..consumed).collect();
                    return (reply, bytes);
                }
                Ok(None) => {}
                Err(error) => panic!("{error}"),
            }
            let n = self.stream.read(&mut chunk).expect("read a reply");
            assert!(n > 0, "the server closed the connection mid-reply");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// One request, one reply.
    pub fn call(&mut self, request: Request<'_>, opaque: u32) -> Reply {
        self.send(&[(request, opaque)]);
        self.reply()
    }

    /// Asserts nothing more arrived than the replies parsed, and that the server closes the
    /// connection now (after a reply that said it would).
    pub fn assert_closed_by_server(&mut self) {
        assert!(self.buf.is_empty(), "bytes after the last reply");
        let mut byte = [0u8; 1];
        assert_eq!(self.stream.read(&mut byte).expect("read the close"), 0);
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    pub fn assert_drained(&self) {
        assert!(
            self.buf.is_empty(),
            "unparsed bytes left: {:?}",
            self.buf.escape_ascii().to_string()
        );
    }
}
