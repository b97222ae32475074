//! No per-hop flow control: a lossy fabric where a full buffer drops (the baseline of the BFC and
//! Floodgate papers' lossy runs). Every hook is the default.

use super::registry::{BuildAt, Scheme};
use super::{AnyFc, FlowControl};
use serde::{Deserialize, Serialize};

/// No flow control: every hook is the default.
#[derive(Clone, Debug, Default)]
pub struct NoFc;
impl FlowControl for NoFc {}

/// `flow_control.scheme = "none"`: no parameters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NoScheme {}

impl crate::registry::Declared for NoScheme {
    const NAME: &'static str = "none";
    const ABOUT: &'static str = "no per-hop flow control (a lossy fabric)";
}

impl Scheme for NoScheme {
    fn pauses(&self) -> bool {
        false
    }
    fn build(&self, _at: &BuildAt) -> AnyFc {
        AnyFc::None(NoFc)
    }
    fn bytes_per_port(&self, _nqueues: u64, _upq: u64) -> u64 {
        0
    }
    fn queues_by_priority(&self) -> bool {
        true
    }
}
