//! Floodgate (Liu et al., "Floodgate: Taming Incast in Datacenter Networks", CoNEXT 2021):
//! per-destination credit windows on switches that recognise incast traffic and hold it in
//! virtual output queues, so the last hop's buffer stays small and other traffic is not blocked.
//!
//! Why: an incast's senders each send at line rate, so by the time end-to-end congestion control
//! reacts, the last hop holds one BDP per sender. Floodgate's switches keep a window per
//! destination towards each next hop; a destination whose credits stop coming back is in an
//! incast, and its packets wait upstream in a VOQ of their own (§3.1, §3.2).
//!
//! The mechanism, as the paper gives it:
//! - Downstream (§4.1): per ingress port and destination, packets forwarded and not yet
//!   credited; every credit interval `T` a credit frame `<dst, credits, PSN>` goes back to each
//!   upstream switch with something to credit. delayCredit: while the destination's VOQ here
//!   holds more than `thre_credit`, its credits are held back (and the interval restarts).
//! - Upstream (§4.2): per egress port and destination a window initialised to
//!   `BDP_nextHop + C_out x T`; a packet is forwarded to the egress queue while its destination has
//!   window, else it goes to that destination's VOQ (a free one from the bitmap; when all are in
//!   use, a hash of the destination picks one); the non-incast queue is served strictly before
//!   the VOQs, which are served round robin only while their destination has window; a credit
//!   refills the window and wakes the VOQ. The last-hop ToR keeps no window (its egress faces
//!   a host) and hosts send no credits.
//! - VOQ groups (§4.2): up- and down-going traffic must not share a VOQ (Fig. 4's deadlock).
//! - Loss recovery (§4.3): PSN per (port, destination); `inflight = next PSN sent - last PSN
//!   credited`, `window = initial - inflight`; a switchSYN after a timeout without credits makes
//!   the downstream credit what it has.
//! - Hosts' support (§4.3, the ideal design): the first-hop ToR sends dstPause to a source host
//!   when the destination's VOQ passes `thre_off`, and dstResume below `thre_on`.
//!
//! Interpretation choices:
//! - Windows count packets, as the paper's ("decreased by one"); the initial window is
//!   `ceil((rate x HRTT + rate x T) / MTU)` with HRTT the next hop's round trip plus one MTU.
//! - The window is the PSN difference itself (§4.3): a packet sent direct is charged when it is
//!   queued (the paper's "forwarded to the egress queue") and gets its PSN when it leaves; a VOQ
//!   packet is charged when it leaves. So no separate counter can drift from the PSNs.
//! - VOQs are data queues 1.. of each egress port (queue 0 is the non-incast queue), at most
//!   `max_voq` per port; being per egress port, up- and down-going traffic never share one, so the
//!   grouping of §4.2 holds by construction. A VOQ shared by several destinations (hash) opens
//!   while any of them has window.
//! - One credit timer per switch ticks every `T` while anything awaits credit (the per-port
//!   timers of §4.1 with a common phase).

use super::{Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, SwitchView};
use crate::rng::mix;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Floodgate parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FloodgateConfig {
    /// Credit interval `T` (the default 10 us).
    #[serde(rename = "T")]
    pub t: Time,
    /// delayCredit threshold in BDPs of the next hop (the default 10 BDP).
    pub thre_credit_bdp: f64,
    /// VOQs per egress port (the default 100; limited by the port's queues less one).
    pub max_voq: usize,
    /// switchSYN after this long without credits while packets are in flight (§4.3: "a
    /// relatively large timeout").
    pub syn_timeout: Time,
    /// The ideal design's dstPause at the first-hop ToR (§4.3, "Hosts' support").
    pub dst_pause: bool,
    /// dstPause and dstResume thresholds in BDPs of the host link (§4.3: "one-hop BDP").
    pub thre_off_bdp: f64,
    pub thre_on_bdp: f64,
    /// Standard PFC underneath as a backstop (appendix B).
    pub pfc: bool,
}

impl Default for FloodgateConfig {
    fn default() -> Self {
        FloodgateConfig {
            t: Time::from_us(10),
            thre_credit_bdp: 10.0,
            max_voq: 100,
            syn_timeout: Time::from_ms(1),
            dst_pause: false,
            thre_off_bdp: 1.0,
            thre_on_bdp: 1.0,
            pfc: false,
        }
    }
}

impl FloodgateConfig {
    /// Errors name the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if self.t.0 == 0 {
            return Err("flow_control.floodgate.T: must be a positive time (the credit timer would never advance)".into());
        }
        if self.syn_timeout.0 == 0 {
            return Err("flow_control.floodgate.syn_timeout: must be a positive time".into());
        }
        self.t.check_setting("flow_control.floodgate.T")?;
        self.syn_timeout.check_setting("flow_control.floodgate.syn_timeout")?;
        for (name, v) in [("thre_credit_bdp", self.thre_credit_bdp), ("thre_off_bdp", self.thre_off_bdp), ("thre_on_bdp", self.thre_on_bdp)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("flow_control.floodgate.{name}: {v} must be a number of BDPs, 0 or more"));
            }
        }
        Ok(())
    }
}

