//! A whole run as one serde value: topology, workload and network settings. This is the only
//! thing the Python front hands to the core (as JSON), so everything a scenario file can say is
//! here, typed; file contents (CDFs, HPCC topology and flow files) arrive as text, because the
//! models never touch the file system.

use crate::Simulation;
use crate::config::NetConfig;
use crate::stats::RunStats;
use crate::time::{Rate, Time};
use crate::topo::hpcc_file::{read_hpcc_file, read_hpcc_topology};
use crate::topo::{dumbbell, star, FatTree, LeafSpine, MultiDc, NodeKind, Topology};
use crate::workload::FlowSpec;
use crate::workload::arrivals::{Arrival, LoadBasis, Limit};
use crate::workload::background::BackgroundSpec;
use crate::workload::cdf::Cdf;
use crate::workload::explicit::{explicit_flows, ExplicitFlow};
use crate::workload::flow_file::{parse_hpcc_flows, read_hpcc_flows};
use crate::workload::incast::{incast_flows, IncastSpec};
use crate::workload::mix::long_lived;
use crate::workload::stream::{FlowStream, Parts};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologySpec {
    Star { hosts: usize, rate: Rate, delay: Time },
    Dumbbell { left: usize, right: usize, host_rate: Rate, bottleneck_rate: Rate, delay: Time },
    LeafSpine(LeafSpine),
    FatTree(FatTree),
    MultiDc(MultiDc),
    /// The HPCC ns-3 simulator's topology file, as text.
    Hpcc { text: String },
    Explicit(Topology),
}

impl TopologySpec {
    pub fn build(&self) -> Result<Topology, String> {
        self.build_with_loss().map(|(t, _)| t)
    }

    /// `build`, and the links an HPCC topology file gives a non-zero error rate, as loss rates
    /// (`HpccFile::loss`; empty for every other kind).
    pub fn build_with_loss(&self) -> Result<(Topology, Vec<crate::params::LinkLoss>), String> {
        self.check_size()?;
        let mut loss = vec![];
        let t = match self {
            TopologySpec::Star { hosts, rate, delay } => star(*hosts, *rate, *delay),
            TopologySpec::Dumbbell { left, right, host_rate, bottleneck_rate, delay } => dumbbell(*left, *right, *host_rate, *bottleneck_rate, *delay),
            TopologySpec::LeafSpine(l) => l.build(),
            TopologySpec::FatTree(f) => f.build()?,
            TopologySpec::MultiDc(m) => m.build(),
            // "topology.file": the front puts the file's name in its place
            TopologySpec::Hpcc { text } => {
                let f = read_hpcc_file(text).map_err(|e| format!("topology.file: {e}"))?;
                loss = f.loss.iter().map(|&(a, b, rate)| crate::params::LinkLoss { link: (a, b), rate }).collect();
                f.topo
            }
            TopologySpec::Explicit(t) => t.clone(),
        };
        t.validate().map_err(|e| format!("topology: {e}"))?;
        Ok((t, loss))
    }
}

/// Node and link counts of a leaf-spine (`None` on overflow).
fn leaf_spine_size(l: &LeafSpine) -> Option<(u64, u64)> {
    let hosts = (l.hosts_per_tor as u64).checked_mul(l.tors as u64)?;
    let nodes = hosts.checked_add(l.tors as u64)?.checked_add(l.spines as u64)?;
    let fabric = (l.tors as u64).checked_mul(l.spines as u64)?.checked_mul(l.links_per_spine as u64)?;
    Some((nodes, hosts.checked_add(fabric)?))
}

