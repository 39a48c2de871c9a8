//! Phase 2: the file's fields checked, alone and against each other, into a typed
//! [`Scenario`]. Each check names the field and the value, and says what is allowed with an
//! example, since the reader is someone editing the file.

use std::net::SocketAddr;
use std::time::Duration;

use serde_yaml::Value;
use vernier_agent::sys::{TimestampMode, Transport};
use vernier_agent::{AgentKind, ConfigError, PollMode};
use vernier_protocols::{InterArrival, Protocol, SpecError, WorkloadKind};
use vernier_stats::Percentile;

use super::context::Context;
use super::defaults;
use super::error::ScenarioError;
use super::fields::{
    UNREADABLE_DURATION, duration, duration_or, parse_duration, percentile_in_range,
};
use super::file::{CiFile, File, LimitsFile, ReplicationsFile, SamplingFile, WarmupFile};
use super::plan;
use super::protocol;
use super::types::{
    CiTarget, CiWidth, Limits, LoadPlan, Method, OnAgentLoss, Replications, Sampling, Scenario,
    Tail, Warmup,
};

/// Checks `file`, read from the text `yaml`, and types its values.
pub(crate) fn scenario(
    file: File,
    yaml: String,
    context: &Context<'_>,
) -> Result<Scenario, ScenarioError> {
    let name = name(context, file.name)?;
    let targets = plan::targets(context, file.target.as_ref())?;
    let protocol = protocol::protocol(context, file.protocol, &targets[0])?;
    let (workload, default_workload) =
        protocol::workload(context, &protocol, file.service, file.workload, file.path)?;
    let transport = transport(context, file.transport.as_deref())?;
    let agents = plan::agents(context, file.agents.as_ref())?;
    let interarrival = interarrival(context, file.interarrival)?;
    let ci_tail = file.ci.as_ref().and_then(|c| c.tail.clone());
    let ci = ci(context, file.ci)?;
    let load = plan::load(context, file.load.as_ref(), &ci)?;
    let percentiles = percentiles(context, file.percentiles, &ci, &load)?;
    let timestamps = timestamps(context, file.timestamps, file.interface)?;
    let poll = poll(context, file.poll)?;

    let limits = limits(context, file.limits.unwrap_or_default())?;
    let sampling = sampling(context, file.sampling.unwrap_or_default())?;
    let warmup = warmup(context, file.warmup.unwrap_or_default())?;
    let alpha = alpha(context, file.alpha)?;
    let timeout = duration_or(context, "timeout", file.timeout, defaults::TIMEOUT)?;
    let halt_poll = halt_poll(context, file.halt_poll)?;
    let method = method(context, file.method.as_deref())?;
    let ci = CiTarget {
        tail: super::tail::tail(context, ci_tail.as_deref(), method)?,
        ..ci
    };
    let replications = file
        .replications
        .map(|r| replications(context, r))
        .transpose()?;
    let budget_probe = file
        .budget
        .and_then(|b| b.probe)
        .map(|share| budget_probe(context, share, &protocol))
        .transpose()?;
    let on_agent_loss = on_agent_loss(context, file.on_agent_loss.as_deref())?;
    // Checked last, as when it was read in the scenario's own field below.
    let interarrival_enforced = interarrival_enforced(context, file.interarrival_check.as_deref())?;

    let scenario = Scenario {
        name,
        source: context.source.map(Into::into),
        yaml,
        targets,
        protocol,
        workload,
        default_workload,
        transport,
        agents,
        workers: file.workers.unwrap_or(defaults::WORKERS),
        cpus: file.cpus.unwrap_or_default(),
        target_cpus: file.target_cpus.unwrap_or_default(),
        connections: file.connections.unwrap_or(defaults::CONNECTIONS),
        depth: file.depth.unwrap_or(defaults::DEPTH),
        interarrival,
        load,
        ci,
        method,
        percentiles,
        timestamps,
        poll,
        halt_poll,
        limits,
        sampling,
        warmup,
        alpha,
        timeout,
        seed: file.seed.unwrap_or(defaults::SEED),
        on_agent_loss,
        replications,
        budget_probe,
        interarrival_enforced,
    };
    agents_can_run(context, &scenario)?;
    Ok(scenario)
}

