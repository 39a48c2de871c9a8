//! gRPC over TLS: a [`Session`] that wraps another (the HTTP/2 client) in a rustls client
//! connection, sans I/O as the rest: the system's CA certificates, when the server is
//! checked against them, are the caller's to read and hand over ([`SessionContext`]). A request's plaintext is encrypted as it is encoded,
//! so the bytes the connection counts for it are its TLS records', and its TX timestamp is
//! the last of them leaving; the handshake, and what TLS sends of its own accord, are
//! counted as no request's. No request goes before the handshake has completed.

use std::io::{self, Read, Write};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};
use serde::{Deserialize, Serialize};

use crate::protocol::vocab::{EncodeError, ParseError, Parsed, Request, Session, SessionContext};

/// What a session checking against the system's CA certificates says on a system with none.
const NO_SYSTEM_CA: &str = "tls: no CA certificate on this system; give one with ca:";

/// How a gRPC connection speaks TLS, as agents receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsMapping {
    /// The CA certificates (PEM) the server's certificate must chain to; the system's when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_pem: Option<String>,
    /// The name the certificate must be for (and the SNI); the target's host when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
}

/// A TLS client's configuration and the server's name, shared by a protocol's connections.
#[derive(Debug, Clone)]
pub(super) struct Tls {
    /// The configuration with the CA certificates given; `None` when the system's are
    /// checked against, handed over by the caller at each session.
    given: Option<Arc<ClientConfig>>,
    /// The configuration with the system's CA certificates and the store they came in, built
    /// at the first session given them.
    system: OnceLock<(Arc<RootCertStore>, Arc<ClientConfig>)>,
    name: ServerName<'static>,
}

impl Tls {
    /// The client configuration `mapping` asks for, naming the server `host` unless it
    /// names one: HTTP/2 by ALPN, the CA certificates given or (at each session) the
    /// system's.
    pub(super) fn new(mapping: &TlsMapping, host: &str) -> Result<Tls, String> {
        let given = match &mapping.ca_pem {
            Some(pem) => {
                let certs: Vec<CertificateDer<'static>> =
                    CertificateDer::pem_slice_iter(pem.as_bytes())
                        .collect::<Result<_, _>>()
                        .map_err(|e| format!("tls: the CA certificates are not PEM: {e}"))?;
                if certs.is_empty() {
                    return Err("tls: no certificate in the CA file".to_owned());
                }
                let mut roots = RootCertStore::empty();
                for cert in certs {
                    roots
                        .add(cert)
                        .map_err(|e| format!("tls: a CA certificate rustls refuses: {e}"))?;
                }
                Some(client_config(Arc::new(roots))?)
            }
            None => None,
        };
        let name = mapping.server_name.as_deref().unwrap_or(host);
        let name = ServerName::try_from(
            name.trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
        )
        .map_err(|e| format!("tls: server name {name:?}: {e}"))?;
        Ok(Tls {
            given,
            system: OnceLock::new(),
            name,
        })
    }

    /// A connection's TLS session around `inner`, checking the server against the CA
    /// certificates given, or else the system's, which `context` hands over.
    pub(super) fn session(
        &self,
        inner: Box<dyn Session>,
        context: &SessionContext,
    ) -> Box<dyn Session> {
        let config = match &self.given {
            Some(config) => Ok(config.clone()),
            None => self.system_config(&(context.system_roots)()),
        };
        let conn = config.and_then(|config| {
            ClientConnection::new(config, self.name.clone()).map_err(|e| e.to_string())
        });
        Box::new(TlsSession {
            conn,
            inner,
            plain: Vec::new(),
            parsed: 0,
            scratch: Vec::new(),
        })
    }

    /// Why no session can start: the server is to be checked against the system's CA
    /// certificates, and `context` hands over none.
    pub(super) fn unusable(&self, context: &SessionContext) -> Option<String> {
        (self.given.is_none() && (context.system_roots)().is_empty())
            .then(|| NO_SYSTEM_CA.to_owned())
    }

    /// The configuration checking against the system's CA certificates `roots`: built once
    /// for the store the caller keeps handing over (so connections share one, as they do
    /// with CAs given).
    fn system_config(&self, roots: &Arc<RootCertStore>) -> Result<Arc<ClientConfig>, String> {
        if let Some((cached, config)) = self.system.get()
            && Arc::ptr_eq(cached, roots)
        {
            return Ok(config.clone());
        }
        if roots.is_empty() {
            return Err(NO_SYSTEM_CA.to_owned());
        }
        let config = client_config(roots.clone())?;
        // Another connection may have set it first: either is right.
        let _ = self.system.set((roots.clone(), config.clone()));
        Ok(config)
    }
}

