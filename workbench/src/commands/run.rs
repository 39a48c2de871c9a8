//! `vernier run SCENARIO` or `vernier run URL`: the methodology against real agents.
//! `--headless`: progress lines on stderr, the result on stdout (JSON or a table), exit
//! code = verdict (0 converged or accepted, 4 wide, 3 N/A, 2 bad input, 1 error). A URL
//! (`memcached://127.0.0.1:11211 --load 10k`) builds the scenario a file would, from the
//! same defaults; `--print-scenario` prints it instead of running it.

mod progress;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_yaml::Value;
use tokio::sync::mpsc;
use vernier_agent::sys::TimestampMode;

pub(crate) use progress::Chatter;
use progress::Progress;

use super::stdout::{Json, print_json};
use crate::coordinator::{PointResult, Verdict, WithoutStalls, text};
use crate::error::Error;
use crate::scenario::{
    Flag, LoadPlan, Override, Scenario, Tail, declared_flags as declared, load_value,
};
use crate::session::{self, SessionOptions, SessionResult};
use crate::tui;

/// The exit code of an N/A verdict.
pub const EXIT_NA: u8 = 3;

/// The exit code of a wide verdict: a valid CI, wider than asked.
pub const EXIT_WIDE: u8 = 4;

/// Options of `vernier run`.
#[derive(Debug, Args)]
#[command(after_help = url_help())]
pub struct RunArgs {
    /// The scenario (YAML), or the URL of a server to measure with the defaults a scenario
    /// file gets: memcached://HOST:PORT, memcached-binary://, redis://, http://HOST:PORT/PATH,
    /// synthetic:// (with --service), echo://, tcp:// (with --framing and --request),
    /// grpc://HOST:PORT/package.Service/Method (with --proto or --descriptor-set).
    #[arg(value_name = "SCENARIO|URL")]
    pub scenario: PathBuf,
    /// No terminal UI: progress on stderr, the result on stdout. Also what happens when
    /// stdin or stdout is not a terminal.
    #[arg(long)]
    pub headless: bool,
    /// How the result is printed.
    #[arg(long, value_enum, default_value_t = Output::Json)]
    pub output: Output,
    /// The run directory (default: runs/DATE-NAME).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// The load in req/s: a rate (10k), a list (5k,10k,20k), a step sweep (5k..50k/5k: from
    /// 5k to 50k by 5k) or any YAML `load:` takes. With a file, it replaces the file's.
    #[arg(long, value_name = "RATE")]
    pub load: Option<String>,
    /// Overrides any scenario field: `--set ci.width=5us` (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub set: Vec<String>,
    /// Pretty-prints the JSON.
    #[arg(long)]
    pub pretty: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Reach remote agents over TLS, trusting certificates signed by this CA (PEM), unless
    /// the scenario gives an agent its own `tls_ca`.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<PathBuf>,
    /// Serve the run's live figures (rates, latency histograms, phase and verdict per
    /// point and agent) at http://ADDR/metrics in the OpenMetrics text format, for
    /// Prometheus and dashboards (port 0 picks one; the address is said on stderr).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// Print the scenario as it would run (for a URL: commented YAML naming the defaults it
    /// takes) and exit without running it: save it to a file to edit and run again.
    #[arg(long)]
    pub print_scenario: bool,
    /// The fields a URL's scenario takes from flags.
    #[command(flatten)]
    pub url: UrlFlags,
}

/// What `vernier run --help` says after the options: the URL schemes come from the
/// protocol registry.
fn url_help() -> String {
    let schemes: Vec<&str> = vernier_protocols::Protocol::all()
        .iter()
        .map(|e| e.scheme)
        .collect();
    format!(
        "\
A URL measures a server with no file: its scheme is the protocol ({schemes}; https is not \
supported; tcp:// speaks the protocol --framing and --request declare), HOST:PORT the \
target, and an http \
URL's path is what every request GETs (GET / when it has none, as wrk asks). The flags under \
\"With a URL\" set the fields people change; every other field takes the default a scenario \
file gets (scenarios/README.md). memcached and redis get the default key-value workload \
(10,000 keys of 30 B, 200 B values, 90% reads, uniform), said when the run starts. Before \
any load, with a URL or a file, vernier checks that something listens at the target.

Examples:
  vernier run memcached://127.0.0.1:11211 --load 10k
  vernier run redis://127.0.0.1:6379 --load 5k,10k,20k --percentile 99.9 --width 10us
  vernier run http://127.0.0.1:8080/index.html --load 2k..10k/2k --connections 32
  vernier run synthetic://127.0.0.1:7000 --service exp:20us --load 20k --duration 1m
  vernier run tcp://127.0.0.1:9000 --framing length:4 --request '{{len:u32be}}{{seq:u64be}}\\x00{{key}}' --load 5k
  vernier run memcached://127.0.0.1:11211 --load 10k --print-scenario > my.yaml",
        schemes = schemes.join(", ")
    )
}

