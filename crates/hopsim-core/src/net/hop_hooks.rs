//! How a switch hop calls its flow-control module: through the generic hooks, or, when the
//! module is PFC alone, straight into PFC's two threshold checks.
//!
//! Why two ways: the generic hooks hand every module a `PktMeta` (a dozen fields copied out of
//! the packet) and a `SwitchView`, then dispatch on the module's kind, three times per hop
//! (classify, enqueue, dequeue). PFC reads two of those fields (ingress port and priority), so on
//! the runs most users make (DCQCN, HPCC, TIMELY or DCTCP over PFC) that plumbing was about 6% of
//! a run's instructions (callgrind, the standard benchmark). The switch path is written once,
//! generic over `HopHooks`, and compiled for both; `Simulation::switch_receive` and
//! `switch_dequeue` pick by the module's kind. The PFC path makes exactly the calls the generic
//! one makes for `AnyFc::Pfc` (the trait's default `classify`, `Pfc::on_enqueue`, `on_dequeue`,
//! `on_drop`; PFC stamps nothing), so results are the same to the bit.

use crate::fc::{pfc::Pfc, Actions, AnyFc, FlowControl, PktMeta, SwitchView};
use crate::packet::{Packet, Tags};
use crate::time::Time;

/// One packet's passage through a switch's flow-control module.
pub(crate) trait HopHooks: Sized {
    /// Take what the hooks need from the packet (leaving by local port `egress`).
    fn new(pkt: &Packet, tags: Tags, egress: u16) -> Self;
    /// The egress queue (`FlowControl::classify`); later hooks see it as the packet's queue.
    fn classify(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView) -> u16;
    fn on_drop(&self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions);
    /// `FlowControl::on_enqueue`; the packet's one-bit and wide tags if the module changed them.
    fn on_enqueue(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions) -> Option<(u8, Tags)>;
    fn on_dequeue(&self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions);
    /// `FlowControl::stamp` (runs that keep tags only); the tags if the module changed them.
    fn stamp(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView) -> Option<(u8, Tags)>;
}

/// Any module, through `AnyFc`'s hooks.
pub(crate) struct Generic(PktMeta);

impl HopHooks for Generic {
    #[inline(always)]
    fn new(pkt: &Packet, tags: Tags, egress: u16) -> Generic {
        Generic(crate::net::switch::meta(pkt, tags, egress))
    }
    #[inline(always)]
    fn classify(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView) -> u16 {
        let q = fc.classify(now, &self.0, view);
        self.0.queue = q;
        q
    }
    #[inline(always)]
    fn on_drop(&self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions) {
        fc.on_drop(now, &self.0, view, out);
    }
    #[inline(always)]
    fn on_enqueue(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions) -> Option<(u8, Tags)> {
        let before = (self.0.flags, self.0.tags);
        fc.on_enqueue(now, &mut self.0, view, out);
        let after = (self.0.flags, self.0.tags);
        (after != before).then_some(after)
    }
    #[inline(always)]
    fn on_dequeue(&self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions) {
        fc.on_dequeue(now, &self.0, view, out);
    }
    #[inline(always)]
    fn stamp(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView) -> Option<(u8, Tags)> {
        let before = (self.0.flags, self.0.tags);
        fc.stamp(now, &mut self.0, view);
        let after = (self.0.flags, self.0.tags);
        (after != before).then_some(after)
    }
}

/// PFC alone (`AnyFc::Pfc`): its hooks read the ingress port and the priority, nothing else.
pub(crate) struct PfcAlone {
    ingress: usize,
    prio: u8,
}

/// The PFC module of a switch the caller has checked is `AnyFc::Pfc`.
#[inline(always)]
fn pfc(fc: &mut AnyFc) -> &mut Pfc {
    match fc {
        AnyFc::Pfc(p) => p,
        _ => unreachable!("the PFC hop path is taken only for PFC alone"),
    }
}

