//! PFC w/ tag (Liu et al., "Floodgate", CoNEXT 2021, appendix B "PFC w/ tag discussion"): a
//! per-destination pause that Floodgate's paper compares itself with (Fig. 24).
//!
//! Why: standard PFC pauses a whole priority of a link, so an incast's pause also stops every
//! other flow sharing that link (HOL blocking, pause storms). PFC w/ tag "states what destination
//! to pause rather than the entire traffic between two switches, and it works on the egress
//! queue": it is Floodgate's isolation without Floodgate's windows — reactive (a queue has built)
//! where Floodgate is proactive (credits stop coming).
//!
//! The mechanism, as appendix B gives it:
//! - "When the egress queue length of the last-hop ToR switch exceeds a threshold, a pause frame
//!   tagged with the destination experiencing incast is sent to the upstream switch."
//! - "When the upstream switch receives a pause frame, upcoming packets whose destination is
//!   paused are pushed into a dedicated VOQ." The VOQ does not send while the destination is
//!   paused.
//! - "If the VOQ queue length of the switch exceeds the PFC threshold, pause frames can be sent to
//!   its upstream further" — hop by hop back to the sources, whose NICs keep per-destination
//!   queues and obey the pause (the engine's NIC obeys `DstPause`, as for Floodgate's dstPause).
//! - "To avoid unnecessary transmission of resume frames, the switch should record the paused
//!   upstream entities for each destination": a resume goes only to those paused, once the queue
//!   is below the resume threshold.
//!
//! Interpretation choices (the appendix gives no numbers):
//! - The queue of a destination is, at the last hop, the whole egress queue towards its host;
//!   elsewhere the bytes in the destination's VOQ at the egress port it leaves by.
//! - Thresholds in BDPs of the hop the pause goes back over (`pause_bdp`, default 1, as Floodgate's
//!   dstPause "one-hop BDP"; `resume_bdp`, default 0.5): the pause must take effect before the
//!   queue passes what that hop can bring in meanwhile.
//! - The upstream is paused per (ingress it came by, destination): the one that sent the packet
//!   that found the queue long.
//! - VOQs as Floodgate's (data queues 1.. of the egress port, `max_voq` per port, a free one else a
//!   hash of the destination, released when drained); queue 0 is served strictly first (the front
//!   sets the scheduler); packets already queued direct when the pause comes leave as before.

use super::{Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, SwitchView};
use crate::rng::mix;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// PFC w/ tag parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PfcTagConfig {
    /// Pause a destination's upstream when its queue here passes this many BDPs of the upstream
    /// hop.
    pub pause_bdp: f64,
    /// Resume them below this many BDPs.
    pub resume_bdp: f64,
    /// VOQs per egress port (limited by the port's queues less one).
    pub max_voq: usize,
}

impl Default for PfcTagConfig {
    fn default() -> Self {
        PfcTagConfig { pause_bdp: 1.0, resume_bdp: 0.5, max_voq: 100 }
    }
}

impl PfcTagConfig {
    /// Errors name the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [("pause_bdp", self.pause_bdp), ("resume_bdp", self.resume_bdp)] {
            if !(v.is_finite() && v > 0.0 && v <= 1e6) {
                return Err(format!("flow_control.pfc_tag.{name}: {v} must be a number of BDPs above 0"));
            }
        }
        if self.resume_bdp > self.pause_bdp {
            return Err(format!("flow_control.pfc_tag.resume_bdp: {} is above pause_bdp ({}); allowed: at most pause_bdp", self.resume_bdp, self.pause_bdp));
        }
        if self.max_voq == 0 {
            return Err("flow_control.pfc_tag.max_voq: must be 1 or more".into());
        }
        Ok(())
    }
}

/// PFC w/ tag on one switch.
pub struct PfcTag {
    pub cfg: PfcTagConfig,
    /// Destinations the neighbour behind each egress port has paused.
    paused: HashMap<(u16, u32), ()>,
    /// Each (egress port, destination)'s VOQ, and each VOQ's destinations.
    voq: HashMap<(u16, u32), u16>,
    voq_dsts: HashMap<(u16, u16), Vec<u32>>,
    /// The upstream ingresses this switch paused, per destination.
    paused_up: HashMap<u32, Vec<u16>>,
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub voq_allocs: u64,
}

impl PfcTag {
    pub fn new(cfg: PfcTagConfig) -> PfcTag {
        PfcTag {
            cfg,
            paused: HashMap::new(),
            voq: HashMap::new(),
            voq_dsts: HashMap::new(),
            paused_up: HashMap::new(),
            pauses_sent: 0,
            resumes_sent: 0,
            voq_allocs: 0,
        }
    }

    fn voqs(&self, view: &SwitchView) -> usize {
        self.cfg.max_voq.min(view.nqueues().saturating_sub(1))
    }

    /// The queue of `dst` at egress `p`: the whole port at the last hop, else its VOQ.
    fn queue_len(&self, view: &SwitchView, p: u16, dst: u32) -> u64 {
        if view.peer(p).is_host() {
            view.port_bytes(p)
        } else {
            self.voq.get(&(p, dst)).map_or(0, |&q| view.queue_bytes(p, q))
        }
    }

