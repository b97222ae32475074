//! The HPCC ns-3 simulator's flow file (alibaba-edu/High-Precision-Congestion-Control,
//! `simulation/mix/flow.txt`, written by `traffic_gen/traffic_gen.py`).
//!
//! Why: reading the same flow list as the reference simulator lets us compare results flow by
//! flow (`/work/shared/benchmarks/websearch-320h-load30-10ms.flows.txt`). Format: first line the
//! flow count; then one line per flow `src dst priority dport size_bytes start_seconds`; what
//! follows the counted lines is ignored, as by the simulator (see [`read_hpcc_flows`]). hopsim
//! reads two optional fields more: a seventh, the flow's priority group (`FlowSpec::pg`), and an
//! eighth, its source port (`FlowSpec::sport`; 0 or absent: the run numbers it), both as the BFC
//! simulator's headers carry them (`hopsim import-bfc --flows` writes them).
//! Start times are kept as written (HPCC's start at 2.0 s); a caller may subtract an offset.

use super::FlowSpec;
use crate::time::{Time, PS_PER_NS, PS_PER_S};
use std::fmt::Write;

/// Parses a flow file, dropping the warnings of [`read_hpcc_flows`].
pub fn parse_hpcc_flows(text: &str) -> Result<Vec<FlowSpec>, String> {
    read_hpcc_flows(text).map(|(flows, _)| flows)
}

/// Parses a flow file as the HPCC simulator reads it (`ReadFlowInput` in its `scratch/third.cc`):
/// the count, then exactly that many flow lines. Returns the flows and warnings.
///
/// Lenient where the simulator is: text after the declared count (its own `mix/flow.txt` ends
/// with `...` and a note) is ignored with a warning, and blank lines are skipped. Strict where
/// a silent misreading would follow: a malformed line within the count, or fewer flow lines than
/// the count, is an error naming the 1-based line and the field
/// (`line 17: start time 'x' is not a number`).
pub fn read_hpcc_flows(text: &str) -> Result<(Vec<FlowSpec>, Vec<String>), String> {
    let mut lines = crate::topo::hpcc_file::content_lines(text);
    let Some((ln, first)) = lines.next() else {
        return Err("line 1: expected the flow count, found an empty file".to_string());
    };
    let count: usize = first.parse().map_err(|_| {
        format!("line {ln}: flow count '{first}' is not a whole number (the first line holds the number of flows)")
    })?;
    let mut flows = Vec::with_capacity(count.min(1 << 24));
    let mut last = ln;
    for (no, line) in lines.by_ref().take(count) {
        flows.push(parse_line(line, no)?);
        last = no;
    }
    if flows.len() < count {
        return Err(format!(
            "line {ln}: the flow count is {count}, but the file has only {} flow line{} (up to line {last})",
            flows.len(),
            if flows.len() == 1 { "" } else { "s" }
        ));
    }
    let what = format!("the {count} flows that line {ln} declares");
    let warnings = crate::topo::hpcc_file::ignored_tail(lines, &what).into_iter().collect();
    Ok((flows, warnings))
}

const FIELDS: &str = "`src dst priority dport size start_seconds`, and optionally `pg` and `sport`";

fn parse_line(line: &str, no: usize) -> Result<FlowSpec, String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if !(6..=8).contains(&f.len()) {
        return Err(format!("line {no}: expected 6 to 8 fields {FIELDS}, found {} in {line:?}", f.len()));
    }
    // hopsim's seventh field: the BFC simulator's per-flow priority group, which its ECMP hashes
    let pg: u16 = match f.get(6) {
        Some(v) => num(v, no, "pg", "is not a priority group (a whole number below 65536)")?,
        None => 0,
    };
    // and its eighth: the flow's source port, where the file gives the simulator's own
    let sport: u16 = match f.get(7) {
        Some(v) => num(v, no, "sport", "is not a port number (a whole number below 65536; 0: numbered by the run)")?,
        None => 0,
    };
    let node = "is not a node id (a whole number)";
    let src: u32 = num(f[0], no, "src", node)?;
    let dst: u32 = num(f[1], no, "dst", node)?;
    let prio: u32 = num(f[2], no, "priority", "is not a whole number")?;
    let dport: u16 = num(f[3], no, "dport", "is not a port number (a whole number below 65536)")?;
    let size: u64 = num(f[4], no, "size", "is not a whole number of bytes")?;
    let secs: f64 = num(f[5], no, "start time", "is not a number (seconds)")?;
    if prio as usize >= crate::queues::port::NPRIO {
        return Err(format!(
            "line {no}: priority {prio} is not a priority; allowed: 0 to {}",
            crate::queues::port::NPRIO - 1
        ));
    }
    if src == dst {
        return Err(format!("line {no}: src and dst are both {src}"));
    }
    if size == 0 {
        return Err(format!("line {no}: size must be at least 1 byte, found 0"));
    }
    if !(secs.is_finite() && secs >= 0.0 && secs * (PS_PER_S as f64) < u64::MAX as f64) {
        return Err(format!(
            "line {no}: start time '{}' must be a non-negative time in seconds, below {:.0} s",
            f[5],
            u64::MAX as f64 / PS_PER_S as f64
        ));
    }
    Ok(FlowSpec { src, dst, size, start: Time::from_secs_f64(secs), prio: prio as u8, incast: false, dport, sport, pg, rate_cap: None })
}

fn num<T: std::str::FromStr>(s: &str, no: usize, field: &str, what: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("line {no}: {field} '{s}' {what}"))
}