impl TopologySpec {
    /// Refuse a network whose node or link count is beyond what a run can number (ports and
    /// nodes are 32-bit, events carry 29-bit port ids), before building it: a count such as
    /// `hosts = 4294967295` would otherwise take all memory (or wrap) first.
    fn check_size(&self) -> Result<(), String> {
        let size = match self {
            TopologySpec::Star { hosts, .. } => Some(((*hosts as u64).saturating_add(1), *hosts as u64)),
            TopologySpec::Dumbbell { left, right, .. } => {
                let h = (*left as u64).checked_add(*right as u64);
                h.map(|h| (h.saturating_add(2), h.saturating_add(1)))
            }
            TopologySpec::LeafSpine(l) => leaf_spine_size(l),
            TopologySpec::FatTree(f) => (|| {
                let (k, h) = (f.k as u64, (f.k / 2) as u64);
                let hosts = k.checked_mul(h)?.checked_mul(f.hosts_per_edge as u64)?;
                let switches = k.checked_mul(h)?.checked_mul(2)?.checked_add(h.checked_mul(h)?)?;
                let fabric = k.checked_mul(h)?.checked_mul(h)?.checked_mul(2)?;
                Some((hosts.checked_add(switches)?, hosts.checked_add(fabric)?))
            })(),
            TopologySpec::MultiDc(m) => leaf_spine_size(&m.dc).and_then(|(n, l)| {
                let gw = (m.dc.spines as u64).checked_mul(2)?;
                Some((n.checked_mul(2)?.checked_add(2)?, l.checked_mul(2)?.checked_add(gw)?.checked_add(1)?))
            }),
            TopologySpec::Hpcc { .. } | TopologySpec::Explicit(_) => return Ok(()),
        };
        let max_links = 1u64 << (crate::ids::ID_BITS - 1);
        match size {
            Some((nodes, links)) if links < max_links && nodes <= u32::MAX as u64 / 2 => Ok(()),
            Some((nodes, links)) => Err(format!(
                "topology: {nodes} nodes and {links} links are too many; a run holds fewer than {max_links} links"
            )),
            None => Err("topology: the node and link counts overflow; a run holds fewer than 2^28 links".to_string()),
        }
    }
}

/// What a load fraction refers to.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadOn {
    /// Every host link carries `load` of its rate on average (HPCC, Floodgate).
    HostLinks,
    /// The ToR uplinks together carry `load` of their capacity (BFC, FlowSail: "core links").
    CoreLinks,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Background {
    /// Flow-size CDF file contents (`size_bytes cdf` lines).
    pub cdf: String,
    pub load: f64,
    pub load_on: LoadOn,
    pub arrival: Arrival,
    pub start: Time,
    pub duration: Time,
    #[serde(default = "default_prio")]
    pub prio: u8,
    /// Every flow to this host, at `load` of its link (BFC Table 1's cross traffic on one link).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<u32>,
    /// Racks of this many consecutive hosts: both ends of a flow in different racks
    /// (`BackgroundSpec::rack_size`; 0 = any two hosts).
    #[serde(default, skip_serializing_if = "crate::workload::incast::is_zero")]
    pub rack_size: u32,
}

fn default_prio() -> u8 {
    crate::workload::DEFAULT_PRIO
}

/// How the flows of a flow file get their source ports, from 10000 in flow order.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SourcePorts {
    /// Per (source, destination) pair: the HPCC simulator's `third.cc` (`portNumder[src][dst]`).
    #[default]
    PerPair,
    /// Per source host, whatever the destination: Floodgate-NS3's `third.cc` (lines 3220-3224,
    /// 3261, 3358: `portNumder[src]++`).
    PerSourceHost,
}

