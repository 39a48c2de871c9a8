//! What each request asks: a synthetic service time, a key-value operation, a declared
//! protocol's request, or an echo, drawn as the request is encoded.

use std::sync::Arc;

use rand::RngExt;
use rand::rngs::SmallRng;
use vernier_protocols::{
    Declared, KeySpace, KvGenerator, Protocol, Request, Sampler, WorkloadKind,
};

use super::arrivals::Arrival;
use crate::config::Workload;
use crate::measure::RequestKind;

/// Where each request's content comes from.
pub(super) enum Generator {
    Synthetic(Sampler),
    KeyValue(KvGenerator),
    /// Requests that take a key alone (a declared protocol's, which one by its mix; a
    /// gRPC method's), the key from the workload.
    Keys(KvGenerator, Option<Box<Declared>>),
    Echo,
}

impl Generator {
    /// The generator of `workload` spoken in `protocol`: a key-value one draws from `keys`
    /// with `seed`.
    pub(super) fn new(
        protocol: &Protocol,
        workload: &Workload,
        keys: Option<Arc<KeySpace>>,
        seed: u64,
    ) -> Generator {
        match (workload, keys) {
            (Workload::Synthetic { service, .. }, _) => Generator::Synthetic(service.sampler()),
            (Workload::KeyValue(_), Some(keys)) if protocol.workload() == WorkloadKind::Keys => {
                Generator::Keys(
                    keys.generator(seed),
                    protocol.declared().cloned().map(Box::new),
                )
            }
            (Workload::KeyValue(_), Some(keys)) => Generator::KeyValue(keys.generator(seed)),
            _ => Generator::Echo,
        }
    }

    /// The next request and its kind: a path probe's for an [`Arrival::Probe`], which asks
    /// for no service time; a synthetic service time is drawn from `rng`.
    #[inline]
    pub(super) fn next(
        &mut self,
        arrival: Arrival,
        rng: &mut SmallRng,
    ) -> (Request<'_>, RequestKind) {
        match self {
            // Probes come only with a synthetic workload (`Arrivals::probe`).
            _ if arrival == Arrival::Probe => (Request::Spin { service_ns: 0 }, RequestKind::Probe),
            Generator::Synthetic(service) => (
                Request::Spin {
                    service_ns: service.sample(rng) as u64,
                },
                RequestKind::Other,
            ),
            Generator::KeyValue(g) => {
                let r = g.next_request();
                let kind = if matches!(r, Request::Set { .. }) {
                    RequestKind::Set
                } else {
                    RequestKind::Get
                };
                (r, kind)
            }
            Generator::Keys(keys, declared) => {
                let index = declared.as_ref().map_or(0, |d| d.pick(rng.random()));
                let key = match keys.next_request() {
                    Request::Get { key } | Request::Set { key, .. } => key,
                    _ => b"",
                };
                let request = Request::Template {
                    index,
                    key,
                    entropy: rng.random(),
                };
                (request, RequestKind::Other)
            }
            Generator::Echo => (Request::Get { key: b"" }, RequestKind::Other),
        }
    }
}
