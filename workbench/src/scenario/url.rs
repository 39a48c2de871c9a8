//! `vernier run URL`: a scenario from one line, no file. The URL names the server and what
//! it speaks (`memcached://127.0.0.1:11211`), flags give the fields people change (the
//! load, the CI, connections, the workload), and every other field takes the default a file
//! gets.
//!
//! The URL and the flags become a scenario *document*: YAML text that says where each
//! field came from and lists the defaults it takes. That text is then read as a file's is
//! (the same serde struct, the same validation), so both paths share one set of defaults
//! and one set of checks, the record keeps the text, and `--print-scenario` prints it: saved
//! to a file and run, it builds the same scenario.

use std::str::FromStr;

use serde_yaml::{Mapping, Value};

use super::check;
use super::context::Context;
use super::defaults;
use super::error::ScenarioError;
use super::file::{File, Lines};
use super::flag::Flag;
use super::overrides::{Override, set};
use super::types::Scenario;
use vernier_protocols::{Entry, Protocol, WorkloadKind};

/// Each top-level field of a scenario document and where its value came from (`the URL`,
/// `--load`, `--set ci.width`), in the document's order.
type Origins = Vec<(String, Vec<String>)>;

/// The server a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The scheme, one of the protocol registry's.
    scheme: &'static str,
    /// The protocol's spec, as a scenario's `protocol:` writes it.
    protocol: String,
    /// The protocol is declared by flags (`tcp://`), so `protocol:` is their mapping.
    declared: bool,
    /// The method a gRPC URL's path names (`bench.Echo/Call`): `protocol:` is then a
    /// `grpc:` mapping that flags complete.
    method: Option<String>,
    /// The host as written (a name, an IPv4 address, or an IPv6 one in brackets).
    host: String,
    /// The port.
    port: u16,
    /// HTTP's request target, from the URL's path and query (`/index.html`): `None` for
    /// `http://host:port` and `http://host:port/`, which take the default, and for the
    /// other schemes, which have none.
    path: Option<String>,
}

impl FromStr for Target {
    type Err = ScenarioError;

    /// Parses `SCHEME://HOST:PORT[/PATH]`. The port is required (servers of one protocol
    /// run on many); a path only for http; a fragment (`#...`) is never sent, so it is
    /// dropped, as a browser does.
    fn from_str(url: &str) -> Result<Target, ScenarioError> {
        let bad = |expected: String| ScenarioError::Url {
            url: url.to_owned(),
            expected,
        };
        let (entry, rest) = scheme_of(url).map_err(bad)?;
        let scheme = entry.scheme;
        let rest = rest.split('#').next().unwrap_or_default();
        let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let (host, port) = host_and_port(entry, authority).map_err(bad)?;
        let method = method_of(entry, path).map_err(bad)?;
        let path = request_path(entry, path, method.is_some()).map_err(bad)?;
        let protocol = entry.url_spec.to_owned();
        Ok(Target {
            scheme,
            protocol,
            declared: entry.workload == WorkloadKind::Keys && !entry.url_method,
            method,
            host,
            port,
            path,
        })
    }
}

/// The registry's schemes, for messages, written as `a, b or c`.
fn known_schemes() -> String {
    let names: Vec<&str> = Protocol::all().iter().map(|e| e.scheme).collect();
    format!(
        "{} or {}",
        names[..names.len() - 1].join(", "),
        names[names.len() - 1]
    )
}

/// An example URL of `entry`'s scheme, for messages (`memcached://127.0.0.1:11211`).
fn example_of(entry: &Entry) -> String {
    let (scheme, example_port) = (entry.scheme, entry.example_port);
    format!("{scheme}://127.0.0.1:{example_port}")
}

/// The protocol `url`'s scheme names (in any case), and what follows its `://`; the error
/// says what was expected.
fn scheme_of(url: &str) -> Result<(&'static Entry, &str), String> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| {
        format!(
            "expected SCHEME://HOST:PORT, SCHEME one of {}",
            known_schemes()
        )
    })?;
    let scheme = scheme.to_ascii_lowercase();
    let Some(entry) = Protocol::by_scheme(&scheme) else {
        return Err(if scheme == "https" {
            "https is not supported: vernier speaks plain HTTP/1.1 (http://HOST:PORT)".to_owned()
        } else {
            format!("unknown scheme {scheme:?}: expected {}", known_schemes())
        });
    };
    Ok((entry, rest))
}

