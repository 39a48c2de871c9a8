//! `vernier agent`: a load-generating, latency-measuring agent controlled over gRPC.
//!
//! Its bearer token comes from a file (`--token-file`), the `VERNIER_TOKEN` variable or,
//! with a warning, the command line, which every user of the host can read in `ps`. The
//! token is never printed, not even in an error about it.

use std::io::Read;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::{Identity, ServerTlsConfig};
use vernier_agent::control::AgentService;

use crate::error::Error;
use crate::session::read_pem;

/// Options of `vernier agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Where to listen for a coordinator (loopback unless told otherwise).
    #[arg(long, default_value = "127.0.0.1:5001")]
    pub listen: SocketAddr,
    /// A file holding the bearer token every call must carry (one line; readable by you
    /// alone). Without it, the token is taken from the VERNIER_TOKEN variable.
    #[arg(long, value_name = "PATH", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
    /// The bearer token itself. Every user of this host sees it in `ps` and
    /// /proc/PID/cmdline: prefer --token-file or VERNIER_TOKEN.
    #[arg(long, value_name = "SECRET")]
    pub token: Option<Secret>,
    /// Load only targets in these networks (comma-separated, `10.0.0.0/8` or one address);
    /// a coordinator asking for another target is refused. Default: any target.
    #[arg(long, value_delimiter = ',', value_name = "CIDR", value_parser = network)]
    pub allow_targets: Vec<ipnet::IpNet>,
    /// Serve the control channel over TLS with this certificate (PEM; the chain, leaf
    /// first). Coordinators then need `--tls-ca` (or `tls_ca:` in the scenario).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Serve the agent's live figures (the rate asked of it, each worker's counters, the
    /// session's latency histogram) at http://ADDR/metrics in the OpenMetrics text format
    /// (port 0 picks one; the address is said on stderr).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
}

/// A token given on the command line; `Debug` does not show it.
#[derive(Clone)]
pub struct Secret(String);

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The variable the token is read from when no option gives it.
const TOKEN_ENV: &str = "VERNIER_TOKEN";

/// A token file larger than this is not a token file (and is not read to its end).
const TOKEN_FILE_LIMIT: u64 = 4096;

/// The token and the warnings to print about how it was given (the token never in them).
#[derive(Debug)]
struct Token {
    secret: Secret,
    warnings: Vec<String>,
}

/// The token from `--token-file`, `--token` or `env` (VERNIER_TOKEN's value), in that
/// order. Errors name where the token was looked for and what was wrong, never its value.
fn token(args: &AgentArgs, env: Option<std::ffi::OsString>) -> Result<Token, Error> {
    let mut warnings = Vec::new();
    let (text, from) = if let Some(path) = &args.token_file {
        let (text, mode) = read_token_file(path)?;
        if mode & 0o077 != 0 {
            warnings.push(format!(
                "--token-file {}: readable by others than its owner (mode {:04o}); \
                 `chmod 600 {0}`",
                path.display(),
                mode & 0o7777
            ));
        }
        (text, format!("--token-file {}", path.display()))
    } else if let Some(Secret(text)) = &args.token {
        warnings.push(format!(
            "--token is visible to every user of this host (ps, /proc/{}/cmdline); \
             use --token-file PATH or the {TOKEN_ENV} variable",
            std::process::id()
        ));
        (text.clone(), "--token".to_owned())
    } else if let Some(value) = env {
        let text = value
            .into_string()
            .map_err(|_| Error::Usage(format!("{TOKEN_ENV} is not UTF-8")))?;
        (text, TOKEN_ENV.to_owned())
    } else {
        return Err(Error::Usage(format!(
            "no token: give --token-file PATH or set {TOKEN_ENV} (--token works too, but \
             `ps` shows it)"
        )));
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::Usage(format!("{from}: the token is empty")));
    }
    if text.contains('\n') {
        return Err(Error::Usage(format!(
            "{from}: the token is more than one line"
        )));
    }
    // What an HTTP/2 header carries; coordinators could never send anything else.
    if let Some(at) = text
        .chars()
        .position(|c| !(c == ' ' || c.is_ascii_graphic()))
    {
        return Err(Error::Usage(format!(
            "{from}: the token's character {} is not printable ASCII",
            at + 1
        )));
    }
    Ok(Token {
        secret: Secret(text.to_owned()),
        warnings,
    })
}

