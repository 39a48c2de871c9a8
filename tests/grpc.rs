//! gRPC against a real server: grpcio's (the C core, in Python: `fixtures/grpc/server.py`,
//! installed by tests/env.sh), which encodes its headers with HPACK's dynamic table and
//! Huffman codes. Unary calls over h2c through the engine (every call answered, kernel
//! timestamps on each); an error status counted as an outcome; `vernier run grpc://...`
//! end to end, converged or an honest N/A; and the bad inputs (a .proto that does not
//! parse, a method it lacks, a streaming method), each an error that names what and where.
//!
//! A server that rotates its connections (grpcio's `max_connection_age`) costs no call, and
//! a GOAWAY with an error code (from a raw HTTP/2 server, `grpc/goaway.rs`) fails exactly
//! the calls it names, the ones above its last stream sent again.
//!
//! Every load here is bounded (≤ 25 s at ≤ 1,000 calls/s) and goes to 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "grpc/goaway.rs"]
mod goaway;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::{keys, load_spec as spec, outcomes};
use vernier_agent::{Batch, Counters, LoadSpec, Outcome};
use vernier_protocols::Protocol;
use vernier_protocols::grpc::{Grpc, TlsMapping};
use vernier_workbench::scenario::proto::compile_proto;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/grpc")
}

/// The grpcio server, killed by PID on drop.
struct GrpcServer {
    child: Child,
    addr: std::net::SocketAddr,
}

impl GrpcServer {
    /// Starts `fixtures/grpc/server.py` with tests/env.sh's Python (`VERNIER_PYTHON`), or
    /// `python3` when run outside it, with `options`.
    fn start_with(options: &[&str]) -> GrpcServer {
        let python = std::env::var("VERNIER_PYTHON").unwrap_or_else(|_| "python3".into());
        let mut child = Command::new(&python)
            .arg(fixtures().join("server.py"))
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{python} (tests/run.sh sets up grpcio): {e}"));
        let addr = support::listening_addr(&mut child).parse().unwrap();
        GrpcServer { child, addr }
    }
}

impl GrpcServer {
    /// Starts the server over h2c.
    fn start() -> GrpcServer {
        GrpcServer::start_with(&[])
    }
}

impl Drop for GrpcServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Loads at `rate` for `duration`, lets in-flight calls finish, stops.
fn run(spec: LoadSpec, rate: f64, duration: Duration) -> (Vec<Batch>, Counters) {
    support::run_engine(spec, rate, duration, Duration::from_millis(500))
}

/// A protocol calling `method` of bench.proto with `request` at `addr`.
fn grpc(method: &str, request: &str, addr: std::net::SocketAddr) -> Protocol {
    let descriptors = compile_proto(&fixtures().join("bench.proto"), &[]).unwrap();
    Grpc::protocol(&descriptors, method, request, &addr.to_string(), None).unwrap()
}

#[test]
fn unary_calls_to_a_grpcio_server_are_answered_and_kernel_stamped() {
    let _one = support::machine();
    let server = GrpcServer::start();
    let protocol = grpc(
        "bench.Echo/Call",
        r#"{"key": "{key}", "seq": "{seq}", "payload": "{random:32}"}"#,
        server.addr,
    );
    let (batches, c) = run(
        spec(server.addr, protocol, keys()),
        500.0,
        Duration::from_secs(2),
    );
    assert_eq!(c.sent, c.received + c.failed + c.in_flight, "{c:?}");
    assert!(c.received > 600, "{c:?}");
    assert_eq!(c.in_flight, 0, "{c:?}");
    support::assert_all_answered(&batches, &c);
    // Every call's TX stamp found (the HTTP/2 preface and acknowledgements counted as
    // no call's bytes).
    assert!(c.tx_timestamps_missing == 0, "{c:?}");
}

