//! What the end-to-end tests share: running the `vernier` binary built with them, the
//! processes they start (each killed by PID when dropped), the machine they take turns on.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

static MACHINE: Mutex<()> = Mutex::new(());

/// The machine for one test at a time: two loads on two cores would measure each other.
#[allow(dead_code)] // Not every test binary runs loads.
pub fn machine() -> MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The load the in-process engine tests run: one unpinned worker speaking `protocol` to
/// `target` over 4 TCP connections at depth 4, kernel timestamps, seed 7, 1 s timeout.
#[allow(dead_code)]
pub fn load_spec(
    target: std::net::SocketAddr,
    protocol: vernier_protocols::Protocol,
    workload: vernier_agent::Workload,
) -> vernier_agent::LoadSpec {
    use vernier_agent::sys::{TimestampMode, Transport};
    vernier_agent::LoadSpec {
        target,
        transport: Transport::Tcp,
        protocol,
        workload,
        workers: 1,
        cpus: Vec::new(),
        connections: 4,
        depth: 4,
        kind: vernier_agent::AgentKind::Symmetric,
        timestamps: TimestampMode::Kernel,
        poll: vernier_agent::PollMode::Sleep,
        seed: 7,
        timeout: std::time::Duration::from_secs(1),
        duet: None,
    }
}

/// A reason as a result's JSON carries it, read back into its type: tests judge its kind
/// and figures, never its name or its sentence as text.
#[allow(dead_code)]
pub fn reason(v: &serde_json::Value) -> vernier_workbench::coordinator::Reason {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("a reason: {e}: {v:#}"))
}

/// The exit code of an answer's verdict as the JSON writes it: 0 converged (or accepted),
/// 4 wide, 3 N/A.
#[allow(dead_code)]
pub fn exit_of(verdict: &serde_json::Value) -> i32 {
    match verdict.as_str() {
        Some("converged" | "accepted") => 0,
        Some("wide") => 4,
        _ => 3,
    }
}

/// The kind of a point's first reason (`None`: it has none).
#[allow(dead_code)]
pub fn first_kind(point: &serde_json::Value) -> Option<vernier_workbench::coordinator::ReasonKind> {
    point["reasons"]
        .as_array()
        .and_then(|r| r.first())
        .map(|r| reason(r).kind())
}

/// A run directory's run.json.
#[allow(dead_code)]
pub fn read_run(dir: &Path) -> serde_json::Value {
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `vernier run SCENARIO --headless --record RECORD` started with `env`, its output piped.
#[allow(dead_code)]
pub fn spawn_run(scenario: &Path, record: &Path, env: &[(&str, &str)]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_vernier"))
        .arg("run")
        .arg(scenario)
        .arg("--headless")
        .arg("--record")
        .arg(record)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vernier run")
}

/// Runs `vernier ARGS` to completion and returns what it printed and its exit status.
#[allow(dead_code)] // Not every test binary runs the command this way.
pub fn vernier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args(args)
        .output()
        .expect("run vernier")
}

/// `vernier agent` started as a process on a free port; killed by PID on drop.
#[allow(dead_code)] // Not every test binary starts agents.
pub struct AgentProcess {
    pub child: Child,
    /// `host:port` it listens on.
    pub addr: String,
}

#[allow(dead_code)]
impl AgentProcess {
    /// Starts an agent holding `token` and waits for its `listening on` line.
    pub fn start(token: &str) -> AgentProcess {
        AgentProcess::start_with(token, &[])
    }

    /// Starts an agent holding `token`, with more `vernier agent` options.
    pub fn start_with(token: &str, options: &[&str]) -> AgentProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args(["agent", "--listen", "127.0.0.1:0"])
            .args(options)
            .env("VERNIER_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start vernier agent");
        let addr = listening_addr(&mut child);
        AgentProcess { child, addr }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `vernier serve --protocol PROTOCOL OPTIONS` as a process on a free loopback port;
/// killed by PID on drop.
#[allow(dead_code)] // Not every test binary starts a server this way.
pub struct ServeProcess {
    pub child: Child,
    pub addr: std::net::SocketAddr,
}

#[allow(dead_code)]
impl ServeProcess {
    /// Starts the server and waits for its `listening on` line.
    pub fn start(options: &[&str]) -> ServeProcess {
        ServeProcess::start_protocol("synthetic", options)
    }

