//! The hosts' transport: packet sizes, the in-flight cap, timers, how ECN marks come back, and
//! the TCP transport's own settings.

use crate::time::Time;
use serde::{Deserialize, Serialize};

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
    pub tcp: Option<TcpConfig>,
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

/// `[transport.tcp]`: the TCP transport's settings (`transport.mode = "tcp"`); their defaults'
/// sources are in `crate::net::tcp`, which runs the transport.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Lower bound of the retransmission timeout.
    pub min_rto: Time,
    /// Retransmission timeout before the first RTT sample.
    pub initial_rto: Time,
    /// Upper bound of the retransmission timeout (and of its backoff).
    pub max_rto: Time,
    /// RFC 6298's clock granularity `G`: the RTO is at least SRTT + G.
    pub clock_granularity: Time,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// ACK every this many in-order segments (1: every segment).
    pub delayed_ack: u32,
    /// Longest an in-order segment waits for its delayed ACK.
    pub delayed_ack_timeout: Time,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            min_rto: Time::from_ms(1000),
            initial_rto: Time::from_ms(1000),
            max_rto: Time::from_ms(60_000),
            clock_granularity: Time::from_ms(1),
            dupack_threshold: 3,
            delayed_ack: 1,
            delayed_ack_timeout: Time::from_ms(200),
        }
    }
}

impl TcpConfig {
    /// Errors name the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if self.min_rto.0 == 0 {
            return Err("transport.tcp.min_rto: must be a positive time".into());
        }
        if self.initial_rto.0 == 0 {
            return Err("transport.tcp.initial_rto: must be a positive time".into());
        }
        if self.max_rto < self.min_rto {
            return Err(format!("transport.tcp.max_rto: {} is below min_rto {}; allowed: at least min_rto", self.max_rto, self.min_rto));
        }
        if self.dupack_threshold == 0 {
            return Err("transport.tcp.dupack_threshold: 0; allowed: 1 or more duplicate ACKs".into());
        }
        if self.delayed_ack == 0 {
            return Err("transport.tcp.delayed_ack: 0; allowed: 1 (an ACK per segment) or more".into());
        }
        if self.delayed_ack > 1 && self.delayed_ack_timeout.0 == 0 {
            return Err("transport.tcp.delayed_ack_timeout: must be a positive time when delayed_ack > 1".into());
        }
        Ok(())
    }

    /// The retransmission timeout a flow starts with, and the longest a stalled flow waits before
    /// its first retransmission (the watchdog's unit).
    pub fn first_rto(&self) -> Time {
        self.initial_rto.max(self.min_rto).min(self.max_rto)
    }
}
