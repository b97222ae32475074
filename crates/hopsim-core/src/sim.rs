//! The `Simulation`: owns every component in `Vec`s addressed by integer ids and runs the event
//! loop. Switch and host behaviour live in `net::switch` and `net::host` as further `impl` blocks
//! on this type, so each file holds one concern while all state stays in one place (no shared
//! pointers, no interior mutability).

use crate::cc::{AnyCc, FlowInfo};
use crate::config::{Headroom, NetConfig, WindowConfig};
use crate::event::{Event, Scheduler};
use crate::fc::{AnyFc, FcAction, FlowControl};
use crate::net::host::{Flow, Host};
use crate::net::mmu::{Mmu, MmuConfig};
use crate::net::port::Port;
use crate::net::switch::Switch;
use crate::packet::{PacketId, PktKind, Slab};
use crate::rng::{mix, stream, Rng};
use crate::stats::ideal::{ideal_fct, Hop};
use crate::stats::{HopClass, RunStats};
use crate::time::{Rate, Time, TxClock};
use crate::topo::{node_ports, NodeKind, Routes, Topology};
use crate::workload::FlowSpec;

/// What a topology node is inside the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRef {
    Host(u32),
    Switch(u32),
}

pub struct Simulation {
    pub now: Time,
    pub(crate) sched: Scheduler,
    pub(crate) slab: Slab,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    pub flows: Vec<Flow>,
    pub(crate) node_ref: Vec<NodeRef>,
    pub(crate) routes: Routes,
    pub cfg: NetConfig,
    /// Tier of each node (None = host), for hop classes.
    tiers: Vec<Option<u8>>,
    /// Flow ids in start order; `next_flow` indexes it.
    arrival_order: Vec<u32>,
    next_flow: usize,
    /// Flow-control actions waiting to be carried out, with the switch that asked.
    pub(crate) acts: Vec<(u32, FcAction)>,
    /// Buffer the flow-control hooks write their actions into (reused: no allocation per packet).
    pub(crate) fc_out: Vec<FcAction>,
    pub stats: RunStats,
    pub(crate) flows_done: usize,
}

