//! Threshold queue pause (TQP): pause the upstream queue that feeds a congested egress queue once
//! that queue holds more than `K` bytes, and resume it when the queue drains below `K/2`.
//!
//! TQP is hopsim's worked example of a flow-control scheme (docs/writing-a-scheme.md builds it
//! step by step), not a scheme from the papers: it is BFC's per-queue backpressure (Goyal et al.,
//! NSDI 2022, §3.3: "pause the upstream queue", the `upstreamQ` tag) with BFC's dynamic
//! threshold and flow-to-queue assignment replaced by one fixed threshold and the static
//! priority queues. It ships as a real scheme (`flow_control.scheme = "tqp"`) so that the tutorial
//! and the product are the same code: a simple per-queue baseline beside BFC.
//!
//! How it runs, hook by hook:
//! - `stamp`: every departing packet carries the queue it left from (`upstreamQ`); at the hosts the
//!   NIC half ([`TaggingNic`]) stamps the NIC queue, so the first switch knows it too.
//! - `on_enqueue`: if the packet's egress queue now holds more than `K`, the pair (ingress port,
//!   `upstreamQ`) is paused by that queue; the first egress queue to pause a pair sends
//!   `QueuePause { pause: true }` upstream.
//! - `on_dequeue`: once the queue holds less than `K/2`, every pair it paused is released; the
//!   last queue to release a pair sends `QueuePause { pause: false }`.
//!
//! (The `--8<--` comments mark the parts the tutorial shows.)
//!
//! Interpretation choices: the threshold is per egress queue in bytes (not per flow, not
//! dynamic); a pair paused by several egress queues stays paused until all of them drained
//! (a count, so no queue's resume cuts another's pause short); like BFC without PFC underneath, it
//! does not guarantee losslessness (many upstream queues may each send `K` before their pause
//! lands), so the fabric's default is lossy.

use super::nic::{AnyNic, TaggingNic};
use super::registry::{BuildAt, Scheme, Unit};
use super::{Actions, AnyFc, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, Samples, SwitchView};
use crate::time::Time;
use serde::{Deserialize, Serialize};

// --8<-- [start:config]
/// `[flow_control.tqp]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TqpConfig {
    /// The pause threshold `K` of one egress queue, in bytes (a scenario writes `k = "100KB"`);
    /// the queue's upstream queues resume below `K/2`. 100 KB: one hop's BDP at 100 Gb/s over
    /// 2 us links, with room to spare.
    pub k: u64,
}

impl Default for TqpConfig {
    fn default() -> Self {
        TqpConfig { k: 100_000 }
    }
}

// --8<-- [end:config]
// --8<-- [start:declare]
impl crate::registry::Declared for TqpConfig {
    const NAME: &'static str = "tqp";
    const ABOUT: &'static str = "threshold queue pause: pause the upstream queue above K, resume below K/2 (BFC §3.3's pause, simplified)";
    const COUNTERS: &'static [&'static str] = &["tqp_pauses", "tqp_resumes"];
    fn units() -> &'static [(&'static str, Unit)] {
        &[("k", Unit::Bytes)]
    }
}

impl Scheme for TqpConfig {
    fn pauses(&self) -> bool {
        false
    }
    fn validate(&self, _net: &super::registry::CheckAt) -> Result<(), String> {
        if self.k < 2 {
            return Err(format!("flow_control.tqp.k: {} bytes leaves no room between K/2 and K; allowed: 2 bytes or more", self.k));
        }
        Ok(())
    }
    fn build(&self, at: &BuildAt) -> AnyFc {
        AnyFc::Tqp(Tqp::new(self.k, at.nports, at.upq))
    }
    fn nic(&self) -> AnyNic {
        AnyNic::Tagging(TaggingNic { per_flow: false, obey_queue_pause: true, free: None })
    }
    /// A pause names the pair (ingress port, upstreamQ).
    fn reads_upstream_q(&self) -> bool {
        true
    }
    /// A pause count per upstream queue, and per egress queue the list of pairs it paused.
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64 {
        2 * upq + 24 * nqueues
    }
}