/// The fields of `vernier run URL` that flags set. With a scenario file each is refused,
/// naming the `--set` that does the same: the file is where its fields are written.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "With a URL")]
pub struct UrlFlags {
    /// The percentile whose CI is the answer [default: 99].
    #[arg(long, value_name = "P")]
    pub percentile: Option<f64>,
    /// The widest acceptable CI: a duration (10us) or a share of the value (20%) [default:
    /// 20%].
    #[arg(long, value_name = "WIDTH")]
    pub width: Option<String>,
    /// Which tail the CI is for: without-stalls (the server's own: the requests no stall
    /// of this host touched) or with-stalls (every request) [default: without-stalls].
    #[arg(long, value_name = "TAIL")]
    pub tail: Option<String>,
    /// Connections per agent [default: 16].
    #[arg(long, value_name = "N")]
    pub connections: Option<usize>,
    /// Outstanding requests per connection [default: 1].
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Worker threads [default: 1].
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Cores to pin the workers to, one per worker (1,2) [default: not pinned].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cpus: Option<Vec<usize>>,
    /// The most time a load point may take, warm-up included, before it is N/A [default:
    /// 1m: a first run answers within about a minute; an N/A says how much more would do].
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// synthetic:// only: the service time each request asks for (exp:20us, fixed:5us).
    #[arg(long, value_name = "DIST")]
    pub service: Option<String>,
    /// Key-value workload: how many keys [default: 10000].
    #[arg(long, value_name = "N")]
    pub keys: Option<u64>,
    /// Key-value workload: the keys' size in bytes (fixed:30, uniform:10:100) [default:
    /// fixed:30].
    #[arg(long, value_name = "DIST")]
    pub key_size: Option<String>,
    /// Key-value workload: the values' size in bytes [default: fixed:200].
    #[arg(long, value_name = "DIST")]
    pub value_size: Option<String>,
    /// Key-value workload: the share of requests that are reads [default: 0.9].
    #[arg(long, value_name = "SHARE")]
    pub read_ratio: Option<f64>,
    /// Key-value workload: how keys are chosen (uniform, round-robin, zipf:0.99) [default:
    /// uniform].
    #[arg(long, value_name = "DIST")]
    pub key_dist: Option<String>,
    /// tcp:// only: how a reply ends. length:N[:little] (an N-byte length prefix, big-endian
    /// unless little, counting the bytes after it), delimiter:TEXT, or fixed:N.
    #[arg(long, value_name = "FRAMING")]
    pub framing: Option<String>,
    /// tcp:// only: what each request is, a template: text with escapes (\r\n, \x00) and
    /// fields ({key}, {seq:u32be}, {len:u32be}, {key_len:dec}, {random:fixed:100}).
    #[arg(long, value_name = "TEMPLATE")]
    pub request: Option<String>,
    /// tcp:// only: a reply succeeds when its bytes at OFFSET are TEXT, as in 8:\x00
    /// [default: every reply succeeds].
    #[arg(long, value_name = "OFFSET:TEXT")]
    pub reply_ok: Option<String>,
    /// grpc:// only: the .proto file that declares the method.
    #[arg(long, value_name = "FILE")]
    pub proto: Option<PathBuf>,
    /// grpc:// only: or the method's descriptor set (protoc --include_imports -o FILE).
    #[arg(long, value_name = "FILE")]
    pub descriptor_set: Option<PathBuf>,
    /// grpc:// only: the request message as JSON, with fields ({key}, {seq}, {random:N})
    /// [default: {}].
    #[arg(long, value_name = "JSON")]
    pub message: Option<String>,
}

