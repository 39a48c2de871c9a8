//! Starting a server on a free loopback port, and stopping it whatever happens.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process this test started, killed (by its PID) and reaped on drop, with its
/// scratch directory removed.
pub struct Server {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Server {
    /// Starts `binary` (from the Debian package `package`) with the arguments `args` gives
    /// for a free port and a scratch directory, and waits until it accepts connections.
    pub fn start(binary: &str, package: &str, args: impl Fn(u16, &Path) -> Vec<String>) -> Server {
        let path = find(binary)
            .unwrap_or_else(|| panic!("{binary} is not installed: apt-get install -y {package}"));
        // A free port can be taken between our probe and the server's bind; try again then.
        let mut last_error = String::new();
        for _ in 0..5 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!(
                "vernier-protocols-{binary}-{}-{port}",
                std::process::id()
            ));
            std::fs::create_dir_all(&dir).expect("create the scratch directory");
            let child = Command::new(&path)
                .args(args(port, &dir))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
            let mut server = Server {
                child,
                addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
                dir,
            };
            match server.wait_until_accepting() {
                Ok(()) => return server,
                Err(error) => last_error = error,
            }
        }
        panic!("{binary} did not start: {last_error}");
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn wait_until_accepting(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut stderr = String::new();
                if let Some(mut pipe) = self.child.stderr.take() {
                    use std::io::Read;
                    let _ = pipe.read_to_string(&mut stderr);
                }
                return Err(format!("it exited with {status}: {stderr}"));
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(100)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("nothing accepts on {} after 10 s", self.addr))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // `Child::kill` signals this child's PID only, never a process found by name.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port nothing listens on now: the kernel's pick for an ephemeral bind.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("bind an ephemeral loopback port")
}

/// `binary` on the PATH, or in the sbin directories a non-root PATH may lack (nginx).
fn find(binary: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|dir| dir.join(binary))
        .find(|candidate| candidate.is_file())
}

#[test]
#[should_panic(expected = "not-a-server is not installed: apt-get install -y not-a-package")]
fn a_missing_server_fails_naming_its_package() {
    Server::start("not-a-server", "not-a-package", |_, _| Vec::new());
}
