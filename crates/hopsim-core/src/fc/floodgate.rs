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
//! - Upstream (§4.2): per destination a window initialised to `BDP_nextHop + C_out x T`, one
//!   for the whole switch (§7.2: "the global per-dst sending window"); a packet is forwarded to
//!   the egress queue while its destination has window, else it goes to that destination's VOQ (a free one from the bitmap; when all are in
//!   use, a hash of the destination picks one); the non-incast queue is served strictly before
//!   the VOQs, which are served round robin only while their destination has window; a credit
//!   refills the window and wakes the VOQ. (`voq_service = "egress_fifo"`: Floodgate-NS3's order
//!   instead, a VOQ packet joining the egress FIFO once its window allows.) The last-hop ToR keeps no window (its egress faces
//!   a host) and hosts send no credits.
//! - VOQ groups (§4.2): up- and down-going traffic must not share a VOQ (Fig. 4's deadlock).
//!   `voq_pool` chooses the pool: per egress port (default), or the paper's switch-wide pool
//!   (Fig. 5) with the groups (`grouped`) or without them (`shared`, where Fig. 4's circular wait
//!   forms); see `floodgate/pool.rs`.
//! - Loss recovery (§4.3): PSN per (port, destination); `inflight = next PSN sent - last PSN
//!   credited`, `window = initial - inflight`; a switchSYN after a timeout without credits makes
//!   the downstream credit what it has.
//! - Hosts' support (§4.3, the ideal design): the first-hop ToR sends dstPause to a source host
//!   when the destination's VOQ passes `thre_off`, and dstResume below `thre_on`.
//! - The ideal design (§3.2 strawman + §4.3 hosts' support, "ideal" in §6): a credit per packet
//!   sent the moment the packet is forwarded, a window of `m x BDP_nextHop` (m = 1.5, §6
//!   "Parameters"), a VOQ per destination (as many as the port has queues) and dstPause.
//!
//! Interpretation choices:
//! - Windows count packets, as the paper's ("decreased by one"); the initial window is
//!   `ceil((rate x HRTT + rate x T) / MTU)` with HRTT the next hop's round trip plus one MTU.
//!   `window_unit = "bytes"` counts bytes instead, as Floodgate-NS3 does: the PSN then numbers
//!   bytes and a packet goes while an MTU-sized one still fits (`window_fit = "own_size"`: while
//!   its own size fits, as there).
//! - The window is the PSN difference itself (§4.3): a packet sent direct is charged when it is
//!   queued (the paper's "forwarded to the egress queue") and gets its PSN when it leaves; a VOQ
//!   packet is charged when it leaves. So no separate counter can drift from the PSNs.
//! - A credit carries the PSN of the last packet forwarded from that ingress for that destination
//!   (§4.3 "pick back the last PSN"); where one (ingress, destination) leaves by several egress
//!   ports (ECMP upwards in a fat-tree) packets may be forwarded out of PSN order and a credit may
//!   cover one still queued here: the paper's scheme has the same property.
//! - switchSYN (§4.3) names the destination and the PSN of the last packet sent, `<dst, PSN>`, one
//!   frame per (port, destination) whose window has had no credit for `syn_timeout` with packets
//!   in flight. The link is FIFO and a packet takes its PSN as it leaves, so when the SYN arrives
//!   every packet up to that PSN has arrived or was lost; once none of that (ingress,
//!   destination)'s packets is left in the buffer, the downstream credits through the SYN's PSN,
//!   which returns the window of the lost last packets that no later packet's PSN would cover.
//! - VOQs are data queues 1.. of each egress port (queue 0 is the non-incast queue), at most
//!   `max_voq` per port (per switch with the switch-wide pool); being per egress port, up- and
//!   down-going traffic never share one, so the grouping of §4.2 holds by construction. A VOQ
//!   shared by several destinations (hash) opens while any of them has window.
//! - One credit timer per switch ticks every `T` while anything awaits credit (the per-port
//!   timers of §4.1 with a common phase).
//! - The ideal design's credits bypass delayCredit (the strawman has none) and it sends dstPause
//!   whatever `dst_pause` says.
//! - The window is the switch's, per destination (§7.2; appendix Theorem 2: "each ToR switch only
//!   transmits win_1 packets"; Floodgate-NS3 keeps `m_wins[dst]` and sums `nxt_data_psn -
//!   rcv_ack_psn` over ports): the PSNs stay per (egress port, destination) as §4.3 has them and
//!   the window spent is their sum over the ports holding state for the destination; its initial
//!   value is that of the egress port the packet takes (the ports towards one destination have
//!   one rate in the paper's topologies). A destination with a VOQ on any port queues on every
//!   port (§4.2: "first checks whether the data's destination host has already been allocated
//!   with a VOQ"), so its packets by one uplink do not overtake those waiting for another.
//!   `window = "port"` keeps one window per (egress port, destination), which lets a ToR with
//!   k uplinks put k windows of an incast into the cores.
//! - delayCredit holds later credits only: every source ToR's first window reaches the cores
//!   before any credit is due, so a core holds up to `win_1 x K_1 / K_2` (K_1 source ToRs, K_2
//!   cores), growing with the ToRs, as the online appendix's Theorem 2 (eqs. 6-7) derives; what
//!   delayCredit removes is what credits returned during the burst would let in past that bound
//!   (tests/it/floodgate.rs measures both).

mod dst_pause;
mod pool;

#[cfg(test)]
mod tests;

pub use dst_pause::DstPauseOn;

use super::{Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, Samples, SwitchView, SWITCH_WIDE};
use crate::rng::mix;
use crate::time::Time;
use pool::Pool;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Where a switch's VOQs come from (§4.2 "VOQ grouping", Fig. 4).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VoqPool {
    /// `max_voq` VOQs per egress port: up- and down-going traffic never share one.
    #[default]
    PerPort,
    /// `max_voq` FIFO VOQs per switch shared by every egress port, no groups: Fig. 4's deadlock
    /// can form.
    Shared,
    /// The switch-wide pool split into a down- and an up-going group on middle-layer switches
    /// (§4.2's fix).
    Grouped,
}

