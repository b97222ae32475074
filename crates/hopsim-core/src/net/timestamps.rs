//! TCP timestamps (RFC 7323 §3-4) as a receiver uses them to know its connection's RTT: ICTCP's
//! receiver times its window adjustments and sub-slots by the RTT (ICTCP, "per connection
//! control interval: 2*RTT"), which a TCP receiver learns from timestamps (`cc::ictcp`).
//!
//! The receiver stamps each ACK with its own clock (TSval); the sender keeps the newest stamp it
//! heard (`TS.Recent`, RFC 7323 §4.3) and echoes it on every data segment (TSecr); the first
//! segment that echoes a stamp not sampled before gives the receiver one RTT sample, its arrival
//! minus the echoed stamp: ACK out, the sender's turn-around, data back. Linux's receiver does
//! the same (`tcp_rcv_rtt_measure_ts`). Why here and not a look at the sender's smoothed RTT:
//! the two ends of a flow learn of each other only by packets, so they may run in different
//! partitions of a split run (`crate::engine`).
//!
//! Interpretation choices:
//! - stamps are 32 bits wide (RFC 7323's TSval) and count nanoseconds, differences taken modulo
//!   2^32 (right for RTTs under 4.29 s); 0 means "none heard yet", so a stamp that falls on 0 is
//!   written as 1 (one nanosecond off, once in 4.29 s);
//! - a retransmitted segment gives no sample (Karn's rule, RFC 6298 §3): it left when a timer
//!   or a loss said so, not when the echoed ACK arrived, and its echo would time the wait.
//!
//! The stamps ride the side store of wide tags (`packet::Tags::rcv_ts`), which runs whose
//! congestion control has a receiver half (ICTCP: `CcConfig::receiver_window`) keep; in every
//! other run each function here returns at its first test.

use crate::packet::{tag, Packet, PacketId};
use crate::sim::Simulation;
use crate::time::Time;

/// The receiver's clock at `now` as a 32-bit stamp of nanoseconds, never 0.
#[inline]
pub(crate) fn stamp(now: Time) -> u32 {
    ((now.0 / 1000) as u32).max(1)
}

/// The time from stamp `echo` to `now` (modulo 2^32 ns).
#[inline]
pub(crate) fn since(echo: u32, now: Time) -> Time {
    Time(((now.0 / 1000) as u32).wrapping_sub(echo) as u64 * 1000)
}

impl Simulation {
    /// Whether this run's receivers measure RTTs by timestamps.
    #[inline]
    fn rcv_timestamps(&self) -> bool {
        self.slab.tags.on && self.cfg.cc.receiver_window()
    }

    /// The receiver sends ACK (or NACK) `id`: it leaves with the receiver's clock (TSval).
    #[inline]
    pub(crate) fn stamp_ack_ts(&mut self, id: PacketId) {
        if self.rcv_timestamps() {
            let t = self.slab.tags.get(id);
            self.slab.tags.set(id, crate::packet::Tags { rcv_ts: stamp(self.now), ..t });
        }
    }

    /// The sender of flow `f` got ACK (or NACK) `id`: it keeps the receiver's stamp to echo.
    #[inline]
    pub(crate) fn heard_ack_ts(&mut self, f: u32, id: PacketId) {
        if self.rcv_timestamps() {
            let ts = self.slab.tags.get(id).rcv_ts;
            if ts != 0 {
                self.flows[f as usize].ts_recent = ts;
            }
        }
    }

    /// The sender of flow `f` sends data packet `id`: it echoes the newest stamp heard (TSecr).
    #[inline]
    pub(crate) fn echo_ts(&mut self, f: u32, id: PacketId) {
        if self.rcv_timestamps() {
            let echo = self.flows[f as usize].ts_recent;
            let t = self.slab.tags.get(id);
            self.slab.tags.set(id, crate::packet::Tags { rcv_ts: echo, ..t });
        }
    }

    /// The receiver of flow `f` got data packet `pkt` (slab id `id`): the RTT sample its echo
    /// gives, if it is a first transmission echoing a stamp not sampled before.
    #[inline]
    pub(crate) fn rcv_rtt_sample(&mut self, f: u32, id: PacketId, pkt: &Packet) -> Option<Time> {
        if !self.rcv_timestamps() || pkt.tag_flags & tag::RETX != 0 {
            return None;
        }
        let echo = self.slab.tags.get(id).rcv_ts;
        let flow = &mut self.flows[f as usize];
        if echo == 0 || echo == flow.ts_sampled {
            return None;
        }
        flow.ts_sampled = echo;
        Some(since(echo, self.now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_nanoseconds_that_wrap_and_are_never_zero() {
        let t = Time::from_us(7);
        assert_eq!(stamp(t), 7000);
        assert_eq!(since(stamp(t), Time::from_us(19)), Time::from_us(12));
        // across the 2^32 ns wrap the difference is still right
        let before = Time((u32::MAX as u64 - 500) * 1000);
        let after = Time((u32::MAX as u64 + 1500) * 1000);
        assert_eq!(since(stamp(before), after), Time(2000 * 1000));
        assert_eq!(stamp(Time(0)), 1, "0 means none heard");
        assert_eq!(stamp(Time((1u64 << 32) * 1000)), 1);
    }
}
