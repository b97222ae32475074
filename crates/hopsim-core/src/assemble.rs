//! Assembling a `Simulation` from a topology, a flow list and settings: nodes, ports with their
//! queues and gates, switches with their MMU, modules and AQM, hosts and their flows. Errors name
//! what is wrong.

use crate::config::NetConfig;
use crate::event::{Event, Scheduler};
use crate::fc::view::{prio_queues, Peer, SwitchInfo};
use crate::fc::{AnyFc, FcConfig};
use crate::ids::NodeRef;
use crate::net::flow_store::FlowFixed;
use crate::net::host::Host;
use crate::net::switch::Switch;
use crate::packet::Slab;
use crate::params::Headroom;
use crate::queues::mmu::{Mmu, MmuConfig};
use crate::queues::port::Port;
use crate::rng::{stream, Rng};
use crate::sim::Simulation;
use crate::stats::RunStats;
use crate::stats::ideal::{hpcc_standalone_fct, ideal_fct, Hop};
use crate::time::{Rate, Time, TxClock};
use crate::topo::{node_ports, NodeKind, Routes, Topology};
use crate::workload::FlowSpec;
use crate::workload::stream::{BoxedStream, MakeStream};

/// A flow list to assemble: borrowed, or owned and freed as it is read (`Specs::each`), or
/// flows made as they arrive, counted before assembly (`Simulation::from_stream`).
enum Specs<'a> {
    Borrowed(&'a [FlowSpec]),
    Owned(Vec<FlowSpec>),
    Stream(Counted),
}


/// What a first read of a stream found: what assembly needs before any flow is built.
pub(crate) struct Counted {
    n: usize,
    /// Hosts the flows start or end at, in order of first appearance (`Routes::build_for`).
    ends: Vec<u32>,
    pub(crate) make: MakeStream,
}

/// Specs read between two shrinks of an owned list (`Specs::each`).
const SHRINK_EVERY: usize = 1 << 16;

impl Specs<'_> {
    fn len(&self) -> usize {
        match self {
            Specs::Borrowed(s) => s.len(),
            Specs::Owned(v) => v.len(),
            Specs::Stream(c) => c.n,
        }
    }

    /// The flows' ends, as `Routes::build_for` wants them (each flow's source, then its
    /// destination; repeats do not matter).
    fn ends(&self) -> Vec<u32> {
        let list: &[FlowSpec] = match self {
            Specs::Borrowed(s) => s,
            Specs::Owned(v) => v,
            Specs::Stream(c) => return c.ends.clone(),
        };
        list.iter().flat_map(|f| [f.src, f.dst]).collect()
    }

    /// Hand each spec to `add` with its id, in id order. An owned list gives its memory back as
    /// it goes (reversed, popped, shrunk every `SHRINK_EVERY` specs), so that it and the flow
    /// store it fills are not both held whole: for a million flows, 48 MB less at the peak.
    fn each(self, mut add: impl FnMut(u32, &FlowSpec) -> Result<(), String>) -> Result<(), String> {
        match self {
            Specs::Borrowed(s) => {
                for (id, f) in s.iter().enumerate() {
                    add(id as u32, f)?;
                }
            }
            Specs::Stream(_) => unreachable!("a stream's flows are added as they arrive"),
            Specs::Owned(mut v) => {
                v.reverse();
                let mut id = 0;
                while let Some(f) = v.pop() {
                    add(id, &f)?;
                    id += 1;
                    if v.capacity() - v.len() >= SHRINK_EVERY {
                        v.shrink_to_fit();
                    }
                }
            }
        }
        Ok(())
    }
}

impl Simulation {
    /// Assemble a network from a topology, a flow list and settings. Errors name what is wrong.
    pub fn new(topo: &Topology, flows: &[FlowSpec], cfg: NetConfig) -> Result<Simulation, String> {
        Self::assemble(topo, Specs::Borrowed(flows), cfg)
    }

    /// `new`, taking the flow list: its memory goes back as the flows are added (`Specs::each`).
    pub fn from_flows(topo: &Topology, flows: Vec<FlowSpec>, cfg: NetConfig) -> Result<Simulation, String> {
        Self::assemble(topo, Specs::Owned(flows), cfg)
    }

