//! Typed settings of the network under simulation: switches, hosts, schemes, what to record.
//!
//! Every field has a default from the papers or the HPCC ns-3 simulator they build on, named in
//! its doc comment. Units inside: bytes, bits/s (`Rate`), picoseconds (`Time`); the Python front
//! turns human units (`100Gbps`, `1us`, `12MB`) into these and validates ranges.
//!
//! One vocabulary: every field is (de)serialised under the name a scenario file gives it (the
//! `serde(rename)`s below), so the Python front hands each scenario table over whole instead of
//! renaming field by field. The Rust names stay as they are. These defaults are the reference:
//! `crate::defaults::defaults_json` publishes them and the Python test suite checks the
//! scenario schema's defaults against them (`tests/test_defaults.py`).

use crate::cc::CcConfig;
use crate::fc::pfc::PfcConfig;
use crate::fc::FcConfig;
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// RED-style ECN marking on egress queues, applied at dequeue as the HPCC simulator does.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    pub enabled: bool,
    /// Below `kmin` bytes never mark; above `kmax` always; linear up to `pmax` between.
    #[serde(rename = "kmin")]
    pub kmin_bytes: u64,
    #[serde(rename = "kmax")]
    pub kmax_bytes: u64,
    pub pmax: f64,
    /// If set, `kmin`/`kmax` are for this rate and scale linearly with each port's rate (the HPCC
    /// simulator's KMIN_MAP/KMAX_MAP are linear in rate: 100/400 KB at 25G, 400/1600 KB at 100G).
    pub ref_rate: Option<Rate>,
}

/// When the switch decides a packet's ECN mark.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// At dequeue, against the queue the packet leaves behind (the HPCC simulator's
    /// `ShouldSendCN` in `SwitchNode::SwitchNotifyDequeue`).
    #[default]
    Dequeue,
    /// On arrival, against the queue the packet finds (DCTCP §3.1: "an arriving packet is marked
    /// with the CE codepoint if the queue occupancy is greater than K upon its arrival"; ns-3's
    /// RED queue disc marks at enqueue too).
    Enqueue,
}

impl MarkAt {
    pub fn is_dequeue(&self) -> bool {
        *self == MarkAt::Dequeue
    }
}

impl Default for EcnConfig {
    /// HPCC simulator's DCQCN setting at 100 Gb/s: Kmin 400 KB, Kmax 1600 KB, Pmax 0.2.
    fn default() -> Self {
        EcnConfig { enabled: true, kmin_bytes: 400_000, kmax_bytes: 1_600_000, pmax: 0.2, ref_rate: Some(Rate::gbps(100)) }
    }
}

impl EcnConfig {
    /// (kmin, kmax) at a port of rate `r`.
    pub fn thresholds(&self, r: Rate) -> (u64, u64) {
        match self.ref_rate {
            Some(rr) => {
                let s = |k: u64| (k as u128 * r.0 as u128 / rr.0 as u128) as u64;
                (s(self.kmin_bytes), s(self.kmax_bytes))
            }
            None => (self.kmin_bytes, self.kmax_bytes),
        }
    }
}

/// Per-port headroom of a lossless switch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Headroom {
    /// `3 x rate x delay + 3 KB`: the HPCC simulator's 3 x one-way BDP, plus one MTU on each end
    /// for the packet being serialised when the pause is sent and when it arrives, so that even
    /// 1 us links at 40G lose nothing.
    Auto,
    /// `3 x rate x delay` exactly: the HPCC simulator's `third.cc` (`headroom = rate * delay / 8 /
    /// 1e9 * 3`, integer arithmetic, delay in ns), with no allowance for the packets being
    /// serialised, so fast ports with short links may overflow it as they do there.
    Hpcc,
    /// `8 x rate x delay` exactly: Floodgate-NS3's `third.cc` (`bdp = rate * delay / 8 / 1e9 * 2`,
    /// `ConfigHdrm(j, bdp * 4)`, integer arithmetic, delay in ns): 60 KB at 100 Gb/s and 240 KB at
    /// 400 Gb/s over 600 ns links, against 22.5 / 90 KB with `hpcc`. Why it matters: headroom is
    /// taken out of the shared pool before the dynamic threshold divides it, so it sets where
    /// PFC pauses in a Floodgate run (the Web Server incastmix's PFC storm, Table 2).
    Floodgate,
    /// A plain number of bytes, as a scenario writes it (`headroom = "290KB"`).
    #[serde(untagged)]
    Bytes(u64),
}

