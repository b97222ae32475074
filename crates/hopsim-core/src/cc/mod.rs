//! End-host congestion control, one instance per flow at its sender.
//!
//! The shape follows smoltcp's `Controller`: every hook has a no-op default and receives `now`
//! from the caller; no algorithm reads a clock or touches the simulator. The host asks
//! [`CongestionControl::rate`] for the pacing rate and [`CongestionControl::window`] for the cap
//! on bytes in flight. An algorithm that needs timers (DCQCN's rate-increase and alpha timers)
//! reports its next deadline in `next_timer`; the host keeps one pending timer per flow and calls
//! `on_timer` when it is due.

pub mod dcqcn;

use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// What the sender learns from one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckInfo {
    /// Cumulative: every byte below `ack_seq` has been received.
    pub ack_seq: u64,
    /// Bytes this ACK newly acknowledged.
    pub newly_acked: u64,
    /// The data packet it acknowledges carried an ECN mark (ECN-Echo).
    pub ecn_echo: bool,
    /// Round-trip time sample: now minus the send time of the acknowledged packet.
    pub rtt: Time,
}

/// Static facts about the flow's path, given once at the flow's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowInfo {
    /// Rate of the sender's NIC.
    pub line_rate: Rate,
    /// Unloaded round-trip time over the flow's path (one MTU out, one ACK back).
    pub base_rtt: Time,
    /// Payload bytes per packet.
    pub mtu: u32,
}

pub trait CongestionControl {
    /// The flow starts sending.
    fn on_start(&mut self, _now: Time) {}
    /// A data packet of `bytes` wire bytes was handed to the NIC.
    fn on_send(&mut self, _now: Time, _bytes: u32) {}
    fn on_ack(&mut self, _now: Time, _ack: &AckInfo) {}
    /// A go-back-N NACK arrived (loss detected by the receiver).
    fn on_nack(&mut self, _now: Time) {}
    /// A congestion notification packet (DCQCN's CNP) arrived.
    fn on_cnp(&mut self, _now: Time) {}
    /// The retransmission timer expired.
    fn on_timeout(&mut self, _now: Time) {}
    /// The deadline reported by `next_timer` has come.
    fn on_timer(&mut self, _now: Time) {}
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Cap on bytes in flight from congestion control (the host also applies its own cap).
    fn window(&self) -> Option<u64> {
        None
    }
    /// Pacing rate.
    fn rate(&self) -> Rate;
}

/// Which algorithm the senders run, with its parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(tag = "algorithm", rename_all = "lowercase", deny_unknown_fields)]
pub enum CcConfig {
    /// No congestion control: line rate, only flow control acts.
    #[default]
    None,
    Dcqcn(dcqcn::DcqcnConfig),
}

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

/// Static dispatch over the algorithms.
pub enum AnyCc {
    None(LineRate),
    Dcqcn(dcqcn::Dcqcn),
}

macro_rules! dispatch {
    ($self:ident, $m:ident, $($a:expr),*) => {
        match $self {
            AnyCc::None(x) => x.$m($($a),*),
            AnyCc::Dcqcn(x) => x.$m($($a),*),
        }
    };
}

impl CongestionControl for AnyCc {
    fn on_start(&mut self, now: Time) {
        dispatch!(self, on_start, now)
    }
    #[inline]
    fn on_send(&mut self, now: Time, bytes: u32) {
        dispatch!(self, on_send, now, bytes)
    }
    #[inline]
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        dispatch!(self, on_ack, now, ack)
    }
    fn on_nack(&mut self, now: Time) {
        dispatch!(self, on_nack, now)
    }
    fn on_cnp(&mut self, now: Time) {
        dispatch!(self, on_cnp, now)
    }
    fn on_timeout(&mut self, now: Time) {
        dispatch!(self, on_timeout, now)
    }
    fn on_timer(&mut self, now: Time) {
        dispatch!(self, on_timer, now)
    }
    #[inline]
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, next_timer,)
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        dispatch!(self, window,)
    }
    #[inline]
    fn rate(&self) -> Rate {
        dispatch!(self, rate,)
    }
}

impl AnyCc {
    pub fn build(cfg: &CcConfig, info: &FlowInfo) -> AnyCc {
        match cfg {
            CcConfig::None => AnyCc::None(LineRate { rate: info.line_rate }),
            CcConfig::Dcqcn(c) => AnyCc::Dcqcn(dcqcn::Dcqcn::new(c, info)),
        }
    }
}
