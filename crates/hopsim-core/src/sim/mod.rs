//! The `Simulation`: owns every component in `Vec`s addressed by integer ids and runs the event
//! loop. Each other concern is a further `impl` block on this type in a file of its own, so all
//! state stays in one place (no shared pointers, no interior mutability):
//! - `assemble`: building a network from a topology, flows and settings;
//! - `net::link`: ports and wires (kick, service, arrival at the far end);
//! - `net::switch` and `net::host`: what a switch and a host do with a packet;
//! - `net::control`: control frames, flow-control actions and the modules' timers;
//! - `sim::sample`: periodic samples and the end-of-run tables, written into `stats`;
//! - `sim::record`: the HPCC simulator's recorders (queue-length histograms, packet trace), whose
//!   buffers are `stats::record`;
//! - `progress` and `watchdog`: the loop's checkpoints (stop flag, progress hook, stalls).

mod record;
pub mod sample;

use crate::config::NetConfig;
use crate::event::Scheduler;
use crate::fc::nic::AnyNic;
use crate::fc::{AnyFc, FcAction};
use crate::ids::NodeRef;
use crate::net::flow_store::FlowStore;
use crate::net::host::Host;
use crate::net::switch::Switch;
use crate::packet::Slab;
use crate::progress::{Progress, Watch};
use crate::queues::port::Port;
use crate::stats::RunStats;
use crate::time::Time;
use crate::topo::Routes;

pub struct Simulation {
    pub now: Time,
    pub(crate) sched: Scheduler,
    pub(crate) slab: Slab,
    pub ports: Vec<Port>,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    /// Every flow: fixed data and results for all, live state for the running ones
    /// (`net::flow_store`).
    pub flows: FlowStore,
    pub(crate) node_ref: Vec<NodeRef>,
    pub(crate) routes: Routes,
    /// Routes the running flows have taken (`topo::route_memo`).
    pub(crate) route_memo: crate::topo::route_memo::RouteMemo,
    pub cfg: NetConfig,
    /// Tier of each node (None = host), for hop classes and the modules' view of their peers.
    pub(crate) tiers: Vec<Option<u8>>,
    /// Flow ids in start order; `next_flow` indexes it (flows added at assembly).
    pub(crate) arrival_order: Vec<u32>,
    /// Flows started so far.
    pub(crate) next_flow: usize,
    /// The flows still to arrive, made as they do (`Simulation::from_stream`, `net::arrivals`).
    pub(crate) lazy: Option<Box<crate::net::arrivals::LazyFlows>>,
    /// What the run needs of all its flows, found at assembly (`net::arrivals`).
    pub(crate) flow_facts: crate::net::arrivals::FlowFacts,
    /// Flow-control actions waiting to be carried out, with the node (topology id) that asked.
    pub(crate) acts: Vec<(u32, FcAction)>,
    /// Buffer the flow-control hooks write their actions into (reused: no allocation per packet).
    pub(crate) fc_out: Vec<FcAction>,
    /// Reused buffer of the modules' sampled values (`sim::sample`).
    pub(crate) sample_buf: crate::fc::Samples,
    /// The NICs pick by the plain scan over every flow (`Simulation::use_plain_nic_scan`).
    pub(crate) nic_plain: bool,
    pub stats: RunStats,
    pub(crate) flows_done: usize,
    /// Outside watch of the run: stop flag and progress hook (`progress.rs`).
    pub(crate) watch: Watch,
    /// No-progress and deadlock detection (`watchdog.rs`).
    pub(crate) watchdog: crate::watchdog::Watchdog,
    /// `transport.ack_priority = "data"`: switches queue ACKs and NACKs as data.
    pub(crate) acks_as_data: bool,
    /// ... and hosts hold them while their priority is paused (`transport.ack_pause_at_nic`).
    pub(crate) nic_acks_pausable: bool,
    /// `routing.ecmp`: hopsim's flow hash picks next hops, or a seed simulator's hash of the
    /// packet's header (`header_hash`).
    pub(crate) ecmp: crate::params::EcmpHash,
    /// ECN marking reads the bytes of a port's data queues together (`Scheme::ecn_on_port`).
    pub(crate) ecn_on_port: bool,
    /// Senders write each data packet's flow-table key (`Scheme::flow_keys`).
    pub(crate) flow_keys: bool,
    /// `routing.ack_path = "reverse"`: replies retrace their data's path (`net::reverse_path`).
    pub(crate) reverse_replies: bool,
    /// Queue-length monitor and packet trace (`stats::record`).
    pub(crate) rec: crate::stats::record::Recorders,
    /// Loss and link failures (`faults.rs`); `None` in runs without faults.
    pub(crate) faults: Option<Box<crate::faults::Faults>>,
    /// Consecutive samples that found the network idle (`sim::sample`).
    pub(crate) idle_samples: u64,
    /// Pulser's Ideal: the oracle that books queue-free paths (`cc::ideal`); `None` otherwise.
    pub ideal: Option<Box<crate::cc::ideal::Oracle>>,
    /// This simulation's partition of a run split over threads (`crate::engine`); `None` on one
    /// thread.
    pub(crate) part: Option<Box<crate::engine::Part>>,
    /// No packet anywhere and every started flow finished, at the start of the window being
    /// run (the sampler's idle rule, `sim::sample`: decided at window starts so that every
    /// partitioning decides it alike).
    pub(crate) network_idle: bool,
    /// Events of the kinds every partition handles itself (flow arrivals, samples, faults).
    pub(crate) singles: u64,
    /// How far the logs are in canonical order (`stats::order`).
    pub(crate) ordered: crate::stats::order::Ordered,
    /// The outside watch asked to stop inside a window (`engine::window`).
    pub(crate) aborted: bool,
}

