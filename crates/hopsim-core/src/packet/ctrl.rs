//! Control frames: the link-local messages flow-control schemes exchange between neighbours.
//!
//! Every kind travels the same way: a module returns `crate::fc::FcAction::Send`, the engine puts a
//! `PktKind::Ctrl` packet of the kind's wire size on the port's strict-priority control queue, the
//! body stays beside the packet slab (`Slab::ctrl`), and at the far end the frame is handed to
//! whatever node is there, switch or host. Link-level pauses (PFC, queue pause) are obeyed by the
//! receiving port itself, as hardware does; every kind is then given to the receiving node's module
//! (`on_control`), which is where credits, destination and flow pauses take effect.

use serde::{Deserialize, Serialize};

/// The body of a control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtrlMsg {
    /// IEEE 802.1Qbb PFC frame for one priority: pause for `quanta` x 512 bit times of the link;
    /// 0 resumes.
    Pfc { prio: u8, quanta: u16 },
    /// Pause (or resume) one egress queue of the receiving port: BFC's per-queue pause of the
    /// upstream queue `upstreamQ` (§3.3). A paused queue stays closed until resumed.
    QueuePause { queue: u16, pause: bool },
    /// The whole pause state of queues `base..base + 64` of the receiving port: bit i set closes
    /// queue `base + i`, clear opens it (BFC's periodic pause-bitmap refresh, §3.3.2). Counted
    /// and logged as a queue pause. `rides`: this part of a port's bitmap travels in the frame of
    /// the part sent just before it (one frame for the whole bitmap), so it takes no wire time of
    /// its own.
    QueueBitmap { base: u16, bits: u64, rides: bool },
    /// Floodgate's credit: `credits` bytes for destination `dst`, acknowledging per-hop PSNs up to
    /// `psn` (§3.1, §4).
    Credit { dst: u32, credits: u32, psn: u32 },
    /// Pause (or resume) every packet for destination `dst` (Floodgate's ideal design, dstPause).
    DstPause { dst: u32, pause: bool },
    /// Pause (or resume) one flow (FlowSail's PAUSE/RESUME carrying the FID, §III-C).
    FlowPause { flow: u32, pause: bool },
    /// Room for a scheme's own kind: a tag and two words it interprets itself.
    Other { tag: u8, a: u32, b: u32 },
}

impl Default for CtrlMsg {
    fn default() -> Self {
        CtrlMsg::Pfc { prio: 0, quanta: 0 }
    }
}

/// The kinds, for wire sizes, logs and byte counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CtrlKind {
    Pfc = 0,
    QueuePause = 1,
    Credit = 2,
    DstPause = 3,
    FlowPause = 4,
    Other = 5,
}

impl CtrlKind {
    pub const ALL: [CtrlKind; 6] =
        [CtrlKind::Pfc, CtrlKind::QueuePause, CtrlKind::Credit, CtrlKind::DstPause, CtrlKind::FlowPause, CtrlKind::Other];

    pub fn name(self) -> &'static str {
        match self {
            CtrlKind::Pfc => "pfc",
            CtrlKind::QueuePause => "queue_pause",
            CtrlKind::Credit => "credit",
            CtrlKind::DstPause => "dst_pause",
            CtrlKind::FlowPause => "flow_pause",
            CtrlKind::Other => "other",
        }
    }
}

impl CtrlMsg {
    /// Bytes on the wire: its kind's frame size, none for a part riding another's frame.
    pub fn wire_bytes(&self, sizes: &ControlConfig) -> u32 {
        match self {
            CtrlMsg::QueueBitmap { rides: true, .. } => 0,
            m => sizes.bytes(m.kind()),
        }
    }

    pub fn kind(&self) -> CtrlKind {
        match self {
            CtrlMsg::Pfc { .. } => CtrlKind::Pfc,
            CtrlMsg::QueuePause { .. } | CtrlMsg::QueueBitmap { .. } => CtrlKind::QueuePause,
            CtrlMsg::Credit { .. } => CtrlKind::Credit,
            CtrlMsg::DstPause { .. } => CtrlKind::DstPause,
            CtrlMsg::FlowPause { .. } => CtrlKind::FlowPause,
            CtrlMsg::Other { .. } => CtrlKind::Other,
        }
    }

    /// The control log's name of the frame: its kind's, except BFC's bitmap refresh, which is
    /// logged as `queue_bitmap` (target = first queue, value = the bits) so that the rows of
    /// kind `queue_pause` are exactly the per-queue pauses (value 1) and resumes (value 0).
    pub fn log_name(&self) -> &'static str {
        match self {
            CtrlMsg::QueueBitmap { .. } => "queue_bitmap",
            m => m.kind().name(),
        }
    }

    /// (what it is about, its value) for the control log: priority and quanta, queue and on/off,
    /// destination and credits, flow and on/off.
    pub fn log_fields(&self) -> (u32, u64) {
        match *self {
            CtrlMsg::Pfc { prio, quanta } => (prio as u32, quanta as u64),
            CtrlMsg::QueuePause { queue, pause } => (queue as u32, pause as u64),
            CtrlMsg::QueueBitmap { base, bits, .. } => (base as u32, bits),
            CtrlMsg::Credit { dst, credits, .. } => (dst, credits as u64),
            CtrlMsg::DstPause { dst, pause } => (dst, pause as u64),
            CtrlMsg::FlowPause { flow, pause } => (flow, pause as u64),
            CtrlMsg::Other { a, b, .. } => (a, b as u64),
        }
    }
}

/// Which mechanism asked for a frame: the pause table and the counters tell them apart (standard
/// PFC's threshold pauses versus P-PFC's predictive ones, CaPFC's, a scheme's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Origin {
    #[default]
    Pfc = 0,
    Ppfc = 1,
    Capfc = 2,
    Scheme = 3,
}

impl Origin {
    pub const ALL: [Origin; 4] = [Origin::Pfc, Origin::Ppfc, Origin::Capfc, Origin::Scheme];

    pub fn name(self) -> &'static str {
        match self {
            Origin::Pfc => "pfc",
            Origin::Ppfc => "ppfc",
            Origin::Capfc => "capfc",
            Origin::Scheme => "scheme",
        }
    }
}

/// Wire size of each kind of control frame, in bytes. 64 B, the minimum Ethernet frame, is what a
/// PFC frame is (IEEE 802.1Qbb) and what the BFC and Floodgate simulators use for their frames.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ControlConfig {
    #[serde(rename = "pfc")]
    pub pfc_bytes: u32,
    #[serde(rename = "queue_pause")]
    pub queue_pause_bytes: u32,
    #[serde(rename = "credit")]
    pub credit_bytes: u32,
    #[serde(rename = "dst_pause")]
    pub dst_pause_bytes: u32,
    #[serde(rename = "flow_pause")]
    pub flow_pause_bytes: u32,
    #[serde(rename = "other")]
    pub other_bytes: u32,
}

impl Default for ControlConfig {
    fn default() -> Self {
        ControlConfig { pfc_bytes: 64, queue_pause_bytes: 64, credit_bytes: 64, dst_pause_bytes: 64, flow_pause_bytes: 64, other_bytes: 64 }
    }
}

impl ControlConfig {
    pub fn bytes(&self, k: CtrlKind) -> u32 {
        match k {
            CtrlKind::Pfc => self.pfc_bytes,
            CtrlKind::QueuePause => self.queue_pause_bytes,
            CtrlKind::Credit => self.credit_bytes,
            CtrlKind::DstPause => self.dst_pause_bytes,
            CtrlKind::FlowPause => self.flow_pause_bytes,
            CtrlKind::Other => self.other_bytes,
        }
    }
}
