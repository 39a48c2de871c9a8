//! Agents on other hosts, over SSH: the system's `ssh` through the openssh crate, so that
//! `~/.ssh/config`, keys and ssh-agent work as they do for `ssh HOST` (or the file that
//! `VERNIER_SSH_CONFIG` names).
//!
//! The running `vernier` binary is copied to `~/.cache/vernier/` on the host, once per
//! build: its name carries the version and a fingerprint of its bytes. It is started there
//! as `vernier agent` on the host's loopback, and the fresh random token it must demand is
//! written to its stdin, never on a command line (which `ps` shows) and never printed. The
//! coordinator reaches it through an SSH port forward from this host's loopback, so the
//! control channel is SSH's. [`Deployed::stop`] shuts the agent down; if the coordinator
//! dies instead, the agent's lease stops its load and the closed SSH session ends it.

use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openssh::{ForwardType, KnownHosts, Session, SessionBuilder, Socket, Stdio};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use vernier_agent::client::{AgentClient, chain};

use crate::error::Error;

/// How long the SSH connection, the copy and the agent's start may each take.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);
/// Where the binary goes on the host, under the login directory.
const REMOTE_DIR: &str = ".cache/vernier";

/// An agent started on a host.
pub struct Deployed {
    /// The SSH destination.
    pub host: String,
    /// Where the coordinator reaches it: a forwarded port on this host's loopback.
    pub address: String,
    /// The token it demands (never printed).
    pub token: String,
    /// Whether the binary had to be copied (else it was there from an earlier run).
    pub copied: bool,
    /// Where the binary is on the host, under the login directory.
    pub binary: String,
    /// How long reaching the host, copying and starting took.
    pub took: Duration,
    session: Arc<Session>,
    child: openssh::Child<Arc<Session>>,
}

impl std::fmt::Debug for Deployed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Deployed")
            .field("host", &self.host)
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

fn failed(host: &str, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Failed(format!("agent on {host}: {what}: {e}"))
}

/// An SSH error with its causes (what ssh itself said is in the last one).
fn ssh_failed(host: &str, what: &str, e: &openssh::Error) -> Error {
    failed(host, what, chain(e))
}

/// FNV-1a over the binary: tells builds apart (not a security measure: the copy goes over
/// SSH).
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

async fn step<T>(
    host: &str,
    what: &str,
    f: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    tokio::time::timeout(STEP_TIMEOUT, f)
        .await
        .map_err(|_| failed(host, what, format!("no progress in {STEP_TIMEOUT:?}")))?
}

/// Copies this `vernier` to `host` (unless there), starts `vernier agent` there and waits
/// until it answers through a port forward.
pub async fn deploy(host: &str) -> Result<Deployed, Error> {
    let started = Instant::now();
    let session = Arc::new(connect(host).await?);
    let (remote, copied) = install(host, &session).await?;
    let (token, child, remote_port) = start_agent(host, &session, &remote).await?;
    let address = forward(host, &session, remote_port).await?;
    reach(host, &address, &token).await?;
    Ok(Deployed {
        host: host.to_string(),
        address,
        token,
        copied,
        binary: remote,
        took: started.elapsed(),
        session,
        child,
    })
}

/// The SSH session to `host`, as `ssh HOST` would open it (or as `VERNIER_SSH_CONFIG`
/// says).
async fn connect(host: &str) -> Result<Session, Error> {
    let mut builder = SessionBuilder::default();
    builder
        .known_hosts_check(KnownHosts::Add)
        .connect_timeout(Duration::from_secs(10))
        .server_alive_interval(Duration::from_secs(5))
        .control_directory(std::env::temp_dir());
    if let Some(config) = std::env::var_os("VERNIER_SSH_CONFIG") {
        builder.config_file(PathBuf::from(config));
    }
    step(host, "ssh", async {
        builder
            .connect(host)
            .await
            .map_err(|e| ssh_failed(host, "ssh", &e))
    })
    .await
}

/// The binary on the host, once per build: where it is, and whether it had to be copied.
async fn install(host: &str, session: &Session) -> Result<(String, bool), Error> {
    let exe = std::env::current_exe().map_err(|e| failed(host, "this vernier's path", e))?;
    let bytes = tokio::fs::read(&exe)
        .await
        .map_err(|e| failed(host, &format!("reading {}", exe.display()), e))?;
    let remote = format!(
        "{REMOTE_DIR}/vernier-{}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        fingerprint(&bytes)
    );
    let there = session
        .command("test")
        .arg("-x")
        .arg(&remote)
        .status()
        .await
        .map_err(|e| failed(host, "ssh", e))?
        .success();
    if !there {
        step(
            host,
            "copying vernier",
            copy(host, session, &remote, &bytes),
        )
        .await?;
    }
    Ok((remote, !there))
}

