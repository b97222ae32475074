//! A scheme from outside the crate whose declaration does not match its halves is refused when a
//! run is built, by name: each of these used to run to the end with exit 0 and wrong results.
//! Its own test binary, because a registered plugin stays in the process-wide list (`fc::plugin`)
//! and the scenario tests must see only the built-in schemes.

use hopsim_core::config::NetConfig;
use hopsim_core::fc::nic::{NicFc, TaggingNic};
use hopsim_core::fc::plugin::{register, External};
use hopsim_core::fc::registry::{BuildAt, Declared};
use hopsim_core::fc::{Actions, CtrlMsg, FcAction, FcConfig, FlowControl, Origin, PktMeta, SwitchView};
use hopsim_core::topo::star;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};
use serde::{Deserialize, Serialize};

/// Pauses the upstream queue a packet came from (its upstreamQ tag) once its egress queue holds
/// more than 20 packets' worth, as TQP does; `NIC`: whether its NIC half writes the tag.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct QueuePauseScheme<const NIC: bool, const DECLARE_ALL: bool> {}

impl<const NIC: bool, const DECLARE_ALL: bool> Declared for QueuePauseScheme<NIC, DECLARE_ALL> {
    const NAME: &'static str = match (NIC, DECLARE_ALL) {
        (false, true) => "upq_without_nic",
        (true, true) => "upq_with_nic",
        (true, false) => "upq_counter_undeclared",
        (false, false) => "upq_both_wrong",
    };
    const ABOUT: &'static str = "a test's upstream-queue pause";
    const COUNTERS: &'static [&'static str] = if DECLARE_ALL { &["upq_pauses", "upq_resumes"] } else { &["upq_pauses", "upq_never_reported"] };
}

struct Module {
    paused: Vec<bool>,
    pauses: u64,
    resumes: u64,
}

impl FlowControl for Module {
    fn on_enqueue(&mut self, _now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        let q = pkt.tags.upstream_q;
        let slot = pkt.ingress as usize * 8 + q as usize % 8;
        if !self.paused[slot] && view.queue_bytes(pkt.egress, pkt.queue) > 20_000 {
            self.paused[slot] = true;
            self.pauses += 1;
            out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::QueuePause { queue: q, pause: true }, by: Origin::Scheme });
        }
    }
    fn on_dequeue(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        if view.queue_bytes(pkt.egress, pkt.queue) < 10_000 {
            for (slot, p) in self.paused.iter_mut().enumerate().filter(|(_, p)| **p) {
                *p = false;
                self.resumes += 1;
                out.push(FcAction::Send { port: (slot / 8) as u16, msg: CtrlMsg::QueuePause { queue: (slot % 8) as u16, pause: false }, by: Origin::Scheme });
            }
        }
    }
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, _view: &SwitchView) {
        pkt.tags.upstream_q = pkt.queue;
    }
    fn uses_tags(&self) -> bool {
        true
    }
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("upq_pauses", self.pauses));
        out.push(("upq_resumes", self.resumes));
    }
}

impl<const NIC: bool, const DECLARE_ALL: bool> External for QueuePauseScheme<NIC, DECLARE_ALL> {
    fn pauses(&self) -> bool {
        false
    }
    fn module(&self, at: &BuildAt) -> Box<dyn FlowControl + Send> {
        Box::new(Module { paused: vec![false; at.nports * 8], pauses: 0, resumes: 0 })
    }
    fn nic(&self) -> Option<Box<dyn NicFc + Send>> {
        NIC.then(|| Box::new(TaggingNic { per_flow: false, obey_queue_pause: true, free: None }) as Box<dyn NicFc + Send>)
    }
    fn reads_upstream_q(&self) -> bool {
        true
    }
}

fn build(name: &str) -> Result<Simulation, String> {
    let fc = FcConfig::from_table(serde_json::json!({ "scheme": name }))?;
    let mut cfg = NetConfig { fc, ..Default::default() };
    cfg.switch.nqueues = 8;
    let t = star(5, Rate::gbps(100), Time::from_us(1));
    // every flow in class 3, so in NIC queue 3 and switch queue 3
    let flows: Vec<FlowSpec> = (1..=4)
        .map(|s| FlowSpec { src: s, dst: 0, size: 100_000, start: Time::ZERO, prio: 3, incast: false, dport: 100, sport: 0, pg: 0, rate_cap: None })
        .collect();
    Simulation::new(&t, &flows, cfg)
}

#[test]
fn a_scheme_that_reads_upstream_q_without_a_nic_that_writes_it_is_refused_by_name() {
    register::<QueuePauseScheme<false, true>>().unwrap();
    register::<QueuePauseScheme<true, true>>().unwrap();
    let err = build("upq_without_nic").err().expect("refused");
    assert!(err.starts_with("flow_control.scheme: `upq_without_nic` reads the upstreamQ tag"), "{err}");
    // the same module with a NIC half that writes the tag runs, and its pauses name queue 3
    let mut sim = build("upq_with_nic").expect("builds");
    let r = sim.run().clone();
    assert!(r.modules["upq_pauses"] > 0, "the incast must pause");
    let c = &r.control;
    let to_hosts: Vec<u32> = (0..c.kind.len()).filter(|&i| c.kind[i] == "queue_pause").map(|i| c.target[i]).collect();
    assert!(!to_hosts.is_empty() && to_hosts.iter().all(|&q| q == 3), "pauses name the NIC queue the data sit in: {to_hosts:?}");
}

#[test]
fn a_scheme_whose_counters_differ_from_its_declaration_is_refused_by_name() {
    register::<QueuePauseScheme<true, false>>().unwrap();
    let err = build("upq_counter_undeclared").err().expect("refused");
    assert_eq!(
        err,
        "flow_control.scheme: `upq_counter_undeclared` reports counters it does not declare (upq_resumes) and declares counters it does not report (upq_never_reported); \
         its `COUNTERS` must list exactly the names its `counters` hook pushes"
    );
}
