//! FlowSail: per-flow flow control with as few as two queues per port — hierarchical congested-flow
//! identification, on-demand isolation into a reserved queue (`rsvQ`), and order-mark matching.
//!
//! Why: BFC pauses an upstream *queue*, so every flow sharing it with a congested flow is paused
//! too (Fig. 5); with few queues that is most flows. FlowSail decides per flow at the congested
//! port (O1) and, at the upstream, moves only the paused flows into one paused queue while the
//! other queues keep sending (O2), approximating ideal per-flow flow control (§III).
//!
//! The mechanism, as the paper gives it:
//! - Tables (§IV-A, §IV-B): NFT (normal flows: `qIdx`, `size`, `pauseNum`), CFT (congested flows:
//!   `size`, `status`, FID, timestamp), QT (per port and queue: `flowNum`, `cfNum`).
//! - Algorithm 1 (enqueue), lines 2-16: a flow in CFT goes to `rsvQ`; an old flow (NFT `size` not
//!   0) to its queue; a new one to an empty queue or else a random one (BFC's mapping,
//!   `bfc::pick_empty_queue`), counted in `flowNum`. Lines 17-27: if the queue is longer than
//!   `Q_h`, the packet is a congestion contributor; else if longer than `Q_l`, it is one when its
//!   flow holds more than `S_fair = Q >> ceil(log2 flowNum)` (Eq. 1); a contributor is marked
//!   `ifCongested` and counted in `pauseNum`, and a PAUSE carrying the FID goes upstream when
//!   `pauseNum` leaves 0. `Q_l = HRTT x mu / N_active`, `Q_h = 3 x HRTT x mu / N_active` (§IV-B).
//! - Algorithm 2 (dequeue), lines 1-14: sizes, `pauseNum` (RESUME when it returns to 0) and
//!   `flowNum` follow the departures; a resumed CFT flow with nothing left in `rsvQ` leaves CFT
//!   once its timestamp is older than 2 HRTT (§IV-C, "release of congested flow").
//! - Algorithm 2 (control frames), lines 15-34: a PAUSE adds the flow to CFT; if it still has
//!   packets in its original queue, two order marks go into that queue and `rsvQ`, and the
//!   original queue is paused until the RESUME; `cfNum` of `rsvQ` counts PAUSEs less RESUMEs and
//!   `rsvQ` is paused while it is above 0 (§IV-C, "Queue Scheduler"). The order mark in `rsvQ`
//!   holds it until its twin has left the original queue (Fig. 6, §V): the engine's markers.
//! - At the first hop the NIC pauses and resumes the flow itself (FID pause, `fc::nic`).
//!
//! Interpretation choices:
//! - `pauseNum` is kept per flow over both tables: a flow moved into CFT while packets marked in
//!   NFT are still queued would otherwise send a RESUME from one table while the other still
//!   counts contributors.
//! - The tables are keyed by the flow id itself (the paper's cuckoo hash at 70% load rarely
//!   collides, §V).
//! - `rsvQ` is the port's last queue; normal flows use the others (two queues: one and one).
//! - `Q` in the tests of lines 17-23 is the queue's bytes with the arriving packet in it, as is the
//!   flow's `size` (line 16 counts the packet before line 17 tests). So a flow alone in its queue
//!   holds exactly `S_fair = Q` and is paused only above `Q_h`: §IV-B's secondary decision applies
//!   "when a queue length exceeds a given threshold *and serves more than one flow*". (Counting Q
//!   without the packet makes every lone flow a contributor above `Q_l = HBDP / N_active`, a few
//!   packets with 8 queues: in the §VI-B fabric, `fabric-webserver.toml` at 80% load, large
//!   flows' mean FCT slowdown was 8.5 that way and is 6.6 this way.) `flowNum` is at least 1 in
//!   Eq. 1; `N_active` counts the port's non-empty, open queues, at least 1.
//! - The original queue paused by line 24 is remembered in the CFT entry and resumed by the
//!   flow's RESUME even if its packets have left meanwhile; several isolated flows may hold the
//!   same original queue, which reopens when the last of them resumes.
//! - The CFT timestamp is the flow's last enqueue or dequeue (§IV-C: "updated with every packet
//!   enqueue or dequeue operation"); a RESUME does not renew it. So a RESUME releases at once
//!   (lines 33-34) a flow with nothing in `rsvQ` whose last packet is 2 HRTT old; an entry not yet
//!   due is removed lazily, the next time the flow's packet arrives (line 9's test, made when it
//!   can first be true).
//! - Consequence of the paper's `rsvQ` (measured, `fig10.toml`): `cfNum` gates `rsvQ` for every
//!   flow in it, so a resumed flow still in CFT waits while any other flow isolated at that port is
//!   paused, and a flow that keeps sending refreshes its timestamp and stays in CFT. A large flow,
//!   once isolated, then sits behind the gate for much of its life, and the closed `rsvQ` grows
//!   past `Q_h`, so the hop before pauses it too, back to its NIC. §VII names the HoL blocking among
//!   congested flows (there through order marks); in the §VI-B fabric it is the gate that makes
//!   FlowSail's large flows slower than BFC's.

