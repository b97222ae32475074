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
    /// A flow left the NIC (its sender holds its last ACK, or it moved to another NIC): the NIC
    /// queue `nic_queue` gave it is free again.
    fn flow_left(&mut self, _now: Time, _nic_queue: u16) {}
    fn uses_tags(&self) -> bool {
        false
    }
    /// Whether `stamp` writes anything (so the send path calls it).
    fn stamps(&self) -> bool {
        false
    }
    /// Whether `stamp` writes the upstreamQ tag, which a scheme that reads it at the first hop
    /// needs (`Scheme::reads_upstream_q`).
    fn writes_upstream_q(&self) -> bool {
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
    /// With `per_flow`: the free NIC queues, handed out in turn to starting flows and given back
    /// when they leave, so that two flows of the NIC never share a queue while it has a free one
    /// (the BFC paper's simulator: `available_sending_queues`, qbb-net-device.cc:136-160, taken at
    /// a flow's first packet, :824-827, given back at its last ACK, :653). `None`: the flow id
    /// modulo the gates, where two concurrent flows whose ids are a multiple of the gates apart
    /// share one queue, first in first out.
    pub free: Option<FreeQueues>,
}

/// The NIC queues no flow holds, in the order they are handed out (filled on first use, when the
/// port's gates are known), and how many flows hold each.
#[derive(Clone, Debug, Default)]
pub struct FreeQueues {
    queue: std::collections::VecDeque<u16>,
    holders: Vec<u32>,
}

impl FreeQueues {
    /// The next free queue of `ngates`; the flow id modulo the gates when none is free.
    fn take(&mut self, flow: u32, ngates: usize) -> u16 {
        if self.holders.is_empty() {
            let n = ngates.clamp(1, u16::MAX as usize + 1);
            self.queue.extend(0..n as u16);
            self.holders = vec![0; n];
        }
        let q = self.queue.pop_front().unwrap_or((flow as usize % self.holders.len()) as u16);
        self.holders[q as usize] += 1;
        q
    }
    fn give_back(&mut self, q: u16) {
        if let Some(h) = self.holders.get_mut(q as usize).filter(|h| **h > 0) {
            *h -= 1;
            if *h == 0 {
                self.queue.push_back(q);
            }
        }
    }
}

impl NicFc for TaggingNic {
    fn nic_queue(&mut self, _now: Time, f: &NicFlow, ngates: usize) -> u16 {
        match (&mut self.free, self.per_flow) {
            (Some(free), true) => free.take(f.flow, ngates),
            _ => {
                let key = if self.per_flow { f.flow as usize } else { f.prio as usize };
                (key % ngates.max(1)) as u16
            }
        }
    }
    fn flow_left(&mut self, _now: Time, nic_queue: u16) {
        if let (Some(free), true) = (&mut self.free, self.per_flow) {
            free.give_back(nic_queue);
        }
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
    fn writes_upstream_q(&self) -> bool {
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
    fn flow_left(&mut self, now: Time, nic_queue: u16) {
        nic_dispatch!(self, flow_left, now, nic_queue)
    }
    fn uses_tags(&self) -> bool {
        nic_dispatch!(self, uses_tags,)
    }
    fn stamps(&self) -> bool {
        nic_dispatch!(self, stamps,)
    }
    fn writes_upstream_q(&self) -> bool {
        nic_dispatch!(self, writes_upstream_q,)
    }
}

impl AnyNic {
    /// The host half of the run's scheme.
    pub fn build(cfg: &super::FcConfig) -> AnyNic {
        cfg.nic()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BFC_NS3_NSDI2022's NIC takes a free queue for each starting flow and gives it back at the
    /// flow's last ACK: flows 0 and 1024 of one host get queues of their own; by flow id modulo
    /// the 1,024 gates they share queue 0.
    #[test]
    fn a_free_list_never_puts_two_flows_in_one_nic_queue_where_the_flow_id_does() {
        let f = |flow| NicFlow { flow, ..Default::default() };
        let mut by_id = TaggingNic { per_flow: true, obey_queue_pause: true, free: None };
        assert_eq!((by_id.nic_queue(Time(0), &f(0), 1024), by_id.nic_queue(Time(0), &f(1024), 1024)), (0, 0));
        let mut free = TaggingNic { per_flow: true, obey_queue_pause: true, free: Some(FreeQueues::default()) };
        let (a, b) = (free.nic_queue(Time(0), &f(0), 1024), free.nic_queue(Time(0), &f(1024), 1024));
        assert_ne!(a, b);
        // a queue given back goes to the end of the list: the next flows take the others first
        free.flow_left(Time(1), a);
        let next: Vec<u16> = (0..1022).map(|i| free.nic_queue(Time(2), &f(2000 + i), 1024)).collect();
        assert!(!next.contains(&a) && !next.contains(&b));
        assert_eq!(free.nic_queue(Time(3), &f(5000), 1024), a, "then the one given back");
        // every queue held: the flow id modulo the gates, shared
        assert_eq!(free.nic_queue(Time(4), &f(5001), 1024), (5001 % 1024) as u16);
    }
}

