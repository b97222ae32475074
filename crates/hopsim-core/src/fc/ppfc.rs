//! P-PFC, predictive PFC (Tian et al., "P-PFC: Reducing Tail Latency with Predictive PFC in
//! Lossless Data Center Networks", IEEE TPDS 2020): send PFC pauses *before* the shared buffer runs
//! out, to the ingress ports that fill the congested egress queue, for a computed duration.
//!
//! Why: standard PFC reacts only once an ingress has used its share of the buffer, so during an
//! incast the queue (and the tail latency of every flow crossing it) grows to the whole buffer
//! before anything happens (§1, Fig. 1). P-PFC watches the derivative of the buffer occupancy and
//! pauses the ringleaders early, buying time for DCQCN/TIMELY while the queue stays short (§2.3).
//!
//! The procedure (§4.1, Fig. 4), as implemented here:
//! 1. Gate: only when some egress queue is longer than the ECN threshold `Kmax` of its port
//!    (§4.1: "whether the length of egress queue exceeds the ECN threshold of Kmax"; §5.2, §5.4,
//!    §6.2), so that end-to-end congestion control gets its ECN marks first. Table 2 lists Kmax
//!    (200 KB) among the "Parameters of ECN": it is the port's ECN setting, not one of P-PFC's
//!    own (those are `T` and `R`, the starred rows, §5.1), so the gate reads the port's
//!    configured ECN Kmax ([`SwitchView::ecn`]). `kmax` overrides it (hopsim's, not the paper's).
//! 2. Every `interval` (1 us, §4.1/§6.3) run Algorithm 1: sum the per-ingress (port, priority)
//!    buffer increase of the last interval, `Increment_total`, and predict
//!    `remaining_time = switch_space_left / Increment_total`; act only if it is below `T`.
//! 3. Algorithm 2: for each egress queue above `Kmax`, pick ingress (port, priority)s at random
//!    weighted by their share of that queue, keeping only those whose buffer is growing, until
//!    the picked ones hold a fraction `R` of the queue.
//! 4. Algorithm 3: pause each pick for `(packets + increment) / Transmission_speed` (the time to
//!    drain its bytes in the egress queue plus those in flight), as a PFC frame with that many
//!    quanta; a per (port, priority) register bit stops a second pause while the first runs
//!    (§6.3). `Transmission_speed` is the line rate of the congested *egress* port, the rate the
//!    queue drains at (the paper's evidence is at `Ppfc::pause`); the quanta are then counted
//!    at the rate of the ingress link the frame goes out on, as 802.3x defines them.
//!    `pause = "<time>"` replaces the computed duration by a fixed time: the variant Fig. 10
//!    compares against (§5.4: "we compare using dynamical pause time and several fixed pause
//!    time in P-PFC").
//!
//! Against the paper (scenarios/papers/ppfc/, `hopsim reproduce ppfc --quick`; 16:1 incast, the
//! `increment = "arrivals"` and `transmission_speed = "share"` readings the scenarios use, the
//! latter from §2.3's worked example): peak queue PFC 4.04 MB / P-PFC 1.22-2.24 MB over seeds 1-4
//! (the paper: the whole 4 MB / 1,002 KB), p99 packet latency 803 / 236-446 us (the paper: ~830
//! us, over 2x lower), Table 3 0 / 0 / 0 at 4:1, 0 / 6 / 6 at 6:1 (paper 0 / 5 / 43), 16 / 38 / 53
//! at 16:1 (paper 277 / 316 / 406). With the egress reading the pauses are 1/16 as long: 2.19 MB,
//! 439 us, 16:1 Table 3 58 / 109 / 171, because Algorithm 1 goes quiet once DCQCN has cut the
//! growth below `switch_space_left / T` and the queue creeps up ~150 us more.
//!
//! Standard PFC stays underneath as the safety net (§6.3: "P-PFC only changes the part of sending
//! algorithm of PFC PAUSE messages"): the scheme runs inside [`WithPfc`], which calls PFC's hooks
//! first and asks P-PFC about each resume PFC wants to send.
//!
//! Interpretation choices (the paper leaves these open; each is argued where it is coded):
//! - `increment[port][priority]` is the *net* change of the ingress queue over the interval
//!   (bytes enqueued minus bytes dequeued), so it can be negative; dropped bytes never entered the
//!   buffer and do not count. `Increment_total` is their signed sum, the growth of the whole
//!   switch memory (§4.2, §4.3; Definition 3.3 uses the net rate `v(t)`).
//!   `increment = "arrivals"` counts the bytes that arrived instead in Algorithms 1 and 3 (the
//!   filter of Algorithm 2 line 3 stays on the net change): §6.1's `T_min = B / (P V)` and §4.4's
//!   "packets in flight" read that way, and it is what reproduces Table 3 and Fig. 6a's peak
//!   (see [`Increment`] and scenarios/papers/ppfc/).
//! - `switch_space_left` is the free *shared* buffer by default (§4.2 "the free space in the
//!   shared buffer"); [`SpaceLeft::Buffer`] switches to the free space of the whole buffer.
//! - `packets[port][priority]` is counted in bytes (Algorithm 3 divides it by a rate).
//!   `transmission_speed = "share"` divides it by the ingress's share of the egress rate instead,
//!   so the pause lasts until the whole queue has drained: Theorem 3.2's bound `(q + v d*) / v_r`
//!   with the whole queue `q` ([`TransmissionSpeed`]).
//! - Algorithm 2 draws without replacement and stops when the candidates run out.
//! - The register bit lasts as long as the pause it guards unless `hold` is set.
//! - The 1 us tick runs only while some egress queue is above `Kmax`.
//! - The Kmax gate reads the port's ECN Kmax whether or not ECN marking is enabled (a run
//!   without marking still configures the thresholds; `kmax` sets the gate outright).

use super::pfc::{Pfc, PfcConfig};
use super::with_pfc::{OverPfc, Resume, WithPfc};
use super::{quanta_duration, quanta_for, Actions, CtrlMsg, FcAction, Origin, PktMeta, Samples, SwitchView, SWITCH_WIDE};
use crate::rng::{stream, Rng};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// What `switch_space_left` of Algorithm 1 measures.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum SpaceLeft {
    /// Free bytes of the shared pool, `Mmu::shared_free()`: §4.2 defines `switch_space_left` as
    /// "the size of the free space in the shared buffer", and the event P-PFC predicts is the
    /// shared buffer running out, after which ingresses fall back on their reserve and PFC
    /// fires (§2.1).
    #[default]
    Shared,
    /// Free bytes of the whole buffer, `Mmu::buffer_free()` (§6.3 "the left buffer of switch";
    /// §6.1 sizes `T` with the total 9 MB buffer).
    Buffer,
}

/// What `increment[port][priority]` counts in Algorithms 1 and 3 (Algorithm 2's growth filter
/// always reads the net change: §4.3 rules out "ingress queues with negative buffer increase
/// speeds").
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Increment {
    /// The net change of the ingress queue over the interval, bytes in less bytes out (§6.3: "the
    /// increment of the ingress queue length in the past 1 us"; Definition 3.3's net rate `v(t)`).
    #[default]
    Net,
    /// The bytes that arrived at the ingress over the interval, whatever left. Three passages
    /// read this way: §6.1 sizes `T` by `T_min = B / (P V)`, the buffer over the *sum of the
    /// ingress rates* (the arrivals of P ports at line rate, not their excess over the drain);
    /// §4.4 says Algorithm 3's second part, `increment / Transmission_speed`, is "used to absorb
    /// the packets in flight", which over a 1 us interval are the bytes the link delivered in it;
    /// and Table 3's 6:1 row (0 / 5 / 43 pauses for T = 50 / 100 / 150 us) follows from arrivals
    /// of 6 x 40 Gb/s against the free shared buffer of a queue peaking at 1.7 MB.
    Arrivals,
}

