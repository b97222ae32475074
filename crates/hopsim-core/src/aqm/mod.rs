//! Marking and telemetry at switch egress, applied when a packet is dequeued:
//! - `red_ecn`: RED/step ECN marking (DCQCN, DCTCP, Pulser);
//! - `ein`: Pulser's Explicit Incast Notification (Algorithm 1), per egress port;
//! - `int`: HPCC's in-band telemetry records, kept beside the packet slab.
//!
//! [`SwitchAqm`] is the per-switch state of the last two. It is built from the run's congestion
//! control: switches stamp INT only when the senders run HPCC and detect incasts only when they run
//! Pulser, since each is one scheme in two halves. A run with neither pays one predictable branch
//! per dequeue.

pub mod ein;
pub mod int;
pub mod red_ecn;

use crate::cc::CcConfig;
use crate::config::NetConfig;
use crate::time::Rate;

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
    pub fn new(cfg: &NetConfig, port_rate: &[Rate]) -> SwitchAqm {
        let mut a = SwitchAqm::default();
        match &cfg.cc {
            CcConfig::Hpcc(h) => a.int_max_hops = h.int.max_hops as usize,
            CcConfig::Pulser(p) => {
                a.ein = port_rate.iter().map(|&r| ein::EinPort::new(&p.ein, r, cfg.switch.ecn.thresholds(r).0)).collect();
            }
            _ => {}
        }
        a.active = a.int_max_hops > 0 || !a.ein.is_empty();
        a
    }

    /// EIN marks made by this switch so far.
    pub fn ein_marked(&self) -> u64 {
        self.ein.iter().map(|p| p.marked).sum()
    }
}