use super::{Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, Samples, SwitchView, SWITCH_WIDE};
use crate::packet::tag;
use crate::rng::{stream, Rng};
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// FlowSail parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlowsailConfig {
    /// `Q_l` in hop BDPs at the fair drain rate (§IV-B: 1).
    pub q_l_hrtt: f64,
    /// `Q_h` in hop BDPs at the fair drain rate (§IV-B: 3).
    pub q_h_hrtt: f64,
    /// CFT release threshold in hop RTTs (§IV-C: 2).
    pub release_hrtt: f64,
    /// Standard PFC underneath as a backstop (§VI-B evaluates every scheme with PFC enabled).
    pub pfc: bool,
}

impl Default for FlowsailConfig {
    fn default() -> Self {
        FlowsailConfig { q_l_hrtt: 1.0, q_h_hrtt: 3.0, release_hrtt: 2.0, pfc: true }
    }
}

impl FlowsailConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.q_l_hrtt > 0.0 && self.q_h_hrtt >= self.q_l_hrtt) {
            return Err(format!(
                "flow_control.flowsail: need 0 < q_l_hrtt <= q_h_hrtt; got {} and {}",
                self.q_l_hrtt, self.q_h_hrtt
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Nft {
    q: u16,
    /// Bytes of the flow in its queue.
    size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Paused,
    Resumed,
}

#[derive(Clone, Copy, Debug)]
struct Cft {
    /// The egress port the flow is isolated at.
    port: u16,
    /// Bytes of the flow in `rsvQ`.
    size: u64,
    status: Status,
    ts: Time,
    /// The original queue line 24 paused, if it did.
    orig: Option<u16>,
}

/// Eq. 1 (§IV-B, Algorithm 1 line 22): the fair share of a queue of `q` bytes among `flow_num`
/// active flows, `S_fair = Q >> ceil(log2 flowNum)`. Why a shift: the switch computes it in the
/// data plane by counting bits, and rounding the logarithm up never under-regulates a flow when
/// `flowNum` is not a power of two. `flowNum` 0 counts as 1 (the arriving flow itself).
pub fn s_fair(q: u64, flow_num: u32) -> u64 {
    let n = flow_num.max(1);
    // ceil(log2 n) = the bit length of n - 1
    q >> (32 - (n - 1).leading_zeros())
}

/// FlowSail on one switch.
pub struct Flowsail {
    pub cfg: FlowsailConfig,
    nqueues: usize,
    /// NFT and CFT, by flow id.
    nft: HashMap<u32, Nft>,
    cft: HashMap<u32, Cft>,
    /// Contributors (`ifCongested` packets) of each flow still in the switch: its `pauseNum`.
    pause_num: HashMap<u32, u32>,
    /// QT: `flowNum` per `<port, queue>`.
    flow_num: Vec<u32>,
    /// QT's `cfNum` of each port's `rsvQ`.
    cf_num: Vec<u32>,
    /// Isolated flows holding each `<port, queue>` (an original queue) paused.
    orig_holds: HashMap<(u16, u16), u32>,
    rr: Vec<u16>,
    rng: Rng,
    hrtt: Option<Time>,
    // counters for the outputs
    pub pauses: u64,
    /// PAUSEs sent because the queue passed `Q_h` (line 17: every flow of the queue).
    pub pauses_above_q_h: u64,
    /// PAUSEs sent for a packet entering `rsvQ`: a flow isolated here whose `rsvQ` holds it,
    /// paused in turn at the hop before (how an isolation travels back to the NIC).
    pub pauses_from_rsvq: u64,
    pub resumes: u64,
    pub isolations: u64,
    pub releases: u64,
    pub order_marks: u64,
    pub cft_peak: u64,
    pub collisions: u64,
}

impl Flowsail {
    pub fn new(cfg: FlowsailConfig, node: u32, nports: usize, seed: u64) -> Flowsail {
        Flowsail {
            cfg,
            nqueues: 0,
            nft: HashMap::new(),
            cft: HashMap::new(),
            pause_num: HashMap::new(),
            flow_num: Vec::new(),
            cf_num: vec![0; nports],
            orig_holds: HashMap::new(),
            rr: vec![0; nports],
            rng: Rng::stream(seed, stream::FLOWSAIL, node as u64),
            hrtt: None,
            pauses: 0,
            pauses_above_q_h: 0,
            pauses_from_rsvq: 0,
            resumes: 0,
            isolations: 0,
            releases: 0,
            order_marks: 0,
            cft_peak: 0,
            collisions: 0,
        }
    }

    fn setup(&mut self, view: &SwitchView) {
        if self.flow_num.is_empty() {
            self.nqueues = view.nqueues();
            self.flow_num = vec![0; view.nports() * self.nqueues];
            self.hrtt = Some((0..view.nports() as u16).map(|p| view.hrtt(p)).max().unwrap_or(Time::ZERO));
        }
    }

    /// `rsvQ` of a port with `n` queues.
    fn rsv(n: usize) -> u16 {
        (n - 1) as u16
    }

    fn qt(&mut self, port: u16, q: u16) -> &mut u32 {
        &mut self.flow_num[port as usize * self.nqueues + q as usize]
    }

    /// `(Q_l, Q_h)` at port `p` now (§IV-B).
    pub fn thresholds(&self, now: Time, view: &SwitchView, p: u16) -> (u64, u64) {
        let hrtt = self.hrtt.unwrap_or_else(|| view.hrtt(p));
        let per_queue = view.rate(p).bytes_in(hrtt) as f64 / view.open_active_queues(p, now).max(1) as f64;
        ((per_queue * self.cfg.q_l_hrtt) as u64, (per_queue * self.cfg.q_h_hrtt) as u64)
    }

    /// §IV-C: a resumed flow with nothing in `rsvQ` whose timestamp is 2 HRTT old leaves CFT.
    fn releasable(&self, c: &Cft, now: Time) -> bool {
        let release = Time((self.hrtt.unwrap_or(Time::ZERO).0 as f64 * self.cfg.release_hrtt) as u64);
        c.status == Status::Resumed && c.size == 0 && now >= c.ts + release
    }

    /// Whether `flow` is in CFT (isolated at this switch).
    pub fn is_congested(&self, flow: u32) -> bool {
        self.cft.contains_key(&flow)
    }

    fn gate(port: u16, queue: u16, close: bool, out: &mut Actions) {
        out.push(FcAction::Gate { port, queue, until: if close { Time::MAX } else { Time::ZERO } });
    }
}

impl FlowControl for Flowsail {
    /// Algorithm 1, lines 2-14: which queue.
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        self.setup(view);
        let rsv = Self::rsv(self.nqueues);
        if let Some(c) = self.cft.get(&pkt.flow) {
            // §IV-C: a resumed flow with nothing in rsvQ for 2 HRTT leaves CFT
            if self.releasable(c, now) {
                self.cft.remove(&pkt.flow);
                self.releases += 1;
            } else {
                return rsv;
            }
        }
        if let Some(e) = self.nft.get(&pkt.flow) {
            if e.size != 0 {
                return e.q;
            }
        }
        let nd = (self.nqueues - 1).max(1);
        let (q, collided) = super::bfc::pick_empty_queue(view, pkt.egress, nd, &Default::default(), &mut self.rr[pkt.egress as usize], &mut self.rng);
        self.collisions += collided as u64;
        self.nft.insert(pkt.flow, Nft { q, size: 0 });
        q
    }

    /// Algorithm 1, lines 5, 15-16 (sizes and `flowNum`) and 17-27 (identification).
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        self.setup(view);
        let size = pkt.size as u64;
        let flow_bytes = if pkt.queue == Self::rsv(self.nqueues) && self.cft.contains_key(&pkt.flow) {
            let c = self.cft.get_mut(&pkt.flow).expect("in CFT");
            c.size += size;
            c.ts = now;
            c.size
        } else {
            let e = self.nft.entry(pkt.flow).or_insert(Nft { q: pkt.queue, size: 0 });
            e.size += size;
            e.size
        };
        if flow_bytes == size {
            *self.qt(pkt.egress, pkt.queue) += 1;
        }
        // Q with the packet in it (line 17 reads the queue the packet was put in): a flow alone
        // in its queue then holds exactly S_fair = Q and is not a contributor below Q_h
        let q = view.queue_bytes(pkt.egress, pkt.queue);
        let (q_l, q_h) = self.thresholds(now, view, pkt.egress);
        let contributor = if q > q_h {
            true
        } else if q > q_l {
            // lines 22-23: the flow is a contributor above its fair share of the queue
            flow_bytes > s_fair(q, *self.qt(pkt.egress, pkt.queue))
        } else {
            false
        };
        if contributor {
            pkt.flags |= tag::IF_CONGESTED;
            let p = self.pause_num.entry(pkt.flow).or_insert(0);
            *p += 1;
            if *p == 1 {
                self.pauses += 1;
                self.pauses_above_q_h += (q > q_h) as u64;
                self.pauses_from_rsvq += (pkt.queue == Self::rsv(self.nqueues)) as u64;
                out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::FlowPause { flow: pkt.flow, pause: true }, by: Origin::Scheme });
            }
        }
    }

    /// Algorithm 2, lines 1-14.
    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, _view: &SwitchView, out: &mut Actions) {
        let size = pkt.size as u64;
        let rsv = Self::rsv(self.nqueues);
        let left = if pkt.queue == rsv && self.cft.contains_key(&pkt.flow) {
            let c = self.cft.get_mut(&pkt.flow).expect("in CFT");
            c.size -= size;
            c.ts = now;
            c.size
        } else {
            match self.nft.get_mut(&pkt.flow) {
                Some(e) => {
                    e.size -= size;
                    e.size
                }
                None => 0,
            }
        };
        if left == 0 {
            let n = self.qt(pkt.egress, pkt.queue);
            *n = n.saturating_sub(1);
            if pkt.queue != rsv {
                // an empty NFT entry is a new flow next time (line 7); drop it unless isolated
                self.nft.remove(&pkt.flow);
            }
        }
        if pkt.flags & tag::IF_CONGESTED != 0 {
            let p = self.pause_num.get_mut(&pkt.flow).expect("a contributor was counted");
            *p -= 1;
            if *p == 0 {
                self.pause_num.remove(&pkt.flow);
                self.resumes += 1;
                out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::FlowPause { flow: pkt.flow, pause: false }, by: Origin::Scheme });
            }
        }
    }

    /// The marks are this switch's: the next hop decides for itself.
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, _view: &SwitchView) {
        pkt.flags &= !tag::IF_CONGESTED;
    }

    /// Algorithm 2, lines 15-34: the downstream on port `from` pauses or resumes a flow.
    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        let CtrlMsg::FlowPause { flow, pause } = *msg else { return };
        self.setup(view);
        let rsv = Self::rsv(self.nqueues);
        let p = from as usize;
        if pause {
            match self.cft.get_mut(&flow) {
                Some(c) => c.status = Status::Paused,
                None => {
                    // a new congested flow; with packets in its queue: order marks and pause it
                    let mut orig = None;
                    if let Some(e) = self.nft.get(&flow) {
                        if e.size != 0 && e.q != rsv {
                            orig = Some(e.q);
                            self.order_marks += 1;
                            out.push(FcAction::Markers { port: from, hold: rsv, release: e.q });
                            let h = self.orig_holds.entry((from, e.q)).or_insert(0);
                            *h += 1;
                            if *h == 1 {
                                Self::gate(from, e.q, true, out);
                            }
                        }
                    }
                    self.cft.insert(flow, Cft { port: from, size: 0, status: Status::Paused, ts: now, orig });
                    self.isolations += 1;
                    self.cft_peak = self.cft_peak.max(self.cft.len() as u64);
                }
            }
            self.cf_num[p] += 1;
            if self.cf_num[p] == 1 {
                Self::gate(from, rsv, true, out);
            }
        } else {
            self.cf_num[p] = self.cf_num[p].saturating_sub(1);
            if self.cf_num[p] == 0 {
                Self::gate(from, rsv, false, out);
            }
            if let Some(c) = self.cft.get_mut(&flow) {
                // the timestamp is the flow's last enqueue or dequeue (§IV-C), not the RESUME's
                c.status = Status::Resumed;
                if let Some(q) = c.orig.take() {
                    let h = self.orig_holds.get_mut(&(c.port, q)).expect("an isolated flow holds its queue");
                    *h -= 1;
                    if *h == 0 {
                        self.orig_holds.remove(&(c.port, q));
                        Self::gate(c.port, q, false, out);
                    }
                }
                // lines 33-34: a resumed flow with nothing in rsvQ leaves CFT here, once its last
                // packet is 2 HRTT old; a younger one stays until then (released at classify)
                let c = *c;
                if self.releasable(&c, now) {
                    self.cft.remove(&flow);
                    self.releases += 1;
                }
            }
        }
    }

    /// Issue 12's outputs over time (`module_samples`): `flows_paused` per egress port, the flows
    /// held in its paused `rsvQ` because the downstream paused them (ports with none are left
    /// out: zero); and switch-wide `cft_entries`, CFT's occupancy (entries not yet due for
    /// release: §IV-C releases a resumed, drained flow after 2 HRTT) and `flows_pausing`, the
    /// flows this switch has paused upstream (`pauseNum` above 0).
    fn sample(&self, now: Time, _view: &SwitchView, out: &mut Samples) {
        if self.flow_num.is_empty() {
            return; // no packet yet
        }
        let mut paused = vec![0u32; self.cf_num.len()];
        let mut live = 0u32;
        for c in self.cft.values() {
            if c.status == Status::Paused {
                paused[c.port as usize] += 1;
            }
            live += !self.releasable(c, now) as u32;
        }
        for (p, &n) in paused.iter().enumerate() {
            if n > 0 {
                out.push((p as u16, "flows_paused", n as f64));
            }
        }
        out.push((SWITCH_WIDE, "cft_entries", live as f64));
        out.push((SWITCH_WIDE, "flows_pausing", self.pause_num.len() as f64));
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("flowsail_pauses", self.pauses));
        out.push(("flowsail_pauses_above_q_h", self.pauses_above_q_h));
        out.push(("flowsail_pauses_from_rsvq", self.pauses_from_rsvq));
        out.push(("flowsail_resumes", self.resumes));
        out.push(("flowsail_isolations", self.isolations));
        out.push(("flowsail_releases", self.releases));
        out.push(("flowsail_order_marks", self.order_marks));
        out.push(("flowsail_cft_peak", self.cft_peak));
        out.push(("flowsail_collisions", self.collisions));
    }

    fn uses_tags(&self) -> bool {
        true
    }
}