impl UrlFlags {
    /// Each flag and the field it sets, given or not (a flag not given still names the
    /// field in errors), in the order the scenario writes them; `--load` is `RunArgs`'.
    pub(crate) fn flags(&self, load: Option<&str>) -> Vec<Flag> {
        let text = |v: &Option<String>| v.as_ref().map(|t| (t.clone(), Value::from(t.as_str())));
        let number = |v: Option<f64>| v.map(|n| (n.to_string(), Value::from(n)));
        let count = |v: Option<u64>| v.map(|n| (n.to_string(), Value::from(n)));
        let cpus = self.cpus.as_ref().map(|cpus| {
            let typed: Vec<String> = cpus.iter().map(ToString::to_string).collect();
            let list = cpus.iter().map(|&c| Value::from(c as u64)).collect();
            (typed.join(","), Value::Sequence(list))
        });
        let size = |v: Option<usize>| count(v.map(|n| n as u64));
        // A file named on the command line is the shell's working directory's: written
        // absolute, the scenario document means the same file wherever it is saved.
        let file = |v: &Option<PathBuf>| {
            v.as_ref().map(|p| {
                let absolute = std::path::absolute(p).unwrap_or_else(|_| p.clone());
                (
                    p.display().to_string(),
                    Value::from(absolute.display().to_string()),
                )
            })
        };
        let flag = |name, field, given| Flag { name, field, given };
        vec![
            flag("--service", "service", text(&self.service)),
            flag("--keys", "workload.keys", count(self.keys)),
            flag("--key-size", "workload.key_size", text(&self.key_size)),
            flag(
                "--value-size",
                "workload.value_size",
                text(&self.value_size),
            ),
            flag(
                "--read-ratio",
                "workload.read_ratio",
                number(self.read_ratio),
            ),
            flag("--key-dist", "workload.key_dist", text(&self.key_dist)),
            flag(
                "--framing",
                "protocol.framing",
                self.framing
                    .as_ref()
                    .map(|t| (t.clone(), declared::framing(t))),
            ),
            flag(
                "--request",
                "protocol.requests",
                self.request
                    .as_ref()
                    .map(|t| (t.clone(), declared::requests(t))),
            ),
            flag(
                "--reply-ok",
                "protocol.reply.ok",
                self.reply_ok
                    .as_ref()
                    .map(|t| (t.clone(), declared::reply_ok(t))),
            ),
            flag("--proto", "protocol.grpc.proto", file(&self.proto)),
            flag(
                "--descriptor-set",
                "protocol.grpc.descriptor_set",
                file(&self.descriptor_set),
            ),
            flag("--message", "protocol.grpc.request", text(&self.message)),
            flag("--workers", "workers", size(self.workers)),
            flag("--cpus", "cpus", cpus),
            flag("--connections", "connections", size(self.connections)),
            flag("--depth", "depth", size(self.depth)),
            flag(
                "--load",
                "load",
                load.map(|l| (l.to_owned(), load_value(l))),
            ),
            flag("--percentile", "ci.percentile", number(self.percentile)),
            flag("--width", "ci.width", text(&self.width)),
            flag("--tail", "ci.tail", text(&self.tail)),
            flag("--duration", "limits.max_duration", text(&self.duration)),
        ]
    }
}

/// Whether `vernier run`'s argument is a URL rather than a scenario file's path.
fn is_url(scenario: &std::path::Path) -> bool {
    scenario.to_str().is_some_and(|s| s.contains("://"))
}

/// How the result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// One JSON object.
    Json,
    /// A table for people.
    Table,
}

/// Parses `--load` and `--set` into overrides of a file.
pub(crate) fn overrides(load: Option<&str>, set: &[String]) -> Result<Vec<Override>, Error> {
    let mut all = Vec::new();
    if let Some(load) = load {
        all.push(Override::new("load", load_value(load), load));
    }
    for s in set {
        all.push(s.parse::<Override>()?);
    }
    Ok(all)
}

