//! In-band network telemetry (INT) for HPCC (Li et al., "HPCC: High Precision Congestion
//! Control", SIGCOMM 2019, §3.1 and Figure 4).
//!
//! Every switch on a data packet's path appends one record for the egress port the packet leaves
//! by, at dequeue: the time, the port's transmitted-byte counter (`txBytes`), the queue length it
//! leaves behind (`qLen`) and the port's line rate (`B`). The receiver copies the records into its
//! ACK and the sender's HPCC reads them (`cc::hpcc`).
//!
//! Facts taken from the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-Control,
//! `switch-node.cc` `SwitchNotifyDequeue`, `int-header.h`):
//! - the record is pushed when the packet leaves the egress queue, with `txBytes` counting the
//!   bytes the port sent *before* this packet and `qLen` the bytes still queued at the port (all
//!   its queues) after it left;
//! - the INT header has a fixed size on the wire, sized for `maxHop = 5` hops of 8 bytes plus a
//!   2-byte hop count (42 bytes), on every data packet and echoed in every ACK. `HpccConfig::int`
//!   sets those sizes; we keep the records at full precision (the simulator's 8-byte hop packs them
//!   into 24/20/17-bit fields with units of 128 B and 80 B, which matters only for wrap-around).
//!
//! **Where the records live.** Not in `Packet`: most runs never use INT and every packet would pay
//! for it. They sit in an [`IntStore`] beside the packet slab, one [`IntStack`] per packet slot,
//! indexed by `PacketId`, grown lazily and touched only when the run's congestion control is HPCC.

use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// Capacity of one stack. Longer paths keep their first `MAX_INT_HOPS` hops (a fat-tree path
/// crosses 5 switches; multi-DC paths a few more).
pub const MAX_INT_HOPS: usize = 8;

/// One switch's record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet left the egress queue.
    pub ts: Time,
    /// Bytes the port had transmitted before this packet (HPCC's `txBytes`).
    pub tx_bytes: u64,
    /// Bytes still queued at the port after this packet left (HPCC's `qLen`).
    pub qlen: u64,
    /// The port's line rate (HPCC's `B`).
    pub rate: Rate,
}

/// The records a packet has collected so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntStack {
    n: u8,
    hops: [IntHop; MAX_INT_HOPS],
}

impl IntStack {
    #[inline]
    pub fn clear(&mut self) {
        self.n = 0;
    }
    /// Append a hop unless `max_hops` (capped at `MAX_INT_HOPS`) are already recorded.
    #[inline]
    pub fn push(&mut self, hop: IntHop, max_hops: usize) -> bool {
        let n = self.n as usize;
        if n < max_hops.min(MAX_INT_HOPS) {
            self.hops[n] = hop;
            self.n += 1;
            true
        } else {
            false
        }
    }
    #[inline]
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

/// INT stacks by packet slot (see the module docs).
#[derive(Default)]
pub struct IntStore {
    stacks: Vec<IntStack>,
}

impl IntStore {
    /// The stack of packet slot `id`, growing the store if needed.
    #[inline]
    pub fn stack_mut(&mut self, id: u32) -> &mut IntStack {
        let i = id as usize;
        if i >= self.stacks.len() {
            self.stacks.resize(i + 1, IntStack::default());
        }
        &mut self.stacks[i]
    }
    /// The hops recorded for packet slot `id` (none if the slot never carried INT).
    #[inline]
    pub fn hops(&self, id: u32) -> &[IntHop] {
        self.stacks.get(id as usize).map(|s| s.hops()).unwrap_or(&[])
    }
    /// The stack of slot `id`, if the store has one (`Slab::export`).
    #[inline]
    pub fn get(&self, id: u32) -> Option<IntStack> {
        self.stacks.get(id as usize).copied()
    }
    /// Slot `id` holds `stack`; `None` reads as no records (`Slab::import`).
    #[inline]
    pub fn set(&mut self, id: u32, stack: Option<IntStack>) {
        match stack {
            Some(s) => *self.stack_mut(id) = s,
            None => {
                if let Some(s) = self.stacks.get_mut(id as usize) {
                    s.clear();
                }
            }
        }
    }
    /// Copy the records of slot `from` into slot `to` (the receiver echoing INT into its ACK).
    #[inline]
    pub fn copy(&mut self, from: u32, to: u32) {
        if from == to {
            return;
        }
        let s = self.stacks.get(from as usize).copied().unwrap_or_default();
        *self.stack_mut(to) = s;
    }
}

/// Size of the INT header on the wire.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntConfig {
    /// Bytes per hop record (HPCC simulator `IntHop`: 8).
    pub hop_bytes: u32,
    /// Fixed bytes of the header (HPCC simulator: the 2-byte hop count).
    pub base_bytes: u32,
    /// Hop records the header has room for, and the most a packet collects (HPCC simulator
    /// `IntHeader::maxHop`: 5).
    pub max_hops: u32,
}

impl Default for IntConfig {
    fn default() -> Self {
        IntConfig { hop_bytes: 8, base_bytes: 2, max_hops: 5 }
    }
}

impl IntConfig {
    /// Bytes the header adds to every data packet and to every ACK that echoes it: the HPCC
    /// simulator's header is sized for `max_hops` whatever the path (42 B by default).
    pub fn header_bytes(&self) -> u32 {
        self.base_bytes + self.hop_bytes * self.max_hops
    }
    pub fn validate(&self) -> Result<(), String> {
        if self.max_hops == 0 || self.max_hops as usize > MAX_INT_HOPS {
            return Err(format!("hpcc: int.max_hops must be in 1..={MAX_INT_HOPS}, got {}", self.max_hops));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(i: u64) -> IntHop {
        IntHop { ts: Time(i), tx_bytes: i * 10, qlen: i, rate: Rate::gbps(100) }
    }

    #[test]
    fn stack_caps_at_max_hops() {
        let mut s = IntStack::default();
        for i in 0..7 {
            s.push(hop(i), 5);
        }
        assert_eq!(s.hops().len(), 5);
        assert_eq!(s.hops()[4], hop(4));
        s.clear();
        assert!(s.hops().is_empty());
    }

    #[test]
    fn store_grows_and_copies() {
        let mut st = IntStore::default();
        assert!(st.hops(7).is_empty());
        st.stack_mut(3).push(hop(1), 5);
        st.stack_mut(3).push(hop(2), 5);
        st.copy(3, 9);
        assert_eq!(st.hops(9), &[hop(1), hop(2)]);
        st.copy(9, 9);
        assert_eq!(st.hops(9).len(), 2);
        // an unused slot copies as empty
        st.copy(100, 9);
        assert!(st.hops(9).is_empty());
    }

    #[test]
    fn header_size_follows_hpcc_simulator() {
        assert_eq!(IntConfig::default().header_bytes(), 42);
        assert!(IntConfig { max_hops: 0, ..Default::default() }.validate().is_err());
        assert!(IntConfig { max_hops: 9, ..Default::default() }.validate().is_err());
    }
}
