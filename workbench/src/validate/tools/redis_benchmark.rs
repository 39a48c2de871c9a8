//! redis-benchmark against redis-server: GET only, 16 connections, a count of requests as
//! fast as it goes (it cannot be asked for a rate). Its CSV reports p50 and p99, no p99.9.

use std::net::SocketAddr;

use super::output::{OutputError, text};
use crate::validate::report::{Latency, ToolFigures};
use crate::validate::servers::Tool;
use crate::validate::setup::CONNECTIONS;

const TOOL: Tool = Tool::RedisBenchmark;

/// `-h HOST -p PORT -t get -n REQUESTS -c 16 --csv`.
pub(super) fn args(addr: SocketAddr, requests: u64) -> Vec<String> {
    vec![
        "-h".into(),
        addr.ip().to_string(),
        "-p".into(),
        addr.port().to_string(),
        "-t".into(),
        "get".into(),
        "-n".into(),
        requests.to_string(),
        "-c".into(),
        CONNECTIONS.to_string(),
        "--csv".into(),
    ]
}

/// The `GET` row of the CSV, its columns found by the header's names (`rps`,
/// `p50_latency_ms`, `p99_latency_ms`), the latencies turned into µs.
pub(super) fn parse(output: &[u8]) -> Result<ToolFigures, OutputError> {
    let text = text(TOOL, output)?;
    let rows: Vec<(usize, Vec<&str>)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with('"'))
        .map(|(i, l)| {
            (
                i + 1,
                l.split(',').map(|f| f.trim().trim_matches('"')).collect(),
            )
        })
        .collect();
    let header = rows
        .iter()
        .find(|(_, fields)| fields.first() == Some(&"test"))
        .ok_or_else(|| OutputError::new(TOOL, None, "no CSV header (\"test\",\"rps\",…)"))?;
    let (n, get) = rows
        .iter()
        .find(|(_, fields)| fields.first() == Some(&"GET"))
        .ok_or_else(|| OutputError::new(TOOL, None, "no \"GET\" row in its CSV"))?;
    let column = |name: &str| -> Result<f64, OutputError> {
        let i = header.1.iter().position(|h| *h == name).ok_or_else(|| {
            OutputError::new(
                TOOL,
                Some(header.0),
                format!("the CSV header has no `{name}` column"),
            )
        })?;
        let field = get.get(i).ok_or_else(|| {
            OutputError::new(TOOL, Some(*n), format!("the GET row has no `{name}` field"))
        })?;
        field
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                OutputError::new(
                    TOOL,
                    Some(*n),
                    format!("`{name}` is `{field}`, not a number"),
                )
            })
    };
    let us = |name: &str| column(name).map(|ms| Latency::Value { us: ms * 1000.0 });
    Ok(ToolFigures {
        achieved_rate: column("rps")?,
        p50: us("p50_latency_ms")?,
        p99: us("p99_latency_ms")?,
        p999: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::tools::tests::{errors, values};

    /// redis-benchmark 7.0's output against redis-server (`redis-benchmark -h 127.0.0.1 -p
    /// PORT -t get -n 20000 -c 16 --csv`, this host).
    const SAMPLE: &[u8] = b"\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"
\"GET\",\"169491.53\",\"0.060\",\"0.016\",\"0.063\",\"0.095\",\"0.119\",\"0.279\"
";

    #[test]
    fn a_captured_run_gives_its_rate_and_its_p50_and_p99_in_us() {
        assert_eq!(parse(SAMPLE), Ok(values(169_491.53, 63.0, 119.0)));
    }

    #[test]
    fn malformed_output_is_an_error_naming_the_line() {
        const HEADER: &str =
            "\"test\",\"rps\",\"avg_latency_ms\",\"p50_latency_ms\",\"p99_latency_ms\"\n";
        let not_a_number = format!("{HEADER}\"GET\",\"153257.48\",\"0.071\",\"n/a\",\"0.159\"\n");
        let short = format!("{HEADER}\"GET\",\"153257.48\",\"0.071\",\"0.063\"\n");
        errors(
            TOOL,
            &[
                (
                    b"ERROR: connection refused\n",
                    "redis-benchmark's output: no CSV header (\"test\",\"rps\",…)",
                ),
                (
                    HEADER.as_bytes(),
                    "redis-benchmark's output: no \"GET\" row in its CSV",
                ),
                (
                    not_a_number.as_bytes(),
                    "redis-benchmark's output, line 2: `p50_latency_ms` is `n/a`, not a number",
                ),
                (
                    short.as_bytes(),
                    "redis-benchmark's output, line 2: the GET row has no `p99_latency_ms` field",
                ),
                (
                    b"\"test\",\"rps\"\n\"GET\",\"153257.48\"\n",
                    "redis-benchmark's output, line 1: the CSV header has no `p50_latency_ms` column",
                ),
            ],
        );
    }
}
