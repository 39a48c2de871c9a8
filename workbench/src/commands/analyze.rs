//! `vernier analyze FILE`: the statistics on latency samples from any source, as JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use vernier_agent::STALL_THRESHOLD_NS;
use vernier_stats::{
    AdfOptions, Analysis, AnalysisOptions, Kept, LagSelection, Percentile, Regression, Sent, Spans,
    Stretches, WithoutStalls, analyze, without_stalls, without_stalls_requests,
};

use super::stdout::{Json, print_json};
use crate::error::Error;
use crate::samples::{Format, SampleSource, check_clock, read_samples, read_stalls};

/// Options of `vernier analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Latency samples in send order: one number a line, or columns split by blanks or
    /// commas (`mutilate --save`: `--column 2`), a CSV with a header, or Parquet (a file, or
    /// a directory of parts such as a record's `samples.parquet`); or an HdrHistogram
    /// interval log (`.hlog`: wrk2, memtier, a record's `point-NNN.hlog`), which gives
    /// percentiles only.
    pub file: PathBuf,
    /// The column holding the samples: a name (CSV, Parquet) or a number from 1.
    #[arg(long)]
    pub column: Option<String>,
    /// The file's layout [default: from the extension: .csv, .parquet/.pq, .hlog, else
    /// lines].
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// With an interval log: only the intervals whose tag starts with this (a record's
    /// `point0/round1/` is point 0's first measuring round).
    #[arg(long)]
    pub tag: Option<String>,
    /// Inter-departure times to test against an exponential (a file; the same layouts).
    #[arg(long)]
    pub interarrival: Option<PathBuf>,
    /// The column of inter-departure times (in --interarrival's file, or else in FILE).
    #[arg(long)]
    pub interarrival_column: Option<String>,
    /// The column of each request's send time (ns; a record's `departure_ns`), to say with
    /// --stalls which requests a host stall touched. FILE's latencies are then ns too.
    #[arg(long, requires = "stalls")]
    pub send_column: Option<String>,
    /// Stalls of the host: a CSV with the header `start_ns,end_ns` (and optionally `core`),
    /// in the send column's clock, such as a record's `stalls.csv`. The JSON then adds
    /// `without_stalls`: the percentiles of the requests no stall (or the backlog it left)
    /// touched, corrected for the bias that longer requests meet stalls more often.
    #[arg(long, requires = "send_column")]
    pub stalls: Option<PathBuf>,
    /// The column of how late each request left after its schedule (ns; a record's
    /// `queueing_ns`), with --stalls: the send column is then when each left, a request
    /// is touched from its schedule, and one that left over 100 µs late marks a stall of
    /// its client from its schedule to its send, as a run marks them.
    #[arg(long, requires = "stalls")]
    pub late_column: Option<String>,
    /// The column of how long before its schedule each request's busy stretch began (ns;
    /// a record's `busy_ns`), with --late-column: the rows are then a thinned sample (a
    /// point that kept one request in several), each request touched when a stall meets
    /// its window from that start to its reply, as the point marked them.
    #[arg(long, requires = "late_column")]
    pub busy_column: Option<String>,
    /// The column of the worker each request came from (a record's `worker`), with
    /// --busy-column: the stretches of requests from several workers, each its own
    /// worker's, are joined where they meet, as the point joined them.
    #[arg(long, requires = "busy_column")]
    pub worker_column: Option<String>,
    /// Percentiles to estimate, in percent.
    #[arg(long, value_delimiter = ',', default_value = "50,90,95,99,99.9,99.99")]
    pub percentiles: Vec<f64>,
    /// Confidence of the percentiles' intervals.
    #[arg(long, default_value_t = 0.95)]
    pub confidence: f64,
    /// Significance level of the independence, stationarity and inter-arrival tests.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Deterministic terms of the ADF regression.
    #[arg(long, value_enum, default_value_t = RegressionArg::C)]
    pub regression: RegressionArg,
    /// ADF lag selection: an information criterion, or none for exactly --maxlag lags.
    #[arg(long, value_enum, default_value_t = AutolagArg::Aic)]
    pub autolag: AutolagArg,
    /// Largest ADF lag [default: statsmodels' 12·(n/100)^¼].
    #[arg(long)]
    pub maxlag: Option<usize>,
    /// Indent the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// `--regression`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RegressionArg {
    /// Constant.
    C,
    /// Constant and trend.
    Ct,
    /// Neither.
    N,
}

