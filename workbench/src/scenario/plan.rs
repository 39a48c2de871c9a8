//! The scenario's polymorphic fields, read from YAML values by hand so that each wrong shape
//! gets its own message: `target` (one address or a list), `agents` (a list of `local`,
//! remote or SSH entries) and `load` (a rate, a list, a step sweep or an SLO search).

use serde_yaml::{Mapping, Value};
use vernier_agent::AgentKind;

use super::context::Context;
use super::error::ScenarioError;
use super::fields::{duration, percentile_in_range};
use super::types::{AgentSpec, CiTarget, LoadPlan, SloSearch};
use super::value::show;

/// A step sweep longer than this is more likely a mistyped step than a plan.
const MAX_STEPS: usize = 1000;

/// The token variable of a remote agent that does not name one.
const DEFAULT_TOKEN_ENV: &str = "VERNIER_TOKEN";

/// What an agent entry may be.
const AGENT_FORMS: &str = "expected local, {local: {kind: KIND}}, \
    {address: HOST:PORT, token_env: VAR, tls_ca: PEM, tls_name: NAME, kind: KIND} or \
    {ssh: HOST, kind: KIND}";

/// What `load` may be.
const LOAD_FORMS: &str = "expected a rate in requests per second (20000), a list of rates \
    ([10000, 20000]), {step: {from: 5000, to: 50000, by: 5000}} or \
    {slo: {percentile: 99, below: 300us, to: 100000}}";

