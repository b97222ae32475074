//! A shared-buffer switch: ECMP forwarding, MMU admission, the flow-control module's hooks, and
//! ECN marking at dequeue.
//!
//! Order of work on a data packet, as in the HPCC ns-3 simulator's `SwitchNode`: route, classify,
//! admit (or drop and count), enqueue, flow-control `on_enqueue` (PFC's XOFF check); at dequeue:
//! release the buffer, flow-control `on_dequeue` (XON check) and `stamp` (tags for the next hop),
//! then RED-mark against the egress queue length left behind (`aqm::red_ecn`), then, in Pulser and
//! HPCC runs, Pulser's EIN check and HPCC's INT record (`aqm`). Control packets (ACK, NACK, CNP)
//! skip admission and pauses and take the strict-priority control queue.

use crate::aqm::SwitchAqm;
use crate::aqm::red_ecn::red_mark;
use crate::fc::view::SwitchInfo;
use crate::fc::{AnyFc, PktMeta};
use crate::net::hop_hooks::{Generic, HopHooks, PfcAlone};
use crate::packet::int::IntHop;
use crate::packet::{Packet, PacketId, Tags};
use crate::queues::mmu::Mmu;
use crate::rng::Rng;
use crate::sim::Simulation;
use crate::stats::record::{EV_DEQUEUE, EV_DROP, EV_ENQUEUE};

pub struct Switch {
    pub node: u32,
    /// What the switch is (tier, ports, rates, peers, ECN thresholds), fixed at assembly.
    pub info: SwitchInfo,
    pub mmu: Mmu,
    pub fc: crate::fc::AnyFc,
    pub(crate) fc_gen: u32,
    pub(crate) fc_at: Option<crate::time::Time>,
    /// EIN and INT state (Pulser and HPCC runs only; see `aqm`).
    pub aqm: SwitchAqm,
    /// RED marking's random stream.
    pub rng: Rng,
}

/// Build the read-only view a flow-control hook gets, borrowing only the fields it needs so the
/// module itself can be borrowed mutably beside it.
macro_rules! view {
    ($sw:expr, $ports:expr) => {
        $crate::fc::SwitchView { info: &$sw.info, mmu: &$sw.mmu, ports: $ports }
    };
}
pub(crate) use view;

/// Queue what the last hook of node `$node` asked for (usually nothing). A macro, not a method,
/// so that it borrows only the two buffers while a packet is still borrowed from the slab.
macro_rules! collect_actions {
    ($self:ident, $node:expr) => {
        if !$self.fc_out.is_empty() {
            for a in $self.fc_out.drain(..) {
                $self.acts.push(($node, a));
            }
        }
    };
}
pub(crate) use collect_actions;

/// What a hook sees of a packet leaving by local port `egress`; `tags` from the tag store.
#[inline]
pub(crate) fn meta(pkt: &Packet, tags: Tags, egress: u16) -> PktMeta {
    PktMeta {
        flow: pkt.flow,
        src: pkt.src,
        dst: pkt.dst,
        size: pkt.size,
        prio: pkt.prio,
        ingress: pkt.ingress,
        egress,
        queue: pkt.queue,
        hash: pkt.hash,
        flags: pkt.tag_flags | if matches!(pkt.kind, crate::packet::PktKind::Ack | crate::packet::PktKind::Nack) { crate::packet::tag::ACK } else { 0 },
        tags,
    }
}

impl Simulation {
    /// A packet arrived at switch `s` on global port `inp`.
    pub(crate) fn switch_receive(&mut self, s: u32, inp: u32, id: PacketId) {
        let tags = self.slab.tags.get(id);
        // the switch's node from the port the packet came in by (touched next anyway), not from
        // the switch, whose first cache line this path would otherwise load only for it
        let out = self.route_cached(self.ports[inp as usize].node, id);
        if out == crate::topo::routes::NO_ROUTE {
            // a link failure cut the destination off (`faults.rs`)
            return self.drop_unreachable(inp, id);
        }
        let pkt = self.slab.get_mut(id);
        // ACKs and NACKs ride the data path under `transport.ack_priority = "data"`
        if pkt.kind.is_control() && !(self.acks_as_data && matches!(pkt.kind, crate::packet::PktKind::Ack | crate::packet::PktKind::Nack)) {
            self.ports[out as usize].ctrl.push_back(id);
            self.kick(out);
            return;
        }
        pkt.ingress = self.ports[inp as usize].local;
        if matches!(self.switches[s as usize].fc, AnyFc::Pfc(_)) {
            self.receive_data::<PfcAlone>(s, out, id, tags);
        } else {
            self.receive_data::<Generic>(s, out, id, tags);
        }
        self.arm_fc_timer(s);
        self.apply_actions();
    }

