//! Small builders shared by the scenario tests.
#![allow(dead_code)]

use hopsim_core::config::NetConfig;
use hopsim_core::stats::RunStats;
use hopsim_core::topo::Topology;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Simulation, Time};

/// A leaf-spine with every link at 100 Gb/s and 1 us, one link per spine (BFC §6.2's shape).
pub fn leaf_spine_100g(hosts_per_tor: usize, tors: usize, spines: usize) -> hopsim_core::topo::LeafSpine {
    hopsim_core::topo::LeafSpine {
        hosts_per_tor,
        tors,
        spines,
        host_rate: hopsim_core::Rate::gbps(100),
        fabric_rate: hopsim_core::Rate::gbps(100),
        host_delay: Time::from_us(1),
        fabric_delay: Time::from_us(1),
        links_per_spine: 1,
    }
}

pub fn flow(src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
    FlowSpec { src, dst, size, start, prio: 3, incast: false, dport: 100, sport: 0, rate_cap: None }
}

pub fn run(topo: &Topology, flows: &[FlowSpec], cfg: NetConfig) -> RunStats {
    let mut sim = Simulation::new(topo, flows, cfg).expect("scenario builds");
    sim.run().clone()
}

/// Every byte sent was delivered or dropped, and every flow finished.
pub fn assert_conserved(r: &RunStats) {
    let c = &r.counters;
    assert_eq!(c.data_bytes_sent, c.data_bytes_delivered + c.data_bytes_dropped, "bytes sent = delivered + dropped");
    assert_eq!(c.flows_finished, c.flows, "every flow finishes");
}