/// The arrival process: `interarrival:`, or the default.
fn interarrival(
    context: &Context<'_>,
    interarrival: Option<String>,
) -> Result<InterArrival, ScenarioError> {
    let interarrival_text = interarrival.unwrap_or_else(|| defaults::INTERARRIVAL.into());
    interarrival_text
        .parse()
        .map_err(|e: SpecError| context.bad("interarrival", &interarrival_text, e.expected()))
}

/// How a worker waits between departures and replies: `poll:`, or the default.
fn poll(context: &Context<'_>, poll: Option<String>) -> Result<PollMode, ScenarioError> {
    match poll {
        None => Ok(PollMode::default()),
        Some(text) => text
            .parse()
            .map_err(|_| context.bad("poll", &text, "expected sleep, spin or adaptive")),
    }
}

/// The significance level of every hypothesis test: `alpha:`, or the default; above 0
/// and at most 0.5.
fn alpha(context: &Context<'_>, alpha: Option<f64>) -> Result<f64, ScenarioError> {
    let alpha = alpha.unwrap_or(defaults::ALPHA);
    if !(alpha > 0.0 && alpha <= 0.5) {
        return Err(context.bad(
            "alpha",
            alpha,
            "expected a significance level above 0 and at most 0.5, as in 0.05",
        ));
    }
    Ok(alpha)
}

/// How long idle vCPUs poll before they halt: `halt_poll:`, a duration, if the file
/// gives one.
fn halt_poll(
    context: &Context<'_>,
    halt_poll: Option<String>,
) -> Result<Option<Duration>, ScenarioError> {
    halt_poll
        .map(|text| duration(context, "halt_poll", &text, "200us"))
        .transpose()
}

/// How requests travel: over TCP unless the file says UDP.
fn transport(context: &Context<'_>, transport: Option<&str>) -> Result<Transport, ScenarioError> {
    match transport.unwrap_or(defaults::TRANSPORT) {
        "tcp" => Ok(Transport::Tcp),
        "udp" => Ok(Transport::Udp),
        other => Err(context.bad("transport", other, "expected tcp or udp")),
    }
}

/// The run's limits: tries of a point and the whole run's duration.
fn limits(context: &Context<'_>, limits: LimitsFile) -> Result<Limits, ScenarioError> {
    let max_tries = limits.max_tries.unwrap_or(defaults::MAX_TRIES);
    if max_tries == 0 {
        return Err(context.bad("limits.max_tries", 0, "expected at least 1, as in 10"));
    }
    Ok(Limits {
        max_tries,
        max_duration: duration_or(
            context,
            "limits.max_duration",
            limits.max_duration,
            defaults::MAX_DURATION,
        )?,
    })
}

/// Which procedure decides a point: vernier's own unless the file asks for Lancet's.
fn method(context: &Context<'_>, method: Option<&str>) -> Result<Method, ScenarioError> {
    match method.unwrap_or(defaults::METHOD) {
        "vernier" => Ok(Method::Vernier),
        "lancet" => Ok(Method::Lancet),
        other => Err(context.bad(
            "method",
            other,
            "expected vernier (effect-size checks, dependence-valid CIs) or lancet \
             (Lancet's procedure exactly)",
        )),
    }
}

/// What a lost agent does to the point: stops it unless the file says to continue.
fn on_agent_loss(
    context: &Context<'_>,
    on_agent_loss: Option<&str>,
) -> Result<OnAgentLoss, ScenarioError> {
    match on_agent_loss.unwrap_or(defaults::ON_AGENT_LOSS) {
        "stop" => Ok(OnAgentLoss::Stop),
        "continue" => Ok(OnAgentLoss::Continue),
        other => Err(context.bad(
            "on_agent_loss",
            other,
            "expected stop (the point ends N/A agent_lost) or continue (the other agents \
             take over its load)",
        )),
    }
}

