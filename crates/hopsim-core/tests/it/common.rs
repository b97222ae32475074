//! Small builders shared by the scenario tests.
#![allow(dead_code)]

use hopsim_core::config::NetConfig;
use hopsim_core::stats::RunStats;
use hopsim_core::topo::Topology;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Simulation, Time};

pub fn flow(src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
    FlowSpec { src, dst, size, start, prio: 3, incast: false }
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