/// Whose window a packet spends (§4.2 "per-dst window", §7.2 "the global per-dst sending
/// window").
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowScope {
    /// One window per destination for the whole switch, spent by every egress port that leads
    /// to it (§7.2's ingress pipeline, appendix Theorem 2's "each ToR switch only transmits
    /// win_1 packets", Floodgate-NS3's `m_wins[dst]`).
    #[default]
    Switch,
    /// One window per (egress port, destination): a switch with k uplinks lets k windows of an
    /// incast through (hopsim's reading before; kept to measure the difference).
    Port,
}

/// What a window counts (§4.2's "decreased by one" per packet, or bytes as Floodgate-NS3).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowUnit {
    /// A packet spends one, whatever its size (the paper's reading).
    #[default]
    Packets,
    /// A packet spends its bytes on the wire and leaves while the window still holds an
    /// MTU-sized packet: Floodgate-NS3's `m_wins[dst]` is bytes, spent by `pktSize` and checked
    /// as `m_wins[dst] < pktSize` (switch-mmu.cc lines 252-263, 293-308; third.cc line 2875
    /// keeps the window in bytes).
    Bytes,
}

/// How a VOQ's packets reach the wire once their destination has window.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum VoqService {
    /// The VOQs are queues of the egress port, served strictly after its non-incast queue
    /// (§4.2: "the non-incast queue is served strictly before the VOQs"; §7.2's switch).
    #[default]
    Strict,
    /// A VOQ packet joins its egress port's FIFO, behind what is queued there and ahead of what
    /// comes later, the moment its destination's window allows, and is charged to the window
    /// then: Floodgate-NS3, where a credit restores the window and moves the VOQ's packets to
    /// their egress while the head's window allows (`ResumeVOQWin`, switch-node.cc lines 586-619:
    /// `UpdateWin` then `CheckAndSendVOQ(dst)`; switch-mmu.cc lines 361-385: `CheckAndSendAll`,
    /// the window spent in `VOQDequeueCallback`; voq.cc lines 100-129: `while (CheckAndSendOne())`,
    /// each head tested with `m_checkWinCallback`), into the queue a direct packet takes
    /// (`DoDequeueVOQ` -> `SwitchSend(qIndex, ...)`, switch-node.cc lines 301-303, 309-311,
    /// 712-714). Needs the switch-wide pool (`voq_pool` shared or grouped), its one FIFO per VOQ.
    EgressFifo,
}

/// What must fit in the destination's window for a packet to go (with `window_unit = "bytes"`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum WindowFit {
    /// An MTU-sized packet, whatever the packet's size.
    #[default]
    Mtu,
    /// The packet's own bytes: Floodgate-NS3's `CheckDstWin(dst, pktSize)` (switch-mmu.cc lines
    /// 252-263: `GetInflightBytes(dst) + pktSize > m_wins[dst]` or `m_wins[dst] < pktSize`
    /// refuse), asked with the arriving packet's size (switch-node.cc line 553) and the VOQ head's
    /// (voq.cc line 110). The packet's size is known where it is tested: at arrival and at the
    /// head of a switch-wide VOQ, so this needs the switch-wide pool.
    OwnSize,
}

/// Floodgate parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FloodgateConfig {
    /// Credit interval `T` (the default 10 us).
    #[serde(rename = "T")]
    pub t: Time,
    /// delayCredit threshold in BDPs of the next hop (the default 10 BDP).
    pub thre_credit_bdp: f64,
    /// delayCredit on (§4.1); off sends every credit at its tick (Fig. 14's comparison).
    pub delay_credit: bool,
    /// VOQs per egress port, or per switch with a switch-wide pool (the default 100;
    /// limited by the port's queues less one).
    pub max_voq: usize,
    /// Per egress port (default), or the switch-wide pool with or without §4.2's groups.
    pub voq_pool: VoqPool,
    /// One window per destination per switch (default, §7.2) or per (egress port, destination).
    pub window: WindowScope,
    /// switchSYN after this long without credits while packets are in flight (§4.3: "a
    /// relatively large timeout").
    pub syn_timeout: Time,
    /// The ideal design's dstPause at the first-hop ToR (§4.3, "Hosts' support").
    pub dst_pause: bool,
    /// dstPause and dstResume thresholds in BDPs of the host link (§4.3: "one-hop BDP").
    pub thre_off_bdp: f64,
    pub thre_on_bdp: f64,
    /// What dstPause tests: the destination's VOQ length, pausing every source host (default,
    /// §4.3), or one source host's own bytes for the destination (Floodgate-NS3); see
    /// `floodgate/dst_pause.rs`.
    pub dst_pause_on: DstPauseOn,
    /// The ideal design (§3.2, §6): per-packet credits, window `m x BDP_nextHop`, a VOQ per
    /// destination, no delayCredit.
    pub ideal: bool,
    /// The ideal design's window in next-hop BDPs (§6 "Parameters": m = 1.5).
    pub m: f64,
    /// delayCredit in the ideal design too (with `delay_credit`): a packet's credit is held while
    /// the destination's VOQ bytes here pass the threshold, and every upstream's held credits
    /// for it go back at the first dequeue that finds them under it. Off (default): the paper's
    /// strawman credits every packet at once (§3.2). On: Floodgate-NS3, whose credit at
    /// dequeue goes through `GetIngressDstCreditCounter` (`switch-mmu.cc` lines 491-506: zero
    /// while `m_buffering[dst] > m_th_ack`) for every upstream once `SWITCH_ACK_TH_M > 0`
    /// (`switch-node.cc` lines 446-478), in its ideal configs too.
    pub ideal_delay_credit: bool,
    /// The practical design's window is `win_m x BDP_nextHop + C_out x T`: the paper's is 1
    /// (§4.2); Floodgate-NS3 multiplies the BDP by its `SWITCH_WIN_M` (1.5 in its configs:
    /// `third.cc` line 2872, `win = Settings::switch_win_m * bdp`, then `+ credit_interval x
    /// link` on line 2874).
    pub win_m: f64,
    /// A credit also goes back at dequeue as soon as the bytes forwarded from an ingress for a
    /// destination since its last credit reach this many (delayCredit still holding it back);
    /// the timer sends the rest. `None` (default, §4.1): credits on the timer only. Floodgate-NS3's
    /// `SWTICH_BYTE_COUNTER` (10240 in its practical configs; `switch-node.cc` line 467,
    /// `if (creditPippyback >= Settings::switch_byte_counter)` in `SwitchNotifyDequeue`). With
    /// delayCredit a dequeue checks every upstream, as its loop over all devices does (lines
    /// 446-458): the first dequeue under the threshold credits each one owed that many, so a
    /// destination's held credits go back to every source at once, not to one source per
    /// dequeue and the rest a timer tick later (by when the first sources' refilled windows may
    /// have filled the VOQ again).
    pub byte_counter: Option<u64>,
    /// What a window counts: packets (default) or bytes.
    pub window_unit: WindowUnit,
    /// A destination whose window towards each next hop goes into the module time series
    /// (`window_pkts`, per windowed port holding state for it; with the switch-wide window every
    /// such port shows the switch's one window).
    pub watch_dst: Option<u32>,
    /// Standard PFC underneath as a backstop (appendix B).
    pub pfc: bool,
    /// Whether ECN marking at a port reads the bytes of all its data queues, its VOQs' included,
    /// rather than the packet's own queue: Floodgate-NS3's `ShouldSendCN` reads
    /// `egress_bytes[port][priority]` (switch-mmu.cc:138-156, at dequeue, switch-node.cc:386),
    /// which admission counts before a packet waits in a VOQ (switch-node.cc:277-301), so a port
    /// whose VOQs hold an incast marks the other flows leaving it (Floodgate runs one class:
    /// every data queue of a port is that priority).
    pub ecn_counts_voq: bool,
    /// VOQs served strictly after the non-incast queue (default) or their packets joining the
    /// egress FIFO once window allows (Floodgate-NS3).
    pub voq_service: VoqService,
    /// A byte window lets a packet go while an MTU-sized one fits (default) or while its own
    /// size fits (Floodgate-NS3).
    pub window_fit: WindowFit,
}