/// The host and the port a URL's `authority` names, both required; the error says what
/// was expected.
fn host_and_port(entry: &Entry, authority: &str) -> Result<(String, u16), String> {
    let scheme = entry.scheme;
    let example = example_of(entry);
    if authority.contains('@') {
        return Err(format!(
            "expected HOST:PORT after {scheme}://, without a user@, as in {example}"
        ));
    }
    let (host, port) = split_authority(entry, authority)?;
    if host.is_empty() || host == "[]" {
        return Err(format!(
            "missing host: expected {scheme}://HOST:PORT, as in {example}"
        ));
    }
    let port = match port {
        None | Some("") => {
            return Err(format!(
                "missing port: expected {scheme}://HOST:PORT, as in {example}"
            ));
        }
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("port {port:?}: expected 1 to 65535"))?,
    };
    Ok((host, port))
}

/// A URL's `authority` split at its port's colon: the host as written (an IPv6 address
/// in its brackets) and the port's text, if there is a colon. An IPv6 address must be in
/// brackets.
fn split_authority<'a>(
    entry: &Entry,
    authority: &'a str,
) -> Result<(String, Option<&'a str>), String> {
    let (scheme, example_port) = (entry.scheme, entry.example_port);
    match authority.strip_prefix('[') {
        Some(v6) => {
            let (address, after) = v6.split_once(']').ok_or_else(|| {
                format!("expected ] after an IPv6 address, as in {scheme}://[::1]:{example_port}")
            })?;
            Ok((format!("[{address}]"), after.strip_prefix(':')))
        }
        None => match authority.rsplit_once(':') {
            Some((host, _)) if host.contains(':') => Err(format!(
                "expected an IPv6 address in brackets, as in {scheme}://[::1]:{example_port}"
            )),
            Some((host, port)) => Ok((host.to_owned(), Some(port))),
            None => Ok((authority.to_owned(), None)),
        },
    }
}

/// The method a gRPC URL's `path` names (`bench.Echo/Call`), which it must; `None` for
/// the other schemes.
fn method_of(entry: &Entry, path: &str) -> Result<Option<String>, String> {
    let scheme = entry.scheme;
    let example = example_of(entry);
    match path.trim_start_matches('/') {
        method if entry.url_method && method.contains('/') && !method.contains('?') => {
            Ok(Some(method.to_owned()))
        }
        _ if entry.url_method => Err(format!(
            "expected the method to call as the path, {scheme}://HOST:PORT/package.Service/Method, as in {example}/bench.Echo/Call"
        )),
        _ => Ok(None),
    }
}

/// HTTP's request target from a URL's `path` and query: `None` for none (or `/`), which
/// takes the default, and for a gRPC URL, whose path is its method. Only http has one.
fn request_path(entry: &Entry, path: &str, has_method: bool) -> Result<Option<String>, String> {
    let example = example_of(entry);
    match (entry.default_path, path) {
        _ if has_method => Ok(None),
        (_, "" | "/") => Ok(None),
        (Some(_), query) if query.starts_with('?') => Ok(Some(format!("/{query}"))),
        (Some(_), path) => Ok(Some(path.to_owned())),
        (None, path) => Err(format!(
            "path {path:?}: only an http:// URL has a path; expected {example}"
        )),
    }
}