    /// `new` for flows made as they arrive: `make` gives the workload's flows (sorted by start
    /// time) from the first, each time it is called. They are read once to count them and
    /// find their hosts, once to check each (errors name the flow, as at assembly) and to find
    /// what the whole run needs (the largest base RTT), and once during the run, where each
    /// flow is built when it starts and forgotten, with its chunk of per-flow data, after its
    /// row left (`net::flow_store`). Memory then follows the flows in flight, not the
    /// workload's length, and results are those of `from_flows` on the same list.
    ///
    /// Falls back to `from_flows` (the whole list) where a flow's data is needed before it
    /// arrives: link faults (paths, hence ideal FCTs and NIC bindings, are those of the routes
    /// at assembly, and a fault rebinds flows not yet started) and window samples of named
    /// flows (`record.cwnd_flows`).
    pub fn from_stream<S, F>(topo: &Topology, make: F, cfg: NetConfig) -> Result<Simulation, String>
    where
        F: Fn() -> Result<S, String> + 'static,
        S: Iterator<Item = Result<FlowSpec, String>> + Send + 'static,
    {
        if !streams(&cfg) {
            let flows = make()?.collect::<Result<Vec<_>, _>>()?;
            return Self::from_flows(topo, flows, cfg);
        }
        let make: MakeStream = Box::new(move || make().map(|s| Box::new(s) as BoxedStream));
        let mut n = 0;
        let mut seen = vec![false; topo.nodes.len()];
        let mut ends = Vec::new();
        for f in make()? {
            let f = f?;
            n += 1;
            for e in [f.src, f.dst] {
                // an id beyond the topology: assembly names the flow
                if let Some(s) = seen.get_mut(e as usize).filter(|s| !**s) {
                    *s = true;
                    ends.push(e);
                }
            }
        }
        Self::assemble(topo, Specs::Stream(Counted { n, ends, make }), cfg)
    }