/// Writes flows in the same format (each flow's dport; traffic_gen.py writes 100; a seventh field,
/// the flow's `pg`, where it or the sport is not 0; an eighth, the sport, where it is not 0).
/// Start times print with 9 decimals (HPCC's `%.9f`) when they are whole nanoseconds, else with
/// 12 (exact picoseconds), so parse(write(x)) == x for flows not tagged incast (the format has no
/// such field).
pub fn write_hpcc_flows(flows: &[FlowSpec]) -> String {
    let mut s = String::with_capacity(32 * (flows.len() + 1));
    let _ = writeln!(s, "{}", flows.len());
    for f in flows {
        let (whole, frac) = (f.start.0 / PS_PER_S, f.start.0 % PS_PER_S);
        let _ = if frac % PS_PER_NS == 0 {
            write!(
                s,
                "{} {} {} {} {} {whole}.{:09}",
                f.src,
                f.dst,
                f.prio,
                f.dport,
                f.size,
                frac / PS_PER_NS
            )
        } else {
            write!(s, "{} {} {} {} {} {whole}.{frac:012}", f.src, f.dst, f.prio, f.dport, f.size)
        };
        let _ = match (f.pg, f.sport) {
            (0, 0) => writeln!(s),
            (pg, 0) => writeln!(s, " {pg}"),
            (pg, sport) => writeln!(s, " {pg} {sport}"),
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
        // hopsim's seventh field, the flow's priority group, and only where it is set
        odd[1].pg = 40_713;
        assert_eq!(write_hpcc_flows(&odd).lines().nth(2), Some("91 176 3 100 4727 2.000002612 40713"));
        assert_eq!(parse_hpcc_flows(&write_hpcc_flows(&odd)).unwrap(), odd);
        assert!(err("1\n0 2 3 100 20000 2.0 70000\n").contains("line 2: pg '70000' is not a priority group"));
        // and its eighth, the flow's source port, with the seventh before it even where that is 0
        odd[2].sport = 49_153;
        assert_eq!(write_hpcc_flows(&odd).lines().nth(3), Some("281 157 0 100 3879469 2.000004819 0 49153"));
        assert_eq!(parse_hpcc_flows(&write_hpcc_flows(&odd)).unwrap(), odd);
        assert!(err("1\n0 2 3 100 20000 2.0 7 65536\n").contains("line 2: sport '65536' is not a port number"));
    }

    fn err(text: &str) -> String {
        parse_hpcc_flows(text).unwrap_err()
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        assert_eq!(err(""), "line 1: expected the flow count, found an empty file");
        assert!(err("\n\nx\n").starts_with("line 3: flow count 'x' is not a whole number"), "{}", err("x"));
        let e = err("2\n1 2 3 100 10 0.5\n");
        assert_eq!(e, "line 1: the flow count is 2, but the file has only 1 flow line (up to line 2)");
        assert!(err("3\n").contains("only 0 flow lines (up to line 1)"));
        let e = err("1\n1 2 3 100 10\n");
        assert!(e.starts_with("line 2: expected 6 to 8 fields `src dst priority dport size start_seconds`, and optionally `pg` and `sport`, found 5"), "{e}");
        let cases = [
            ("x 2 3 100 10 0.5", "line 3: src 'x' is not a node id"),
            ("1 -2 3 100 10 0.5", "line 3: dst '-2' is not a node id"),
            ("1 2 p 100 10 0.5", "line 3: priority 'p' is not a whole number"),
            ("1 2 3 1e2 10 0.5", "line 3: dport '1e2' is not a port number"),
            ("1 2 3 100 1.5 0.5", "line 3: size '1.5' is not a whole number of bytes"),
            ("1 2 3 100 10 x", "line 3: start time 'x' is not a number"),
            ("1 2 300 100 10 0.5", "line 3: priority 300 is not a priority; allowed: 0 to"),
            ("1 1 3 100 10 0.5", "line 3: src and dst are both 1"),
            ("1 2 3 100 0 0.5", "line 3: size must be at least 1 byte"),
            ("1 2 3 100 10 -1", "line 3: start time '-1' must be a non-negative time"),
            ("1 2 3 100 10 inf", "line 3: start time 'inf' must be a non-negative time"),
        ];
        for (line, want) in cases {
            // the bad line is the second flow; line 2 is fine
            let e = err(&format!("2\n0 1 3 100 10 0.5\n{line}\n"));
            assert!(e.starts_with(&want), "{line}: {e}");
        }
    }

    #[test]
    fn text_after_the_count_is_a_warning() {
        // as the HPCC repository's own mix/flow.txt: the count says 2, a list and a note follow
        let text = "2\n2 1 3 100 200000000 2\n3 1 3 100 200000000 2\n4 1 3 100 150000000 2\n\
                    ...\n\nPlease order the flows in ascending start_time!\n";
        let (flows, warnings) = read_hpcc_flows(text).unwrap();
        assert_eq!(flows.len(), 2);
        assert_eq!(warnings.len(), 1);
        let w = &warnings[0];
        assert!(w.starts_with("lines 4 to 7: 3 lines after the 2 flows that line 1 declares are ignored"), "{w}");
        assert!(w.contains("\"4 1 3 100 150000000 2\""), "{w}");
        // a malformed line after the count is not read at all
        assert_eq!(parse_hpcc_flows("1\n1 2 3 100 10 0.5\nnot a flow\n").unwrap().len(), 1);
        // nothing after the count: no warning
        assert!(read_hpcc_flows("1\n1 2 3 100 10 0.5\n\n").unwrap().1.is_empty());
        let (_, w) = read_hpcc_flows("0\nx\n").unwrap();
        assert_eq!(w, vec!["line 2: 1 line after the 0 flows that line 1 declares is ignored (as the HPCC simulator does): \"x\"".to_string()]);
    }
}
