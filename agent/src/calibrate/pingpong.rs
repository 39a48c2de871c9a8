//! The floor of a request's latency here: a minimal busy-polling ping-pong over loopback.
//!
//! What a C programmer would write to find the lowest RTT the stack allows: one TCP
//! connection with `TCP_NODELAY`, 8-byte messages, both ends on non-blocking sockets
//! spinning on `read` (no epoll, no sleeping), each end pinned to its own core, and the
//! client timing each round trip with the TSC.
//!
//! Spinning needs a core per end. Two ends pinned to one core (a process confined to one
//! CPU, `taskset -c 0`) cannot both spin: the one that waits holds the core its peer needs
//! to answer until the scheduler's time slice ends, so every message costs a slice
//! (milliseconds) and 11,000 round trips take minutes. There the ends block in `read`
//! instead ([`Wait::Blocking`]): the kernel hands the core over as each message arrives,
//! and the RTT holds a context switch each way, which the result says.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use super::error::{CalibrateError, join};
use super::options::WARMUP_ROUND_TRIPS;
use super::spread::{us, us_f};
use crate::sys::pin_current_thread;

/// The message size, both ways.
const MESSAGE: usize = 8;

/// One message (either way) that takes longer than this means the peer is gone or stuck,
/// and the ping-pong fails.
pub const STALL: Duration = Duration::from_secs(2);

/// How long the server waits for the client to connect: loopback takes microseconds, and
/// a client that failed before connecting (it could not be pinned) never will.
const ACCEPT_PATIENCE: Duration = STALL;

/// How each end of the ping-pong waits for the other's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wait {
    /// Spinning on a non-blocking `read`: the floor, when each end has a core of its own.
    #[serde(rename = "busy-polling")]
    BusyPoll,
    /// Blocking in `read`, when both ends share one core: spinning there, each end would
    /// keep the core from its peer for a scheduler time slice per message.
    Blocking,
}

impl Wait {
    /// How the ends of a ping-pong between `client_cpu` and `server_cpu` wait: they spin
    /// only on distinct cores (each end is pinned to its own, so distinct cores are ones
    /// they can run on at once).
    pub fn between(client_cpu: usize, server_cpu: usize) -> Wait {
        if client_cpu == server_cpu {
            Wait::Blocking
        } else {
            Wait::BusyPoll
        }
    }

    /// `busy-polling` or `blocking`, as the JSON and the budget say it.
    pub fn name(self) -> &'static str {
        match self {
            Wait::BusyPoll => "busy-polling",
            Wait::Blocking => "blocking",
        }
    }
}

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
    /// How the ends waited for each other: busy-polling on two cores, blocking on one.
    pub wait: Wait,
    /// The ping-pong stopped at its time limit with fewer round trips than asked (a host
    /// that stalls): the figures are of those measured.
    pub stopped_at_limit: bool,
}

/// How much of the ping-pong to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Length {
    /// Round trips to measure after the warm-up (unless `duration` is given).
    pub round_trips: u64,
    /// Measure as many round trips as fit in this long instead, when given.
    pub duration: Option<Duration>,
    /// Stop after this long whatever is left, warm-up included (a host that stalls); the
    /// round trips measured by then stand.
    pub limit: Option<Duration>,
}

/// Runs the ping-pong [`Length`] asks between a client on `client_cpu` and a server on
/// `server_cpu`, busy-polling or blocking as [`Wait::between`] the two says.
pub(super) fn run(
    client_cpu: usize,
    server_cpu: usize,
    length: Length,
) -> Result<LoopbackRtt, CalibrateError> {
    let io = |what: &'static str| move |source| CalibrateError::Io { what, source };
    let wait = Wait::between(client_cpu, server_cpu);
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(io("ping-pong listen"))?;
    let addr = listener.local_addr().map_err(io("ping-pong listen"))?;
    let server = std::thread::spawn(move || serve(&listener, server_cpu, wait));
    let client = std::thread::spawn(move || {
        pin_current_thread(client_cpu)?;
        let stream = TcpStream::connect(addr).map_err(io("ping-pong connect"))?;
        let result = ping(&stream, length, wait);
        // Whatever happened, let the server see EOF and finish.
        let _ = stream.shutdown(Shutdown::Both);
        result
    });
    let client = join(client, "ping-pong client");
    let served = join(server, "ping-pong server");
    // The server's failure first: it explains the client's (a refused connection).
    served?;
    let (histogram, stopped_at_limit) = client?;
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
        wait,
        stopped_at_limit,
    })
}