    /// Open or close VOQ `q` of `p`: open while any destination in it is not paused.
    fn update_gate(&self, now: Time, view: &SwitchView, p: u16, q: u16, out: &mut Actions) {
        let open = self.voq_dsts.get(&(p, q)).is_none_or(|ds| ds.iter().any(|d| !self.paused.contains_key(&(p, *d))));
        if open == view.gate_closed(p, q, now) {
            out.push(FcAction::Gate { port: p, queue: q, until: if open { now } else { Time::MAX } });
        }
    }
}

impl FlowControl for PfcTag {
    /// A destination the next hop paused (or one still in its VOQ) goes to its VOQ.
    fn classify(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        let p = pkt.egress;
        let n = self.voqs(view) as u16;
        if n == 0 {
            return 0;
        }
        if let Some(&q) = self.voq.get(&(p, pkt.dst)) {
            return q;
        }
        if !self.paused.contains_key(&(p, pkt.dst)) {
            return 0;
        }
        let q = match (1..=n).find(|q| !self.voq_dsts.contains_key(&(p, *q))) {
            Some(q) => q,
            None => 1 + (mix(&[pkt.dst as u64, 0x7A6]) % n as u64) as u16,
        };
        self.voq_allocs += 1;
        self.voq.insert((p, pkt.dst), q);
        self.voq_dsts.entry((p, q)).or_default().push(pkt.dst);
        q
    }

    /// The destination's queue here passed the threshold: pause the upstream that fed it.
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        let p = pkt.egress;
        if pkt.queue != 0 {
            self.update_gate(now, view, p, pkt.queue, out);
        }
        let th = (view.hop_bdp(pkt.ingress) as f64 * self.cfg.pause_bdp) as u64;
        if self.queue_len(view, p, pkt.dst) > th {
            let ups = self.paused_up.entry(pkt.dst).or_default();
            if !ups.contains(&pkt.ingress) {
                ups.push(pkt.ingress);
                self.pauses_sent += 1;
                out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::DstPause { dst: pkt.dst, pause: true }, by: Origin::Scheme });
            }
        }
    }

    /// Below the resume threshold: resume the upstreams paused for the destination; a drained
    /// VOQ is released.
    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        let p = pkt.egress;
        if let Some(ups) = self.paused_up.get(&pkt.dst) {
            let th = (view.hop_bdp(ups[0]) as f64 * self.cfg.resume_bdp) as u64;
            if self.queue_len(view, p, pkt.dst) < th {
                for h in self.paused_up.remove(&pkt.dst).expect("present") {
                    self.resumes_sent += 1;
                    out.push(FcAction::Send { port: h, msg: CtrlMsg::DstPause { dst: pkt.dst, pause: false }, by: Origin::Scheme });
                }
            }
        }
        if pkt.queue != 0 && view.queue_packets(p, pkt.queue) == 0 {
            if let Some(ds) = self.voq_dsts.remove(&(p, pkt.queue)) {
                for d in ds {
                    self.voq.remove(&(p, d));
                }
                out.push(FcAction::Gate { port: p, queue: pkt.queue, until: now });
            }
        }
    }

    /// A tagged pause or resume from the next hop behind `from`.
    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        if let CtrlMsg::DstPause { dst, pause } = *msg {
            if pause {
                self.paused.insert((from, dst), ());
            } else {
                self.paused.remove(&(from, dst));
            }
            if let Some(&q) = self.voq.get(&(from, dst)) {
                self.update_gate(now, view, from, q, out);
                out.push(FcAction::Kick { port: from });
            }
        }
    }

    /// The neighbour behind `port` is gone: forget its pauses and those sent to it.
    fn on_link_down(&mut self, _now: Time, port: u16, _view: &SwitchView, _out: &mut Actions) {
        self.paused.retain(|&(p, _), _| p != port);
        self.voq.retain(|&(p, _), _| p != port);
        self.voq_dsts.retain(|&(p, _), _| p != port);
        for v in self.paused_up.values_mut() {
            v.retain(|&h| h != port);
        }
        self.paused_up.retain(|_, v| !v.is_empty());
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("pfc_tag_pauses", self.pauses_sent));
        out.push(("pfc_tag_resumes", self.resumes_sent));
        out.push(("pfc_tag_voq_allocs", self.voq_allocs));
    }
}

impl crate::registry::Declared for PfcTagConfig {
    const NAME: &'static str = "pfc_tag";
    const ABOUT: &'static str = "PFC w/ tag: per-destination pause (Floodgate, CoNEXT 2021, appendix B)";
    const COUNTERS: &'static [&'static str] = &["pfc_tag_pauses", "pfc_tag_resumes", "pfc_tag_voq_allocs"];
}

impl super::registry::Scheme for PfcTagConfig {
    /// Queue 0 holds the non-incast traffic, served strictly before the VOQs (§4.2, appendix B).
    fn strict_first_queue(&self) -> bool {
        true
    }
    /// Its pauses are per destination, so the fabric may stay lossy.
    fn pauses(&self) -> bool {
        false
    }
    fn one_class(&self) -> bool {
        true
    }
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String> {
        super::registry::at_least_two_queues(net, "PFC w/ tag", "queue 0 and a VOQ")?;
        PfcTagConfig::validate(self)
    }
    fn build(&self, _at: &super::registry::BuildAt) -> super::AnyFc {
        super::AnyFc::PfcTag(Box::new(PfcTag::new(self.clone())))
    }
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        0
    }
}