/// What `Transmission_speed` of Algorithm 3 line 3 is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum TransmissionSpeed {
    /// The line rate of the congested egress port: the ingress's bytes (plus its increment) drain
    /// as if they had the port to themselves (see `Ppfc::pause`).
    #[default]
    Egress,
    /// The ingress's share of that rate, `rate x packets[port][priority] / queue`: the speed at
    /// which *its* packets leave a FIFO egress queue that all the ingresses share in proportion to
    /// their bytes (§4.3, Fig. 5). Then `packets / speed` is the time the whole queue takes to
    /// drain, which is Theorem 3.2's bound on a pause that costs no throughput,
    /// `(q(t*) + v(t*) d*) / v_r(t*)`, with the queue `q` in full (§3): §4.4's "empty the
    /// packets buffered in the egress queue" then means the ingress's last packet has left.
    Share,
}

/// How long Algorithm 3 pauses a chosen ingress.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum PauseTime {
    /// Algorithm 3: `(packets[port][priority] + increment[port][priority]) / Transmission_speed`,
    /// the "dynamical pause time" of §5.4.
    #[default]
    Predicted,
    /// Every pause lasts this long: Fig. 10's "fixed pause time" variant (§5.4), which the paper
    /// shows to be worse (the queue still builds up with short fixed pauses; long ones hurt
    /// throughput). Written as a time in a scenario (`pause = "20us"`).
    #[serde(untagged)]
    Fixed(Time),
}

/// P-PFC parameters. Times are [`Time`]s (picoseconds when serialised).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PpfcConfig {
    /// `Kmax` of the gate: P-PFC predicts only while some egress queue is longer than this (§4.1:
    /// "whether the length of egress queue exceeds the ECN threshold of Kmax"). `None` (default):
    /// the ECN Kmax of that queue's port, as the paper has it (Table 2 lists Kmax = 200 KB among
    /// the "Parameters of ECN", and §5.2/§6.2 say P-PFC starts where DCQCN's marking saturates).
    /// A number overrides it; the paper gives no separate value, so an override is hopsim's.
    #[serde(rename = "kmax")]
    pub kmax_bytes: Option<u64>,
    /// Period of Algorithm 1 and the span over which `increment` is measured. §4.1/§6.3: 1 us.
    pub interval: Time,
    /// `T`: predictive pauses are sent when the shared buffer would be used up in less than
    /// this (Algorithm 1 line 6). Table 2: 100 us (§6.1: close to `T_min = B / (P V)`).
    /// Serialised as the paper writes it, like `R`.
    #[serde(rename = "T")]
    pub t: Time,
    /// `R`: Algorithm 2 pauses ports until they hold this fraction of the egress queue.
    /// Table 2 and §6.1: 80%.
    #[serde(rename = "R")]
    pub r: f64,
    /// What `switch_space_left` measures; see [`SpaceLeft`].
    pub space_left: SpaceLeft,
    /// How long the register bit of §6.3 stays set after a pause to a (port, priority). `None`
    /// (default): for the duration of that pause. The paper only says the bit "will be
    /// automatically unset after a while"; its purpose is "to avoid sending PFC PAUSE messages
    /// repeatedly in a short time", and a second pause before the first expires would only
    /// overwrite the upstream's pause timer, so the natural while is the pause itself.
    pub hold: Option<Time>,
    /// Algorithm 3's computed duration (default) or Fig. 10's fixed one; see [`PauseTime`].
    pub pause: PauseTime,
    /// What `increment` counts in Algorithms 1 and 3; see [`Increment`].
    pub increment: Increment,
    /// Algorithm 3's `Transmission_speed`; see [`TransmissionSpeed`].
    pub transmission_speed: TransmissionSpeed,
}

impl PpfcConfig {
    /// Errors name the field and what is allowed (the module itself assumes these hold).
    pub fn validate(&self) -> Result<(), String> {
        if self.interval.0 == 0 {
            return Err("flow_control.ppfc.interval: must be a positive time".into());
        }
        if self.pause == PauseTime::Fixed(Time::ZERO) {
            return Err("flow_control.ppfc.pause: a fixed pause must be a positive time (0 quanta would resume)".into());
        }
        self.interval.check_setting("flow_control.ppfc.interval")?;
        self.t.check_setting("flow_control.ppfc.T")?;
        if let Some(h) = self.hold {
            h.check_setting("flow_control.ppfc.hold")?;
        }
        if let PauseTime::Fixed(p) = self.pause {
            p.check_setting("flow_control.ppfc.pause")?;
        }
        if !(self.r.is_finite() && self.r > 0.0 && self.r <= 1.0) {
            return Err(format!("flow_control.ppfc.R: {} is out of range; allowed: above 0 up to 1", self.r));
        }
        Ok(())
    }
}

impl Default for PpfcConfig {
    fn default() -> Self {
        PpfcConfig {
            kmax_bytes: None,
            interval: Time::from_us(1),
            t: Time::from_us(100),
            r: 0.8,
            space_left: SpaceLeft::Shared,
            hold: None,
            pause: PauseTime::Predicted,
            increment: Increment::Net,
            transmission_speed: TransmissionSpeed::Egress,
        }
    }
}

/// Bytes each ingress (port, priority) holds in each egress queue: the "composition of the egress
/// queue" that Algorithms 2 and 3 require (Fig. 5), and what CaPFC uses to find the ingresses that
/// feed a queue.
///
/// Why lazily allocated: a dense (egress, queue, ingress, priority) table is
/// `nports^2 x nqueues x nprio` counters per switch, most of them for queues that never carry
/// traffic; a queue's row is allocated on its first packet instead.
#[derive(Clone, Debug)]
pub struct EgressComposition {
    nports: usize,
    nprio: usize,
    nqueues: usize,
    /// `[egress * nqueues + queue][ingress * nprio + prio]`; a row stays empty until used.
    bytes: Vec<Vec<u64>>,
}

impl EgressComposition {
    pub fn new(nports: usize, nprio: usize) -> EgressComposition {
        EgressComposition { nports, nprio, nqueues: 0, bytes: Vec::new() }
    }

    #[inline]
    fn qi(&self, egress: usize, queue: usize) -> usize {
        egress * self.nqueues + queue
    }

    /// Count an enqueued packet; `nqueues` is the switch's queues per port (`SwitchView`).
    #[inline]
    pub fn add(&mut self, nqueues: usize, pkt: &PktMeta) {
        if self.bytes.is_empty() {
            self.nqueues = nqueues;
            self.bytes = vec![Vec::new(); self.nports * nqueues];
        }
        debug_assert_eq!(self.nqueues, nqueues);
        let qi = self.qi(pkt.egress as usize, pkt.queue as usize);
        let row_len = self.nports * self.nprio;
        let row = &mut self.bytes[qi];
        if row.is_empty() {
            *row = vec![0; row_len];
        }
        row[pkt.ingress as usize * self.nprio + pkt.prio as usize] += pkt.size as u64;
    }