    fn assemble(topo: &Topology, flows: Specs, cfg: NetConfig) -> Result<Simulation, String> {
        let nflows = flows.len();
        topo.validate()?;
        cfg.switch.validate()?;
        cfg.fc.validate(&cfg.check_at())?;
        cfg.aqm.validate()?;
        crate::net::tcp::validate_mode(&cfg)?;
        check_sizes(&cfg)?;
        let id_limit = 1usize << crate::ids::ID_BITS;
        if topo.links.len() * 2 >= id_limit || nflows >= id_limit {
            return Err(format!("scenario too large: ports and flows must each be fewer than {id_limit}"));
        }
        // routes to the flows' ends only: packets go nowhere else (a link fault rebuilds them
        // for every host: `Routes::build_without`)
        let hop_order = cfg.routing.hop_order();
        let ecmp = cfg.routing.ecmp;
        let ends = flows.ends();
        let routes = Routes::build_for(topo, hop_order, &ends, &[])?;
        drop(ends);
        let faults = crate::faults::Faults::build(&cfg.faults, topo, cfg.seed, hop_order)?.map(Box::new);
        let nports_of = node_ports(topo);
        let mut node_ref = Vec::with_capacity(topo.nodes.len());
        let mut tiers = Vec::with_capacity(topo.nodes.len());
        let (mut nh, mut ns) = (0u32, 0u32);
        for (i, k) in topo.nodes.iter().enumerate() {
            match k {
                NodeKind::Host => {
                    // one NIC per link (`net::nic_choice`), the node's first NIC at `nh`
                    if nports_of[i].len() > u16::MAX as usize {
                        return Err(format!("topology: host {i} has {} links; allowed: 1 to {}", nports_of[i].len(), u16::MAX));
                    }
                    node_ref.push(NodeRef::Host(nh));
                    tiers.push(None);
                    nh += nports_of[i].len() as u32;
                }
                NodeKind::Switch { tier } => {
                    node_ref.push(NodeRef::Switch(ns));
                    tiers.push(Some(*tier));
                    ns += 1;
                }
            }
        }
        // ports: 2l at a, 2l+1 at b
        let mut ports = Vec::with_capacity(topo.links.len() * 2);
        let mut local_of = vec![0u16; topo.links.len() * 2];
        for ps in &nports_of {
            for (k, &p) in ps.iter().enumerate() {
                local_of[p as usize] = k as u16;
            }
        }
        let prio_map = cfg.prio_map();
        for (l, link) in topo.links.iter().enumerate() {
            for (side, node) in [(0u32, link.a), (1, link.b)] {
                let p = 2 * l as u32 + side;
                // a host port has no data queues here, only the gates of its NIC queues
                let (nq, ngates) = match node_ref[node as usize] {
                    NodeRef::Host(_) => (0, cfg.fc.nic_gates(cfg.host.nic_queues).max(1)),
                    NodeRef::Switch(_) => (cfg.switch.nqueues, cfg.switch.nqueues),
                };
                let clock = TxClock::with(link.rate, cfg.tx_time);
                let (q, sched) = (cfg.switch.quantum, &cfg.switch.scheduler);
                ports.push(Port::with(node, local_of[p as usize], clock, link.delay, nq, ngates, q, &prio_map, sched));
            }
        }
        // the hosts' NIC rate, as `third.cc`'s get_nic_rate reads it: the first host's link
        let nic_rate = (0..topo.nodes.len())
            .find(|&i| matches!(topo.nodes[i], NodeKind::Host))
            .map_or(Rate(u64::MAX), |h| ports[nports_of[h][0] as usize].clock.rate);
        let mut switches = vec![];
        let mut hosts = vec![];
        let nprio = crate::queues::port::NPRIO;
        for (i, k) in topo.nodes.iter().enumerate() {
            let ps = &nports_of[i];
            match k {
                NodeKind::Host => {
                    for &p in ps {
                        let mut h = Host::new(i as u32, p);
                        h.nics = ps.len() as u16;
                        h.nic = crate::fc::nic::AnyNic::build(&cfg.fc);
                        hosts.push(h);
                    }
                }
                NodeKind::Switch { tier } => {
                    let port_rate: Vec<Rate> = ps.iter().map(|&p| ports[p as usize].clock.rate).collect();
                    let headroom: Vec<u64> = ps
                        .iter()
                        .map(|&p| cfg.switch.headroom.bytes_for(ports[p as usize].clock.rate, ports[p as usize].delay))
                        .collect();
                    let mmu_cfg = MmuConfig {
                        buffer_bytes: cfg.switch.buffer_bytes,
                        reserve_bytes: cfg.switch.reserve_bytes,
                        alpha: cfg.switch.alpha,
                        resume_offset: cfg.switch.resume_offset,
                        lossless: cfg.switch.lossless,
                        headroom_first: cfg.switch.headroom_first,
                    };
                    let mut mmu = Mmu::new(mmu_cfg, headroom, nprio, cfg.switch.nqueues);
                    if cfg.switch.alpha_by_rate {
                        mmu.set_port_alpha(port_rate.iter().map(|&r| alpha_for_rate(cfg.switch.alpha, r, nic_rate)).collect());
                    }
                    let upq = cfg.switch.nqueues.max(cfg.fc.nic_gates(cfg.host.nic_queues));
                    let fc = AnyFc::build(&cfg.fc.for_run(!cfg.faults.is_off()), i as u32, ps.len(), nprio, upq, cfg.seed, &cfg.pfc);
                    let ecn = port_rate.iter().map(|&r| cfg.switch.ecn.thresholds(r)).collect();
                    let peers = ps.iter().map(|&p| Peer { tier: tiers[ports[(p ^ 1) as usize].node as usize] }).collect();
                    let aqm = crate::aqm::SwitchAqm::new(&cfg.aqm, &cfg.switch.ecn, &port_rate);
                    let info = SwitchInfo {
                        tier: *tier,
                        ports: ps.clone(),
                        port_rate,
                        peers,
                        ecn,
                        nqueues: cfg.switch.nqueues,
                        prio_queue: prio_queues(&prio_map, cfg.switch.nqueues),
                        mtu_bytes: cfg.host.mtu + cfg.host.header_bytes,
                    };
                    switches.push(Switch {
                        node: i as u32,
                        info,
                        mmu,
                        fc,
                        fc_gen: 0,
                        fc_at: None,
                        aqm,
                        rng: Rng::stream(cfg.seed, stream::RED, i as u64),
                    });
                }
            }
        }
        let mut slab = Slab::default();
        // wide tags only where something reads them: a rank scheduler, a tagging module, ICTCP's
        // advertised window
        slab.tags.on = matches!(cfg.switch.scheduler, crate::queues::sched::SchedulerConfig::Rank)
            || cfg.cc.receiver_window()
            || switches.iter().any(|s: &Switch| s.fc.uses_tags_any())
            || hosts.iter().any(|h: &Host| crate::fc::nic::NicFc::uses_tags(&h.nic));
        Simulation::set_port_owners(&mut ports, &node_ref);
        let mut sim = Simulation {
            now: Time::ZERO,
            sched: Scheduler::default(),
            slab,
            ports,
            switches,
            hosts,
            flows: Default::default(),
            node_ref,
            routes,
            // a slot per flow added (`add_flow` grows it)
            route_memo: crate::topo::route_memo::RouteMemo::new(0),
            cfg,
            tiers,
            arrival_order: vec![],
            next_flow: 0,
            lazy: None,
            flow_facts: Default::default(),
            acts: vec![],
            fc_out: vec![],
            sample_buf: vec![],
            nic_plain: false,
            stats: RunStats::default(),
            flows_done: 0,
            watch: Default::default(),
            watchdog: Default::default(),
            acks_as_data: false,
            nic_acks_pausable: false,
            ecmp,
            reverse_replies: false,
            flow_keys: false,
            ecn_on_port: false,
            rec: Default::default(),
            faults,
            idle_samples: 0,
            ideal: None,
            part: None,
            network_idle: false,
            singles: 0,
            ordered: Default::default(),
            aborted: false,
        };
        if sim.cfg.cc.oracle() {
            sim.ideal = Some(Box::new(crate::cc::ideal::Oracle::new(sim.ports.len(), nflows)));
        }
        sim.acks_as_data = sim.cfg.host.ack_priority == crate::params::AckPriority::Data;
        sim.nic_acks_pausable = sim.acks_as_data && sim.cfg.host.ack_pause_at_nic;
        sim.reverse_replies = sim.cfg.routing.ack_path == crate::params::AckPath::Reverse;
        sim.flow_keys = sim.cfg.fc.flow_keys();
        sim.ecn_on_port = sim.cfg.fc.ecn_on_port();
        if sim.acks_as_data && !sim.cfg.fc.acks_in_data_queues() {
            let allowed = FcConfig::acks_in_data_names();
            let (last, first) = allowed.split_last().expect("pfc keys queues by priority");
            return Err(format!(
                "transport.ack_priority: \"data\" puts ACKs in the data queues, which the {} scheme keys by flow; allowed with flow_control.scheme {} or {last}",
                sim.cfg.fc.name(),
                first.join(", ")
            ));
        }
        for c in &sim.cfg.host.host_rate_caps {
            if !matches!(sim.node_ref.get(c.host as usize), Some(NodeRef::Host(_))) {
                return Err(format!("transport.host_rate_caps: node {} is not a host; allowed: host node ids", c.host));
            }
        }
        sim.flows.set_total(nflows);
        if sim.cfg.fc.names_flows() && !sim.cfg.faults.is_off() {
            // FlowSail's pauses name flows, and may reach the sender after the flow was freed;
            // after a link fault moved a flow to another NIC, that NIC is found in its data
            // (without faults, it is the NIC the pause reached: `control_received`)
            sim.flows.pin();
        }
        match flows {
            Specs::Stream(c) => sim.check_stream(&c.make)?,
            flows => {
                flows.each(|id, f| sim.add_flow(id, f))?;
                let mut order: Vec<u32> = (0..nflows as u32).collect();
                order.sort_by_key(|&i| (sim.flows.fixed(i).spec.start, i));
                sim.arrival_order = order;
                let mut facts = crate::net::arrivals::FlowFacts::new(sim.node_ref.len());
                for i in 0..nflows as u32 {
                    facts.add(sim.flows.fixed(i));
                }
                sim.flow_facts = facts;
            }
        }
        if let Some(t) = sim.next_start() {
            sim.sched.push(t, Event::FlowArrival);
        }
        if let Some(&f) = sim.cfg.record.cwnd_flows.iter().find(|&&f| f as usize >= nflows) {
            return Err(format!("record.cwnd_flows: flow {f} does not exist; flows are 0 to {}", nflows.saturating_sub(1)));
        }
        if !sim.cfg.record.cwnd_flows.is_empty() && sim.cfg.record.buffer_interval.is_none() {
            return Err("record.cwnd_flows: windows are sampled every record.buffer_interval, which is 'off'; set it".into());
        }
        for &(node, local) in &sim.cfg.record.queue_ports {
            sim.switch_port("record.queue_ports", node, local)?;
        }
        sim.init_recorders()?;
        if let Some(t) = sim.faults.as_ref().and_then(|f| f.first_event()) {
            sim.sched.push(t, Event::Fault);
        }
        if sim.cfg.record.buffer_interval.is_some() || !sim.cfg.record.queue_ports.is_empty() {
            sim.sched.push(Time::ZERO, Event::Sample);
        }
        Ok(sim)
    }

