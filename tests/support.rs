//! What the end-to-end tests share: running the `vernier` binary built with them.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

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
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let line = lines.next().expect("a first line").expect("utf-8");
        let addr = line.rsplit(' ').next().unwrap_or_default().to_string();
        assert!(line.contains("listening on"), "{line}");
        std::thread::spawn(move || lines.for_each(drop));
        AgentProcess { child, addr }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `vernier serve --protocol synthetic` as a process on a free loopback port (sleeping in
/// epoll between requests); killed by PID on drop.
#[allow(dead_code)] // Not every test binary starts a server this way.
pub struct ServeProcess {
    pub child: Child,
    pub addr: std::net::SocketAddr,
}

/// Starts a [`ServeProcess`] and waits for its `listening on` line.
#[allow(dead_code)]
pub fn vernier_serve() -> ServeProcess {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vernier"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--protocol",
            "synthetic",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vernier serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let line = lines.next().expect("a first line").expect("utf-8");
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("unexpected first line: {line}"));
    std::thread::spawn(move || lines.for_each(drop));
    ServeProcess { child, addr }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
