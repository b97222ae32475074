//! A shared-buffer switch: ECMP forwarding, MMU admission, the flow-control module's hooks, and
//! ECN marking at dequeue.
//!
//! Order of work on a data packet, as in the HPCC ns-3 simulator's `SwitchNode`: route, classify,
//! admit (or drop and count), enqueue, flow-control `on_enqueue` (PFC's XOFF check); at dequeue:
//! release the buffer, flow-control `on_dequeue` (XON check), then RED-mark against the egress
//! queue length left behind (`aqm::red_ecn`), then, in Pulser and HPCC runs, Pulser's EIN check and
//! HPCC's INT record (`aqm`). Control packets (ACK, NACK, CNP) skip admission and pauses and take
//! the strict-priority control queue.

use crate::aqm::int::IntHop;
use crate::aqm::red_ecn::red_mark;
use crate::aqm::SwitchAqm;
use crate::fc::{FcMsg, FlowControl, PktMeta, SwitchView};
use crate::net::mmu::Mmu;
use crate::packet::{Packet, PacketId, PktKind};
use crate::rng::Rng;
use crate::sim::Simulation;
use crate::time::Rate;

pub struct Switch {
    pub node: u32,
    pub tier: u8,
    /// Global port ids, in local order.
    pub ports: Vec<u32>,
    pub port_rate: Vec<Rate>,
    pub mmu: Mmu,
    pub fc: crate::fc::AnyFc,
    pub(crate) fc_gen: u32,
    pub(crate) fc_at: Option<crate::time::Time>,
    /// (Kmin, Kmax) per local port.
    pub ecn: Vec<(u64, u64)>,
    /// EIN and INT state (Pulser and HPCC runs only; see `aqm`).
    pub aqm: SwitchAqm,
    pub rng: Rng,
}

/// Build the read-only view a flow-control hook gets, borrowing only the fields it needs so the
/// module itself can be borrowed mutably beside it.
macro_rules! view {
    ($sw:expr, $nq:expr) => {
        SwitchView { node: $sw.node, mmu: &$sw.mmu, port_rate: &$sw.port_rate, nqueues: $nq }
    };
}

const PFC_FRAME_BYTES: u32 = 64;

/// Queue what the last hook of switch `$s` asked for (usually nothing). A macro, not a method,
/// so that it borrows only the two buffers while a packet is still borrowed from the slab.
macro_rules! collect_actions {
    ($self:ident, $s:expr) => {
        if !$self.fc_out.is_empty() {
            for a in $self.fc_out.drain(..) {
                $self.acts.push(($s, a));
            }
        }
    };
}

impl Simulation {
    #[inline]
    fn meta(pkt: &Packet, egress: u16) -> PktMeta {
        PktMeta {
            flow: pkt.flow,
            src: pkt.src,
            dst: pkt.dst,
            size: pkt.size,
            prio: pkt.prio,
            ingress: pkt.ingress,
            egress,
            queue: pkt.queue,
        }
    }

    /// A packet arrived at switch `s` on global port `inp`.
    pub(crate) fn switch_receive(&mut self, s: u32, inp: u32, id: PacketId) {
        let now = self.now;
        let nq = self.cfg.switch.nqueues;
        let pkt = self.slab.get_mut(id);
        let out = self.routes.pick(self.switches[s as usize].node, pkt.dst, pkt.hash as u64);
        if pkt.kind.is_control() {
            self.ports[out as usize].ctrl.push_back(id);
            self.kick(out);
            return;
        }
        pkt.ingress = self.ports[inp as usize].local;
        let egress = self.ports[out as usize].local;
        let sw = &mut self.switches[s as usize];
        let mut meta = Self::meta(pkt, egress);
        let q = sw.fc.classify(now, &meta, &view!(sw, nq)) as usize;
        pkt.queue = q as u8;
        meta.queue = q as u8;
        match sw.mmu.admit(meta.ingress as usize, meta.prio as usize, egress as usize, q, meta.size) {
            None => {
                sw.fc.on_drop(now, &meta, &view!(sw, nq), &mut self.fc_out);
                collect_actions!(self, s);
                let c = &mut self.stats.counters;
                c.drops += 1;
                c.data_bytes_dropped += pkt.payload as u64;
                self.flows[pkt.flow as usize].dropped_bytes += pkt.payload as u64;
                self.slab.free(id);
            }
            Some(charge) => {
                pkt.charge = charge;
                self.ports[out as usize].enqueue_data(q, id, meta.size);
                sw.fc.on_enqueue(now, &meta, &view!(sw, nq), &mut self.fc_out);
                collect_actions!(self, s);
                self.kick(out);
            }
        }
        self.arm_fc_timer(s);
        self.apply_actions();
    }