/// The servers under test: one `host:port`, or a list.
pub(crate) fn targets(
    context: &Context<'_>,
    value: Option<&Value>,
) -> Result<Vec<String>, ScenarioError> {
    match value {
        None | Some(Value::Null) => Err(context.missing(
            "target",
            "the server under test, as in target: 127.0.0.1:7000, or a list of them",
        )),
        Some(Value::Sequence(items)) if items.is_empty() => Err(context.bad(
            "target",
            "[]",
            "expected at least one host:port, as in [127.0.0.1:7000]",
        )),
        Some(Value::Sequence(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| address(context, &format!("target[{i}]"), item))
            .collect(),
        Some(one) => Ok(vec![address(context, "target", one)?]),
    }
}

/// A `host:port` (resolved later, where the agents run: a scenario is checked without the
/// network).
fn address(context: &Context<'_>, field: &str, value: &Value) -> Result<String, ScenarioError> {
    let valid = |text: &str| {
        let (host, port) = text.rsplit_once(':')?;
        let bracketed = host.starts_with('[') && host.ends_with(']');
        let host_ok = !host.is_empty()
            && !host.contains(char::is_whitespace)
            && (bracketed || !host.contains(':'));
        (host_ok && port.parse::<u16>().ok()? > 0).then_some(())
    };
    match value {
        Value::String(text) if valid(text.trim()).is_some() => Ok(text.trim().to_owned()),
        other => Err(context.bad(
            field,
            show(other),
            "expected host:port, as in 127.0.0.1:7000",
        )),
    }
}

/// Where load comes from; one local agent unless stated.
pub(crate) fn agents(
    context: &Context<'_>,
    value: Option<&Value>,
) -> Result<Vec<AgentSpec>, ScenarioError> {
    let items = match value {
        None | Some(Value::Null) => {
            return Ok(vec![AgentSpec::Local {
                kind: AgentKind::Symmetric,
            }]);
        }
        Some(Value::Sequence(items)) if !items.is_empty() => items,
        Some(other) => {
            return Err(context.bad(
                "agents",
                show(other),
                "expected a list of at least one agent, as in [local]",
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| agent(context, &format!("agents[{i}]"), item))
        .collect()
}

/// One agent entry.
fn agent(context: &Context<'_>, field: &str, item: &Value) -> Result<AgentSpec, ScenarioError> {
    let map = match item {
        Value::String(text) if text == "local" => {
            return Ok(AgentSpec::Local {
                kind: AgentKind::Symmetric,
            });
        }
        Value::Mapping(map) => map,
        other => return Err(context.bad(field, show(other), AGENT_FORMS)),
    };
    let (form, allowed): (&str, &[&str]) = if map.contains_key("address") {
        (
            "address",
            &["address", "token_env", "tls_ca", "tls_name", "kind"],
        )
    } else if map.contains_key("ssh") {
        ("ssh", &["ssh", "kind"])
    } else if map.contains_key("local") {
        ("local", &["local"])
    } else {
        return Err(context.bad(field, show(item), AGENT_FORMS));
    };
    let map = fields(context, field, item, allowed)?;
    let at = |key: &str| map.get(key).unwrap_or(&Value::Null);
    let text = |key: &str| match map.get(key) {
        Some(Value::String(text))
            if !text.trim().is_empty() && !text.contains(char::is_whitespace) =>
        {
            Some(text.clone())
        }
        _ => None,
    };
    match form {
        "address" => Ok(AgentSpec::Remote {
            address: address(context, &format!("{field}.address"), at("address"))?,
            token_env: match map.get("token_env") {
                None | Some(Value::Null) => DEFAULT_TOKEN_ENV.to_owned(),
                Some(_) => text("token_env")
                    .filter(|t| !t.contains('='))
                    .ok_or_else(|| {
                        context.bad(
                            &format!("{field}.token_env"),
                            show(at("token_env")),
                            "expected the name of the environment variable holding the agent's \
                         token, as in VERNIER_TOKEN",
                        )
                    })?,
            },
            tls_ca: match map.get("tls_ca") {
                None | Some(Value::Null) => None,
                Some(_) => {
                    let path = text("tls_ca").ok_or_else(|| {
                        context.bad(
                            &format!("{field}.tls_ca"),
                            show(at("tls_ca")),
                            "expected the path of the CA certificate (PEM) that signed the \
                             agent's --tls-cert, as in certs/ca.pem",
                        )
                    })?;
                    Some(context.resolve(std::path::Path::new(&path)))
                }
            },
            tls_name: match map.get("tls_name") {
                None | Some(Value::Null) => None,
                Some(_) => Some(text("tls_name").ok_or_else(|| {
                    context.bad(
                        &format!("{field}.tls_name"),
                        show(at("tls_name")),
                        "expected the name in the agent's certificate, as in agent1.lab",
                    )
                })?),
            },
            kind: kind(context, field, map)?,
        }),
        "ssh" => Ok(AgentSpec::Ssh {
            host: text("ssh").ok_or_else(|| {
                context.bad(
                    &format!("{field}.ssh"),
                    show(at("ssh")),
                    "expected an SSH destination, as in user@host",
                )
            })?,
            kind: kind(context, field, map)?,
        }),
        _ => {
            let field = format!("{field}.local");
            let kind = match at("local") {
                Value::Null => AgentKind::Symmetric,
                local => kind(context, &field, fields(context, &field, local, &["kind"])?)?,
            };
            Ok(AgentSpec::Local { kind })
        }
    }
}

/// An agent's `kind`, symmetric if not given.
fn kind(context: &Context<'_>, field: &str, map: &Mapping) -> Result<AgentKind, ScenarioError> {
    match map.get("kind") {
        None | Some(Value::Null) => Ok(AgentKind::Symmetric),
        Some(Value::String(kind)) if kind == "symmetric" => Ok(AgentKind::Symmetric),
        Some(Value::String(kind)) if kind == "throughput" => Ok(AgentKind::Throughput),
        Some(Value::String(kind)) if kind == "latency" => Ok(AgentKind::Latency),
        Some(other) => Err(context.bad(
            &format!("{field}.kind"),
            show(other),
            "expected symmetric (loads and measures), throughput (loads only) or latency \
             (one request at a time, measures)",
        )),
    }
}

/// Which loads to measure.
pub(crate) fn load(
    context: &Context<'_>,
    value: Option<&Value>,
    ci: &CiTarget,
) -> Result<LoadPlan, ScenarioError> {
    const RATE: &str = "expected a positive rate in requests per second, as in 20000 or 20k";
    match value {
        None | Some(Value::Null) => Err(context.missing(
            "load",
            "the load in requests per second, as in load: 20000, or a list, a step sweep or \
             an SLO search",
        )),
        Some(rate @ (Value::Number(_) | Value::String(_))) => {
            Ok(LoadPlan::Fixed(positive_rate(context, "load", rate, RATE)?))
        }
        Some(Value::Sequence(items)) if items.is_empty() => Err(context.bad(
            "load",
            "[]",
            "expected at least one rate, as in [10000, 20000]",
        )),
        Some(Value::Sequence(items)) => items
            .iter()
            .enumerate()
            .map(|(i, rate)| positive_rate(context, &format!("load[{i}]"), rate, RATE))
            .collect::<Result<_, _>>()
            .map(LoadPlan::Sweep),
        Some(plan @ Value::Mapping(map)) if map.len() == 1 => {
            if let Some(step) = map.get("step") {
                sweep(context, step)
            } else if let Some(slo) = map.get("slo") {
                search(context, slo, ci).map(LoadPlan::Slo)
            } else {
                Err(context.bad("load", show(plan), LOAD_FORMS))
            }
        }
        Some(other) => Err(context.bad("load", show(other), LOAD_FORMS)),
    }
}

/// `{step: {from, to, by}}`, expanded: `from`, `from + by`, ... up to `to` inclusive.
fn sweep(context: &Context<'_>, step: &Value) -> Result<LoadPlan, ScenarioError> {
    const EXAMPLE: &str = "as in step: {from: 5000, to: 50000, by: 5000}";
    let map = fields(context, "load.step", step, &["from", "to", "by"])?;
    let rate = |name: &str, what: &str| {
        let field = format!("load.step.{name}");
        match map.get(name) {
            None | Some(Value::Null) => Err(context.missing(&field, &format!("{what}, {EXAMPLE}"))),
            Some(value) => positive_rate(
                context,
                &field,
                value,
                &format!("expected {what}, a positive rate in requests per second, {EXAMPLE}"),
            ),
        }
    };
    let from = rate("from", "the first load")?;
    let to = rate("to", "the last load")?;
    let by = rate("by", "the step between loads")?;
    if to < from {
        return Err(context.bad(
            "load.step.to",
            to,
            format!("expected at least from ({from}), {EXAMPLE}"),
        ));
    }
    // A whisker of slack, so that a `to` the steps land on exactly is not lost to rounding.
    let steps = ((to - from) / by * (1.0 + 1e-12)).floor();
    if steps >= MAX_STEPS as f64 {
        return Err(context.bad(
            "load.step.by",
            by,
            format!("expected a step giving at most {MAX_STEPS} loads from {from} to {to}"),
        ));
    }
    let loads = (0..=steps as usize).map(|i| from + i as f64 * by).collect();
    Ok(LoadPlan::Sweep(loads))
}

/// `{slo: {percentile, below, from, to, precision}}`.
fn search(context: &Context<'_>, slo: &Value, ci: &CiTarget) -> Result<SloSearch, ScenarioError> {
    const EXAMPLE: &str = "as in slo: {percentile: 99, below: 300us, to: 100000}";
    let map = fields(
        context,
        "load.slo",
        slo,
        &["percentile", "below", "from", "to", "precision"],
    )?;
    let field = |name: &str| format!("load.slo.{name}");
    let present = |name: &str| map.get(name).filter(|v| !v.is_null());
    let number = |name: &str, default: f64, expected: &str| match present(name) {
        None => Ok(default),
        Some(value) => value
            .as_f64()
            .ok_or_else(|| context.bad(&field(name), show(value), expected)),
    };
    let percentile = number(
        "percentile",
        ci.percentile.percent(),
        "expected a percentile strictly between 0 and 100, as in 99",
    )?;
    let percentile = percentile_in_range(context, &field("percentile"), percentile)?;
    let below = match present("below") {
        None => {
            return Err(context.missing(
                &field("below"),
                &format!("the latency the percentile must stay below, {EXAMPLE}"),
            ));
        }
        Some(value) => duration(context, &field("below"), &show(value), "300us")?,
    };
    let rate = |name: &str, value: &Value| {
        positive_rate(
            context,
            &field(name),
            value,
            &format!("expected a positive rate in requests per second, {EXAMPLE}"),
        )
    };
    let from = match present("from") {
        None => 1000.0,
        Some(value) => rate("from", value)?,
    };
    let to = match present("to") {
        None => {
            return Err(
                context.missing(&field("to"), &format!("the highest load to try, {EXAMPLE}"))
            );
        }
        Some(value) => rate("to", value)?,
    };
    if to <= from {
        return Err(context.bad(
            &field("to"),
            to,
            format!("expected more than from ({from}), {EXAMPLE}"),
        ));
    }
    let precision = number(
        "precision",
        0.05,
        "expected a fraction strictly between 0 and 1, as in 0.05",
    )?;
    if !(precision > 0.0 && precision < 1.0) {
        return Err(context.bad(
            &field("precision"),
            precision,
            "expected a fraction strictly between 0 and 1, as in 0.05",
        ));
    }
    Ok(SloSearch {
        percentile,
        below,
        from,
        to,
        precision,
    })
}

/// A rate in requests per second: a YAML number, or text with a `k` or `M` suffix (`20k`).
fn positive_rate(
    context: &Context<'_>,
    field: &str,
    value: &Value,
    expected: &str,
) -> Result<f64, ScenarioError> {
    let rate = match value {
        Value::Number(n) => n.as_f64(),
        Value::String(text) => {
            let text = text.trim().replace('_', "");
            let (number, scale) = if let Some(n) = text.strip_suffix(['k', 'K']) {
                (n, 1e3)
            } else if let Some(n) = text.strip_suffix('M') {
                (n, 1e6)
            } else {
                (text.as_str(), 1.0)
            };
            number.trim().parse::<f64>().ok().map(|n| n * scale)
        }
        _ => None,
    };
    match rate {
        Some(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(context.bad(field, show(value), expected)),
    }
}

/// `value` as a map whose keys are all in `allowed`: a misspelt key is an error, as
/// `deny_unknown_fields` makes it for the fields serde reads.
fn fields<'v>(
    context: &Context<'_>,
    field: &str,
    value: &'v Value,
    allowed: &[&str],
) -> Result<&'v Mapping, ScenarioError> {
    let Value::Mapping(map) = value else {
        return Err(context.bad(
            field,
            show(value),
            format!("expected a map of {}", allowed.join(", ")),
        ));
    };
    for key in map.keys() {
        let name = key.as_str().map_or_else(|| show(key), str::to_owned);
        if !allowed.contains(&name.as_str()) {
            return Err(context.invalid(
                &format!("{field}.{name}"),
                None,
                format!("unknown field; expected {}", one_of(allowed)),
            ));
        }
    }
    Ok(map)
}

/// `a`, `a or b`, `one of a, b, c`, as serde words its unknown-field errors.
fn one_of(names: &[&str]) -> String {
    match names {
        [one] => one.to_string(),
        [a, b] => format!("{a} or {b}"),
        all => format!("one of {}", all.join(", ")),
    }
}
