//! The floor of a request's latency here: a minimal busy-polling ping-pong over loopback.
//!
//! What a C programmer would write to find the lowest RTT the stack allows: one TCP
//! connection with `TCP_NODELAY`, 8-byte messages, both ends on non-blocking sockets
//! spinning on `read` (no epoll, no sleeping), each end pinned to its own core, and the
//! client timing each round trip with the TSC.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::{CalibrateError, WARMUP_ROUND_TRIPS, join, us, us_f};
use crate::sys::pin_current_thread;

/// The message size, both ways.
const MESSAGE: usize = 8;

/// A round trip that takes longer than this means the peer is gone or stuck.
const STALL: Duration = Duration::from_secs(2);

/// Spins between two checks of the clock while waiting on a socket.
const SPINS_PER_CHECK: u32 = 4_096;

/// The ping-pong's round-trip times, in µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoopbackRtt {
    /// The median (HDR histogram, 3 significant digits, as every percentile here).
    pub p50: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The 99.9th percentile.
    pub p999: f64,
    /// The fastest round trip.
    pub min: f64,
    /// The slowest round trip.
    pub max: f64,
    /// The mean.
    pub mean: f64,
    /// Round trips measured (after the warm-up).
    pub round_trips: u64,
    /// The message size, both ways, in bytes.
    pub message_bytes: usize,
    /// The client's core.
    pub client_cpu: usize,
    /// The server's core.
    pub server_cpu: usize,
}

/// Runs `round_trips` (or, with `duration`, as many as fit in it) round trips between a
/// client on `client_cpu` and a server on `server_cpu`.
pub(super) fn run(
    client_cpu: usize,
    server_cpu: usize,
    round_trips: u64,
    duration: Option<Duration>,
) -> Result<LoopbackRtt, CalibrateError> {
    let io = |what: &'static str| move |source| CalibrateError::Io { what, source };
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(io("ping-pong listen"))?;
    let addr = listener.local_addr().map_err(io("ping-pong listen"))?;
    let server = std::thread::spawn(move || serve(&listener, server_cpu));
    let client = std::thread::spawn(move || {
        pin_current_thread(client_cpu)?;
        let stream = TcpStream::connect(addr).map_err(io("ping-pong connect"))?;
        let result = ping(&stream, round_trips, duration);
        // Whatever happened, let the server see EOF and finish.
        let _ = stream.shutdown(Shutdown::Both);
        result
    });
    let client = join(client, "ping-pong client");
    let served = join(server, "ping-pong server");
    // The server's failure first: it explains the client's (a refused connection).
    served?;
    let histogram = client?;
    Ok(LoopbackRtt {
        p50: us(histogram.value_at_quantile(0.5)),
        p99: us(histogram.value_at_quantile(0.99)),
        p999: us(histogram.value_at_quantile(0.999)),
        min: us(histogram.min()),
        max: us(histogram.max()),
        mean: us_f(histogram.mean()),
        round_trips: histogram.len(),
        message_bytes: MESSAGE,
        client_cpu,
        server_cpu,
    })
}

/// The server: echoes every message until the client closes.
fn serve(listener: &TcpListener, cpu: usize) -> Result<(), CalibrateError> {
    let io = |what: &'static str| move |source| CalibrateError::Io { what, source };
    pin_current_thread(cpu)?;
    let (stream, _) = listener.accept().map_err(io("ping-pong accept"))?;
    stream.set_nodelay(true).map_err(io("ping-pong server"))?;
    stream
        .set_nonblocking(true)
        .map_err(io("ping-pong server"))?;
    let mut message = [0u8; MESSAGE];
    loop {
        match spin_exchange(&stream, None, &mut message) {
            Ok(()) => {}
            // The client is done (or gone): the measurement is the client's to judge.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(()),
            Err(source) => {
                return Err(CalibrateError::Io {
                    what: "ping-pong server",
                    source,
                });
            }
        }
    }
}

/// The client: warms up, then times round trips into a histogram (ns).
fn ping(
    stream: &TcpStream,
    round_trips: u64,
    duration: Option<Duration>,
) -> Result<Histogram<u64>, CalibrateError> {
    let io = |source| CalibrateError::Io {
        what: "ping-pong client",
        source,
    };
    stream.set_nodelay(true).map_err(io)?;
    stream.set_nonblocking(true).map_err(io)?;
    let clock = quanta::Clock::new();
    // 1 ns to 10 s.
    let mut rtts = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3)
        .map_err(|e| CalibrateError::Options(format!("RTT histogram: {e}")))?;
    let mut message = [0u8; MESSAGE];
    for _ in 0..WARMUP_ROUND_TRIPS {
        spin_exchange(stream, Some(&mut message), &mut [0u8; MESSAGE]).map_err(io)?;
    }
    let deadline = duration.map(|d| Instant::now() + d);
    let mut done = 0u64;
    loop {
        match deadline {
            // Checking the clock every 64 round trips keeps it out of the timed loop.
            Some(deadline) if done.is_multiple_of(64) && Instant::now() >= deadline => break,
            None if done >= round_trips => break,
            _ => {}
        }
        message = done.to_le_bytes();
        let mut reply = [0u8; MESSAGE];
        let start = clock.raw();
        spin_exchange(stream, Some(&mut message), &mut reply).map_err(io)?;
        let end = clock.raw();
        if reply != message {
            return Err(io(io::Error::new(
                ErrorKind::InvalidData,
                format!("round trip {done}: sent {message:?}, got back {reply:?}"),
            )));
        }
        rtts.saturating_record(clock.delta_as_nanos(start, end).max(1));
        done += 1;
    }
    if rtts.is_empty() {
        return Err(CalibrateError::Options(
            "the ping-pong's duration was too short for a single round trip".into(),
        ));
    }
    Ok(rtts)
}

/// One exchange, spinning on the non-blocking socket: the client (`send` is `Some`)
/// writes its message then reads the reply into `buf`; the server reads a message into
/// `buf` then writes it back.
fn spin_exchange(
    stream: &TcpStream,
    send: Option<&mut [u8; MESSAGE]>,
    buf: &mut [u8; MESSAGE],
) -> io::Result<()> {
    match send {
        Some(message) => {
            spin_write(stream, message)?;
            spin_read(stream, buf)
        }
        None => {
            spin_read(stream, buf)?;
            spin_write(stream, buf)
        }
    }
}

fn spin_read(mut stream: &TcpStream, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    while got < buf.len() {
        match stream.read(&mut buf[got..]) {
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => stall_check(&mut spins, &mut since)?,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn spin_write(mut stream: &TcpStream, buf: &[u8]) -> io::Result<()> {
    let mut sent = 0;
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    while sent < buf.len() {
        match stream.write(&buf[sent..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => stall_check(&mut spins, &mut since)?,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Counts a fruitless spin; every [`SPINS_PER_CHECK`] of them, looks at the clock and
/// gives up once the wait has lasted [`STALL`].
fn stall_check(spins: &mut u32, since: &mut Option<Instant>) -> io::Result<()> {
    *spins += 1;
    if spins.is_multiple_of(SPINS_PER_CHECK) {
        let started = *since.get_or_insert_with(Instant::now);
        if started.elapsed() > STALL {
            return Err(io::Error::new(
                ErrorKind::TimedOut,
                format!("the peer did not answer within {STALL:?}"),
            ));
        }
    }
    Ok(())
}