impl SourcePorts {
    pub fn is_per_pair(&self) -> bool {
        *self == SourcePorts::PerPair
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadSpec {
    Flows { flows: Vec<ExplicitFlow> },
    /// The HPCC simulator's flow file, as text; `time_offset` is subtracted from its start times
    /// (its files start traffic at 2 s).
    HpccFlows {
        text: String,
        time_offset: Time,
        /// How the flows' source ports are numbered (they feed `routing.ecmp = "hpcc"`); left out
        /// of the JSON at its default, so scenarios that do not set it keep their hash.
        #[serde(default, skip_serializing_if = "SourcePorts::is_per_pair")]
        source_ports: SourcePorts,
    },
    Background(Background),
    Incast { incast: IncastSpec, start: Time, limit: Limit },
    /// Poisson (or lognormal) background with incast bursts over the same window.
    IncastMix { background: Background, incast: IncastSpec },
    LongLived { pairs: Vec<(u32, u32)>, size: u64, start: Time },
    /// BFC App. E.3 (Fig. 20) on a `multi_dc` topology: `background` flows inside each
    /// datacenter (both ends in one; each datacenter offers `load` of its own share of the basis)
    /// plus `long_flows` long-lived flows from each datacenter to the other, from the
    /// background's start ("20 long-lived inter-data center flows in both the directions").
    DcMix { background: Background, long_flows: u32 },
}

/// A whole scenario.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub topology: TopologySpec,
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub net: NetConfig,
}

/// The error of a `dc_mix` workload on another topology.
pub(crate) const DC_MIX_TOPOLOGY: &str = "workload.kind = \"dc_mix\" needs topology.kind = \"multi_dc\" (its flows stay inside each datacenter or cross between the two)";

/// `dc_mix`: the background inside each of `dcs` (one stream index per datacenter, so each
/// draws its own sizes, gaps and pairs) and `long_flows` long-lived flows each way (`dc_long_pairs`).
fn dc_mix(b: &Background, long_flows: u32, t: &Topology, dcs: &[Vec<u32>], seed: u64) -> Result<Parts, String> {
    if b.dst.is_some() {
        return Err("workload.dst: not with kind = \"dc_mix\" (its background stays inside each datacenter)".into());
    }
    let (spec, cdf) = b.spec(t, seed, 0)?;
    let mut parts = Parts::default();
    for (i, hosts) in dcs.iter().enumerate() {
        let basis = match spec.basis {
            LoadBasis::Capacity { bps } => LoadBasis::Capacity { bps: bps / dcs.len() as f64 },
            LoadBasis::HostLinks { host_rate, .. } => LoadBasis::HostLinks { hosts: hosts.len(), host_rate },
        };
        let dc = BackgroundSpec { hosts: hosts.clone(), basis, stream_index: i as u64, ..spec.clone() };
        parts.drawn(&dc, &cdf, vec![])?;
    }
    let pairs = parts.check(dc_long_pairs(long_flows, dcs, seed))?;
    let long = parts.check(long_lived(&pairs, crate::workload::mix::LONG_LIVED_SIZE, b.start, b.prio))?;
    parts.listed(long);
    Ok(parts)
}

/// `dc_mix`'s long-lived flows: `long_flows` each way, from distinct sources of the sending
/// datacenter to receivers drawn uniformly in the other (stream index 2 of `PAIRS`, which the
/// two backgrounds do not use).
pub(crate) fn dc_long_pairs(long_flows: u32, dcs: &[Vec<u32>], seed: u64) -> Result<Vec<(u32, u32)>, String> {
    let per_dc = dcs.iter().map(|d| d.len()).min().unwrap_or(0);
    if long_flows as usize > per_dc {
        return Err(format!("workload.long_flows: {long_flows} is more than the {per_dc} hosts of a datacenter; allowed: 0 to {per_dc}"));
    }
    let mut rng = crate::rng::Rng::stream(seed, crate::rng::stream::PAIRS, 2);
    let mut pairs = Vec::new();
    for (from, to) in [(0, 1), (1, 0)] {
        let mut srcs = dcs[from].clone();
        for k in 0..long_flows as usize {
            // a partial Fisher-Yates shuffle: distinct sources
            let j = k + rng.below((srcs.len() - k) as u64) as usize;
            srcs.swap(k, j);
            pairs.push((srcs[k], dcs[to][rng.below(dcs[to].len() as u64) as usize]));
        }
    }
    Ok(pairs)
}

/// Capacity of the links from tier-0 switches up into the fabric (one direction).
fn core_capacity(t: &Topology) -> Result<f64, String> {
    let tier = |n: u32| match t.nodes[n as usize] {
        NodeKind::Switch { tier } => Some(tier),
        NodeKind::Host => None,
    };
    let bps: u64 = t
        .links
        .iter()
        .filter(|l| matches!((tier(l.a), tier(l.b)), (Some(0), Some(x)) | (Some(x), Some(0)) if x > 0))
        .map(|l| l.rate.0)
        .sum();
    if bps == 0 {
        return Err("workload.load_on = \"core_links\" needs a topology with ToR uplinks (allowed here: \"host_links\")".into());
    }
    Ok(bps as f64)
}

impl Background {
    pub(crate) fn spec(&self, t: &Topology, seed: u64, stream_index: u64) -> Result<(BackgroundSpec, Cdf), String> {
        let cdf = Cdf::parse(&self.cdf).map_err(|e| format!("workload.cdf: {e}"))?;
        let hosts = t.host_ids();
        let basis = match (self.load_on, self.dst) {
            (LoadOn::HostLinks, Some(d)) => {
                // `load` of the link (or the NICs together) the flows converge on
                let rate = t.host_rate(d);
                LoadBasis::HostLinks { hosts: 1, host_rate: rate }
            }
            (LoadOn::CoreLinks, Some(_)) => {
                return Err("workload.dst: the flows' load is that of the destination's link; set workload.load_on = \"host_links\" (allowed with dst)".into())
            }
            (LoadOn::HostLinks, None) => {
                let Some(&h0) = hosts.first() else {
                    return Err("workload: the topology has no hosts to send or receive".to_string());
                };
                let rate = t.host_rate(h0);
                LoadBasis::HostLinks { hosts: hosts.len(), host_rate: rate }
            }
            (LoadOn::CoreLinks, None) => LoadBasis::Capacity { bps: core_capacity(t)? },
        };
        let spec = BackgroundSpec {
            hosts,
            arrival: self.arrival,
            basis,
            load: self.load,
            start: self.start,
            limit: Limit::Duration(self.duration),
            prio: self.prio,
            seed,
            stream_index,
            dst: self.dst,
            rack_size: self.rack_size,
        };
        Ok((spec, cdf))
    }
}

impl WorkloadSpec {
    /// The flows on topology `t` built from `spec` (which tells `dc_mix` the datacenters):
    /// `stream_on` collected, so the listed and the streamed run cannot differ.
    pub fn build_on(&self, spec: &TopologySpec, t: &Topology, seed: u64) -> Result<Vec<FlowSpec>, String> {
        self.stream_on(spec, t, seed)?.collect()
    }