impl Target {
    /// `host:port`, as a scenario's `target:` writes it.
    fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The run's name, which names its record directory too: the scheme, the host and the
    /// port, in characters any file system takes (`memcached-127.0.0.1-11211`).
    fn name(&self) -> String {
        let host: String = self
            .host
            .chars()
            .filter(|c| !matches!(c, '[' | ']'))
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => c,
                _ => '-',
            })
            .collect();
        format!("{}-{host}-{}", self.scheme, self.port)
    }

    /// The scenario document's fields and, for each top-level one, where it came from.
    fn fields(&self, flags: &[Flag]) -> Result<(Value, Origins), ScenarioError> {
        let mut document = Value::Mapping(Mapping::new());
        let mut origins = Origins::new();
        let mut put = |document: &mut Value, field: &str, value: Value, origin: &str| {
            set(document, field, value).map_err(|expected| ScenarioError::Url {
                url: format!("{}://{}", self.scheme, self.address()),
                expected,
            })?;
            came_from(&mut origins, field, origin);
            Ok::<(), ScenarioError>(())
        };
        let url = "the URL";
        put(&mut document, "name", self.name().into(), url)?;
        put(&mut document, "target", self.address().into(), url)?;
        if self.declared {
            let declares = |field: &str| {
                flags
                    .iter()
                    .any(|f| f.given.is_some() && f.field.starts_with(field))
            };
            if !declares("protocol.framing") || !declares("protocol.requests") {
                return Err(ScenarioError::Url {
                    url: format!("{}://{}", self.scheme, self.address()),
                    expected: format!(
                        "{}:// speaks the protocol you declare: expected --framing and \
                         --request, as in --framing length:4 --request \
                         '{{len:u32be}}{{seq:u32be}}{{key}}'",
                        self.scheme
                    ),
                });
            }
            put(
                &mut document,
                "protocol",
                Value::Mapping(Mapping::new()),
                url,
            )?;
        } else if let Some(method) = &self.method {
            let given = |field: &str| flags.iter().any(|f| f.given.is_some() && f.field == field);
            if !given("protocol.grpc.proto") && !given("protocol.grpc.descriptor_set") {
                return Err(ScenarioError::Url {
                    url: format!("{}://{}/{method}", self.scheme, self.address()),
                    expected: "the method's .proto file or descriptor set: --proto FILE or \
                               --descriptor-set FILE"
                        .to_owned(),
                });
            }
            let mut grpc = Mapping::new();
            grpc.insert("method".into(), method.clone().into());
            if self.scheme == "grpcs" {
                // Over TLS, the server checked against the system's CAs.
                grpc.insert("tls".into(), Value::Mapping(Mapping::new()));
            }
            let mut protocol = Mapping::new();
            protocol.insert("grpc".into(), Value::Mapping(grpc));
            put(&mut document, "protocol", Value::Mapping(protocol), url)?;
        } else {
            put(&mut document, "protocol", self.protocol.clone().into(), url)?;
        }
        if let Some(path) = &self.path {
            put(&mut document, "path", path.clone().into(), url)?;
        }
        // A file's workload is written whole, so a flag's field joins the default's others.
        if flags
            .iter()
            .any(|f| f.given.is_some() && f.field.starts_with("workload."))
        {
            let (kind, origin) = if self.declared {
                (WorkloadKind::Keys, "the default keys")
            } else {
                (WorkloadKind::KeyValue, "the default key-value workload")
            };
            let workload: Value =
                serde_yaml::from_str(defaults::workload_for(kind)).unwrap_or_default();
            put(&mut document, "workload", workload, origin)?;
        }
        for flag in flags {
            if let Some((_, value)) = &flag.given {
                put(&mut document, flag.field, value.clone(), flag.name)?;
            }
        }
        Ok((document, origins))
    }
}

impl Scenario {
    /// The scenario `vernier run URL` measures: the URL's target and protocol, the fields
    /// `flags` give (each names its flag in errors, and takes the blame for a default it
    /// could have replaced), then `overrides` (`--set`), every other field its default. Its
    /// `yaml` is the document they make, commented: the record keeps it, and read from a
    /// file it is this scenario again.
    pub fn from_url(
        url: &str,
        flags: &[Flag],
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let target: Target = url.parse()?;
        let (mut document, mut origins) = target.fields(flags)?;
        for o in overrides {
            o.apply(&mut document)?;
            came_from(&mut origins, &o.path, &format!("--set {}", o.path));
        }
        let text = render(url, flags, overrides, &document, &origins)?;
        let context = Context {
            // No line of the document is the user's: errors name the flag, or the field.
            text: "",
            source: None,
            overrides,
            flags,
        };
        let file = File::parse(&text, Lines::Rewritten, &context)?;
        check::scenario(file, text, &context)
    }
}

