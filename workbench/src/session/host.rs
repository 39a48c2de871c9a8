//! The session and this host's cores: the process's affinity checked against the cores a
//! scenario pins its workers to, vernier's own threads confined beside the workers, and
//! the host probes that watch the cores a request meets for stalls.

use vernier_agent::{
    Batch, CoreWatch, DEFAULT_PERIOD, HostProbe, StallLog, StallReport, probe_period,
};

use vernier_agent::PollMode;

use super::interface::Keep;
use crate::error::Error;
use crate::scenario::{AgentSpec, Scenario};

/// When the scenario pins local workers (`cpus:`), vernier's other threads (the
/// coordinator's runtime, the recorder, the terminal) are confined to the same cores for
/// the run. Left to float, they land on the server's core too, when the server shares the
/// host, and delay it by a scheduler slice at a time: against memcached pinned to core 0
/// at 10,000 req/s, with the worker on core 1, p99 was 130-200 µs with vernier's threads
/// floating and 42-66 µs with them on core 1 (the worker, at nice -10, keeps its core).
/// Workers that spin (`poll: spin`) are another matter: a thread beside them takes the
/// core for a scheduler slice at a time and every departure due meanwhile leaves late, so
/// vernier's other threads go to the cores of `allowed` (this process's affinity) that
/// neither a worker nor the target holds, and [`check_spin`] refuses a run with none.
/// Sleeping workers too leave their cores to themselves when such a core is free and the
/// target's cores are known (named, or found pinned): on a 16-core host given cores 2-3,
/// the coordinator took 62 ms of CPU a second beside the worker on core 2 with core 3
/// idle. `None` when nothing is pinned, or when the cores cannot be used (the workers'
/// own pinning then reports it).
pub(super) fn confine(
    scenario: &Scenario,
    allowed: &[usize],
) -> Option<(vernier_agent::sys::Confinement, Keep)> {
    let (cpus, keep) = placement(scenario, allowed)?;
    vernier_agent::sys::confine_process(&cpus)
        .ok()
        .map(|c| (c, keep))
}

/// Where [`confine`] puts vernier's other threads: the cores and why.
pub(super) fn placement(scenario: &Scenario, allowed: &[usize]) -> Option<(Vec<usize>, Keep)> {
    let workers = local_cpus(scenario);
    if workers.is_empty() {
        return None;
    }
    let others = spare(scenario, allowed);
    if scenario.poll == PollMode::Spin {
        return Some((others, Keep::OffWorkers));
    }
    if !others.is_empty() && !scenario.target_cpus.is_empty() {
        return Some((others, Keep::Spare));
    }
    Some((workers.to_vec(), Keep::WithWorkers))
}

/// The cores of `allowed` that neither the scenario's local workers nor its target (its
/// `target_cpus`, named or found) hold.
fn spare(scenario: &Scenario, allowed: &[usize]) -> Vec<usize> {
    let workers = local_cpus(scenario);
    allowed
        .iter()
        .copied()
        .filter(|c| !workers.contains(c) && !scenario.target_cpus.contains(c))
        .collect()
}

/// Refuses, before anything starts, workers that spin (`poll: spin`) with no core left
/// for vernier's other threads: pinned workers and the target holding every core this
/// process may use (`allowed`), or unpinned workers as many as those cores. Beside the
/// workers the coordinator's slices would make late the very departures spinning is for;
/// beside the target (on a 2-core host against memcached at 10,000 req/s: p99 1,346 µs
/// against 352 with it beside a spinning worker) they would make the target's tail. A
/// usage error naming what would work.
pub(crate) fn check_spin(scenario: &Scenario, allowed: &[usize]) -> Result<(), Error> {
    let local = scenario
        .agents
        .iter()
        .any(|a| matches!(a, AgentSpec::Local { .. }));
    if scenario.poll != PollMode::Spin || !local || allowed.is_empty() {
        return Ok(());
    }
    let workers = local_cpus(scenario);
    let held = if workers.is_empty() {
        (scenario.workers >= allowed.len()).then(|| {
            format!(
                "its {} unpinned worker{} would take every CPU this process may use ({})",
                scenario.workers,
                if scenario.workers == 1 { "" } else { "s" },
                join(allowed)
            )
        })
    } else {
        spare(scenario, allowed).is_empty().then(|| {
            let target = if scenario.target_cpus.is_empty() {
                String::new()
            } else {
                format!(
                    " and the target runs on CPU {}",
                    join(&scenario.target_cpus)
                )
            };
            format!(
                "its workers spin on CPU {}{target}, every CPU this process may use ({})",
                join(workers),
                join(allowed)
            )
        })
    };
    match held {
        None => Ok(()),
        Some(held) => Err(Error::Usage(format!(
            "{}poll: spin needs a core for vernier's other threads besides the spinning workers': {held}; allow another core (taskset -c), or use poll: sleep (the default), which sends as precisely as the answer asked needs",
            scenario
                .source
                .as_ref()
                .map_or(String::new(), |p| format!("{}: ", p.display())),
        ))),
    }
}

