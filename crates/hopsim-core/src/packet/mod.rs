//! Packets live in a slab and move by id; queues and wires hold ids only.
//!
//! Headers are plain fields: the simulator never parses bytes. Fields that only matter while the
//! packet sits in one switch (`ingress`, `queue`, `charge`) are rewritten at every hop.
//!
//! A `Packet` is 56 bytes and stays so (a test checks it): scheme-specific headers that most runs
//! never use do not grow it. Where each kind of extra header lives:
//! - single-bit marks share the `marks` byte (ECN's CE, Pulser's EIN);
//! - one-bit tags that a hop writes for the next (BFC's counterIncr, FlowSail's ifCongested, the
//!   incast label) use the spare byte `tag_flags`;
//! - wider tags (BFC's upstreamQ, a per-hop PSN, a scheduling rank, ICTCP's advertised receive
//!   window and its receiver's timestamps) live in [`TagStore`], a side store indexed by packet id that exists only in runs whose
//!   schemes use it;
//! - a control frame's body (PFC quanta, queue pause, credit, ...) lives in [`Slab::ctrl`], and
//!   HPCC's INT records in [`int::IntStore`], both indexed by packet id.

pub mod ctrl;
pub mod int;

use crate::time::Time;
use ctrl::CtrlMsg;
use int::IntStore;

pub type PacketId = u32;

/// Where the MMU (`crate::queues::mmu`) charged an admitted packet's bytes, so that dequeue can
/// undo exactly that. Here, not in the MMU, because every packet carries it (`Packet::charge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Charge {
    #[default]
    Reserved,
    /// Partly or wholly in the shared pool: `shared` bytes of the packet went there.
    Shared { shared: u32 },
    Headroom,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PktKind {
    #[default]
    Data,
    Ack,
    Nack,
    /// DCQCN congestion notification packet, receiver to sender.
    Cnp,
    /// A link-local control frame (PFC, queue pause, credit, destination or flow pause, ...):
    /// never forwarded; its body is in [`Slab::ctrl`].
    Ctrl,
    /// A zero-length order marker inside a data queue (never sent; see `queues::port`).
    Marker,
}

impl PktKind {
    /// Control packets take the strict-priority control queue, bypass MMU accounting and are never
    /// paused, as in the HPCC simulator (its queue 0).
    #[inline]
    pub fn is_control(self) -> bool {
        !matches!(self, PktKind::Data)
    }

    /// Packets of a flow (counted in its `Flow::in_net` while alive), not link-local frames or
    /// markers.
    #[inline]
    pub fn of_flow(self) -> bool {
        matches!(self, PktKind::Data | PktKind::Ack | PktKind::Nack | PktKind::Cnp)
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    pub kind: PktKind,
    pub prio: u8,
    /// Mark bits: [`Packet::ECN`] (Congestion Experienced on data, ECN-Echo on ACKs) and
    /// [`Packet::EIN`] (Pulser's Explicit Incast Notification, and its echo on ACKs).
    pub marks: u8,
    /// One-bit tags a hop writes for the next one ([`tag`]).
    pub tag_flags: u8,
    /// Egress queue at the current switch.
    pub queue: u16,
    /// Local port it entered the current switch by.
    pub ingress: u16,
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    /// ECMP hash of the flow's five-tuple.
    pub hash: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Data: payload bytes (0 on ACKs and control frames).
    pub payload: u32,
    /// Data: byte offset of the first payload byte. ACK/NACK: cumulative ack (next expected byte).
    pub seq: u64,
    /// Data: send time; ACK/NACK: the echoed send time of the data packet they answer.
    pub ts: Time,
    /// MMU pools it was charged to at the current switch.
    pub charge: Charge,
}

impl Packet {
    /// ECN Congestion Experienced (data) / ECN-Echo (ACK).
    pub const ECN: u8 = 1;
    /// Explicit Incast Notification (data) / its echo (ACK) (Pulser §III-A).
    pub const EIN: u8 = 2;