impl Default for FloodgateConfig {
    fn default() -> Self {
        FloodgateConfig {
            t: Time::from_us(10),
            thre_credit_bdp: 10.0,
            delay_credit: true,
            max_voq: 100,
            voq_pool: VoqPool::PerPort,
            window: WindowScope::Switch,
            syn_timeout: Time::from_ms(1),
            dst_pause: false,
            thre_off_bdp: 1.0,
            thre_on_bdp: 1.0,
            dst_pause_on: DstPauseOn::Voq,
            ideal: false,
            m: 1.5,
            ideal_delay_credit: false,
            win_m: 1.0,
            byte_counter: None,
            window_unit: WindowUnit::Packets,
            watch_dst: None,
            pfc: false,
            ecn_counts_voq: false,
            voq_service: VoqService::Strict,
            window_fit: WindowFit::Mtu,
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
        if !(self.win_m.is_finite() && self.win_m > 0.0 && self.win_m <= 1e6) {
            return Err(format!("flow_control.floodgate.win_m: {} must be a number of BDPs above 0 (the paper's 1)", self.win_m));
        }
        if self.byte_counter == Some(0) {
            return Err("flow_control.floodgate.byte_counter: must be a size above 0 bytes (or left out: credits on the timer only)".into());
        }
        if !(self.m.is_finite() && self.m > 0.0 && self.m <= 1e6) {
            return Err(format!("flow_control.floodgate.m: {} must be a number of BDPs above 0 (the paper's 1.5)", self.m));
        }
        if self.voq_service == VoqService::EgressFifo && self.voq_pool == VoqPool::PerPort {
            return Err("flow_control.floodgate.voq_service: \"egress_fifo\" needs voq_pool = \"shared\" or \"grouped\" (one FIFO per VOQ); allowed with \"per_port\": \"strict\"".into());
        }
        if self.window_fit == WindowFit::OwnSize && (self.window_unit != WindowUnit::Bytes || self.voq_pool == VoqPool::PerPort) {
            return Err("flow_control.floodgate.window_fit: \"own_size\" needs window_unit = \"bytes\" and voq_pool = \"shared\" or \"grouped\"; allowed otherwise: \"mtu\"".into());
        }
        if self.voq_pool == VoqPool::Grouped && self.max_voq < 2 {
            return Err(format!("flow_control.floodgate.max_voq: {} is too few for voq_pool = \"grouped\" (one VOQ per group); allowed: 2 or more", self.max_voq));
        }
        Ok(())
    }
}

/// Upstream state per (egress port, destination).
#[derive(Clone, Copy, Debug, Default)]
struct Win {
    /// PSN of the next packet sent, and one past the last one credited (with `window_unit =
    /// "bytes"` the PSN numbers bytes: a packet's is its last byte's, as Floodgate-NS3's
    /// absolute PSNs add `GetSize()`).
    next_psn: u32,
    credited: u32,
    /// Packets (or bytes) charged at enqueue to the egress queue that have no PSN yet.
    queued: u32,
    /// Its VOQ, if it has one (per-port pool).
    voq: Option<u16>,
    /// When the last credit came.
    last_credit: Time,
}

/// Downstream state per (ingress port, destination).
#[derive(Clone, Copy, Debug, Default)]
struct Owed {
    /// Packets forwarded since the last credit, their bytes, and the PSN of the last one.
    count: u32,
    bytes: u64,
    psn: u32,
    /// Packets from that ingress for that destination in this switch's buffer.
    resident: u32,
    /// A switchSYN's PSN to credit through once none of them is resident.
    syn: Option<u32>,
}

/// Floodgate on one switch.
pub struct Floodgate {
    pub cfg: FloodgateConfig,
    win: HashMap<(u16, u32), Win>,
    /// The ports holding a window entry of each destination: a switch-wide window is the sum
    /// of theirs.
    dst_ports: HashMap<u32, Vec<u16>>,
    owed: HashMap<(u16, u32), Owed>,
    /// Destinations in each VOQ, `(port, queue) -> destinations`, and each destination's VOQs
    /// over the switch's ports: the gate and delayCredit questions look only at these
    /// (per-port pool).
    voq_dsts: HashMap<(u16, u16), Vec<u32>>,
    dst_voqs: HashMap<u32, Vec<(u16, u16)>>,
    /// The switch-wide pool (`voq_pool` shared or grouped), built on first use.
    pool: Option<Pool>,
    /// dstPause state (`floodgate/dst_pause.rs`).
    pauses: dst_pause::DstPauses,
    /// Initial window per egress port (packets, or in bytes the bound `initial` says), computed
    /// on first use.
    initial: Vec<u32>,
    timer: Option<Time>,
    /// Destinations whose byte-counter credit to some upstream was due while delayCredit held
    /// it: the next dequeue under the threshold credits every such upstream (`byte_counter`).
    held: std::collections::HashSet<u32>,
    // counters for the outputs
    pub credits_sent: u64,
    pub credits_delayed: u64,
    pub voq_allocs: u64,
    pub voq_hashed: u64,
    pub syns: u64,
    /// Packets of non-incast flows that waited in a VOQ (Fig. 11's isolation: none should).
    pub non_incast_in_voq: u64,
    /// Most VOQs holding packets at once on one port (§6.1 "VOQ usage": at most one).
    pub peak_voqs: u64,
    /// VOQ packets that left while their destination's window was spent: none, but for a VOQ
    /// shared by several destinations (hashed when VOQs run out), which opens while any of them
    /// has window. (Counts what the engine must not let happen: a gate closed by a hook opening
    /// too late.)
    pub sent_without_window: u64,
    /// Every destination that was ever given a VOQ here (§6.1: "the VOQ is exactly used to
    /// buffer packets whose destination host is suffering incast").
    pub voq_destinations: std::collections::BTreeSet<u32>,
}

const SYN: u8 = 1;

/// An ACK or NACK in the data queues (`transport.ack_priority = "data"`, Floodgate-NS3's
/// `ACK_HIGH_PRIO 0`): it goes to the non-incast queue, FIFO with data, and neither spends a
/// window nor earns a credit, as there (`switch-node.cc`: `CheckVOQWin` and the credit counter
/// act on UDP packets only, `ch.l3Prot == 0x11`).
#[inline]
fn is_ack(pkt: &PktMeta) -> bool {
    pkt.flags & crate::packet::tag::ACK != 0
}

/// PSN `a` is after `b` (wrapping).
#[inline]
fn after(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) as i32 > 0
}

