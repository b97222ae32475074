//! No congestion control: every flow sends at line rate, and only flow control acts.

use super::registry::{Algorithm, Declared};
use super::{AnyCc, CongestionControl, FlowInfo, TransportNeeds};
use crate::time::Rate;
use serde::{Deserialize, Serialize};

/// Line rate, always.
#[derive(Clone, Debug)]
pub struct LineRate {
    pub rate: Rate,
}
impl CongestionControl for LineRate {
    fn rate(&self) -> Rate {
        self.rate
    }
}

/// `congestion_control.algorithm = "none"`: no parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoAlgorithm {}

impl Declared for NoAlgorithm {
    const NAME: &'static str = "none";
    const ABOUT: &'static str = "no congestion control: line rate";
}

impl Algorithm for NoAlgorithm {
    fn build(&self, info: &FlowInfo) -> AnyCc {
        AnyCc::None(LineRate { rate: info.line_rate })
    }
    /// RoCE receivers have always sent CNPs for marked packets, whatever the sender runs.
    fn transport_needs(&self) -> TransportNeeds {
        TransportNeeds { cnp: true, ..Default::default() }
    }
    fn runs_over_tcp(&self) -> bool {
        true
    }
}