/// The server: echoes every message until the client closes.
fn serve(listener: &TcpListener, cpu: usize, wait: Wait) -> Result<(), CalibrateError> {
    let io = |what: &'static str| move |source| CalibrateError::Io { what, source };
    pin_current_thread(cpu)?;
    let stream = accept(listener).map_err(io("ping-pong accept"))?;
    stream.set_nodelay(true).map_err(io("ping-pong server"))?;
    set_waiting(&stream, wait).map_err(io("ping-pong server"))?;
    let mut message = [0u8; MESSAGE];
    loop {
        match exchange(&stream, None, &mut message, wait) {
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

/// Accepts the client's connection, waiting at most [`ACCEPT_PATIENCE`].
fn accept(listener: &TcpListener) -> io::Result<TcpStream> {
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + ACCEPT_PATIENCE;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false)?;
                return Ok(stream);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_micros(100));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                return Err(io::Error::new(
                    ErrorKind::TimedOut,
                    format!("the client did not connect within {ACCEPT_PATIENCE:?}"),
                ));
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Makes `stream` wait as `wait` says: non-blocking to spin on, or blocking for at most
/// [`STALL`] per call.
fn set_waiting(stream: &TcpStream, wait: Wait) -> io::Result<()> {
    match wait {
        Wait::BusyPoll => stream.set_nonblocking(true),
        Wait::Blocking => {
            stream.set_nonblocking(false)?;
            stream.set_read_timeout(Some(STALL))?;
            stream.set_write_timeout(Some(STALL))
        }
    }
}

/// The client: warms up, then times round trips into a histogram (ns); also whether it
/// stopped at the [`Length::limit`] before the round trips asked.
fn ping(
    stream: &TcpStream,
    length: Length,
    wait: Wait,
) -> Result<(Histogram<u64>, bool), CalibrateError> {
    let io = |source| CalibrateError::Io {
        what: "ping-pong client",
        source,
    };
    stream.set_nodelay(true).map_err(io)?;
    set_waiting(stream, wait).map_err(io)?;
    let clock = quanta::Clock::new();
    let began = clock.raw();
    let limit_ns = length
        .limit
        .map(|l| u64::try_from(l.as_nanos()).unwrap_or(u64::MAX));
    let past_limit = |now: u64| limit_ns.is_some_and(|l| clock.delta_as_nanos(began, now) >= l);
    // 1 ns to 10 s.
    let mut rtts = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3)
        .map_err(|e| CalibrateError::Options(format!("RTT histogram: {e}")))?;
    let mut message = [0u8; MESSAGE];
    for warm in 0..WARMUP_ROUND_TRIPS {
        exchange(stream, Some(&mut message), &mut [0u8; MESSAGE], wait).map_err(io)?;
        if past_limit(clock.raw()) {
            return Err(CalibrateError::Limit {
                limit: length.limit.unwrap_or_default(),
                done: warm + 1,
            });
        }
    }
    let deadline = length.duration.map(|d| Instant::now() + d);
    let mut done = 0u64;
    let mut stopped_at_limit = false;
    loop {
        match deadline {
            // Checking the clock every 64 round trips keeps it out of the timed loop.
            Some(deadline) if done.is_multiple_of(64) && Instant::now() >= deadline => break,
            None if done >= length.round_trips => break,
            _ => {}
        }
        message = done.to_le_bytes();
        let mut reply = [0u8; MESSAGE];
        let start = clock.raw();
        exchange(stream, Some(&mut message), &mut reply, wait).map_err(io)?;
        let end = clock.raw();
        if reply != message {
            return Err(io(io::Error::new(
                ErrorKind::InvalidData,
                format!("round trip {done}: sent {message:?}, got back {reply:?}"),
            )));
        }
        rtts.saturating_record(clock.delta_as_nanos(start, end).max(1));
        done += 1;
        // The round trip's own end stamp: no clock read of its own.
        if past_limit(end) && (deadline.is_some() || done < length.round_trips) {
            stopped_at_limit = true;
            break;
        }
    }
    if rtts.is_empty() {
        return Err(CalibrateError::Options(
            "the ping-pong's duration was too short for a single round trip".into(),
        ));
    }
    Ok((rtts, stopped_at_limit))
}

/// One exchange: the client (`send` is `Some`) writes its message then reads the reply
/// into `buf`; the server reads a message into `buf` then writes it back. Spinning on the
/// non-blocking socket or blocking in each call, as `wait` says.
fn exchange(
    stream: &TcpStream,
    send: Option<&mut [u8; MESSAGE]>,
    buf: &mut [u8; MESSAGE],
    wait: Wait,
) -> io::Result<()> {
    match send {
        Some(message) => {
            write_all(stream, message, wait)?;
            read_all(stream, buf, wait)
        }
        None => {
            read_all(stream, buf, wait)?;
            write_all(stream, buf, wait)
        }
    }
}

fn read_all(mut stream: &TcpStream, buf: &mut [u8], wait: Wait) -> io::Result<()> {
    let mut got = 0;
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    while got < buf.len() {
        match stream.read(&mut buf[got..]) {
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if is_timeout(&e) => not_yet(wait, &mut spins, &mut since)?,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn write_all(mut stream: &TcpStream, buf: &[u8], wait: Wait) -> io::Result<()> {
    let mut sent = 0;
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    while sent < buf.len() {
        match stream.write(&buf[sent..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => sent += n,
            Err(e) if is_timeout(&e) => not_yet(wait, &mut spins, &mut since)?,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A non-blocking call that found nothing to do, or a blocking one whose timeout passed
/// (Linux says `EAGAIN` for both).
fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// A call that could not go on yet: spinning, one more spin (see [`stall_check`]);
/// blocking, the call already waited [`STALL`], so the peer is gone or stuck.
fn not_yet(wait: Wait, spins: &mut u32, since: &mut Option<Instant>) -> io::Result<()> {
    match wait {
        Wait::BusyPoll => stall_check(spins, since),
        Wait::Blocking => Err(stalled()),
    }
}

fn stalled() -> io::Error {
    io::Error::new(
        ErrorKind::TimedOut,
        format!("the peer did not answer within {STALL:?}"),
    )
}

/// Counts a fruitless spin; every [`SPINS_PER_CHECK`] of them, looks at the clock and
/// gives up once the wait has lasted [`STALL`].
fn stall_check(spins: &mut u32, since: &mut Option<Instant>) -> io::Result<()> {
    *spins += 1;
    if spins.is_multiple_of(SPINS_PER_CHECK) {
        let started = *since.get_or_insert_with(Instant::now);
        if started.elapsed() > STALL {
            return Err(stalled());
        }
    }
    Ok(())
}