impl Floodgate {
    pub fn new(cfg: FloodgateConfig) -> Floodgate {
        Floodgate {
            cfg,
            win: HashMap::new(),
            dst_ports: HashMap::new(),
            owed: HashMap::new(),
            voq_dsts: HashMap::new(),
            dst_voqs: HashMap::new(),
            pool: None,
            pauses: Default::default(),
            initial: Vec::new(),
            timer: None,
            held: Default::default(),
            credits_sent: 0,
            credits_delayed: 0,
            voq_allocs: 0,
            voq_hashed: 0,
            syns: 0,
            non_incast_in_voq: 0,
            peak_voqs: 0,
            sent_without_window: 0,
            voq_destinations: Default::default(),
        }
    }

    /// Whether egress `p` keeps windows: it faces a switch (the last hop faces a host).
    fn windowed(view: &SwitchView, p: u16) -> bool {
        !view.peer(p).is_host()
    }

    /// Whether egress `p` leads up (to a switch of a higher tier).
    fn up(view: &SwitchView, p: u16) -> bool {
        view.peer(p).tier.is_some_and(|t| t > view.info.tier)
    }

    /// The initial window of egress `p` in packets: `BDP_nextHop + C_out x T` (§4.2), or the
    /// ideal design's `m x BDP_nextHop` (§3.2). In bytes, the value the bytes charged must stay
    /// under for one more packet to go: the window less one MTU, plus one (so every test of
    /// `used < initial` reads the same in both units).
    fn initial(&mut self, view: &SwitchView, p: u16) -> u32 {
        if self.initial.is_empty() {
            let mtu = view.info.mtu_bytes as u64;
            let (ideal, m, t, win_m, unit) = (self.cfg.ideal, self.cfg.m, self.cfg.t, self.cfg.win_m, self.cfg.window_unit);
            self.initial = (0..view.nports() as u16)
                .map(|q| {
                    let bytes = if ideal {
                        (view.hop_bdp(q) as f64 * m).ceil() as u64
                    } else {
                        (view.hop_bdp(q) as f64 * win_m).ceil() as u64 + view.rate(q).bytes_in(t)
                    };
                    match unit {
                        WindowUnit::Packets => bytes.div_ceil(mtu.max(1)).max(1) as u32,
                        WindowUnit::Bytes => (bytes + 1).saturating_sub(mtu).max(1).min(u32::MAX as u64 / 2) as u32,
                    }
                })
                .collect();
        }
        self.initial[p as usize]
    }

    /// Packets (bytes with byte windows) charged to this switch's windows and not yet credited,
    /// over every (egress port, destination): zero once every credit has come back, however many
    /// packets were lost.
    pub fn in_flight(&self) -> u64 {
        self.win.values().map(|w| Self::used(w) as u64).sum()
    }

    /// The window left to `dst` by egress `p` in packets (`initial - inflight`, §4.3): the
    /// switch's one window for `dst`, or that port's own with `window = "port"`. In bytes, the
    /// MTU-sized packets it still lets go.
    pub fn window(&mut self, view: &SwitchView, p: u16, dst: u32) -> i64 {
        let init = self.initial(view, p);
        self.left_of(init, p, dst, view.info.mtu_bytes)
    }

    /// `window` given egress `p`'s initial window `init`: in packets, or in bytes the MTU-sized
    /// packets it still lets go.
    fn left_of(&self, init: u32, p: u16, dst: u32, mtu: u32) -> i64 {
        let left = init as i64 - self.used_for(p, dst) as i64;
        match self.cfg.window_unit {
            WindowUnit::Packets => left,
            WindowUnit::Bytes => {
                let mtu = mtu.max(1) as i64;
                (left.max(0) + mtu - 1) / mtu
            }
        }
    }

    /// What a packet spends of a window.
    fn cost(&self, pkt: &PktMeta) -> u32 {
        match self.cfg.window_unit {
            WindowUnit::Packets => 1,
            WindowUnit::Bytes => pkt.size,
        }
    }

    /// Packets charged to the window that egress `p` spends for `dst`: the sum over every port
    /// holding state for `dst` (§7.2's global per-dst window; Floodgate-NS3 sums
    /// `nxt_data_psn - rcv_ack_psn` over ports the same way), or port `p`'s own.
    fn used_for(&self, p: u16, dst: u32) -> u32 {
        match self.cfg.window {
            WindowScope::Port => self.win.get(&(p, dst)).map_or(0, Self::used),
            WindowScope::Switch => self.dst_ports.get(&dst).map_or(0, |ps| ps.iter().map(|&q| self.win.get(&(q, dst)).map_or(0, Self::used)).sum()),
        }
    }