    /// Classify, admit (or drop) and queue a data packet at switch `s` for global port `out`,
    /// calling the flow-control module the way `H` does (`net::hop_hooks`).
    #[inline(always)]
    fn receive_data<H: HopHooks>(&mut self, s: u32, out: u32, id: PacketId, tags: Tags) {
        let now = self.now;
        let tags_on = self.slab.tags.on;
        let pkt = self.slab.get_mut(id);
        let egress = self.ports[out as usize].local;
        let sw = &mut self.switches[s as usize];
        let mut h = H::new(pkt, tags, egress);
        let q = h.classify(&mut sw.fc, now, &view!(sw, &self.ports));
        pkt.queue = q;
        let node = sw.node;
        match sw.mmu.admit(pkt.ingress as usize, pkt.prio as usize, egress as usize, q as usize, pkt.size) {
            None => {
                h.on_drop(&mut sw.fc, now, &view!(sw, &self.ports), &mut self.fc_out);
                collect_actions!(self, node);
                let c = &mut self.stats.counters;
                c.drops += 1;
                c.data_bytes_dropped += pkt.payload as u64;
                let (f, payload) = (pkt.flow, pkt.payload as u64);
                if self.rec.wants(self.now) {
                    self.record_packet(s, out, q as usize, id, EV_DROP, false);
                }
                self.slab.free(id);
                self.flow_dropped(f, payload);
            }
            Some(charge) => {
                pkt.charge = charge;
                let marked = self.cfg.switch.ecn_mark_at == crate::params::MarkAt::Enqueue
                    && mark_on_arrival(pkt, egress as usize, q as usize, sw, &self.cfg.switch, self.ecn_on_port);
                let size = pkt.size;
                self.ports[out as usize].enqueue_data(q as usize, id, size);
                let changed = h.on_enqueue(&mut sw.fc, now, &view!(sw, &self.ports), &mut self.fc_out);
                // only modules that use tags write them (`FlowControl::uses_tags`)
                if let Some((flags, t)) = changed.filter(|_| tags_on) {
                    pkt.tag_flags = flags & !crate::packet::tag::ACK;
                    self.slab.tags.set(id, t);
                }
                collect_actions!(self, node);
                if self.rec.wants(self.now) {
                    self.record_packet(s, out, q as usize, id, EV_ENQUEUE, marked);
                }
                // the module's actions take effect before the port picks its next packet: a gate
                // closed at this arrival (Floodgate's new VOQ, whose destination has no window)
                // must hold this very packet
                self.apply_actions();
                self.kick(out);
            }
        }
    }

    /// Take the next data packet of switch port `p` (global id) by its scheduler, releasing its
    /// buffer.
    pub(crate) fn switch_dequeue(&mut self, s: u32, p: u32) -> Option<PacketId> {
        if matches!(self.switches[s as usize].fc, AnyFc::Pfc(_)) {
            self.dequeue_data::<PfcAlone>(s, p)
        } else {
            self.dequeue_data::<Generic>(s, p)
        }
    }