impl Headroom {
    /// Headroom of one switch port of `rate` whose link has propagation delay `delay`.
    pub fn bytes_for(&self, rate: Rate, delay: Time) -> u64 {
        // both simulators' third.cc: rate * delay(ns) / 8 / 1e9, in integers
        let one_way = |r: Rate| r.0 * (delay.0 / 1000) / 8 / 1_000_000_000;
        match *self {
            Headroom::Auto => 3 * rate.bytes_in(delay) + 3_000,
            Headroom::Hpcc => one_way(rate) * 3,
            Headroom::Floodgate => one_way(rate) * 2 * 4,
            Headroom::Bytes(b) => b,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared buffer per switch (12 MB: the default; HPCC uses 32 MB in its fat-tree).
    /// Named as in a scenario's `[buffer]` table, like the next four fields.
    #[serde(rename = "size")]
    pub buffer_bytes: u64,
    /// Reserved bytes per ingress (port, priority) (HPCC: 4 KB).
    #[serde(rename = "reserve")]
    pub reserve_bytes: u64,
    /// Dynamic threshold factor (HPCC: 1/8).
    pub alpha: f64,
    /// Scale `alpha` per port with its rate as the HPCC simulator's `third.cc` does
    /// (`pfc_a_shift`): a port at the hosts' NIC rate gets `alpha`, and each doubling of the port
    /// rate above it doubles alpha, up to 1 (1/8 at 100G, 1/2 at 400G). Why: a faster port drains
    /// faster, so it may hold a larger share of the free buffer before pausing. Off by default:
    /// the papers give one alpha.
    pub alpha_by_rate: bool,
    /// PFC resume hysteresis (HPCC: 3 KB).
    pub resume_offset: u64,
    /// Departing bytes leave an ingress's headroom first (the HPCC simulator's MMU; see
    /// `MmuConfig::headroom_first`).
    pub headroom_first: bool,
    pub headroom: Headroom,
    /// Data queues per egress port (DESIGN.md default 8). Named as in a scenario's `[queues]`.
    #[serde(rename = "count")]
    pub nqueues: usize,
    /// DRR quantum in bytes (one MTU-sized frame: queues alternate packet by packet).
    pub quantum: u32,
    /// Priority of each data queue (what a PFC frame for that priority pauses); empty: queue q
    /// carries priority q mod 8. The front always writes the map out.
    #[serde(rename = "priority")]
    pub queue_prio: Vec<u8>,
    /// Scheduler among the data queues of every switch port.
    pub scheduler: crate::net::sched::SchedulerConfig,
    /// Whether the fabric is lossless: the MMU gives every port headroom for what is in flight
    /// after a pause, and admits into it. Its own setting, not implied by the scheme (the front's
    /// default follows whether the scheme pauses senders).
    pub lossless: bool,
    pub ecn: EcnConfig,
    /// A scenario's `ecn.mark_at`: when a packet is marked (see `MarkAt`). Beside `ecn`, not in
    /// it, so that `EcnConfig` literals stay as they are; left out of the JSON at its default, so
    /// scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "MarkAt::is_dequeue")]
    pub ecn_mark_at: MarkAt,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 12_000_000,
            reserve_bytes: 4 * 1024,
            alpha: 1.0 / 8.0,
            alpha_by_rate: false,
            resume_offset: 3 * 1024,
            headroom_first: false,
            headroom: Headroom::Auto,
            nqueues: 8,
            quantum: 1500,
            queue_prio: vec![],
            scheduler: Default::default(),
            lossless: true,
            ecn: EcnConfig::default(),
            ecn_mark_at: MarkAt::Dequeue,
        }
    }
}