    /// The state of (egress `p`, `dst`), made on first use and listed under `dst`.
    fn win_entry(&mut self, now: Time, p: u16, dst: u32) -> &mut Win {
        let ports = &mut self.dst_ports;
        self.win.entry((p, dst)).or_insert_with(|| {
            ports.entry(dst).or_default().push(p);
            Win { last_credit: now, ..Default::default() }
        })
    }

    /// Open or close every VOQ holding `dst` (on any port) as the window allows: a credit or a
    /// packet sent changes the switch-wide window of every port at once.
    fn refresh_dst(&mut self, now: Time, view: &SwitchView, dst: u32, kick: bool, out: &mut Actions) {
        let Some(vs) = self.dst_voqs.get(&dst).cloned() else { return };
        for (p, q) in vs {
            self.update_gate(now, view, p, q, out);
            if kick {
                out.push(FcAction::Kick { port: p });
            }
        }
    }

    /// Every window not whole and every credit owed, for debugging: `(port, dst, next_psn,
    /// credited, queued)` and `(ingress, dst, count, psn, resident)`.
    #[doc(hidden)]
    pub fn dump(&self) -> String {
        let w: Vec<_> = self.win.iter().filter(|(_, w)| Self::used(w) > 0).map(|(k, w)| (k.0, k.1, w.next_psn, w.credited, w.queued)).collect();
        let o: Vec<_> = self.owed.iter().filter(|(_, o)| o.count > 0 || o.resident > 0 || o.syn.is_some()).map(|(k, o)| (k.0, k.1, o.count, o.psn, o.resident, o.syn)).collect();
        format!("windows {w:?} owed {o:?}")
    }

    /// `inflight` of §4.3 plus what is charged and queued.
    fn used(w: &Win) -> u32 {
        w.next_psn.wrapping_sub(w.credited) + w.queued
    }

    fn voqs(&self, view: &SwitchView) -> usize {
        let max = if self.cfg.ideal { usize::MAX } else { self.cfg.max_voq };
        max.min(view.nqueues().saturating_sub(1))
    }

    fn shared(&self) -> bool {
        self.cfg.voq_pool != VoqPool::PerPort
    }

    /// The switch-wide pool; a middle-layer switch (switches above and below) of a grouped pool
    /// splits it (§4.2).
    fn pool(&mut self, view: &SwitchView) -> &mut Pool {
        if self.pool.is_none() {
            let tier = view.info.tier;
            let tiers: Vec<Option<u8>> = (0..view.nports() as u16).map(|p| view.peer(p).tier).collect();
            let middle = tiers.iter().any(|t| t.is_some_and(|t| t > tier)) && tiers.iter().any(|t| t.is_some_and(|t| t < tier));
            let n = self.voqs(view);
            self.pool = Some(Pool::new(n, middle && self.cfg.voq_pool == VoqPool::Grouped));
        }
        self.pool.as_mut().expect("built")
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
        self.used_for(p, dst) < init
    }

    /// Whether a packet of `size` bytes for `dst` may go by `p` now: its window has room for an
    /// MTU-sized packet, or with `window_fit = "own_size"` for its own bytes (`initial` is the
    /// window less one MTU, plus one, so `used + size <= window` reads `used + size < initial +
    /// mtu`).
    fn fits(&mut self, view: &SwitchView, p: u16, dst: u32, size: u32) -> bool {
        match self.cfg.window_fit {
            WindowFit::Mtu => self.has_window(view, p, dst),
            WindowFit::OwnSize => {
                let init = self.initial(view, p) as u64;
                (self.used_for(p, dst) as u64 + size as u64) < init + view.info.mtu_bytes as u64
            }
        }
    }

    /// `voq_service = "egress_fifo"`: the heads of switch-wide VOQ `v` whose destination's window
    /// fits them join their egress port's non-incast queue, charged to the window as a direct
    /// packet is; the first that does not fit stops the VOQ (one FIFO, voq.cc lines 100-129). A
    /// VOQ left empty is released.
    fn join_ready(&mut self, now: Time, view: &SwitchView, v: u16, out: &mut Actions) {
        while let Some((hp, hd, size)) = self.pool.as_ref().and_then(|pl| pl.head_sized(v)) {
            if Self::windowed(view, hp) {
                if !self.fits(view, hp, hd, size) {
                    return;
                }
                let cost = match self.cfg.window_unit {
                    WindowUnit::Packets => 1,
                    WindowUnit::Bytes => size,
                };
                self.win_entry(now, hp, hd).queued += cost;
                self.arm(now);
            }
            let pl = self.pool.as_mut().expect("read above");
            pl.pop(v, hp, hd);
            out.push(FcAction::Join { port: hp, from: v, to: 0 });
            if pl.is_empty(v) {
                pl.release(v);
                return;
            }
        }
    }

    /// Open or close VOQ `q` of port `p`: open while any destination using it has window.
    fn update_gate(&mut self, now: Time, view: &SwitchView, p: u16, q: u16, out: &mut Actions) {
        let init = self.initial(view, p);
        let open = self.voq_dsts.get(&(p, q)).is_some_and(|ds| ds.iter().any(|&d| self.win.contains_key(&(p, d)) && self.used_for(p, d) < init));
        Self::gate(now, view, p, q, open, out);
    }

    fn gate(now: Time, view: &SwitchView, p: u16, q: u16, open: bool, out: &mut Actions) {
        if open == view.gate_closed(p, q, now) {
            out.push(FcAction::Gate { port: p, queue: q, until: if open { now } else { Time::MAX } });
        }
    }

    /// Switch-wide pool: only the head of VOQ `v` may leave, by its port, while its destination
    /// has window there (§7.3).
    fn update_head(&mut self, now: Time, view: &SwitchView, v: u16, out: &mut Actions) {
        if self.cfg.voq_service == VoqService::EgressFifo {
            return self.join_ready(now, view, v, out);
        }
        let Some((hp, hd, size)) = self.pool.as_ref().and_then(|pl| pl.head_sized(v)) else { return };
        let open = !Self::windowed(view, hp) || self.fits(view, hp, hd, size);
        Self::gate(now, view, hp, v, open, out);
        if open {
            out.push(FcAction::Kick { port: hp });
        }
    }

