//! The memory a run will need, estimated from its scenario before anything is built, so that a
//! scenario too large for the machine is refused with a message that names the part and the
//! field to change, instead of aborting the process with "memory allocation failed" halfway
//! through the build or the run.
//!
//! How. Counts come from the scenario's parameters: hosts, switches, links and routing-table
//! cells by formula for the parametric topologies (so a huge one is never built just to be
//! measured; `shape_formulas_match_built_topologies` pins the formulas to the builders) and by
//! counting for HPCC files and explicit lists (whose text is in memory already); the expected
//! number of flows from the workload's load, window and CDF mean; the samples from the record
//! intervals over the run's length (its `duration`, else the last flow start plus one mean flow
//! at line rate: a lower bound, so an estimate never refuses a run for samples it may not take).
//! Each count is multiplied by a cost per item: the `size_of` of the structs plus their heap
//! parts, measured with a counting allocator on this code (`tests/it/footprint.rs` checks the
//! sum against what building and running a few scenarios allocates).
//!
//! What it leaves out: the event logs whose length depends on what happens in the run (the packet
//! trace; the pause, control-frame and PFC-received tables of a run that does not spill)
//! and Floodgate's per-destination windows, which grow with the destinations a switch sees. A
//! spilling run hands its pause, control-frame and PFC-received logs over with the samples (a PFC storm sends
//! pause frames for as long as it lasts, tens of MB a second), so it holds at most a chunk of them
//! plus what one checkpoint's events add: that is counted.
//!
//! Output tables count twice: the core's columns grow by doubling, and at the end the binding
//! copies them into Python and the front builds Arrow tables from the copies. A run that spills
//! its time-growing tables and its flows table to a sink (`progress::Sink`; `hopsim run` spools
//! them to disk) holds a chunk of them at a time, and no flow's results once it is freed:
//! `estimate_spilled` counts that chunk in memory and the rest in `Estimate::disk`, which the
//! front compares with the free disk space.
//!
//! How close. Estimate against the peak RSS of a whole `hopsim run` (`validate`), whose Python
//! interpreter and libraries take about 140 MB on their own (measured when this was written):
//! 1e6-host star 4.25 GB / 3.50 GB (validate 3.14 GB); fat-tree k=64, one 16-to-1 incast
//! 1.11 GB / 1.03 GB (validate 0.82 GB); k=128 validate 8.9 GB / 5.6 GB; BFC Fig. 10 (330 k
//! flows) 289 MB / 367 MB; HPCC benchmark 14 MB / 178 MB; Floodgate Fig. 9 26 MB / 228 MB; BFC
//! Fig. 9 267 MB / 716 MB and Fig. 11 31 MB / 391 MB, where the control frames the runs log (2.4
//! and 1 million, about 100 bytes each in the core and as much again as Python strings) are the
//! gap.

use crate::net::flow_store::{FlowFixed, FlowResult};
use crate::net::host::{Flow, Host};
use crate::net::switch::Switch;
use crate::queues::port::{PauseClock, Port, PortCold, NPRIO};
use crate::scenario::{LoadOn, Scenario, TopologySpec, WorkloadSpec};
use crate::time::{Rate, Time};
use crate::topo::{parse_hpcc_topology, Topology};
use crate::workload::arrivals::{mean_gap_ps, LoadBasis, Limit};
use crate::workload::cdf::Cdf;
use crate::workload::incast::IncastSpec;
use std::mem::size_of;

/// Heap of a port beyond its queues and gates: the small vectors and bit sets of its hot and
/// cold parts, with the allocator's overhead.
const PORT_HEAP: u64 = 48;
/// Per data queue of a switch port: the queue (ring header and byte count, a cache line:
/// `queues::port::DataQueue`), the MMU's egress account and the scheduler's deficit.
const QUEUE: u64 = size_of::<crate::queues::port::DataQueue>() as u64 + 12;
/// Per gate of a port (data queue or NIC queue): its pause clock and priority.
const GATE: u64 = size_of::<PauseClock>() as u64 + 1;
/// Per switch port, in the switch: the MMU's ingress and headroom accounts per priority, the
/// port's headroom, rate, ECN thresholds, peer and id in the switch's tables.
const SWITCH_PORT: u64 = 2 * 8 * NPRIO as u64 + 46;
/// Per host beyond `size_of::<Host>()`: its NIC's vectors.
const HOST_HEAP: u64 = 40;
/// Per flow of the run (`net::flow_store`): what assembly computed, its live-state slot index,
/// its place in the arrival order and its route-memo slot; and, in a run without a sink, its
/// results (with a sink its row of the flows table leaves when the flow is freed, and where
/// flows are made as they arrive, `STREAMED_CHUNKS` chunks of these beyond the flows in flight
/// are all that is held).
const FLOW_KEPT_SPILLED: u64 = size_of::<FlowFixed>() as u64 + 3 * 4;
const FLOW_KEPT: u64 = FLOW_KEPT_SPILLED + size_of::<FlowResult>() as u64;
/// Per flow in flight, beyond `size_of::<Flow>()`: its congestion control's heap (HPCC's,
/// DCTCP's are boxed), its slot in the host's round robin, its timer event and its route-memo
/// entry (one cache line).
const FLOW_HEAP: u64 = 24 + 16 + EVENT + 64;
/// Chunks of per-flow data (`FlowStore::chunk_flows` flows each) a streamed run holds beyond
/// those its flows in flight fill: a straggler's, and the newest one being filled.
const STREAMED_CHUNKS: u64 = 2;
/// A row of the flows table (18 columns).
const FLOW_ROW: u64 = 4 * 5 + 8 * 12 + 1 + 9;
/// A row of the ports table (17 columns and the hop class's string).
const PORT_ROW: u64 = 4 * 2 + 2 + 8 * 12 + 24 + 24;
/// A pending event in the scheduler, and a packet (slab slot, queue slot, free-list slot).
const EVENT: u64 = 32;
const PACKET: u64 = size_of::<crate::packet::Packet>() as u64 + 8;
/// A buffer sample: per switch (time, node, bytes) and per switch port (time, row, bytes, sent
/// bytes, active queues); a queue sample (time, node, port, bytes); a qlen-histogram row.
const SWITCH_SAMPLE: u64 = 8 + 4 + 8;
const PORT_SAMPLE: u64 = 8 + 4 + 8 + 8 + 4;
const QUEUE_SAMPLE: u64 = 8 + 4 + 2 + 8;
const QLEN_ROW: u64 = 8 + 4 + 2 + 4 + 8;
/// The round trip a window of one BDP is taken at, and how many times its time at line rate a
/// flow is taken to last, for the packets' bound.
const TYPICAL_RTT: Time = Time::from_us(8);
const SLOWDOWN: f64 = 4.0;
/// Output tables: growth slack in the core, then a copy in Python and the Arrow tables.
const TABLE_FACTOR: u64 = 2;
/// A row of the pause or control-frame log: its columns, and its text (the mechanism or kind) as
/// a `String` in the core and as a Python `str` in the chunk handed over.
const LOG_ROW: u64 = 8 + 4 + 2 + 4 + 8 + 8 + 24 + 16 + 64;