/// Cap on a flow's bytes in flight.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum WindowConfig {
    /// One bandwidth-delay product of the flow's path (line rate x base RTT), as the papers add.
    Bdp,
    Off,
    /// A plain number of bytes, as a scenario writes it (`window = "64KB"`). Last: serde wants
    /// untagged variants after the named ones.
    #[serde(untagged)]
    Bytes(u64),
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Payload bytes per data packet (HPCC simulator default 1000).
    pub mtu: u32,
    /// Header bytes added to every data packet on the wire.
    #[serde(rename = "header")]
    pub header_bytes: u32,
    /// Wire size of ACK, NACK and CNP packets.
    #[serde(rename = "ack")]
    pub ack_bytes: u32,
    /// The NIC's cap on a flow's bytes in flight. It applies under every congestion control: the
    /// window-based ones (DCTCP, Pulser, ICTCP, HPCC) send within `min(their window, this cap)`,
    /// so `Off` gives plain TCP windows and the default `Bdp` the papers' "1 BDP in flight" variant.
    pub window: WindowConfig,
    /// Retransmission timeout: go back to the last acknowledged byte after this long without
    /// progress (RoCE NICs use milliseconds; lossless fabrics never reach it). 0: no timeout, loss
    /// is repaired by NACKs alone (the HPCC simulator has no RTO).
    pub rto: Time,
    /// Minimum spacing of repeated NACKs for the same expected sequence (HPCC: 500 us).
    pub nack_interval: Time,
    /// At most one CNP per flow per this interval (DCQCN: 50 us).
    pub cnp_interval: Time,
    /// NIC queues (gates on the host port) that the host half of a scheme groups flows into.
    pub nic_queues: usize,
    /// ACKs and NACKs are padded to at least this many wire bytes (Ethernet's minimum frame; the
    /// HPCC simulator pads to 48 B). 0: no padding, `ack` (+ any INT echo) as it is.
    pub ack_min: u32,
    /// An ACK for every this many in-order data packets of a flow, and for its last one (1: every
    /// packet, RoCE's). The BFC paper's simulator acknowledges the 257th packet, the 513th, ...
    /// and the last (`L2AckInterval` 256, nsdifinal.cc:47 and 332; `ReceiverCheckSeq`,
    /// qbb-net-device.cc:1117-1128): `ack_every = 256`. Its ACKs only end flows there (no window).
    pub ack_every: u32,
    /// How a receiver tells the sender of an ECN-marked packet (see `CnpMode`).
    pub cnp: CnpMode,
    /// When a receiver may send a flow's next CNP packet (see `CnpTiming`).
    pub cnp_timing: CnpTiming,
    /// Which class ACKs and NACKs travel in (see `AckPriority`).
    pub ack_priority: AckPriority,
    /// With `ack_priority = "data"`: the NIC holds ACKs while their priority is paused (the HPCC
    /// simulator's `ACK_HIGH_PRIO 0`, whose NIC checks `paused[3]` before its ACK queue). False:
    /// the NIC sends them whatever the pause (its `ACK_HIGH_PRIO 1`, `paused[0]`, never set).
    pub ack_pause_at_nic: bool,
    /// Scale the in-flight cap with the flow's rate: `cap x rate / line rate` (the HPCC
    /// simulator's `VAR_WIN 1`). Why: a flow its congestion control slowed down should not keep a
    /// full line-rate BDP in flight.
    pub window_by_rate: bool,
    /// When the congestion control changes a flow's rate, move the flow's next send time as if
    /// the last packet had been paced at the new rate (the HPCC simulator's `ChangeRate`, which
    /// its HPCC mode calls). Off: the gap set at the last send stands.
    pub repace_on_rate_change: bool,
    /// Pace each flow at its congestion control's rate. Off: pace at line rate and let only
    /// windows limit the flow (the HPCC simulator's `RATE_BOUND 0`, "for test only").
    pub pace_at_rate: bool,
    /// Every host's NIC paces each of its flows at no more than this rate (issue 13: P-PFC
    /// Fig. 9a's per-host sending rates for generated workloads). `None`: no cap. Left out of the
    /// JSON while unset, so scenarios without caps keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_cap: Option<crate::time::Rate>,
    /// Per-host caps, overriding `rate_cap` for the hosts they name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_rate_caps: Vec<HostRateCap>,
    /// `transport.mode = "tcp"`: the TCP transport with these settings (`net::tcp`: cumulative
    /// ACKs, fast retransmit, NewReno recovery, RFC 6298 timer) instead of RoCE's go-back-N.
    /// `None`: RoCE (the default), and then left out of the JSON so scenario hashes stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<crate::net::tcp::TcpConfig>,
}

/// One host's sending-rate cap (`transport.host_rate_caps`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HostRateCap {
    pub host: u32,
    pub rate: crate::time::Rate,
}