    /// Starts the server speaking `protocol` (synthetic, memcached, http, echo, framed).
    pub fn start_protocol(protocol: &str, options: &[&str]) -> ServeProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args(["serve", "--listen", "127.0.0.1:0", "--protocol", protocol])
            .args(options)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start vernier serve");
        let addr = listening_addr(&mut child)
            .parse()
            .expect("a socket address");
        ServeProcess { child, addr }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address in a started `vernier agent` or `vernier serve`'s first stderr line
/// ("[vernier agent: ]listening on ADDR[ (TLS)]"); the rest of its stderr is drained.
#[allow(dead_code)]
pub fn listening_addr(child: &mut Child) -> String {
    let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let line = lines.next().expect("a first line").expect("utf-8");
    let addr = line
        .split_once("listening on ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    std::thread::spawn(move || lines.for_each(drop));
    addr
}

/// Runs `program ARGS` (in `dir`, if given) and asserts it succeeded, showing its stderr
/// when not.
#[allow(dead_code)]
pub fn run_ok(program: &str, args: &[&str], dir: Option<&Path>) {
    let mut command = Command::new(program);
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{program} is needed (tests/run.sh installs it): {e}"));
    assert!(
        out.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A throwaway CA and an agent certificate it signed, for 127.0.0.1 and `agent.test`,
/// made with the openssl command in `dir`: (ca.pem, agent.pem, agent.key).
#[allow(dead_code)]
pub fn tls_files(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let openssl = |args: &[&str]| run_ok("openssl", args, Some(dir));
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=vernier test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"],
            &ec[..],
            &[
                "-keyout",
                "agent.key",
                "-out",
                "agent.csr",
                "-subj",
                "/CN=agent",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:agent.test\n",
    )
    .expect("san.ext");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "agent.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "agent.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("agent.pem"),
        dir.join("agent.key"),
    )
}

/// Says, where the person running the tests sees it, that `test` did not run and why: a
/// test that cannot run here (not root) passes, and must not pass silently. libtest
/// captures `eprintln!` of passing tests, not writes to the process's stderr.
#[allow(dead_code)] // Not every test binary has tests that need root.
pub fn did_not_run(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "NOT RUN: {test}: {why}");
}

/// Keys for a protocol that takes keys alone (declared, gRPC): 100 of 16 bytes, uniform.
#[allow(dead_code)]
pub fn keys() -> vernier_agent::Workload {
    use vernier_protocols::{KeyDist, KvWorkload, SizeDist};
    vernier_agent::Workload::KeyValue(KvWorkload {
        keys: 100,
        key_size: SizeDist::fixed(16),
        value_size: SizeDist::fixed(0),
        read_ratio: 1.0,
        key_dist: KeyDist::Uniform,
        key: None,
    })
}

/// Loads `spec` in process at `rate` (exponential gaps) for `duration`, pauses, gives the
/// requests in flight `drain` to finish, stops: every sample and the counters.
#[allow(dead_code)]
pub fn run_engine(
    spec: vernier_agent::LoadSpec,
    rate: f64,
    duration: std::time::Duration,
    drain: std::time::Duration,
) -> (Vec<vernier_agent::Batch>, vernier_agent::Counters) {
    let engine = vernier_agent::Engine::start(spec).unwrap();
    engine.set_sampling(1.0, 1);
    engine.set_load(rate, &vernier_protocols::InterArrival::Exp);
    std::thread::sleep(duration);
    engine.pause();
    std::thread::sleep(drain);
    let counters = vernier_agent::Counters::sum(&engine.counters());
    (engine.stop().unwrap(), counters)
}

/// How many of the samples in `batches` had `outcome`.
#[allow(dead_code)]
pub fn outcomes(batches: &[vernier_agent::Batch], outcome: vernier_agent::Outcome) -> usize {
    batches
        .iter()
        .flat_map(|b| &b.samples)
        .filter(|s| s.outcome == outcome as u8)
        .count()
}

/// Every request answered and a success: none failed, none malformed, none an error, each
/// sample an `ok` with its latency (kernel timestamps on loopback stamp every request).
#[allow(dead_code)]
pub fn assert_all_answered(batches: &[vernier_agent::Batch], c: &vernier_agent::Counters) {
    assert_eq!(
        (c.failed, c.parse_errors, c.error_replies),
        (0, 0, 0),
        "{c:?}"
    );
    assert_eq!(
        outcomes(batches, vernier_agent::Outcome::Ok) as u64,
        c.received
    );
    assert!(
        batches
            .iter()
            .flat_map(|b| &b.samples)
            .all(|s| s.latency_ns > 0)
    );
}