    /// `build_on` without the topology's spec: every kind but `dc_mix`.
    pub fn build(&self, t: &Topology, seed: u64) -> Result<Vec<FlowSpec>, String> {
        self.stream(t, seed)?.collect()
    }

    /// `build_on`'s flows, in its order with its source ports, made one at a time: background
    /// traffic is drawn as it is asked for, in O(hosts) memory; flow lists, HPCC flow files,
    /// incast bursts and long-lived flows are listed when the stream is made. Cheap to make
    /// (a count-limited incast mix draws its background once to find its window), and every
    /// call gives the same flows. Errors are returned here, but for an arrival process's overrun,
    /// which is the stream's first `Err` item (see `FlowStream`).
    pub fn stream_on(&self, spec: &TopologySpec, t: &Topology, seed: u64) -> Result<FlowStream, String> {
        let WorkloadSpec::DcMix { background, long_flows } = self else { return self.stream(t, seed) };
        let TopologySpec::MultiDc(m) = spec else {
            return Err(DC_MIX_TOPOLOGY.into());
        };
        let n = m.n_hosts() / 2;
        let dcs: Vec<Vec<u32>> = (0..2).map(|dc| (0..n).map(|i| m.host_id(dc, i)).collect()).collect();
        Ok(FlowStream::new(dc_mix(background, *long_flows, t, &dcs, seed)?, &t.host_ids()))
    }

