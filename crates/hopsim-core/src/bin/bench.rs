//! The standard benchmark: the HPCC simulator's 320-host fat-tree with its 6,706-flow WebSearch
//! list at 30% load.
//!
//! `cargo run --release --bin hopsim-bench -- RUN/scenario.json` runs a core scenario JSON (what a
//! run folder keeps): `scripts/bench.sh` makes it with `hopsim import-hpcc
//! benchmarks/hpcc-dcqcn.config.txt`, so the benchmark runs exactly what that simulator runs
//! (its DCQCN, window off, its MMU, ECMP and packet sizes) and the speed ratio compares like with
//! like. With no argument, or `-- TOPO FLOWS`, it runs hopsim's own defaults on those files (DCQCN
//! as the papers give it, PFC, 32 MB buffers, 1000-byte payloads), the benchmark of earlier
//! releases. It prints wall time, peak memory, events/s and simulated packets/s, and a one-line
//! FCT summary on hopsim's basis (receiver FCT over ideal FCT) and on that simulator's (last ACK
//! over its standalone FCT).

use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::{NetConfig, RecordConfig};
use hopsim_core::progress::{Sink, Watch};
use hopsim_core::scenario::{Scenario, TopologySpec, WorkloadSpec};
use hopsim_core::stats::{FlowTable, RunStats};
use hopsim_core::Time;
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<f64>().ok()))
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

const USAGE: &str = "usage: hopsim-bench [--threads N] [SCENARIO.json | TOPO.txt FLOWS.txt]
  --threads N    split the network into N partitions run side by side (hopsim_core::engine)
  SCENARIO.json  a core scenario JSON (`hopsim validate X.toml --core-json X.json`, or a run folder's scenario.json)
  TOPO FLOWS     HPCC-format topology and flow files, run with hopsim's own defaults
  (no argument)  the standard benchmark's files under benchmarks/, hopsim's defaults";

/// Bad input is the user's, not a bug: say which argument and why, exit 2 (no backtrace).
fn fail(msg: String) -> ! {
    eprintln!("hopsim-bench: {msg}\n{USAGE}");
    std::process::exit(2)
}

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benchmarks/");
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return;
    }
    let mut threads = 1usize;
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        let n = args.get(i + 1).cloned().unwrap_or_default();
        threads = n.parse().ok().filter(|&t| t >= 1).unwrap_or_else(|| fail(format!("--threads {n:?}: allowed: a whole number, 1 or more")));
        args.drain(i..=i + 1);
    }
    if let Some(a) = args.iter().find(|a| a.starts_with('-')) {
        fail(format!("unknown option {a}"));
    }
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_else(|e| fail(format!("cannot read {p}: {e}")));
    let sc = match args.as_slice() {
        [json] if json.ends_with(".json") => {
            let mut sc = Scenario::from_json(&read(json)).unwrap_or_else(|e| fail(format!("{json}: {e}")));
            // timing only: no periodic samples
            sc.net.record = RecordConfig { buffer_interval: None, ..Default::default() };
            sc
        }
        [] => defaults_scenario(&read(&format!("{root}hpcc-fat-tree-320.topo.txt")), &read(&format!("{root}websearch-320h-load30-10ms.flows.txt"))),
        [topo, flows] => defaults_scenario(&read(topo), &read(flows)),
        [one] => fail(format!("{one}: one argument must be a scenario JSON (.json)")),
        _ => fail(format!("{} arguments: give at most two", args.len())),
    };
    if threads > 1 {
        run_split(sc, threads)
    } else {
        run(sc)
    }
}

fn defaults_scenario(topo: &str, flows: &str) -> Scenario {
    let mut net = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), record: RecordConfig { buffer_interval: None, ..Default::default() }, ..Default::default() };
    net.switch.buffer_bytes = 32_000_000;
    net.host.mtu = 1000;
    Scenario {
        topology: TopologySpec::Hpcc { text: topo.to_string() },
        workload: WorkloadSpec::HpccFlows { text: flows.to_string(), time_offset: Time::from_secs_f64(2.0), source_ports: Default::default() },
        net,
    }
}