impl HostConfig {
    /// The longest a stalled flow waits before its first retransmission: the watchdog's unit.
    pub fn first_rto(&self) -> Time {
        match &self.tcp {
            Some(t) => t.first_rto(),
            None => self.rto,
        }
    }

    /// The cap on a flow from host `src`: the lower of the flow's own and its host's
    /// (`host_rate_caps`, else `rate_cap`).
    pub fn flow_rate_cap(&self, src: u32, own: Option<crate::time::Rate>) -> Option<crate::time::Rate> {
        let host = self.host_rate_caps.iter().rev().find(|c| c.host == src).map(|c| c.rate).or(self.rate_cap);
        match (own, host) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// How receivers signal ECN marks back (RoCE's notification point).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CnpMode {
    /// A separate CNP packet, at most one per flow per `cnp_interval` (DCQCN §3 NP algorithm;
    /// Mellanox NICs).
    #[default]
    Packet,
    /// A flag on the ACK (or NACK) of every marked packet and no CNP packets: the HPCC simulator's
    /// model (`ReceiveUdp` sets `SetCnp()` on the ACK when the data's ECN bits are set). Under
    /// DCQCN the sender reacts to the flag as to a CNP.
    AckFlag,
}

/// When the notification point sends a CNP packet (`cnp = "packet"`), at most one per flow per
/// `cnp_interval` either way.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CnpTiming {
    /// DCQCN §3's NP algorithm: "If a marked packet arrives for a flow, and no CNP has been sent
    /// for the flow in last N microseconds, a CNP is sent immediately". The first marked packet
    /// of a flow gets its CNP at once.
    #[default]
    SinceLast,
    /// The DCQCN authors' ns-3 (bobzhuyb/ns3-rdma, `QbbNetDevice::CheckandSendQCN`), which the
    /// P-PFC paper runs ("an NS3 RDMA simulator [10]"; its PFC frames' fixed 5 us pause time,
    /// Fig. 1b, is ns3-rdma's `PAUSE_TIME 5`): each flow has a clock that starts at its first
    /// data packet and ticks every `cnp_interval`; a tick sends a CNP if a marked packet arrived
    /// since the one before. So a flow's first CNP comes `cnp_interval` after its first packet
    /// (at once only if that packet itself is marked), not at its first mark. Here without timers:
    /// a CNP goes with the first marked packet at or after each tick. While marks keep coming
    /// that is the tick itself (plus the gap to the next marked packet); it differs from ns3-rdma
    /// in that after an unmarked spell the CNP goes at the first mark instead of the tick that
    /// follows it, and that the last window of marks before the queue falls below Kmin gets no CNP.
    FlowClock,
}

/// The class of ACKs and NACKs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum AckPriority {
    /// The strict-priority control queue at every port: never paused, never counted in the
    /// buffer (the HPCC simulator's `ACK_HIGH_PRIO 1`).
    #[default]
    Control,
    /// The data flow's own priority: at switches ACKs queue behind data in its queue, take buffer,
    /// count towards PFC and can be paused; at the NIC they still go first, and wait while that
    /// priority is paused if `ack_pause_at_nic`. The HPCC simulator's switches always do this:
    /// its `third.cc` never sets `SwitchNode`'s `AckHighPrio`, so `ACK_HIGH_PRIO` acts at NICs
    /// only.
    Data,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            mtu: 1000,
            header_bytes: 48,
            ack_bytes: 60,
            window: WindowConfig::Bdp,
            rto: Time::from_ms(1),
            nack_interval: Time::from_us(500),
            cnp_interval: Time::from_us(50),
            nic_queues: 8,
            ack_min: 0,
            ack_every: 1,
            cnp: CnpMode::Packet,
            cnp_timing: CnpTiming::SinceLast,
            ack_priority: AckPriority::Control,
            ack_pause_at_nic: true,
            window_by_rate: false,
            repace_on_rate_change: false,
            pace_at_rate: true,
            tcp: None,
            rate_cap: None,
            host_rate_caps: Vec::new(),
        }
    }
}

