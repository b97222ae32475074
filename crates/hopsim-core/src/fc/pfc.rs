//! PFC, IEEE 802.1Qbb priority flow control: the lossless baseline every paper compares with, and
//! the safety net under P-PFC and CaPFC.
//!
//! XOFF: when the bytes an ingress (port, priority) holds reach the threshold, the switch sends the
//! upstream neighbour a pause frame for that priority. The threshold is either the MMU's dynamic
//! one (`alpha x free shared buffer`, as the HPCC ns-3 simulator and the papers built on it use) or
//! a static byte count. XON: when the ingress drains below the threshold by a hysteresis, a frame
//! with zero quanta resumes it. Pauses are sent for the maximum 0xFFFF quanta and refreshed at half
//! that time while the congestion lasts, as switch ASICs do, so a lost resume never wedges a link
//! and a long pause never lapses by itself. Pauses cascade hop by hop because every switch runs the
//! same rule on its own ingresses.

use super::{quanta_duration, Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, SwitchView};
use crate::time::Time;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
pub enum PfcThreshold {
    /// The MMU's dynamic threshold with its headroom and `resume_offset` hysteresis (HPCC).
    Dynamic,
    /// Pause when an ingress (port, priority) holds `xoff` bytes, resume at `xon` bytes.
    Static { xoff: u64, xon: u64 },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    pub threshold: PfcThreshold,
    /// Quanta carried by an XOFF frame (0xFFFF: "pause until told otherwise").
    pub pause_quanta: u16,
    /// A pause lasts until its resume frame, whatever the quanta, and is never refreshed (the
    /// HPCC simulator's `QbbNetDevice`, which ignores the pause time it sends). Off: pauses run
    /// for their quanta and are refreshed at half that while needed, as switch ASICs do.
    #[serde(default)]
    pub until_resume: bool,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig { threshold: PfcThreshold::Dynamic, pause_quanta: u16::MAX, until_resume: false }
    }
}

/// The XOFF/XON state machine of every ingress (port, priority) of one switch.
pub struct Pfc {
    pub cfg: PfcConfig,
    nprio: usize,
    /// When the last XOFF was sent for each ingress (port, priority), if it is paused now.
    paused_since: Vec<Option<Time>>,
    timer: Option<Time>,
}

impl Pfc {
    pub fn new(cfg: PfcConfig, nports: usize, nprio: usize) -> Pfc {
        Pfc { cfg, nprio, paused_since: vec![None; nports * nprio], timer: None }
    }

    pub fn is_paused(&self, port: usize, prio: usize) -> bool {
        self.paused_since[port * self.nprio + prio].is_some()
    }

    #[inline]
    fn over(&self, view: &SwitchView, port: usize, prio: usize) -> bool {
        match self.cfg.threshold {
            PfcThreshold::Dynamic => view.mmu.should_pause(port, prio),
            PfcThreshold::Static { xoff, .. } => view.mmu.ingress_bytes(port, prio) >= xoff,
        }
    }

    #[inline]
    fn under(&self, view: &SwitchView, port: usize, prio: usize) -> bool {
        match self.cfg.threshold {
            PfcThreshold::Dynamic => view.mmu.should_resume(port, prio),
            PfcThreshold::Static { xon, .. } => view.mmu.ingress_bytes(port, prio) <= xon,
        }
    }

    fn refresh_after(&self, view: &SwitchView, port: usize) -> Time {
        Time(quanta_duration(self.cfg.pause_quanta, view.rate(port as u16)).0 / 2)
    }

    /// Out of line: a pause is rare next to the per-packet check that leads to it, and kept
    /// inline it made `check_pause` too big to inline into every enqueue.
    #[cold]
    #[inline(never)]
    fn xoff(&mut self, now: Time, view: &SwitchView, port: usize, prio: usize, out: &mut Actions) {
        self.paused_since[port * self.nprio + prio] = Some(now);
        out.push(FcAction::Send { port: port as u16, msg: CtrlMsg::Pfc { prio: prio as u8, quanta: self.cfg.pause_quanta }, by: Origin::Pfc });
        if self.cfg.until_resume {
            return; // the receiver holds the pause until our resume: nothing to refresh
        }
        let t = now + self.refresh_after(view, port);
        if self.timer.is_none_or(|x| t < x) {
            self.timer = Some(t);
        }
    }

    /// Check one ingress after its occupancy grew: send XOFF if it crossed the threshold.
    #[inline]
    pub fn check_pause(&mut self, now: Time, view: &SwitchView, port: usize, prio: usize, out: &mut Actions) {
        if !self.is_paused(port, prio) && self.over(view, port, prio) {
            self.xoff(now, view, port, prio, out);
        }
    }

    /// Check one ingress after its occupancy shrank: send XON if it drained.
    #[inline]
    pub fn check_resume(&mut self, view: &SwitchView, port: usize, prio: usize, out: &mut Actions) {
        if self.is_paused(port, prio) && self.under(view, port, prio) {
            self.paused_since[port * self.nprio + prio] = None;
            out.push(FcAction::Send { port: port as u16, msg: CtrlMsg::Pfc { prio: prio as u8, quanta: 0 }, by: Origin::Pfc });
        }
    }
}