    /// delayCredit (§4.1): credits for `dst` are held back while its VOQs here are long.
    fn delayed(&self, view: &SwitchView, ingress: u16, dst: u32) -> bool {
        self.cfg.delay_credit && (!self.cfg.ideal || self.cfg.ideal_delay_credit) && self.voq_bytes(view, dst) > (view.hop_bdp(ingress) as f64 * self.cfg.thre_credit_bdp) as u64
    }

    /// The ideal design with delayCredit, at a dequeue of `dst` from `ingress`: unless the VOQ
    /// bytes of `dst` hold credits back, every upstream's owed credits for `dst` go back.
    fn release_held(&mut self, ingress: u16, dst: u32, view: &SwitchView, out: &mut Actions) {
        if self.delayed(view, ingress, dst) {
            self.credits_delayed += 1;
            return;
        }
        // by port, not over every (ingress, destination) owed: a switch's ports are few
        for i in 0..view.nports() as u16 {
            if self.owed.get(&(i, dst)).is_some_and(|o| o.count > 0) {
                self.credit(i, dst, out);
            }
        }
    }

    /// Credit every upstream owed at least `bytes` for `dst` whose credits are not delayed;
    /// whether one was left delayed.
    fn credit_upstreams_owed(&mut self, dst: u32, bytes: u64, view: &SwitchView, out: &mut Actions) -> bool {
        let mut left = false;
        for i in 0..view.nports() as u16 {
            if self.owed.get(&(i, dst)).is_some_and(|o| o.bytes >= bytes) {
                if self.delayed(view, i, dst) {
                    left = true;
                } else {
                    self.credit(i, dst, out);
                }
            }
        }
        left
    }

    /// Credit upstream `ingress` for everything of `dst` forwarded since its last credit.
    fn credit(&mut self, ingress: u16, dst: u32, out: &mut Actions) {
        let o = self.owed.get_mut(&(ingress, dst)).expect("owed");
        out.push(FcAction::Send { port: ingress, msg: CtrlMsg::Credit { dst, credits: o.count, psn: o.psn }, by: Origin::Scheme });
        o.count = 0;
        o.bytes = 0;
        self.credits_sent += 1;
    }

    fn arm(&mut self, now: Time) {
        if self.timer.is_none() {
            self.timer = Some(now + self.cfg.t);
        }
    }

    /// Bytes in the VOQs holding `dst` at this switch (a shared VOQ counts whole).
    fn voq_bytes(&self, view: &SwitchView, dst: u32) -> u64 {
        if let Some(pl) = &self.pool {
            return pl.voq_of(dst).map_or(0, |v| (0..view.nports() as u16).map(|p| view.queue_bytes(p, v)).sum());
        }
        self.dst_voqs.get(&dst).map_or(0, |v| v.iter().map(|&(p, q)| view.queue_bytes(p, q)).sum())
    }

    /// Most VOQs in use on one port now (or in the switch-wide pool).
    fn note_voqs(&mut self, view: &SwitchView, p: u16) {
        let n = match &self.pool {
            Some(pl) => pl.in_use(),
            None => (1..=self.voqs(view) as u16).filter(|&q| view.queue_packets(p, q) > 0).count(),
        } as u64;
        self.peak_voqs = self.peak_voqs.max(n);
    }

    /// Classify with the switch-wide pool: a destination with a VOQ stays in it, whatever port.
    fn classify_shared(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        let p = pkt.egress;
        if let Some(v) = self.pool(view).voq_of(pkt.dst) {
            return v;
        }
        if !Self::windowed(view, p) || self.fits(view, p, pkt.dst, pkt.size) {
            return 0;
        }
        let up = Self::up(view, p);
        let (v, free) = self.pool(view).alloc(pkt.dst, up, |d| mix(&[d as u64, 0xF10D]));
        self.voq_destinations.insert(pkt.dst);
        if free {
            self.voq_allocs += 1;
        } else {
            self.voq_hashed += 1;
        }
        self.win_entry(now, p, pkt.dst);
        v
    }

    /// Charge a packet leaving by windowed egress `p` (it takes its PSN now); whether it had
    /// window state.
    fn charge_sent(&mut self, pkt: &PktMeta) -> bool {
        let cost = self.cost(pkt);
        let Some(w) = self.win.get_mut(&(pkt.egress, pkt.dst)) else { return false };
        if pkt.queue == 0 {
            w.queued = w.queued.saturating_sub(cost);
        }
        w.next_psn = w.next_psn.wrapping_add(cost);
        true
    }

    /// The downstream half at dequeue: what came from an upstream switch is owed a credit; the
    /// ideal design credits it at once (§3.2 "immediately generates a credit packet").
    fn owe(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        if view.peer(pkt.ingress).is_host() {
            return;
        }
        let ideal = self.cfg.ideal;
        let o = self.owed.entry((pkt.ingress, pkt.dst)).or_default();
        o.resident = o.resident.saturating_sub(1);
        if ideal {
            if after(pkt.tags.psn, o.psn) {
                o.psn = pkt.tags.psn;
            }
            if self.cfg.ideal_delay_credit && self.cfg.delay_credit {
                o.count += 1;
                self.release_held(pkt.ingress, pkt.dst, view, out);
            } else {
                self.credits_sent += 1;
                out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::Credit { dst: pkt.dst, credits: 1, psn: o.psn }, by: Origin::Scheme });
            }
        } else {
            o.count += 1;
            o.bytes += pkt.size as u64;
            // PSNs only move forward (packets of one ingress may leave by several ports)
            if after(pkt.tags.psn, o.psn) {
                o.psn = pkt.tags.psn;
            }
            if let Some(b) = self.cfg.byte_counter {
                let due = o.bytes >= b;
                if due || self.held.contains(&pkt.dst) {
                    if self.delayed(view, pkt.ingress, pkt.dst) {
                        if due {
                            self.held.insert(pkt.dst);
                        }
                    } else {
                        let held = self.held.remove(&pkt.dst);
                        if due {
                            self.credit(pkt.ingress, pkt.dst, out);
                        }
                        // the first dequeue under the threshold credits every upstream owed a
                        // byte counter's worth, not only this packet's (Floodgate-NS3 checks all
                        // upstreams whenever delayed credits are on: switch-node.cc lines 446-458)
                        if held && self.credit_upstreams_owed(pkt.dst, b, view, out) {
                            self.held.insert(pkt.dst);
                        }
                    }
                }
            }
        }
        let o = self.owed.get_mut(&(pkt.ingress, pkt.dst)).expect("made above");
        if o.resident == 0 {
            if let Some(s) = o.syn.take() {
                if after(s, o.psn) {
                    o.psn = s;
                    o.count = o.count.max(1);
                }
            }
        }
        if !ideal || o.count > 0 {
            self.arm(now);
        }
    }
}

