//! Conservation and determinism on a busy fabric: every byte sent is delivered or counted as
//! dropped, every flow finishes, and the same scenario and seed give identical records.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::scenario::{Background, LoadOn, Scenario, TopologySpec, WorkloadSpec};
use hopsim_core::workload::arrivals::Arrival;
use hopsim_core::workload::incast::{IncastSize, IncastSpec, IncastTiming};
use hopsim_core::Time;

fn scenario(fc: FcConfig, seed: u64) -> Scenario {
    let cdf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/WebSearch_HPCC.txt")).unwrap();
    let mut net = NetConfig { fc, seed, cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    net.switch.buffer_bytes = 2_000_000;
    net.switch.lossless = net.fc.pauses();
    let mut incast = IncastSpec::new(12, IncastSize::PerFlowRange { min: 30_000, max: 40_000 }, IncastTiming::Period(Time::from_us(200)));
    incast.dst = None;
    Scenario {
        topology: TopologySpec::LeafSpine(leaf_spine_100g(8, 4, 2)),
        workload: WorkloadSpec::IncastMix {
            background: Background { cdf, load: 0.5, load_on: LoadOn::HostLinks, arrival: Arrival::Poisson, start: Time::ZERO, duration: Time::from_us(1500), prio: 3, dst: None },
            incast,
        },
        net,
    }
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