/// The cores the scenario pins its local workers to (empty when it pins none, or has no
/// local agent: `cpus:` pins only the workers of this process).
fn local_cpus(scenario: &Scenario) -> &[usize] {
    let local = scenario
        .agents
        .iter()
        .any(|a| matches!(a, AgentSpec::Local { .. }));
    if local { &scenario.cpus } else { &[] }
}

/// The session's host probes, in the order of their reports: the cores the scenario names
/// for a local target (`target_cpus:`: a target's core that stalls, or wakes slowly from
/// idle, makes a tail the workers cannot see), then, when no agent runs in this process,
/// the coordinator's own unpinned thread. A local agent's workers are the probes of their
/// own cores (their waits: [`CoreWatch`]), so no probe thread wakes beside them; a
/// worker's core is not probed again. Remote agents' workers watch their own cores too,
/// and their stalls come in their batches. A target's core outside `allowed`
/// (this process's affinity: a thread could pin itself there, but the process was told to
/// keep off it) is not probed, and a probe that cannot start is left out; the run goes on
/// without their figures, and the line returned beside the probes says what runs and what
/// does not. Each probe sleeps between wake-ups (no spinning), so it shares its core.
pub(crate) fn start_probes(scenario: &Scenario, allowed: &[usize]) -> (Vec<HostProbe>, String) {
    let workers = local_cpus(scenario);
    let local = scenario
        .agents
        .iter()
        .any(|a| matches!(a, AgentSpec::Local { .. }));
    // The target's cores (`target_cpus:`), each once.
    let mut target: Vec<usize> = Vec::new();
    let mut outside: Vec<usize> = Vec::new();
    for &cpu in &scenario.target_cpus {
        if workers.contains(&cpu) || target.contains(&cpu) || outside.contains(&cpu) {
            continue;
        }
        if allowed.is_empty() || allowed.contains(&cpu) {
            target.push(cpu);
        } else {
            outside.push(cpu);
        }
    }
    let mut probes = Vec::new();
    let mut running = Vec::new();
    let mut failed = Vec::new();
    let unpinned = (!local).then_some(None);
    for cpu in target.into_iter().map(Some).chain(unpinned) {
        let name = cpu.map_or("the coordinator's thread".to_string(), |c| {
            format!("CPU {c} (the target's)")
        });
        match HostProbe::start(cpu, DEFAULT_PERIOD) {
            Ok(probe) => {
                probes.push(probe);
                running.push(name);
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    // What watches the cores a request meets: the workers themselves, then the probes.
    let mut watching = Vec::new();
    if local {
        watching.push(if workers.is_empty() {
            "the workers' own waits, wherever they run".to_string()
        } else {
            format!("the workers' own waits on CPU {}", join(workers))
        });
    }
    if !running.is_empty() {
        watching.push(format!(
            "a sleeping thread's wake-ups every {:?} on {}",
            DEFAULT_PERIOD,
            running.join(", ")
        ));
    }
    let mut line = format!(
        "host probes: {}",
        if watching.is_empty() {
            "nothing".to_string()
        } else {
            watching.join("; ")
        }
    );
    if !outside.is_empty() {
        line.push_str(&format!(
            "; not on the target's CPU {} (target_cpus), which this process may not use (it may use {})",
            join(&outside),
            join(allowed)
        ));
    }
    if !failed.is_empty() {
        line.push_str(&format!("; could not start on {}", failed.join("; ")));
    }
    (probes, line)
}

/// The session's host probes and the stalls they saw that wait for a batch of each agent
/// in this process to ride with (on `CLOCK_MONOTONIC`, until the batch's engine is known).
pub(super) struct Probes {
    /// In the order of their reports.
    probes: Vec<HostProbe>,
    /// Per agent, the stalls not yet given to one of its batches.
    pending: Vec<StallLog>,
}

impl Probes {
    /// The probes `probes` (see [`start_probes`]) for a session of `agents` agents.
    pub(super) fn new(probes: Vec<HostProbe>, agents: usize) -> Probes {
        Probes {
            probes,
            pending: vec![StallLog::default(); agents],
        }
    }

    /// The load now sends `rate` requests a second: no probe wakes more often than that
    /// ([`probe_period`]).
    pub(super) fn follow(&self, rate: f64) {
        for probe in &self.probes {
            probe.set_period(probe_period(rate));
        }
    }

    /// Whether there is no probe.
    pub(super) fn is_empty(&self) -> bool {
        self.probes.is_empty()
    }

    /// The local workers' wake-ups since the last take (`watches`, one report a core, in
    /// the order first seen), then each probe's report; the probes' stalls wait for the
    /// next batch of each agent in this process (`local[i]`: agent `i` is): the host the
    /// session probes is theirs. A remote agent watches its own host. The workers' stalls
    /// are in their batches already.
    pub(super) fn take(&mut self, local: &[bool], watches: &[CoreWatch]) -> Vec<StallReport> {
        let mut reports: Vec<StallReport> = Vec::with_capacity(watches.len() + self.probes.len());
        let mut cores: Vec<Option<usize>> = Vec::new();
        for watch in watches {
            let report = watch.take();
            match cores.iter().position(|&c| c == watch.cpu()) {
                // Two workers on one core watch the same time: their wake-ups pool, the
                // time they cover does not add up.
                Some(i) => {
                    let seconds = reports[i].seconds.max(report.seconds);
                    reports[i].merge(&report);
                    reports[i].seconds = seconds;
                }
                None => {
                    cores.push(watch.cpu());
                    reports.push(report);
                }
            }
        }
        for probe in &self.probes {
            let (report, stalls) = probe.take_all();
            reports.push(report);
            for (pending, _) in self.pending.iter_mut().zip(local).filter(|(_, l)| **l) {
                pending.append(&stalls);
            }
        }
        reports
    }

    /// Gives the stalls waiting for `agent` to its `batch`, on the clock of its engine,
    /// whose zero is `origin_ns` on `CLOCK_MONOTONIC` (`None`: not in this process, nothing
    /// to give).
    pub(super) fn attach(&mut self, agent: usize, origin_ns: Option<u64>, batch: &mut Batch) {
        if let (Some(origin), Some(pending)) = (origin_ns, self.pending.get_mut(agent))
            && !pending.is_empty()
        {
            batch.stalls.append(&pending.since(origin));
            pending.clear();
        }
    }
}

/// `0,2,3`.
pub(super) fn join(cpus: &[usize]) -> String {
    cpus.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Refuses a scenario that pins its local workers (`cpus:`) to a CPU outside `allowed`
/// (this process's affinity, as `taskset` or a cgroup's cpuset set it): the workers could
/// pin themselves there, but the process was told to keep off it, and running on other
/// cores instead would measure something else than the scenario says. One line naming
/// both sets; a usage error (exit 2), before anything starts. An affinity that cannot be
/// read (empty) refuses nothing: pinning then tells.
pub(crate) fn check_affinity(scenario: &Scenario, allowed: &[usize]) -> Result<(), Error> {
    let cpus = local_cpus(scenario);
    if allowed.is_empty() || cpus.iter().all(|c| allowed.contains(c)) {
        return Ok(());
    }
    let outside: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|c| !allowed.contains(c))
        .collect();
    Err(Error::Usage(format!(
        "{}cpus: [{}] names CPU {} outside the CPUs this process may run on ({}, its affinity: taskset or a cpuset); name cores among those, or run vernier where it may use these",
        scenario
            .source
            .as_ref()
            .map_or(String::new(), |p| format!("{}: ", p.display())),
        join(cpus),
        join(&outside),
        join(allowed)
    )))
}

#[cfg(test)]
mod tests {
    use vernier_agent::{StallInterval, StallSource};

    use super::*;

    #[test]
    fn the_probes_stalls_reach_each_local_agents_batch_on_its_clock() {
        let mut probes = Probes::new(Vec::new(), 3);
        // A stall seen on CLOCK_MONOTONIC, from 5.0 to 9.0 ms, waiting for agents 0 and 2
        // (in this process) but not agent 1 (remote).
        let seen = StallLog {
            intervals: vec![StallInterval {
                start_ns: 5_000_000,
                end_ns: 9_000_000,
                core: Some(1),
                source: StallSource::Probe,
            }],
            dropped: 0,
        };
        for (pending, local) in probes.pending.iter_mut().zip([true, false, true]) {
            if local {
                pending.append(&seen);
            }
        }
        // What agent `agent`'s next batch gets, its engine started at `origin` if local.
        let mut attached = |agent: usize, origin: Option<u64>| {
            let mut batch = Batch::empty(0);
            probes.attach(agent, origin, &mut batch);
            let got: Vec<(u64, u64)> = (batch.stalls.intervals.iter())
                .map(|s| (s.start_ns, s.end_ns))
                .collect();
            got
        };
        assert_eq!(attached(1, None), []);
        // Agent 0's engine started at 1 ms, agent 2's at 6 ms (the stall began before).
        assert_eq!(attached(0, Some(1_000_000)), [(4_000_000, 8_000_000)]);
        assert_eq!(attached(2, Some(6_000_000)), [(0, 3_000_000)]);
        // Given once: the next batch has none.
        assert_eq!(attached(0, Some(1_000_000)), []);
        assert!(probes.take(&[true, false, true], &[]).is_empty());
    }
}
