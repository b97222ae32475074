//! "X with PFC underneath": one wrapper for every scheme that keeps standard PFC as its safety net
//! (P-PFC §6.3: "P-PFC only changes the part of sending algorithm of PFC PAUSE messages"; CaPFC;
//! Floodgate's PFC backstop, appendix B).
//!
//! Why a wrapper: both schemes and PFC pause the same upstream priorities, so each can undo the
//! other — PFC's XON would lift a pause the scheme still wants, and a finite predictive pause would
//! cut PFC's long XOFF short. The wrapper runs PFC's hooks first, then the scheme's, and asks the
//! scheme about each resume PFC wants to send ([`OverPfc::on_pfc_resume`]); the scheme sees PFC's
//! state (`&Pfc`) in every hook so it can leave alone what PFC holds.

use super::pfc::Pfc;
use super::{Actions, CtrlMsg, FcAction, FlowControl, PktMeta, Samples, SwitchView};
use crate::time::Time;

/// What happens to a resume standard PFC wants to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    Send,
    /// The scheme holds the priority paused until it lifts the pause itself.
    Drop,
    /// The scheme's own pause has this many quanta left: send a pause for them instead.
    PauseFor(u16),
}

/// The hooks of a scheme that runs over PFC; each sees PFC's state.
pub trait OverPfc {
    fn classify(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        view.queue_of_prio(pkt.prio)
    }
    fn on_enqueue(&mut self, _now: Time, _pkt: &mut PktMeta, _view: &SwitchView, _pfc: &Pfc, _out: &mut Actions) {}
    fn on_dequeue(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _pfc: &Pfc, _out: &mut Actions) {}
    fn on_drop(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _pfc: &Pfc, _out: &mut Actions) {}
    fn on_timer(&mut self, _now: Time, _view: &SwitchView, _pfc: &Pfc, _out: &mut Actions) {}
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// The link of local `port` went down ([`FlowControl::on_link_down`]); PFC has forgotten it.
    fn on_link_down(&mut self, _now: Time, _port: u16, _view: &SwitchView, _out: &mut Actions) {}
    /// Standard PFC wants to resume ingress (`port`, `prio`).
    fn on_pfc_resume(&self, _now: Time, _port: u16, _prio: u8, _view: &SwitchView) -> Resume {
        Resume::Send
    }
    fn counters(&self, _out: &mut Vec<(&'static str, u64)>) {}
    fn sample(&self, _now: Time, _view: &SwitchView, _out: &mut Samples) {}
    fn stamp(&mut self, _now: Time, _pkt: &mut PktMeta, _view: &SwitchView) {}
    fn on_control(&mut self, _now: Time, _from: u16, _msg: &CtrlMsg, _view: &SwitchView, _out: &mut Actions) {}
    fn uses_tags(&self) -> bool {
        false
    }
    /// Who a resume turned into a pause ([`Resume::PauseFor`]) is logged as.
    fn origin(&self) -> super::Origin {
        super::Origin::Scheme
    }
}

/// Scheme `X` with standard PFC underneath.
pub struct WithPfc<X> {
    pub pfc: Pfc,
    pub inner: X,
}

impl<X> std::ops::Deref for WithPfc<X> {
    type Target = X;
    fn deref(&self) -> &X {
        &self.inner
    }
}

impl<X> std::ops::DerefMut for WithPfc<X> {
    fn deref_mut(&mut self) -> &mut X {
        &mut self.inner
    }
}

impl<X: OverPfc> WithPfc<X> {
    pub fn new(pfc: Pfc, inner: X) -> WithPfc<X> {
        WithPfc { pfc, inner }
    }

    /// Let the scheme rule on the resumes PFC just pushed (from `start` on).
    fn reconcile(&self, now: Time, view: &SwitchView, start: usize, out: &mut Actions) {
        let mut k = start;
        while k < out.len() {
            if let FcAction::Send { port, msg: CtrlMsg::Pfc { prio, quanta: 0 }, .. } = out[k] {
                match self.inner.on_pfc_resume(now, port, prio, view) {
                    Resume::Send => {}
                    Resume::Drop => {
                        out.remove(k);
                        continue;
                    }
                    Resume::PauseFor(q) => {
                        if let FcAction::Send { msg: CtrlMsg::Pfc { quanta, .. }, by, .. } = &mut out[k] {
                            *quanta = q;
                            *by = self.inner.origin();
                        }
                    }
                }
            }
            k += 1;
        }
    }
}

impl<X: OverPfc> FlowControl for WithPfc<X> {
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        self.inner.classify(now, pkt, view)
    }

    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        self.pfc.on_enqueue(now, pkt, view, out);
        self.inner.on_enqueue(now, pkt, view, &self.pfc, out);
    }

    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        let start = out.len();
        self.pfc.on_dequeue(now, pkt, view, out);
        self.reconcile(now, view, start, out);
        self.inner.on_dequeue(now, pkt, view, &self.pfc, out);
    }

    fn on_drop(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        self.pfc.on_drop(now, pkt, view, out);
        self.inner.on_drop(now, pkt, view, &self.pfc, out);
    }

    fn on_timer(&mut self, now: Time, view: &SwitchView, out: &mut Actions) {
        if self.pfc.next_timer().is_some_and(|t| t <= now) {
            let start = out.len();
            self.pfc.on_timer(now, view, out);
            self.reconcile(now, view, start, out);
        }
        if self.inner.next_timer().is_some_and(|t| t <= now) {
            self.inner.on_timer(now, view, &self.pfc, out);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        super::earliest(self.pfc.next_timer(), self.inner.next_timer())
    }

    fn on_link_down(&mut self, now: Time, port: u16, view: &SwitchView, out: &mut Actions) {
        self.pfc.on_link_down(now, port, view, out);
        self.inner.on_link_down(now, port, view, out);
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        self.inner.counters(out);
    }

    fn sample(&self, now: Time, view: &SwitchView, out: &mut Samples) {
        self.inner.sample(now, view, out);
    }

    fn stamp(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView) {
        self.inner.stamp(now, pkt, view);
    }

    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        self.inner.on_control(now, from, msg, view, out);
    }

    fn uses_tags(&self) -> bool {
        self.inner.uses_tags()
    }
}