/// Runs `vernier run`.
pub fn run(args: RunArgs) -> Result<ExitCode, Error> {
    let scenario = scenario(&args)?;
    if args.print_scenario {
        super::stdout::print(scenario.yaml.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    // What the scenario asks of this machine before what it asks of the network: workers
    // pinned outside the process's affinity, then a target nothing listens at.
    let allowed = vernier_agent::sys::available_cpus();
    session::check_affinity(&scenario, &allowed)?;
    session::check_spin(&scenario, &allowed)?;
    session::check_targets(&scenario)?;
    if let Some(note) = scenario.default_workload_note() {
        eprintln!("vernier: workload: {note}");
    }
    let options = SessionOptions {
        record: args.record.clone(),
        tls_ca: args.tls_ca.clone(),
        metrics: args.metrics,
    };
    let view = if args.headless {
        View::Headless
    } else {
        View::Dashboard
    };
    let chatter = if args.quiet {
        Chatter::Quiet
    } else {
        Chatter::Progress
    };
    let outcome = run_session(&scenario, &options, view, chatter)?;
    print_outcome(
        &scenario,
        &outcome,
        args.output,
        Json::pretty_if(args.pretty),
    )?;
    exit_code(&outcome)
}

/// The scenario `args` name: a file's, with `--load` and `--set` applied, or a URL's, built
/// from its flags. A URL's flag given with a file is refused: the file is where its fields
/// are written, and `--set` changes one for a run.
fn scenario(args: &RunArgs) -> Result<Scenario, Error> {
    scenario_of(&args.scenario, args.load.as_deref(), &args.set, &args.url)
}

/// The scenario a path or URL names, with `--load`, `--set` and a URL's flags: `vernier
/// run`'s, and each side of `vernier compare`.
pub(crate) fn scenario_of(
    path: &std::path::Path,
    load: Option<&str>,
    set: &[String],
    url_flags: &UrlFlags,
) -> Result<Scenario, Error> {
    let flags = url_flags.flags(load);
    if is_url(path) {
        let sets = overrides(None, set)?;
        let url = path.to_string_lossy();
        return Ok(Scenario::from_url(&url, &flags, &sets)?);
    }
    if let Some(flag) = flags
        .iter()
        .find(|f| f.given.is_some() && f.name != "--load")
    {
        let value = flag.given.as_ref().map(|(_, v)| crate::scenario::show(v));
        return Err(Error::Usage(format!(
            "{} sets {} of a URL's scenario; {} is a file: write {} in it, or give --set '{}={}'",
            flag.name,
            flag.field,
            path.display(),
            flag.field,
            flag.field,
            value.unwrap_or_default().trim()
        )));
    }
    let overrides = overrides(load, set)?;
    // `vernier run 127.0.0.1:11211` meant a server, not a file.
    let extension = path.extension().and_then(|e| e.to_str());
    if !path.exists() && !matches!(extension, Some("yaml" | "yml")) {
        return Err(Error::Usage(format!(
            "{}: no such scenario file; a server is measured by its URL, as in \
             memcached://{}",
            path.display(),
            path.display()
        )));
    }
    Ok(Scenario::load(&path, &overrides)?)
}

/// Where a run is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// The dashboard, if there is a terminal to draw it on (else headless, said on stderr).
    Dashboard,
    /// Progress lines on stderr (`--headless`).
    Headless,
}

/// Runs a scenario in the dashboard, or headless when asked or when there is no terminal,
/// saying on stderr what `chatter` asks. The result is printed after either, so it stays
/// in the terminal's scroll-back.
pub(crate) fn run_session(
    scenario: &Scenario,
    options: &SessionOptions,
    view: View,
    chatter: Chatter,
) -> Result<SessionResult, Error> {
    if view == View::Headless {
        return run_headless(scenario, options, chatter);
    }
    if !tui::available() {
        if chatter == Chatter::Progress {
            eprintln!("vernier: not a terminal: running headless (--headless says so)");
        }
        return run_headless(scenario, options, chatter);
    }
    tui::run_live(scenario, options)
}

/// Runs a scenario without a UI, progress lines on stderr as `chatter` says.
pub(crate) fn run_headless(
    scenario: &Scenario,
    options: &SessionOptions,
    chatter: Chatter,
) -> Result<SessionResult, Error> {
    let runtime = session::runtime("vernier-session")?;
    // Headless runs take no commands but Ctrl-C; the sender lives as long as the run.
    let (_commands, rx) = mpsc::unbounded_channel();
    let mut printer = Progress::new(chatter, &scenario.load);
    let outcome = runtime.block_on(session::run(scenario, options, rx, |u| printer.update(&u)))?;
    printer.threads(outcome.threads.as_ref());
    Ok(outcome)
}

/// The exit code of an outcome; a record that could not be written is an error (1) after
/// the result was printed.
pub(crate) fn exit_code(outcome: &SessionResult) -> Result<ExitCode, Error> {
    if let Some(e) = &outcome.record_error {
        return Err(Error::Failed(format!(
            "the result above stands, but the record is incomplete: {e}"
        )));
    }
    Ok(match outcome.verdict {
        Verdict::Converged | Verdict::Accepted => ExitCode::SUCCESS,
        Verdict::Wide => ExitCode::from(EXIT_WIDE),
        Verdict::NotAvailable => ExitCode::from(EXIT_NA),
    })
}

#[derive(Serialize)]
struct Many<'a> {
    verdict: Verdict,
    points: &'a [PointResult],
    slo_rate: Option<f64>,
    timestamps: &'a TimestampMode,
    record: String,
}

/// Prints the result: a point's object for a fixed load, `{"points": [...], "slo_rate"}`
/// otherwise.
pub(crate) fn print_outcome(
    scenario: &Scenario,
    outcome: &SessionResult,
    output: Output,
    json: Json,
) -> Result<(), Error> {
    match output {
        Output::Json => match (&scenario.load, outcome.points.as_slice()) {
            (LoadPlan::Fixed(_), [one]) => print_json(one, json),
            _ => print_json(
                &Many {
                    verdict: outcome.verdict,
                    points: &outcome.points,
                    slo_rate: outcome.slo_rate,
                    timestamps: &outcome.timestamps,
                    record: outcome.record.display().to_string(),
                },
                json,
            ),
        },
        Output::Table => {
            let text = table(outcome);
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
                    path: "<stdout>".into(),
                    source: e,
                }),
                _ => Ok(()),
            }
        }
    }
}