    #[inline]
    pub fn ecn(&self) -> bool {
        self.marks & Self::ECN != 0
    }
    #[inline]
    pub fn set_ecn(&mut self) {
        self.marks |= Self::ECN;
    }
    #[inline]
    pub fn ein(&self) -> bool {
        self.marks & Self::EIN != 0
    }
    #[inline]
    pub fn set_ein(&mut self) {
        self.marks |= Self::EIN;
    }
}

/// Bits of [`Packet::tag_flags`].
pub mod tag {
    /// BFC's counterIncr: the upstream counted this packet in its pause counter (§3.3).
    pub const COUNTER_INCR: u8 = 1;
    /// FlowSail's ifCongested: the flow is a congested one upstream (Algorithm 1).
    pub const IF_CONGESTED: u8 = 2;
    /// The packet's flow is tagged incast (BFC + IncastLabel, App. E.6; Floodgate's evaluation).
    pub const INCAST: u8 = 4;
    /// BFC's sampling (App. E.1): the packet took part in this switch's bookkeeping.
    pub const SAMPLED: u8 = 8;
    /// A retransmitted copy (go-back-N): set by the sending host, read by the latency recorder
    /// (`stats::latency`), which times first transmissions only.
    pub const RETX: u8 = 16;
    /// An ACK or NACK riding the data queues (`transport.ack_priority = "data"`): set in what a
    /// switch's flow-control hooks see of it, never stored in the packet.
    pub const ACK: u8 = 32;
}

/// Tags wider than a bit, written by one hop (or the sending NIC) and read by the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tags {
    /// The queue the packet left the previous hop from (BFC's upstreamQ, §3.3).
    pub upstream_q: u16,
    /// A per-hop packet sequence number (Floodgate's PSN, §4 loss recovery).
    pub psn: u32,
    /// A scheduling rank: lower goes first under the `rank` scheduler (BFC's SRF, App. E.2).
    pub rank: u32,
    /// The receive window an ACK advertises, in bytes (ICTCP; 0 = none advertised).
    pub rwnd: u32,
    /// A receiver's clock, RFC 7323 style (`net::timestamps`): on an ACK the stamp it left with
    /// (TSval), on data the newest such stamp its sender heard (TSecr); 0 = none.
    pub rcv_ts: u32,
    /// The flow's flow-table key as a seed simulator reads it from the headers, written by the
    /// sender where the scheme asks (`Scheme::flow_keys`; BFC's `flow_index = "ns3_header"`).
    pub key: u32,
}

/// The side store of [`Tags`]: one entry per packet slot, kept only when the run uses tags, so a
/// run without them pays nothing.
#[derive(Default)]
pub struct TagStore {
    pub on: bool,
    v: Vec<Tags>,
}

impl TagStore {
    #[inline]
    pub fn get(&self, id: PacketId) -> Tags {
        if self.on {
            self.v.get(id as usize).copied().unwrap_or_default()
        } else {
            Tags::default()
        }
    }
    #[inline]
    pub fn set(&mut self, id: PacketId, t: Tags) {
        if !self.on {
            return;
        }
        let i = id as usize;
        if i >= self.v.len() {
            self.v.resize(i + 1, Tags::default());
        }
        self.v[i] = t;
    }
}

/// A packet with what it carries beside the slab (`Slab::export`), but its INT records
/// (`Slab::int_of`): 96 bytes, where the records alone are 272 and most runs stamp none, so a
/// handed-over packet carries them apart (`engine::Batch`).
#[derive(Clone, Copy, Debug)]
pub struct Carried {
    pub pkt: Packet,
    pub tags: Tags,
    pub ctrl: Option<CtrlMsg>,
}

/// A slab with a free list: freed slots are reused, so the packet store stays as large as the
/// peak number of packets alive, not the number ever sent.
#[derive(Default)]
pub struct Slab {
    pkts: Vec<Packet>,
    free: Vec<PacketId>,
    /// HPCC's INT records by packet slot (empty unless the run stamps INT).
    pub int: IntStore,
    /// Wide tags by packet slot (off unless the run's schemes use them).
    pub tags: TagStore,
    /// Control-frame bodies by packet slot (grown on the first frame that needs the slot).
    ctrl: Vec<CtrlMsg>,
}