impl FlowControl for Floodgate {
    /// §4.2 "Allocate VOQs for incast flows dynamically": a destination with a VOQ stays in it;
    /// else direct while it has window (charged now), else a VOQ.
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        let p = pkt.egress;
        if self.voqs(view) == 0 || is_ack(pkt) {
            return 0;
        }
        if self.shared() {
            return self.classify_shared(now, pkt, view);
        }
        if !Self::windowed(view, p) {
            return 0;
        }
        if let Some(q) = self.win.get(&(p, pkt.dst)).and_then(|w| w.voq) {
            return q;
        }
        // §4.2: a destination with a VOQ at this switch is in incast, whatever port its packet
        // takes; with the switch-wide window its packets by another port queue too rather than
        // overtake those waiting (Floodgate-NS3: direct only while `GetBufferDst(dst) == 0`)
        let queued_elsewhere = self.cfg.window == WindowScope::Switch && self.dst_voqs.contains_key(&pkt.dst);
        if !queued_elsewhere && self.has_window(view, p, pkt.dst) {
            return 0;
        }
        let q = self.alloc_voq(view, p, pkt.dst);
        self.voq_destinations.insert(pkt.dst);
        let w = self.win_entry(now, p, pkt.dst);
        w.voq = Some(q);
        self.voq_dsts.entry((p, q)).or_default().push(pkt.dst);
        self.dst_voqs.entry(pkt.dst).or_default().push((p, q));
        q
    }

    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        if is_ack(pkt) {
            return;
        }
        let p = pkt.egress;
        if !view.peer(pkt.ingress).is_host() {
            self.owed.entry((pkt.ingress, pkt.dst)).or_default().resident += 1;
        }
        if pkt.queue != 0 && !pkt.incast() {
            self.non_incast_in_voq += 1;
        }
        if self.shared() && pkt.queue != 0 {
            // the switch-wide FIFO: behind the head, a packet waits whatever its port
            let v = pkt.queue;
            let head = self.pool(view).push(v, p, pkt.dst, pkt.size);
            if self.cfg.voq_service == VoqService::EgressFifo {
                // its packets leave only by joining the egress FIFO: the queue itself never sends
                Self::gate(now, view, p, v, false, out);
                if head {
                    self.join_ready(now, view, v, out);
                }
            } else if head {
                self.update_head(now, view, v, out);
            } else if self.pool.as_ref().and_then(|pl| pl.head(v)).is_some_and(|(hp, _)| hp != p) {
                Self::gate(now, view, p, v, false, out);
            }
            self.note_voqs(view, p);
        } else if Self::windowed(view, p) {
            if pkt.queue == 0 {
                let cost = self.cost(pkt);
                self.win_entry(now, p, pkt.dst).queued += cost;
                self.arm(now);
            } else {
                // a new VOQ starts closed: its destination has no window
                self.update_gate(now, view, p, pkt.queue, out);
                self.note_voqs(view, p);
            }
        }
        // the ideal design: the first-hop ToR pauses the source host of a destination in incast
        if (self.cfg.dst_pause || self.cfg.ideal) && view.peer(pkt.ingress).is_host() {
            let voq = self.voq_bytes(view, pkt.dst);
            self.pauses.on_enqueue(self.cfg.dst_pause_on, self.cfg.thre_off_bdp, pkt, view, voq, out);
        }
    }

    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        if is_ack(pkt) {
            return;
        }
        self.owe(now, pkt, view, out);
        let p = pkt.egress;
        if self.shared() && pkt.queue != 0 {
            let v = pkt.queue;
            if Self::windowed(view, p) {
                if !self.fits(view, p, pkt.dst, pkt.size) {
                    self.sent_without_window += 1;
                }
                self.charge_sent(pkt);
            }
            let pl = self.pool.as_mut().expect("a VOQ packet came through the pool");
            pl.pop(v, p, pkt.dst);
            if pl.is_empty(v) {
                // the VOQ drained: its destinations go direct again
                pl.release(v);
            } else if pl.head(v).is_some_and(|(hp, _)| hp != p) {
                Self::gate(now, view, p, v, false, out);
            }
            self.update_head(now, view, v, out);
        } else if Self::windowed(view, p) {
            // upstream: the packet takes its PSN; a VOQ packet is charged now
            let init = self.initial(view, p);
            if pkt.queue != 0 && self.used_for(p, pkt.dst) >= init {
                self.sent_without_window += 1;
            }
            if self.charge_sent(pkt) && pkt.queue != 0 && self.used_for(p, pkt.dst) >= init {
                // the window ran out: close the destination's VOQs on every port it spends
                self.refresh_dst(now, view, pkt.dst, false, out);
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
        if (self.cfg.dst_pause || self.cfg.ideal) && self.pauses.any() {
            let voq = self.voq_bytes(view, pkt.dst);
            self.pauses.on_dequeue(self.cfg.dst_pause_on, self.cfg.thre_on_bdp, pkt, view, voq, out);
        }
    }

    /// The PSN the next hop credits back (§4.3).
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, view: &SwitchView) {
        if !is_ack(pkt) && Self::windowed(view, pkt.egress) {
            if let Some(w) = self.win.get(&(pkt.egress, pkt.dst)) {
                pkt.tags.psn = w.next_psn.wrapping_sub(1);
            }
        }
    }

    /// A credit refills the window and wakes the VOQ (§4.2); a switchSYN asks for a credit
    /// through its PSN (§4.3).
    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        match *msg {
            CtrlMsg::Credit { dst, psn, .. } => {
                let Some(w) = self.win.get_mut(&(from, dst)) else { return };
                let through = psn.wrapping_add(1);
                // credits only move forward (a reordered or repeated credit changes nothing)
                if after(through, w.credited) {
                    w.credited = through;
                }
                w.last_credit = now;
                if self.cfg.window == WindowScope::Switch && self.dst_voqs.contains_key(&dst) {
                    // the switch's one window grew: every port's VOQ of `dst` may go on
                    self.refresh_dst(now, view, dst, true, out);
                } else if let Some(q) = w.voq {
                    self.update_gate(now, view, from, q, out);
                    out.push(FcAction::Kick { port: from });
                } else if let Some(v) = self.pool.as_ref().and_then(|pl| pl.voq_of(dst)) {
                    self.update_head(now, view, v, out);
                }
            }
            CtrlMsg::Other { tag: SYN, a: dst, b: psn } => {
                let o = self.owed.entry((from, dst)).or_default();
                if o.resident == 0 {
                    // everything up to `psn` was forwarded or lost on the way: credit it all
                    if after(psn, o.psn) {
                        o.psn = psn;
                    }
                    o.count = o.count.max(1);
                    self.arm(now);
                } else {
                    o.syn = Some(psn);
                }
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
            if self.delayed(view, i, dst) {
                self.credits_delayed += 1;
                continue;
            }
            self.credit(i, dst, out);
        }
        let mut syns: Vec<(u16, u32, u32)> = vec![];
        for (&(p, dst), w) in self.win.iter_mut() {
            if w.next_psn != w.credited && now >= w.last_credit + self.cfg.syn_timeout {
                w.last_credit = now;
                syns.push((p, dst, w.next_psn.wrapping_sub(1)));
            }
        }
        syns.sort_unstable();
        for (p, dst, psn) in syns {
            self.syns += 1;
            out.push(FcAction::Send { port: p, msg: CtrlMsg::Other { tag: SYN, a: dst, b: psn }, by: Origin::Scheme });
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
        for v in self.dst_ports.values_mut() {
            v.retain(|&p| p != port);
        }
        self.dst_ports.retain(|_, v| !v.is_empty());
        self.owed.retain(|&(i, _), _| i != port);
        self.voq_dsts.retain(|&(p, _), _| p != port);
        for v in self.dst_voqs.values_mut() {
            v.retain(|&(p, _)| p != port);
        }
        self.dst_voqs.retain(|_, v| !v.is_empty());
        self.pauses.forget_port(port);
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("floodgate_credits", self.credits_sent));
        out.push(("floodgate_credits_delayed", self.credits_delayed));
        out.push(("floodgate_voq_allocs", self.voq_allocs));
        out.push(("floodgate_voq_hashed", self.voq_hashed));
        out.push(("floodgate_syns", self.syns));
        out.push(("floodgate_dst_pauses", self.pauses.sent));
        out.push(("floodgate_in_flight", self.in_flight()));
        out.push(("floodgate_non_incast_in_voq", self.non_incast_in_voq));
        out.push(("floodgate_peak_voqs", self.peak_voqs));
        out.push(("floodgate_sent_without_window", self.sent_without_window));
    }

    /// The module time series: VOQs holding packets per port (`voqs`; switch-wide with the
    /// shared pool), bytes in them (`voq_bytes`), and the watched destination's window left per
    /// next hop (`window_pkts`, §4.3's `initial - inflight`).
    fn sample(&self, now: Time, view: &SwitchView, out: &mut Samples) {
        let _ = now;
        let n = self.voqs(view) as u16;
        if let Some(pl) = &self.pool {
            out.push((SWITCH_WIDE, "voqs", pl.in_use() as f64));
        }
        for p in 0..view.nports() as u16 {
            if !Self::windowed(view, p) && self.pool.is_none() {
                continue;
            }
            let (mut k, mut b) = (0u32, 0u64);
            for q in 1..=n {
                let x = view.queue_bytes(p, q);
                if x > 0 || view.queue_packets(p, q) > 0 {
                    k += 1;
                    b += x;
                }
            }
            if self.pool.is_none() {
                out.push((p, "voqs", k as f64));
            }
            out.push((p, "voq_bytes", b as f64));
            if let (Some(d), Some(init)) = (self.cfg.watch_dst, self.initial.get(p as usize)) {
                if self.win.contains_key(&(p, d)) {
                    out.push((p, "window_pkts", self.left_of(*init, p, d, view.info.mtu_bytes) as f64));
                }
            }
        }
    }

    fn uses_tags(&self) -> bool {
        true
    }
}

