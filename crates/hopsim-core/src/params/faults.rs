//! Random loss on links and link failures, as a scenario's `[faults]` table gives them.

use crate::time::Time;
use serde::{Deserialize, Serialize};

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