impl Slab {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        let id = if let Some(id) = self.free.pop() {
            self.pkts[id as usize] = p;
            id
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as PacketId
        };
        if self.tags.on {
            self.tags.set(id, Tags::default());
        }
        id
    }

    /// A control frame with body `msg`.
    pub fn alloc_ctrl(&mut self, p: Packet, msg: CtrlMsg) -> PacketId {
        let id = self.alloc(Packet { kind: PktKind::Ctrl, ..p });
        let i = id as usize;
        if i >= self.ctrl.len() {
            self.ctrl.resize(i + 1, CtrlMsg::default());
        }
        self.ctrl[i] = msg;
        id
    }

    /// The body of control frame `id`.
    #[inline]
    pub fn ctrl(&self, id: PacketId) -> CtrlMsg {
        self.ctrl[id as usize]
    }

    /// Scheduling rank of packet `id` (0 without tags).
    #[inline]
    pub fn rank(&self, id: PacketId) -> u64 {
        self.tags.get(id).rank as u64
    }
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.pkts[id as usize]
    }
    /// Ask the cache for packet `id` ahead of its use. Why: a packet is touched again only when
    /// it reaches the far end of a wire or the head of a queue, by which time thousands of other
    /// packets have passed and its slot has left the cache; the first touch was the largest
    /// single cost of a run (a tenth of it at the far end of the wire alone). The engine knows
    /// which packet comes next at both places, one serialisation time ahead, so it asks then.
    /// A hint only: no effect on results.
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `_mm_prefetch` never faults and reads nothing; the address is computed with
        // wrapping arithmetic and need not be valid.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.pkts.as_ptr().wrapping_add(id as usize) as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.pkts[id as usize]
    }
    /// The packets alive now, by a walk of the whole slab (for checks at the end of a run, not
    /// for the event loop).
    pub fn live_packets(&self) -> impl Iterator<Item = &Packet> + '_ {
        let mut freed = vec![false; self.pkts.len()];
        for &id in &self.free {
            freed[id as usize] = true;
        }
        self.pkts.iter().zip(freed).filter(|(_, f)| !f).map(|(p, _)| p)
    }
    /// Everything packet `id` carries, for a packet that crosses to another partition
    /// (`crate::engine`): the packet, its side-store entries and a control frame's body.
    pub fn export(&self, id: PacketId) -> Carried {
        let pkt = self.pkts[id as usize];
        Carried {
            pkt,
            tags: self.tags.get(id),
            ctrl: (pkt.kind == PktKind::Ctrl).then(|| self.ctrl[id as usize]),
        }
    }

    /// A packet handed over by another partition, in a slot of this slab: the same contents,
    /// side stores included, as if it had never left its first slab.
    pub fn import(&mut self, c: &Carried, int: Option<int::IntStack>) -> PacketId {
        let id = match c.ctrl {
            Some(msg) => self.alloc_ctrl(c.pkt, msg),
            None => self.alloc(c.pkt),
        };
        if self.tags.on {
            self.tags.set(id, c.tags);
        }
        self.int.set(id, int);
        id
    }
    /// The INT records of packet `id`, if the run stamps them (`export` leaves them out).
    #[inline]
    pub fn int_of(&self, id: PacketId) -> Option<int::IntStack> {
        self.int.get(id)
    }

    /// Packets alive now.
    pub fn live(&self) -> usize {
        self.pkts.len() - self.free.len()
    }
    /// Peak packets alive at once (the slab never shrinks).
    pub fn capacity_used(&self) -> usize {
        self.pkts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slab_reuses_freed_slots() {
        let mut s = Slab::default();
        let a = s.alloc(Packet { size: 1, ..Default::default() });
        let b = s.alloc(Packet { size: 2, ..Default::default() });
        s.free(a);
        let c = s.alloc(Packet { size: 3, ..Default::default() });
        assert_eq!(c, a);
        assert_eq!(s.get(b).size, 2);
        assert_eq!(s.get(c).size, 3);
        assert_eq!(s.live(), 2);
    }

    /// A packet handed to another partition's slab arrives with its INT records and only them,
    /// though they travel beside it (`int_of`): into a reused slot that held another packet's.
    #[test]
    fn a_handed_over_packet_keeps_its_int_records() {
        let hop = |k: u64| int::IntHop { ts: Time(k), tx_bytes: k, qlen: 10 * k, rate: crate::time::Rate::gbps(100) };
        let mut here = Slab::default();
        let id = here.alloc(Packet { size: 1048, flow: 7, ..Default::default() });
        for k in 1..=3 {
            here.int.stack_mut(id).push(hop(k), 5);
        }
        let bare = here.alloc(Packet { size: 64, flow: 8, ..Default::default() });
        let mut there = Slab::default();
        let stale = there.alloc(Packet::default());
        there.int.stack_mut(stale).push(hop(9), 5);
        there.free(stale);
        let got = there.import(&here.export(id), here.int_of(id));
        assert_eq!(got, stale, "the freed slot is reused");
        assert_eq!(there.get(got).flow, 7);
        assert_eq!(there.int.hops(got).iter().map(|h| h.qlen).collect::<Vec<_>>(), vec![10, 20, 30]);
        there.free(got);
        let got = there.import(&here.export(bare), here.int_of(bare));
        assert_eq!((there.get(got).flow, there.int.hops(got).len()), (8, 0), "no records, not the slot's old ones");
    }

    #[test]
    fn packet_stays_56_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 56);
    }

    #[test]
    fn mark_bits_are_independent() {
        let mut p = Packet::default();
        assert!(!p.ecn() && !p.ein());
        p.set_ein();
        assert!(!p.ecn() && p.ein());
        p.set_ecn();
        assert!(p.ecn() && p.ein());
    }
}