/// `text` as a shell word: as it is when the shell leaves it so, else in single quotes.
fn quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._:/%,+-=@".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Notes that the dotted `field` came from `origin`, under its top-level field, once.
fn came_from(origins: &mut Origins, field: &str, origin: &str) {
    let top = field.split('.').next().unwrap_or(field);
    match origins.iter_mut().find(|(key, _)| key == top) {
        Some((_, from)) if !from.iter().any(|f| f == origin) => from.push(origin.into()),
        Some(_) => {}
        None => origins.push((top.to_owned(), vec![origin.into()])),
    }
}

/// The document as commented YAML: the command it came from, each field with where it
/// came from, then the defaults it takes, each a line to uncomment.
fn render(
    url: &str,
    flags: &[Flag],
    overrides: &[Override],
    document: &Value,
    origins: &Origins,
) -> Result<String, ScenarioError> {
    let mut command = format!("vernier run {url}");
    for flag in flags {
        if let Some((typed, _)) = &flag.given {
            command.push_str(&format!(" {} {}", flag.name, quoted(typed)));
        }
    }
    for o in overrides {
        command.push_str(&format!(
            " --set {}",
            quoted(&format!("{}={}", o.path, o.written))
        ));
    }
    let mut text = format!(
        "# {command}\n\
         #\n\
         # Made from the command line by vernier {}. Saved to a file, it runs as the same\n\
         # scenario: vernier run FILE. Each field says where it came from; the defaults taken\n\
         # are listed at the end (every field: scenarios/README.md).\n",
        env!("CARGO_PKG_VERSION")
    );
    let Value::Mapping(fields) = document else {
        return Ok(text);
    };
    let protocol = fields
        .get("protocol")
        .and_then(|p| serde_yaml::from_value(p.clone()).ok())
        .unwrap_or_else(vernier_protocols::Protocol::synthetic);
    let listed = defaults::listed(&protocol);
    let mut said = String::new();
    for (key, value) in fields {
        let name = key.as_str().unwrap_or_default();
        let mut comment = origins
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, from)| format!("from {}", from.join(", ")))
            .unwrap_or_default();
        // A map given in part takes the rest of its fields by default.
        let rest: Vec<String> = listed
            .iter()
            .filter_map(|(field, default)| {
                let (top, sub) = field.split_once('.')?;
                (top == name && value.get(sub).is_none()).then(|| format!("{sub}: {default}"))
            })
            .collect();
        if !rest.is_empty() {
            comment.push_str(&format!("; by default {}", rest.join(", ")));
        }
        let mut entry = Mapping::new();
        entry.insert(key.clone(), value.clone());
        let yaml = serde_yaml::to_string(&entry).map_err(|e| ScenarioError::Url {
            url: url.to_owned(),
            expected: format!("cannot write {name} as YAML: {e}"),
        })?;
        // Fields from the same place share their comment.
        if comment != said {
            text.push_str(&format!("\n# {comment}\n"));
            said = comment;
        }
        text.push_str(&yaml);
    }
    // The defaults of the fields not written, grouped as the file would write them.
    let mut taken: Vec<(&str, Vec<String>)> = Vec::new();
    for (field, default) in &listed {
        let (top, sub) = field.split_once('.').unwrap_or((field, ""));
        if fields.contains_key(top) {
            continue;
        }
        match (taken.iter_mut().find(|(k, _)| *k == top), sub) {
            (Some((_, subs)), _) => subs.push(format!("{sub}: {default}")),
            (None, "") => taken.push((top, vec![default.clone()])),
            (None, sub) => taken.push((top, vec![format!("{sub}: {default}")])),
        }
    }
    if !taken.is_empty() {
        text.push_str("\n# Defaults taken (uncomment a line to change it):\n");
        for (top, values) in taken {
            let value = match listed
                .iter()
                .any(|(f, _)| f.starts_with(&format!("{top}.")))
            {
                true => format!("{{{}}}", values.join(", ")),
                false => values.join(", "),
            };
            text.push_str(&format!("# {top}: {value}\n"));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
