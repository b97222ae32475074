//! CaPFC, congestion-aware PFC (Avci, Li & Liu, "Congestion aware priority flow control in data
//! center networks", IFIP Networking 2016), the baseline P-PFC is compared with in §5.6 of the
//! P-PFC paper (Tian et al., TPDS 2020, reference [25] there).
//!
//! **Source.** The P-PFC paper's description of CaPFC is this module's only source. The CaPFC
//! paper itself is not among the papers this project works from (`papers/` holds P-PFC's, not
//! [25]), and no code of it is public. Everything the P-PFC paper says about CaPFC:
//! - §2.3 (end): "Besides ingress queues, CaPFC [25] monitors the length of egress queues.
//!   CaPFC sets a fixed threshold of egress queue length to trigger PFC proactively. As a
//!   comparison, P-PFC takes the consumption rate of the ingress buffer into account."
//! - §5.6: "CaPFC is designed to address the deficiency of PFC without QCN. CaPFC also monitors
//!   egress queues to increase congestion control awareness. CaPFC introduces a WARN threshold at
//!   each egress buffer to measure the congestion." Results: Fig. 16, "P-PFC can reduce tail
//!   latency almost by 2x compare with CaPFC. Although CaPFC can effectively reduce FCT without
//!   DCQCN, the reduction of tail latency is not obvious when DCQCN is enabled."
//! - §5.7, Fig. 19: "P-PFC can reduce the average latency up to 83.8 percent and reduce the
//!   50%ile latency up to 90 percent compared to CaPFC ... Although CaPFC can reduce tail
//!   latency, it does not help average latency."
//! - §7: "CaPFC monitors both ingress and egress queues, and triggers PFC with a fixed threshold
//!   value of per-input counters. Instead, P-PFC uses derivatives of buffer occupancy".
//!
//! **What is implemented, checked against that description.**
//! - A fixed WARN threshold on each egress queue's length (§2.3 "a fixed threshold of egress queue
//!   length", §5.6 "a WARN threshold at each egress buffer"): `warn`. The paper gives no value;
//!   the default is the queue's port's ECN Kmax, where P-PFC's own gate opens (P-PFC §4.1, Table
//!   2's 200 KB in its setting), so both egress-queue schemes of §5.6 start acting at the same
//!   queue length and DCQCN marks before either.
//! - Passing WARN triggers PFC proactively (§2.3), before the ingress threshold of standard PFC.
//! - "A fixed threshold value of per-input counters" (§7): an ingress (port, priority) is paused
//!   for a warned queue when it holds more than `feeder` bytes of that queue; default 0, every
//!   ingress that feeds it. *Interpretation:* the per-input counter is read as the input's bytes
//!   in the warned egress queue (what "monitors both ingress and egress queues" needs to tell who
//!   feeds the queue), not the input's whole ingress counter; the two differ only for an ingress
//!   that also feeds other egress queues, which this reading leaves alone (an innocent input is
//!   never paused, the point of watching egress queues). An ingress that starts feeding a warned
//!   queue is paused too.
//! - Not in the description, so ours: how long the pause lasts and when it ends. By default
//!   pauses are XON/XOFF style: `pause_quanta` 0xFFFF refreshed at half its duration while the
//!   queue stays warned, as [`Pfc`] does, so a long congestion never lapses and a lost resume
//!   never wedges a link. A smaller `pause_quanta` is a fixed pause per frame, the PFC frames of
//!   the paper's simulator ("a received PFC packet with a fixed pause time of 5 us", P-PFC §1,
//!   Fig. 1b): no timer renews it; a held feeder is paused again when a packet of it reaches the
//!   warned queue after its last pause has run half its time, so a feeder kept paused lapses,
//!   sends, and is paused again, and the queue can keep growing (P-PFC §5.4: "The queue of switch
//!   will still build up if use small fixed pause time"). Either way the queue draining to
//!   `resume` (default WARN / 2, a hysteresis so that a queue hovering at WARN does not toggle its
//!   feeders on every packet) ends the pause with zero quanta. (A computed duration is P-PFC's contribution, §4.4; the baseline should not borrow
//!   it.) Ingresses that do not feed a warned queue are never touched: that is CaPFC's point over
//!   plain PFC, which pauses by ingress occupancy whatever the egress.
//!
//! **Against the paper's Figs. 16 and 19** (scenarios/papers/ppfc/fig16-fig19-capfc.toml, 16:1
//! incast, DCQCN, quick runs, seed 1; p99 / mean / p50 packet latency in us: PFC 803 / 360 / 349,
//! P-PFC 236 / 98 / 79). The mechanism is what the description asks for; where it lands comes
//! from the two settings the description leaves open:
//! - The pause. With 5 us frames (`pause_quanta = 391` at 40 Gb/s, the PFC frame of the paper's
//!   simulator) CaPFC's tail is close to P-PFC's, 284 / 95 / 58 (P-PFC 0.9-1.2x lower over three
//!   seeds). XON/XOFF pauses hold every feeder until the queue drains to WARN / 2, so the queue
//!   never holds more than WARN plus what is in flight: 61 / 19 / 16 at WARN = 200 KB.
//! - WARN. Either way CaPFC starts pausing at WARN, so most packets see a short queue. The
//!   paper's own words put its CaPFC near standard PFC ("the reduction of tail latency is not
//!   obvious when DCQCN is enabled", §5.6; "it does not help average latency", §5.7): that is a
//!   WARN near the buffer's size. XON/XOFF at 1 / 2 / 3 MB gives 213 / 81 / 81, 414 / 196 / 181
//!   and 610 / 275 / 282. The default stays at Kmax (the one threshold the P-PFC paper ties egress
//!   queues to) and the sweep shows the others.
//!
//! Standard PFC stays underneath as the safety net. The two share the upstream's single pause
//! timer per priority, so each must not undo the other: a PFC resume for an ingress CaPFC holds
//! is withheld (CaPFC's refresh keeps the pause alive), and CaPFC withholds its resume for an
//! ingress PFC still holds (PFC resumes it later itself).