/// What to measure beyond the per-flow records, pause log and counters (always kept).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RecordConfig {
    /// Interval of switch- and port-level buffer occupancy samples; `None` = none.
    pub buffer_interval: Option<Time>,
    /// Ports whose queue length is recorded as a time series: (node, local port index).
    pub queue_ports: Vec<(u32, u16)>,
    /// Interval of that time series.
    pub queue_interval: Time,
    /// The HPCC simulator's queue-length histograms (`stats::record`); `None` = off. Left out of
    /// the JSON when off, so scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qlen_monitor: Option<crate::stats::record::QlenMonitorConfig>,
    /// Per-packet switch events of chosen flows and ports (`stats::record`); `None` = off, and
    /// left out of the JSON then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::stats::record::TraceConfig>,
    /// Flows whose congestion window is sampled every `buffer_interval` into the `cwnd` table
    /// (Pulser's Fig. 6); empty = none, and left out of the JSON then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cwnd_flows: Vec<u32>,
    /// Per-packet one-way latency by flow class (`stats::latency`); `None` = off, and left out
    /// of the JSON then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::stats::latency::LatencyConfig>,
}

impl Default for RecordConfig {
    fn default() -> Self {
        RecordConfig {
            buffer_interval: Some(Time::from_us(10)),
            queue_ports: vec![],
            queue_interval: Time::from_us(1),
            qlen_monitor: None,
            trace: None,
            cwnd_flows: vec![],
            latency: None,
        }
    }
}

/// ECMP hash of every switch.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcmpHash {
    /// hopsim's: a mix of (src, dst, flow id, seed), independent per switch.
    #[default]
    Hopsim,
    /// The HPCC simulator's (`SwitchNode::GetOutDev`): MurmurHash3 of (source IP, destination IP,
    /// sport | dport << 16) seeded with the switch's node id, over the next hops in the order its
    /// route computation lists them; addresses and ports as `third.cc` numbers them. Same inputs,
    /// same paths as that simulator, so its runs can be matched flow by flow.
    Hpcc,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub ecmp: EcmpHash,
}

/// The network and its schemes: everything but the topology and the flows.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    pub seed: u64,
    /// A scenario's `[buffer]`, `[queues]` and `[ecn]` tables together.
    pub switch: SwitchConfig,
    /// A scenario's `[transport]` table.
    #[serde(rename = "transport")]
    pub host: HostConfig,
    /// Per-hop flow control on every switch: a scenario's `flow_control.scheme` with the fields
    /// of that scheme's sub-table.
    #[serde(rename = "flow_control")]
    pub fc: FcConfig,
    /// Settings of standard PFC (also the safety net of P-PFC and CaPFC): `flow_control.pfc`.
    pub pfc: PfcConfig,
    /// `congestion_control.algorithm` with the fields of that algorithm's sub-table.
    #[serde(rename = "congestion_control")]
    pub cc: CcConfig,
    /// Marking and telemetry at switch egress beyond ECN (EIN, INT).
    pub aqm: crate::aqm::AqmConfig,
    /// How switches spread flows over equal-cost paths.
    pub routing: RoutingConfig,
    /// Wire sizes of control frames.
    pub control: crate::fc::msg::ControlConfig,
    pub record: RecordConfig,
    /// Stop at this time even if flows are unfinished (long-lived flows need it).
    #[serde(rename = "duration")]
    pub stop_time: Option<Time>,
    /// Stop a run that delivered no data for this long while flows are unfinished (the watchdog,
    /// `watchdog.rs`); `None`: ten RTOs plus a hundred of the largest base RTT; `Time::MAX`:
    /// never. Left out of the JSON when `None`, so scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_timeout: Option<Time>,
    /// Faults in the simulated network: random loss and links going down and up (`faults.rs`).
    /// Left out of the JSON while off, so scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "FaultsConfig::is_off")]
    pub faults: FaultsConfig,
}

/// A scenario's `[faults]` table: random loss on links and link failures (`crate::faults`).
/// Off by default: links are lossless and never fail.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct FaultsConfig {
    /// Probability that a packet crossing a link is lost, on every link and in each direction
    /// (the HPCC simulator's ERROR_RATE_PER_LINK: a receive error model per packet). 0: none.
    pub loss_rate: f64,
    /// Links with a loss rate of their own, overriding `loss_rate`.
    pub link_loss: Vec<LinkLoss>,
    /// Links going down and coming back up at given times (the HPCC simulator's LINK_DOWN).
    pub link_events: Vec<LinkEvent>,
    /// Loss rates an HPCC topology file gives its links (`HpccFile::loss`), set by
    /// `Scenario::build`, not by a scenario: they override `loss_rate`, and `link_loss`
    /// overrides them.
    #[serde(skip)]
    pub file_loss: Vec<LinkLoss>,
}