/// The token file's text and permission bits, every failure naming the file.
fn read_token_file(path: &Path) -> Result<(String, u32), Error> {
    let failed = |what: &str| Error::Usage(format!("--token-file {}: {what}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| failed(&format!("cannot open it: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| failed(&format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(failed("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(TOKEN_FILE_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| failed(&format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > TOKEN_FILE_LIMIT {
        return Err(failed(&format!(
            "longer than {TOKEN_FILE_LIMIT} bytes: not a token"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| failed("not UTF-8 text"))?;
    Ok((text, meta.permissions().mode()))
}

/// The server's TLS settings from `--tls-cert` and `--tls-key`, each file named when it
/// cannot be read.
fn server_tls(args: &AgentArgs) -> Result<Option<ServerTlsConfig>, Error> {
    let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) else {
        return Ok(None);
    };
    let identity = Identity::from_pem(
        read_pem(cert, "certificate", "CERTIFICATE-----")?,
        // PKCS#8, SEC1 (EC) or PKCS#1 (RSA): "PRIVATE KEY-----" ends each.
        read_pem(key, "private key", "")?,
    );
    Ok(Some(ServerTlsConfig::new().identity(identity)))
}

/// A network, or one address as the network of just it.
fn network(text: &str) -> Result<ipnet::IpNet, String> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("{text:?}: expected a network (10.0.0.0/8) or an address (10.0.0.7)"))
}

/// Serves the control plane until Ctrl-C, SIGTERM or a coordinator's Shutdown.
pub fn run(args: AgentArgs) -> Result<ExitCode, Error> {
    let token = token(&args, std::env::var_os(TOKEN_ENV))?;
    for warning in &token.warnings {
        eprintln!("vernier agent: warning: {warning}");
    }
    let io = |what: &'static str| {
        move |source| Error::Io {
            path: what.into(),
            source,
        }
    };
    let tls = server_tls(&args)?;
    let runtime = crate::session::runtime("vernier-control")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen).await.map_err(|source| Error::Io {
            path: format!("listen on {}", args.listen).into(),
            source,
        })?;
        let local = listener.local_addr().map_err(io("listener address"))?;
        let mut builder = tonic::transport::Server::builder();
        let serves_tls = tls.is_some();
        if let Some(tls) = tls {
            builder = builder.tls_config(tls).map_err(|e| {
                Error::Usage(format!(
                    "--tls-cert {} with --tls-key {}: {}",
                    args.tls_cert.as_deref().unwrap_or(std::path::Path::new("")).display(),
                    args.tls_key.as_deref().unwrap_or(std::path::Path::new("")).display(),
                    vernier_agent::client::chain(&e)
                ))
            })?;
        }
        eprintln!(
            "vernier agent: listening on {local}{}",
            if serves_tls { " (TLS)" } else { "" }
        );
        let service = AgentService::allowing(args.allow_targets.clone());
        // Served while the agent runs; dropped (and so stopped) with it.
        let _metrics = match args.metrics {
            Some(addr) => {
                let figures = service.clone();
                let (at, task) = crate::metrics::serve(
                    addr,
                    std::sync::Arc::new(move || crate::metrics::agent_text(figures.figures())),
                )
                .await?;
                eprintln!("vernier agent: live figures at http://{at}/metrics");
                Some(task)
            }
            None => None,
        };
        let shutdown = service.shutdown_requested();
        let server = service.into_server(&token.secret.0);
        let stop = async move {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {}
                _ = shutdown.notified() => {}
            }
            eprintln!("vernier agent: shutting down");
        };
        builder
            .add_service(server)
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), stop)
            .await
            .map_err(|e| Error::Failed(format!("agent control plane failed: {e}")))?;
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    const SECRET: &str = "s3cr3t-in-no-message";

    fn args(argv: &[&str]) -> AgentArgs {
        let mut full = vec!["vernier", "agent"];
        full.extend_from_slice(argv);
        match crate::Cli::parse_from(full).command {
            crate::Command::Agent(args) => args,
            other => panic!("{other:?}"),
        }
    }

    /// A token file with `text` and `mode`.
    fn file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    fn error(args: &AgentArgs, env: Option<&str>) -> String {
        let e = token(args, env.map(Into::into)).unwrap_err().to_string();
        assert!(!e.contains(SECRET), "{e}");
        e
    }

    #[test]
    fn a_token_file_is_read_and_a_loose_one_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let tight = file(dir.path(), "tight", &format!("{SECRET}\n"), 0o600);
        let t = token(
            &args(&["--token-file", tight.to_str().unwrap()]),
            Some("env".into()),
        )
        .unwrap();
        assert_eq!(t.secret.0, SECRET, "the file wins over the variable");
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);

        let loose = file(dir.path(), "loose", SECRET, 0o644);
        let t = token(&args(&["--token-file", loose.to_str().unwrap()]), None).unwrap();
        assert_eq!(t.secret.0, SECRET);
        assert_eq!(t.warnings.len(), 1);
        let w = &t.warnings[0];
        assert!(
            w.contains(loose.to_str().unwrap()) && w.contains("mode 0644"),
            "{w}"
        );
        assert!(!w.contains(SECRET), "{w}");
    }

    #[test]
    fn a_token_on_the_command_line_works_with_a_warning() {
        let t = token(&args(&["--token", SECRET]), Some("env".into())).unwrap();
        assert_eq!(t.secret.0, SECRET);
        let w = &t.warnings[0];
        assert!(
            w.starts_with("--token is visible to every user of this host (ps, /proc/"),
            "{w}"
        );
        assert!(w.contains("--token-file") && w.contains("VERNIER_TOKEN") && !w.contains(SECRET));
        assert!(!format!("{:?}", args(&["--token", SECRET])).contains(SECRET));

        let t = token(&args(&[]), Some(SECRET.into())).unwrap();
        assert_eq!(t.secret.0, SECRET);
        assert!(t.warnings.is_empty());
    }

    #[test]
    fn a_bad_token_source_is_named_and_the_token_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let e = error(&args(&["--token-file", missing.to_str().unwrap()]), None);
        assert!(
            e.starts_with(&format!(
                "--token-file {}: cannot open it: ",
                missing.display()
            )),
            "{e}"
        );
        let empty = file(dir.path(), "empty", " \n", 0o600);
        let e = error(&args(&["--token-file", empty.to_str().unwrap()]), None);
        assert_eq!(
            e,
            format!("--token-file {}: the token is empty", empty.display())
        );
        let e = error(&args(&["--token-file", dir.path().to_str().unwrap()]), None);
        assert!(e.ends_with(": not a regular file"), "{e}");
        let two = file(dir.path(), "two", &format!("{SECRET}\n{SECRET}\n"), 0o600);
        let e = error(&args(&["--token-file", two.to_str().unwrap()]), None);
        assert!(e.ends_with(": the token is more than one line"), "{e}");
        let big = file(dir.path(), "big", &"x".repeat(5000), 0o600);
        let e = error(&args(&["--token-file", big.to_str().unwrap()]), None);
        assert!(e.ends_with(": longer than 4096 bytes: not a token"), "{e}");
        let e = error(&args(&[]), Some(&format!("{SECRET}\u{e9}")));
        assert_eq!(
            e,
            format!(
                "VERNIER_TOKEN: the token's character {} is not printable ASCII",
                SECRET.len() + 1
            )
        );
        let e = error(&args(&["--token", "  "]), None);
        assert_eq!(e, "--token: the token is empty");
        let e = error(&args(&[]), None);
        assert!(
            e.starts_with("no token: give --token-file PATH or set VERNIER_TOKEN"),
            "{e}"
        );
    }
}
