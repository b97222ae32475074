//! The HPCC ns-3 simulator's flow file (alibaba-edu/High-Precision-Congestion-Control,
//! `simulation/mix/flow.txt`, written by `traffic_gen/traffic_gen.py`).
//!
//! Why: reading the same flow list as the reference simulator lets us compare results flow by
//! flow (`/work/shared/benchmarks/websearch-320h-load30-10ms.flows.txt`). Format: first line the
//! flow count; then one line per flow `src dst priority dport size_bytes start_seconds`.
//! Start times are kept as written (HPCC's start at 2.0 s); a caller may subtract an offset.

use super::FlowSpec;
use crate::time::{Time, PS_PER_NS, PS_PER_S};
use std::fmt::Write;

/// Destination port written by `traffic_gen.py`; the simulator ignores it for routing.
const HPCC_DPORT: u32 = 100;

/// Parses a flow file. Errors name the 1-based line; the count on the first line must match.
pub fn parse_hpcc_flows(text: &str) -> Result<Vec<FlowSpec>, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((i, first)) = lines.next() else {
        return Err("empty flow file: expected the flow count on the first line".to_string());
    };
    let count: usize = first
        .trim()
        .parse()
        .map_err(|_| format!("line {}: cannot parse flow count `{}`", i + 1, first.trim()))?;
    let mut flows = Vec::with_capacity(count.min(1 << 24));
    for (i, line) in lines {
        flows.push(parse_line(line, i + 1)?);
    }
    if flows.len() != count {
        return Err(format!(
            "flow count on line 1 says {count}, the file has {} flow lines",
            flows.len()
        ));
    }
    Ok(flows)
}

fn parse_line(line: &str, no: usize) -> Result<FlowSpec, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != 6 {
        return Err(format!(
            "line {no}: expected 6 fields `src dst priority dport size_bytes start_seconds`, found {}",
            f.len()
        ));
    }
    let src: u32 = num(f[0], no, "src")?;
    let dst: u32 = num(f[1], no, "dst")?;
    let prio: u8 = num(f[2], no, "priority")?;
    let dport: u16 = num(f[3], no, "dport")?;
    let size: u64 = num(f[4], no, "size_bytes")?;
    let secs: f64 = num(f[5], no, "start_seconds")?;
    if prio as usize >= crate::net::port::NPRIO {
        return Err(format!("line {no}: priority {prio} is not a priority; allowed: 0 to {}", crate::net::port::NPRIO - 1));
    }
    if src == dst {
        return Err(format!("line {no}: src and dst are both {src}"));
    }
    if size == 0 {
        return Err(format!("line {no}: size_bytes must be at least 1"));
    }
    if !(secs.is_finite() && secs >= 0.0 && secs * (PS_PER_S as f64) < u64::MAX as f64) {
        return Err(format!("line {no}: start_seconds `{}` must be a non-negative time", f[5]));
    }
    Ok(FlowSpec { src, dst, size, start: Time::from_secs_f64(secs), prio, incast: false, dport, sport: 0 })
}

fn num<T: std::str::FromStr>(s: &str, no: usize, what: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("line {no}: cannot parse {what} `{s}`"))
}