/// A client configuration checking servers against `roots`, HTTP/2 by ALPN.
fn client_config(roots: Arc<RootCertStore>) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("tls: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// One connection's TLS client around the session it carries.
#[derive(Debug)]
struct TlsSession {
    /// `Err` when rustls could not start, or take the preface (then every parse fails
    /// with the reason).
    conn: Result<ClientConnection, String>,
    inner: Box<dyn Session>,
    /// Decrypted bytes, parsed by `inner` up to `parsed`: the front is dropped only when
    /// all is parsed or before more is decrypted, not per frame.
    plain: Vec<u8>,
    parsed: usize,
    /// The inner session's bytes before encryption.
    scratch: Vec<u8>,
}

const NAME: &str = "grpc (TLS)";

impl TlsSession {
    /// Encrypts `plain` and appends the records (and anything else TLS has to send) to
    /// `out`.
    fn seal(&mut self, plain: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        let Ok(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        if !plain.is_empty() {
            conn.writer().write_all(plain)?;
        }
        while conn.wants_write() {
            conn.write_tls(out)?;
        }
        Ok(())
    }
}

/// A malformed-reply error of TLS's, quoting `bytes`.
fn error(problem: impl ToString, bytes: &[u8]) -> ParseError {
    ParseError::new(NAME, problem.to_string(), bytes)
}

impl Session for TlsSession {
    fn open(&mut self, out: &mut Vec<u8>) {
        // The inner session's preface waits in rustls until the handshake is done.
        let mut preface = Vec::new();
        self.inner.open(&mut preface);
        if let Err(e) = self.seal(&preface, out) {
            self.conn = Err(e.to_string());
        }
    }

    fn ready(&self) -> bool {
        self.conn.as_ref().is_ok_and(|c| !c.is_handshaking()) && self.inner.ready()
    }

    fn spent(&self) -> bool {
        self.parsed == self.plain.len() && self.inner.spent()
    }

    fn encode(
        &mut self,
        request: &Request<'_>,
        opaque: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let encoded = self.inner.encode(request, opaque, &mut scratch);
        let sealed = encoded.and_then(|()| {
            self.seal(&scratch, out).map_err(|e| EncodeError::Invalid {
                protocol: NAME,
                problem: e.to_string(),
            })
        });
        self.scratch = scratch;
        sealed
    }

    fn parse(&mut self, buf: &[u8], answer: &mut Vec<u8>) -> Result<Parsed, ParseError> {
        if let Err(problem) = &self.conn {
            return Err(error(problem, buf));
        }
        // A frame already decrypted comes first: it consumes none of `buf`.
        if let Some(parsed) = self.parse_plain(buf, answer)? {
            return Ok(parsed);
        }
        if buf.is_empty() {
            return Ok(Parsed::Incomplete);
        }
        // A failed session returned its error above.
        let Ok(conn) = self.conn.as_mut() else {
            return Ok(Parsed::Incomplete);
        };
        let read = conn.read_tls(&mut &buf[..]).map_err(|e| error(e, buf))?;
        if read == 0 {
            return Ok(Parsed::Incomplete);
        }
        let state = conn
            .process_new_packets()
            .map_err(|e| error(format!("TLS: {e}"), buf))?;
        let new = state.plaintext_bytes_to_read();
        if new > 0 {
            // What `inner` has parsed goes now, once per read of records.
            self.plain.drain(..self.parsed);
            self.parsed = 0;
            let at = self.plain.len();
            self.plain.resize(at + new, 0);
            conn.reader()
                .read_exact(&mut self.plain[at..])
                .map_err(|e| error(e, buf))?;
        }
        if state.peer_has_closed() && self.parsed == self.plain.len() {
            return Err(error("the server closed the TLS session", buf));
        }
        // Handshake messages, key updates: sent at once.
        self.seal(&[], answer).map_err(|e| error(e, buf))?;
        Ok(Parsed::Consumed(read))
    }
}

impl TlsSession {
    /// The next unit `inner` reads in the decrypted bytes, taking none of `buf` (`None`
    /// when they hold no whole unit), what it answers sealed into `answer`.
    fn parse_plain(
        &mut self,
        buf: &[u8],
        answer: &mut Vec<u8>,
    ) -> Result<Option<Parsed>, ParseError> {
        let mut control = Vec::new();
        let parsed = (self.inner).parse(&self.plain[self.parsed..], &mut control)?;
        let reply = match parsed {
            Parsed::Incomplete => return Ok(None),
            Parsed::Consumed(n) => {
                self.parsed += n;
                None
            }
            Parsed::Reply(reply, n) => {
                self.parsed += n;
                Some(reply)
            }
        };
        if self.parsed == self.plain.len() {
            self.plain.clear();
            self.parsed = 0;
        }
        self.seal(&control, answer).map_err(|e| error(e, buf))?;
        Ok(Some(match reply {
            Some(reply) => Parsed::Reply(reply, 0),
            None => Parsed::Consumed(0),
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustls::RootCertStore;
    use rustls::pki_types::{Der, TrustAnchor};

    use super::{NO_SYSTEM_CA, Tls, TlsMapping};
    use crate::protocol::vocab::SessionContext;

    /// A store with one anchor: not empty, which is all `unusable` asks.
    fn one_root() -> Arc<RootCertStore> {
        Arc::new(RootCertStore {
            roots: vec![TrustAnchor {
                subject: Der::from_slice(b"subject"),
                subject_public_key_info: Der::from_slice(b"key"),
                name_constraints: None,
            }],
        })
    }

    #[test]
    fn a_server_checked_against_the_system_s_cas_is_unusable_only_on_a_system_without_any() {
        let system = Tls::new(
            &TlsMapping {
                ca_pem: None,
                server_name: None,
            },
            "localhost",
        )
        .unwrap();
        let none = SessionContext::default();
        let some = SessionContext {
            system_roots: one_root,
        };
        assert_eq!(system.unusable(&none).as_deref(), Some(NO_SYSTEM_CA));
        assert_eq!(system.unusable(&some), None);
    }
}