impl crate::registry::Declared for FloodgateConfig {
    const NAME: &'static str = "floodgate";
    const ABOUT: &'static str = "Floodgate: per-destination credit windows and VOQs (Liu et al., CoNEXT 2021, §4)";
    const COUNTERS: &'static [&'static str] = &[
        "floodgate_credits", "floodgate_credits_delayed", "floodgate_voq_allocs", "floodgate_voq_hashed", "floodgate_syns",
        "floodgate_dst_pauses", "floodgate_in_flight", "floodgate_non_incast_in_voq", "floodgate_peak_voqs",
        "floodgate_sent_without_window",
    ];
}

impl super::registry::Scheme for FloodgateConfig {
    /// Queue 0 holds the non-incast traffic, served strictly before the VOQs (§4.2, appendix B).
    fn strict_first_queue(&self) -> bool {
        true
    }
    fn pauses(&self) -> bool {
        self.pfc
    }
    fn one_class(&self) -> bool {
        true
    }
    fn ecn_on_port(&self) -> bool {
        self.ecn_counts_voq
    }
    /// An ACK in the data queues takes queue 0 and neither spends a window nor earns a credit
    /// (Floodgate-NS3's `ACK_HIGH_PRIO 0`).
    fn acks_in_data_queues(&self) -> bool {
        true
    }
    fn validate(&self, net: &super::registry::CheckAt) -> Result<(), String> {
        super::registry::at_least_two_queues(net, "Floodgate", "queue 0 and a VOQ")?;
        FloodgateConfig::validate(self)
    }
    fn build(&self, at: &super::registry::BuildAt) -> super::AnyFc {
        let fg = Floodgate::new(self.clone());
        if self.pfc {
            super::AnyFc::FloodgatePfc(super::with_pfc::under_pfc(fg, at))
        } else {
            super::AnyFc::Floodgate(Box::new(fg))
        }
    }
    /// Its state is per destination and per VOQ, counted with the switch's queues.
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        0
    }
}