/// The result as a table for people: a row per point, under it the same percentiles timed
/// from the scheduled departures (beside the actual ones), then any reasons.
pub(crate) fn table(outcome: &SessionResult) -> String {
    let mut s = String::new();
    let ps: Vec<f64> = outcome
        .points
        .first()
        .map(|p| p.percentiles.iter().map(|q| q.p).collect())
        .unwrap_or_default();
    s.push_str(&format!(
        "{:>10} {:>10} {:>10} {:>9}",
        "load/s", "achieved/s", "verdict", "samples"
    ));
    for p in &ps {
        s.push_str(&format!(" {:>26}", format!("p{p} µs [CI]")));
    }
    s.push('\n');
    for point in &outcome.points {
        s.push_str(&format!(
            "{:>10.0} {:>10.0} {:>10} {:>9}",
            point.target_rate,
            point.achieved_rate,
            point.verdict.name(),
            point.samples
        ));
        for p in &ps {
            s.push_str(&format!(" {:>26}", point.percentile_text(*p)));
        }
        s.push('\n');
        if !point.from_schedule.is_empty() {
            // Under the four leading columns (42 characters wide).
            s.push_str(&format!("{:>42}", "from schedule"));
            for p in &ps {
                let cell = point.from_schedule(*p).map_or("-".to_string(), |q| {
                    format!("{:.1} ({:.1} actual)", q.value, q.actual)
                });
                s.push_str(&format!(" {cell:>26}"));
            }
            s.push('\n');
        }
        if let Some(own) = &point.without_stalls {
            without_stalls_rows(&mut s, point, own, &ps);
        }
        if let Some(line) = point.drift.as_ref().and_then(text::drift) {
            s.push_str(&format!("    {line}\n"));
        }
        if let Some(earlier) = &point.earned {
            s.push_str(&format!("    {}\n", text::earned(earlier)));
        }
        // Beside the tail without stalls, the point's reasons are every request's.
        let whose = if point.without_stalls.is_some() {
            "every request, "
        } else {
            ""
        };
        for r in &point.reasons {
            s.push_str(&format!("    {whose}{}: {}\n", r.kind(), r.detail()));
        }
        for r in &point.waived {
            s.push_str(&format!("    not enforced, {}: {}\n", r.kind(), r.detail()));
        }
        if let Some(b) = &point.budget {
            s.push_str(&format!("    budget: {}\n", b.line()));
        }
    }
    if let Some(rate) = outcome.slo_rate {
        s.push_str(&format!("highest load meeting the SLO: {rate:.0} req/s\n"));
    }
    let tail = match outcome.points.first().map(|p| p.tail) {
        Some(Tail::WithoutStalls) => "the tail without stalls; ",
        _ => "",
    };
    s.push_str(&format!(
        "verdict: {} ({tail}timestamps: {}); record: {}\n",
        outcome.verdict.name(),
        outcome.timestamps,
        outcome.record.display()
    ));
    s
}

/// The table's rows of a point's tail without stalls (`own`): its percentiles under the
/// point's, what it leaves out and why it is short, and the host's part.
fn without_stalls_rows(s: &mut String, point: &PointResult, own: &WithoutStalls, ps: &[f64]) {
    let label = format!(
        "without stalls {}, {:.1}% touched",
        own.verdict.name(),
        own.touched_share * 100.0
    );
    s.push_str(&format!("{label:>42}"));
    for p in ps {
        let cell = own
            .percentile(*p)
            .map_or("-".to_string(), |q| q.to_string());
        s.push_str(&format!(" {cell:>26}"));
    }
    s.push('\n');
    let asked = point.tail == Tail::WithoutStalls;
    s.push_str(&format!("    {}\n", text::without_stalls_line(own, asked)));
    let host: Vec<String> = (point.host_parts().iter())
        .map(|(p, us)| format!("p{p} {us:+.1} µs"))
        .collect();
    if !host.is_empty() {
        s.push_str(&format!(
            "    the host's part (every request less without stalls): {}\n",
            host.join(", ")
        ));
    }
    if let Some(words) = text::host_fit(own.touched_share) {
        s.push_str(&format!("    {words}\n"));
    }
}

#[cfg(test)]
mod tests;