/// The counts an estimate multiplies, from formulas or from a built topology.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    pub nodes: u64,
    pub hosts: u64,
    pub switches: u64,
    pub links: u64,
    /// Ports at switches (the rest of the 2 * links ports are at hosts).
    pub switch_ports: u64,
    /// Routing table rows (switches, multi-homed hosts) and columns (one per switch with
    /// single-homed hosts, one per other host): `topo::routes::table_shape`.
    pub route_rows: u64,
    pub route_cols: u64,
    /// Rate of the first host's links together (what `load_on = "host_links"` refers to,
    /// `Topology::host_rate`), and the
    /// capacity of the ToR uplinks (`"core_links"`), bits per second.
    pub host_rate: u64,
    pub core_bps: f64,
}

impl Shape {
    /// Counted on a built topology.
    pub fn of(t: &Topology) -> Shape {
        let hosts = t.n_hosts() as u64;
        let is_host = |n: u32| t.is_host(n);
        let switch_ports = t.links.iter().map(|l| !is_host(l.a) as u64 + !is_host(l.b) as u64).sum();
        let (rows, cols) = crate::topo::routes::table_shape(t);
        let h0 = t.hosts().next();
        let host_rate = h0.map_or(0, |h| t.host_rate(h).0);
        let tier = |n: u32| t.tier(n);
        let core_bps = t
            .links
            .iter()
            .filter(|l| matches!((tier(l.a), tier(l.b)), (Some(0), Some(x)) | (Some(x), Some(0)) if x > 0))
            .map(|l| l.rate.0 as f64)
            .sum();
        Shape {
            nodes: t.nodes.len() as u64,
            hosts,
            switches: t.nodes.len() as u64 - hosts,
            links: t.links.len() as u64,
            switch_ports,
            route_rows: rows as u64,
            route_cols: cols as u64,
            host_rate,
            core_bps,
        }
    }

    /// By formula for the parametric topologies, counted for the others (`Err` only where the
    /// HPCC file cannot be read; the build reports that better).
    pub fn of_spec(spec: &TopologySpec) -> Result<Shape, String> {
        let u = |x: usize| x as u64;
        Ok(match spec {
            TopologySpec::Star { hosts, rate, .. } => {
                let h = u(*hosts);
                Shape { nodes: h + 1, hosts: h, switches: 1, links: h, switch_ports: h, route_rows: 1, route_cols: 1, host_rate: rate.0, core_bps: 0.0 }
            }
            TopologySpec::Dumbbell { left, right, host_rate, .. } => {
                let h = u(*left) + u(*right);
                let cols = (*left > 0) as u64 + (*right > 0) as u64;
                Shape { nodes: h + 2, hosts: h, switches: 2, links: h + 1, switch_ports: h + 2, route_rows: 2, route_cols: cols, host_rate: host_rate.0, core_bps: 0.0 }
            }
            TopologySpec::LeafSpine(l) => {
                let (hpt, t, s, k) = (u(l.hosts_per_tor), u(l.tors), u(l.spines), u(l.links_per_spine));
                let h = hpt.saturating_mul(t);
                let fabric = t.saturating_mul(s).saturating_mul(k);
                Shape {
                    nodes: h + t + s,
                    hosts: h,
                    switches: t + s,
                    links: h + fabric,
                    switch_ports: h + 2 * fabric,
                    route_rows: t + s,
                    route_cols: if hpt > 0 { t } else { 0 },
                    host_rate: l.host_rate.0,
                    core_bps: fabric as f64 * l.fabric_rate.0 as f64,
                }
            }
            TopologySpec::FatTree(f) => {
                let (k, half, hpe) = (u(f.k), u(f.k / 2), u(f.hosts_per_edge));
                let edges = k * half;
                let h = edges.saturating_mul(hpe);
                let fabric = 2 * k * half * half;
                Shape {
                    nodes: h + 2 * edges + half * half,
                    hosts: h,
                    switches: 2 * edges + half * half,
                    links: h + fabric,
                    switch_ports: h + 2 * fabric,
                    route_rows: 2 * edges + half * half,
                    route_cols: if hpe > 0 { edges } else { 0 },
                    host_rate: f.host_rate.0,
                    core_bps: (edges * half) as f64 * f.fabric_rate.0 as f64,
                }
            }
            TopologySpec::MultiDc(m) => {
                let one = Shape::of_spec(&TopologySpec::LeafSpine(m.dc.clone()))?;
                let s = u(m.dc.spines);
                Shape {
                    nodes: 2 * one.nodes + 2,
                    hosts: 2 * one.hosts,
                    switches: 2 * one.switches + 2,
                    links: 2 * one.links + 2 * s + 1,
                    switch_ports: 2 * one.switch_ports + 4 * s + 2,
                    route_rows: 2 * one.route_rows + 2,
                    route_cols: 2 * one.route_cols,
                    host_rate: one.host_rate,
                    core_bps: 2.0 * one.core_bps,
                }
            }
            TopologySpec::Hpcc { text } => Shape::of(&parse_hpcc_topology(text)?),
            TopologySpec::Explicit(t) => Shape::of(t),
        })
    }
}