/// Whether a failed interarrival test makes the point N/A (enforce, the default) or is
/// only reported.
fn interarrival_enforced(
    context: &Context<'_>,
    check: Option<&str>,
) -> Result<bool, ScenarioError> {
    match check.unwrap_or(defaults::CHECK) {
        "enforce" => Ok(true),
        "report" => Ok(false),
        other => Err(context.bad(
            "interarrival_check",
            other,
            "expected enforce (a load the agent cannot generate is N/A) or report \
             (measure anyway; the result carries the failed test)",
        )),
    }
}

/// The run's name, which also names its record directory.
fn name(context: &Context<'_>, name: Option<String>) -> Result<String, ScenarioError> {
    let name = name.ok_or_else(|| {
        context.missing(
            "name",
            "a name for the run and its records, as in name: memcached-zipf",
        )
    })?;
    let unusable = |c: char| c == '/' || c == '\\' || c.is_control();
    if name.trim().is_empty() || name.starts_with('.') || name.contains(unusable) {
        return Err(context.bad(
            "name",
            &name,
            "expected a name usable as a directory name (no /, no leading dot), as in \
             memcached-zipf",
        ));
    }
    Ok(name)
}

/// The answer wanted.
fn ci(context: &Context<'_>, ci: Option<CiFile>) -> Result<CiTarget, ScenarioError> {
    let ci = ci.unwrap_or_default();
    let percentile = percentile_in_range(
        context,
        "ci.percentile",
        ci.percentile.unwrap_or(defaults::CI_PERCENTILE),
    )?;
    let width = ci_width(
        context,
        "ci.width",
        ci.width.as_deref().unwrap_or(defaults::CI_WIDTH),
    )?;
    let confidence = ci.confidence.unwrap_or(defaults::CI_CONFIDENCE);
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(context.bad(
            "ci.confidence",
            confidence,
            "expected a confidence level strictly between 0 and 1, as in 0.95",
        ));
    }
    Ok(CiTarget {
        percentile,
        width,
        confidence,
        tail: Tail::default(),
    })
}

/// `replications:`: how many runs of each point, and how close their estimates must be.
fn replications(
    context: &Context<'_>,
    file: ReplicationsFile,
) -> Result<Replications, ScenarioError> {
    let min = file.min.unwrap_or(defaults::REPLICATIONS_MIN);
    if min < 2 {
        return Err(context.bad(
            "replications.min",
            min,
            "expected at least 2 runs (one run has no spread to judge), as in 3",
        ));
    }
    let max = file.max.unwrap_or(defaults::REPLICATIONS_MAX);
    if max < min || max > MAX_REPLICATIONS {
        return Err(context.bad(
            "replications.max",
            max,
            format!("expected from replications.min ({min}) to {MAX_REPLICATIONS}, as in 10"),
        ));
    }
    let width = ci_width(
        context,
        "replications.width",
        file.width
            .as_deref()
            .unwrap_or(defaults::REPLICATIONS_WIDTH),
    )?;
    let pause = match file.pause {
        None => Duration::ZERO,
        Some(text) if text.trim() == "0" => Duration::ZERO,
        Some(text) => duration(context, "replications.pause", &text, "1s")?,
    };
    Ok(Replications {
        min,
        max,
        width,
        pause,
    })
}