impl Simulation {
    /// Run to completion (every flow finished), to the stop time, until the watchdog finds that
    /// the run cannot finish (`watchdog.rs`), or until the watch asks it to stop
    /// (`progress.rs`); `stats.stop` says which. One thread: the engine's window loop with one
    /// partition (`crate::engine`).
    pub fn run(&mut self) -> &RunStats {
        let info = crate::engine::parallel::run_parts(std::slice::from_mut(self), None);
        self.stats.canonical_order();
        self.stats.stop = info;
        &self.stats
    }

    /// The place of switch node `node` among the switches (their order in the tables).
    pub(crate) fn switch_index(&self, node: u32) -> u32 {
        match self.node_ref[node as usize] {
            NodeRef::Switch(s) => s,
            NodeRef::Host(_) => u32::MAX,
        }
    }

    /// Whether this simulation handles node `n`: always on one thread, only its own nodes in a
    /// partition of a split run (`crate::engine`).
    #[inline]
    pub(crate) fn owns(&self, n: u32) -> bool {
        self.part.as_deref().is_none_or(|p| p.owns(n))
    }

    /// The largest base RTT of the run's flows (those still to arrive included): what the
    /// watchdog's default wait follows (`watchdog::default_stall_after`).
    pub fn max_base_rtt(&self) -> Time {
        self.flow_facts.max_base_rtt
    }

    /// Whether flows are made as they arrive (`from_stream`) rather than all at assembly.
    pub fn streams_flows(&self) -> bool {
        self.lazy.is_some()
    }

    /// Chunks of per-flow data held at the most, in the flow store and the route memo (each
    /// `FlowStore::chunk_flows` flows), against the chunks the run's flows span.
    pub fn peak_flow_chunks(&self) -> (usize, usize, usize) {
        (self.flows.chunks_held().1, self.route_memo.peak_chunks(), self.flows.len().div_ceil(crate::net::flow_store::FlowStore::chunk_flows()))
    }