/// One part of an estimate: what it is, its bytes, the counts behind them, and what to change to
/// make it smaller.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub name: &'static str,
    pub bytes: u64,
    pub detail: String,
    pub change: String,
}

/// The parts of an estimate that grow with simulated time and go to a sink in chunks.
const GROWING: [&str; 3] = ["buffer samples", "queue samples", "pause and control logs"];

/// A scenario's estimated memory, part by part (largest first).
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub parts: Vec<Part>,
    pub shape: Shape,
    /// Flows the workload is expected to start, and the run length the samples were counted over.
    pub flows: u64,
    pub run_time: Time,
    /// Bytes the spilled tables (buffer and queue samples, the flows table) take on disk,
    /// uncompressed, when the run hands them to a sink (`estimate_spilled`); 0 otherwise.
    pub disk: u64,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |a, p| a.saturating_add(p.bytes))
    }

    /// `Err` with a message when the estimate exceeds `limit` bytes; `limit_note` says where the
    /// limit comes from (e.g. "available memory" or "--max-memory").
    pub fn check(&self, limit: u64, limit_note: &str) -> Result<(), String> {
        let total = self.total();
        if total <= limit {
            return Ok(());
        }
        let big = &self.parts[0];
        let rest: Vec<String> = self.parts.iter().skip(1).filter(|p| p.bytes > 0).take(4).map(|p| format!("{} {}", p.name, fmt_bytes(p.bytes))).collect();
        Err(format!(
            "memory: this run needs about {} but the limit is {} ({limit_note}); the largest part is {}, {} ({}): {}{}",
            fmt_bytes(total),
            fmt_bytes(limit),
            big.name,
            fmt_bytes(big.bytes),
            big.detail,
            big.change,
            if rest.is_empty() { String::new() } else { format!(" (then: {})", rest.join(", ")) }
        ))
    }
}

/// `1.5 GB`-style (powers of 1000, as the scenario's sizes).
pub fn fmt_bytes(b: u64) -> String {
    let units = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)];
    for (u, s) in units {
        if b as f64 >= s {
            return format!("{:.1} {u}", b as f64 / s);
        }
    }
    format!("{b} B")
}

/// Thousands separated by commas.
fn n(x: u64) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What to change to shrink the network, by topology kind.
fn topology_fields(spec: &TopologySpec) -> &'static str {
    match spec {
        TopologySpec::Star { .. } => "topology.hosts",
        TopologySpec::Dumbbell { .. } => "topology.left and topology.right",
        TopologySpec::LeafSpine(_) => "topology.tors, topology.hosts_per_tor or topology.spines",
        TopologySpec::FatTree(_) => "topology.k or topology.hosts_per_edge",
        TopologySpec::MultiDc(_) => "topology.dc (tors, hosts_per_tor, spines)",
        TopologySpec::Hpcc { .. } => "topology.file (a smaller network)",
        TopologySpec::Explicit(_) => "topology.nodes and topology.links",
    }
}

/// What a workload is expected to start: how many flows, over which window, of what mean size,
/// and the largest group starting together (an incast burst).
#[derive(Clone, Copy, Debug, Default)]
struct Traffic {
    flows: f64,
    first: Time,
    last: Time,
    mean_size: f64,
    burst_flows: f64,
}