/// Writes flows in the same format (dport 100, as traffic_gen.py). Start times print with 9
/// decimals (HPCC's `%.9f`) when they are whole nanoseconds, else with 12 (exact picoseconds),
/// so parse(write(x)) == x for flows not tagged incast (the format has no such field).
pub fn write_hpcc_flows(flows: &[FlowSpec]) -> String {
    let mut s = String::with_capacity(32 * (flows.len() + 1));
    let _ = writeln!(s, "{}", flows.len());
    for f in flows {
        let (whole, frac) = (f.start.0 / PS_PER_S, f.start.0 % PS_PER_S);
        let _ = if frac % PS_PER_NS == 0 {
            writeln!(
                s,
                "{} {} {} {HPCC_DPORT} {} {whole}.{:09}",
                f.src,
                f.dst,
                f.prio,
                f.size,
                frac / PS_PER_NS
            )
        } else {
            writeln!(s, "{} {} {} {HPCC_DPORT} {} {whole}.{frac:012}", f.src, f.dst, f.prio, f.size)
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Rate;
    use crate::workload::arrivals::{total_arrival_rate, LoadBasis};

    const BENCH: &str = "benchmarks/websearch-320h-load30-10ms.flows.txt";

    /// The benchmark file: in the repository (`benchmarks/`), or in the shared data folder
    /// inside (`shared/`) or next to (`../shared`) the checkout. `None` when none exists.
    fn bench_text() -> Option<String> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        [
            format!("{root}/{BENCH}"),
            format!("{root}/shared/{BENCH}"),
            format!("{root}/../shared/{BENCH}"),
        ]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
    }

    #[test]
    fn parses_the_hpcc_benchmark_flow_file() {
        let Some(text) = bench_text() else {
            eprintln!("SKIPPED: {BENCH} not found in the repository or the shared folder");
            return;
        };
        let flows = parse_hpcc_flows(&text).unwrap();
        assert_eq!(flows.len(), 6706);
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        let f = flows[0];
        assert_eq!((f.src, f.dst, f.size, f.prio), (13, 6, 24375, 3));
        assert_eq!(f.start, Time(2_000_000_962_000));
        assert!(flows.iter().all(|f| f.src < 320 && f.dst < 320 && f.start >= Time::from_ms(2000)));
        // HostLinks load basis reproduces the file's flow count: traffic_gen.py gives each of
        // the 320 hosts rate 100G*0.3/(8*mean) and drops each host's last arrival (it writes a
        // flow only when the host's next arrival is still inside the window).
        let basis = LoadBasis::HostLinks { hosts: 320, host_rate: Rate::gbps(100) };
        let expected = total_arrival_rate(0.3, &basis, 1_711_250.0) * 0.010 - 320.0;
        assert!((flows.len() as f64 - expected).abs() < 3.0 * expected.sqrt(), "{expected}");
        // Round trip.
        assert_eq!(parse_hpcc_flows(&write_hpcc_flows(&flows)).unwrap(), flows);
    }

    #[test]
    fn parses_an_excerpt_and_round_trips() {
        let text = "3 \n13 6 3 100 24375 2.000000962\n91 176 3 100 4727 2.000002612\n\
                    281 157 0 100 3879469 2.000004819\n";
        let flows = parse_hpcc_flows(text).unwrap();
        assert_eq!(flows.len(), 3);
        assert_eq!(flows[2].prio, 0);
        assert_eq!(flows[1].start, Time(2_000_002_612_000));
        assert_eq!(write_hpcc_flows(&flows).lines().nth(1), Some("13 6 3 100 24375 2.000000962"));
        let mut odd = flows.clone();
        odd[0].start = Time(1_234_567);
        assert_eq!(parse_hpcc_flows(&write_hpcc_flows(&odd)).unwrap(), odd);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_hpcc_flows("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = parse_hpcc_flows("x\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("count"), "{e}");
        let e = parse_hpcc_flows("2\n1 2 3 100 10 0.5\n").unwrap_err();
        assert!(e.contains("says 2") && e.contains("1 flow"), "{e}");
        let e = parse_hpcc_flows("1\n1 2 3 100 10\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("6 fields"), "{e}");
        let e = parse_hpcc_flows("1\n1 2 300 100 10 0.5\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("priority"), "{e}");
        let e = parse_hpcc_flows("1\n1 1 3 100 10 0.5\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("both"), "{e}");
        let e = parse_hpcc_flows("1\n1 2 3 100 0 0.5\n").unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = parse_hpcc_flows("1\n1 2 3 100 10 -1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("start_seconds"), "{e}");
        let e = parse_hpcc_flows("1\n1 2 3 100 10 inf\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