impl HopHooks for PfcAlone {
    #[inline(always)]
    fn new(pkt: &Packet, _tags: Tags, _egress: u16) -> PfcAlone {
        PfcAlone { ingress: pkt.ingress as usize, prio: pkt.prio }
    }
    /// The trait's default `classify`: by priority.
    #[inline(always)]
    fn classify(&mut self, _fc: &mut AnyFc, _now: Time, view: &SwitchView) -> u16 {
        view.queue_of_prio(self.prio)
    }
    #[inline(always)]
    fn on_drop(&self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions) {
        pfc(fc).check_pause(now, view, self.ingress, self.prio as usize, out);
    }
    #[inline(always)]
    fn on_enqueue(&mut self, fc: &mut AnyFc, now: Time, view: &SwitchView, out: &mut Actions) -> Option<(u8, Tags)> {
        pfc(fc).check_pause(now, view, self.ingress, self.prio as usize, out);
        None
    }
    #[inline(always)]
    fn on_dequeue(&self, fc: &mut AnyFc, _now: Time, view: &SwitchView, out: &mut Actions) {
        pfc(fc).check_resume(view, self.ingress, self.prio as usize, out);
    }
    #[inline(always)]
    fn stamp(&mut self, _fc: &mut AnyFc, _now: Time, _view: &SwitchView) -> Option<(u8, Tags)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PFC path is a copy of what the generic hooks do for `AnyFc::Pfc`: the same queue, the
    /// same pause and resume frames at the same packets, and no tags. If `Pfc` ever classifies,
    /// stamps or writes tags, this fails and the PFC path must learn it.
    #[test]
    fn pfc_alone_matches_the_generic_hooks() {
        use crate::fc::pfc::{PfcConfig, PfcThreshold};
        use crate::fc::view::SwitchInfo;
        use crate::queues::mmu::{Mmu, MmuConfig};
        use crate::time::Rate;
        let cfg = MmuConfig { buffer_bytes: 1_000_000, ..Default::default() };
        let info = SwitchInfo::bare(vec![Rate::gbps(100); 3], 8);
        let pfc_cfg = PfcConfig { threshold: PfcThreshold::Static { xoff: 10_000, xon: 5_000 }, ..Default::default() };
        let mut mmu = Mmu::new(cfg, vec![50_000; 3], 8, 8);
        let (mut fc_g, mut fc_p) = (AnyFc::Pfc(Pfc::new(pfc_cfg.clone(), 3, 8)), AnyFc::Pfc(Pfc::new(pfc_cfg, 3, 8)));
        assert!(!fc_g.uses_tags_any());
        let (mut out_g, mut out_p) = (vec![], vec![]);
        let mut held = vec![];
        for i in 0..120u64 {
            let pkt = Packet { prio: (i % 3) as u8 * 2, ingress: (i % 2) as u16, size: 1000, ..Default::default() };
            let now = Time(i);
            let mut g = Generic::new(&pkt, Tags::default(), 2);
            let mut p = PfcAlone::new(&pkt, Tags::default(), 2);
            let q = g.classify(&mut fc_g, now, &SwitchView::bare(&mmu, &info));
            assert_eq!(q, p.classify(&mut fc_p, now, &SwitchView::bare(&mmu, &info)));
            held.push((pkt, q, mmu.admit(pkt.ingress as usize, pkt.prio as usize, 2, q as usize, 1000).unwrap()));
            let v = SwitchView::bare(&mmu, &info);
            assert_eq!(g.on_enqueue(&mut fc_g, now, &v, &mut out_g), None);
            assert_eq!(p.on_enqueue(&mut fc_p, now, &v, &mut out_p), None);
        }
        for (i, (pkt, q, charge)) in held.into_iter().enumerate() {
            mmu.release(pkt.ingress as usize, pkt.prio as usize, 2, q as usize, 1000, charge);
            let now = Time(100 + i as u64);
            let v = SwitchView::bare(&mmu, &info);
            let (mut g, mut p) = (Generic::new(&pkt, Tags::default(), 2), PfcAlone::new(&pkt, Tags::default(), 2));
            g.on_dequeue(&mut fc_g, now, &v, &mut out_g);
            p.on_dequeue(&mut fc_p, now, &v, &mut out_p);
            assert_eq!(g.stamp(&mut fc_g, now, &v), None);
            assert_eq!(p.stamp(&mut fc_p, now, &v), None);
        }
        // three priorities from two ingresses crossed XOFF and then XON
        assert_eq!(out_g.len(), 2 * 6, "{out_g:?}");
        assert_eq!(out_g, out_p);
    }
}