impl crate::registry::Declared for FlowsailConfig {
    const NAME: &'static str = "flowsail";
    const ABOUT: &'static str = "FlowSail: per-flow flow control with few queues per port (§III)";
    const COUNTERS: &'static [&'static str] = &[
        "flowsail_pauses", "flowsail_pauses_above_q_h", "flowsail_pauses_from_rsvq", "flowsail_resumes",
        "flowsail_isolations", "flowsail_releases", "flowsail_order_marks", "flowsail_cft_peak", "flowsail_collisions",
    ];
}

impl super::registry::Scheme for FlowsailConfig {
    fn pauses(&self) -> bool {
        self.pfc
    }
    fn one_class(&self) -> bool {
        true
    }
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String> {
        super::registry::at_least_two_queues(net, "FlowSail", "one is rsvQ")?;
        FlowsailConfig::validate(self)
    }
    fn build(&self, at: &super::registry::BuildAt) -> super::AnyFc {
        let fs = Flowsail::new(self.clone(), at.node, at.nports, at.seed);
        if self.pfc {
            super::AnyFc::FlowsailPfc(super::with_pfc::under_pfc(fs, at))
        } else {
            super::AnyFc::Flowsail(Box::new(fs))
        }
    }
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        8 + if self.pfc { super::pfc::BYTES_PER_PORT } else { 0 }
    }
    /// Its pauses name flows, and may reach the sender after a fault moved the flow.
    fn names_flows(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fc::view::SwitchInfo;
    use crate::packet::{Packet, Slab};
    use crate::queues::mmu::{Mmu, MmuConfig};
    use crate::queues::port::Port;
    use crate::time::{Rate, TxClock};

    /// A 4-port 100 Gb/s switch with 1 us links and real ports (so the view answers queue
    /// questions), `nq` queues per port; packets go from ingress 1 to egress 0.
    struct Rig {
        mmu: Mmu,
        info: SwitchInfo,
        ports: Vec<Port>,
        slab: Slab,
    }

    const PKT: u32 = 1000;
    /// HRTT = 2 x 1 us + 1048 B at 100 Gb/s = 2.08384 us; one hop BDP at 100 Gb/s = 26,048 B.
    const HBDP: u64 = 26_048;

    impl Rig {
        fn new(nq: usize) -> Rig {
            let mut info = SwitchInfo::bare(vec![Rate::gbps(100); 4], nq);
            info.ports = (0..4).collect();
            let ports = (0..4).map(|p| Port::new(0, p as u16, TxClock::new(Rate::gbps(100)), Time::from_us(1), nq, 1500)).collect();
            Rig { mmu: Mmu::new(MmuConfig::default(), vec![100_000; 4], 8, nq), info, ports, slab: Slab::default() }
        }
        fn view(&self) -> SwitchView<'_> {
            SwitchView { info: &self.info, mmu: &self.mmu, ports: &self.ports }
        }
        /// Classify, queue and tell FlowSail about one packet of `flow`; the packet comes back.
        fn enq(&mut self, fs: &mut Flowsail, now: Time, flow: u32, out: &mut Actions) -> PktMeta {
            let mut m = PktMeta { flow, ingress: 1, egress: 0, size: PKT, prio: 3, ..Default::default() };
            m.queue = fs.classify(now, &m, &self.view());
            let id = self.slab.alloc(Packet { size: PKT, flow, ..Default::default() });
            self.ports[0].enqueue_data(m.queue as usize, id, PKT);
            fs.on_enqueue(now, &mut m, &self.view(), out);
            m
        }
        /// Only the queue FlowSail would choose for a packet of `flow`.
        fn classify(&mut self, fs: &mut Flowsail, now: Time, flow: u32) -> u16 {
            let m = PktMeta { flow, ingress: 1, egress: 0, size: PKT, prio: 3, ..Default::default() };
            fs.classify(now, &m, &self.view())
        }
        fn deq(&mut self, fs: &mut Flowsail, now: Time, m: &PktMeta, out: &mut Actions) {
            self.ports[0].dequeue_data(m.queue as usize, PKT);
            fs.on_dequeue(now, m, &self.view(), out);
        }
    }

    fn pause(flow: u32, pause: bool) -> FcAction {
        FcAction::Send { port: 1, msg: CtrlMsg::FlowPause { flow, pause }, by: Origin::Scheme }
    }

    fn congested(m: &PktMeta) -> bool {
        m.flags & tag::IF_CONGESTED != 0
    }

    fn ctl(fs: &mut Flowsail, rig: &Rig, now: Time, flow: u32, pause: bool, out: &mut Actions) {
        fs.on_control(now, 0, &CtrlMsg::FlowPause { flow, pause }, &rig.view(), out);
    }

    /// The gate actions among `out`, as (port, queue, closed).
    fn gates(out: &Actions) -> Vec<(u16, u16, bool)> {
        out.iter().filter_map(|a| if let FcAction::Gate { port, queue, until } = *a { Some((port, queue, until == Time::MAX)) } else { None }).collect()
    }

    /// §IV-C, "Queue Scheduler": `rsvQ` is paused while `cfNum` (PAUSEs less RESUMEs received on
    /// the port) is above 0, so a resumed flow still in CFT waits while any other flow isolated at
    /// the port is paused. This is the gate that holds FlowSail's large flows in the §VI-B fabric
    /// (fig10.toml's note); pinned so the cause stays visible.
    #[test]
    fn a_resumed_flow_in_rsvq_waits_while_another_isolated_flow_is_paused() {
        let mut rig = Rig::new(2);
        let mut fs = Flowsail::new(FlowsailConfig::default(), 0, 4, 1);
        let mut out = vec![];
        let t = Time::from_us(1);
        ctl(&mut fs, &rig, t, 1, true, &mut out);
        assert_eq!(gates(&out), vec![(0, 1, true)], "cfNum 0 -> 1 pauses rsvQ");
        out.clear();
        ctl(&mut fs, &rig, t, 2, true, &mut out);
        assert!(out.is_empty(), "cfNum 1 -> 2");
        // flow 1's packets arrive while it is paused: into rsvQ
        for _ in 0..3 {
            assert_eq!(rig.enq(&mut fs, t, 1, &mut out).queue, 1);
        }
        out.clear();
        // flow 1 is resumed: cfNum 2 -> 1, rsvQ stays paused and flow 1 keeps using it
        ctl(&mut fs, &rig, t + Time::from_us(10), 1, false, &mut out);
        assert!(gates(&out).is_empty(), "{out:?}");
        assert_eq!(rig.enq(&mut fs, t + Time::from_us(10), 1, &mut out).queue, 1);
        out.clear();
        // only flow 2's RESUME opens it
        ctl(&mut fs, &rig, t + Time::from_us(20), 2, false, &mut out);
        assert_eq!(gates(&out), vec![(0, 1, false)]);
    }

    /// Algorithm 1 line 17 on `rsvQ`: the packets of a flow isolated here pile up in the paused
    /// `rsvQ`, and once it passes `Q_h` each one is a contributor, so the hop before pauses the
    /// flow too; in the §VI-B fabric this carries a closed `rsvQ` back to the NIC (fig10.toml).
    #[test]
    fn a_flow_held_in_a_paused_rsvq_is_paused_at_the_hop_before_once_rsvq_passes_q_h() {
        let mut rig = Rig::new(2);
        let mut fs = Flowsail::new(FlowsailConfig::default(), 0, 4, 1);
        let mut out = vec![];
        ctl(&mut fs, &rig, Time::from_us(1), 1, true, &mut out);
        rig.ports[0].set_gate(1, Time::from_us(1), Time::MAX);
        out.clear();
        // a closed rsvQ is no active queue: N_active 1, Q_h = 78,144 B; 78 packets stay below
        for _ in 0..78 {
            assert_eq!(rig.enq(&mut fs, Time::from_us(2), 1, &mut out).queue, 1);
        }
        assert!(out.is_empty(), "alone in rsvQ below Q_h: S_fair = Q");
        let m = rig.enq(&mut fs, Time::from_us(2), 1, &mut out);
        assert!(congested(&m));
        assert_eq!(out, vec![pause(1, true)]);
        assert_eq!((fs.pauses_above_q_h, fs.pauses_from_rsvq), (1, 1));
    }

    /// §IV-C, release of a congested flow, and Algorithm 2 lines 33-34: the CFT timestamp is the
    /// flow's last enqueue or dequeue, so a RESUME finding nothing of the flow in `rsvQ` and its
    /// last packet 2 HRTT (4.17 us) old releases it at once, and its next packet is a normal flow
    /// again; one whose last packet is younger stays in CFT until 2 HRTT after it.
    #[test]
    fn a_resume_releases_a_drained_flow_whose_last_packet_is_two_hrtt_old() {
        let mut rig = Rig::new(2);
        let mut fs = Flowsail::new(FlowsailConfig::default(), 0, 4, 1);
        let mut out = vec![];
        let us = Time::from_us;
        // flow 1: isolated at 1 us with nothing queued; RESUME 10 us later
        ctl(&mut fs, &rig, us(1), 1, true, &mut out);
        ctl(&mut fs, &rig, us(11), 1, false, &mut out);
        assert!(!fs.is_congested(1), "released by the RESUME (lines 33-34)");
        assert_eq!(fs.releases, 1);
        assert_eq!(rig.enq(&mut fs, us(11), 1, &mut out).queue, 0, "a normal flow again");
        // flow 2: one packet through rsvQ, leaving at 20 us; RESUME at 21 us: its last packet is
        // 1 us old, so it stays in CFT, and its packets keep to rsvQ until 2 HRTT after 20 us
        ctl(&mut fs, &rig, us(19), 2, true, &mut out);
        let m = rig.enq(&mut fs, us(19), 2, &mut out);
        assert_eq!(m.queue, 1);
        rig.deq(&mut fs, us(20), &m, &mut out);
        ctl(&mut fs, &rig, us(21), 2, false, &mut out);
        assert!(fs.is_congested(2));
        assert_eq!(fs.releases, 1);
        assert_eq!(rig.classify(&mut fs, us(24), 2), 1, "3.9 us after its last packet");
        assert_eq!(rig.classify(&mut fs, us(25), 2), 0, "5 us after: released");
        assert_eq!(fs.releases, 2);
    }

    #[test]
    fn s_fair_shifts_the_queue_by_the_rounded_up_log_of_flownum() {
        // Eq. 1 by hand: 1 flow keeps all of Q; 2 half; 3 and 4 a quarter (log2 3 = 1.58 rounds
        // up); 5 to 8 an eighth; 9 a sixteenth
        let q = 64_000;
        let want = [(0, 64_000), (1, 64_000), (2, 32_000), (3, 16_000), (4, 16_000), (5, 8_000), (8, 8_000), (9, 4_000)];
        for (n, s) in want {
            assert_eq!(s_fair(q, n), s, "flowNum {n}");
        }
        assert_eq!(s_fair(1_000_000, 1 << 10), 976, "1024 flows: Q >> 10");
        assert_eq!(s_fair(1_000_000, (1 << 10) + 1), 488, "1025 flows: Q >> 11");
        assert_eq!(s_fair(u64::MAX, u32::MAX), u64::MAX >> 32);
    }

    #[test]
    fn q_l_and_q_h_are_one_and_three_hop_bdps_over_the_open_active_queues() {
        let mut rig = Rig::new(8);
        let mut fs = Flowsail::new(FlowsailConfig::default(), 0, 4, 1);
        let mut out = vec![];
        // no queue active counts as one (§IV-B: HRTT x mu / N_active, 3 HRTT x mu / N_active)
        let a = rig.enq(&mut fs, Time(1), 1, &mut out);
        assert_eq!(fs.thresholds(Time(1), &rig.view(), 0), (HBDP, 3 * HBDP), "one active queue");
        let b = rig.enq(&mut fs, Time(1), 2, &mut out);
        assert_ne!(a.queue, b.queue, "a new flow takes an empty queue (BFC's mapping)");
        assert_eq!(fs.thresholds(Time(1), &rig.view(), 0), (HBDP / 2, 3 * HBDP / 2));
        rig.enq(&mut fs, Time(1), 3, &mut out);
        let (q_l, q_h) = fs.thresholds(Time(1), &rig.view(), 0);
        assert_eq!(q_l, HBDP / 3);
        assert!(q_h.abs_diff(HBDP) <= 1, "3 HBDP / 3 = {q_h}");
        // N_active counts non-paused queues: a closed gate takes its queue out
        rig.ports[0].set_gate(b.queue as usize, Time(1), Time::MAX);
        assert_eq!(fs.thresholds(Time(2), &rig.view(), 0), (HBDP / 2, 3 * HBDP / 2));
        // both are settable in hop BDPs (§VI-C's sensitivity study)
        let mut fs2 = Flowsail::new(FlowsailConfig { q_l_hrtt: 0.5, q_h_hrtt: 4.0, ..Default::default() }, 0, 4, 1);
        fs2.setup(&rig.view());
        assert_eq!(fs2.thresholds(Time(2), &rig.view(), 0), (HBDP / 2 / 2, 4 * HBDP / 2));
        assert!(out.is_empty(), "three packets pause nobody");
    }

    /// Two queues: every flow shares queue 0 (queue 1 is rsvQ), N_active = 1, so Q_l = 26,048 B
    /// and Q_h = 78,144 B. Q counts the arriving packet.
    #[test]
    fn only_flows_above_s_fair_are_paused_until_q_passes_q_h() {
        let mut rig = Rig::new(2);
        let mut fs = Flowsail::new(FlowsailConfig::default(), 0, 4, 1);
        let mut out = vec![];
        // flow 1 alone up to Q = 30 KB > Q_l: flowNum 1, S_fair = Q = the flow's own bytes, so
        // it is not above its share (§IV-B: the per-flow decision is for queues serving more
        // than one flow)
        let a: Vec<PktMeta> = (0..30).map(|_| rig.enq(&mut fs, Time(10), 1, &mut out)).collect();
        assert!(a.iter().all(|m| m.queue == 0 && !congested(m)));
        assert!(out.is_empty());
        // flow 2 joins at Q = 31 KB: flowNum 2, S_fair = 15,500 B; it holds 1 KB
        assert!(!congested(&rig.enq(&mut fs, Time(10), 2, &mut out)));
        // flow 1's next packet: Q = 32 KB, S_fair = 16,000 B, flow 1 holds 31 KB: paused
        assert!(congested(&rig.enq(&mut fs, Time(10), 1, &mut out)));
        assert_eq!(out, vec![pause(1, true)], "one PAUSE, on pauseNum 0 -> 1");
        out.clear();
        // fifteen one-packet flows at Q = 33..47 KB: flowNum 3..17, S_fair = Q >> 2..5 >= 1,468 B,
        // each holds 1,000 B: below S_fair, never paused though Q > Q_l
        for f in 0..15 {
            let m = rig.enq(&mut fs, Time(10), 100 + f, &mut out);
            assert!(!congested(&m), "flow {} at Q = {} B", 100 + f, 33_000 + 1000 * f);
        }
        assert!(out.is_empty(), "{out:?}");
        // flow 1 goes on to Q = 78,000 B <= Q_h: each packet a contributor, no new PAUSE
        for _ in 0..31 {
            assert!(congested(&rig.enq(&mut fs, Time(10), 1, &mut out)));
        }
        assert!(out.is_empty());
        assert_eq!(rig.view().queue_bytes(0, 0), 78_000);
        // Q = 79,000 B > Q_h: a new one-packet flow, though far below S_fair, is paused (line 17)
        let c = rig.enq(&mut fs, Time(10), 200, &mut out);
        assert!(congested(&c));
        assert_eq!(out, vec![pause(200, true)]);
        assert_eq!((fs.pauses, fs.pauses_above_q_h, fs.pauses_from_rsvq), (2, 1, 0), "flow 1 by S_fair, flow 200 by Q_h");
        out.clear();
        // departures of flow 1's first 30 (unflagged) packets send no RESUME: its 32
        // contributors are still queued
        for m in &a {
            rig.deq(&mut fs, Time(20), m, &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(fs.pause_num[&1], 32);
    }

    /// The invariant of §IV-B by random cases: with Q (bytes with the packet) at most Q_h, a
    /// packet whose flow holds no more than S_fair — recomputed here from an independent count
    /// of the flows in the queue — is never flagged and never triggers a PAUSE; above Q_h every
    /// packet is flagged.
    #[test]
    fn a_flow_below_s_fair_is_never_paused_while_q_is_at_most_q_h() {
        let mut rng = Rng::stream(7, 0, 0);
        let mut rig = Rig::new(2);
        let mut fs = Flowsail::new(FlowsailConfig::default(), 0, 4, 3);
        let mut queued: std::collections::VecDeque<PktMeta> = Default::default();
        let mut bytes: HashMap<u32, u64> = HashMap::new();
        let (mut below, mut above_qh, mut flagged_above_sfair) = (0, 0, 0);
        for step in 0..20_000 {
            let mut out = vec![];
            // 500 steps of arrivals outpacing departures 3:2 (the queue reaches about Q_h), then 500
            // of draining
            let fill = (step / 500) % 2 == 0;
            if queued.is_empty() || rng.below(5) < if fill { 3 } else { 1 } {
                // a few heavy flows and many light ones
                let flow = if rng.below(3) == 0 { rng.below(4) as u32 } else { 10 + rng.below(60) as u32 };
                let q = rig.view().queue_bytes(0, 0) + PKT as u64; // with the packet
                let n = bytes.values().filter(|&&b| b > 0).count() as u32 + (bytes.get(&flow).copied().unwrap_or(0) == 0) as u32;
                let held = bytes.get(&flow).copied().unwrap_or(0) + PKT as u64;
                let share = q >> (n as f64).log2().ceil() as u32;
                let m = rig.enq(&mut fs, Time(10 + step as u64), flow, &mut out);
                let paused_it = out.iter().any(|a| matches!(a, FcAction::Send { msg: CtrlMsg::FlowPause { flow: f, pause: true }, .. } if *f == flow));
                if q <= 3 * HBDP && held <= share {
                    below += 1;
                    assert!(!congested(&m) && !paused_it, "step {step}: flow {flow} holds {held} <= S_fair {share} at Q {q}");
                } else if q > 3 * HBDP {
                    above_qh += 1;
                    assert!(congested(&m), "step {step}: Q {q} > Q_h");
                } else if q > HBDP {
                    flagged_above_sfair += congested(&m) as u32;
                    assert!(congested(&m), "step {step}: flow {flow} holds {held} > S_fair {share} at Q {q} > Q_l");
                }
                *bytes.entry(flow).or_insert(0) += PKT as u64;
                queued.push_back(m);
            } else {
                let m = queued.pop_front().unwrap();
                rig.deq(&mut fs, Time(10 + step as u64), &m, &mut out);
                *bytes.get_mut(&m.flow).unwrap() -= PKT as u64;
            }
        }
        // the cases all occurred
        assert!(below > 1000 && above_qh > 1000 && flagged_above_sfair > 100, "{below} {above_qh} {flagged_above_sfair}");
    }
}