/// `budget.probe`: the share of each point's rate the path probe adds to it, as `10%` or
/// `0.1`, against a synthetic target (the only protocol whose requests can ask for no
/// service).
fn budget_probe(
    context: &Context<'_>,
    value: Value,
    protocol: &Protocol,
) -> Result<f64, ScenarioError> {
    const EXPECTED: &str =
        "expected a share of each point's rate above 0 and at most 100%, as in 10% or 0.1";
    let share = match &value {
        Value::Number(n) => n.as_f64(),
        Value::String(text) => text
            .trim()
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .map(|percent| percent / 100.0),
        _ => None,
    };
    let shown = match &value {
        Value::String(text) => text.clone(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    };
    let Some(share) = share.filter(|s| *s > 0.0 && *s <= 1.0) else {
        return Err(context.bad("budget.probe", shown, EXPECTED));
    };
    if protocol.workload() != WorkloadKind::Service {
        return Err(context.bad(
            "budget.probe",
            shown,
            format!(
                "the probe's requests ask the target for no service time, which only protocol synthetic can (this scenario's is {protocol})"
            ),
        ));
    }
    Ok(share)
}

/// The most runs a replicated point may take.
const MAX_REPLICATIONS: u32 = 100;

/// What `ci.width` may be, for its errors.
const CI_WIDTH: &str = "a duration such as 10us or a share of the value such as 20%";

/// `ci.width`: a duration (`10us`), or a share of the percentile's value (`20%`), strictly
/// between 0% and 100% since a CI as wide as its value says nothing.
fn ci_width(context: &Context<'_>, field: &str, text: &str) -> Result<CiWidth, ScenarioError> {
    if let Some(percent) = text.trim().strip_suffix('%') {
        return match percent.trim().parse::<f64>() {
            Ok(percent) if percent > 0.0 && percent < 100.0 => {
                Ok(CiWidth::Relative(percent / 100.0))
            }
            _ => Err(context.bad(
                field,
                text,
                "expected a share of the value strictly between 0% and 100%, as in 20%",
            )),
        };
    }
    match parse_duration(text) {
        Ok(width) => Ok(CiWidth::Absolute(width)),
        // Neither form: say both. A duration that is only out of range (0us) keeps its
        // own message.
        Err(expected) if expected.starts_with(UNREADABLE_DURATION) => {
            Err(context.bad(field, text, format!("expected {CI_WIDTH}")))
        }
        Err(expected) => Err(context.bad(field, text, format!("expected {expected}, as in 10us"))),
    }
}

/// The percentiles reported: those asked for (or the defaults), the target's and the SLO's,
/// ascending, each once.
fn percentiles(
    context: &Context<'_>,
    asked: Option<Vec<f64>>,
    ci: &CiTarget,
    load: &LoadPlan,
) -> Result<Vec<Percentile>, ScenarioError> {
    let mut percentiles = match asked {
        Some(asked) => asked
            .into_iter()
            .enumerate()
            .map(|(i, p)| percentile_in_range(context, &format!("percentiles[{i}]"), p))
            .collect::<Result<Vec<_>, _>>()?,
        None => defaults::PERCENTILES.to_vec(),
    };
    percentiles.push(ci.percentile);
    if let LoadPlan::Slo(slo) = load {
        percentiles.push(slo.percentile);
    }
    percentiles.sort();
    percentiles.dedup();
    Ok(percentiles)
}

/// Where timestamps come from; hardware needs the interface whose NIC takes them, and an
/// interface is refused for the other sources rather than ignored.
fn timestamps(
    context: &Context<'_>,
    mode: Option<String>,
    interface: Option<String>,
) -> Result<TimestampMode, ScenarioError> {
    let text = mode.unwrap_or_else(|| defaults::TIMESTAMPS.into());
    let mode: TimestampMode = text.parse().map_err(|_| {
        context.bad(
            "timestamps",
            &text,
            "expected hw (with interface), kernel or user",
        )
    })?;
    match (mode, interface) {
        (TimestampMode::Hardware { interface }, None) if interface.is_empty() => Err(context.bad(
            "timestamps",
            &text,
            "expected interface too: hardware timestamps are taken by a NIC, named as in \
                 interface: eth0",
        )),
        (TimestampMode::Hardware { interface }, None) => Ok(TimestampMode::Hardware { interface }),
        (TimestampMode::Hardware { interface: named }, Some(interface)) => {
            if interface.trim().is_empty() || !(named.is_empty() || named == interface) {
                return Err(context.bad(
                    "interface",
                    &interface,
                    format!("expected the interface of timestamps: {text}, as in eth0"),
                ));
            }
            Ok(TimestampMode::Hardware { interface })
        }
        (mode, Some(interface)) => Err(context.bad(
            "interface",
            &interface,
            format!(
                "expected no interface with timestamps: {mode}; only hardware timestamps \
                 (timestamps: hw) are taken by a NIC"
            ),
        )),
        (mode, None) => Ok(mode),
    }
}

/// How measuring starts.
fn sampling(context: &Context<'_>, sampling: SamplingFile) -> Result<Sampling, ScenarioError> {
    let rate = sampling.rate.unwrap_or(defaults::SAMPLING_RATE);
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(context.bad(
            "sampling.rate",
            rate,
            "expected a share of requests above 0 and at most 1, as in 0.2",
        ));
    }
    let samples = sampling.samples.unwrap_or(defaults::SAMPLING_SAMPLES);
    if samples < 100 {
        return Err(context.bad(
            "sampling.samples",
            samples,
            "expected at least 100 samples per agent, as in 10000",
        ));
    }
    let interarrival_samples = sampling
        .interarrival_samples
        .unwrap_or(defaults::INTERARRIVAL_SAMPLES);
    if interarrival_samples < 50 {
        return Err(context.bad(
            "sampling.interarrival_samples",
            interarrival_samples,
            "expected at least 50 gaps for the Anderson-Darling test, as in 1000",
        ));
    }
    Ok(Sampling {
        rate,
        samples,
        interarrival_samples,
    })
}

