//! The host half of a flow-control scheme: what a NIC does about it.
//!
//! The NIC keeps one queue pair per flow (as RoCE NICs do) and groups them into NIC queues, each
//! with a gate on the host's port: a scheme chooses each flow's NIC queue (`nic_queue`), which
//! pause kinds the NIC obeys (PFC by priority, queue pause by NIC queue — BFC at the first hop,
//! destination pause — Floodgate's dstPause, flow pause — FlowSail's FID pause), and the tags it
//! stamps on the data packets it sends (BFC's upstreamQ is the NIC queue). The engine applies the
//! obeyed pauses; `on_control` sees every frame afterwards.

use super::{Actions, CtrlKind, CtrlMsg, PktMeta};
use crate::time::Time;

/// What a host learns about a flow when it starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct NicFlow {
    pub flow: u32,
    pub dst: u32,
    pub prio: u8,
    pub size: u64,
    pub incast: bool,
}

/// The hooks of a NIC-side module; every one has a default: NIC queue = priority, obey every
/// pause, stamp nothing.
pub trait NicFc {
    /// The NIC queue (gate of the host port) a starting flow uses.
    fn nic_queue(&mut self, _now: Time, f: &NicFlow, ngates: usize) -> u16 {
        (f.prio as usize % ngates.max(1)) as u16
    }
    /// Whether the NIC obeys frames of kind `k` (BFC - NIC, App. E.1, ignores queue pauses).
    fn obeys(&self, _k: CtrlKind) -> bool {
        true
    }
    /// Write tags into a data packet the NIC is about to send (`pkt.queue` is its NIC queue).
    fn stamp(&mut self, _now: Time, _pkt: &mut PktMeta) {}
    /// A control frame reached the host (after the obeyed pause took effect).
    fn on_control(&mut self, _now: Time, _msg: &CtrlMsg, _out: &mut Actions) {}
    fn uses_tags(&self) -> bool {
        false
    }
    /// Whether `stamp` writes anything (so the send path calls it).
    fn stamps(&self) -> bool {
        false
    }
}

/// The standard NIC: per-priority queues, obeys everything.
#[derive(Default)]
pub struct StandardNic;
impl NicFc for StandardNic {}

/// A NIC that stamps each data packet's NIC queue as its `upstreamQ`, so that the first switch
/// can pause exactly that queue (`CtrlMsg::QueuePause`): the NIC half of the schemes that pause
/// upstream queues (BFC §3.3, TQP).
pub struct TaggingNic {
    /// A queue per flow (BFC §3.3.2: flow ids modulo the gates give concurrent flows of a host
    /// distinct queues; the host port has as many gates as a port may have, `Scheme::nic_gates`);
    /// else the standard queue per priority.
    pub per_flow: bool,
    /// Whether the NIC obeys queue pauses (BFC - NIC, App. E.1, ignores them); other kinds it
    /// always obeys.
    pub obey_queue_pause: bool,
}
impl NicFc for TaggingNic {
    fn nic_queue(&mut self, _now: Time, f: &NicFlow, ngates: usize) -> u16 {
        let key = if self.per_flow { f.flow as usize } else { f.prio as usize };
        (key % ngates.max(1)) as u16
    }
    fn obeys(&self, k: CtrlKind) -> bool {
        self.obey_queue_pause || k != CtrlKind::QueuePause
    }
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta) {
        pkt.tags.upstream_q = pkt.queue;
    }
    fn uses_tags(&self) -> bool {
        true
    }
    fn stamps(&self) -> bool {
        true
    }
}

pub enum AnyNic {
    Standard(StandardNic),
    Tagging(TaggingNic),
    /// A NIC module from outside the crate (a prototype, a test's scheme).
    Custom(Box<dyn NicFc + Send>),
}

impl Default for AnyNic {
    fn default() -> Self {
        AnyNic::Standard(StandardNic)
    }
}

macro_rules! nic_dispatch {
    ($self:ident, $m:ident, $($a:expr),*) => {
        match $self {
            AnyNic::Standard(x) => x.$m($($a),*),
            AnyNic::Tagging(x) => x.$m($($a),*),
            AnyNic::Custom(x) => x.$m($($a),*),
        }
    };
}

impl NicFc for AnyNic {
    fn nic_queue(&mut self, now: Time, f: &NicFlow, ngates: usize) -> u16 {
        nic_dispatch!(self, nic_queue, now, f, ngates)
    }
    fn obeys(&self, k: CtrlKind) -> bool {
        nic_dispatch!(self, obeys, k)
    }
    #[inline]
    fn stamp(&mut self, now: Time, pkt: &mut PktMeta) {
        nic_dispatch!(self, stamp, now, pkt)
    }
    fn on_control(&mut self, now: Time, msg: &CtrlMsg, out: &mut Actions) {
        nic_dispatch!(self, on_control, now, msg, out)
    }
    fn uses_tags(&self) -> bool {
        nic_dispatch!(self, uses_tags,)
    }
    fn stamps(&self) -> bool {
        nic_dispatch!(self, stamps,)
    }
}

impl AnyNic {
    /// The host half of the run's scheme.
    pub fn build(cfg: &super::FcConfig) -> AnyNic {
        cfg.nic()
    }
}
