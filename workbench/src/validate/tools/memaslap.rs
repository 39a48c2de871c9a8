//! memaslap (libmemcached-tools) against memcached: one thread, 16 connections, as fast as
//! it goes (its `--tps` has no effect in Debian's build). Its latencies are a log2
//! histogram, so each percentile is the power-of-two bucket it falls in.

use std::net::SocketAddr;

use super::output::{OutputError, text};
use crate::validate::report::{Latency, ToolFigures};
use crate::validate::servers::Tool;
use crate::validate::setup::CONNECTIONS;

const TOOL: Tool = Tool::Memaslap;

/// The section whose histogram counts every request, gets and sets.
const TOTAL: &str = "Total Statistics (";

/// `-s ADDR -t Ns -T 1 -c 16 -S Ns`: the statistics (with the histograms) printed once, at
/// the end.
pub(super) fn args(addr: SocketAddr, seconds: u64) -> Vec<String> {
    args_with(addr, seconds, CONNECTIONS)
}

/// [`args`] with `connections` connections.
pub(super) fn args_with(addr: SocketAddr, seconds: u64, connections: usize) -> Vec<String> {
    vec![
        "-s".into(),
        addr.to_string(),
        "-t".into(),
        format!("{seconds}s"),
        "-T".into(),
        "1".into(),
        "-c".into(),
        connections.to_string(),
        "-S".into(),
        format!("{seconds}s"),
    ]
}

/// The rate from `Run time: … TPS: N …` and the buckets of p50, p99 and p99.9 from the
/// `Log2 Dist` histogram of the `Total Statistics` section.
pub(super) fn parse(output: &[u8]) -> Result<ToolFigures, OutputError> {
    let text = text(TOOL, output)?;
    let lines: Vec<(usize, &str)> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    let achieved_rate = rate(&lines)?;
    let (at, buckets) = histogram(&lines)?;
    let bucket = |p: f64| {
        bucket_of(&buckets, p)
            .map(|(low_us, high_us)| Latency::Log2Bucket { low_us, high_us })
            .ok_or_else(|| {
                OutputError::new(TOOL, Some(at), "the Log2 Dist histogram counts no requests")
            })
    };
    Ok(ToolFigures {
        achieved_rate,
        p50: bucket(0.5)?,
        p99: bucket(0.99)?,
        p999: Some(bucket(0.999)?),
    })
}