/// Lists count their flows; generators by formula (their expected count). Zeros where the
/// workload cannot be read: the build reports that.
fn expected_traffic(w: &WorkloadSpec, shape: &Shape) -> Traffic {
    let basis = |b: &crate::scenario::Background| match b.load_on {
        // with a destination, the load is that of its one link
        LoadOn::HostLinks => LoadBasis::HostLinks { hosts: if b.dst.is_some() { 1 } else { shape.hosts as usize }, host_rate: Rate(shape.host_rate) },
        LoadOn::CoreLinks => LoadBasis::Capacity { bps: shape.core_bps },
    };
    let bg = |b: &crate::scenario::Background| -> Option<(f64, f64)> {
        let cdf = Cdf::parse(&b.cdf).ok()?;
        let gap = mean_gap_ps(b.load, &basis(b), cdf.mean()).ok()?;
        Some((b.duration.0 as f64 / gap, cdf.mean()))
    };
    // (bursts, first burst, last burst)
    let incast = |i: &IncastSpec, start: Time, limit: Limit| -> (f64, Time, Time) {
        use crate::workload::incast::IncastTiming::Once;
        let period = i.mean_period(shape.hosts as usize).ok().flatten();
        match (i.timing, limit, period) {
            (Once(at), _, _) => (1.0, at, at),
            (_, Limit::Count(b), Some(p)) => (b as f64, start, Time(start.0.saturating_add(p.0.saturating_mul(b.saturating_sub(1) as u64)))),
            (_, Limit::Count(b), None) => (b as f64, start, start),
            (_, Limit::Duration(d), Some(p)) => ((d.0 as f64 / p.0.max(1) as f64).ceil().max(1.0), start, start + d),
            (_, Limit::Duration(d), None) => (1.0, start, start + d),
        }
    };
    let list = |v: &mut dyn Iterator<Item = (Time, u64)>| -> Traffic {
        let mut starts = std::collections::HashMap::new();
        let (mut t, mut bytes) = (Traffic { first: Time::MAX, ..Default::default() }, 0f64);
        for (start, size) in v {
            t.flows += 1.0;
            bytes += size as f64;
            t.first = t.first.min(start);
            t.last = t.last.max(start);
            *starts.entry(start).or_insert(0u64) += 1;
        }
        t.first = t.first.min(t.last);
        t.mean_size = bytes / t.flows.max(1.0);
        t.burst_flows = starts.values().copied().max().unwrap_or(0) as f64;
        t
    };
    match w {
        WorkloadSpec::Flows { flows } => list(&mut flows.iter().map(|f| (Time::from_ns(f.start_ns), f.size))),
        WorkloadSpec::HpccFlows { text, time_offset, .. } => match crate::workload::flow_file::parse_hpcc_flows(text) {
            Ok(v) => list(&mut v.iter().map(|f| (Time(f.start.0.saturating_sub(time_offset.0)), f.size))),
            Err(_) => Traffic::default(),
        },
        WorkloadSpec::Background(b) => {
            let (flows, mean_size) = bg(b).unwrap_or((0.0, 0.0));
            Traffic { flows, first: b.start, last: b.start + b.duration, mean_size, burst_flows: 1.0 }
        }
        WorkloadSpec::Incast { incast: i, start, limit } => {
            let (bursts, first, last) = incast(i, *start, *limit);
            let d = i.degree as f64;
            Traffic { flows: bursts * d, first, last, mean_size: i.mean_flow_size(), burst_flows: d }
        }
        WorkloadSpec::IncastMix { background: b, incast: i } => {
            let (count, mean) = bg(b).unwrap_or((0.0, 0.0));
            let i = &i.beside_background(b.load * basis(b).capacity_bps(), shape.hosts as usize);
            let (bursts, _, _) = incast(i, b.start, Limit::Duration(b.duration));
            let d = i.degree as f64;
            let flows = count + bursts * d;
            let mean_size = if flows > 0.0 { (count * mean + bursts * d * i.mean_flow_size()) / flows } else { 0.0 };
            Traffic { flows, first: b.start, last: b.start + b.duration, mean_size, burst_flows: d }
        }
        WorkloadSpec::DcMix { background: b, long_flows } => {
            // the two datacenters' backgrounds offer `load` of the basis together
            let (count, mean_size) = bg(b).unwrap_or((0.0, 0.0));
            let long = 2.0 * *long_flows as f64;
            Traffic { flows: count + long, first: b.start, last: b.start + b.duration, mean_size, burst_flows: long.max(1.0) }
        }
        WorkloadSpec::LongLived { pairs, size, start } => {
            let n = pairs.len() as f64;
            Traffic { flows: n, first: *start, last: *start, mean_size: *size as f64, burst_flows: n }
        }
    }
}

impl Scenario {
    /// `Err` naming the largest part and the field to change when the estimate exceeds `limit`
    /// bytes (`limit_note`: where the limit comes from). A scenario that cannot be estimated
    /// passes: building it reports what is wrong with it better.
    pub fn check_memory(&self, limit: u64, limit_note: &str) -> Result<(), String> {
        self.check_memory_spilled(limit, limit_note, None)
    }

    /// `check_memory` for a run whose time-growing tables leave it every `spill` rows.
    /// `estimate_spilled` for a run on `threads` threads (`crate::engine`): each partition the
    /// run makes (`engine::parts_for`: fewer than the threads where the network has fewer
    /// units, one where the run cannot be split) holds a whole copy of the network, so every
    /// part counts once a partition made, but what leaves for the sink: the time-growing
    /// tables of all partitions together take a chunk, and with a sink a partition holds the
    /// flows in flight (their fixed data, and the state of the halves it runs: `engine::release`),
    /// not every flow of the run; without one it keeps every flow's fixed data and results.
    pub fn estimate_threads(&self, spill: Option<usize>, threads: usize) -> Result<Estimate, String> {
        let parts = if threads <= 1 {
            1
        } else {
            let (topo, file_loss) = self.topology.build_with_loss()?;
            let mut net = self.net.clone();
            net.faults.file_loss = file_loss;
            crate::engine::parts_for(&topo, &net, threads)
        };
        if parts <= 1 {
            return self.estimate_spilled(spill);
        }
        // each partition holds a copy of the network; the time-growing tables of all partitions
        // together go to the sink in chunks (`engine::parallel`), so with one they take a
        // chunk, as on one thread; the flows in flight are held once in each partition at most
        let spilled = self.estimate_spilled(spill)?;
        let mut e = self.estimate_spilled(None)?;
        for p in &mut e.parts {
            match spilled.parts.iter().find(|q| q.name == p.name).filter(|_| spill.is_some()) {
                Some(q) if GROWING.contains(&p.name) => {
                    *p = q.clone();
                    p.detail = format!("{}, over all {parts} partitions", p.detail);
                }
                Some(q) if p.name == "flows" => {
                    *p = q.clone();
                    p.bytes = p.bytes.saturating_mul(parts as u64);
                    p.detail = format!("{}, held once in each of {parts} partitions at most", p.detail);
                }
                _ => {
                    p.bytes = p.bytes.saturating_mul(parts as u64);
                    p.detail = format!("{}, once in each of {parts} partitions", p.detail);
                }
            }
        }
        e.disk = spilled.disk;
        e.parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        Ok(e)
    }

    /// `check_memory_spilled` for a run on `threads` threads (`estimate_threads`).
    pub fn check_memory_threads(&self, limit: u64, limit_note: &str, spill: Option<usize>, threads: usize) -> Result<(), String> {
        match self.estimate_threads(spill, threads) {
            Ok(e) => e.check(limit, limit_note),
            Err(_) => Ok(()),
        }
    }

    pub fn check_memory_spilled(&self, limit: u64, limit_note: &str, spill: Option<usize>) -> Result<(), String> {
        match self.estimate_spilled(spill) {
            Ok(e) => e.check(limit, limit_note),
            Err(_) => Ok(()),
        }
    }

    /// The memory this scenario's run needs, estimated without building it (see the module doc).
    pub fn estimate(&self) -> Result<Estimate, String> {
        self.estimate_spilled(None)
    }

