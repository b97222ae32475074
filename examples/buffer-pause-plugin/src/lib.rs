//! Buffer pause: a flow-control scheme written outside hopsim's core, as a plugin.
//!
//! A switch whose shared buffer holds more than `limit` bytes sends every neighbour a PFC pause
//! for the priority of the packet that crossed the limit, and a resume once the buffer holds less
//! than `limit / 2`: the switch-wide "global pause" of IEEE 802.3x (Annex 31B, PAUSE frames stop
//! the whole link), here per priority on the switch's whole buffer rather than per ingress
//! (PFC's XOFF, IEEE 802.1Qbb). A coarse baseline: one congested port stops every link.
//!
//! The crate depends on `hopsim-core` alone. It declares its scheme as a built-in one does
//! (`Declared`), implements `External`, and [`register`] makes `flow_control.scheme =
//! "buffer_pause"` selectable: `crates/hopsim-py` calls it when built with its `example-plugin`
//! feature (the default build does), so `hopsim run` and the Python API select it by name
//! (tests/test_plugin.py). docs/writing-a-scheme.md says how to do the same with another crate.

use hopsim_core::fc::plugin::External;
use hopsim_core::fc::registry::{BuildAt, CheckAt, Declared, Unit};
use hopsim_core::fc::{Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, SwitchView};
use hopsim_core::time::Time;
use serde::{Deserialize, Serialize};

/// `[flow_control.buffer_pause]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BufferPauseConfig {
    /// Pause every neighbour above this many bytes in the shared buffer (a scenario writes
    /// `limit = "1MB"`); resume below half of it.
    pub limit: u64,
}

impl Default for BufferPauseConfig {
    fn default() -> Self {
        BufferPauseConfig { limit: 1_000_000 }
    }
}

impl Declared for BufferPauseConfig {
    const NAME: &'static str = "buffer_pause";
    const ABOUT: &'static str = "switch-wide pause above a buffer limit (IEEE 802.3x Annex 31B's global pause, per priority); an out-of-tree plugin";
    const COUNTERS: &'static [&'static str] = &["buffer_pause_pauses", "buffer_pause_resumes"];
    fn units() -> &'static [(&'static str, Unit)] {
        &[("limit", Unit::Bytes)]
    }
}

impl External for BufferPauseConfig {
    fn pauses(&self) -> bool {
        true
    }
    fn module(&self, at: &BuildAt) -> Box<dyn FlowControl + Send> {
        Box::new(BufferPause { limit: self.limit, nports: at.nports as u16, paused: 0, pauses: 0, resumes: 0 })
    }
    fn validate(&self, _net: &CheckAt) -> Result<(), String> {
        if self.limit < 2 {
            return Err(format!("flow_control.buffer_pause.limit: {} bytes; allowed: 2 bytes or more", self.limit));
        }
        Ok(())
    }
}

/// Makes `buffer_pause` selectable by name.
pub fn register() -> Result<(), String> {
    hopsim_core::fc::plugin::register::<BufferPauseConfig>()
}

/// The switch half.
pub struct BufferPause {
    limit: u64,
    nports: u16,
    /// Priorities paused, one bit each.
    paused: u8,
    pauses: u64,
    resumes: u64,
}

impl BufferPause {
    fn send_all(&self, prio: u8, quanta: u16, out: &mut Actions) {
        for port in 0..self.nports {
            out.push(FcAction::Send { port, msg: CtrlMsg::Pfc { prio, quanta }, by: Origin::Scheme });
        }
    }
}

impl FlowControl for BufferPause {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        let bit = 1u8 << (pkt.prio % 8);
        if self.paused & bit == 0 && view.mmu.used() > self.limit {
            self.paused |= bit;
            self.pauses += 1;
            // the longest a PFC frame pauses: the resume below ends it sooner
            self.send_all(pkt.prio, u16::MAX, out);
        }
    }

    fn on_dequeue(&mut self, _now: Time, _pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        if self.paused != 0 && view.mmu.used() < self.limit / 2 {
            for prio in (0..8u8).filter(|p| self.paused & (1 << p) != 0) {
                self.resumes += 1;
                self.send_all(prio, 0, out);
            }
            self.paused = 0;
        }
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("buffer_pause_pauses", self.pauses));
        out.push(("buffer_pause_resumes", self.resumes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hopsim_core::testing::{Sw, PKT, PRIO};

    fn module(limit_pkts: u64) -> BufferPause {
        BufferPause { limit: limit_pkts * PKT as u64, nports: 8, paused: 0, pauses: 0, resumes: 0 }
    }

    #[test]
    fn pauses_every_neighbour_above_the_limit_and_resumes_below_half() {
        let mut sw = Sw::new();
        let mut fc = module(20);
        let mut out = vec![];
        sw.enq(&mut fc, Time::ZERO, 1, 0, 20, &mut out);
        assert!(out.is_empty(), "at the limit: no pause");
        sw.enq(&mut fc, Time::ZERO, 2, 0, 1, &mut out);
        let sent = sw.apply(Time::ZERO, &mut out);
        assert_eq!(sent.len(), 8, "one pause per port");
        assert!(sent.iter().all(|(_, m)| *m == CtrlMsg::Pfc { prio: PRIO, quanta: u16::MAX }));
        // drain to 10 packets (half the limit): still paused; one more leaves it below
        sw.deq(&mut fc, Time::ZERO, 1, 0, 11, &mut out);
        assert!(out.is_empty());
        sw.deq(&mut fc, Time::ZERO, 1, 0, 1, &mut out);
        let sent = sw.apply(Time::ZERO, &mut out);
        assert_eq!(sent.len(), 8);
        assert!(sent.iter().all(|(_, m)| *m == CtrlMsg::Pfc { prio: PRIO, quanta: 0 }));
    }

    #[test]
    fn registers_once_under_its_name() {
        // the registry is process-wide: the first registration stands, a second is refused
        let first = register();
        assert!(first.is_ok() || first.unwrap_err().contains("registered twice"));
        assert!(register().unwrap_err().contains("registered twice"));
        assert!(hopsim_core::fc::plugin::names().contains(&"buffer_pause"));
        let cfg = hopsim_core::fc::FcConfig::from_table(serde_json::json!({"scheme": "buffer_pause", "limit": 5000})).unwrap();
        assert_eq!(cfg.name(), "buffer_pause");
        let e = hopsim_core::fc::FcConfig::from_table(serde_json::json!({"scheme": "buffer_pause", "limits": 1})).unwrap_err();
        assert!(e.contains("flow_control.buffer_pause: unknown field `limits`, expected `limit`"), "{e}");
    }
}
