//! A session's run: its setup (the affinity check, halt polling, the live figures, the
//! latency budget's calibration, the agents, the record, the coordinator, the host
//! probes), the loop that carries out the coordinator's decisions and feeds it the agents'
//! batches, the user's commands and the clock, and the teardown that stops the agents and
//! closes the record.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use tokio::sync::mpsc;
use vernier_agent::CoreWatch;
use vernier_agent::sys::TimestampMode;

use super::host::{Probes, check_affinity, check_spin, confine, start_probes};
use super::interface::{Keep, SessionOptions, SessionResult, Update};
use super::link::{Link, Message, connect, renew, run_seed};
use super::policy::{HOST_EVERY, TICK};
use super::target_cores::with_found_cores;
use super::threads::Threads;
use crate::budget::{Baseline, Budget, Figures, Sent};
use crate::coordinator::{
    Action, Coordinator, Event, EventKind, Input, PointConfig, Taken, UserCommand, Verdict,
};
use crate::error::Error;
use crate::hlog::Origin;
use crate::metrics::LiveMetrics;
use crate::record::{Machine, Recorder, RunRecord};
use crate::scenario::Scenario;

/// The runtime every command's async part runs on: two worker threads named `name`
/// (the sessions, the agent's control plane, deploys).
pub fn runtime(name: &str) -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            path: "tokio runtime".into(),
            source,
        })
}

/// The default run directory: runs/DATE-NAME (with a counter if taken).
pub fn default_record_dir(name: &str) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let stamp: String = stamp
        .trim_end_matches('Z')
        .chars()
        .map(|c| if c == ':' { '-' } else { c })
        .collect();
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = Path::new("runs").join(format!("{stamp}-{safe}"));
    let mut dir = base.clone();
    let mut n = 1;
    while dir.exists() {
        n += 1;
        dir = PathBuf::from(format!("{}-{n}", base.display()));
    }
    dir
}

/// Runs `scenario` to its verdict. `commands` carries the user's commands (closing it is
/// not a quit); Ctrl-C and SIGTERM quit. Every update goes to `watch`.
pub async fn run(
    scenario: &Scenario,
    options: &SessionOptions,
    commands: mpsc::UnboundedReceiver<UserCommand>,
    mut watch: impl FnMut(Update),
) -> Result<SessionResult, Error> {
    // Before anything starts: a scenario that pins workers where this process may not go.
    // The process's affinity as it was given (taskset, a cpuset), read before vernier
    // confines its own threads to the workers' cores below.
    let allowed = vernier_agent::sys::available_cpus();
    check_affinity(scenario, &allowed)?;
    // A local target pinned to some cores has them probed, when the scenario names none.
    let (found, line) = with_found_cores(scenario);
    if let Some(line) = line {
        watch(Update::Preparing(line));
    }
    let scenario = &found;
    // Spinning workers need a core of their own besides the target's, found or named.
    check_spin(scenario, &allowed)?;
    // Before anything is measured, and kept until the session ends (then put back); the
    // record's machine shows the value in force.
    let _halt_poll = scenario
        .halt_poll
        .map(vernier_agent::sys::HaltPoll::set)
        .transpose()
        .map_err(|e| Error::Usage(format!("halt_poll: {e}")))?;
    // Listening first: a bad address ends the run before any load.
    // Fed only when served: without `--metrics` the loop does none of its work.
    let live = options.metrics.map(|_| LiveMetrics::new());
    let served = match (options.metrics, &live) {
        (Some(addr), Some(live)) => Some(live.serve(addr).await?),
        _ => None,
    };
    // (The server stops when `served` goes, with the session.)
    let baseline = calibrate(scenario, &mut watch).await?;
    let confinement = confine(scenario, &allowed);
    let (confined, keep) = confinement
        .as_ref()
        .map(|(c, keep)| (c.cpus().to_vec(), *keep))
        .unwrap_or_default();
    let metrics = served.as_ref().map(|(addr, _)| *addr);
    let mut session = Session::start(
        scenario,
        options,
        &allowed,
        (confined, keep),
        metrics,
        &mut watch,
    )
    .await?;
    session
        .drive(&baseline, live.as_ref(), commands, &mut watch)
        .await;
    Ok(session.finish().await)
}