use super::pfc::{Pfc, PfcConfig};
use super::ppfc::EgressComposition;
use super::with_pfc::{OverPfc, Resume, WithPfc};
use super::{quanta_duration, Actions, CtrlMsg, FcAction, Origin, PktMeta, SwitchView};
use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CapfcConfig {
    /// WARN threshold on an egress queue's bytes. Neither paper in `papers/` gives a value.
    /// `None` (default): the ECN Kmax of the queue's port, where P-PFC's gate opens (P-PFC §4.1;
    /// Table 2: 200 KB), so both egress-queue schemes of §5.6 start acting at the same queue length
    /// and DCQCN marks before either. A number sets it for every port.
    #[serde(rename = "warn")]
    pub warn_bytes: Option<u64>,
    /// Resume the paused ingresses once the warned queue has drained to this many bytes.
    /// `None` (default): WARN / 2, a hysteresis so that a queue hovering at WARN does not
    /// toggle its feeders on every packet.
    #[serde(rename = "resume")]
    pub resume_bytes: Option<u64>,
    /// Per-input counter threshold (§7 of the P-PFC paper): an ingress is paused for a warned
    /// queue when it holds more than this many bytes of it. Default 0: every ingress feeding it.
    #[serde(rename = "feeder")]
    pub feeder_bytes: u64,
    /// Quanta of CaPFC's pause frames; 0xFFFF = until resumed (refreshed at half this time by a
    /// timer). Smaller: a fixed pause per frame, renewed only by the feeder's own packets.
    pub pause_quanta: u16,
}

impl Default for CapfcConfig {
    fn default() -> Self {
        CapfcConfig { warn_bytes: None, resume_bytes: None, feeder_bytes: 0, pause_quanta: u16::MAX }
    }
}

impl CapfcConfig {
    /// WARN at egress port `egress`: the setting, else the port's ECN Kmax.
    #[inline]
    pub fn warn(&self, view: &SwitchView, egress: usize) -> u64 {
        match self.warn_bytes {
            Some(w) => w,
            None => view.ecn(egress as u16).1,
        }
    }

