//! A switch for testing flow-control schemes without a simulation, public so that a scheme written
//! outside the crate is tested the same way as the built-in ones.
//!
//! [`Sw`] has an MMU, real ports with their queues and gates, a packet slab and the packets' tags:
//! its view ([`Sw::view`]) answers every question a hook may ask (queue bytes and packets, gates,
//! active queues, rates, delays, HRTT), and a packet keeps the tags `on_enqueue` wrote until it
//! departs, where `stamp` writes the ones the next hop reads. [`Sw::arrive`] and [`Sw::depart`]
//! call the hooks in the engine's order (`crate::fc` lists it); [`Sw::apply`] carries out the gate
//! and join actions a module returns and hands back the frames it sent.
//!
//! Why not a whole `Simulation`: a scheme's defining behaviour ("pause at K, resume below K/2")
//! is a statement about hooks and queues; testing it through topology, workload and timing would
//! test the engine, and fail for reasons that are not the scheme's.

use crate::fc::view::SwitchInfo;
use crate::fc::{Actions, CtrlMsg, FcAction, FlowControl, PktMeta, SwitchView};
use crate::packet::Charge;
use crate::packet::{Packet, PacketId, Slab};
use crate::queues::mmu::{Mmu, MmuConfig};
use crate::queues::port::Port;
use crate::time::{Rate, Time, TxClock};
use std::collections::VecDeque;

/// The priority packets of [`Sw::pkt`] carry, and the queue they take.
pub const PRIO: u8 = 3;
/// Wire bytes of a packet of [`Sw::pkt`].
pub const PKT: u32 = 1000;

/// A packet waiting in a queue, with what its departure needs.
struct Held {
    meta: PktMeta,
    id: PacketId,
    charge: Charge,
}

/// A switch of `nports` ports of one rate, `nqueues` data queues per port on the default priority
/// map, an MMU and the packets in its queues.
pub struct Sw {
    pub mmu: Mmu,
    pub info: SwitchInfo,
    ports: Vec<Port>,
    slab: Slab,
    /// Per (port, queue), the packets in it with their tags, head first.
    held: Vec<VecDeque<Held>>,
}

impl Default for Sw {
    fn default() -> Sw {
        Sw::new()
    }
}

impl Sw {
    /// An 8-port 40 Gb/s switch with 1 us links, the P-PFC paper's 4 MB buffer (section 5), 50 KB
    /// headroom per port and its ECN thresholds (Table 2: Kmin 40 KB, Kmax 200 KB), 8 queues per
    /// port.
    pub fn new() -> Sw {
        let mut sw = Sw::with(8, 8, Rate::gbps(40), Time::from_us(1), MmuConfig { buffer_bytes: 4_000_000, ..Default::default() }, 50_000);
        sw.info.ecn = vec![(40_000, 200_000); 8];
        sw
    }

    /// A switch of `nports` ports of `rate` over links of `delay`, `nqueues` queues per port, the
    /// MMU `mmu` with `headroom` bytes per port.
    pub fn with(nports: usize, nqueues: usize, rate: Rate, delay: Time, mmu: MmuConfig, headroom: u64) -> Sw {
        let mut info = SwitchInfo::bare(vec![rate; nports], nqueues);
        info.ports = (0..nports as u32).collect();
        let ports = (0..nports).map(|p| Port::new(0, p as u16, TxClock::new(rate), delay, nqueues, 1500)).collect();
        let nprio = crate::queues::port::NPRIO;
        Sw {
            mmu: Mmu::new(mmu, vec![headroom; nports], nprio, nqueues),
            info,
            ports,
            slab: Slab::default(),
            held: (0..nports * nqueues).map(|_| VecDeque::new()).collect(),
        }
    }