/// Any per-hop scheme over PFC as it is: its hooks unchanged, PFC's resumes sent as PFC wants
/// (the scheme pauses other things than priorities, e.g. BFC's queues).
pub struct Plain<X>(pub X);

/// A scheme's module with standard PFC underneath (the scheme's `pfc = true`), boxed for its arm
/// of `AnyFc`; PFC's settings are the run's (`flow_control.pfc`).
pub fn under_pfc<X: FlowControl>(module: X, at: &super::registry::BuildAt) -> Box<WithPfc<Plain<X>>> {
    Box::new(WithPfc::new(Pfc::new(at.pfc.clone(), at.nports, at.nprio), Plain(module)))
}

impl<X: FlowControl> OverPfc for Plain<X> {
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        self.0.classify(now, pkt, view)
    }
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, _pfc: &Pfc, out: &mut Actions) {
        self.0.on_enqueue(now, pkt, view, out)
    }
    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, _pfc: &Pfc, out: &mut Actions) {
        self.0.on_dequeue(now, pkt, view, out)
    }
    fn on_drop(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, _pfc: &Pfc, out: &mut Actions) {
        self.0.on_drop(now, pkt, view, out)
    }
    fn on_timer(&mut self, now: Time, view: &SwitchView, _pfc: &Pfc, out: &mut Actions) {
        self.0.on_timer(now, view, out)
    }
    fn next_timer(&self) -> Option<Time> {
        self.0.next_timer()
    }
    fn on_link_down(&mut self, now: Time, port: u16, view: &SwitchView, out: &mut Actions) {
        self.0.on_link_down(now, port, view, out)
    }
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        self.0.counters(out)
    }
    fn sample(&self, now: Time, view: &SwitchView, out: &mut Samples) {
        self.0.sample(now, view, out)
    }
    fn stamp(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView) {
        self.0.stamp(now, pkt, view)
    }
    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        self.0.on_control(now, from, msg, view, out)
    }
    fn uses_tags(&self) -> bool {
        self.0.uses_tags()
    }
}