/// `run` on `threads` threads: the partitions are assembled side by side, so the wall time
/// printed is assembly and run together (`build_s` is the first partition's assembly alone).
fn run_split(sc: Scenario, threads: usize) {
    let t0 = Instant::now();
    sc.build().unwrap_or_else(|e| fail(e.to_string()));
    let build = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let (stats, split) = sc.run_threads(Watch::default(), threads).unwrap_or_else(|e| fail(e));
    let wall = t1.elapsed().as_secs_f64() - build;
    let c = &stats.counters;
    let mut sds = Slowdowns::default();
    sds.add(&stats.flows);
    let (mean, p99) = mean_p99(sds.hopsim);
    println!("threads {}{}", split.threads, split.note.map(|n| format!(" ({n})")).unwrap_or_default());
    println!("build_s {build:.3}");
    println!("wall_s {wall:.3}");
    println!("peak_rss_mb {:.1}", peak_rss_mb());
    println!("events {}", c.events);
    println!("events_per_s {:.0}", c.events as f64 / wall);
    println!("sim_time_ms {:.3}", c.end_time_ps as f64 / 1e9);
    println!("flows {} finished {}", c.flows, c.flows_finished);
    println!("slowdown_mean {mean:.3} p99 {p99:.3}");
}

/// Slowdowns of the finished flows on hopsim's basis and on the HPCC simulator's, gathered from
/// the flows table's rows as the run hands them out (in release order: the statistics sort them),
/// so the bench holds 16 bytes per finished flow, not the whole table.
#[derive(Default)]
struct Slowdowns {
    hopsim: Vec<f64>,
    hpcc: Vec<f64>,
}

impl Slowdowns {
    fn add(&mut self, f: &FlowTable) {
        self.hopsim.extend(f.slowdown.iter().copied().filter(|x| x.is_finite()));
        let acked = (0..f.len()).filter(|&i| f.ack_fct_ps[i] != u64::MAX);
        self.hpcc.extend(acked.map(|i| f.ack_fct_ps[i] as f64 / f.hpcc_standalone_fct_ps[i] as f64));
    }
}

/// Mean and 99th percentile of `v` (sorted here, so the order rows came in does not matter).
fn mean_p99(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let p99 = v.get(((v.len() as f64) * 0.99) as usize).copied().unwrap_or(f64::NAN);
    (mean, p99)
}

fn run(sc: Scenario) {
    let t0 = Instant::now();
    let mut sim = sc.build().unwrap_or_else(|e| fail(e.to_string()));
    let build = t0.elapsed().as_secs_f64();
    let slowdowns = Arc::new(Mutex::new(Slowdowns::default()));
    let into = slowdowns.clone();
    let sink: Sink = Box::new(move |s: &RunStats| {
        into.lock().unwrap().add(&s.flows);
        true
    });
    sim.set_watch(Watch::with_sink(sink, 1 << 16));
    let t1 = Instant::now();
    sim.run();
    let wall = t1.elapsed().as_secs_f64();
    let (c, d) = (&sim.stats.counters, &sim.stats.diagnostics);
    let mut sds = std::mem::take(&mut *slowdowns.lock().unwrap());
    sds.add(&sim.stats.flows);
    let (mean, p99) = mean_p99(sds.hopsim);
    println!("build_s {build:.3}");
    println!("wall_s {wall:.3}");
    println!("peak_rss_mb {:.1}", peak_rss_mb());
    println!("events {}", c.events);
    println!("events_per_s {:.0}", c.events as f64 / wall);
    println!("packets {}", c.packets_sent);
    println!("packets_per_s {:.0}", c.packets_sent as f64 / wall);
    println!("sim_time_ms {:.3}", c.end_time_ps as f64 / 1e9);
    println!("flows {} finished {}", c.flows, c.flows_finished);
    println!("slowdown_mean {mean:.3} p99 {p99:.3}");
    let (hmean, hp99) = mean_p99(sds.hpcc);
    println!("hpcc_basis_slowdown_mean {hmean:.3} p99 {hp99:.3}");
    println!("peak_pending_events {} peak_packets_alive {} peak_live_flows {}", d.peak_pending_events, d.peak_packets_alive, d.peak_live_flows);
    println!("pauses {} drops {} cnps {} timeouts {}", c.pauses_sent, c.drops, c.cnps, c.timeouts);
}