    /// Take the next data packet of switch port `p` (global id) by DRR, releasing its buffer.
    pub(crate) fn switch_dequeue(&mut self, s: u32, p: u32) -> Option<PacketId> {
        let now = self.now;
        let nq = self.cfg.switch.nqueues;
        let port = &mut self.ports[p as usize];
        let q = port.pick_data(now, &self.slab)?;
        let head = port.queues[q][0];
        let pkt = self.slab.get_mut(head);
        let id = port.dequeue_data(q, pkt.size);
        let egress = port.local;
        let sw = &mut self.switches[s as usize];
        sw.mmu.release(pkt.ingress as usize, pkt.prio as usize, egress as usize, q, pkt.size, pkt.charge);
        let meta = Self::meta(pkt, egress);
        sw.fc.on_dequeue(now, &meta, &view!(sw, nq), &mut self.fc_out);
        collect_actions!(self, s);
        if self.cfg.switch.ecn.enabled && !pkt.ecn() {
            let (kmin, kmax) = sw.ecn[egress as usize];
            let qlen = sw.mmu.egress_bytes(egress as usize, q);
            if red_mark(qlen, kmin, kmax, self.cfg.switch.ecn.pmax, &mut sw.rng) {
                pkt.set_ecn();
            }
        }
        if sw.aqm.active {
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
        self.arm_fc_timer(s);
        Some(id)
    }

    /// A flow-control module asked switch `s` to send `msg` out of local port `local`.
    pub(crate) fn switch_send_control(&mut self, s: u32, local: u16, msg: FcMsg) {
        let sw = &self.switches[s as usize];
        let p = sw.ports[local as usize];
        match msg {
            FcMsg::Pfc { prio, quanta } => {
                let rate = self.ports[p as usize].clock.rate;
                let pl = &mut self.stats.pauses;
                pl.time_ps.push(self.now.0);
                pl.node.push(sw.node);
                pl.port.push(local);
                pl.prio.push(prio);
                pl.quanta.push(quanta);
                pl.duration_ps.push(crate::fc::quanta_duration(quanta, rate).0);
                if quanta == 0 {
                    self.stats.counters.resumes_sent += 1;
                } else {
                    self.stats.counters.pauses_sent += 1;
                }
                let id = self.slab.alloc(Packet {
                    kind: PktKind::Pfc,
                    prio,
                    quanta,
                    size: PFC_FRAME_BYTES,
                    src: sw.node,
                    dst: self.ports[(p ^ 1) as usize].node,
                    flow: u32::MAX,
                    ..Default::default()
                });
                self.ports[p as usize].ctrl.push_back(id);
                self.kick(p);
            }
        }
    }

    /// A control frame from the neighbour on local port `from` reached switch `s`'s module.
    pub(crate) fn switch_control(&mut self, s: u32, from: u16, msg: FcMsg) {
        let nq = self.cfg.switch.nqueues;
        let sw = &mut self.switches[s as usize];
        sw.fc.on_control(self.now, from, &msg, &view!(sw, nq), &mut self.fc_out);
        collect_actions!(self, s);
        self.arm_fc_timer(s);
        self.apply_actions();
    }

    pub(crate) fn switch_fc_timer(&mut self, s: u32) {
        let nq = self.cfg.switch.nqueues;
        let sw = &mut self.switches[s as usize];
        sw.fc.on_timer(self.now, &view!(sw, nq), &mut self.fc_out);
        collect_actions!(self, s);
    }
}