    /// `estimate` for a run whose time-growing tables (buffer and queue samples) are handed to a
    /// sink every `spill` rows (`progress::Sink`): in memory they take at most about that many
    /// rows, and the rest is counted in `Estimate::disk` instead.
    pub fn estimate_spilled(&self, spill: Option<usize>) -> Result<Estimate, String> {
        let shape = Shape::of_spec(&self.topology)?;
        let cfg = &self.net;
        let s = &shape;
        let traffic = expected_traffic(&self.workload, s);
        let mean_size = traffic.mean_size;
        let flows = traffic.flows.min(u64::MAX as f64 / 2.0) as u64;
        // a flow's time at line rate; a burst's at the one host link it converges on
        let tx = |bytes: f64| if s.host_rate > 0 { Rate(s.host_rate).tx_time(bytes.min(u64::MAX as f64 / 2.0) as u64) } else { Time::ZERO };
        let topo_fields = topology_fields(&self.topology);
        let workload_fields = match &self.workload {
            WorkloadSpec::Flows { .. } => "workload.flows (fewer flows)",
            WorkloadSpec::HpccFlows { .. } => "workload.file (fewer flows)",
            WorkloadSpec::Background(_) | WorkloadSpec::IncastMix { .. } | WorkloadSpec::DcMix { .. } => {
                "workload.load, workload.duration, or a CDF of larger flows"
            }
            WorkloadSpec::Incast { .. } => "workload.bursts or workload.duration, or workload.incast.degree",
            WorkloadSpec::LongLived { .. } => "workload.pairs",
        };

        // the network: ports with their queues and gates, switches, hosts, the build's port lists
        let nq = cfg.switch.nqueues as u64;
        let nic_gates = cfg.fc.nic_gates(cfg.host.nic_queues).max(1) as u64;
        let upq = nq.max(nic_gates);
        let port = (size_of::<Port>() + size_of::<PortCold>()) as u64 + PORT_HEAP;
        let host_ports = (2 * s.links).saturating_sub(s.switch_ports);
        let ports_bytes = (2 * s.links).saturating_mul(port)
            + host_ports.saturating_mul(nic_gates * GATE)
            + s.switch_ports.saturating_mul(nq * (QUEUE + GATE));
        let switch_bytes = s.switches.saturating_mul(size_of::<Switch>() as u64)
            + s.switch_ports.saturating_mul(SWITCH_PORT + cfg.fc.bytes_per_port(nq, upq));
        // one `Host` per NIC: per host port (one per host unless hosts are multi-homed)
        let host_bytes = host_ports.max(s.hosts).saturating_mul(size_of::<Host>() as u64 + HOST_HEAP);
        let topo_bytes = s.nodes.saturating_mul(2 + 24 + 16 + 8) + s.links.saturating_mul(24 + 2 * 4);
        let network = ports_bytes.saturating_add(switch_bytes).saturating_add(host_bytes).saturating_add(topo_bytes);
        let ports_table = (2 * s.links).saturating_mul(PORT_ROW * TABLE_FACTOR);

        // routing: columns only for the flows' ends (at most two per flow)
        let cols = s.route_cols.min(flows.saturating_mul(2));
        let route_table = cols.saturating_mul(s.route_rows).saturating_mul(8);
        let route_index = s.nodes.saturating_mul(8) + s.hosts.saturating_mul(20) + (2 * s.links).saturating_mul(4);
        // while building: the adjacency and its copy without single-homed hosts
        let route_build = s.nodes.saturating_mul(48) + (2 * s.links).saturating_mul(16);
        let routes = route_table.saturating_add(route_index).saturating_add(route_build);

        // packets alive: at most what the switch buffers hold, and at most every flow's window
        // at once (a window of one BDP taken at a typical fabric RTT)
        let pkt = (cfg.host.mtu + cfg.host.header_bytes).max(64) as u64;
        let buffered = s.switches.saturating_mul(cfg.switch.buffer_bytes) / pkt;
        let window = match cfg.host.window {
            crate::params::WindowConfig::Bytes(b) => b as f64,
            crate::params::WindowConfig::Bdp => Rate(s.host_rate).bytes_in(TYPICAL_RTT) as f64,
            crate::params::WindowConfig::Off => mean_size,
        };
        // flows in flight at once: a burst, or (Little's law) the arrival rate times a flow's
        // time at line rate, SLOWDOWN times over
        let span = traffic.last.0.saturating_sub(traffic.first.0) as f64;
        let concurrent = if span > 0.0 {
            (traffic.flows * SLOWDOWN * tx(mean_size).0 as f64 / span).max(traffic.burst_flows).min(traffic.flows)
        } else {
            traffic.flows
        };
        let sent = (concurrent * window.min(mean_size).max(1.0) / pkt as f64).ceil().min(u64::MAX as f64 / 2.0) as u64;

        // every flow's fixed data, results and row in the flows table; the live state (congestion
        // control, sequence state, timers) only of the flows in flight at once. Spilled, the
        // results and rows are not kept: the rows leave a chunk at a time, to disk
        let live_flows = (concurrent.ceil().min(u64::MAX as f64 / 2.0) as u64).min(flows);
        let kept_per_flow = match spill {
            Some(_) => FLOW_KEPT_SPILLED,
            None => FLOW_KEPT + FLOW_ROW * TABLE_FACTOR,
        };
        let flow_rows_held = spill.map_or(0, |chunk| (chunk as u64).min(flows).saturating_mul(FLOW_ROW * (TABLE_FACTOR + 1)));
        // flows made as they arrive (a spilled run that streams): fixed data for the flows in
        // flight and a few chunks, whatever the workload's length
        let chunk = crate::net::flow_store::FlowStore::chunk_flows() as u64;
        let kept_flows = match spill {
            Some(_) if crate::assemble::streams(cfg) => flows.min(live_flows.saturating_add(STREAMED_CHUNKS * chunk).div_ceil(chunk) * chunk),
            _ => flows,
        };
        let flow_bytes = kept_flows
            .saturating_mul(kept_per_flow)
            .saturating_add(flow_rows_held)
            .saturating_add(live_flows.saturating_mul(size_of::<Flow>() as u64 + FLOW_HEAP));
        let alive = buffered.min(sent.max(1));
        let packets = alive.saturating_mul(PACKET);

        // samples over the run: its duration, else (a lower bound) the last start plus one mean
        // flow at line rate
        let tail = tx(mean_size * traffic.burst_flows.max(1.0));
        let run_time = cfg.stop_time.unwrap_or(Time(traffic.last.0.saturating_add(tail.0)));
        // the sampler sleeps through an idle network after IDLE_SAMPLES samples (sim::sample),
        // so the stretch before the first flow starts costs at most that many (an incast at
        // 1e7 s is a short run); later idle stretches are counted in full (an upper bound)
        let steps = |iv: Time| {
            let iv = iv.0.max(1);
            let lead = traffic.first.0.min(run_time.0);
            (lead / iv).min(crate::sim::sample::IDLE_SAMPLES).saturating_add((run_time.0 - lead) / iv).saturating_add(1)
        };
        let rec = &cfg.record;
        // (rows, bytes) of each time-growing table over the run
        let buffer_rows = rec.buffer_interval.map_or(0, |iv| steps(iv).saturating_mul(s.switches + s.switch_ports));
        let buffer_bytes = rec.buffer_interval.map_or(0, |iv| steps(iv).saturating_mul(s.switches * SWITCH_SAMPLE + s.switch_ports * PORT_SAMPLE));
        let queue_rows = steps(rec.queue_interval).saturating_mul(rec.queue_ports.len() as u64);
        let queue_bytes = queue_rows.saturating_mul(QUEUE_SAMPLE);
        // spilled, a table holds at most a chunk (plus one sample's rows) at a time, and the
        // chunk is copied once into Python; the rest goes to disk
        let held = |rows: u64, bytes: u64, per_sample: u64| -> u64 {
            match spill {
                Some(chunk) if rows > 0 => {
                    let kept = rows.min(chunk as u64 + per_sample);
                    (bytes / rows).saturating_mul(kept).saturating_mul(TABLE_FACTOR + 1)
                }
                _ => bytes.saturating_mul(TABLE_FACTOR),
            }
        };
        let buffer_samples = held(buffer_rows, buffer_bytes, s.switches + s.switch_ports);
        let queue_samples = held(queue_rows, queue_bytes, rec.queue_ports.len() as u64);
        let disk = if spill.is_some() { buffer_bytes.saturating_add(queue_bytes).saturating_add(flows.saturating_mul(FLOW_ROW)) } else { 0 };
        let on_disk = |bytes: u64| if spill.is_some() { format!("; {} to disk", fmt_bytes(bytes)) } else { String::new() };
        // the pause and control-frame logs: a chunk of them when spilled (taken at the checkpoint
        // after they reach it, so up to `CHECK_EVERY` events' rows more); unbounded otherwise
        let logs = spill.map_or(0, |chunk| (chunk as u64 + crate::progress::CHECK_EVERY).saturating_mul(LOG_ROW * (TABLE_FACTOR + 1)));
        let qlen = rec.qlen_monitor.as_ref().map_or(0, |q| {
            let end = q.end.map_or(run_time, |e| e.min(run_time));
            let dumps = (end.0.saturating_sub(q.start.0) / q.dump_interval.0.max(1)).saturating_add(1);
            dumps.saturating_mul(s.switch_ports).saturating_mul(2 * QLEN_ROW).saturating_mul(TABLE_FACTOR) + s.switch_ports * 64
        });

        let mut parts = vec![
            Part {
                name: "network",
                bytes: network.saturating_add(ports_table),
                detail: format!(
                    "{} hosts, {} {}, {} ports with {nq} queues per switch port and {nic_gates} per NIC",
                    n(s.hosts),
                    n(s.switches),
                    if s.switches == 1 { "switch" } else { "switches" },
                    n(2 * s.links)
                ),
                change: format!("make the network smaller ({topo_fields}) or give its ports fewer queues (queues.count, transport.nic_queues)"),
            },
            Part {
                name: "routing tables",
                bytes: routes,
                detail: format!("{} destination columns x {} rows", n(cols), n(s.route_rows)),
                change: format!("make the network smaller ({topo_fields}) or send to fewer ToRs"),
            },
            Part {
                name: "flows",
                bytes: flow_bytes,
                detail: format!("about {} flows, about {} of them in flight at once{}", n(flows), n(live_flows), on_disk(flows.saturating_mul(FLOW_ROW))),
                change: format!("start fewer flows ({workload_fields})"),
            },
            Part {
                name: "packets",
                bytes: packets,
                detail: format!(
                    "at most {} packets: the fewer of {} that {} switch buffer(s) of {} bytes hold and {} in the windows of about {:.0} flows at once",
                    n(alive),
                    n(buffered),
                    n(s.switches),
                    n(cfg.switch.buffer_bytes),
                    n(sent),
                    concurrent
                ),
                change: "make the buffers smaller (buffer.size) or the windows (transport.window)".into(),
            },
            Part {
                name: "buffer samples",
                bytes: buffer_samples,
                detail: format!(
                    "{} samples of {} switch ports over {}{}",
                    n(rec.buffer_interval.map_or(0, steps)),
                    n(s.switch_ports),
                    run_time,
                    on_disk(buffer_bytes)
                ),
                change: "sample less often (record.buffer_interval, or leave it out) or stop sooner (duration)".into(),
            },
            Part {
                name: "queue samples",
                bytes: queue_samples,
                detail: format!("{} samples of {} ports over {}{}", n(steps(rec.queue_interval)), rec.queue_ports.len(), run_time, on_disk(queue_bytes)),
                change: "sample less often (record.queue_interval) or fewer ports (record.queue_ports)".into(),
            },
            Part {
                name: "pause and control logs",
                bytes: logs,
                detail: "a chunk of the pause and control frames sent and received; the rest to disk as they come".into(),
                change: "spool fewer rows at a time".into(),
            },
            Part {
                name: "queue-length histograms",
                bytes: qlen,
                detail: format!("{} switch ports per dump", n(s.switch_ports)),
                change: "dump less often (record.qlen_monitor.dump_interval) or stop sooner (record.qlen_monitor.end)".into(),
            },
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        Ok(Estimate { parts, shape, flows, run_time, disk })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::{FatTree, LeafSpine, MultiDc, NodeKind};

    #[test]
    fn shape_formulas_match_built_topologies() {
        let (g, us) = (Rate::gbps(100), Time::from_us(1));
        let specs = [
            TopologySpec::Star { hosts: 7, rate: g, delay: us },
            TopologySpec::Dumbbell { left: 3, right: 2, host_rate: g, bottleneck_rate: Rate::gbps(40), delay: us },
            TopologySpec::LeafSpine(LeafSpine { links_per_spine: 2, ..LeafSpine::bfc_nsdi22() }),
            TopologySpec::FatTree(FatTree::new(6, g, Rate::gbps(400), us).unwrap().with_hosts_per_edge(5)),
            TopologySpec::MultiDc(MultiDc::default()),
        ];
        for spec in &specs {
            let want = Shape::of(&spec.build().unwrap());
            assert_eq!(Shape::of_spec(spec).unwrap(), want, "{spec:?}");
        }
        // every node kind is a NodeKind
        assert_eq!(size_of::<NodeKind>(), 2);
    }

    fn incast(degree: usize) -> WorkloadSpec {
        use crate::workload::incast::{IncastSize, IncastTiming};
        let mut i = IncastSpec::new(degree, IncastSize::PerFlowRange { min: 100_000, max: 100_000 }, IncastTiming::Once(Time::from_us(1)));
        i.dst = Some(0);
        WorkloadSpec::Incast { incast: i, start: Time::ZERO, limit: Limit::Count(1) }
    }

    fn scenario(topology: TopologySpec, workload: WorkloadSpec) -> Scenario {
        Scenario { topology, workload, net: crate::config::NetConfig::default() }
    }

    fn fat_tree(k: usize) -> Scenario {
        let g = Rate::gbps(100);
        scenario(TopologySpec::FatTree(FatTree::new(k, g, g, Time::from_us(1)).unwrap()), incast(16))
    }

    fn star(hosts: usize) -> Scenario {
        scenario(TopologySpec::Star { hosts, rate: Rate::gbps(100), delay: Time::from_us(1) }, incast(4))
    }

    fn part<'a>(e: &'a Estimate, name: &str) -> &'a Part {
        e.parts.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no part {name}"))
    }