/// Upstream state per (egress port, destination).
#[derive(Clone, Copy, Debug, Default)]
struct Win {
    /// PSN of the next packet sent, and one past the last one credited.
    next_psn: u32,
    credited: u32,
    /// Packets charged at enqueue to the egress queue that have no PSN yet.
    queued: u32,
    /// Its VOQ, if it has one.
    voq: Option<u16>,
    /// When the last credit came.
    last_credit: Time,
}

/// Downstream state per (ingress port, destination).
#[derive(Clone, Copy, Debug, Default)]
struct Owed {
    /// Packets forwarded since the last credit, and the PSN of the last one.
    count: u32,
    psn: u32,
}

/// Floodgate on one switch.
pub struct Floodgate {
    pub cfg: FloodgateConfig,
    win: HashMap<(u16, u32), Win>,
    owed: HashMap<(u16, u32), Owed>,
    /// Destinations in each VOQ, `(port, queue) -> destinations`, and each destination's VOQs
    /// over the switch's ports: the gate and delayCredit questions look only at these.
    voq_dsts: HashMap<(u16, u16), Vec<u32>>,
    dst_voqs: HashMap<u32, Vec<(u16, u16)>>,
    /// dstPause state: (host port, destination) paused.
    dst_paused: HashMap<u32, Vec<u16>>,
    /// Initial window per egress port (packets), computed on first use.
    initial: Vec<u32>,
    timer: Option<Time>,
    // counters for the outputs
    pub credits_sent: u64,
    pub credits_delayed: u64,
    pub voq_allocs: u64,
    pub voq_hashed: u64,
    pub syns: u64,
    pub dst_pauses: u64,
}

const SYN: u8 = 1;

impl Floodgate {
    pub fn new(cfg: FloodgateConfig) -> Floodgate {
        Floodgate {
            cfg,
            win: HashMap::new(),
            owed: HashMap::new(),
            voq_dsts: HashMap::new(),
            dst_voqs: HashMap::new(),
            dst_paused: HashMap::new(),
            initial: Vec::new(),
            timer: None,
            credits_sent: 0,
            credits_delayed: 0,
            voq_allocs: 0,
            voq_hashed: 0,
            syns: 0,
            dst_pauses: 0,
        }
    }

    /// Whether egress `p` keeps windows: it faces a switch (the last hop faces a host).
    fn windowed(view: &SwitchView, p: u16) -> bool {
        !view.peer(p).is_host()
    }

    fn initial(&mut self, view: &SwitchView, p: u16) -> u32 {
        if self.initial.is_empty() {
            let mtu = view.info.mtu_bytes as u64;
            self.initial = (0..view.nports() as u16)
                .map(|q| {
                    let bytes = view.hop_bdp(q) + view.rate(q).bytes_in(self.cfg.t);
                    bytes.div_ceil(mtu.max(1)).max(1) as u32
                })
                .collect();
        }
        self.initial[p as usize]
    }

    /// Packets charged to this switch's windows and not yet credited, over every (egress port,
    /// destination): zero once every credit has come back, however many packets were lost.
    pub fn in_flight(&self) -> u64 {
        self.win.values().map(|w| Self::used(w) as u64).sum()
    }

    /// `inflight` of §4.3 plus what is charged and queued.
    fn used(w: &Win) -> u32 {
        w.next_psn.wrapping_sub(w.credited) + w.queued
    }

    fn voqs(&self, view: &SwitchView) -> usize {
        self.cfg.max_voq.min(view.nqueues().saturating_sub(1))
    }

    /// A VOQ for destination `dst` at egress `p`: a free one, else a hash of the destination.
    fn alloc_voq(&mut self, view: &SwitchView, p: u16, dst: u32) -> u16 {
        let n = self.voqs(view);
        for q in 1..=n as u16 {
            if !self.voq_dsts.contains_key(&(p, q)) {
                self.voq_allocs += 1;
                return q;
            }
        }
        self.voq_hashed += 1;
        1 + (mix(&[dst as u64, 0xF10D]) % n as u64) as u16
    }

    fn has_window(&mut self, view: &SwitchView, p: u16, dst: u32) -> bool {
        let init = self.initial(view, p);
        self.win.get(&(p, dst)).is_none_or(|w| Self::used(w) < init)
    }