#[test]
fn an_error_status_is_counted_as_an_outcome() {
    let _one = support::machine();
    let server = GrpcServer::start();
    let protocol = grpc("bench.Echo/Fail", r#"{"key": "{key}"}"#, server.addr);
    let (batches, c) = run(
        spec(server.addr, protocol, keys()),
        300.0,
        Duration::from_secs(1),
    );
    assert!(c.received > 150, "{c:?}");
    assert_eq!((c.failed, c.parse_errors), (0, 0), "{c:?}");
    assert_eq!(c.error_replies, c.received, "{c:?}");
    assert_eq!(outcomes(&batches, Outcome::Error) as u64, c.received);
}

#[test]
fn vernier_run_measures_a_grpc_url() {
    let _one = support::machine();
    let server = GrpcServer::start();
    let url = format!("grpc://{}/bench.Echo/Call", server.addr);
    let proto = fixtures().join("bench.proto");
    let record = tempfile::tempdir().unwrap();
    let out = support::vernier(&[
        "run",
        &url,
        "--record",
        record.path().to_str().unwrap(),
        "--proto",
        proto.to_str().unwrap(),
        "--message",
        r#"{"key": "{key}"}"#,
        "--load",
        "1000",
        "--width",
        "20%",
        "--duration",
        "25s",
        "--headless",
        "--output",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let result: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    // One load: the result is its point.
    let point = &result;
    // Converged (exit 0), wide (4) or N/A (3) with its reasons; never a failure to run.
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 3 | 4)),
        "{code:?}: {stderr}\n{result:#}"
    );
    assert!(point["samples"].as_u64().unwrap() > 1_000, "{point:#}");
    assert_eq!(point["agents"][0]["errors"].as_u64(), Some(0), "{point:#}");
    if code == Some(3) {
        assert!(
            point["reasons"].as_array().is_some_and(|r| !r.is_empty()),
            "an N/A without its reason: {point:#}"
        );
    }
    eprintln!(
        "grpc at 1000/s: {} ({} samples)",
        point["verdict"], point["samples"]
    );
}

/// grpcio sending each connection a GOAWAY once it is 1 s old (as grpc-go's
/// MaxConnectionAge and Envoy's drains do): over 5 s the connections are replaced several
/// times and no call fails; a call the server refused unprocessed is sent again, counted.
#[test]
fn a_server_rotating_its_connections_costs_no_call() {
    let _one = support::machine();
    let server = GrpcServer::start_with(&["--max-connection-age-ms", "1000"]);
    let protocol = grpc(
        "bench.Echo/Call",
        r#"{"key": "{key}", "seq": "{seq}"}"#,
        server.addr,
    );
    let (batches, c) = run(
        spec(server.addr, protocol, keys()),
        300.0,
        Duration::from_secs(5),
    );
    eprintln!("max_connection_age 1 s, 300 calls/s for 5 s: {c:?}");
    assert!(c.received > 1_200, "{c:?}");
    // Four connections, each at least 1 s old by the end: at least one rotation each.
    assert!(c.reconnects >= 4, "{c:?}");
    assert_eq!((c.timeouts, c.in_flight), (0, 0), "{c:?}");
    assert_eq!(c.sent, c.received + c.failed + c.retried, "{c:?}");
    support::assert_all_answered(&batches, &c);
}

