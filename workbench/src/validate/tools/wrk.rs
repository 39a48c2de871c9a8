//! wrk against nginx: one thread, 16 connections, `--latency`, as fast as it goes (asking
//! for a rate is wrk2's, not packaged). It reports p50, p75, p90 and p99, no p99.9.

use std::net::SocketAddr;

use super::output::{OutputError, text};
use crate::validate::report::{Latency, ToolFigures};
use crate::validate::servers::Tool;
use crate::validate::setup::CONNECTIONS;

const TOOL: Tool = Tool::Wrk;

/// The block of `--latency` that holds the percentiles.
const DISTRIBUTION: &str = "Latency Distribution";

/// `-t1 -c16 -dNs --latency http://ADDR/index.html`.
pub(super) fn args(addr: SocketAddr, seconds: u64) -> Vec<String> {
    vec![
        "-t1".into(),
        format!("-c{CONNECTIONS}"),
        format!("-d{seconds}s"),
        "--latency".into(),
        format!("http://{addr}/index.html"),
    ]
}

/// The rate from `Requests/sec:`, p50 and p99 from the `Latency Distribution` block.
pub(super) fn parse(output: &[u8]) -> Result<ToolFigures, OutputError> {
    let text = text(TOOL, output)?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .collect();
    let (n, rate) = lines
        .iter()
        .find_map(|(n, l)| Some((n, l.strip_prefix("Requests/sec:")?.trim())))
        .ok_or_else(|| OutputError::new(TOOL, None, "no `Requests/sec:` line"))?;
    let achieved_rate = rate
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite())
        .ok_or_else(|| {
            OutputError::new(
                TOOL,
                Some(*n),
                format!("`Requests/sec:` is `{rate}`, not a rate"),
            )
        })?;
    let start = lines
        .iter()
        .position(|(_, l)| *l == DISTRIBUTION)
        .ok_or_else(|| {
            OutputError::new(
                TOOL,
                None,
                format!("no `{DISTRIBUTION}` (was --latency given?)"),
            )
        })?;
    let percentile = |name: &str| -> Result<Latency, OutputError> {
        let (n, value) = lines[start + 1..]
            .iter()
            .find_map(|(n, l)| Some((n, l.strip_prefix(name)?.trim())))
            .ok_or_else(|| {
                OutputError::new(
                    TOOL,
                    Some(lines[start].0),
                    format!("no `{name}` in the {DISTRIBUTION}"),
                )
            })?;
        let us = duration_us(value).ok_or_else(|| {
            OutputError::new(
                TOOL,
                Some(*n),
                format!("`{name}` is `{value}`, not a duration"),
            )
        })?;
        Ok(Latency::Value { us })
    };
    Ok(ToolFigures {
        achieved_rate,
        p50: percentile("50%")?,
        p99: percentile("99%")?,
        p999: None,
    })
}

/// wrk's `85.00us`, `1.20ms`, `2.00s`, `1.50m`, `1.00h`, in µs.
fn duration_us(text: &str) -> Option<f64> {
    let units = [
        ("us", 1.0),
        ("ms", 1e3),
        ("s", 1e6),
        ("m", 60e6),
        ("h", 3600e6),
    ];
    let (number, scale) = units
        .iter()
        .find_map(|&(unit, scale)| Some((text.strip_suffix(unit)?, scale)))?;
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::tools::tests::{errors, values};

    /// wrk 4.1's output against nginx (`wrk -t1 -c16 -d2s --latency
    /// http://127.0.0.1:PORT/index.html`, this host).
    const SAMPLE: &[u8] = b"Running 2s test @ http://127.0.0.1:28080/index.html
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   304.92us  680.44us   8.30ms   93.96%
    Req/Sec   101.18k    13.61k  111.69k    85.71%
  Latency Distribution
     50%  147.00us
     75%  148.00us
     90%  190.00us
     99%    3.90ms
  210904 requests in 2.10s, 150.85MB read
Requests/sec: 100441.33
Transfer/sec:     71.84MB
";

    #[test]
    fn a_captured_run_gives_its_rate_and_its_p50_and_p99_in_us() {
        // `99%    3.90ms`: the units vary from line to line.
        assert_eq!(parse(SAMPLE), Ok(values(100_441.33, 147.0, 3900.0)));
    }

    #[test]
    fn durations_in_every_unit() {
        assert_eq!(duration_us("85.00us"), Some(85.0));
        assert_eq!(duration_us("1.20ms"), Some(1200.0));
        assert_eq!(duration_us("2.00s"), Some(2e6));
        assert_eq!(duration_us("1.50m"), Some(90e6));
        assert_eq!(duration_us("fast"), None);
        assert_eq!(duration_us("-1.00ms"), None);
    }

    #[test]
    fn malformed_output_is_an_error_naming_the_line() {
        errors(
            TOOL,
            &[
                (
                    b"unable to connect to 127.0.0.1:1 Connection refused\n",
                    "wrk's output: no `Requests/sec:` line",
                ),
                (
                    b"Requests/sec:   nan\n",
                    "wrk's output, line 1: `Requests/sec:` is `nan`, not a rate",
                ),
                (
                    b"Requests/sec: 16000.5\n",
                    "wrk's output: no `Latency Distribution` (was --latency given?)",
                ),
                (
                    b"  Latency Distribution\n     50%   90.00us\n     99%   soon\n\
                      Requests/sec: 16000.5\n",
                    "wrk's output, line 3: `99%` is `soon`, not a duration",
                ),
                (
                    b"  Latency Distribution\n     50%   90.00us\nRequests/sec: 16000.5\n",
                    "wrk's output, line 1: no `99%` in the Latency Distribution",
                ),
            ],
        );
    }
}
