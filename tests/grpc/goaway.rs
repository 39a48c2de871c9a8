//! A raw HTTP/2 server on 127.0.0.1 that sends a GOAWAY at a known point, which grpcio
//! cannot be asked to do: on its first connection it answers [`ANSWERED`] calls, holds the
//! next [`HELD`] unanswered, and once [`EXTRA`] more have come sends GOAWAY naming the last
//! held stream with the code it was given. With NO_ERROR it then answers the held calls;
//! with an error it answers nothing more. It counts the streams above the GOAWAY's last
//! stream id that reached it, and closes when the client does. Later connections have
//! every call answered.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Calls answered on the first connection before any is held.
pub const ANSWERED: u32 = 5;
/// Calls held unanswered, the last of them the GOAWAY's last stream.
pub const HELD: u32 = 3;
/// Calls that must arrive after the held ones before the GOAWAY goes.
pub const EXTRA: u32 = 2;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The server, stopped and joined on drop.
pub struct GoAwayServer {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    above_last: Arc<AtomicU64>,
    accept: Option<JoinHandle<()>>,
}

impl GoAwayServer {
    /// Listens on a free port of 127.0.0.1; the first connection gets a GOAWAY with `code`.
    pub fn start(code: u32) -> GoAwayServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let above_last = Arc::new(AtomicU64::new(0));
        let (stop_, above) = (stop.clone(), above_last.clone());
        let accept = std::thread::spawn(move || {
            let mut first = true;
            let mut handlers = Vec::new();
            while !stop_.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((socket, _)) => {
                        let goaway = first.then_some(code);
                        first = false;
                        let (stop, above) = (stop_.clone(), above.clone());
                        handlers.push(std::thread::spawn(move || {
                            serve(socket, goaway, &stop, &above);
                        }));
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    Err(e) => panic!("accept: {e}"),
                }
            }
            for h in handlers {
                h.join().unwrap();
            }
        });
        GoAwayServer {
            addr,
            stop,
            above_last,
            accept: Some(accept),
        }
    }

    /// Streams above the GOAWAY's last stream id that reached the server.
    pub fn above_last(&self) -> u64 {
        self.above_last.load(Ordering::Relaxed)
    }
}

impl Drop for GoAwayServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// A successful unary reply on `stream`: `:status 200` and the content type (HPACK
/// static-table literals), an empty message, trailers `grpc-status: 0`.
fn answer(out: &mut Vec<u8>, stream: u32) {
    let mut headers = vec![0x88, 0x0f, 0x10, 16];
    headers.extend_from_slice(b"application/grpc");
    frame(out, 0x1, 0x4, stream, &headers);
    frame(out, 0x0, 0x0, stream, &[0; 5]);
    let mut trailers = vec![0x00, 11];
    trailers.extend_from_slice(b"grpc-status");
    trailers.extend_from_slice(&[1, b'0']);
    frame(out, 0x1, 0x4 | 0x1, stream, &trailers);
}

/// One connection: `goaway`, the code of the GOAWAY it sends (none: every call answered).
fn serve(mut socket: TcpStream, goaway: Option<u32>, stop: &AtomicBool, above: &AtomicU64) {
    socket.set_nonblocking(false).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut out = Vec::new();
    frame(&mut out, 0x4, 0, 0, &[]);
    if socket.write_all(&out).is_err() {
        return;
    }
    let (mut buf, mut filled, mut preface) = (vec![0u8; 1 << 16], 0, false);
    let (mut calls, mut held, mut last) = (0u32, Vec::new(), None::<u32>);
    while !stop.load(Ordering::Relaxed) {
        match socket.read(&mut buf[filled..]) {
            Ok(0) => return,
            Ok(n) => filled += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => return,
        }
        let mut used = 0;
        if !preface {
            if filled < PREFACE.len() {
                continue;
            }
            assert_eq!(&buf[..PREFACE.len()], PREFACE);
            (preface, used) = (true, PREFACE.len());
        }
        let mut out = Vec::new();
        while filled - used >= 9 {
            let b = &buf[used..filled];
            let len = u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize;
            if b.len() < 9 + len {
                break;
            }
            let (kind, flags) = (b[3], b[4]);
            let stream = u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff;
            used += 9 + len;
            match kind {
                0x4 if flags & 0x1 == 0 => frame(&mut out, 0x4, 0x1, 0, &[]),
                0x6 if flags & 0x1 == 0 => frame(&mut out, 0x6, 0x1, 0, &b[9..17]),
                // A call whose DATA ended its stream.
                0x0 if flags & 0x1 != 0 => {
                    calls += 1;
                    match (goaway, last) {
                        (None, _) => answer(&mut out, stream),
                        (Some(_), Some(last)) => {
                            if stream > last {
                                above.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        (Some(code), None) => {
                            if calls <= ANSWERED {
                                answer(&mut out, stream);
                            } else if calls <= ANSWERED + HELD {
                                held.push(stream);
                            } else {
                                above.fetch_add(1, Ordering::Relaxed);
                                if calls == ANSWERED + HELD + EXTRA {
                                    let named = *held.last().unwrap();
                                    last = Some(named);
                                    let mut payload = named.to_be_bytes().to_vec();
                                    payload.extend_from_slice(&code.to_be_bytes());
                                    frame(&mut out, 0x7, 0, 0, &payload);
                                    if code == 0 {
                                        held.iter().for_each(|&s| answer(&mut out, s));
                                    }
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        buf.copy_within(used..filled, 0);
        filled -= used;
        if !out.is_empty() && socket.write_all(&out).is_err() {
            return;
        }
    }
}