    /// Uncount a dequeued packet.
    #[inline]
    pub fn sub(&mut self, pkt: &PktMeta) {
        if self.bytes.is_empty() {
            debug_assert!(false, "dequeue before any enqueue");
            return;
        }
        let qi = self.qi(pkt.egress as usize, pkt.queue as usize);
        let ip = pkt.ingress as usize * self.nprio + pkt.prio as usize;
        let row = &mut self.bytes[qi];
        if let Some(b) = row.get_mut(ip) {
            debug_assert!(*b >= pkt.size as u64, "dequeued more than was enqueued");
            *b = b.saturating_sub(pkt.size as u64);
        }
    }

    /// Bytes per ingress `port * nprio + prio` in egress queue (egress, queue); empty if the queue
    /// has never held a packet.
    pub fn of(&self, egress: usize, queue: usize) -> &[u64] {
        if self.bytes.is_empty() {
            return &[];
        }
        &self.bytes[self.qi(egress, queue)]
    }

    /// Bytes of ingress (port, prio) in egress queue (egress, queue).
    pub fn get(&self, egress: usize, queue: usize, port: usize, prio: usize) -> u64 {
        self.of(egress, queue).get(port * self.nprio + prio).copied().unwrap_or(0)
    }
}

/// P-PFC on one switch (without the PFC underneath: see [`Ppfc::with_pfc`]).
pub struct Ppfc {
    pub cfg: PpfcConfig,
    nports: usize,
    nprio: usize,
    nqueues: usize,
    rng: Rng,
    /// `increment[port][priority]`: net bytes the ingress queue grew by since the interval began
    /// (§4.2; §6.3 "a counter for each port and priority").
    increment: Vec<i64>,
    /// Bytes that arrived at each ingress (port, priority) since the interval began (what
    /// `increment` counts with [`Increment::Arrivals`]).
    arrived: Vec<i64>,
    /// `packets[port][priority]` for every egress queue, in bytes (Algorithm 3).
    packets: EgressComposition,
    /// Egress queues seen above `Kmax` and not yet seen back below it, with their flags.
    hot: Vec<bool>,
    hot_list: Vec<usize>,
    /// Start of the interval `increment` is measuring.
    interval_start: Time,
    /// When Algorithm 1 runs next; `None` while no egress queue is above `Kmax`.
    tick: Option<Time>,
    /// When the last predictive pause to each ingress (port, priority) ends.
    pause_until: Vec<Time>,
    /// When the register bit of each ingress (port, priority) unsets (§6.3).
    bit_until: Vec<Time>,
    /// Candidates of Algorithm 2 (kept to avoid an allocation per tick).
    cand: Vec<(usize, u64)>,
    /// Predictive pause frames sent.
    pub pauses_sent: u64,
    /// Algorithm 1's `remaining_time` at the last tick that computed one (`None`: the buffer was
    /// not growing), for the module time series.
    last_remaining: Option<Time>,
}

impl Ppfc {
    /// P-PFC with standard PFC underneath, as it runs on a switch.
    pub fn with_pfc(cfg: PpfcConfig, pfc: PfcConfig, node: u32, nports: usize, nprio: usize, seed: u64) -> WithPfc<Ppfc> {
        WithPfc::new(Pfc::new(pfc, nports, nprio), Ppfc::new(cfg, node, nports, nprio, seed))
    }

    pub fn new(cfg: PpfcConfig, node: u32, nports: usize, nprio: usize, seed: u64) -> Ppfc {
        assert!(cfg.interval.0 > 0, "P-PFC interval must be positive");
        assert!(cfg.pause != PauseTime::Fixed(Time::ZERO), "P-PFC's fixed pause time must be positive (0 quanta would resume)");
        let n = nports * nprio;
        Ppfc {
            cfg,
            nports,
            nprio,
            nqueues: 0,
            rng: Rng::stream(seed, stream::PPFC, node as u64),
            increment: vec![0; n],
            arrived: vec![0; n],
            packets: EgressComposition::new(nports, nprio),
            hot: Vec::new(),
            hot_list: Vec::new(),
            interval_start: Time::ZERO,
            tick: None,
            pause_until: vec![Time::ZERO; n],
            bit_until: vec![Time::ZERO; n],
            cand: Vec::new(),
            pauses_sent: 0,
            last_remaining: None,
        }
    }

    /// `increment[port][priority]` of the interval in progress.
    pub fn increment(&self, port: usize, prio: usize) -> i64 {
        self.increment[port * self.nprio + prio]
    }

    /// Bytes of ingress (port, prio) in egress queue (egress, queue).
    pub fn packets(&self, egress: usize, queue: usize, port: usize, prio: usize) -> u64 {
        self.packets.get(egress, queue, port, prio)
    }

    /// Whether the register bit of (port, prio) is set at `now`.
    pub fn bit_set(&self, now: Time, port: usize, prio: usize) -> bool {
        self.bit_until[port * self.nprio + prio] > now
    }

    /// `increment[port][priority]` as Algorithms 1 and 3 read it ([`Increment`]).
    #[inline]
    fn alg_increment(&self) -> &[i64] {
        match self.cfg.increment {
            Increment::Net => &self.increment,
            Increment::Arrivals => &self.arrived,
        }
    }

    /// The gate's `Kmax` for egress port `egress`: the override, else the port's ECN Kmax (§4.1).
    #[inline]
    fn kmax(&self, view: &SwitchView, egress: usize) -> u64 {
        match self.cfg.kmax_bytes {
            Some(k) => k,
            None => view.ecn(egress as u16).1,
        }
    }

    fn ensure_queues(&mut self, nqueues: usize) {
        if self.hot.is_empty() {
            self.nqueues = nqueues;
            self.hot = vec![false; self.nports * nqueues];
        }
    }

    /// A fresh measuring interval: Algorithm 1 compares a rate, so the counters must cover
    /// exactly the span `now - interval_start` (§6.3 "the increment ... in the past 1 us").
    fn start_interval(&mut self, now: Time) {
        self.increment.fill(0);
        self.arrived.fill(0);
        self.interval_start = now;
    }