/// When warm-up ends. Its windows must fit in its time limit, or it could never end.
fn warmup(context: &Context<'_>, warmup: WarmupFile) -> Result<Warmup, ScenarioError> {
    let window = duration_or(
        context,
        "warmup.window",
        warmup.window.clone(),
        defaults::WARMUP_WINDOW,
    )?;
    let windows = warmup.windows.unwrap_or(defaults::WARMUP_WINDOWS);
    if windows < 10 {
        return Err(context.bad(
            "warmup.windows",
            windows,
            "expected at least 10 windows for the stationarity test, as in 40",
        ));
    }
    let tolerance = warmup.tolerance.unwrap_or(defaults::WARMUP_TOLERANCE);
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return Err(context.bad(
            "warmup.tolerance",
            tolerance,
            "expected a fraction of the target rate strictly between 0 and 1, as in 0.05",
        ));
    }
    let max = duration_or(
        context,
        "warmup.max",
        warmup.max.clone(),
        defaults::WARMUP_MAX,
    )?;
    let needed = u32::try_from(windows)
        .ok()
        .and_then(|n| window.checked_mul(n));
    if needed.is_none_or(|needed| needed > max) {
        return Err(context.bad(
            "warmup.max",
            warmup.max.as_deref().unwrap_or(defaults::WARMUP_MAX),
            format!(
                "expected at least windows × window ({windows} × {}) to let warm-up end",
                warmup.window.as_deref().unwrap_or(defaults::WARMUP_WINDOW)
            ),
        ));
    }
    Ok(Warmup {
        window,
        windows,
        tolerance,
        max,
    })
}

/// The agents' own check of the load description, so that a scenario that validates here
/// never fails when the agents are configured. Its fields have the scenario's names.
fn agents_can_run(context: &Context<'_>, scenario: &Scenario) -> Result<(), ScenarioError> {
    for agent in 0..scenario.agents.len() {
        let spec = scenario.load_spec(agent, SocketAddr::from(([127, 0, 0, 1], 1)));
        spec.validate().map_err(|e| match e {
            ConfigError::Invalid {
                field,
                value,
                expected,
            } => context.bad(field, value, format!("expected {expected}")),
            mismatch @ ConfigError::Mismatch { .. } => {
                context.invalid("workload", None, mismatch.to_string())
            }
        })?;
    }
    if scenario
        .agents
        .iter()
        .all(|a| a.kind() == AgentKind::Throughput)
    {
        return Err(context.invalid(
            "agents",
            None,
            "expected at least one agent that measures (kind symmetric or latency): \
             throughput agents only load",
        ));
    }
    Ok(())
}
