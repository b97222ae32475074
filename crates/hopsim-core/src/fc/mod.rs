//! Per-hop flow control: modules that live on a switch, watch its queues and buffer, and send
//! control frames to neighbours (PFC pause/resume today; credits and per-queue pauses later).
//!
//! A module never reaches into the simulator: the engine calls its hooks with `now`, a read-only
//! [`SwitchView`] and an action buffer, then carries out the actions (sending frames, arming the
//! module's single timer). A new scheme is one file, one arm of [`AnyFc`], and unit tests that call
//! its hooks with hand-made inputs.

pub mod capfc;
pub mod pfc;
pub mod ppfc;
#[cfg(test)]
mod test_switch;

use crate::net::mmu::Mmu;
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// What a hook sees of a packet. Ports are the switch's local port indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PktMeta {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Traffic class (PFC priority) the packet belongs to.
    pub prio: u8,
    /// Local port the packet arrived on (its upstream neighbour).
    pub ingress: u16,
    /// Local port it leaves by.
    pub egress: u16,
    /// Egress queue it sits in.
    pub queue: u8,
}

/// Read-only state of the switch a module runs on.
pub struct SwitchView<'a> {
    pub node: u32,
    pub mmu: &'a Mmu,
    /// Line rate of each local port.
    pub port_rate: &'a [Rate],
    /// Data queues per egress port.
    pub nqueues: usize,
}

/// A control message a switch sends to a neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FcMsg {
    /// IEEE 802.1Qbb PFC frame for one priority: pause for `quanta` x 512 bit times of the link;
    /// 0 resumes.
    Pfc { prio: u8, quanta: u16 },
}

/// What a module asks the engine to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FcAction {
    /// Send `msg` out of local port `port` to the neighbour on that link.
    Send { port: u16, msg: FcMsg },
}

pub type Actions = Vec<FcAction>;

/// The hooks of a per-hop flow-control module; every hook has a no-op default.
pub trait FlowControl {
    /// Choose the egress queue of a packet (static mapping by priority unless the scheme
    /// classifies, as BFC, FlowSail and Floodgate do).
    fn classify(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView) -> u8 {
        let p = pkt.prio as usize;
        (if p < view.nqueues { p } else { p % view.nqueues }) as u8
    }
    /// A packet has been admitted into the buffer and queued.
    fn on_enqueue(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _out: &mut Actions) {}
    /// A packet left its queue to be transmitted.
    fn on_dequeue(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _out: &mut Actions) {}
    /// A packet was dropped at admission.
    fn on_drop(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _out: &mut Actions) {}
    /// A control frame from the neighbour on local port `from`.
    fn on_control(&mut self, _now: Time, _from: u16, _msg: &FcMsg, _view: &SwitchView, _out: &mut Actions) {}
    /// The module's timer fired.
    fn on_timer(&mut self, _now: Time, _view: &SwitchView, _out: &mut Actions) {}
    /// When the module next wants `on_timer` (the engine keeps one pending timer per switch).
    fn next_timer(&self) -> Option<Time> {
        None
    }
}

/// The earlier of two optional deadlines (modules that stack timers, e.g. P-PFC over PFC).
pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// PFC pause quanta for a duration at a rate: one quantum is 512 bit times (IEEE 802.1Qbb),
/// rounded up and capped at the 16-bit field.
pub fn quanta_for(d: Time, rate: Rate) -> u16 {
    let q512 = Rate::tx_time(rate, 64); // 512 bits
    let q = d.0.div_ceil(q512.0.max(1));
    q.min(u16::MAX as u64) as u16
}

/// Duration of `quanta` at `rate`.
pub fn quanta_duration(quanta: u16, rate: Rate) -> Time {
    Time(rate.tx_time(64).0 * quanta as u64)
}

/// Which flow-control scheme a switch runs, with its parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(tag = "scheme", rename_all = "lowercase", deny_unknown_fields)]
pub enum FcConfig {
    /// No per-hop flow control: a lossy fabric.
    None,
    #[default]
    Pfc,
    Ppfc(ppfc::PpfcConfig),
    Capfc(capfc::CapfcConfig),
}

impl FcConfig {
    /// Lossless schemes give the MMU headroom; a lossy fabric drops over the threshold.
    pub fn lossless(&self) -> bool {
        !matches!(self, FcConfig::None)
    }
}

/// No flow control: every hook is the default.
#[derive(Clone, Debug, Default)]
pub struct NoFc;
impl FlowControl for NoFc {}

/// Static dispatch over the schemes.
pub enum AnyFc {
    None(NoFc),
    Pfc(pfc::Pfc),
    Ppfc(ppfc::Ppfc),
    Capfc(capfc::Capfc),
}

macro_rules! dispatch {
    ($self:ident, $m:ident, $($a:expr),*) => {
        match $self {
            AnyFc::None(x) => x.$m($($a),*),
            AnyFc::Pfc(x) => x.$m($($a),*),
            AnyFc::Ppfc(x) => x.$m($($a),*),
            AnyFc::Capfc(x) => x.$m($($a),*),
        }
    };
}

impl FlowControl for AnyFc {
    #[inline]
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u8 {
        dispatch!(self, classify, now, pkt, view)
    }
    #[inline]
    fn on_enqueue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_enqueue, now, pkt, view, out)
    }
    #[inline]
    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_dequeue, now, pkt, view, out)
    }
    fn on_drop(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_drop, now, pkt, view, out)
    }
    fn on_control(&mut self, now: Time, from: u16, msg: &FcMsg, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_control, now, from, msg, view, out)
    }
    fn on_timer(&mut self, now: Time, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_timer, now, view, out)
    }
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, next_timer,)
    }
}

impl AnyFc {
    /// Build the module of switch `node` with `nports` ports.
    pub fn build(cfg: &FcConfig, node: u32, nports: usize, nprio: usize, seed: u64, pfc: &pfc::PfcConfig) -> AnyFc {
        match cfg {
            FcConfig::None => AnyFc::None(NoFc),
            FcConfig::Pfc => AnyFc::Pfc(pfc::Pfc::new(pfc.clone(), nports, nprio)),
            FcConfig::Ppfc(c) => AnyFc::Ppfc(ppfc::Ppfc::new(c.clone(), pfc.clone(), node, nports, nprio, seed)),
            FcConfig::Capfc(c) => AnyFc::Capfc(capfc::Capfc::new(c.clone(), pfc.clone(), nports, nprio)),
        }
    }
}
