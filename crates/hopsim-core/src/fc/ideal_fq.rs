//! Ideal fair queuing (BFC §6.2.1, Goyal et al., NSDI 2022): a queue per flow at every port and no
//! backpressure; the front pairs it with an unlimited buffer. Built from BFC's module with a flow
//! table large enough that flows never share a queue (`bfc::BfcConfig::ideal_fq`).

use super::bfc::{Bfc, BfcConfig};
use super::nic::TaggingNic;
use super::nic::AnyNic;
use super::registry::{BuildAt, Scheme};
use super::AnyFc;
use serde::{Deserialize, Serialize};

/// `flow_control.scheme = "ideal_fq"`: no parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdealFqScheme {}

impl crate::registry::Declared for IdealFqScheme {
    const NAME: &'static str = "ideal_fq";
    const ABOUT: &'static str = "ideal fair queuing: a queue per flow, no backpressure (BFC §6.2.1)";
    const COUNTERS: &'static [&'static str] = <BfcConfig as crate::registry::Declared>::COUNTERS;
}

impl Scheme for IdealFqScheme {
    fn unlimited_buffer(&self) -> bool {
        true
    }
    fn pauses(&self) -> bool {
        false
    }
    fn one_class(&self) -> bool {
        true
    }
    fn nic_gates(&self, _configured: usize) -> usize {
        crate::queues::port::MAX_QUEUES
    }
    fn build(&self, at: &BuildAt) -> AnyFc {
        AnyFc::Bfc(Box::new(Bfc::new(BfcConfig::ideal_fq(), at.node, at.nports, at.upq, at.seed)))
    }
    fn nic(&self) -> AnyNic {
        AnyNic::Tagging(TaggingNic { per_flow: true, obey_queue_pause: false, free: None })
    }
    /// BFC's module, which keys its pause counters by upstreamQ.
    fn reads_upstream_q(&self) -> bool {
        true
    }
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64 {
        BfcConfig::ideal_fq().bytes_per_port(nqueues, upq)
    }
}
