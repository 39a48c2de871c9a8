//! The system's CA certificates, which a gRPC connection over TLS checks its server against
//! unless its scenario names others: read here (the protocols crate does no I/O), once, when
//! the first connection that needs them is opened, and shared by every connection after.

use std::sync::{Arc, LazyLock};

use rustls::RootCertStore;
use vernier_protocols::SessionContext;

/// What a connection's session is given: the system's CA certificates, on demand.
pub(super) const CONTEXT: SessionContext = SessionContext {
    system_roots: system_roots,
};

/// The system's CA certificates, read at the first call; those rustls cannot parse are left
/// out. Empty when the system has none, which the TLS session then says (and the
/// workbench, when it reads a scenario that would need them).
pub fn system_roots() -> Arc<RootCertStore> {
    static ROOTS: LazyLock<Arc<RootCertStore>> = LazyLock::new(|| {
        let mut roots = RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        Arc::new(roots)
    });
    ROOTS.clone()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::CONTEXT;

    #[test]
    fn the_system_roots_are_read_once_and_shared() {
        let first = (CONTEXT.system_roots)();
        assert!(Arc::ptr_eq(&first, &(CONTEXT.system_roots)()));
    }
}