/// A raw server's GOAWAY with an error code on the first connection, after it answered
/// [`goaway::ANSWERED`] calls and held [`goaway::HELD`]: the held calls, which the GOAWAY
/// names as perhaps processed, fail, exactly those; every call above its last stream is
/// sent again on a new connection and answered there. With NO_ERROR, none fails.
#[test]
fn a_goaway_with_an_error_fails_exactly_the_calls_it_names() {
    let _one = support::machine();
    // NO_ERROR, PROTOCOL_ERROR, ENHANCE_YOUR_CALM.
    for (code, fail) in [(0x0, 0), (0x1, goaway::HELD), (0xb, goaway::HELD)] {
        let server = goaway::GoAwayServer::start(code);
        // One connection deep enough to hold the held calls and those after them.
        let spec = LoadSpec {
            connections: 1,
            depth: 16,
            ..spec(
                server.addr,
                grpc("bench.Echo/Call", r#"{"key": "{key}"}"#, server.addr),
                keys(),
            )
        };
        let (batches, c) = run(spec, 200.0, Duration::from_millis(1_500));
        eprintln!(
            "GOAWAY code {code}: {c:?}, {} above its last stream",
            server.above_last()
        );
        assert_eq!(c.failed, u64::from(fail), "code {code}: {c:?}");
        assert!(
            server.above_last() >= u64::from(goaway::EXTRA),
            "code {code}"
        );
        assert_eq!(c.retried, server.above_last(), "code {code}: {c:?}");
        assert_eq!(
            (c.error_replies, c.parse_errors, c.timeouts),
            (0, 0, 0),
            "{c:?}"
        );
        assert_eq!(c.sent, c.received + c.failed + c.retried, "{c:?}");
        assert!(c.reconnects >= 1 && c.received > 200, "{c:?}");
        assert_eq!(outcomes(&batches, Outcome::Ok) as u64, c.received);
    }
}

/// Over TLS (h2 by ALPN) against grpcio's TLS, the server's certificate checked against a
/// CA of the test's own: every call answered. Against a CA that did not sign it, the
/// handshake fails, each connection is replaced, and the calls fail, counted, with no
/// panic.
#[test]
fn calls_over_tls_are_answered_and_a_certificate_of_another_ca_refused() {
    let _one = support::machine();
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = support::tls_files(dir.path());
    let server = GrpcServer::start_with(&[
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let descriptors = compile_proto(&fixtures().join("bench.proto"), &[]).unwrap();
    let over = |ca_pem: String| {
        let tls = TlsMapping {
            ca_pem: Some(ca_pem),
            server_name: None,
        };
        let authority = server.addr.to_string();
        Grpc::protocol(
            &descriptors,
            "bench.Echo/Call",
            r#"{"key": "{key}"}"#,
            &authority,
            Some(tls),
        )
        .unwrap()
    };
    let protocol = over(std::fs::read_to_string(&ca).unwrap());
    assert_eq!(protocol.name(), "grpcs");
    let (batches, c) = run(
        spec(server.addr, protocol, keys()),
        300.0,
        Duration::from_secs(1),
    );
    assert!(c.received > 150, "{c:?}");
    support::assert_all_answered(&batches, &c);

    // Another CA: the certificate is refused.
    let other = tempfile::tempdir().unwrap();
    let (other_ca, _, _) = support::tls_files(other.path());
    let protocol = over(std::fs::read_to_string(&other_ca).unwrap());
    let (_, c) = run(
        spec(server.addr, protocol, keys()),
        300.0,
        Duration::from_millis(500),
    );
    assert_eq!(c.received, 0, "{c:?}");
    assert!(c.parse_errors > 0 && c.reconnects > 0, "{c:?}");
}

/// Each bad gRPC input names what and where, before anything is sent.
#[test]
fn bad_grpc_inputs_are_errors_that_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.proto");
    std::fs::write(
        &bad,
        "syntax = \"proto3\";\nmessage A {\n  strin x = 1;\n}\n",
    )
    .unwrap();
    let good = fixtures().join("bench.proto");
    let cases: [(&str, &Path, &[&str]); 4] = [
        ("bench.Echo/Call", &bad, &["bad.proto", ":3:"]),
        ("bench.Echo/Nope", &good, &["Nope", "Call"]),
        ("bench.Echo/Watch", &good, &["Watch", "unary"]),
        (
            "bench.Missing/Call",
            &good,
            &["bench.Missing", "bench.Echo"],
        ),
    ];
    for (method, proto, says) in cases {
        let url = format!("grpc://127.0.0.1:9/{method}");
        let out = support::vernier(&[
            "run",
            &url,
            "--proto",
            proto.to_str().unwrap(),
            "--print-scenario",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{method}: {stderr}");
        for word in says {
            assert!(stderr.contains(word), "{method}: no {word:?} in: {stderr}");
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // A request that does not fit the message names the field.
    let out = support::vernier(&[
        "run",
        "grpc://127.0.0.1:9/bench.Echo/Call",
        "--proto",
        good.to_str().unwrap(),
        "--message",
        r#"{"kee": "{key}"}"#,
        "--print-scenario",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("kee"), "{stderr}");
    // A URL without the method says how to write one.
    let out = support::vernier(&["run", "grpc://127.0.0.1:9", "--print-scenario"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("package.Service/Method"), "{stderr}");
}