    #[test]
    fn parts_come_largest_first_and_add_up() {
        let e = fat_tree(16).estimate().unwrap();
        assert!(e.parts.windows(2).all(|w| w[0].bytes >= w[1].bytes));
        assert_eq!(e.total(), e.parts.iter().map(|p| p.bytes).sum::<u64>());
        let names: Vec<_> = e.parts.iter().map(|p| p.name).collect();
        for want in ["network", "routing tables", "flows", "packets", "buffer samples", "queue samples", "queue-length histograms"] {
            assert!(names.contains(&want), "{names:?}");
        }
        assert_eq!((e.flows, e.shape.hosts, e.shape.switches), (16, 1024, 320));
    }

    #[test]
    fn the_network_part_grows_with_the_ports() {
        let (a, b) = (star(10_000).estimate().unwrap(), star(20_000).estimate().unwrap());
        let ratio = part(&b, "network").bytes as f64 / part(&a, "network").bytes as f64;
        assert!((1.95..2.05).contains(&ratio), "{ratio}");
        // a k=128 fat-tree has 8 times the hosts and ports of a k=64 one
        let (a, b) = (fat_tree(64).estimate().unwrap(), fat_tree(128).estimate().unwrap());
        let ratio = part(&b, "network").bytes as f64 / part(&a, "network").bytes as f64;
        assert!((7.5..8.5).contains(&ratio), "{ratio}");
        // more queues per port cost more
        let mut q = fat_tree(16);
        q.net.switch.nqueues = 32;
        assert!(part(&q.estimate().unwrap(), "network").bytes > part(&fat_tree(16).estimate().unwrap(), "network").bytes);
    }