impl FlowControl for Pfc {
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        self.check_pause(now, view, pkt.ingress as usize, pkt.prio as usize, out);
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        self.check_resume(view, pkt.ingress as usize, pkt.prio as usize, out);
    }

    fn on_drop(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        // A drop means the ingress is over its limit: make sure its sender is told.
        self.check_pause(now, view, pkt.ingress as usize, pkt.prio as usize, out);
    }

    /// Refresh every pause that has run half its duration and is still needed.
    fn on_timer(&mut self, now: Time, view: &SwitchView, out: &mut Actions) {
        self.timer = None;
        for i in 0..self.paused_since.len() {
            let Some(since) = self.paused_since[i] else { continue };
            let (port, prio) = (i / self.nprio, i % self.nprio);
            let due = since + self.refresh_after(view, port);
            if due <= now {
                if self.under(view, port, prio) {
                    self.paused_since[i] = None;
                    out.push(FcAction::Send { port: port as u16, msg: CtrlMsg::Pfc { prio: prio as u8, quanta: 0 }, by: Origin::Pfc });
                } else {
                    self.xoff(now, view, port, prio, out);
                }
            } else if self.timer.is_none_or(|x| due < x) {
                self.timer = Some(due);
            }
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.timer
    }

    /// The upstream on `port` is gone and its pauses were lifted with the link: nothing left to
    /// resume or refresh there.
    fn on_link_down(&mut self, _now: Time, port: u16, _view: &SwitchView, _out: &mut Actions) {
        let p = port as usize;
        if let Some(s) = self.paused_since.get_mut(p * self.nprio..(p + 1) * self.nprio) {
            s.fill(None);
        }
    }
}

/// `flow_control.scheme = "pfc"`: no parameters of its own (its settings are `flow_control.pfc`,
/// shared with the schemes that run it underneath).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcScheme {}

/// Bytes per port of PFC's per-priority pause state.
pub const BYTES_PER_PORT: u64 = 16 * crate::queues::port::NPRIO as u64;

impl crate::registry::Declared for PfcScheme {
    const NAME: &'static str = "pfc";
    const ABOUT: &'static str = "PFC, IEEE 802.1Qbb priority flow control";
}

impl super::registry::Scheme for PfcScheme {
    fn pauses(&self) -> bool {
        true
    }
    fn build(&self, at: &super::registry::BuildAt) -> super::AnyFc {
        super::AnyFc::Pfc(Pfc::new(at.pfc.clone(), at.nports, at.nprio))
    }
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        BYTES_PER_PORT
    }
    fn queues_by_priority(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fc::view::SwitchInfo;
    use crate::queues::mmu::{Mmu, MmuConfig};
    use crate::time::Rate;

    fn view<'a>(mmu: &'a Mmu, info: &'a SwitchInfo) -> SwitchView<'a> {
        SwitchView::bare(mmu, info)
    }

    #[test]
    fn static_threshold_xoff_then_xon() {
        let cfg = MmuConfig { buffer_bytes: 1_000_000, ..Default::default() };
        let mut mmu = Mmu::new(cfg, vec![50_000; 2], 8, 8);
        let rates = SwitchInfo::bare(vec![Rate::gbps(100); 2], 8);
        let mut pfc = Pfc::new(PfcConfig { threshold: PfcThreshold::Static { xoff: 10_000, xon: 5_000 }, ..Default::default() }, 2, 8);
        let mut out = vec![];
        let pkt = PktMeta { ingress: 0, egress: 1, prio: 3, queue: 3, size: 1000, ..Default::default() };
        let mut charges = vec![];
        for i in 0..12 {
            charges.push(mmu.admit(0, 3, 1, 3, 1000).unwrap());
            pfc.on_enqueue(Time(i), &mut pkt.clone(), &view(&mmu, &rates), &mut out);
        }
        assert_eq!(out, vec![FcAction::Send { port: 0, msg: CtrlMsg::Pfc { prio: 3, quanta: u16::MAX }, by: Origin::Pfc }]);
        assert!(pfc.next_timer().is_some());
        out.clear();
        for c in charges {
            mmu.release(0, 3, 1, 3, 1000, c);
            pfc.on_dequeue(Time(100), &pkt, &view(&mmu, &rates), &mut out);
        }
        assert_eq!(out, vec![FcAction::Send { port: 0, msg: CtrlMsg::Pfc { prio: 3, quanta: 0 }, by: Origin::Pfc }]);
    }

    #[test]
    fn refresh_keeps_a_needed_pause_alive() {
        let mmu_cfg = MmuConfig { buffer_bytes: 1_000_000, ..Default::default() };
        let mut mmu = Mmu::new(mmu_cfg, vec![50_000; 2], 8, 8);
        let rates = SwitchInfo::bare(vec![Rate::gbps(100); 2], 8);
        let mut pfc = Pfc::new(PfcConfig { threshold: PfcThreshold::Static { xoff: 2_000, xon: 1_000 }, ..Default::default() }, 2, 8);
        let mut out = vec![];
        let pkt = PktMeta { ingress: 1, egress: 0, prio: 0, size: 3000, ..Default::default() };
        mmu.admit(1, 0, 0, 0, 3000).unwrap();
        pfc.on_enqueue(Time(0), &mut pkt.clone(), &view(&mmu, &rates), &mut out);
        let t = pfc.next_timer().unwrap();
        // half of 65535 quanta at 100G = 65535 * 5120 ps / 2
        assert_eq!(t, Time(65535 * 5120 / 2));
        out.clear();
        pfc.on_timer(t, &view(&mmu, &rates), &mut out);
        assert_eq!(out.len(), 1);
        assert!(matches!(out[0], FcAction::Send { port: 1, msg: CtrlMsg::Pfc { prio: 0, quanta: u16::MAX }, .. }));
    }
}