    /// The queue length at or below which a warned queue of port `egress` has its feeders resumed.
    pub fn resume_level(&self, view: &SwitchView, egress: usize) -> u64 {
        self.resume_bytes.unwrap_or_else(|| self.warn(view, egress) / 2)
    }
}

/// CaPFC on one switch (without the PFC underneath: see [`Capfc::with_pfc`]).
pub struct Capfc {
    pub cfg: CapfcConfig,
    nports: usize,
    nprio: usize,
    nqueues: usize,
    /// Bytes of each ingress (port, priority) in each egress queue: who feeds a queue.
    packets: EgressComposition,
    /// Per egress queue: above WARN and not yet drained to the resume level.
    warned: Vec<bool>,
    /// Per egress queue: the ingresses (`port * nprio + prio`) it holds paused.
    held: Vec<Vec<usize>>,
    /// Per ingress (port, priority): how many warned queues hold it paused.
    holds: Vec<u32>,
    /// Per ingress (port, priority): when CaPFC last sent it a pause, while it holds it.
    sent_at: Vec<Option<Time>>,
    /// Ingresses CaPFC holds now; the refresh timer is disarmed when none is left.
    nheld: usize,
    timer: Option<Time>,
    /// Pause and resume frames CaPFC itself sent (refreshes included in `pauses_sent`).
    pub pauses_sent: u64,
    pub resumes_sent: u64,
}

impl Capfc {
    /// CaPFC with standard PFC underneath, as it runs on a switch.
    pub fn with_pfc(cfg: CapfcConfig, pfc: PfcConfig, nports: usize, nprio: usize) -> WithPfc<Capfc> {
        WithPfc::new(Pfc::new(pfc, nports, nprio), Capfc::new(cfg, nports, nprio))
    }

    pub fn new(cfg: CapfcConfig, nports: usize, nprio: usize) -> Capfc {
        let n = nports * nprio;
        Capfc {
            cfg,
            nports,
            nprio,
            nqueues: 0,
            packets: EgressComposition::new(nports, nprio),
            warned: Vec::new(),
            held: Vec::new(),
            holds: vec![0; n],
            sent_at: vec![None; n],
            nheld: 0,
            timer: None,
            pauses_sent: 0,
            resumes_sent: 0,
        }
    }

    /// Whether CaPFC holds ingress (port, prio) paused.
    pub fn is_held(&self, port: usize, prio: usize) -> bool {
        self.holds[port * self.nprio + prio] > 0
    }

    /// Whether egress queue (egress, queue) is above WARN (and not yet drained).
    pub fn is_warned(&self, egress: usize, queue: usize) -> bool {
        self.warned.get(egress * self.nqueues + queue).copied().unwrap_or(false)
    }

    fn ensure_queues(&mut self, nqueues: usize) {
        if self.warned.is_empty() {
            self.nqueues = nqueues;
            self.warned = vec![false; self.nports * nqueues];
            self.held = vec![Vec::new(); self.nports * nqueues];
        }
    }

    fn refresh_after(&self, view: &SwitchView, port: usize) -> Time {
        Time(quanta_duration(self.cfg.pause_quanta, view.rate(port as u16)).0 / 2)
    }

    /// Whether each frame pauses for a fixed time (`pause_quanta` below 0xFFFF) rather than until
    /// resumed.
    #[inline]
    fn fixed_pauses(&self) -> bool {
        self.cfg.pause_quanta != u16::MAX
    }

    fn send_pause(&mut self, now: Time, view: &SwitchView, ip: usize, out: &mut Actions) {
        let (port, prio) = (ip / self.nprio, ip % self.nprio);
        out.push(FcAction::Send { port: port as u16, msg: CtrlMsg::Pfc { prio: prio as u8, quanta: self.cfg.pause_quanta }, by: Origin::Capfc });
        self.pauses_sent += 1;
        self.sent_at[ip] = Some(now);
        // A fixed pause is renewed by the feeder's own packets (`on_enqueue`), not by a timer.
        if self.fixed_pauses() {
            return;
        }
        let t = now + self.refresh_after(view, port);
        if self.timer.is_none_or(|x| t < x) {
            self.timer = Some(t);
        }
    }