/// The path's floor and the client's share, before the run's load and before vernier's
/// threads are confined (the ping-pong pins its own to the workers' and target's cores).
/// Each measurement says what it does as it starts, to `watch`.
async fn calibrate(scenario: &Scenario, watch: &mut impl FnMut(Update)) -> Result<Baseline, Error> {
    let scenario = scenario.clone();
    let (say, mut said) = mpsc::unbounded_channel();
    let measured = tokio::task::spawn_blocking(move || {
        Baseline::measure(&scenario, |line| {
            let _ = say.send(line);
        })
    });
    // Ends when the measurement does (it holds the sender).
    while let Some(line) = said.recv().await {
        watch(Update::Preparing(line));
    }
    measured
        .await
        .map_err(|e| Error::Failed(format!("the latency budget's calibration: {e}")))
}

/// Ctrl-C, or a polite kill (SIGTERM): the user quits; the record is saved either way.
async fn quit_signal() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// A run under way: the agents' links, the coordinator, the record, and what the loop
/// keeps from one turn to the next.
struct Session<'a> {
    /// The scenario run.
    scenario: &'a Scenario,
    /// How it is run.
    options: &'a SessionOptions,
    /// One per agent, in the scenario's order (a lost one closed, not removed).
    links: Vec<Link>,
    /// The agents' batches and losses.
    rx: mpsc::UnboundedReceiver<Message>,
    /// Kept only for a replicated point's runs, which start the agents again: otherwise
    /// the channel closes when the last agent's forwarder ends.
    renew_tx: Option<mpsc::UnboundedSender<Message>>,
    /// The run directory.
    dir: PathBuf,
    /// The timestamp source in use.
    timestamps: TimestampMode,
    /// The run's record as it is written.
    recorder: Recorder,
    /// The methodology, fed the inputs.
    coordinator: Coordinator,
    /// The host probes, in the order of their reports, and their stalls on the way to
    /// the local agents' batches.
    probes: Probes,
    /// An agent that failed an action, for the coordinator's next input.
    failure: Option<(usize, String)>,
    /// Writing the record failed (the measurement goes on): why, the first time.
    record_error: Option<String>,
    /// Each point's budget, made once as its verdict passes and given to the outcome.
    budgets: Vec<Option<Budget>>,
    /// The departures of the point's kept requests, for the budget's queue.
    sent: Sent,
    /// Where vernier's own threads run.
    threads: Threads,
}

