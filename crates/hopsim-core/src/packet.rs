//! Packets live in a slab and move by id; queues and wires hold ids only.
//!
//! Headers are plain fields: the simulator never parses bytes. Fields that only matter while the
//! packet sits in one switch (`ingress`, `queue`, `charge`) are rewritten at every hop.
//!
//! A `Packet` is 56 bytes and stays so (a test checks it): scheme-specific headers that most runs
//! never use do not grow it. Single-bit marks share the `marks` byte (ECN's CE, Pulser's EIN);
//! HPCC's INT records live beside the slab in [`crate::aqm::int::IntStore`], indexed by packet id.

use crate::aqm::int::IntStore;
use crate::net::mmu::Charge;
use crate::time::Time;

pub type PacketId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PktKind {
    #[default]
    Data,
    Ack,
    Nack,
    /// DCQCN congestion notification packet, receiver to sender.
    Cnp,
    /// IEEE 802.1Qbb PFC frame (link-local: never forwarded).
    Pfc,
}

impl PktKind {
    /// Control packets take the strict-priority control queue, bypass MMU accounting and are never
    /// paused, as in the HPCC simulator (its queue 0).
    #[inline]
    pub fn is_control(self) -> bool {
        !matches!(self, PktKind::Data)
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    pub kind: PktKind,
    pub prio: u8,
    /// Mark bits: [`Packet::ECN`] (Congestion Experienced on data, ECN-Echo on ACKs) and
    /// [`Packet::EIN`] (Pulser's Explicit Incast Notification, and its echo on ACKs).
    pub marks: u8,
    /// Egress queue at the current switch.
    pub queue: u8,
    /// Local port it entered the current switch by.
    pub ingress: u16,
    /// PFC frame: pause quanta (0 resumes).
    pub quanta: u16,
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    /// ECMP hash of the flow's five-tuple.
    pub hash: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Data: payload bytes. ACK and NACK: the window the receiver advertises, in bytes (ICTCP's
    /// receive window; 0 = none advertised). A TCP header has the field; RoCE ACKs leave it 0.
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

/// A slab with a free list: freed slots are reused, so the packet store stays as large as the
/// peak number of packets alive, not the number ever sent.
#[derive(Default)]
pub struct Slab {
    pkts: Vec<Packet>,
    free: Vec<PacketId>,
    /// HPCC's INT records by packet slot (empty unless the run stamps INT).
    pub int: IntStore,
}

impl Slab {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.pkts[id as usize] = p;
            id
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as PacketId
        }
    }
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.pkts[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.pkts[id as usize]
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