    /// `stream_on` without the topology's spec: every kind but `dc_mix`.
    pub fn stream(&self, t: &Topology, seed: u64) -> Result<FlowStream, String> {
        let hosts = t.host_ids();
        let mut per_source = false;
        let mut parts = Parts::default();
        match self {
            WorkloadSpec::Flows { flows } => parts.listed(explicit_flows(flows)?),
            WorkloadSpec::HpccFlows { text, time_offset, source_ports } => {
                per_source = *source_ports == SourcePorts::PerSourceHost;
                let mut v = parse_hpcc_flows(text).map_err(|e| format!("workload.file: {e}"))?;
                for f in &mut v {
                    if f.start < *time_offset {
                        return Err(format!("workload.time_offset {} is after a flow's start {}", time_offset, f.start));
                    }
                    f.start = f.start - *time_offset;
                }
                parts.listed(v)
            }
            WorkloadSpec::Background(b) => {
                let (spec, cdf) = b.spec(t, seed, 0)?;
                parts.drawn(&spec, &cdf, vec![])?
            }
            WorkloadSpec::Incast { incast, .. } if incast.exclude_dsts_from_background => {
                return Err("workload.incast.exclude_dsts_from_background: there is no background to exclude (allowed with workload.kind = \"incast_mix\")".into());
            }
            WorkloadSpec::Incast { incast, start, limit } => parts.listed(incast_flows(incast, &hosts, *start, *limit, seed, 0)?),
            WorkloadSpec::IncastMix { background, incast } => {
                let (spec, cdf) = background.spec(t, seed, 0)?;
                parts = crate::workload::mix::incastmix_parts(&spec, &cdf, incast)?
            }
            WorkloadSpec::LongLived { pairs, size, start } => parts.listed(long_lived(pairs, *size, *start, default_prio())?),
            WorkloadSpec::DcMix { .. } => {
                return Err(DC_MIX_TOPOLOGY.into())
            }
        }
        let stream = FlowStream::new(parts, &hosts);
        Ok(if per_source { stream.ports_per_source_host() } else { stream })
    }
}

/// Refuse a network with a link so slow that one data packet takes longer to serialise than the
/// longest retransmission timeout: every packet on it would time out before its ACK could come
/// back, and go-back-N (or TCP at its largest backoff) would send it again for ever.
fn check_links_beat_rto(topo: &Topology, host: &crate::params::HostConfig) -> Result<(), String> {
    let (rto, field) = match &host.tcp {
        Some(t) => (t.max_rto, "transport.tcp.max_rto"),
        None => (host.rto, "transport.rto"),
    };
    if rto == Time::ZERO {
        return Ok(()); // no timeout: NACKs alone repair loss
    }
    let bytes = host.mtu as u64 + host.header_bytes as u64;
    let Some(slow) = topo.links.iter().min_by_key(|l| l.rate.0) else { return Ok(()) };
    let t = slow.rate.tx_time(bytes);
    if t < rto {
        return Ok(());
    }
    Err(format!(
        "topology: the link between nodes {} and {} runs at {}, which takes {t} to send one {bytes}-byte packet, longer \
         than {field} = {rto}: every packet would time out and be sent again for ever; give the links a rate of at least {} \
         or a longer {field}",
        slow.a,
        slow.b,
        slow.rate,
        Rate(((bytes as u128 * 8 * 1_000_000_000_000u128) / rto.0 as u128 + 1) as u64)
    ))
}

impl Scenario {
    /// Build the topology, the flows and the simulation.
    pub fn build(&self) -> Result<Simulation, String> {
        self.net.cc.validate().map_err(|e| format!("congestion_control: {e}"))?;
        let (topo, file_loss) = self.topology.build_with_loss()?;
        check_links_beat_rto(&topo, &self.net.host)?;
        let mut net = self.net.clone();
        // an HPCC topology file's per-link error rates (overridden by `faults.link_loss`)
        net.faults.file_loss = file_loss;
        // flows made as they arrive (`Simulation::from_stream`), the workload drawn as it goes
        let (workload, spec, seed, t) = (self.workload.clone(), self.topology.clone(), self.net.seed, topo.clone());
        Simulation::from_stream(&topo, move || workload.stream_on(&spec, &t, seed), net)
    }

    /// What the input files' readers accepted but did not use (text after an HPCC topology's
    /// declared links or a flow file's declared flows), prefixed like errors with the field that
    /// names the file (`topology.file: `, `workload.file: `). Reads those files again: call it
    /// once, where the warnings are shown (`validate` in the Python binding).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let TopologySpec::Hpcc { text } = &self.topology {
            if let Ok((_, w)) = read_hpcc_topology(text) {
                out.extend(w.into_iter().map(|w| format!("topology.file: {w}")));
            }
        }
        if let WorkloadSpec::HpccFlows { text, .. } = &self.workload {
            if let Ok((_, w)) = read_hpcc_flows(text) {
                out.extend(w.into_iter().map(|w| format!("workload.file: {w}")));
            }
        }
        out
    }

    /// Build and run.
    pub fn run(&self) -> Result<RunStats, String> {
        self.run_watched(crate::progress::Watch::default())
    }

    /// Build and run under a watch (stop flag, progress hook).
    pub fn run_watched(&self, watch: crate::progress::Watch) -> Result<RunStats, String> {
        let mut sim = self.build()?;
        sim.set_watch(watch);
        sim.run();
        Ok(std::mem::take(&mut sim.stats))
    }

    /// Build and run on `threads` threads (`crate::engine`): the same tables as `run_watched`,
    /// and how the run was split.
    pub fn run_threads(&self, watch: crate::progress::Watch, threads: usize) -> Result<(RunStats, crate::engine::Split), String> {
        crate::engine::run_threads(&|| self.build(), threads, None, watch)
    }

    pub fn from_json(s: &str) -> Result<Scenario, String> {
        serde_json::from_str(s).map_err(|e| format!("scenario: {e}"))
    }
}
