//! The session and this host's cores: the process's affinity checked against the cores a
//! scenario pins its workers to, vernier's own threads confined beside the workers, and
//! the host probes that watch the cores a request meets for stalls.

use vernier_agent::{DEFAULT_PERIOD, HostProbe};

use crate::error::Error;
use crate::scenario::{AgentSpec, Scenario};

/// When the scenario pins local workers (`cpus:`), vernier's other threads (the
/// coordinator's runtime, the recorder, the terminal) are confined to the same cores for
/// the run. Left to float, they land on the server's core too, when the server shares the
/// host, and delay it by a scheduler slice at a time: against memcached pinned to core 0
/// at 10,000 req/s, with the worker on core 1, p99 was 130-200 µs with vernier's threads
/// floating and 42-66 µs with them on core 1 (the worker, at nice -10, keeps its core).
/// `None` when nothing is pinned, or when the cores cannot be used (the workers' own
/// pinning then reports it).
pub(super) fn confine(scenario: &Scenario) -> Option<vernier_agent::sys::Confinement> {
    let cpus = local_cpus(scenario);
    if cpus.is_empty() {
        return None;
    }
    vernier_agent::sys::confine_process(cpus).ok()
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

/// The session's host probes, in the order of their reports: the local agents' first core
/// when the scenario pins workers (the stalls a worker suffers), then the cores the
/// scenario names for a local target (`target_cpus:`: a target's core that stalls, or wakes
/// slowly from idle, makes a tail the worker's probe cannot see), then the coordinator's
/// own unpinned thread. Remote agents' hosts are not probed: that would need the agent to
/// run a probe and ship its reports, which it does not. A target's core outside `allowed`
/// (this process's affinity: a thread could pin itself there, but the process was told to
/// keep off it) is not probed, and a probe that cannot start is left out; the run goes on
/// without their figures, and the line returned beside the probes says what runs and what
/// does not. Each probe sleeps between wake-ups (no spinning), so it shares its core.
pub(super) fn start_probes(scenario: &Scenario, allowed: &[usize]) -> (Vec<HostProbe>, String) {
    let workers = local_cpus(scenario).first().copied();
    // The target's cores (`target_cpus:`) after the workers', each once.
    let mut target: Vec<usize> = Vec::new();
    let mut outside: Vec<usize> = Vec::new();
    for &cpu in &scenario.target_cpus {
        if Some(cpu) == workers || target.contains(&cpu) || outside.contains(&cpu) {
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
    for (cpu, whose) in workers
        .map(|c| (Some(c), "the workers'"))
        .into_iter()
        .chain(target.into_iter().map(|c| (Some(c), "the target's")))
        .chain([(None, "")])
    {
        let name = cpu.map_or("the coordinator's thread".to_string(), |c| {
            format!("CPU {c} ({whose})")
        });
        match HostProbe::start(cpu, DEFAULT_PERIOD) {
            Ok(probe) => {
                probes.push(probe);
                running.push(name);
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    let mut line = format!(
        "host probes: a sleeping thread's wake-ups every {:?} on {}",
        DEFAULT_PERIOD,
        if running.is_empty() {
            "nothing".to_string()
        } else {
            running.join(", ")
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

/// `0,2,3`.
fn join(cpus: &[usize]) -> String {
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