    /// One run of Algorithm 1 at the end of an interval, then Algorithms 2 and 3 if it says so.
    fn run_interval(&mut self, now: Time, view: &SwitchView, pfc: &Pfc, out: &mut Actions) {
        // §4.1: prediction runs only under congestion, i.e. while an egress queue exceeds Kmax.
        // Queues that have drained to Kmax or below leave the list here.
        let (kmax, nq) = (self.cfg.kmax_bytes, self.nqueues);
        let hot = &mut self.hot;
        self.hot_list.retain(|&qi| {
            let (egress, queue) = (qi / nq, qi % nq);
            let keep = view.mmu.egress_bytes(egress, queue) > kmax.unwrap_or_else(|| view.ecn(egress as u16).1);
            if !keep {
                hot[qi] = false;
            }
            keep
        });

        if !self.hot_list.is_empty() {
            // Algorithm 1 lines 1-4: Increment_total += increment[port][priority] over every
            // ingress; negative terms (draining ingresses) count, so the sum is the net growth
            // of the whole switch memory (§4.2), the v(t) of Definition 3.3.
            let mut increment_total: i64 = 0;
            for &inc in self.alg_increment() {
                increment_total += inc;
            }
            // A buffer that is not growing is never used up: remaining_time is infinite.
            self.last_remaining = None;
            if increment_total > 0 {
                let switch_space_left = match self.cfg.space_left {
                    SpaceLeft::Shared => view.mmu.shared_free(),
                    SpaceLeft::Buffer => view.mmu.buffer_free(),
                };
                // Algorithm 1 line 5: remaining_time = switch_space_left / Increment_total, in
                // intervals; converted to time with the span the counters actually cover.
                let elapsed = now.saturating_sub(self.interval_start).0.max(1);
                let remaining_time =
                    Time((switch_space_left as u128 * elapsed as u128 / increment_total as u128).min(u64::MAX as u128) as u64);
                self.last_remaining = Some(remaining_time);
                // Algorithm 1 line 6: if remaining_time < T, run Algorithms 2 and 3 for every
                // congested egress queue.
                if remaining_time < self.cfg.t {
                    for k in 0..self.hot_list.len() {
                        let qi = self.hot_list[k];
                        self.choose_and_pause(now, view, pfc, qi / nq, qi % nq, out);
                    }
                }
            }
        }

        // Reset the counters for the next interval; keep ticking only while congested. When a
        // queue next crosses Kmax, on_enqueue starts a fresh interval (equivalent to the paper's
        // free-running 1 us tick, since Algorithm 1 does nothing below Kmax; only the phase of
        // the 1 us grid differs).
        self.start_interval(now);
        self.tick = if self.hot_list.is_empty() { None } else { Some(now + self.cfg.interval) };
    }

    /// Algorithm 2 (choose the ports) for egress queue (egress, queue), calling Algorithm 3 on
    /// each chosen port.
    fn choose_and_pause(&mut self, now: Time, view: &SwitchView, pfc: &Pfc, egress: usize, queue: usize, out: &mut Actions) {
        let packets = self.packets.of(egress, queue);
        let total: u64 = packets.iter().sum();
        if total == 0 {
            return;
        }
        // Candidates: ingresses with bytes in this egress queue (only they have a fraction > 0)
        // and a growing buffer (Algorithm 2 line 3, `increment > 1`; §4.3 "rule out ports that
        // have a decreasing buffer occupation"). Drawing from all ports and discarding the
        // ineligible ones, as the pseudo-code does, picks the eligible ones in the same
        // distribution (weighted sampling without replacement restricted to a subset is the same
        // process on that subset), so they are filtered first.
        let mut cand = std::mem::take(&mut self.cand);
        cand.clear();
        for (ip, &b) in packets.iter().enumerate() {
            if b > 0 && self.increment[ip] > 1 {
                cand.push((ip, b));
            }
        }
        // Algorithm 2 line 1: while fraction_total < R, with fraction[port][priority] the share
        // of the whole egress queue (including ineligible ingresses), as in Fig. 5. The draw is
        // without replacement so that the loop ends: if the eligible ports hold less than R of
        // the queue, all of them are chosen.
        let need = self.cfg.r * total as f64;
        let mut chosen_bytes: u64 = 0;
        while (chosen_bytes as f64) < need && !cand.is_empty() {
            // Line 2: choose a port at random with probability proportional to its fraction
            // (§4.3, "in a similar way as in RED").
            let w: u64 = cand.iter().map(|c| c.1).sum();
            let mut x = self.rng.below(w);
            let mut k = 0;
            while x >= cand[k].1 {
                x -= cand[k].1;
                k += 1;
            }
            let (ip, b) = cand.remove(k);
            // Lines 4-5: mark the port, fraction_total += fraction[port][priority].
            chosen_bytes += b;
            self.pause(now, view, pfc, egress, ip, b, total, out);
        }
        self.cand = cand;
    }

    /// Algorithm 3 for one chosen ingress `ip` holding `packets` bytes of a queue of egress port
    /// `egress`.
    ///
    /// `Transmission_speed` is the rate at which the congested egress queue drains, the line rate
    /// of its port `egress`, not the rate of the ingress link:
    /// - Algorithm 3 line 3 divides by it, and §4.4 says what for: "The first part of the pause
    ///   time is used to empty the packets buffered in the egress queue and the second part is
    ///   used to absorb the packets in flight". Only the egress port empties the egress queue.
    /// - Theorem 3.2 (§3) bounds the pause that costs no throughput by
    ///   `T_p < (q(t*) + v(t*) d*) / v_r(t*)`: the queue plus what arrives until the pause takes
    ///   effect, over `v_r`, "the receiving rate of receiver r" (Table 1), the rate at which the
    ///   buffer drains towards the receiver. Algorithm 3 is this bound split per ingress
    ///   (`packets` for `q`, `increment` for `v d*`), with `Transmission_speed` for `v_r`.
    /// - §2.3 (Fig. 2c): "The pause duration can be calculated by the expected buffer draining
    ///   rate when X/Y are paused", with P4, the egress, "still sending at its full rate".
    ///
    /// The paper measures no dequeue rate: the hardware §6.3 lists for P-PFC is "a counter for
    /// each port and priority to get the increment of the ingress queue length", and
    /// Algorithm 3's inputs are the egress composition and the increments. `v_r(t*)` is the egress
    /// line rate whenever P-PFC acts, since the gate (step 1) admits only queues above Kmax, which
    /// are backlogged; it is lower only while the egress itself is paused from downstream, a case
    /// the paper does not treat. So the drain rate is the egress port's rate. It differs from the
    /// ingress link's wherever the two links differ: in §5.5's dumbbell (10 Gb/s hosts, a 40 Gb/s
    /// link between the ToRs) a pause to the inter-ToR link for a 10 Gb/s host port lasts 4x
    /// longer than over the ingress rate, and one to a 10 Gb/s host for the 40 Gb/s uplink 4x
    /// shorter.
    #[allow(clippy::too_many_arguments)]
    fn pause(&mut self, now: Time, view: &SwitchView, pfc: &Pfc, egress: usize, ip: usize, packets: u64, queue: u64, out: &mut Actions) {
        let (port, prio) = (ip / self.nprio, ip % self.nprio);
        // §6.3: "PFC messages sending is only allowed when the bit is unset". Selection still
        // happened above, so a port already paused keeps counting towards R.
        if self.bit_until[ip] > now {
            return;
        }
        // Standard PFC already holds this ingress with its long XOFF; a finite predictive pause
        // would overwrite the upstream's timer and cut the safety net's pause short.
        if pfc.is_paused(port, prio) {
            return;
        }
        let duration = match self.cfg.pause {
            // Line 3: duration = (packets[port][priority] + increment[port][priority]) /
            // Transmission_speed: drain what it holds in the egress queue plus what is in flight
            // (§4.4), at the egress port's rate (see above). A draining ingress (negative
            // increment) is never chosen (Algorithm 2 line 3), so the max only guards the type.
            PauseTime::Predicted => {
                let bytes = packets + self.alg_increment()[ip].max(0) as u64;
                let bytes = match self.cfg.transmission_speed {
                    TransmissionSpeed::Egress => bytes,
                    // over `rate x packets / queue`: the same time as `bytes x queue / packets`
                    // over the whole rate (`packets > 0`: only holders of the queue are chosen)
                    TransmissionSpeed::Share => (bytes as u128 * queue as u128 / packets.max(1) as u128).min(u64::MAX as u128) as u64,
                };
                view.rate(egress as u16).tx_time(bytes)
            }
            // Fig. 10's fixed pause time.
            PauseTime::Fixed(t) => t,
        };
        // PFC quanta are 512 bit times "at the current network speed" (§4.4, IEEE 802.3x): that
        // of the link the frame goes out on and the upstream pauses, the ingress link. A longer
        // duration than a frame can carry (0xFFFF quanta: 839 us at 40 Gb/s, 3.4 ms at 10 Gb/s)
        // is cut to it; the register bit then lets the next tick pause again.
        let rate = view.rate(port as u16);
        let quanta = quanta_for(duration, rate);
        out.push(FcAction::Send { port: port as u16, msg: CtrlMsg::Pfc { prio: prio as u8, quanta }, by: Origin::Ppfc });
        self.pauses_sent += 1;
        // §6.3: the register bit is set after sending and unset after a while.
        let until = now + quanta_duration(quanta, rate);
        self.pause_until[ip] = until;
        self.bit_until[ip] = match self.cfg.hold {
            Some(h) => now + h,
            None => until,
        };
    }
}