    /// `switch_dequeue`, calling the flow-control module the way `H` does (`net::hop_hooks`).
    #[inline(always)]
    fn dequeue_data<H: HopHooks>(&mut self, s: u32, p: u32) -> Option<PacketId> {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let q = port.pick_data(now, &self.slab)?;
        let head = port.queues[q][0];
        let pkt = self.slab.get_mut(head);
        let id = port.dequeue_data(q, pkt.size);
        let egress = port.local;
        let sw = &mut self.switches[s as usize];
        sw.mmu.release(pkt.ingress as usize, pkt.prio as usize, egress as usize, q, pkt.size, pkt.charge);
        if let Some(&next) = port.queues[q].front() {
            self.slab.prefetch(next);
        }
        if port.has_markers() {
            // order markers at the new head of q leave or hold the queue (rare: only schemes that
            // insert markers pay for this)
            port.settle(q, &mut self.slab);
        }
        let tags = self.slab.tags.get(id);
        let pkt = self.slab.get_mut(id);
        let mut h = H::new(pkt, tags, egress);
        h.on_dequeue(&mut sw.fc, now, &view!(sw, &self.ports), &mut self.fc_out);
        let node = sw.node;
        collect_actions!(self, node);
        // only modules that use tags stamp them (`FlowControl::uses_tags` turns the store on)
        if self.slab.tags.on {
            if let Some((flags, t)) = h.stamp(&mut sw.fc, now, &view!(sw, &self.ports)) {
                self.slab.get_mut(id).tag_flags = flags & !crate::packet::tag::ACK;
                self.slab.tags.set(id, t);
            }
        }
        let port = &self.ports[p as usize];
        let pkt = self.slab.get_mut(id);
        let mut marked = false;
        // an ACK in a data queue (`transport.ack_priority = "data"`) is neither marked (its ECN
        // bit echoes its data packet's mark) nor stamped (it carries no INT)
        let data = pkt.kind == crate::packet::PktKind::Data;
        if data && self.cfg.switch.ecn.enabled && !pkt.ecn() && self.cfg.switch.ecn_mark_at == crate::params::MarkAt::Dequeue {
            let (kmin, kmax) = sw.info.ecn[egress as usize];
            let qlen = marking_bytes(&sw.mmu, egress as usize, q, self.ecn_on_port);
            if red_mark(qlen, kmin, kmax, self.cfg.switch.ecn.pmax, &mut sw.rng) {
                pkt.set_ecn();
                marked = true;
            }
        }
        if data && sw.aqm.active {
            // Pulser's EIN (Algorithm 1) and HPCC's INT record, both against the bytes the port
            // holds after this packet left; INT's txBytes are those sent before it.
            let qlen = port.queued_bytes();
            if let Some(ein) = sw.aqm.ein.get_mut(egress as usize) {
                if ein.on_dequeue(now, qlen) {
                    pkt.set_ein();
                }
            }
            if sw.aqm.int_max_hops > 0 {
                let hop = IntHop { ts: now, tx_bytes: port.tx_bytes, qlen, rate: port.clock.rate };
                self.slab.int.stack_mut(id).push(hop, sw.aqm.int_max_hops);
            }
        }
        if self.rec.wants(self.now) {
            self.record_packet(s, p, q, id, EV_DEQUEUE, marked);
        }
        self.arm_fc_timer(s);
        Some(id)
    }
}

/// The bytes RED compares with its thresholds for queue `q` of `egress`: that queue's, or with
/// `on_port` every data queue of the port (`Scheme::ecn_on_port`).
#[inline]
fn marking_bytes(mmu: &crate::queues::mmu::Mmu, egress: usize, q: usize, on_port: bool) -> u64 {
    if on_port {
        mmu.egress_port_bytes(egress)
    } else {
        mmu.egress_bytes(egress, q)
    }
}

/// `ecn.mark_at = "enqueue"`: RED/step marking of an admitted data packet against the bytes its
/// egress queue held when it arrived (DCTCP §3.1: "marked with the CE codepoint if the queue
/// occupancy is greater than K upon its arrival"). ACKs riding data queues are not marked.
#[inline(never)]
fn mark_on_arrival(pkt: &mut Packet, egress: usize, q: usize, sw: &mut Switch, cfg: &crate::params::SwitchConfig, on_port: bool) -> bool {
    if pkt.kind != crate::packet::PktKind::Data || !cfg.ecn.enabled || pkt.ecn() {
        return false;
    }
    // the MMU has just counted the packet in: what it found is the rest
    let found = marking_bytes(&sw.mmu, egress, q, on_port).saturating_sub(pkt.size as u64);
    let (kmin, kmax) = sw.info.ecn[egress];
    let m = red_mark(found, kmin, kmax, cfg.ecn.pmax, &mut sw.rng);
    if m {
        pkt.set_ecn();
    }
    m
}