    /// Open or close VOQ `q` of port `p`: open while any destination using it has window.
    fn update_gate(&mut self, now: Time, view: &SwitchView, p: u16, q: u16, out: &mut Actions) {
        let init = self.initial(view, p);
        let open = self.voq_dsts.get(&(p, q)).is_some_and(|ds| ds.iter().any(|d| self.win.get(&(p, *d)).is_some_and(|w| Self::used(w) < init)));
        if open == view.gate_closed(p, q, now) {
            out.push(FcAction::Gate { port: p, queue: q, until: if open { now } else { Time::MAX } });
        }
    }

    fn arm(&mut self, now: Time) {
        if self.timer.is_none() {
            self.timer = Some(now + self.cfg.t);
        }
    }

    /// Bytes in the VOQs holding `dst` at this switch (a shared VOQ counts whole).
    fn voq_bytes(&self, view: &SwitchView, dst: u32) -> u64 {
        self.dst_voqs.get(&dst).map_or(0, |v| v.iter().map(|&(p, q)| view.queue_bytes(p, q)).sum())
    }
}

impl FlowControl for Floodgate {
    /// §4.2 "Allocate VOQs for incast flows dynamically": a destination with a VOQ stays in it;
    /// else direct while it has window (charged now), else a VOQ.
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        let p = pkt.egress;
        if !Self::windowed(view, p) || self.voqs(view) == 0 {
            return 0;
        }
        if let Some(q) = self.win.get(&(p, pkt.dst)).and_then(|w| w.voq) {
            return q;
        }
        if self.has_window(view, p, pkt.dst) {
            return 0;
        }
        let q = self.alloc_voq(view, p, pkt.dst);
        let w = self.win.entry((p, pkt.dst)).or_insert(Win { last_credit: now, ..Default::default() });
        w.voq = Some(q);
        self.voq_dsts.entry((p, q)).or_default().push(pkt.dst);
        self.dst_voqs.entry(pkt.dst).or_default().push((p, q));
        q
    }

    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        let p = pkt.egress;
        if Self::windowed(view, p) {
            if pkt.queue == 0 {
                let w = self.win.entry((p, pkt.dst)).or_insert(Win { last_credit: now, ..Default::default() });
                w.queued += 1;
                self.arm(now);
            } else {
                // a new VOQ starts closed: its destination has no window
                self.update_gate(now, view, p, pkt.queue, out);
            }
        }
        // the ideal design: the first-hop ToR pauses the source host of a destination in incast
        if self.cfg.dst_pause && view.peer(pkt.ingress).is_host() {
            let off = (view.hop_bdp(pkt.ingress) as f64 * self.cfg.thre_off_bdp) as u64;
            if self.voq_bytes(view, pkt.dst) > off {
                let hosts = self.dst_paused.entry(pkt.dst).or_default();
                if !hosts.contains(&pkt.ingress) {
                    hosts.push(pkt.ingress);
                    self.dst_pauses += 1;
                    out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::DstPause { dst: pkt.dst, pause: true }, by: Origin::Scheme });
                }
            }
        }
    }

    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        // downstream: what came from an upstream switch is owed a credit
        if !view.peer(pkt.ingress).is_host() {
            let o = self.owed.entry((pkt.ingress, pkt.dst)).or_default();
            o.count += 1;
            o.psn = pkt.tags.psn;
            self.arm(now);
        }
        // upstream: the packet takes its PSN; a VOQ packet is charged now
        let p = pkt.egress;
        if Self::windowed(view, p) {
            let init = self.initial(view, p);
            if let Some(w) = self.win.get_mut(&(p, pkt.dst)) {
                if pkt.queue == 0 {
                    w.queued = w.queued.saturating_sub(1);
                }
                w.next_psn = w.next_psn.wrapping_add(1);
                if pkt.queue != 0 && Self::used(w) >= init {
                    self.update_gate(now, view, p, pkt.queue, out);
                }
            }
            if pkt.queue != 0 && view.queue_packets(p, pkt.queue) == 0 {
                // the VOQ drained: its destinations go direct again
                let q = pkt.queue;
                if let Some(ds) = self.voq_dsts.remove(&(p, q)) {
                    for d in ds {
                        if let Some(w) = self.win.get_mut(&(p, d)) {
                            w.voq = None;
                        }
                        if let Some(v) = self.dst_voqs.get_mut(&d) {
                            v.retain(|&x| x != (p, q));
                            if v.is_empty() {
                                self.dst_voqs.remove(&d);
                            }
                        }
                    }
                    out.push(FcAction::Gate { port: p, queue: q, until: now });
                }
            }
        }
        if self.cfg.dst_pause && !self.dst_paused.is_empty() {
            if let Some(hosts) = self.dst_paused.get(&pkt.dst) {
                let on = (view.hop_bdp(hosts[0]) as f64 * self.cfg.thre_on_bdp) as u64;
                if self.voq_bytes(view, pkt.dst) < on {
                    for &h in self.dst_paused.remove(&pkt.dst).expect("present").iter() {
                        out.push(FcAction::Send { port: h, msg: CtrlMsg::DstPause { dst: pkt.dst, pause: false }, by: Origin::Scheme });
                    }
                }
            }
        }
    }

    /// The PSN the next hop credits back (§4.3).
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, view: &SwitchView) {
        if Self::windowed(view, pkt.egress) {
            if let Some(w) = self.win.get(&(pkt.egress, pkt.dst)) {
                pkt.tags.psn = w.next_psn.wrapping_sub(1);
            }
        }
    }

    /// A credit refills the window and wakes the VOQ (§4.2); a switchSYN asks for a credit now.
    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        match *msg {
            CtrlMsg::Credit { dst, psn, .. } => {
                let Some(w) = self.win.get_mut(&(from, dst)) else { return };
                let through = psn.wrapping_add(1);
                // credits only move forward (a reordered or repeated credit changes nothing)
                if through.wrapping_sub(w.credited) as i32 > 0 {
                    w.credited = through;
                }
                w.last_credit = now;
                if let Some(q) = w.voq {
                    self.update_gate(now, view, from, q, out);
                    out.push(FcAction::Kick { port: from });
                }
            }
            CtrlMsg::Other { tag: SYN, .. } => {
                for ((i, _), o) in self.owed.iter_mut() {
                    if *i == from {
                        o.count = o.count.max(1);
                    }
                }
                self.arm(now);
            }
            _ => {}
        }
    }

    /// Every `T`: credits to the upstreams (delayCredit holds those of a destination whose VOQ is
    /// long), and switchSYNs for windows without credit for `syn_timeout`.
    fn on_timer(&mut self, now: Time, view: &SwitchView, out: &mut Actions) {
        self.timer = None;
        let mut keys: Vec<(u16, u32)> = self.owed.iter().filter(|(_, o)| o.count > 0).map(|(&k, _)| k).collect();
        keys.sort_unstable();
        for (i, dst) in keys {
            if self.voq_bytes(view, dst) > (view.hop_bdp(i) as f64 * self.cfg.thre_credit_bdp) as u64 {
                self.credits_delayed += 1;
                continue;
            }
            let o = self.owed.get_mut(&(i, dst)).expect("listed");
            out.push(FcAction::Send { port: i, msg: CtrlMsg::Credit { dst, credits: o.count, psn: o.psn }, by: Origin::Scheme });
            o.count = 0;
            self.credits_sent += 1;
        }
        let mut syn_ports: Vec<u16> = vec![];
        for (&(p, _), w) in self.win.iter_mut() {
            if Self::used(w) > 0 && now >= w.last_credit + self.cfg.syn_timeout {
                w.last_credit = now;
                if !syn_ports.contains(&p) {
                    syn_ports.push(p);
                }
            }
        }
        syn_ports.sort_unstable();
        for p in syn_ports {
            self.syns += 1;
            out.push(FcAction::Send { port: p, msg: CtrlMsg::Other { tag: SYN, a: 0, b: 0 }, by: Origin::Scheme });
        }
        let waiting = self.owed.values().any(|o| o.count > 0) || self.win.values().any(|w| Self::used(w) > 0);
        if waiting {
            self.arm(now);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.timer
    }

    /// The link of `port` went down (`crate::faults`): its windows (what was in flight on it is
    /// lost, and its VOQs were emptied), the credits owed to the upstream behind it and the
    /// dstPauses sent to a host behind it are forgotten. When the link comes back its windows
    /// start afresh.
    fn on_link_down(&mut self, _now: Time, port: u16, _view: &SwitchView, _out: &mut Actions) {
        self.win.retain(|&(p, _), _| p != port);
        self.owed.retain(|&(i, _), _| i != port);
        self.voq_dsts.retain(|&(p, _), _| p != port);
        for v in self.dst_voqs.values_mut() {
            v.retain(|&(p, _)| p != port);
        }
        self.dst_voqs.retain(|_, v| !v.is_empty());
        for v in self.dst_paused.values_mut() {
            v.retain(|&h| h != port);
        }
        self.dst_paused.retain(|_, v| !v.is_empty());
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("floodgate_credits", self.credits_sent));
        out.push(("floodgate_credits_delayed", self.credits_delayed));
        out.push(("floodgate_voq_allocs", self.voq_allocs));
        out.push(("floodgate_voq_hashed", self.voq_hashed));
        out.push(("floodgate_syns", self.syns));
        out.push(("floodgate_dst_pauses", self.dst_pauses));
    }

    fn uses_tags(&self) -> bool {
        true
    }
}