/// `--autolag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AutolagArg {
    /// Akaike.
    Aic,
    /// Bayes.
    Bic,
    /// Exactly --maxlag lags.
    None,
}

impl AnalyzeArgs {
    fn options(&self) -> Result<AnalysisOptions, Error> {
        let percentiles = self
            .percentiles
            .iter()
            .map(|&p| {
                let percentile = Percentile::from_percent(p).map_err(|_| {
                    Error::Usage(format!(
                        "--percentiles: {p} is not a percentile strictly between 0 and 100"
                    ))
                })?;
                // 99.9 / 100 is 0.9990000000000001; report the fraction the user meant.
                Ok::<f64, Error>((percentile.fraction() * 1e12).round() / 1e12)
            })
            .collect::<Result<_, _>>()?;
        if self.autolag == AutolagArg::None && self.maxlag.is_none() {
            return Err(Error::Usage("--autolag none needs --maxlag N".into()));
        }
        Ok(AnalysisOptions {
            percentiles,
            confidence: self.confidence,
            alpha: self.alpha,
            adf: AdfOptions {
                regression: match self.regression {
                    RegressionArg::C => Regression::C,
                    RegressionArg::Ct => Regression::Ct,
                    RegressionArg::N => Regression::N,
                },
                lags: match self.autolag {
                    AutolagArg::Aic => LagSelection::Aic,
                    AutolagArg::Bic => LagSelection::Bic,
                    AutolagArg::None => LagSelection::Fixed,
                },
                maxlag: self.maxlag,
            },
            lag_ladder: None,
        })
    }

    fn source(&self, path: &std::path::Path, column: Option<&String>) -> SampleSource {
        SampleSource {
            path: path.to_path_buf(),
            format: self.format.unwrap_or_else(|| Format::from_path(path)),
            column: column.cloned(),
        }
    }
}