/// `Run time: 2.0s Ops: 208303 TPS: 104151 Net_rate: 13.5M/s`'s TPS.
fn rate(lines: &[(usize, &str)]) -> Result<f64, OutputError> {
    let (n, line) = lines
        .iter()
        .find(|(_, l)| l.starts_with("Run time: "))
        .ok_or_else(|| OutputError::new(TOOL, None, "no `Run time: … TPS: N` line"))?;
    line.split("TPS: ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|r| r.is_finite())
        .ok_or_else(|| {
            OutputError::new(TOOL, Some(*n), format!("no rate after `TPS: ` in `{line}`"))
        })
}

/// The `Log2 Dist` histogram of the total: (bucket floor µs, count) in order, and the line
/// it starts at. A row `8:   103998    15315      324      270` counts the buckets 2⁸, 2⁹,
/// 2¹⁰ and 2¹¹ µs.
fn histogram(lines: &[(usize, &str)]) -> Result<(usize, Vec<(u64, u64)>), OutputError> {
    let start = lines
        .iter()
        .position(|(_, l)| l.trim_start().starts_with(TOTAL))
        .ok_or_else(|| OutputError::new(TOOL, None, format!("no `{TOTAL}…` section")))?;
    let section = &lines[start + 1..];
    let dist = section
        .iter()
        .take_while(|(_, l)| !l.trim().is_empty())
        .position(|(_, l)| l.trim() == "Log2 Dist:")
        .ok_or_else(|| {
            OutputError::new(
                TOOL,
                Some(lines[start].0),
                "the total's section has no `Log2 Dist:` histogram",
            )
        })?;
    let mut buckets = Vec::new();
    for &(n, line) in &section[dist + 1..] {
        let Some((row, counts)) = line.trim().split_once(':') else {
            break;
        };
        // The histogram ends where the rows stop being `EXPONENT: counts`.
        let Ok(row) = row.trim().parse::<u32>() else {
            break;
        };
        for (i, count) in counts.split_whitespace().enumerate() {
            let floor = u32::try_from(i)
                .ok()
                .and_then(|i| row.checked_add(i))
                .and_then(|e| 1u64.checked_shl(e))
                .ok_or_else(|| {
                    OutputError::new(
                        TOOL,
                        Some(n),
                        format!("bucket 2^({row}+{i}) is past 2^63 µs"),
                    )
                })?;
            let count = count.parse::<u64>().map_err(|_| {
                OutputError::new(
                    TOOL,
                    Some(n),
                    format!("`{count}` is not a count in `{}`", line.trim()),
                )
            })?;
            buckets.push((floor, count));
        }
    }
    Ok((section[dist].0, buckets))
}

/// The bucket [floor, 2·floor) that holds quantile `p`, `None` for an empty histogram.
fn bucket_of(buckets: &[(u64, u64)], p: f64) -> Option<(u64, u64)> {
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let wanted = (p * total as f64).ceil() as u64;
    let mut seen = 0;
    for &(floor, count) in buckets {
        seen += count;
        if seen >= wanted {
            return Some((floor, floor * 2));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::tools::tests::errors;

    /// memaslap's output against memcached (`memcaslap -s 127.0.0.1:PORT -t 2s -T 1 -c 16
    /// -S 2s`, this host).
    const SAMPLE: &[u8] = b"servers: 127.0.0.1:21211
threads count: 1
concurrency: 16
run time: 2s
windows size: 10k
set proportion: set_prop=0.10
get proportion: get_prop=0.90
\x1b[1;1H\x1b[2J
Get Statistics
Type     Time(s)  Ops          TPS(ops/s)   Net(M/s)   Get_miss   Min(us)  Max(us)    Avg(us)    Std_dev    Geo_dist  
Period   2        264323       132161       137.1      0          9        8510       108        279.54     81.35
Global   2        264323       132161       137.1      0          9        8510       108        279.54     81.35

Set Statistics
Type     Time(s)  Ops          TPS(ops/s)   Net(M/s)   Get_miss   Min(us)  Max(us)    Avg(us)    Std_dev    Geo_dist  
Period   2        29379        14689        15.2       0          15       8452       111        283.11     81.80
Global   2        29379        14689        15.2       0          15       8452       111        283.11     81.80

Total Statistics
Type     Time(s)  Ops          TPS(ops/s)   Net(M/s)   Get_miss   Min(us)  Max(us)    Avg(us)    Std_dev    Geo_dist  
Period   2        293702       146851       152.4      0          9        8510       108        280.01     81.39
Global   2        293702       146851       152.4      0          9        8510       108        280.01     81.39

Get Statistics (264338 events)
   Min:         9
   Max:      8510
   Avg:       108
   Geo:     81.36
   Std:    279.56
   Log2 Dist:
       4:       13      472    58822   183393
       8:    18051      675      463      939
      12:     1111      368       31

Set Statistics (29380 events)
   Min:        15
   Max:      8452
   Avg:       111
   Geo:     81.80
   Std:    283.12
   Log2 Dist:
       4:        3       51     6436    20433
       8:     1987       94       59      132
      12:      134       50        1

Total Statistics (293718 events)
   Min:         9
   Max:      8510
   Avg:       108
   Geo:     81.40
   Std:    280.03
   Log2 Dist:
       4:       16      523    65258   203826
       8:    20038      769      522     1071
      12:     1245      418       32

cmd_get: 264353
cmd_set: 29381
get_misses: 0
written_bytes: 50968560
read_bytes: 293650220
object_bytes: 31966528

Run time: 2.0s Ops: 293734 TPS: 146853 Net_rate: 164.3M/s
";

    #[test]
    fn a_captured_run_gives_its_rate_and_the_buckets_of_its_percentiles() {
        let figures = parse(SAMPLE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(figures.achieved_rate, 146_853.0);
        // 293,718 requests: the median is the 146,859th, in [128, 256) (65,797 below 128 µs,
        // 203,826 in it); the p99 the 290,781st, in [1024, 2048) (290,430 below 1024 µs).
        assert_eq!(
            figures.p50,
            Latency::Log2Bucket {
                low_us: 128,
                high_us: 256
            }
        );
        assert_eq!(
            figures.p99,
            Latency::Log2Bucket {
                low_us: 1024,
                high_us: 2048
            }
        );
        assert_eq!(
            figures.p999,
            Some(Latency::Log2Bucket {
                low_us: 8192,
                high_us: 16384
            })
        );
    }

    #[test]
    fn the_histogram_rows_count_powers_of_two() {
        let lines: Vec<(usize, &str)> = "Total Statistics (208303 events)\n   Min:        16\n   Log2 Dist:\n       4:        1       85     3774    84516\n       8:   103998    15315      324      270\n      12:       20\n\ncmd_get: 1\n"
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .collect();
        let (at, buckets) = histogram(&lines).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(at, 3);
        assert_eq!(buckets[0], (16, 1));
        assert_eq!(buckets[4], (256, 103_998));
        assert_eq!(buckets.len(), 9);
        assert_eq!(bucket_of(&buckets, 0.5), Some((256, 512)));
        assert_eq!(bucket_of(&buckets, 0.99), Some((512, 1024)));
        assert_eq!(bucket_of(&[], 0.5), None);
    }

    #[test]
    fn malformed_output_is_an_error_naming_the_line() {
        const RUN: &str = "Run time: 2.0s Ops: 5 TPS: 2\n";
        let total = |histogram: &str| format!("Total Statistics (5 events)\n{histogram}\n{RUN}");
        let (no_dist, bad_count, empty, too_far) = (
            total("   Min: 1\n\n   Log2 Dist:\n       4: 5\n"),
            total("   Log2 Dist:\n       4: 5 x5\n"),
            total("   Log2 Dist:\n       4: 0 0\n"),
            total("   Log2 Dist:\n       62: 0 0 1\n"),
        );
        errors(
            TOOL,
            &[
                (b"", "memaslap's output: no `Run time: … TPS: N` line"),
                (
                    b"Run time: 2.0s Ops: 5 TPS: many\n",
                    "memaslap's output, line 1: no rate after `TPS: ` in \
                     `Run time: 2.0s Ops: 5 TPS: many`",
                ),
                (
                    RUN.as_bytes(),
                    "memaslap's output: no `Total Statistics (…` section",
                ),
                (
                    no_dist.as_bytes(),
                    "memaslap's output, line 1: the total's section has no `Log2 Dist:` histogram",
                ),
                (
                    bad_count.as_bytes(),
                    "memaslap's output, line 3: `x5` is not a count in `4: 5 x5`",
                ),
                (
                    empty.as_bytes(),
                    "memaslap's output, line 2: the Log2 Dist histogram counts no requests",
                ),
                (
                    too_far.as_bytes(),
                    "memaslap's output, line 3: bucket 2^(62+2) is past 2^63 µs",
                ),
            ],
        );
    }
}
