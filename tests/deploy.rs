//! Deploying agents over SSH, against an sshd this test starts on a loopback port with
//! throwaway keys (and ends by PID): `vernier deploy`, a run whose two agents are
//! `{ssh: HOST}`, and an unreachable host named with ssh's error. Needs root (sshd's
//! privilege separation) and says so and returns when it is not.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// An sshd on 127.0.0.1 for this test, and the ssh config that reaches it as `vtest`.
struct Sshd {
    child: Child,
    config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Sshd {
    fn start() -> Sshd {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for key in ["host_key", "client_key"] {
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .output()
                .expect("ssh-keygen (openssh-client)");
            assert!(out.status.success(), "{out:?}");
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {0}/host_key\nAuthorizedKeysFile {0}/authorized_keys\nPidFile {0}/sshd.pid\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nAllowTcpForwarding yes\n",
                d.display()
            ),
        )
        .unwrap();
        let config = d.join("ssh_config");
        std::fs::write(
            &config,
            format!(
                "Host vtest\n  HostName 127.0.0.1\n  Port {port}\n  User root\n  IdentityFile {0}/client_key\n  IdentitiesOnly yes\n  UserKnownHostsFile {0}/known_hosts\n  BatchMode yes\n",
                d.display()
            ),
        )
        .unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let mut child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sshd (openssh-server): tests/run.sh installs it");
        // Its first line says it listens.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines.next().unwrap().unwrap();
        assert!(line.contains("listening"), "sshd: {line}");
        std::thread::spawn(move || lines.for_each(drop));
        Sshd {
            child,
            config,
            _dir: dir,
        }
    }

    fn vernier(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_vernier"))
            .args(args)
            .env("VERNIER_SSH_CONFIG", &self.config)
            .output()
            .unwrap()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

/// Processes running the deployed binary.
fn running(binary: &str) -> usize {
    let out = Command::new("pgrep").args(["-f", binary]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn agents_are_deployed_over_ssh_run_and_stopped() {
    if !nix::unistd::geteuid().is_root() {
        support::did_not_run(
            "agents_are_deployed_over_ssh_run_and_stopped",
            "the test's sshd needs root (CI runs as root)",
        );
        return;
    }
    let sshd = Sshd::start();

    // `vernier deploy`: copied (or already there from an earlier run of this build), the
    // agent answered, and stopped.
    let out = sshd.vernier(&["deploy", "vtest"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with("vtest: agent answered through 127.0.0.1:"),
        "{stdout}"
    );
    let copied = stdout.contains("(vernier copied to ");
    let binary = stdout
        .rsplit(" ~/")
        .next()
        .unwrap()
        .trim()
        .trim_end_matches(')')
        .to_string();
    assert!(binary.starts_with(".cache/vernier/vernier-"), "{binary}");
    // The second time, the binary is there.
    let again = sshd.vernier(&["deploy", "vtest"]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("(vernier already at ~/"),
        "{again:?}"
    );

    // A run with two agents over SSH against a local target.
    let server = support::ServeProcess::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("ssh.yaml");
    std::fs::write(
        &scenario,
        format!(
            "name: ssh\ntarget: {}\nprotocol: synthetic\nservice: exp:20us\nconnections: 8\nagents: [{{ssh: vtest}}, {{ssh: vtest}}]\nload: 2000\nci: {{percentile: 99, width: 200us}}\nsampling: {{samples: 2000}}\nlimits: {{max_tries: 2, max_duration: 12s}}\n",
            server.addr
        ),
    )
    .unwrap();
    let record = dir.path().join("record");
    let started = Instant::now();
    let out = sshd.vernier(&[
        "run",
        scenario.to_str().unwrap(),
        "--headless",
        "--record",
        record.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(matches!(out.status.code(), Some(0 | 3 | 4)), "{stderr}");
    let run = support::read_run(&record);
    assert_eq!(run["status"], "finished");
    let agents = run["points"][0]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    for a in agents {
        assert!(a["achieved_rate"].as_f64().unwrap() > 500.0, "{a}");
    }
    // The agents are gone once the run is.
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(&binary) > 0 {
        assert!(
            Instant::now() < deadline,
            "deployed agents still run after the run"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!(
        "deploy: two agents over SSH ran a point in {:.1}s: verdict {}",
        started.elapsed().as_secs_f64(),
        run["points"][0]["verdict"]
    );

    // An unreachable host is named with ssh's own error.
    std::fs::write(
        &scenario,
        format!(
            "name: ssh\ntarget: {}\nprotocol: synthetic\nservice: exp:20us\nagents: [{{ssh: no-such-host.invalid}}]\nload: 1000\nci: {{percentile: 99, width: 100us}}\n",
            server.addr
        ),
    )
    .unwrap();
    let out = sshd.vernier(&["run", scenario.to_str().unwrap(), "--headless"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("agent on no-such-host.invalid: ssh:")
            && stderr.contains("Could not resolve hostname"),
        "{stderr}"
    );

    // What this test copied, it removes.
    if copied {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let _ = std::fs::remove_file(Path::new(&home).join(&binary));
    }
}