/// Reads the samples (and inter-arrivals), analyses them, prints one JSON object.
/// Nothing reaches stdout unless the whole analysis succeeded.
pub fn run(args: AnalyzeArgs) -> Result<ExitCode, Error> {
    let options = args.options()?;
    if args.format.unwrap_or_else(|| Format::from_path(&args.file)) == Format::Hlog {
        if args.interarrival.is_some() || args.interarrival_column.is_some() {
            return Err(Error::Usage(format!(
                "{}: an interval log keeps no inter-departure times to test",
                args.file.display()
            )));
        }
        if args.stalls.is_some() {
            return Err(Error::Usage(format!(
                "{}: --stalls needs each request's send time, which an interval log does not keep",
                args.file.display()
            )));
        }
        let analysis = crate::hlog::analyze(&args.file, args.tag.as_deref(), &options.percentiles)?;
        print_json(&analysis, Json::pretty_if(args.pretty))?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.tag.is_some() {
        return Err(Error::Usage(
            "--tag chooses intervals of an .hlog file".into(),
        ));
    }
    let samples = read_samples(&args.source(&args.file, args.column.as_ref()))?;
    let interarrivals = match (&args.interarrival, &args.interarrival_column) {
        (None, None) => None,
        (Some(path), column) => Some(read_samples(&args.source(path, column.as_ref()))?),
        (None, Some(column)) => Some(read_samples(&args.source(&args.file, Some(column)))?),
    };
    let without_stalls = match (&args.stalls, &args.send_column) {
        (Some(path), Some(column)) => {
            let send = read_samples(&args.source(&args.file, Some(column)))?;
            let column = |name: &Option<String>| match name {
                Some(c) => read_samples(&args.source(&args.file, Some(c))).map(Some),
                None => Ok(None),
            };
            let (late, busy) = (column(&args.late_column)?, column(&args.busy_column)?);
            let workers = column(&args.worker_column)?;
            let columns = Columns {
                send: &send,
                late: late.as_deref(),
                busy: busy.as_deref(),
                workers: workers.as_deref(),
                latency: &samples,
            };
            Some(without(path, columns, &options)?)
        }
        _ => None,
    };
    let analysis = analyze(&samples, interarrivals.as_deref(), &options)?;
    // Whether each percentile drifts over the file (its rows taken in order), and where.
    let drift = (options.percentiles.iter())
        .filter_map(|&p| {
            let windows = ((samples.len() as f64 * p.min(1.0 - p) / ANALYZE_WINDOW_TAIL) as usize)
                .clamp(1, ANALYZE_WINDOWS);
            vernier_stats::drift(&samples, p, windows).ok()
        })
        .collect();
    print_json(
        &Output {
            analysis: &analysis,
            without_stalls,
            drift,
        },
        Json::pretty_if(args.pretty),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The windows a file's rows are cut into to say where each percentile went: at most
/// this many...
const ANALYZE_WINDOWS: usize = 10;
/// ... with at least this many samples beyond the percentile each.
const ANALYZE_WINDOW_TAIL: f64 = 100.0;

/// The analysis, with the tail without the host's stalls when they were given, and
/// whether each percentile drifts over the rows.
#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    analysis: &'a Analysis,
    #[serde(skip_serializing_if = "Option::is_none")]
    without_stalls: Option<WithoutStalls>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    drift: Vec<vernier_stats::Drift>,
}

/// Each request's send time, lateness and busy stretch (when given) and latency, in ns,
/// in FILE's rows.
struct Columns<'a> {
    send: &'a [f64],
    late: Option<&'a [f64]>,
    busy: Option<&'a [f64]>,
    workers: Option<&'a [f64]>,
    latency: &'a [f64],
}

/// The tail of the requests the stalls of `path` (and, with a lateness column, their own
/// late sends) did not touch.
fn without(
    path: &std::path::Path,
    columns: Columns<'_>,
    options: &AnalysisOptions,
) -> Result<WithoutStalls, Error> {
    let Columns {
        send,
        late,
        busy,
        workers,
        latency,
    } = columns;
    let rows = |c: Option<&[f64]>| c.map_or_else(|| "none".into(), |c| c.len().to_string());
    if send.len() != latency.len()
        || [late, busy, workers]
            .iter()
            .flatten()
            .any(|c| c.len() != latency.len())
    {
        return Err(Error::Usage(format!(
            "--send-column has {} values, --late-column {}, --busy-column {}, --worker-column {} and the latencies {}: they must be the same rows",
            send.len(),
            rows(late),
            rows(busy),
            rows(workers),
            latency.len()
        )));
    }
    let stalls = read_stalls(path)?;
    check_clock(path, &stalls, send, latency)?;
    let (percentiles, confidence) = (&options.percentiles, options.confidence);
    let Some(late) = late else {
        let spans = Spans { send, latency };
        return Ok(without_stalls(spans, &stalls, percentiles, confidence)?);
    };
    let mut kept = Vec::with_capacity(send.len());
    for (row, ((&s, &l), &lat)) in send.iter().zip(late).zip(latency).enumerate() {
        let ns = |v: f64, what: &str| {
            (v.is_finite() && v >= 0.0).then_some(v as u64).ok_or_else(|| {
                Error::Usage(format!(
                    "row {} of {what} is {v}: send times, lateness and latencies are ns of zero or more",
                    row + 1
                ))
            })
        };
        let sent = Sent {
            departure_ns: ns(s, "--send-column")?,
            late_ns: ns(l, "--late-column")?,
            latency_ns: ns(lat, "the latencies")?,
        };
        let busy_ns = busy.map_or(Ok(0), |b| ns(b[row], "--busy-column"))?;
        kept.push(Kept { sent, busy_ns });
    }
    // With each one's busy stretch, the rows are a thinned point's kept requests; from
    // several workers, their stretches joined.
    let workers = workers.map_or(1, |w| {
        let mut ids: Vec<u64> = w.iter().map(|x| x.to_bits()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    });
    let stretches = Stretches::of(busy.is_some(), workers);
    let marks = (STALL_THRESHOLD_NS, stretches);
    Ok(without_stalls_requests(
        &mut kept,
        stalls,
        marks,
        percentiles,
        confidence,
    )?)
}
