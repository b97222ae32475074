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
    /// A plain number of bytes, as a scenario writes it (`headroom = "290KB"`).
    #[serde(untagged)]
    Bytes(u64),
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
    /// PFC resume hysteresis (HPCC: 3 KB).
    pub resume_offset: u64,
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
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 12_000_000,
            reserve_bytes: 4 * 1024,
            alpha: 1.0 / 8.0,
            resume_offset: 3 * 1024,
            headroom: Headroom::Auto,
            nqueues: 8,
            quantum: 1500,
            queue_prio: vec![],
            scheduler: Default::default(),
            lossless: true,
            ecn: EcnConfig::default(),
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
    /// progress (RoCE NICs use milliseconds; lossless fabrics never reach it).
    pub rto: Time,
    /// Minimum spacing of repeated NACKs for the same expected sequence (HPCC: 500 us).
    pub nack_interval: Time,
    /// At most one CNP per flow per this interval (DCQCN: 50 us).
    pub cnp_interval: Time,
    /// NIC queues (gates on the host port) that the host half of a scheme groups flows into.
    pub nic_queues: usize,
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
}

impl Default for RecordConfig {
    fn default() -> Self {
        RecordConfig {
            buffer_interval: Some(Time::from_us(10)),
            queue_ports: vec![],
            queue_interval: Time::from_us(1),
            qlen_monitor: None,
            trace: None,
        }
    }
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
            control: Default::default(),
            record: RecordConfig::default(),
            stop_time: None,
            stall_timeout: None,
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
        if let crate::net::sched::SchedulerConfig::Strict { queues } = &self.scheduler {
            if let Some(q) = queues.iter().find(|&&q| q as usize >= self.nqueues) {
                return Err(format!("queues.strict: queue {q} does not exist; allowed: 0 to {}", self.nqueues - 1));
            }
        }
        Ok(())
    }
}