impl FaultsConfig {
    /// Whether no fault is configured (the run is the plain one, bit for bit).
    pub fn is_off(&self) -> bool {
        self.loss_rate == 0.0 && self.link_loss.is_empty() && self.link_events.is_empty() && self.file_loss.is_empty()
    }
}

/// A link named by its two end nodes (every parallel link between them) and its loss rate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkLoss {
    pub link: (u32, u32),
    pub rate: f64,
}

/// Whether a link event takes the link down or brings it back up.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    Down,
    Up,
}

/// At `at`, the link between the two nodes (every parallel link between them) goes to `state`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkEvent {
    pub at: Time,
    pub link: (u32, u32),
    pub state: LinkState,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            seed: 1,
            switch: SwitchConfig::default(),
            host: HostConfig::default(),
            fc: FcConfig::Pfc,
            pfc: PfcConfig::default(),
            cc: CcConfig::None,
            aqm: Default::default(),
            routing: Default::default(),
            control: Default::default(),
            record: RecordConfig::default(),
            stop_time: None,
            stall_timeout: None,
            faults: FaultsConfig::default(),
        }
    }
}

impl SwitchConfig {
    /// The queue-to-priority map of every switch port; `fc` decides the default.
    pub fn prio_map(&self, fc: &crate::fc::FcConfig) -> Vec<u8> {
        if self.queue_prio.is_empty() {
            fc.default_prio_map(self.nqueues)
        } else {
            self.queue_prio.clone()
        }
    }

    /// Errors name the field and the allowed values.
    pub fn validate(&self) -> Result<(), String> {
        let max = crate::net::port::MAX_QUEUES;
        if self.nqueues == 0 || self.nqueues > max {
            return Err(format!("queues.count: {} is out of range; allowed: 1 to {max}", self.nqueues));
        }
        if !self.queue_prio.is_empty() && self.queue_prio.len() != self.nqueues {
            return Err(format!(
                "queues.priority: {} entries for {} queues; give one priority per queue",
                self.queue_prio.len(),
                self.nqueues
            ));
        }
        if let Some(p) = self.queue_prio.iter().find(|&&p| p as usize >= crate::net::port::NPRIO) {
            return Err(format!("queues.priority: {p} is not a priority; allowed: 0 to 7"));
        }
        if self.ecn.ref_rate.is_some_and(|r| r.0 == 0) {
            return Err("ecn.ref_rate: 0 bits/s; allowed: a positive rate or none".into());
        }
        if !(self.ecn.pmax.is_finite() && (0.0..=1.0).contains(&self.ecn.pmax)) {
            return Err(format!("ecn.pmax: {} is not a probability; allowed: 0 to 1", self.ecn.pmax));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(format!("buffer.alpha: {} must be a positive number", self.alpha));
        }
        if let crate::net::sched::SchedulerConfig::Strict { queues } = &self.scheduler {
            if let Some(q) = queues.iter().find(|&&q| q as usize >= self.nqueues) {
                return Err(format!("queues.strict: queue {q} does not exist; allowed: 0 to {}", self.nqueues - 1));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Headroom;
    use crate::time::{Rate, Time};

    /// The Floodgate leaf-spine's ports (100 and 400 Gb/s, 600 ns links), as each simulator's
    /// `third.cc` sizes their headroom.
    #[test]
    fn headroom_per_port_follows_each_simulator() {
        let d = Time::from_ns(600);
        let (host, fabric) = (Rate::gbps(100), Rate::gbps(400));
        assert_eq!(Headroom::Floodgate.bytes_for(host, d), 60_000);
        assert_eq!(Headroom::Floodgate.bytes_for(fabric, d), 240_000);
        assert_eq!(Headroom::Hpcc.bytes_for(host, d), 22_500);
        assert_eq!(Headroom::Hpcc.bytes_for(fabric, d), 90_000);
        assert_eq!(Headroom::Auto.bytes_for(host, d), 25_500);
        assert_eq!(Headroom::Bytes(7).bytes_for(fabric, d), 7);
        // integer arithmetic in ns, as there: 25 Gb/s over 1,001 ns is 3,128 B one way, not 3,128.125
        assert_eq!(Headroom::Floodgate.bytes_for(Rate::gbps(25), Time::from_ns(1001)), 3_128 * 8);
    }
}