    #[test]
    fn routing_columns_are_only_those_of_the_flows_ends() {
        let e = fat_tree(64).estimate().unwrap();
        let r = part(&e, "routing tables");
        assert!(r.detail.starts_with("32 destination columns x 5,120 rows"), "{}", r.detail);
        assert_eq!((e.shape.route_cols, e.shape.route_rows), (2048, 5120));
    }

    #[test]
    fn a_large_fat_tree_is_refused_naming_the_network_and_its_field() {
        let e = fat_tree(128).estimate().unwrap();
        assert!(e.total() > 4_000_000_000, "{}", e.total());
        let msg = e.check(4_000_000_000, "--max-memory").unwrap_err();
        assert!(msg.starts_with("memory: this run needs about"), "{msg}");
        assert!(msg.contains("the limit is 4.0 GB (--max-memory)"), "{msg}");
        assert!(msg.contains("the largest part is network") && msg.contains("topology.k"), "{msg}");
        assert!(e.check(e.total(), "x").is_ok());
        assert!(fat_tree(128).check_memory(u64::MAX, "x").is_ok());
    }

    #[test]
    fn sampling_every_picosecond_is_refused_naming_the_interval() {
        let mut sc = star(8);
        sc.net.record.buffer_interval = Some(Time(1));
        sc.net.stop_time = Some(Time::from_ms(10));
        let e = sc.estimate().unwrap();
        assert_eq!(e.parts[0].name, "buffer samples");
        assert!(e.parts[0].bytes > 1_000_000_000_000, "{}", e.parts[0].bytes);
        let msg = sc.check_memory(64_000_000_000, "the memory available").unwrap_err();
        assert!(msg.contains("record.buffer_interval"), "{msg}");
        // samples are counted over the duration, else up to the last flow's start plus its burst
        sc.net.stop_time = None;
        sc.net.record.buffer_interval = Some(Time::from_us(1));
        let e = sc.estimate().unwrap();
        // 4 x 100 KB into one 100 Gb/s link from 1 us: 32 us more
        assert_eq!(e.run_time, Time::from_us(33));
    }