impl OverPfc for Ppfc {
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, _pfc: &Pfc, _out: &mut Actions) {
        self.ensure_queues(view.nqueues());
        let (egress, queue) = (pkt.egress as usize, pkt.queue as usize);
        let qi = egress * self.nqueues + queue;
        // §4.1: start predicting once an egress queue exceeds Kmax. The 1 us tick starts here with
        // a fresh interval (so this packet is the first one it counts) and stops once no queue is
        // above Kmax, instead of running forever: the same decisions for far fewer events.
        if !self.hot[qi] && view.mmu.egress_bytes(egress, queue) > self.kmax(view, egress) {
            self.hot[qi] = true;
            self.hot_list.push(qi);
            if self.tick.is_none() {
                self.start_interval(now);
                self.tick = Some(now + self.cfg.interval);
            }
        }
        // §4.2: increment[port][priority], the buffer increase of the ingress queue.
        let ip = pkt.ingress as usize * self.nprio + pkt.prio as usize;
        self.increment[ip] += pkt.size as i64;
        self.arrived[ip] += pkt.size as i64;
        self.packets.add(view.nqueues(), pkt);
    }

    fn on_dequeue(&mut self, _now: Time, pkt: &PktMeta, _view: &SwitchView, _pfc: &Pfc, _out: &mut Actions) {
        // A departure shrinks the ingress queue: the increment is a net change (§4.3 speaks of
        // "ingress queues with negative buffer increase speeds").
        self.increment[pkt.ingress as usize * self.nprio + pkt.prio as usize] -= pkt.size as i64;
        self.packets.sub(pkt);
    }

    // A dropped packet never entered the buffer, so it is no buffer increase: on_drop stays the
    // default (only PFC sees it).

    fn on_timer(&mut self, now: Time, view: &SwitchView, pfc: &Pfc, out: &mut Actions) {
        self.run_interval(now, view, pfc, out);
    }

    fn next_timer(&self) -> Option<Time> {
        self.tick
    }

    /// Standard PFC may resume an ingress (zero quanta) that P-PFC has paused for longer; the
    /// upstream would then send before the computed drain time is over. Turn such a resume into a
    /// pause for what is left of P-PFC's, so both schemes' pauses are honoured.
    fn on_pfc_resume(&self, now: Time, port: u16, prio: u8, view: &SwitchView) -> Resume {
        let until = self.pause_until[port as usize * self.nprio + prio as usize];
        if until > now {
            Resume::PauseFor(quanta_for(until - now, view.rate(port)).max(1))
        } else {
            Resume::Send
        }
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("ppfc_predictive_pauses", self.pauses_sent));
    }

    /// The module time series while some egress queue is above Kmax (nothing otherwise): per
    /// ingress port, `egress_share_bytes`, its bytes in those queues (what Algorithm 2 draws by:
    /// Fig. 9b's "occupation of each host in egress port") and `paused` (1 while a predictive
    /// pause to it runs); switch-wide, `remaining_time_us`, Algorithm 1's prediction at the last
    /// tick (absent while the buffer was not growing).
    fn sample(&self, now: Time, _view: &SwitchView, out: &mut Samples) {
        if self.hot_list.is_empty() {
            return;
        }
        let nq = self.nqueues;
        for port in 0..self.nports {
            let mut bytes = 0u64;
            for &qi in &self.hot_list {
                for prio in 0..self.nprio {
                    bytes += self.packets.get(qi / nq, qi % nq, port, prio);
                }
            }
            let paused = (0..self.nprio).any(|prio| self.pause_until[port * self.nprio + prio] > now);
            if bytes > 0 || paused {
                out.push((port as u16, "egress_share_bytes", bytes as f64));
                out.push((port as u16, "paused", if paused { 1.0 } else { 0.0 }));
            }
        }
        if let Some(r) = self.last_remaining {
            out.push((SWITCH_WIDE, "remaining_time_us", r.as_us_f64()));
        }
    }

    fn origin(&self) -> Origin {
        Origin::Ppfc
    }
}

impl crate::registry::Declared for PpfcConfig {
    const NAME: &'static str = "ppfc";
    const ABOUT: &'static str = "P-PFC, predictive PFC (Tian et al., TPDS 2020, §3-4)";
    const COUNTERS: &'static [&'static str] = &["ppfc_predictive_pauses"];
}

impl super::registry::Scheme for PpfcConfig {
    fn pauses(&self) -> bool {
        true
    }
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String> {
        // P-PFC's pauses end by their duration and it sends no resumes: a PFC that holds every
        // pause until a resume frame would hold them for ever (the run stalls)
        if net.pfc.until_resume {
            return Err("flow_control.pfc.until_resume holds every pause until its resume frame, and P-PFC's pauses \
                        end by their duration with no resume: not allowed with flow_control.scheme ppfc"
                .to_string());
        }
        PpfcConfig::validate(self)
    }
    fn build(&self, at: &super::registry::BuildAt) -> super::AnyFc {
        super::AnyFc::Ppfc(Ppfc::with_pfc(self.clone(), at.pfc.clone(), at.node, at.nports, at.nprio, at.seed))
    }
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        super::pfc::BYTES_PER_PORT + 24 * crate::queues::port::NPRIO as u64
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

    use std::collections::HashMap;
    use crate::time::Rate;

    use crate::testing::{Sw, PKT, PRIO};

    fn ppfc(cfg: PpfcConfig, seed: u64) -> WithPfc<Ppfc> {
        Ppfc::with_pfc(cfg, PfcConfig::default(), 0, 8, 8, seed)
    }

    fn pauses(out: &Actions) -> Vec<(u16, u8, u16)> {
        out.iter()
            .map(|a| match a {
                FcAction::Send { port, msg: CtrlMsg::Pfc { prio, quanta }, .. } => (*port, *prio, *quanta),
                other => panic!("unexpected action {other:?}"),
            })
            .collect()
    }

    const T0: Time = Time::from_ns(100);