impl<'a> Session<'a> {
    /// Starts the agents, the record (said to `watch` with the cores vernier was
    /// `confined` to and where the `metrics` are served), the coordinator and the host
    /// probes (against the affinity given, `allowed`). If the record cannot be created,
    /// the agents are stopped.
    async fn start(
        scenario: &'a Scenario,
        options: &'a SessionOptions,
        allowed: &[usize],
        (confined, keep): (Vec<usize>, Keep),
        metrics: Option<SocketAddr>,
        watch: &mut impl FnMut(Update),
    ) -> Result<Session<'a>, Error> {
        let (tx, rx) = mpsc::unbounded_channel();
        let (links, timestamps) = connect(scenario, options, &tx).await?;
        let renew_tx = scenario.replications.is_some().then(|| tx.clone());
        drop(tx);
        let dir = options
            .record
            .clone()
            .unwrap_or_else(|| default_record_dir(&scenario.name));
        let record = RunRecord {
            format: crate::record::FORMAT.into(),
            name: scenario.name.clone(),
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            status: "running".into(),
            scenario_file: scenario.source.as_ref().map(|p| p.display().to_string()),
            scenario: scenario.yaml.clone(),
            machine: Machine::this(),
            timestamps: timestamps.to_string(),
            events: Vec::new(),
            points: Vec::new(),
            slo_rate: None,
            verdict: None,
        };
        let recorder = match Recorder::create(&dir, record) {
            Ok(r) => r,
            Err(e) => {
                for link in links {
                    link.stop().await;
                }
                return Err(e);
            }
        };
        watch(Update::Started {
            record: dir.clone(),
            timestamps: Some(timestamps.clone()),
            confined,
            keep,
            metrics,
        });
        let coordinator = Coordinator::new(
            PointConfig::from_scenario(scenario, &timestamps),
            &scenario.load,
        );
        // Against the affinity given, not the confinement: the target's core lies outside
        // the confinement by design, and its probe is pinned there on purpose.
        let (probes, probing) = start_probes(scenario, allowed);
        let probes = Probes::new(probes, links.len());
        watch(Update::Preparing(probing));
        Ok(Session {
            scenario,
            options,
            links,
            rx,
            renew_tx,
            dir,
            timestamps,
            recorder,
            coordinator,
            probes,
            failure: None,
            record_error: None,
            budgets: Vec::new(),
            sent: Sent::new(scenario.budget_probe),
            threads: Threads::new(),
        })
    }

    /// The loop: carries out each of the coordinator's decisions (actions first, the
    /// agents waiting for nobody, then events) and feeds it the next input (a lost agent,
    /// a batch, a command, a quit, the host probes' reports, the clock) until it is done.
    async fn drive(
        &mut self,
        baseline: &Baseline,
        live: Option<&LiveMetrics>,
        mut commands: mpsc::UnboundedReceiver<UserCommand>,
        watch: &mut impl FnMut(Update),
    ) {
        let mut host_tick = tokio::time::interval(HOST_EVERY);
        host_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let started = Instant::now();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut commands_open = true;
        let ctrl_c = quit_signal();
        tokio::pin!(ctrl_c);
        let mut ctrl_c_armed = true;
        let mut decision = self.coordinator.start(started.elapsed());
        // Local agents' workers report their cores' wake-ups even without a probe.
        let local_agents = self.links.iter().any(|l| l.clock_origin_ns().is_some());
        self.threads.look();
        loop {
            self.carry_out(&decision.actions).await;
            self.pass_on(&mut decision.events, baseline, live, watch);
            if decision.actions.contains(&Action::Finished) || self.coordinator.is_done() {
                break;
            }
            let at = || started.elapsed();
            let input = if let Some((agent, detail)) = self.failure.take() {
                Input::AgentLost { agent, detail }
            } else {
                tokio::select! {
                    message = self.rx.recv() => match message {
                        Some(Message::Batch(agent, mut batch)) => {
                            let origin = self.links.get(agent).and_then(Link::clock_origin_ns);
                            self.probes.attach(agent, origin, &mut batch);
                            Input::Batch { agent, batch }
                        }
                        Some(Message::Lost(agent, detail)) => Input::AgentLost { agent, detail },
                        None => Input::AgentLost { agent: 0, detail: "every agent's stream ended".into() },
                    },
                    command = commands.recv(), if commands_open => match command {
                        Some(c) => Input::Command(c),
                        None => { commands_open = false; Input::Tick }
                    },
                    _ = &mut ctrl_c, if ctrl_c_armed => {
                        ctrl_c_armed = false;
                        Input::Command(UserCommand::Quit)
                    }
                    _ = host_tick.tick(), if !self.probes.is_empty() || local_agents => {
                        let local: Vec<bool> =
                            self.links.iter().map(|l| l.clock_origin_ns().is_some()).collect();
                        let watches: Vec<CoreWatch> =
                            self.links.iter().flat_map(Link::core_watches).cloned().collect();
                        self.threads.look();
                        Input::Host(self.probes.take(&local, &watches))
                    }
                    _ = tick.tick() => Input::Tick,
                }
            };
            if let Input::AgentLost { agent, .. } = &input
                && let Some(link) = self.links.get(*agent)
            {
                link.close();
            }
            // A batch tells the coordinator the time as a tick does: the clock ticks only
            // when no batch came for a tick's length, not 40 times a second on top of
            // them.
            if matches!(input, Input::Batch { .. }) {
                tick.reset();
            }
            decision = self.coordinator.step(at(), input);
            if let Some(taken) = decision.taken.take() {
                self.keep(taken, live);
            }
            if let Err(e) = self.recorder.tick() {
                // The measurement goes on; the record's trouble is reported at the end.
                self.record_error.get_or_insert(e.to_string());
            }
        }
    }

    /// Carries out `actions` on every agent. A lost agent's link is closed: no more calls
    /// to it, and the others share the load. A new run of a replicated point starts the
    /// agents again.
    async fn carry_out(&mut self, actions: &[Action]) {
        let share = 1.0 / self.links.iter().filter(|l| !l.is_closed()).count().max(1) as f64;
        for action in actions {
            if let Action::Load { rate } = action {
                self.probes.follow(*rate);
            }
            if let Action::Renew { .. } = action {
                // The agents start again on new clocks: the last run's departures only.
                self.sent = Sent::new(self.sent.probe());
            }
            if let (Action::Renew { run }, Some(tx)) = (action, &self.renew_tx) {
                renew_all(
                    &mut self.links,
                    self.scenario,
                    self.options,
                    *run,
                    tx,
                    &mut self.failure,
                )
                .await;
                continue;
            }
            for (i, link) in self.links.iter_mut().enumerate() {
                if link.is_closed() {
                    continue;
                }
                if let Err(e) = link
                    .apply(*action, share, &self.scenario.interarrival)
                    .await
                {
                    self.failure.get_or_insert((i, e));
                }
            }
        }
    }

    /// Passes the decision's `events` on, in order, to the live figures, the record and
    /// `watch`; a verdict's point first gets its budget, from `baseline` and what was seen
    /// while it measured.
    fn pass_on(
        &mut self,
        events: &mut Vec<Event>,
        baseline: &Baseline,
        live: Option<&LiveMetrics>,
        watch: &mut impl FnMut(Update),
    ) {
        for mut event in events.drain(..) {
            if let EventKind::Verdict(result) = &mut event.kind {
                let during = self.sent.during(result.achieved_rate);
                result.budget = Some(baseline.budget_from(Figures::of(result), during));
                self.budgets.push(result.budget.clone());
            }
            if let Some(live) = live {
                live.event(&event);
            }
            if let Err(e) = self.recorder.event(&event) {
                self.record_error.get_or_insert(e.to_string());
            }
            watch(Update::Event(event));
        }
    }

    /// Keeps a batch the coordinator counted: the record takes its samples with the round
    /// the coordinator counted them in, the budget its departures, the live figures its
    /// latencies; then the batch goes back to its agent's workers for reuse.
    fn keep(&mut self, taken: Taken, live: Option<&LiveMetrics>) {
        let Taken {
            point,
            round,
            agent,
            batch,
        } = taken;
        let origin = Origin {
            point,
            round,
            agent,
            worker: batch.worker,
        };
        self.recorder.samples(origin, &batch.samples);
        self.recorder.stalls(origin, &batch.stalls);
        if round > 0 {
            self.sent.add(point, round, agent, &batch);
        }
        if let Some(live) = live {
            live.latency(point, agent, &batch.latency);
        }
        if let Err(e) = self
            .recorder
            .latency(origin, batch.elapsed, batch.recorded_latency())
        {
            self.record_error.get_or_insert(e.to_string());
        }
        if let Some(Link::Local { engine, .. }) = self.links.get(agent) {
            engine.recycle(batch);
        }
    }

    /// Stops the agents and the probes and closes the record: what the run measured.
    async fn finish(mut self) -> SessionResult {
        // While every thread still runs.
        self.threads.look();
        let Session {
            threads,
            links,
            dir,
            timestamps,
            recorder,
            coordinator,
            probes,
            mut record_error,
            budgets,
            ..
        } = self;
        for link in links {
            link.stop().await;
        }
        // Each stops within a period (1 ms).
        drop(probes);
        let verdict = coordinator.verdict().unwrap_or(Verdict::NotAvailable);
        let slo_rate = coordinator.slo_rate();
        let record = match recorder.finish(slo_rate, Some(verdict)) {
            Ok(dir) => dir,
            Err(e) => {
                record_error.get_or_insert(e.to_string());
                dir
            }
        };
        let mut points = coordinator.results().to_vec();
        for (p, budget) in points.iter_mut().zip(budgets) {
            p.budget = budget;
        }
        for p in &mut points {
            p.record = Some(record.display().to_string());
        }
        SessionResult {
            points,
            slo_rate,
            verdict,
            record,
            timestamps,
            record_error,
            threads: threads.usage(),
        }
    }
}

/// Starts every agent not lost again for run `run` of a replicated point, its workers
/// seeded for that run; an agent that cannot be started is gone, its failure the
/// coordinator's next input.
async fn renew_all(
    links: &mut Vec<Link>,
    scenario: &Scenario,
    options: &SessionOptions,
    run: u32,
    tx: &mpsc::UnboundedSender<Message>,
    failure: &mut Option<(usize, String)>,
) {
    let run_scenario = Scenario {
        seed: run_seed(scenario.seed, run),
        ..scenario.clone()
    };
    for (i, link) in std::mem::take(links).into_iter().enumerate() {
        // A lost agent stays lost.
        if link.is_closed() {
            links.push(link);
            continue;
        }
        match renew(link, &run_scenario, options, i, tx).await {
            Ok(link) => links.push(link),
            Err(e) => {
                failure.get_or_insert((i, format!("starting run {run}: {e}")));
                links.push(Link::Gone {
                    closed: Arc::new(AtomicBool::new(true)),
                });
            }
        }
    }
}