impl Simulation {
    /// Assemble a network from a topology, a flow list and settings. Errors name what is wrong.
    pub fn new(topo: &Topology, flows: &[FlowSpec], cfg: NetConfig) -> Result<Simulation, String> {
        topo.validate()?;
        let id_limit = 1usize << crate::event::ID_BITS;
        if topo.links.len() * 2 >= id_limit || flows.len() >= id_limit {
            return Err(format!("scenario too large: ports and flows must each be fewer than {id_limit}"));
        }
        let routes = Routes::build(topo);
        let nports_of = node_ports(topo);
        let mut node_ref = Vec::with_capacity(topo.nodes.len());
        let mut tiers = Vec::with_capacity(topo.nodes.len());
        let (mut nh, mut ns) = (0u32, 0u32);
        for (i, k) in topo.nodes.iter().enumerate() {
            match k {
                NodeKind::Host => {
                    if nports_of[i].len() != 1 {
                        return Err(format!("topology: host {i} has {} links; hosts must have exactly one", nports_of[i].len()));
                    }
                    node_ref.push(NodeRef::Host(nh));
                    tiers.push(None);
                    nh += 1;
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
        for (l, link) in topo.links.iter().enumerate() {
            for (side, node) in [(0u32, link.a), (1, link.b)] {
                let p = 2 * l as u32 + side;
                let nq = match node_ref[node as usize] {
                    NodeRef::Host(_) => 0,
                    NodeRef::Switch(_) => cfg.switch.nqueues,
                };
                ports.push(Port::new(node, local_of[p as usize], TxClock::new(link.rate), link.delay, nq, cfg.switch.quantum));
            }
        }
        let mut switches = vec![];
        let mut hosts = vec![];
        let nprio = crate::net::port::NPRIO;
        for (i, k) in topo.nodes.iter().enumerate() {
            let ps = &nports_of[i];
            match k {
                NodeKind::Host => hosts.push(Host::new(i as u32, ps[0])),
                NodeKind::Switch { tier } => {
                    let port_rate: Vec<Rate> = ps.iter().map(|&p| ports[p as usize].clock.rate).collect();
                    let headroom: Vec<u64> = ps
                        .iter()
                        .map(|&p| match cfg.switch.headroom {
                            Headroom::Auto => {
                                let port = &ports[p as usize];
                                3 * port.clock.rate.bytes_in(port.delay) + 3_000
                            }
                            Headroom::Bytes(b) => b,
                        })
                        .collect();
                    let mmu_cfg = MmuConfig {
                        buffer_bytes: cfg.switch.buffer_bytes,
                        reserve_bytes: cfg.switch.reserve_bytes,
                        alpha: cfg.switch.alpha,
                        resume_offset: cfg.switch.resume_offset,
                        lossless: cfg.fc.lossless(),
                    };
                    let mmu = Mmu::new(mmu_cfg, headroom, nprio, cfg.switch.nqueues);
                    let fc = AnyFc::build(&cfg.fc, i as u32, ps.len(), nprio, cfg.seed, &cfg.pfc);
                    let ecn = port_rate.iter().map(|&r| cfg.switch.ecn.thresholds(r)).collect();
                    switches.push(Switch {
                        node: i as u32,
                        tier: *tier,
                        ports: ps.clone(),
                        aqm: crate::aqm::SwitchAqm::new(&cfg, &port_rate),
                        port_rate,
                        mmu,
                        fc,
                        fc_gen: 0,
                        fc_at: None,
                        ecn,
                        rng: Rng::stream(cfg.seed, stream::SWITCH, i as u64),
                    });
                }
            }
        }
        let mut sim = Simulation {
            now: Time::ZERO,
            sched: Scheduler::default(),
            slab: Slab::default(),
            ports,
            switches,
            hosts,
            flows: Vec::with_capacity(flows.len()),
            node_ref,
            routes,
            cfg,
            tiers,
            arrival_order: vec![],
            next_flow: 0,
            acts: vec![],
            fc_out: vec![],
            stats: RunStats::default(),
            flows_done: 0,
        };
        for (id, f) in flows.iter().enumerate() {
            sim.add_flow(id as u32, f)?;
        }
        let mut order: Vec<u32> = (0..flows.len() as u32).collect();
        order.sort_by_key(|&i| (sim.flows[i as usize].spec.start, i));
        sim.arrival_order = order;
        if let Some(&first) = sim.arrival_order.first() {
            let t = sim.flows[first as usize].spec.start;
            sim.sched.push(t, Event::FlowArrival);
        }
        if sim.cfg.record.buffer_interval.is_some() || !sim.cfg.record.queue_ports.is_empty() {
            sim.sched.push(Time::ZERO, Event::Sample);
        }
        Ok(sim)
    }

    fn add_flow(&mut self, id: u32, f: &FlowSpec) -> Result<(), String> {
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
        let hash = mix(&[f.src as u64, f.dst as u64, id as u64, self.cfg.seed]) as u32;
        let path = self.routes.path(f.src, f.dst, hash as u64);
        if path.is_empty() {
            return Err(format!("flow {id}: no route from {} to {}", f.src, f.dst));
        }
        let hops: Vec<Hop> = path.iter().map(|&p| Hop { rate: self.ports[p as usize].clock.rate, delay: self.ports[p as usize].delay }).collect();
        let h = &self.cfg.host;
        let ideal = ideal_fct(f.size, h.mtu, h.header_bytes, &hops);
        // unloaded RTT: one full packet out, one ACK back, over the same links
        let mut base_rtt = Time::ZERO;
        for hop in &hops {
            base_rtt += hop.rate.tx_time((h.mtu + h.header_bytes) as u64) + hop.rate.tx_time(h.ack_bytes as u64) + hop.delay + hop.delay;
        }
        let line_rate = hops[0].rate;
        let win_cap = match h.window {
            WindowConfig::Bdp => line_rate.bytes_in(base_rtt).max(h.mtu as u64),
            WindowConfig::Bytes(b) => b.max(h.mtu as u64),
            WindowConfig::Off => u64::MAX,
        };
        let info = FlowInfo { line_rate, base_rtt, mtu: h.mtu };
        let cc = AnyCc::build(&self.cfg.cc, &info);
        self.flows.push(Flow::new(*f, hash, cc, win_cap, ideal, base_rtt));
        Ok(())
    }

    /// Run to completion (every flow finished) or to the stop time.
    pub fn run(&mut self) -> &RunStats {
        let stop = self.cfg.stop_time.unwrap_or(Time::MAX);
        while let Some((t, ev)) = self.sched.pop() {
            if t > stop {
                self.now = stop;
                break;
            }
            debug_assert!(t >= self.now);
            self.now = t;
            match ev {
                Event::PortTx { port, gen } => self.on_port_tx(port, gen),
                Event::Wire { port } => self.on_wire(port),
                Event::FlowArrival => self.on_flow_arrival(),
                Event::FlowTimer { flow, gen } => self.on_flow_timer(flow, gen),
                Event::FcTimer { sw, gen } => self.on_fc_timer(sw, gen),
                Event::Sample => self.on_sample(),
            }
            if self.flows_done == self.flows.len() && self.next_flow == self.arrival_order.len() {
                break;
            }
        }
        self.finish();
        &self.stats
    }

    fn on_flow_arrival(&mut self) {
        while self.next_flow < self.arrival_order.len() {
            let f = self.arrival_order[self.next_flow];
            if self.flows[f as usize].spec.start > self.now {
                let t = self.flows[f as usize].spec.start;
                self.sched.push(t, Event::FlowArrival);
                return;
            }
            self.next_flow += 1;
            self.start_flow(f);
        }
    }

    // ---------------------------------------------------------------- ports and wires

    /// Something was queued at port `p`: serve it now if the port is free, or make sure it is
    /// served when its current serialisation ends.
    #[inline]
    pub(crate) fn kick(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        if port.busy_until <= now {
            if port.pending.is_none_or(|t| t > now) {
                self.port_service(p);
            }
        } else if port.pending.is_none_or(|t| t > port.busy_until) {
            port.gen = port.gen.wrapping_add(1);
            port.pending = Some(port.busy_until);
            self.sched.push(port.busy_until, Event::PortTx { port: p, gen: port.gen });
        }
    }

    /// Pick the next packet of a free port and start serialising it (it goes onto the wire at
    /// once, stamped with its arrival time), or arrange a wake-up for pacing or pause expiry.
    pub(crate) fn port_service(&mut self, p: u32) {
        let pi = p as usize;
        let node = self.node_ref[self.ports[pi].node as usize];
        let next = match self.ports[pi].ctrl.pop_front() {
            Some(id) => Some(id),
            None => match node {
                NodeRef::Switch(s) => self.switch_dequeue(s, p),
                NodeRef::Host(h) => self.host_next_packet(h),
            },
        };
        let now = self.now;
        let port = &mut self.ports[pi];
        port.gen = port.gen.wrapping_add(1);
        port.pending = None;
        match next {
            Some(id) => {
                let pkt = self.slab.get(id);
                let end = now + port.clock.tx_time(pkt.size);
                port.busy_until = end;
                port.tx_bytes += pkt.size as u64;
                let c = &mut self.stats.counters;
                c.packets_sent += 1;
                match pkt.kind {
                    PktKind::Data => port.tx_data_bytes += pkt.size as u64,
                    k => {
                        port.ctrl_bytes += pkt.size as u64;
                        match k {
                            PktKind::Ack => c.ack_bytes += pkt.size as u64,
                            PktKind::Nack => c.nack_bytes += pkt.size as u64,
                            PktKind::Cnp => c.cnp_bytes += pkt.size as u64,
                            _ => c.pfc_bytes += pkt.size as u64,
                        }
                    }
                }
                let arrive = end + port.delay;
                if port.wire.is_empty() {
                    self.sched.push(arrive, Event::Wire { port: p });
                }
                port.wire.push_back((arrive, id));
                let more = port.has_backlog() || matches!(node, NodeRef::Host(h) if !self.hosts[h as usize].active.is_empty());
                if more {
                    let port = &mut self.ports[pi];
                    port.pending = Some(end);
                    self.sched.push(end, Event::PortTx { port: p, gen: port.gen });
                }
            }
            None => {
                let wake = match node {
                    NodeRef::Switch(_) => port.next_unpause(now),
                    NodeRef::Host(h) => self.host_wake_time(h),
                };
                let port = &mut self.ports[pi];
                port.pending = wake;
                if let Some(w) = wake {
                    self.sched.push(w, Event::PortTx { port: p, gen: port.gen });
                }
            }
        }
        self.apply_actions();
    }

    fn on_port_tx(&mut self, p: u32, gen: u32) {
        let port = &mut self.ports[p as usize];
        if port.gen != gen {
            return;
        }
        port.pending = None;
        if port.busy_until <= self.now {
            self.port_service(p);
        }
    }

    fn on_wire(&mut self, p: u32) {
        let port = &mut self.ports[p as usize];
        let (_, id) = port.wire.pop_front().expect("wire event without a packet");
        if let Some(&(t, _)) = port.wire.front() {
            self.sched.push(t, Event::Wire { port: p });
        }
        let peer = p ^ 1;
        if self.slab.get(id).kind == PktKind::Pfc {
            self.receive_pfc(peer, id);
            return;
        }
        match self.node_ref[self.ports[peer as usize].node as usize] {
            NodeRef::Switch(s) => self.switch_receive(s, peer, id),
            NodeRef::Host(h) => self.host_receive(h, id),
        }
    }

    /// A PFC frame arrived on port `p`: pause (or resume) that port's priority.
    fn receive_pfc(&mut self, p: u32, id: PacketId) {
        let pkt = *self.slab.get(id);
        self.slab.free(id);
        let port = &mut self.ports[p as usize];
        let until = self.now + crate::fc::quanta_duration(pkt.quanta, port.clock.rate);
        port.apply_pause(pkt.prio as usize, self.now, until);
        if let NodeRef::Switch(s) = self.node_ref[port.node as usize] {
            let local = port.local;
            let msg = crate::fc::FcMsg::Pfc { prio: pkt.prio, quanta: pkt.quanta };
            self.switch_control(s, local, msg);
        }
        if pkt.quanta == 0 {
            self.kick(p);
        }
    }

    /// Carry out queued flow-control actions (they may queue more). Usually there are none, so
    /// the check is inlined and the work kept out of line.
    #[inline]
    pub(crate) fn apply_actions(&mut self) {
        if !self.acts.is_empty() {
            self.apply_actions_now();
        }
    }

    #[inline(never)]
    fn apply_actions_now(&mut self) {
        while !self.acts.is_empty() {
            let batch = std::mem::take(&mut self.acts);
            for (s, a) in batch {
                match a {
                    FcAction::Send { port, msg } => self.switch_send_control(s, port, msg),
                }
            }
        }
    }

    // ---------------------------------------------------------------- timers

    /// Make sure switch `s` has its flow-control timer armed at the module's next deadline.
    pub(crate) fn arm_fc_timer(&mut self, s: u32) {
        let sw = &mut self.switches[s as usize];
        if let Some(t) = sw.fc.next_timer() {
            if sw.fc_at.is_none_or(|x| t < x) {
                sw.fc_gen = sw.fc_gen.wrapping_add(1);
                sw.fc_at = Some(t);
                self.sched.push(t.max(self.now), Event::FcTimer { sw: s, gen: sw.fc_gen });
            }
        }
    }

    fn on_fc_timer(&mut self, s: u32, gen: u32) {
        let sw = &mut self.switches[s as usize];
        if sw.fc_gen != gen {
            return;
        }
        sw.fc_at = None;
        if sw.fc.next_timer().is_some_and(|t| t <= self.now) {
            self.switch_fc_timer(s);
        }
        self.arm_fc_timer(s);
        self.apply_actions();
    }

    // ---------------------------------------------------------------- statistics

    fn on_sample(&mut self) {
        let now = self.now;
        let rec = &self.cfg.record;
        if rec.buffer_interval.is_some_and(|iv| now.0 % iv.0.max(1) == 0) {
            let b = &mut self.stats.buffer;
            for sw in &self.switches {
                b.switch_time_ps.push(now.0);
                b.switch_node.push(sw.node);
                b.switch_bytes.push(sw.mmu.used());
                for &p in &sw.ports {
                    b.port_time_ps.push(now.0);
                    b.port_row.push(p);
                    b.port_bytes.push(self.ports[p as usize].queued_bytes());
                    b.port_tx_bytes.push(self.ports[p as usize].tx_data_bytes);
                }
            }
        }
        if !rec.queue_ports.is_empty() && now.0 % rec.queue_interval.0.max(1) == 0 {
            for &(node, local) in &rec.queue_ports {
                if let Some(p) = self.port_of(node, local) {
                    let q = &mut self.stats.queues;
                    q.time_ps.push(now.0);
                    q.node.push(node);
                    q.port.push(local);
                    q.bytes.push(self.ports[p as usize].queued_bytes());
                }
            }
        }
        let step = match (rec.buffer_interval, rec.queue_ports.is_empty()) {
            (Some(b), true) => b,
            (None, false) => rec.queue_interval,
            (Some(b), false) => Time(gcd(b.0, rec.queue_interval.0)),
            (None, true) => return,
        };
        self.sched.push(now + Time(step.0.max(1)), Event::Sample);
    }

    /// Global id of local port `local` of node `node`.
    pub fn port_of(&self, node: u32, local: u16) -> Option<u32> {
        match self.node_ref.get(node as usize)? {
            NodeRef::Switch(s) => self.switches[*s as usize].ports.get(local as usize).copied(),
            NodeRef::Host(h) => (local == 0).then(|| self.hosts[*h as usize].port),
        }
    }

    /// Fill the per-flow and per-port tables at the end of the run.
    fn finish(&mut self) {
        let now = self.now;
        let ft = &mut self.stats.flows;
        for (i, f) in self.flows.iter().enumerate() {
            ft.flow_id.push(i as u32);
            ft.src.push(f.spec.src);
            ft.dst.push(f.spec.dst);
            ft.size_bytes.push(f.spec.size);
            ft.start_ps.push(f.spec.start.0);
            let (fin, fct) = match f.finish {
                Some(t) => (t.0, (t - f.spec.start).0),
                None => (u64::MAX, u64::MAX),
            };
            ft.finish_ps.push(fin);
            ft.fct_ps.push(fct);
            ft.ideal_fct_ps.push(f.ideal_fct.0);
            ft.slowdown.push(if f.finish.is_some() { fct as f64 / f.ideal_fct.0 as f64 } else { f64::NAN });
            ft.incast.push(f.spec.incast);
            ft.retx_bytes.push(f.retx_bytes);
            ft.dropped_bytes.push(f.dropped_bytes);
            ft.delivered_bytes.push(f.rcv_nxt);
        }
        let pt = &mut self.stats.ports;
        for (p, port) in self.ports.iter().enumerate() {
            let peer = &self.ports[p ^ 1];
            pt.node.push(port.node);
            pt.port.push(port.local);
            pt.peer_node.push(peer.node);
            pt.hop_class.push(HopClass::of(self.tiers[port.node as usize], self.tiers[peer.node as usize]).name().to_string());
            pt.rate_bps.push(port.clock.rate.0);
            pt.tx_bytes.push(port.tx_bytes);
            pt.ctrl_bytes.push(port.ctrl_bytes);
            let cap = port.clock.rate.bytes_in(now).max(1);
            pt.utilisation.push(port.tx_bytes as f64 / cap as f64);
            let paused: u64 = (0..crate::net::port::NPRIO).map(|q| port.paused_time(q, now).0).sum();
            pt.paused_ps.push(paused);
            pt.peak_queue_bytes.push(port.peak_qbytes);
        }
        let c = &mut self.stats.counters;
        c.events = self.sched.popped;
        c.flows = self.flows.len() as u64;
        c.flows_finished = self.flows.iter().filter(|f| f.finish.is_some()).count() as u64;
        c.end_time_ps = now.0;
        c.peak_packets_alive = self.slab.capacity_used() as u64;
        c.peak_pending_events = self.sched.peak_len as u64;
        c.max_switch_buffer_bytes = self.switches.iter().map(|s| s.mmu.peak_used).max().unwrap_or(0);
    }

    /// Tier of a node (None for hosts).
    pub fn tier(&self, node: u32) -> Option<u8> {
        self.tiers[node as usize]
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