    /// Where the run stands, for a progress hook.
    pub fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            end: self.cfg.stop_time,
            last_start: self.flow_facts.last_start,
            events: self.sched.popped,
            flows: self.flows.len() as u64,
            flows_started: self.next_flow as u64,
            flows_done: self.flows_done as u64,
            wall: self.watch.wall(),
        }
    }

    /// Watch this run from outside: a stop flag and/or a progress hook (before `run`).
    pub fn set_watch(&mut self, watch: Watch) {
        self.watch = watch;
    }

    /// The egress port at `node` of a packet towards its destination: hopsim's flow hash, or with
    /// `routing.ecmp = "hpcc"` / `"ns3_global"` the seed simulator's hash of the packet's header;
    /// a reply's with
    /// `routing.ack_path = "reverse"` the port its data came in by. `NO_ROUTE`
    /// (`topo::routes`) where a link failure left no route (`faults.rs`).
    #[inline]
    pub(crate) fn route(&self, node: u32, pkt: &crate::packet::Packet) -> u32 {
        if self.reverse_replies && pkt.kind != crate::packet::PktKind::Data {
            if let Some(p) = self.reverse_of_data(node, pkt.flow) {
                return p;
            }
        }
        if self.ecmp == crate::params::EcmpHash::Hopsim {
            return self.routes.pick(node, pkt.dst, pkt.hash as u64);
        }
        // (the fixed spec: late packets of a freed flow are routed too)
        let spec = &self.flows.fixed(pkt.flow).spec;
        let reply = pkt.kind != crate::packet::PktKind::Data;
        self.routes.pick_index(node, pkt.dst, self.header_hash(node, pkt.src, pkt.dst, spec, reply))
    }

    /// The seed simulator's hash at switch `node` of a packet from `from` to `to` of the flow
    /// `spec` (`reply`: one of its ACKs or NACKs) under `routing.ecmp = "hpcc"` or `"ns3_global"`;
    /// the next hop is this modulo the next hops, in its order.
    pub(crate) fn header_hash(&self, node: u32, from: u32, to: u32, spec: &crate::workload::FlowSpec, reply: bool) -> u32 {
        match self.ecmp {
            crate::params::EcmpHash::Ns3Global => crate::topo::ecmp_ns3::ns3_tuple_hash(from, to, spec.sport, spec.dport, spec.pg, reply),
            _ => crate::topo::ecmp_hpcc::hpcc_ecmp_hash(node, from, to, spec.sport, spec.dport, reply),
        }
    }

    /// `route` of packet `id` at switch node `node`, remembered per flow and direction
    /// (`topo::route_memo`): the same answer without the hash and the table walk.
    #[inline]
    pub(crate) fn route_cached(&mut self, node: u32, id: crate::packet::PacketId) -> u32 {
        let pkt = self.slab.get(id);
        let key = crate::topo::route_memo::key(node, pkt.kind != crate::packet::PktKind::Data);
        if let Some(p) = self.route_memo.get(pkt.flow, key) {
            debug_assert_eq!(p, self.route(node, pkt), "route memo of flow {}", pkt.flow);
            return p;
        }
        let p = self.route(node, pkt);
        if p != crate::topo::routes::NO_ROUTE {
            self.route_memo.put(pkt.flow, key, p);
        }
        p
    }

    /// Global id of local port `local` of node `node`.
    pub fn port_of(&self, node: u32, local: u16) -> Option<u32> {
        match self.node_ref.get(node as usize)? {
            NodeRef::Switch(s) => self.switches[*s as usize].info.ports.get(local as usize).copied(),
            // a host's NICs are adjacent, one per local port (`net::nic_choice`)
            NodeRef::Host(h) => (local < self.hosts[*h as usize].nics).then(|| self.hosts[(*h + local as u32) as usize].port),
        }
    }

    /// Replace the flow-control module of switch node `node` (before `run`): a scheme from outside
    /// the crate, or a test's. Errors if `node` is not a switch.
    pub fn set_switch_fc(&mut self, node: u32, fc: AnyFc) -> Result<(), String> {
        match self.node_ref.get(node as usize) {
            Some(NodeRef::Switch(s)) => {
                self.slab.tags.on |= fc.uses_tags_any();
                self.switches[*s as usize].fc = fc;
                Ok(())
            }
            _ => Err(format!("node {node} is not a switch")),
        }
    }

    /// Make every NIC pick its next queue pair by the plain round-robin scan over all its flows
    /// instead of its scheduler's candidates (`net::nic_sched`): the same choices, slower. For
    /// tests that check exactly that.
    pub fn use_plain_nic_scan(&mut self) {
        self.nic_plain = true;
    }

    /// Route every packet by the tables at every hop, remembering nothing (`topo::route_memo`):
    /// the same routes, slower. For tests that check exactly that.
    pub fn use_no_route_memo(&mut self) {
        self.route_memo = crate::topo::route_memo::RouteMemo::off();
    }

    /// Keep every flow's live state to the end of the run instead of freeing it once nothing can
    /// touch it (`net::flow_store`): the same results, more memory. For tests that inspect a
    /// finished flow's congestion control after the run (before `run`).
    pub fn keep_finished_flows(&mut self) {
        self.flows.keep_all();
    }

    /// Replace the NIC-side module of host node `node` (before `run`); a host with several NICs
    /// needs `set_host_nic_at`.
    pub fn set_host_nic(&mut self, node: u32, nic: AnyNic) -> Result<(), String> {
        if let Some(NodeRef::Host(h)) = self.node_ref.get(node as usize) {
            let n = self.hosts[*h as usize].nics;
            if n > 1 {
                return Err(format!("node {node} has {n} NICs, one per link: set each with set_host_nic_at(node, local port, module)"));
            }
        }
        self.set_host_nic_at(node, 0, nic)
    }

    /// Replace the NIC-side module of the NIC on local port `local` of host node `node` (before
    /// `run`). Actions of a module name the host's local ports as a switch module's do.
    pub fn set_host_nic_at(&mut self, node: u32, local: u16, nic: AnyNic) -> Result<(), String> {
        use crate::fc::nic::NicFc;
        match self.node_ref.get(node as usize) {
            Some(NodeRef::Host(h)) if local < self.hosts[*h as usize].nics => {
                self.slab.tags.on |= nic.uses_tags();
                self.hosts[(*h + local as u32) as usize].nic = nic;
                Ok(())
            }
            Some(NodeRef::Host(h)) => {
                Err(format!("node {node} has no NIC on local port {local}; allowed: 0 to {}", self.hosts[*h as usize].nics - 1))
            }
            _ => Err(format!("node {node} is not a host")),
        }
    }
}
