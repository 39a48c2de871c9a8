//! The worker's loop allocates nothing per request or per batch once its spares are in
//! place: every allocation in this process is counted while one worker loads a server
//! in another process, kept samples and all, and the batches read go back to it.
//!
//! Only this test runs in this binary (the allocator counts every thread): the server is
//! a `vernier serve` process, and this thread only reads batches and gives them back,
//! which allocates nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::alloc::System;
use std::time::{Duration, Instant};

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use support::ServeProcess;
use vernier_agent::sys::{TimestampMode, Transport};
use vernier_agent::{AgentKind, Engine, LoadSpec, Workload};
use vernier_protocols::{InterArrival, Protocol};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Reads batches for `duration`, giving each back (or not); the batches and samples read.
fn read(engine: &Engine, duration: Duration, recycle: bool) -> (usize, usize) {
    let (mut batches, mut samples) = (0, 0);
    let started = Instant::now();
    while started.elapsed() < duration {
        if let Some(batch) = engine.next_batch(Duration::from_millis(50)) {
            batches += 1;
            samples += batch.samples.len();
            if recycle {
                engine.recycle(batch);
            }
        }
    }
    (batches, samples)
}

#[test]
fn a_loaded_worker_allocates_nothing_per_request_or_batch() {
    let server = ServeProcess::start(&[]);
    for timestamps in [TimestampMode::Kernel, TimestampMode::User] {
        let engine = Engine::start(LoadSpec {
            target: server.addr,
            transport: Transport::Tcp,
            protocol: Protocol::synthetic(),
            workload: Workload::Synthetic {
                service: "fixed:0us".parse().unwrap(),
                probe: 0.0,
            },
            workers: 1,
            cpus: Vec::new(),
            connections: 4,
            depth: 4,
            kind: AgentKind::Symmetric,
            timestamps: timestamps.clone(),
            poll: vernier_agent::PollMode::Sleep,
            seed: 1,
            timeout: Duration::from_secs(1),
            duet: None,
        })
        .unwrap();
        engine.set_sampling(1.0, 1);
        engine.set_load(5_000.0, &InterArrival::Exp);
        // The first reports allocate the batches that then circulate.
        read(&engine, Duration::from_millis(500), true);
        let region = Region::new(GLOBAL);
        let (batches, samples) = read(&engine, Duration::from_secs(2), true);
        let reused = region.change();
        // The same without giving batches back: what the worker allocated before.
        let region = Region::new(GLOBAL);
        let (fresh_batches, _) = read(&engine, Duration::from_secs(1), false);
        let fresh = region.change();
        engine.pause();
        let _ = engine.stop();
        println!(
            "{timestamps:?}: {batches} batches, {samples} samples read and given back: {} allocations, {} bytes; \
             {fresh_batches} batches not given back: {} allocations, {} bytes",
            reused.allocations + reused.reallocations,
            reused.bytes_allocated,
            fresh.allocations + fresh.reallocations,
            fresh.bytes_allocated
        );
        assert!(
            batches >= 50 && samples >= 5_000,
            "{batches} batches, {samples} samples"
        );
        assert_eq!(
            (reused.allocations, reused.reallocations),
            (0, 0),
            "{timestamps:?}: {reused:?}"
        );
        // The counter does count: a worker that gets nothing back allocates each batch.
        assert!(
            fresh.allocations >= fresh_batches,
            "{timestamps:?}: {fresh:?} for {fresh_batches} batches"
        );
    }
}