    /// The view hooks get: every question answered from this switch's state.
    pub fn view(&self) -> SwitchView<'_> {
        SwitchView { info: &self.info, mmu: &self.mmu, ports: &self.ports }
    }

    /// A packet of [`PKT`] bytes and priority [`PRIO`] from `ingress` to `egress`.
    pub fn pkt(ingress: u16, egress: u16) -> PktMeta {
        PktMeta { ingress, egress, prio: PRIO, queue: PRIO as u16, size: PKT, ..Default::default() }
    }

    fn slot(&self, port: u16, queue: u16) -> usize {
        port as usize * self.info.nqueues + queue as usize
    }

    /// A packet arrives, as the engine takes it: `classify`, MMU admission (a refusal calls
    /// `on_drop` and returns `None`), the queue, `on_enqueue`. Returns the packet as queued.
    pub fn arrive(&mut self, fc: &mut impl FlowControl, now: Time, mut pkt: PktMeta, out: &mut Actions) -> Option<PktMeta> {
        pkt.queue = fc.classify(now, &pkt, &self.view());
        let Some(charge) = self.mmu.admit(pkt.ingress as usize, pkt.prio as usize, pkt.egress as usize, pkt.queue as usize, pkt.size) else {
            fc.on_drop(now, &pkt, &self.view(), out);
            return None;
        };
        let id = self.slab.alloc(Packet { size: pkt.size, flow: pkt.flow, ..Default::default() });
        self.ports[pkt.egress as usize].enqueue_data(pkt.queue as usize, id, pkt.size);
        fc.on_enqueue(now, &mut pkt, &self.view(), out);
        let slot = self.slot(pkt.egress, pkt.queue);
        self.held[slot].push_back(Held { meta: pkt, id, charge });
        Some(pkt)
    }

    /// The head packet of queue `queue` of port `port` departs: out of the queue and the buffer,
    /// `on_dequeue`, then `stamp`. Returns it with the tags the next hop reads; `None` if the
    /// queue is empty.
    pub fn depart(&mut self, fc: &mut impl FlowControl, now: Time, port: u16, queue: u16, out: &mut Actions) -> Option<PktMeta> {
        let slot = self.slot(port, queue);
        let Held { mut meta, id, charge } = self.held[slot].pop_front()?;
        self.ports[port as usize].dequeue_data(queue as usize, meta.size);
        self.slab.free(id);
        self.mmu.release(meta.ingress as usize, meta.prio as usize, port as usize, queue as usize, meta.size, charge);
        fc.on_dequeue(now, &meta, &self.view(), out);
        fc.stamp(now, &mut meta, &self.view());
        Some(meta)
    }

    /// `n` packets of [`Sw::pkt`] arrive; a refused one panics (the tests that use this want
    /// them all admitted).
    pub fn enq(&mut self, fc: &mut impl FlowControl, now: Time, ingress: u16, egress: u16, n: usize, out: &mut Actions) {
        for _ in 0..n {
            self.arrive(fc, now, Sw::pkt(ingress, egress), out).expect("admitted");
        }
    }

    /// The `n` oldest packets from `ingress` queued at `egress` (queue [`PRIO`]) depart.
    pub fn deq(&mut self, fc: &mut impl FlowControl, now: Time, ingress: u16, egress: u16, n: usize, out: &mut Actions) {
        let q = self.view().queue_of_prio(PRIO);
        for _ in 0..n {
            let slot = self.slot(egress, q);
            let at = self.held[slot].iter().position(|h| h.meta.ingress == ingress).expect("a packet from that ingress is queued");
            // move it to the head so that `depart` takes it (queues here are per ingress in effect)
            let h = self.held[slot].remove(at).expect("present");
            self.held[slot].push_front(h);
            self.depart(fc, now, egress, q, out);
        }
    }

    /// Carries out the gate and join actions in `out` (as the engine does) and returns the frames sent,
    /// as (local port, frame), in order; `out` is emptied.
    pub fn apply(&mut self, now: Time, out: &mut Actions) -> Vec<(u16, CtrlMsg)> {
        let mut sent = vec![];
        for a in out.drain(..) {
            match a {
                FcAction::Send { port, msg, .. } => sent.push((port, msg)),
                FcAction::Gate { port, queue, until } => self.ports[port as usize].set_gate(queue as usize, now, until),
                FcAction::Join { port, from, to } => {
                    let (a, b) = (self.slot(port, from), self.slot(port, to));
                    if let Some(id) = self.ports[port as usize].move_head(from as usize, to as usize, &mut self.slab) {
                        let mut h = self.held[a].pop_front().expect("the port's queue and the held packets agree");
                        debug_assert_eq!(h.id, id);
                        h.meta.queue = to;
                        self.mmu.move_egress(port as usize, from as usize, to as usize, h.meta.size);
                        self.held[b].push_back(h);
                    }
                }
                FcAction::Kick { .. } | FcAction::Markers { .. } => {}
            }
        }
        sent
    }

    /// Whether the gate of `queue` at `port` is closed at `now`.
    pub fn gate_closed(&self, port: u16, queue: u16, now: Time) -> bool {
        self.view().gate_closed(port, queue, now)
    }
}
