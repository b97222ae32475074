//! The settings of a whole run: the plain network parameters (`crate::params`), each scheme's own
//! table (flow control, congestion control, AQM) and what to record.
//!
//! Why this sits above the models while `params` sits below them: a scheme reads the network's
//! parameters to check and build itself, and `NetConfig` names every scheme. Both halves share one
//! vocabulary: every field is (de)serialised under the name a scenario file gives it (the
//! `serde(rename)`s), so the Python front hands each scenario table over whole instead of
//! renaming field by field. These defaults are the reference: `crate::defaults::defaults_json`
//! publishes them and the Python test suite checks the scenario schema's defaults against them
//! (`tests/test_defaults.py`).

use crate::cc::CcConfig;
use crate::fc::FcConfig;
use crate::fc::pfc::PfcConfig;
use crate::params::{FaultsConfig, HostConfig, RoutingConfig, SwitchConfig};
use crate::time::{Time, TxTimes};
use serde::{Deserialize, Serialize};

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
    pub control: crate::packet::ctrl::ControlConfig,
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
    /// How transmission times are put on the clock, on every link and in the NICs' pacing
    /// (`time::TxTimes`). Left out of the JSON while exact, so scenarios that do not set it keep
    /// their hash.
    #[serde(default, skip_serializing_if = "TxTimes::is_exact")]
    pub tx_time: TxTimes,
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
            tx_time: TxTimes::Exact,
        }
    }
}

impl NetConfig {
    /// What the flow-control scheme checks its parameters against.
    pub fn check_at(&self) -> crate::fc::registry::CheckAt<'_> {
        crate::fc::registry::CheckAt { switch: &self.switch, host: &self.host, pfc: &self.pfc }
    }

    /// The queue-to-priority map of every switch port; the flow-control scheme decides the default.
    pub fn prio_map(&self) -> Vec<u8> {
        if self.switch.queue_prio.is_empty() {
            self.fc.default_prio_map(self.switch.nqueues)
        } else {
            self.switch.queue_prio.clone()
        }
    }
}