    /// Fill egress 0 to exactly Kmax (200 KB, not above) with `pre` packets per ingress at time 0,
    /// then enqueue `during` packets per ingress at T0: the first of them crosses Kmax and starts
    /// the interval, so `increment` is exactly `during` (whose egress may differ from 0).
    fn scenario(p: &mut WithPfc<Ppfc>, sw: &mut Sw, pre: &[(u16, usize)], during: &[(u16, u16, usize)]) -> Actions {
        let mut out = vec![];
        assert_eq!(pre.iter().map(|x| x.1).sum::<usize>() * PKT as usize, 200_000);
        for &(i, n) in pre {
            sw.enq(p, Time::ZERO, i, 0, n, &mut out);
        }
        assert_eq!(p.next_timer(), None, "at Kmax, not above: no tick");
        for &(i, e, n) in during {
            sw.enq(p, T0, i, e, n, &mut out);
        }
        out
    }

    /// Run the tick that is due, returning what it sent.
    fn tick(p: &mut WithPfc<Ppfc>, sw: &Sw) -> (Time, Actions) {
        let t = p.next_timer().expect("tick armed");
        let mut out = vec![];
        p.on_timer(t, &sw.view(), &mut out);
        (t, out)
    }

    #[test]
    fn defaults_are_the_papers() {
        let c = PpfcConfig::default();
        assert_eq!(c.kmax_bytes, None, "the port's ECN Kmax");
        assert_eq!(c.pause, PauseTime::Predicted);
        assert_eq!(c.interval, Time::from_us(1));
        assert_eq!(c.t, Time::from_us(100));
        assert_eq!(c.r, 0.8);
        assert_eq!(c.space_left, SpaceLeft::Shared);
        assert_eq!(c.hold, None);
        assert_eq!(c.increment, Increment::Net);
        assert_eq!(c.transmission_speed, TransmissionSpeed::Egress);
    }

    #[test]
    fn no_pause_below_kmax_even_with_fast_increment() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        let mut out = vec![];
        // 180 KB in 100 ns: the buffer would be used up in ~2 us, but the egress is below Kmax.
        for i in 1..=4 {
            sw.enq(&mut p, Time::ZERO, i, 0, 45, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(p.next_timer(), None);
        p.on_timer(Time::from_us(1), &sw.view(), &mut out);
        assert!(out.is_empty());
        assert_eq!(p.pauses_sent, 0);
    }

    #[test]
    fn pauses_above_kmax_before_standard_pfc_would() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        let out = scenario(&mut p, &mut sw, &[(1, 50), (2, 50), (3, 50), (4, 50)], &[(1, 0, 15), (2, 0, 15), (3, 0, 15), (4, 0, 15)]);
        assert!(out.is_empty());
        assert_eq!(p.next_timer(), Some(T0 + Time::from_us(1)));
        let (_, out) = tick(&mut p, &sw);
        let sent = pauses(&out);
        assert!(!sent.is_empty());
        for &(port, prio, quanta) in &sent {
            assert!((1..=4).contains(&port) && prio == PRIO && quanta > 0 && quanta < u16::MAX);
        }
        // Standard PFC alone would not pause any of these ingresses yet.
        let mut pfc = Pfc::new(PfcConfig::default(), 8, 8);
        let mut pfc_out = vec![];
        for i in 1..=4 {
            assert!(!p.pfc.is_paused(i, PRIO as usize));
            pfc.check_pause(Time::ZERO, &sw.view(), i, PRIO as usize, &mut pfc_out);
        }
        assert!(pfc_out.is_empty());
    }

