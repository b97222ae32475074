//! What a congestion control declares (`Algorithm`). The list of algorithms is `cc/mod.rs`'s
//! `registry!`; `crate::registry` says why it is a list and a macro.

use super::{AnyCc, FlowInfo, TransportNeeds};
use crate::aqm::AqmConfig;
pub use crate::registry::{Declared, Unit};

/// What a congestion control declares beyond its name and table ([`Declared`]), implemented by
/// its configuration type in its own file.
pub trait Algorithm: Declared {
    /// Checks its parameters; errors name the field and what is allowed.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
    /// The sender's state for one flow.
    fn build(&self, info: &FlowInfo) -> AnyCc;
    /// The header sizes and receiver duties it needs. Default: none, and no CNPs.
    fn transport_needs(&self) -> TransportNeeds {
        TransportNeeds::default()
    }
    /// The marking and telemetry at switch egress it is designed with (EIN, INT).
    fn aqm(&self) -> AqmConfig {
        AqmConfig::default()
    }
    /// Whether it runs over the TCP transport (`transport.mode = "tcp"`): window-based ones.
    fn runs_over_tcp(&self) -> bool {
        false
    }
    /// Whether its receiver half advertises windows (ICTCP): the run keeps tags, and its receivers
    /// measure RTTs by timestamps (`net::timestamps`).
    fn receiver_window(&self) -> bool {
        false
    }
    /// Whether the senders are paced by one oracle over the whole network (Pulser's Ideal).
    fn oracle(&self) -> bool {
        false
    }
}