    /// Warned queue `qi` holds ingress `ip` paused; the first holder sends the frame.
    fn hold(&mut self, now: Time, view: &SwitchView, qi: usize, ip: usize, out: &mut Actions) {
        self.held[qi].push(ip);
        self.holds[ip] += 1;
        if self.holds[ip] == 1 {
            self.nheld += 1;
            self.send_pause(now, view, ip, out);
        }
    }

    /// Warned queue `qi` has drained: release its ingresses; the last holder resumes them.
    fn release_all(&mut self, qi: usize, pfc: &Pfc, out: &mut Actions) {
        self.warned[qi] = false;
        let held = std::mem::take(&mut self.held[qi]);
        for &ip in &held {
            self.holds[ip] -= 1;
            if self.holds[ip] == 0 {
                self.nheld -= 1;
                self.sent_at[ip] = None;
                let (port, prio) = (ip / self.nprio, ip % self.nprio);
                // PFC still holds it: its own resume will come when the ingress drains.
                if !pfc.is_paused(port, prio) {
                    out.push(FcAction::Send { port: port as u16, msg: CtrlMsg::Pfc { prio: prio as u8, quanta: 0 }, by: Origin::Capfc });
                    self.resumes_sent += 1;
                }
            }
        }
        // Give the (emptied) list back to keep its capacity.
        self.held[qi] = held;
        self.held[qi].clear();
        if self.nheld == 0 {
            self.timer = None;
        }
    }
}

impl OverPfc for Capfc {
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, _pfc: &Pfc, out: &mut Actions) {
        self.ensure_queues(view.nqueues());
        self.packets.add(view.nqueues(), pkt);
        let (egress, queue) = (pkt.egress as usize, pkt.queue as usize);
        let qi = egress * self.nqueues + queue;
        let ip = pkt.ingress as usize * self.nprio + pkt.prio as usize;
        if !self.warned[qi] {
            // The queue passes WARN: pause every ingress feeding it.
            if view.mmu.egress_bytes(egress, queue) > self.cfg.warn(view, egress) {
                self.warned[qi] = true;
                let feeder_bytes = self.cfg.feeder_bytes;
                let feeders: Vec<usize> =
                    self.packets.of(egress, queue).iter().enumerate().filter(|(_, &b)| b > feeder_bytes).map(|(i, _)| i).collect();
                for f in feeders {
                    self.hold(now, view, qi, f, out);
                }
            }
        } else if self.packets.of(egress, queue)[ip] > self.cfg.feeder_bytes && !self.held[qi].contains(&ip) {
            // A new feeder of a warned queue (or one whose counter just passed feeder_bytes).
            self.hold(now, view, qi, ip, out);
        } else if self.fixed_pauses() && self.holds[ip] > 0 {
            // Fixed pauses: a held feeder whose packets still come in once its last pause has run
            // half its time is paused again, as the paper's simulator re-sends its 5 us PFC frames
            // while the congestion lasts (P-PFC Fig. 1b); one that stays paused lapses.
            if self.sent_at[ip].is_some_and(|t| now >= t + self.refresh_after(view, ip / self.nprio)) {
                self.send_pause(now, view, ip, out);
            }
        }
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView, pfc: &Pfc, out: &mut Actions) {
        self.packets.sub(pkt);
        let (egress, queue) = (pkt.egress as usize, pkt.queue as usize);
        let qi = egress * self.nqueues + queue;
        if self.warned.get(qi).copied().unwrap_or(false) && view.mmu.egress_bytes(egress, queue) <= self.cfg.resume_level(view, egress) {
            self.release_all(qi, pfc, out);
        }
    }

    fn on_timer(&mut self, now: Time, view: &SwitchView, _pfc: &Pfc, out: &mut Actions) {
        // Refresh every pause CaPFC still holds that has run half its duration.
        self.timer = None;
        for ip in 0..self.sent_at.len() {
            let Some(since) = self.sent_at[ip] else { continue };
            let due = since + self.refresh_after(view, ip / self.nprio);
            if due <= now {
                self.send_pause(now, view, ip, out);
            } else if self.timer.is_none_or(|x| due < x) {
                self.timer = Some(due);
            }
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.timer
    }

    /// Withhold standard PFC's resumes for ingresses CaPFC holds paused.
    fn on_pfc_resume(&self, _now: Time, port: u16, prio: u8, _view: &SwitchView) -> Resume {
        if self.holds[port as usize * self.nprio + prio as usize] > 0 {
            Resume::Drop
        } else {
            Resume::Send
        }
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("capfc_pauses", self.pauses_sent));
        out.push(("capfc_resumes", self.resumes_sent));
    }

    fn origin(&self) -> Origin {
        Origin::Capfc
    }
}