// --8<-- [end:declare]
// --8<-- [start:module]
/// The switch half: per (ingress port, upstream queue) how many congested egress queues hold it
/// paused, and per egress queue which pairs it paused.
pub struct Tqp {
    k: u64,
    upq: usize,
    holds: Vec<u16>,
    /// Per (egress port, queue), sized at the first packet (the view knows the queue count).
    paused_by: Vec<Vec<(u16, u16)>>,
    pauses: u64,
    resumes: u64,
}

impl Tqp {
    pub fn new(k: u64, nports: usize, upq: usize) -> Tqp {
        Tqp { k, upq, holds: vec![0; nports * upq], paused_by: vec![], pauses: 0, resumes: 0 }
    }

    fn queue_slot(&mut self, pkt: &PktMeta, view: &SwitchView) -> usize {
        if self.paused_by.is_empty() {
            self.paused_by = vec![vec![]; view.nports() * view.nqueues()];
        }
        pkt.egress as usize * view.nqueues() + pkt.queue as usize
    }

    fn send(&mut self, (port, queue): (u16, u16), pause: bool, out: &mut Actions) {
        if pause {
            self.pauses += 1;
        } else {
            self.resumes += 1;
        }
        out.push(FcAction::Send { port, msg: CtrlMsg::QueuePause { queue, pause }, by: Origin::Scheme });
    }

    /// Releases the pairs egress queue `slot` paused, resuming those no other queue holds.
    fn release(&mut self, slot: usize, out: &mut Actions) {
        for pair in std::mem::take(&mut self.paused_by[slot]) {
            let h = &mut self.holds[pair.0 as usize * self.upq + pair.1 as usize];
            *h -= 1;
            if *h == 0 {
                self.send(pair, false, out);
            }
        }
    }
}

impl FlowControl for Tqp {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        if view.queue_bytes(pkt.egress, pkt.queue) <= self.k {
            return;
        }
        let slot = self.queue_slot(pkt, view);
        let pair = (pkt.ingress, pkt.tags.upstream_q);
        if self.paused_by[slot].contains(&pair) {
            return;
        }
        self.paused_by[slot].push(pair);
        let h = &mut self.holds[pair.0 as usize * self.upq + pair.1 as usize];
        *h += 1;
        if *h == 1 {
            self.send(pair, true, out);
        }
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        if self.paused_by.is_empty() || view.queue_bytes(pkt.egress, pkt.queue) >= self.k / 2 {
            return;
        }
        let slot = self.queue_slot(pkt, view);
        if !self.paused_by[slot].is_empty() {
            self.release(slot, out);
        }
    }

    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, _view: &SwitchView) {
        pkt.tags.upstream_q = pkt.queue;
    }

    /// The neighbour on `port` is gone: forget the pauses sent to it (the engine lifted them).
    fn on_link_down(&mut self, _now: Time, port: u16, _view: &SwitchView, _out: &mut Actions) {
        for list in &mut self.paused_by {
            list.retain(|&(p, _)| p != port);
        }
        let upq = self.upq;
        self.holds[port as usize * upq..(port as usize + 1) * upq].fill(0);
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("tqp_pauses", self.pauses));
        out.push(("tqp_resumes", self.resumes));
    }

    /// Upstream queues each port holds paused.
    fn sample(&self, _now: Time, view: &SwitchView, out: &mut Samples) {
        for p in 0..view.nports() {
            let n = self.holds[p * self.upq..(p + 1) * self.upq].iter().filter(|&&h| h > 0).count();
            out.push((p as u16, "paused_upstream_queues", n as f64));
        }
    }

    fn uses_tags(&self) -> bool {
        true
    }
}

// --8<-- [end:module]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Sw, PKT};

    /// A switch whose egress 0 collects packets from ingress 1 (upstream queue 5) and ingress 2
    /// (upstream queue 6), with K = 10 packets.
    fn rig() -> (Sw, Tqp) {
        (Sw::new(), Tqp::new(10 * PKT as u64, 8, 8))
    }

    fn pkt(ingress: u16, upq: u16) -> PktMeta {
        let mut p = Sw::pkt(ingress, 0);
        p.tags.upstream_q = upq;
        p
    }