    /// Add flow `id` (`flow_fixed`), at assembly or when it arrives (`net::arrivals`).
    pub(crate) fn add_flow(&mut self, id: u32, f: &FlowSpec) -> Result<(), String> {
        let fx = self.flow_fixed(id, f)?;
        self.flows.push(fx);
        self.route_memo.grow(self.flows.created());
        Ok(())
    }

    /// What flow `id` with spec `f` keeps for the run (ideal FCTs, base RTT, line rate, NICs),
    /// from its path on the routes of now; errors name the flow. A pure function of the spec
    /// and the network: flows made as they arrive (`from_stream`) get the same as at assembly
    /// because those runs have no link faults to change the routes in between.
    pub(crate) fn flow_fixed(&self, id: u32, f: &FlowSpec) -> Result<FlowFixed, String> {
        let (src, dst) = (f.src as usize, f.dst as usize);
        let n = self.node_ref.len();
        if src >= n || dst >= n || !matches!(self.node_ref[src], NodeRef::Host(_)) || !matches!(self.node_ref[dst], NodeRef::Host(_)) {
            return Err(format!("flow {id}: src {} and dst {} must be host node ids", f.src, f.dst));
        }
        if f.src == f.dst {
            return Err(format!("flow {id}: src and dst are the same host {}", f.src));
        }
        if f.size == 0 {
            return Err(format!("flow {id}: size must be at least 1 byte"));
        }
        if f.prio as usize >= crate::queues::port::NPRIO {
            return Err(format!("flow {id}: priority {} is not a priority; allowed: 0 to {}", f.prio, crate::queues::port::NPRIO - 1));
        }
        let hash = crate::net::flow_store::flow_hash(f, id, self.cfg.seed);
        let path = self.flow_path(f, hash);
        if path.is_empty() {
            return Err(format!("flow {id}: no route from {} to {}", f.src, f.dst));
        }
        let mut hops: Vec<Hop> = path.iter().map(|&p| Hop { rate: self.ports[p as usize].clock.rate, delay: self.ports[p as usize].delay }).collect();
        let h = &self.cfg.host;
        let mut f = *f;
        f.rate_cap = h.flow_rate_cap(f.src, f.rate_cap);
        if f.rate_cap == Some(crate::time::Rate(0)) {
            return Err(format!("flow {id}: rate cap of host {} must be above 0 bps", f.src));
        }
        let line_rate = hops[0].rate;
        // a capped flow's ideal: its first hop at the cap (the NIC spaces its packets at the cap;
        // each still leaves at line rate, so the last is up to one packet time early of this)
        if let Some(c) = f.rate_cap {
            hops[0].rate = hops[0].rate.min(c);
        }
        let ideal = ideal_fct(f.size, h.mtu, h.header_bytes, &hops, self.cfg.tx_time);
        hops[0].rate = line_rate;
        // unloaded RTT: one full packet out, one ACK back, over the same links
        let mut base_rtt = Time::ZERO;
        for hop in &hops {
            // saturating: delays and rates no datacenter has (years) give Time::MAX, not a wrap
            for t in [hop.rate.tx_time((h.mtu + h.header_bytes) as u64), hop.rate.tx_time(h.ack_bytes as u64), hop.delay, hop.delay] {
                base_rtt = Time(base_rtt.0.saturating_add(t.0));
            }
        }
        // the congestion controller is built when the flow starts (`FlowFixed::new_cc`); the NICs
        // are bound just below
        let hpcc_standalone_fct = hpcc_standalone_fct(f.size, h.mtu, &hops);
        let (src_nic, ack_nic) = self.nic_binding(id, &f, hash, path[0])?;
        Ok(FlowFixed { spec: f, ideal_fct: ideal, base_rtt, hpcc_standalone_fct, line_rate, src_nic, ack_nic })
    }
}