    #[test]
    fn spilled_samples_take_a_chunk_of_memory_and_the_rest_of_the_disk() {
        let mut sc = star(1000);
        sc.net.record.buffer_interval = Some(Time::from_ns(100));
        sc.net.stop_time = Some(Time::from_ms(10));
        let kept = sc.estimate().unwrap();
        let spilled = sc.estimate_spilled(Some(1 << 16)).unwrap();
        let (a, b) = (part(&kept, "buffer samples"), part(&spilled, "buffer samples"));
        // 100,001 samples of 1,001 rows, about 32 bytes each
        assert!(a.bytes > 6_000_000_000 && b.bytes < 10_000_000, "{} {}", a.bytes, b.bytes);
        assert_eq!(kept.disk, 0);
        assert!((3_000_000_000..3_300_000_000).contains(&spilled.disk), "{}", spilled.disk);
        assert!(b.detail.ends_with("GB to disk"), "{}", b.detail);
        assert!(sc.check_memory_spilled(1_000_000_000, "x", Some(1 << 16)).is_ok());
        assert!(sc.check_memory(1_000_000_000, "x").unwrap_err().contains("buffer samples"));
    }

    /// 1000-byte flows at `load` of 10 hosts' 100 Gb/s links for `us` microseconds, estimated.
    fn background_star(load: f64, us: u64) -> Estimate {
        background_star_spilled(load, us, None)
    }

    /// `background_star` for a run that spills every `spill` rows.
    fn background_star_spilled(load: f64, us: u64, spill: Option<usize>) -> Estimate {
        background_star_with(load, us, spill, crate::config::NetConfig::default())
    }

    fn background_star_with(load: f64, us: u64, spill: Option<usize>, net: crate::config::NetConfig) -> Estimate {
        let b = crate::scenario::Background {
            cdf: "1000 0\n1000 1\n".to_string(),
            load,
            load_on: LoadOn::HostLinks,
            arrival: crate::workload::arrivals::Arrival::Poisson,
            start: Time::ZERO,
            duration: Time::from_us(us),
            prio: 3,
            dst: None,
            rack_size: 0,
        };
        let topology = TopologySpec::Star { hosts: 10, rate: Rate::gbps(100), delay: Time::from_us(1) };
        Scenario { topology, workload: WorkloadSpec::Background(b), net }.estimate_spilled(spill).unwrap()
    }

    #[test]
    fn expected_flows_follow_the_load_and_the_window() {
        let flows = |load, us| background_star(load, us).flows;
        // 10 hosts x 100 Gb/s x 50% over 100 us = 6.25 MB, in 1000-byte flows
        assert_eq!(flows(0.5, 100), 6_250);
        assert_eq!(flows(0.25, 100), 3_125);
        assert_eq!(flows(0.5, 200), 12_500);
    }

    #[test]
    fn spilled_flows_keep_their_fixed_part_and_send_their_rows_to_disk() {
        // a run with a sink keeps no results and no rows of its flows: each added flow costs its
        // fixed part in memory (nothing where flows are made as they arrive: a few chunks of
        // them are held whatever the length) and its row on disk
        let spill = Some(1000);
        let mut faults = crate::config::NetConfig::default();
        faults.faults.loss_rate = 1e-6;
        let listed = |us| background_star_with(0.5, us, spill, faults.clone());
        let (short, long) = (listed(100), listed(1000));
        let added = long.flows - short.flows;
        let per_flow = (part(&long, "flows").bytes - part(&short, "flows").bytes) / added;
        assert_eq!(per_flow, size_of::<FlowFixed>() as u64 + 12);
        let (short, long) = (background_star_spilled(0.5, 100, spill), background_star_spilled(0.5, 1000, spill));
        assert_eq!(part(&long, "flows").bytes, part(&short, "flows").bytes, "streamed: memory does not grow with the flows");
        assert!(part(&long, "flows").bytes < 4 * 1024 * per_flow + 1_000_000, "{}", part(&long, "flows").bytes);
        assert_eq!((long.disk - short.disk) / added, FLOW_ROW);
        assert!(part(&long, "flows").detail.ends_with("to disk"), "{}", part(&long, "flows").detail);
        // the rows of a chunk are held, at most
        let (unspilled, spilled) = (background_star(0.5, 1000), long);
        assert!(part(&spilled, "flows").bytes < part(&unspilled, "flows").bytes);
        eprintln!("bytes kept per flow: {per_flow} spilled, {} not", FLOW_KEPT + FLOW_ROW * TABLE_FACTOR);
    }

    #[test]
    fn live_flow_state_is_counted_for_the_flows_in_flight_only() {
        // the same load over ten times as long: ten times the flows, the same flows in flight,
        // so each added flow costs its fixed part, results and table row, not a live state
        let (short, long) = (background_star(0.5, 100), background_star(0.5, 1000));
        let added = long.flows - short.flows;
        let per_flow = (part(&long, "flows").bytes - part(&short, "flows").bytes) / added;
        assert_eq!(per_flow, FLOW_KEPT + FLOW_ROW * TABLE_FACTOR);
        assert!(per_flow < size_of::<Flow>() as u64, "{per_flow} bytes per flow");
        assert!(part(&long, "flows").detail.contains("in flight at once"), "{}", part(&long, "flows").detail);
    }
}