impl crate::registry::Declared for CapfcConfig {
    const NAME: &'static str = "capfc";
    const ABOUT: &'static str = "CaPFC, congestion-aware PFC (Avci et al., IFIP Networking 2016; P-PFC §5.6)";
    const COUNTERS: &'static [&'static str] = &["capfc_pauses", "capfc_resumes"];
}

impl super::registry::Scheme for CapfcConfig {
    fn pauses(&self) -> bool {
        true
    }
    fn build(&self, at: &super::registry::BuildAt) -> super::AnyFc {
        super::AnyFc::Capfc(Capfc::with_pfc(self.clone(), at.pfc.clone(), at.nports, at.nprio))
    }
    fn bytes_per_port(&self, nqueues: u64, _upq: u64) -> u64 {
        super::pfc::BYTES_PER_PORT + 20 * crate::queues::port::NPRIO as u64 + 32 * nqueues
    }
    fn queues_by_priority(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fc::pfc::PfcThreshold;
    use crate::fc::FlowControl;


    use crate::testing::{Sw, PRIO};

    fn capfc() -> WithPfc<Capfc> {
        Capfc::with_pfc(CapfcConfig::default(), PfcConfig::default(), 8, 8)
    }

    fn xoff(port: u16) -> FcAction {
        FcAction::Send { port, msg: CtrlMsg::Pfc { prio: PRIO, quanta: u16::MAX }, by: Origin::Capfc }
    }
    /// The actions with their origin erased (PFC's and CaPFC's frames are the same frames).
    fn plain(out: &Actions) -> Vec<FcAction> {
        out.iter()
            .map(|a| match *a {
                FcAction::Send { port, msg, .. } => FcAction::Send { port, msg, by: Origin::Capfc },
                other => other,
            })
            .collect()
    }
    fn xon(port: u16) -> FcAction {
        FcAction::Send { port, msg: CtrlMsg::Pfc { prio: PRIO, quanta: 0 }, by: Origin::Capfc }
    }

    #[test]
    fn fixed_pauses_are_renewed_by_the_feeders_packets_not_by_a_timer() {
        // 391 quanta = 5 us at 40 Gb/s, the paper's simulator's PFC frame (P-PFC Fig. 1b).
        let cfg = CapfcConfig { pause_quanta: 391, ..Default::default() };
        let mut c = Capfc::with_pfc(cfg, PfcConfig::default(), 8, 8);
        let mut sw = Sw::new();
        let mut out = vec![];
        for _ in 0..100 {
            sw.enq(&mut c, Time::ZERO, 1, 0, 1, &mut out);
            sw.enq(&mut c, Time::ZERO, 2, 0, 1, &mut out);
        }
        assert!(out.is_empty());
        sw.enq(&mut c, Time::ZERO, 1, 0, 1, &mut out);
        let frame = |port| FcAction::Send { port, msg: CtrlMsg::Pfc { prio: PRIO, quanta: 391 }, by: Origin::Capfc };
        let mut sent = plain(&out);
        sent.sort_by_key(|a| match a { FcAction::Send { port, .. } => *port, _ => 0 });
        assert_eq!(sent, vec![frame(1), frame(2)]);
        assert_eq!(c.next_timer(), None, "no timer renews a fixed pause");
        // A packet in flight 1 us later: the pause has not run half its 5 us, nothing is sent.
        out.clear();
        sw.enq(&mut c, Time::from_us(1), 1, 0, 1, &mut out);
        assert!(out.is_empty());
        // Port 1's packets still come 3 us after its pause: it is paused again; port 2 sent
        // nothing and gets nothing (its pause lapses).
        sw.enq(&mut c, Time::from_us(3), 1, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![frame(1)]);
        assert_eq!(c.next_timer(), None);
    }

    #[test]
    fn pauses_exactly_the_feeders_of_the_warned_queue_and_resumes_them_after_draining() {
        let mut sw = Sw::new();
        let mut c = capfc();
        let mut out = vec![];
        // Port 3 sends to another egress the whole time.
        sw.enq(&mut c, Time::ZERO, 3, 5, 30, &mut out);
        // Ports 1 and 2 fill egress 0 to WARN (200 KB), not above.
        for _ in 0..100 {
            sw.enq(&mut c, Time::ZERO, 1, 0, 1, &mut out);
            sw.enq(&mut c, Time::ZERO, 2, 0, 1, &mut out);
        }
        assert!(out.is_empty());
        // One more byte-carrying packet passes WARN: ports 1 and 2 are paused, port 3 is not.
        sw.enq(&mut c, Time::from_ns(10), 1, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![xoff(1), xoff(2)]);
        assert!(c.is_warned(0, PRIO as usize));
        // Standard PFC alone would not have paused anyone.
        for i in 1..=3 {
            assert!(!c.pfc.is_paused(i, PRIO as usize));
        }
        out.clear();
        sw.enq(&mut c, Time::from_ns(20), 3, 5, 10, &mut out);
        sw.enq(&mut c, Time::from_ns(20), 1, 0, 5, &mut out);
        assert!(out.is_empty(), "no repeat pause, nothing for port 3: {out:?}");
        // Drain egress 0 (206 KB) to the resume level, 100 KB: both feeders are resumed once.
        sw.deq(&mut c, Time::from_us(5), 1, 0, 6, &mut out);
        sw.deq(&mut c, Time::from_us(5), 2, 0, 99, &mut out);
        assert!(out.is_empty());
        sw.deq(&mut c, Time::from_us(5), 2, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![xon(1), xon(2)]);
        assert!(!c.is_warned(0, PRIO as usize));
        assert!(!c.is_held(1, PRIO as usize) && !c.is_held(2, PRIO as usize));
        assert_eq!(c.next_timer(), None);
        out.clear();
        sw.deq(&mut c, Time::from_us(6), 1, 0, 10, &mut out);
        assert!(out.is_empty());
        assert_eq!((c.pauses_sent, c.resumes_sent), (2, 2));
    }

    #[test]
    fn warn_is_the_ports_ecn_kmax_unless_set() {
        // Port 0's ECN Kmax is 100 KB: 101 KB warns it, and it resumes at 50 KB.
        let mut sw = Sw::new();
        sw.info.ecn[0] = (40_000, 100_000);
        let mut c = capfc();
        let mut out = vec![];
        sw.enq(&mut c, Time::ZERO, 1, 0, 100, &mut out);
        assert!(out.is_empty());
        sw.enq(&mut c, Time::ZERO, 1, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![xoff(1)]);
        out.clear();
        sw.deq(&mut c, Time::from_us(1), 1, 0, 50, &mut out);
        assert!(out.is_empty());
        sw.deq(&mut c, Time::from_us(1), 1, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![xon(1)]);
        // A set WARN replaces the port's.
        let mut sw = Sw::new();
        let mut c = Capfc::with_pfc(CapfcConfig { warn_bytes: Some(50_000), ..Default::default() }, PfcConfig::default(), 8, 8);
        out.clear();
        sw.enq(&mut c, Time::ZERO, 1, 0, 51, &mut out);
        assert_eq!(plain(&out), vec![xoff(1)]);
    }

    #[test]
    fn a_new_feeder_of_a_warned_queue_is_paused_too() {
        let mut sw = Sw::new();
        let mut c = capfc();
        let mut out = vec![];
        sw.enq(&mut c, Time::ZERO, 1, 0, 201, &mut out);
        assert_eq!(plain(&out), vec![xoff(1)]);
        out.clear();
        sw.enq(&mut c, Time::from_ns(5), 4, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![xoff(4)]);
        out.clear();
        sw.enq(&mut c, Time::from_ns(6), 4, 0, 3, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn feeder_bytes_is_a_per_input_threshold() {
        let mut sw = Sw::new();
        let cfg = CapfcConfig { feeder_bytes: 10_000, ..Default::default() };
        let mut c = Capfc::with_pfc(cfg, PfcConfig::default(), 8, 8);
        let mut out = vec![];
        sw.enq(&mut c, Time::ZERO, 2, 0, 5, &mut out);
        sw.enq(&mut c, Time::ZERO, 1, 0, 196, &mut out);
        // 201 KB: port 1 (196 KB) is paused, port 2 (5 KB) is below the per-input threshold.
        assert_eq!(plain(&out), vec![xoff(1)]);
        out.clear();
        sw.enq(&mut c, Time::ZERO, 2, 0, 5, &mut out);
        assert!(out.is_empty());
        sw.enq(&mut c, Time::ZERO, 2, 0, 1, &mut out);
        assert_eq!(plain(&out), vec![xoff(2)]);
    }

    #[test]
    fn pause_is_refreshed_while_the_queue_stays_warned() {
        let mut sw = Sw::new();
        let mut c = capfc();
        let mut out = vec![];
        sw.enq(&mut c, Time::ZERO, 1, 0, 201, &mut out);
        let t = c.next_timer().unwrap();
        // Half of 65535 quanta at 40 Gb/s (12.8 ns each).
        assert_eq!(t, Time(65535 * 12_800 / 2));
        out.clear();
        c.on_timer(t, &sw.view(), &mut out);
        assert_eq!(plain(&out), vec![xoff(1)]);
        assert_eq!(c.next_timer(), Some(t + Time(65535 * 12_800 / 2)));
    }

    #[test]
    fn capfc_and_standard_pfc_do_not_undo_each_others_pauses() {
        let mut sw = Sw::new();
        let pfc = PfcConfig { threshold: PfcThreshold::Static { xoff: 50_000, xon: 20_000 }, ..Default::default() };
        let mut c = Capfc::with_pfc(CapfcConfig::default(), pfc, 8, 8);
        let mut out = vec![];
        sw.enq(&mut c, Time::ZERO, 1, 0, 60, &mut out);
        assert_eq!(plain(&out), vec![xoff(1)], "standard PFC pauses port 1 at 50 KB");
        out.clear();
        sw.enq(&mut c, Time::ZERO, 2, 0, 49, &mut out);
        sw.enq(&mut c, Time::ZERO, 3, 0, 49, &mut out);
        sw.enq(&mut c, Time::ZERO, 4, 0, 43, &mut out);
        assert_eq!(plain(&out), vec![xoff(1), xoff(2), xoff(3), xoff(4)], "CaPFC at 201 KB");
        out.clear();
        // Port 1 drains: PFC would resume it, but CaPFC holds it (queue still 141 KB).
        sw.deq(&mut c, Time::from_us(1), 1, 0, 60, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert!(!c.pfc.is_paused(1, PRIO as usize) && c.is_held(1, PRIO as usize));
        // Port 4 passes the static XOFF while held; then the queue drains to 100 KB.
        sw.enq(&mut c, Time::from_us(1), 4, 0, 8, &mut out);
        assert_eq!(plain(&out), vec![xoff(4)]);
        out.clear();
        sw.deq(&mut c, Time::from_us(2), 2, 0, 49, &mut out);
        // Egress now 100 KB: ports 1-3 resumed by CaPFC; port 4 (51 KB) stays with PFC.
        assert_eq!(plain(&out), vec![xon(1), xon(2), xon(3)]);
        out.clear();
        sw.deq(&mut c, Time::from_us(3), 4, 0, 31, &mut out);
        assert_eq!(plain(&out), vec![xon(4)], "PFC resumes port 4 itself");
    }
}
