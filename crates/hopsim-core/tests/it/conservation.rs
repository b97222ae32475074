//! Conservation and determinism on a busy fabric: every byte sent is delivered or counted as
//! dropped, every flow finishes, and the same scenario and seed give identical records.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::scenario::Scenario;
use hopsim_core::Time;

fn scenario(fc: FcConfig, seed: u64) -> Scenario {
    let mut net = NetConfig { fc, seed, cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    net.switch.buffer_bytes = 2_000_000;
    net.switch.lossless = net.fc.pauses();
    websearch_incastmix((8, 4, 2), 0.5, Time::from_us(1500), 12, (30_000, 40_000), Time::from_us(200), net)
}

#[test]
fn bytes_are_conserved_with_pfc() {
    let r = scenario(FcConfig::Pfc, 1).run().unwrap();
    assert!(r.counters.flows > 50);
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0);
}

#[test]
fn bytes_are_conserved_when_lossy() {
    let r = scenario(FcConfig::None, 1).run().unwrap();
    assert_conserved(&r);
    assert!(r.counters.drops > 0, "a 2 MB lossy fabric under incastmix drops");
    let dropped: u64 = r.flows.dropped_bytes.iter().sum();
    assert_eq!(dropped, r.counters.data_bytes_dropped);
}

#[test]
fn same_seed_same_results() {
    let a = scenario(FcConfig::Pfc, 7).run().unwrap();
    let b = scenario(FcConfig::Pfc, 7).run().unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.pauses, b.pauses);
    assert_eq!(a.counters, b.counters);
    let c = scenario(FcConfig::Pfc, 8).run().unwrap();
    assert_ne!(a.flows, c.flows, "a different seed gives a different run");
}