impl Simulation {
    /// The egress ports a flow's data takes from its source to its destination (empty if there
    /// is no route), as `route` picks them packet by packet; the first is the sender's NIC
    /// (`nic_port`: under hopsim's ECMP the same pick at the host).
    pub(crate) fn flow_path(&self, f: &FlowSpec, hash: u32) -> Vec<u32> {
        if self.ecmp == crate::params::EcmpHash::Hopsim {
            return self.routes.path(f.src, f.dst, hash as u64);
        }
        self.routes.path_by(f.src, f.dst, |node| {
            if node == f.src {
                return self.nic_port(f.src, f.dst, f, hash, false);
            }
            self.routes.pick_index(node, f.dst, self.header_hash(node, f.src, f.dst, f, false))
        })
    }
}

/// Whether a run of `cfg` makes its flows as they arrive when given a stream (`from_stream`);
/// see there for why not with faults or window samples of named flows.
pub(crate) fn streams(cfg: &NetConfig) -> bool {
    cfg.faults.is_off() && cfg.record.cwnd_flows.is_empty()
}

/// Settings that build but cannot run: a buffer that cannot hold one packet drops everything,
/// and a reserve or headroom larger than the buffer leaves the shared pool negative. Errors name
/// the field and what is allowed.
fn check_sizes(cfg: &NetConfig) -> Result<(), String> {
    let sw = &cfg.switch;
    // packet sizes in bytes fit a u32 with room to add headers, INT and padding
    const MAX_BYTES: u32 = 1 << 24;
    let h = &cfg.host;
    for (field, v, min) in [("transport.mtu", h.mtu, 1), ("transport.header", h.header_bytes, 0), ("transport.ack", h.ack_bytes, 1), ("transport.ack_min", h.ack_min, 0), ("queues.quantum", sw.quantum, 1)] {
        if v < min || v > MAX_BYTES {
            return Err(format!("{field}: {v} bytes is out of range; allowed: {min} to {MAX_BYTES}"));
        }
    }
    h.rto.check_setting("transport.rto")?;
    h.nack_interval.check_setting("transport.nack_interval")?;
    h.cnp_interval.check_setting("transport.cnp_interval")?;
    let r = &cfg.record;
    if let Some(iv) = r.buffer_interval {
        iv.check_setting("record.buffer_interval")?;
    }
    r.queue_interval.check_setting("record.queue_interval")?;
    let packet = (cfg.host.mtu + cfg.host.header_bytes) as u64;
    if sw.buffer_bytes < packet {
        return Err(format!(
            "buffer.size: {} bytes cannot hold one packet ({packet} bytes: transport.mtu {} + {} header bytes); allowed: at least {packet}",
            sw.buffer_bytes, cfg.host.mtu, cfg.host.header_bytes
        ));
    }
    let max = crate::queues::port::MAX_QUEUES;
    if cfg.host.nic_queues == 0 || cfg.host.nic_queues > max {
        return Err(format!("transport.nic_queues: {} is out of range; allowed: 1 to {max}", cfg.host.nic_queues));
    }
    if sw.reserve_bytes > sw.buffer_bytes {
        return Err(format!("buffer.reserve: {} bytes exceeds buffer.size {}; allowed: 0 to {}", sw.reserve_bytes, sw.buffer_bytes, sw.buffer_bytes));
    }
    if let Headroom::Bytes(h) = sw.headroom {
        if h > sw.buffer_bytes {
            return Err(format!("buffer.headroom: {h} bytes exceeds buffer.size {}; allowed: 0 to {}", sw.buffer_bytes, sw.buffer_bytes));
        }
    }
    Ok(())
}