// --8<-- [start:test]
    #[test]
    fn pauses_the_upstream_queue_once_the_egress_queue_passes_k() {
        let (mut sw, mut fc) = rig();
        let mut out = vec![];
        for _ in 0..10 {
            sw.arrive(&mut fc, Time::ZERO, pkt(1, 5), &mut out).unwrap();
        }
        assert!(out.is_empty(), "exactly K bytes queued: no pause yet");
        sw.arrive(&mut fc, Time::ZERO, pkt(1, 5), &mut out).unwrap();
        assert_eq!(sw.apply(Time::ZERO, &mut out), vec![(1, CtrlMsg::QueuePause { queue: 5, pause: true })]);
        // more packets of the same pair: no second pause
        sw.arrive(&mut fc, Time::ZERO, pkt(1, 5), &mut out).unwrap();
        assert!(out.is_empty());
        // another upstream queue feeding the congested queue is paused too, on its own port
        sw.arrive(&mut fc, Time::ZERO, pkt(2, 6), &mut out).unwrap();
        assert_eq!(sw.apply(Time::ZERO, &mut out), vec![(2, CtrlMsg::QueuePause { queue: 6, pause: true })]);
    }

// --8<-- [end:test]
    #[test]
    fn resumes_only_below_half_of_k() {
        let (mut sw, mut fc) = rig();
        let mut out = vec![];
        for _ in 0..12 {
            sw.arrive(&mut fc, Time::ZERO, pkt(1, 5), &mut out).unwrap();
        }
        sw.apply(Time::ZERO, &mut out);
        // drain from 12 to 5 packets: still at or above K/2 (5 packets)
        for _ in 0..7 {
            sw.depart(&mut fc, Time::ZERO, 0, 3, &mut out).unwrap();
        }
        assert!(out.is_empty(), "5 packets = K/2 still queued: stays paused");
        sw.depart(&mut fc, Time::ZERO, 0, 3, &mut out).unwrap();
        assert_eq!(sw.apply(Time::ZERO, &mut out), vec![(1, CtrlMsg::QueuePause { queue: 5, pause: false })]);
        let mut c = vec![];
        fc.counters(&mut c);
        assert_eq!(c, vec![("tqp_pauses", 1), ("tqp_resumes", 1)]);
    }

    #[test]
    fn a_pair_paused_by_two_queues_resumes_when_both_drained() {
        let (mut sw, mut fc) = rig();
        let mut out = vec![];
        let to = |egress: u16| {
            let mut p = Sw::pkt(1, egress);
            p.tags.upstream_q = 5;
            p
        };
        for _ in 0..11 {
            sw.arrive(&mut fc, Time::ZERO, to(0), &mut out).unwrap();
            sw.arrive(&mut fc, Time::ZERO, to(4), &mut out).unwrap();
        }
        assert_eq!(sw.apply(Time::ZERO, &mut out), vec![(1, CtrlMsg::QueuePause { queue: 5, pause: true })]);
        for _ in 0..11 {
            sw.depart(&mut fc, Time::ZERO, 0, 3, &mut out).unwrap();
        }
        assert!(out.is_empty(), "egress 4 still holds the pause");
        for _ in 0..11 {
            sw.depart(&mut fc, Time::ZERO, 4, 3, &mut out).unwrap();
        }
        assert_eq!(sw.apply(Time::ZERO, &mut out), vec![(1, CtrlMsg::QueuePause { queue: 5, pause: false })]);
    }

    #[test]
    fn departing_packets_carry_their_queue_as_upstream_q() {
        let (mut sw, mut fc) = rig();
        let mut out = vec![];
        sw.arrive(&mut fc, Time::ZERO, pkt(1, 7), &mut out).unwrap();
        let p = sw.depart(&mut fc, Time::ZERO, 0, 3, &mut out).unwrap();
        assert_eq!((p.queue, p.tags.upstream_q), (3, 3));
    }

    #[test]
    fn reads_k_from_the_scenario_table_and_rejects_unknown_fields() {
        let c = super::super::FcConfig::from_table(serde_json::json!({"scheme": "tqp", "k": 20_000})).unwrap();
        assert_eq!(c, super::super::FcConfig::Tqp(TqpConfig { k: 20_000 }));
        let e = super::super::FcConfig::from_table(serde_json::json!({"scheme": "tqp", "kk": 1})).unwrap_err();
        assert!(e.contains("flow_control.tqp: unknown field `kk`, expected `k`"), "{e}");
    }
}
