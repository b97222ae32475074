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

/// A busy fabric for whole-run tests: WebSearch (HPCC's CDF) Poisson arrivals at `load` of the
/// host links for `duration`, plus `degree`-to-1 incasts of `flow_bytes` (min, max) flows to a
/// random host every `period`, on a 100 Gb/s leaf-spine of `(hosts_per_tor, tors, spines)`.
pub fn websearch_incastmix(
    shape: (usize, usize, usize),
    load: f64,
    duration: Time,
    degree: usize,
    flow_bytes: (u64, u64),
    period: Time,
    net: NetConfig,
) -> hopsim_core::scenario::Scenario {
    use hopsim_core::scenario::{Background, LoadOn, Scenario, TopologySpec, WorkloadSpec};
    use hopsim_core::workload::arrivals::Arrival;
    use hopsim_core::workload::incast::{IncastSize, IncastSpec, IncastTiming};
    let cdf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/WebSearch_HPCC.txt")).unwrap();
    let mut incast = IncastSpec::new(degree, IncastSize::PerFlowRange { min: flow_bytes.0, max: flow_bytes.1 }, IncastTiming::Period(period));
    incast.dst = None;
    Scenario {
        topology: TopologySpec::LeafSpine(leaf_spine_100g(shape.0, shape.1, shape.2)),
        workload: WorkloadSpec::IncastMix {
            background: Background { cdf, load, load_on: LoadOn::HostLinks, arrival: Arrival::Poisson, start: Time::ZERO, duration, prio: 3, dst: None, rack_size: 0 },
            incast,
        },
        net,
    }
}

pub fn flow(src: u32, dst: u32, size: u64, start: Time) -> FlowSpec {
    FlowSpec { src, dst, size, start, prio: 3, incast: false, dport: 100, sport: 0, pg: 0, rate_cap: None }
}

pub fn run(topo: &Topology, flows: &[FlowSpec], cfg: NetConfig) -> RunStats {
    let mut sim = Simulation::new(topo, flows, cfg).expect("scenario builds");
    sim.run().clone()
}

/// Every byte sent was delivered or dropped, and every flow finished.
pub fn assert_conserved(r: &RunStats) {
    let c = &r.counters;
    assert_eq!(c.data_bytes_sent, c.data_bytes_delivered + c.data_bytes_dropped + c.data_bytes_in_flight, "bytes sent = delivered + dropped + in flight");
    assert_eq!(c.flows_finished, c.flows, "every flow finishes");
}