/// `buffer.alpha_by_rate`: alpha doubled for each halving it takes to bring the port's rate down
/// to the NIC rate, at most 1 (`third.cc`: `pfc_a_shift` starts at 3 and drops by one per halving
/// while `rate > nic_rate`).
pub(crate) fn alpha_for_rate(alpha: f64, rate: Rate, nic_rate: Rate) -> f64 {
    let (mut a, mut r) = (alpha, rate.0);
    while r > nic_rate.0 && a * 2.0 <= 1.0 {
        a *= 2.0;
        r /= 2;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_doubles_per_doubling_of_rate_as_pfc_a_shift() {
        let nic = Rate::gbps(100);
        assert_eq!(alpha_for_rate(0.125, Rate::gbps(100), nic), 0.125);
        assert_eq!(alpha_for_rate(0.125, Rate::gbps(200), nic), 0.25);
        assert_eq!(alpha_for_rate(0.125, Rate::gbps(400), nic), 0.5);
        // shift 3 reaches 0 at 800G and stops there
        assert_eq!(alpha_for_rate(0.125, Rate::gbps(3200), nic), 1.0);
        // third.cc halves with integer division: 150G > 100G once, then 75G stops
        assert_eq!(alpha_for_rate(0.125, Rate::gbps(150), nic), 0.25);
        assert_eq!(alpha_for_rate(0.125, Rate::gbps(25), nic), 0.125);
    }
}