/// Writes `bytes` to `remote` on the host, through a `.part` file renamed when whole.
async fn copy(host: &str, session: &Session, remote: &str, bytes: &[u8]) -> Result<(), Error> {
    let mut child = session
        .shell(format!(
            "mkdir -p {REMOTE_DIR} && cat > {remote}.part && chmod 755 {remote}.part && mv -f {remote}.part {remote}"
        ))
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .await
        .map_err(|e| failed(host, "copying vernier", e))?;
    if let Some(mut stdin) = child.stdin().take() {
        stdin
            .write_all(bytes)
            .await
            .map_err(|e| failed(host, "copying vernier", e))?;
        stdin
            .shutdown()
            .await
            .map_err(|e| failed(host, "copying vernier", e))?;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| failed(host, "copying vernier", e))?;
    if !out.status.success() {
        return Err(failed(
            host,
            "copying vernier",
            String::from_utf8_lossy(&out.stderr).trim(),
        ));
    }
    Ok(())
}

/// Starts the agent on the host's loopback, its fresh token from stdin: the token, the
/// agent's process and the port it listens on.
async fn start_agent(
    host: &str,
    session: &Arc<Session>,
    remote: &str,
) -> Result<(String, openssh::Child<Arc<Session>>, u16), Error> {
    let token = format!(
        "{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    );
    let mut child = Arc::clone(session)
        .arc_command("sh")
        .arg("-c")
        .arg(format!(
            "IFS= read -r VERNIER_TOKEN && export VERNIER_TOKEN && exec ./{remote} agent --listen 127.0.0.1:0"
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .await
        .map_err(|e| failed(host, "starting the agent", e))?;
    if let Some(stdin) = child.stdin().as_mut() {
        stdin
            .write_all(format!("{token}\n").as_bytes())
            .await
            .map_err(|e| failed(host, "starting the agent", e))?;
        stdin
            .flush()
            .await
            .map_err(|e| failed(host, "starting the agent", e))?;
    }
    let stderr = child
        .stderr()
        .take()
        .ok_or_else(|| failed(host, "starting the agent", "no stderr"))?;
    let mut lines = BufReader::new(stderr).lines();
    let remote_port = step(host, "starting the agent", async {
        loop {
            let line = lines
                .next_line()
                .await
                .map_err(|e| failed(host, "starting the agent", e))?
                .ok_or_else(|| failed(host, "starting the agent", "it exited before listening"))?;
            if let Some(addr) = line.strip_prefix("vernier agent: listening on ") {
                // "ADDR", or "ADDR (TLS)".
                let port = addr
                    .split(' ')
                    .next()
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| p.trim().parse::<u16>().ok())
                    .ok_or_else(|| failed(host, "starting the agent", &line))?;
                return Ok(port);
            }
            if line.contains("error") {
                return Err(failed(host, "starting the agent", &line));
            }
        }
    })
    .await?;
    // The rest of its stderr is drained, so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((token, child, remote_port))
}

/// A port of this host's loopback forwarded to the agent's: the address to reach it at.
async fn forward(host: &str, session: &Session, remote_port: u16) -> Result<String, Error> {
    let local_port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map_err(|e| failed(host, "a local port for the forward", e))?
        .port();
    session
        .request_port_forward(
            ForwardType::Local,
            (Ipv4Addr::LOCALHOST, local_port),
            Socket::new("127.0.0.1", remote_port),
        )
        .await
        .map_err(|e| failed(host, "port forward", e))?;
    Ok(format!("127.0.0.1:{local_port}"))
}

/// Waits until the agent answers: a call without a session is refused by the agent
/// itself.
async fn reach(host: &str, address: &str, token: &str) -> Result<(), Error> {
    step(host, "reaching the agent", async {
        let mut client = AgentClient::connect(address, token)
            .await
            .map_err(|e| failed(host, "reaching the agent", e))?;
        match client.counters().await {
            Err(s) if s.code() == tonic::Code::FailedPrecondition => Ok(()),
            Err(s) => Err(failed(host, "reaching the agent", s.message())),
            Ok(_) => Ok(()),
        }
    })
    .await
}

impl Deployed {
    /// Shuts the agent down and closes the SSH session.
    pub async fn stop(self) {
        if let Ok(mut client) = AgentClient::connect(&self.address, &self.token).await {
            let _ = tokio::time::timeout(Duration::from_secs(3), client.shutdown()).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await;
        if let Ok(session) = Arc::try_unwrap(self.session) {
            let _ = session.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn builds_are_told_apart() {
        assert_ne!(fingerprint(b"vernier 1"), fingerprint(b"vernier 2"));
        assert_eq!(fingerprint(b""), 0xcbf2_9ce4_8422_2325);
    }
}
