//! Marking and telemetry at switch egress, applied when a packet is dequeued:
//! - `red_ecn`: RED/step ECN marking (DCQCN, DCTCP, Pulser);
//! - `ein`: Pulser's Explicit Incast Notification (Algorithm 1), per egress port;
//! - INT: HPCC's in-band telemetry records, kept beside the packet slab (`crate::packet::int`).
//!
//! [`SwitchAqm`] is the per-switch state of the last two. Which of them the switches run is its own
//! setting ([`AqmConfig`]), not derived from the congestion control: EIN can be studied under DCTCP,
//! INT collected without HPCC reacting to it. `CcConfig::aqm` (`crate::cc`) gives what each
//! congestion control is designed with (EIN for Pulser, INT for HPCC), which is the front's
//! default. A run with neither pays one predictable branch per dequeue.

pub mod ein;
pub mod red_ecn;

use crate::params::EcnConfig;
use crate::time::Rate;
use serde::{Deserialize, Serialize};

/// What every switch port marks or stamps beyond ECN.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct AqmConfig {
    /// Pulser's Explicit Incast Notification at every switch port (Algorithm 1); `None`: off.
    pub ein: Option<ein::EinConfig>,
    /// HPCC's INT records stamped at every switch egress, at most this many per packet; 0: off.
    pub int_max_hops: u32,
}

impl AqmConfig {
    /// Errors name the setting and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(e) = &self.ein {
            e.validate().map_err(|m| format!("aqm.ein: {m}"))?;
        }
        if self.int_max_hops as usize > crate::packet::int::MAX_INT_HOPS {
            return Err(format!("aqm.int: {} hop records per packet; allowed: 0 (off) to {}", self.int_max_hops, crate::packet::int::MAX_INT_HOPS));
        }
        Ok(())
    }
}

/// Per-switch marking state beyond ECN.
#[derive(Clone, Debug, Default)]
pub struct SwitchAqm {
    /// Anything to do at dequeue (so a plain run tests one flag).
    pub active: bool,
    /// Hop records to stamp per packet (0: INT off).
    pub int_max_hops: usize,
    /// Algorithm 1's state per local port (empty: EIN off).
    pub ein: Vec<ein::EinPort>,
}

impl SwitchAqm {
    /// The state of a switch whose local ports run at `port_rate`.
    pub fn new(cfg: &AqmConfig, ecn: &EcnConfig, port_rate: &[Rate]) -> SwitchAqm {
        let mut a = SwitchAqm { int_max_hops: cfg.int_max_hops as usize, ..Default::default() };
        if let Some(e) = &cfg.ein {
            a.ein = port_rate.iter().map(|&r| ein::EinPort::new(e, r, ecn.thresholds(r).0)).collect();
        }
        a.active = a.int_max_hops > 0 || !a.ein.is_empty();
        a
    }

    /// EIN marks made by this switch so far.
    pub fn ein_marked(&self) -> u64 {
        self.ein.iter().map(|p| p.marked).sum()
    }
}