    #[test]
    fn no_pause_when_remaining_time_is_at_least_t() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        // 10 KB per us against ~3.3 MB free: ~330 us > T.
        scenario(&mut p, &mut sw, &[(1, 100), (2, 100)], &[(1, 0, 5), (2, 0, 5)]);
        let (t, out) = tick(&mut p, &sw);
        assert!(out.is_empty());
        // Still above Kmax: the tick goes on.
        assert_eq!(p.next_timer(), Some(t + Time::from_us(1)));
    }

    #[test]
    fn pause_duration_is_bytes_in_egress_plus_increment_over_rate() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        scenario(&mut p, &mut sw, &[(1, 200)], &[(1, 0, 60)]);
        assert_eq!(p.increment(1, PRIO as usize), 60_000);
        assert_eq!(p.packets(0, PRIO as usize, 1, PRIO as usize), 260_000);
        let (_, out) = tick(&mut p, &sw);
        // (260 KB + 60 KB) at 40 Gb/s = 64 us = 5000 quanta of 12.8 ns.
        let expect = quanta_for(Rate::gbps(40).tx_time(320_000), Rate::gbps(40));
        assert_eq!(expect, 5000);
        assert_eq!(pauses(&out), vec![(1, PRIO, 5000)]);
    }

    #[test]
    fn samples_report_each_ingress_share_of_the_hot_queues_and_its_pause() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig { r: 1.0, ..Default::default() }, 1);
        let mut s: Samples = vec![];
        p.sample(T0, &sw.view(), &mut s);
        assert!(s.is_empty(), "nothing while no queue is above Kmax");
        scenario(&mut p, &mut sw, &[(1, 50), (2, 150)], &[(1, 0, 50), (2, 0, 50)]);
        let (t, out) = tick(&mut p, &sw);
        assert!(!out.is_empty());
        p.sample(t, &sw.view(), &mut s);
        let get = |port: u16, m: &str| s.iter().find(|x| x.0 == port && x.1 == m).map(|x| x.2);
        assert_eq!(get(1, "egress_share_bytes"), Some(100_000.0));
        assert_eq!(get(2, "egress_share_bytes"), Some(200_000.0));
        assert_eq!((get(1, "paused"), get(2, "paused")), (Some(1.0), Some(1.0)));
        assert_eq!(get(3, "egress_share_bytes"), None, "an ingress with nothing in them is left out");
        assert!(get(SWITCH_WIDE, "remaining_time_us").is_some_and(|r| r > 0.0 && r < 100.0));
    }

    #[test]
    fn share_speed_pauses_for_the_whole_queue_to_drain() {
        // Ingress 1 holds 100 KB and ingress 2 300 KB of egress 0's 400 KB, half and all of it
        // come in this interval (increments 50 KB and 150 KB). Over its share of 40 Gb/s,
        // ingress 1's 150 KB take 150 x 400 / 100 = 600 KB of line-rate time, and so do ingress
        // 2's 450 KB (450 x 400 / 300): 120 us = 9375 quanta each; over the whole rate they would
        // be 30 us and 90 us.
        let mut sw = Sw::new();
        let cfg = PpfcConfig { transmission_speed: TransmissionSpeed::Share, r: 1.0, ..Default::default() };
        let mut p = ppfc(cfg, 1);
        let mut out = scenario(&mut p, &mut sw, &[(1, 50), (2, 150)], &[(1, 0, 50), (2, 0, 150)]);
        assert!(out.is_empty());
        assert_eq!((p.increment(1, PRIO as usize), p.increment(2, PRIO as usize)), (50_000, 150_000));
        let (_, sent) = tick(&mut p, &sw);
        out = sent;
        let mut got = pauses(&out);
        got.sort();
        assert_eq!(got, vec![(1, PRIO, 9375), (2, PRIO, 9375)]);
        // the egress reading of the same: 30 us and 90 us
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig { r: 1.0, ..Default::default() }, 1);
        scenario(&mut p, &mut sw, &[(1, 50), (2, 150)], &[(1, 0, 50), (2, 0, 150)]);
        let (_, out) = tick(&mut p, &sw);
        let mut got = pauses(&out);
        got.sort();
        let qf = |b: u64| quanta_for(Rate::gbps(40).tx_time(b), Rate::gbps(40));
        assert_eq!(got, vec![(1, PRIO, qf(150_000)), (2, PRIO, qf(450_000))]);
    }

    #[test]
    fn arrivals_count_what_came_in_whatever_left() {
        // 60 packets in and 50 out of ingress 1 in the interval: net 10 KB, arrivals 60 KB.
        // Against ~3.5 MB free, 10 KB/us predicts ~350 us (> T: no pause) and 60 KB/us ~58 us
        // (< T: pause), whose duration counts the 60 KB in flight.
        for (inc, expect) in [(Increment::Net, None), (Increment::Arrivals, Some(260_000 - 50_000 + 60_000))] {
            let mut sw = Sw::new();
            let mut p = ppfc(PpfcConfig { increment: inc, ..Default::default() }, 1);
            let mut out = scenario(&mut p, &mut sw, &[(1, 200)], &[(1, 0, 60)]);
            sw.deq(&mut p, T0, 1, 0, 50, &mut out);
            assert_eq!(p.increment(1, PRIO as usize), 10_000);
            let (_, out) = tick(&mut p, &sw);
            let want = expect.map(|b: u64| (1, PRIO, quanta_for(Rate::gbps(40).tx_time(b), Rate::gbps(40))));
            assert_eq!(pauses(&out).first().copied(), want, "{inc:?}");
        }
    }

    #[test]
    fn pause_divides_by_the_egress_rate_not_the_ingress_rate() {
        // §5.5's dumbbell at the receiver's ToR: egress 0 is a 10 Gb/s host port, ingress 1 the
        // 40 Gb/s inter-ToR link. The pause is the time the 10 Gb/s port takes to drain
        // (packets + increment), counted in quanta of the 40 Gb/s link the frame goes out on.
        let mut sw = Sw::new();
        sw.info.port_rate[0] = Rate::gbps(10);
        let mut p = ppfc(PpfcConfig::default(), 1);
        scenario(&mut p, &mut sw, &[(1, 200)], &[(1, 0, 60)]);
        let (_, out) = tick(&mut p, &sw);
        // (260 KB + 60 KB) at 10 Gb/s = 256 us = 20000 quanta of 12.8 ns.
        let expect = quanta_for(Rate::gbps(10).tx_time(320_000), Rate::gbps(40));
        assert_eq!(expect, 20_000);
        assert_eq!(pauses(&out), vec![(1, PRIO, expect)]);
        // 4x the pause over the ingress link's rate (5000 quanta, the test above).
        assert_eq!(expect, 4 * quanta_for(Rate::gbps(40).tx_time(320_000), Rate::gbps(40)));
        assert_eq!(p.pause_until[PRIO as usize + 8], Time::from_us(1) + T0 + Time::from_us(256));

        // The other way round: a 10 Gb/s host (ingress 2) filling the 40 Gb/s uplink (egress 3)
        // is paused for a quarter of the time over its own link's rate, in 10 Gb/s quanta.
        let mut sw = Sw::new();
        sw.info.port_rate[2] = Rate::gbps(10);
        let mut p = ppfc(PpfcConfig::default(), 1);
        let mut o = vec![];
        sw.enq(&mut p, Time::ZERO, 2, 3, 200, &mut o);
        sw.enq(&mut p, T0, 2, 3, 60, &mut o);
        let (_, out) = tick(&mut p, &sw);
        let expect = quanta_for(Rate::gbps(40).tx_time(320_000), Rate::gbps(10));
        assert_eq!(expect, 1250); // 64 us in 51.2 ns quanta
        assert_eq!(pauses(&out), vec![(2, PRIO, expect)]);
    }

    #[test]
    fn gate_is_the_egress_ports_ecn_kmax_unless_overridden() {
        // Port 0's ECN Kmax is 100 KB: 150 KB there opens the gate, and the prediction fires
        // (150 KB grown in 1 us against ~3.7 MB free).
        let mut sw = Sw::new();
        sw.info.ecn[0] = (40_000, 100_000);
        let mut p = ppfc(PpfcConfig::default(), 1);
        let mut o = vec![];
        sw.enq(&mut p, Time::ZERO, 1, 0, 100, &mut o);
        assert_eq!(p.next_timer(), None, "at Kmax, not above");
        sw.enq(&mut p, T0, 1, 0, 50, &mut o);
        assert_eq!(p.next_timer(), Some(T0 + Time::from_us(1)));
        let (_, out) = tick(&mut p, &sw);
        assert_eq!(pauses(&out).len(), 1);
        // The same bytes at port 2, whose ECN Kmax is Table 2's 200 KB: no gate, no tick.
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        sw.enq(&mut p, Time::ZERO, 1, 2, 150, &mut o);
        assert_eq!(p.next_timer(), None);
        // An explicit kmax replaces the port's.
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig { kmax_bytes: Some(300_000), ..Default::default() }, 1);
        sw.enq(&mut p, Time::ZERO, 1, 0, 300, &mut o);
        assert_eq!(p.next_timer(), None, "300 KB is above the port's 200 KB but not above the override");
        sw.enq(&mut p, T0, 1, 0, 1, &mut o);
        assert!(p.next_timer().is_some());
    }

    #[test]
    fn fixed_pause_time_replaces_the_computed_one() {
        // Fig. 10's variant: every pause lasts the configured time whatever the queue.
        let mut sw = Sw::new();
        sw.info.port_rate[0] = Rate::gbps(10);
        let cfg = PpfcConfig { pause: PauseTime::Fixed(Time::from_us(20)), ..Default::default() };
        let mut p = ppfc(cfg, 1);
        scenario(&mut p, &mut sw, &[(1, 100), (2, 100)], &[(1, 0, 60), (2, 0, 60)]);
        let (t, out) = tick(&mut p, &sw);
        let q20 = quanta_for(Time::from_us(20), Rate::gbps(40));
        assert_eq!(q20, 1563); // 20 us rounded up to 12.8 ns quanta
        let mut sent = pauses(&out);
        sent.sort();
        assert_eq!(sent, vec![(1, PRIO, q20), (2, PRIO, q20)]);
        // The register bit lasts the fixed pause.
        assert!(p.bit_set(t + Time::from_us(20), 1, PRIO as usize));
        assert!(!p.bit_set(t + quanta_duration(q20, Rate::gbps(40)), 1, PRIO as usize));
    }

    #[test]
    fn pause_time_reads_predicted_or_a_time() {
        let c: PpfcConfig = serde_json::from_str(r#"{"pause": "predicted"}"#).unwrap();
        assert_eq!(c.pause, PauseTime::Predicted);
        let c: PpfcConfig = serde_json::from_str(r#"{"pause": 5000000, "kmax": null}"#).unwrap();
        assert_eq!((c.pause, c.kmax_bytes), (PauseTime::Fixed(Time::from_us(5)), None));
        assert_eq!(serde_json::to_value(PpfcConfig::default()).unwrap()["pause"], "predicted");
    }

    #[test]
    fn register_bit_suppresses_repeat_pause_until_the_first_expires() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        scenario(&mut p, &mut sw, &[(1, 200)], &[(1, 0, 60)]);
        let (t1, out) = tick(&mut p, &sw);
        assert_eq!(pauses(&out).len(), 1);
        let expiry = t1 + Time::from_us(64);
        assert!(p.bit_set(t1, 1, PRIO as usize));
        // Next interval: the port still grows fast, but its bit is set.
        let mut o = vec![];
        sw.enq(&mut p, t1, 1, 0, 40, &mut o);
        let (_, out) = tick(&mut p, &sw);
        assert!(out.is_empty(), "{out:?}");
        // Idle ticks until the pause has run out.
        let mut t = t1;
        while t < expiry {
            let (tt, out) = tick(&mut p, &sw);
            assert!(out.is_empty());
            t = tt;
        }
        assert!(!p.bit_set(t, 1, PRIO as usize));
        sw.enq(&mut p, t, 1, 0, 40, &mut o);
        let (_, out) = tick(&mut p, &sw);
        assert_eq!(pauses(&out).len(), 1);
        assert_eq!(
            out[0],
            FcAction::Send {
                port: 1,
                msg: CtrlMsg::Pfc { prio: PRIO, quanta: quanta_for(Rate::gbps(40).tx_time(340_000 + 40_000), Rate::gbps(40)) },
                by: Origin::Ppfc,
            }
        );
        assert_eq!(p.pauses_sent, 2);
    }

    #[test]
    fn hold_sets_the_register_bit_length() {
        let mut sw = Sw::new();
        let cfg = PpfcConfig { hold: Some(Time::from_us(2)), ..Default::default() };
        let mut p = ppfc(cfg, 1);
        scenario(&mut p, &mut sw, &[(1, 200)], &[(1, 0, 60)]);
        let (t1, _) = tick(&mut p, &sw);
        assert!(p.bit_set(t1 + Time::from_us(1), 1, PRIO as usize));
        assert!(!p.bit_set(t1 + Time::from_us(2), 1, PRIO as usize));
    }

    #[test]
    fn choice_is_weighted_by_share_and_skips_non_contributors() {
        // Egress 0 (240 KB): port 1 holds 150 KB, port 2 50 KB, both growing; port 4 holds 40 KB
        // but did not grow; port 3 grows but only towards egress 5. R tiny: one pick per tick.
        let cfg = PpfcConfig { r: 0.01, ..Default::default() };
        let mut count = [0usize; 8];
        let runs = 400;
        for seed in 0..runs {
            let mut sw = Sw::new();
            let mut p = ppfc(cfg.clone(), seed);
            scenario(&mut p, &mut sw, &[(1, 120), (2, 40), (4, 40)], &[(1, 0, 30), (2, 0, 10), (3, 5, 20)]);
            let (_, out) = tick(&mut p, &sw);
            let sent = pauses(&out);
            assert_eq!(sent.len(), 1);
            count[sent[0].0 as usize] += 1;
        }
        assert_eq!(count[3], 0, "a port with no bytes in the egress queue is never chosen");
        assert_eq!(count[4], 0, "a port whose buffer did not grow is never chosen");
        assert_eq!(count[1] + count[2], runs as usize);
        assert!(count[1] > count[2]);
        let f = count[1] as f64 / runs as f64;
        assert!((0.65..0.85).contains(&f), "port 1 chosen {f} of the time, expected ~0.75");
    }

    #[test]
    fn chosen_share_reaches_r_and_no_more_ports_than_needed() {
        // Shares 40/30/20/10 % of a 250 KB queue, all growing.
        let shares = [(1u16, 100_000u64), (2, 75_000), (3, 50_000), (4, 25_000)];
        let incs: HashMap<u16, u64> = [(1, 20_000), (2, 15_000), (3, 10_000), (4, 5_000)].into_iter().collect();
        for seed in 0..100 {
            let mut sw = Sw::new();
            let mut p = ppfc(PpfcConfig::default(), seed);
            scenario(&mut p, &mut sw, &[(1, 80), (2, 60), (3, 40), (4, 20)], &[(1, 0, 20), (2, 0, 15), (3, 0, 10), (4, 0, 5)]);
            let (_, out) = tick(&mut p, &sw);
            let sent = pauses(&out);
            let share = |port: u16| shares.iter().find(|s| s.0 == port).unwrap().1 as f64 / 250_000.0;
            let total: f64 = sent.iter().map(|s| share(s.0)).sum();
            let before_last: f64 = sent[..sent.len() - 1].iter().map(|s| share(s.0)).sum();
            assert!(total >= 0.8 - 1e-9, "seed {seed}: chosen share {total}");
            assert!(before_last < 0.8, "seed {seed}: chose one port more than needed");
            for &(port, _, q) in &sent {
                let bytes = shares.iter().find(|s| s.0 == port).unwrap().1 + incs[&port];
                assert_eq!(q, quanta_for(Rate::gbps(40).tx_time(bytes), Rate::gbps(40)));
            }
        }
    }

    #[test]
    fn tick_stops_below_kmax_and_restarts_with_a_fresh_interval() {
        let mut sw = Sw::new();
        let mut p = ppfc(PpfcConfig::default(), 1);
        scenario(&mut p, &mut sw, &[(1, 100), (2, 100)], &[(1, 0, 5), (2, 0, 5)]);
        let mut o = vec![];
        sw.deq(&mut p, T0, 1, 0, 20, &mut o);
        let (t, out) = tick(&mut p, &sw);
        assert!(out.is_empty());
        assert_eq!(p.next_timer(), None, "no queue above Kmax: the tick stops");
        // A burst while below Kmax is not part of the next interval...
        sw.enq(&mut p, t, 3, 0, 10, &mut o);
        assert_eq!(p.next_timer(), None);
        // ...which starts when the queue crosses Kmax again: only 5 KB counted, ~660 us > T.
        let t2 = t + Time::from_us(3);
        sw.enq(&mut p, t2, 3, 0, 5, &mut o);
        assert_eq!(p.increment(3, PRIO as usize), 5_000, "the crossing packet opens the interval");
        assert_eq!(p.next_timer(), Some(t2 + Time::from_us(1)));
        let (_, out) = tick(&mut p, &sw);
        assert!(out.is_empty() && o.is_empty());
    }

    #[test]
    fn standard_pfc_resume_does_not_cut_a_predictive_pause_short() {
        let mut sw = Sw::new();
        let pfc = PfcConfig { threshold: PfcThreshold::Static { xoff: 300_000, xon: 250_000 }, ..Default::default() };
        let mut p = Ppfc::with_pfc(PpfcConfig::default(), pfc, 0, 8, 8, 1);
        scenario(&mut p, &mut sw, &[(1, 200)], &[(1, 0, 60)]);
        let (t1, out) = tick(&mut p, &sw);
        assert_eq!(pauses(&out), vec![(1, PRIO, 5000)]);
        // In-flight bytes push the ingress over the static XOFF: standard PFC pauses it.
        let mut o = vec![];
        sw.enq(&mut p, t1, 1, 0, 40, &mut o);
        assert_eq!(pauses(&o), vec![(1, PRIO, u16::MAX)]);
        assert!(p.pfc.is_paused(1, PRIO as usize));
        // It drains below XON 10 us later; PFC's resume becomes a pause for the 54 us left.
        o.clear();
        let t = t1 + Time::from_us(10);
        sw.deq(&mut p, t, 1, 0, 60, &mut o);
        let left = quanta_for(Time::from_us(54), Rate::gbps(40));
        assert_eq!(pauses(&o), vec![(1, PRIO, left)]);
        assert!(!p.pfc.is_paused(1, PRIO as usize));
    }
}
