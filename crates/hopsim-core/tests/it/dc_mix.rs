//! The `dc_mix` workload (BFC App. E.3, Fig. 20): background traffic inside each of two
//! datacenters and long-lived flows between them, on the `multi_dc` topology.

use hopsim_core::scenario::{Background, LoadOn, Scenario, TopologySpec, WorkloadSpec};
use hopsim_core::topo::MultiDc;
use hopsim_core::workload::arrivals::Arrival;
use hopsim_core::workload::mix::LONG_LIVED_SIZE;
use hopsim_core::workload::FlowSpec;
use hopsim_core::Time;

fn mix(long_flows: u32) -> WorkloadSpec {
    let cdf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/BFC_W4_FacebookHadoop.txt")).unwrap();
    let background = Background {
        cdf,
        load: 0.6,
        load_on: LoadOn::CoreLinks,
        arrival: Arrival::LogNormal { sigma: 2.0 },
        start: Time::from_us(5),
        duration: Time::from_ms(20),
        prio: 3,
        dst: None,
        rack_size: 0,
    };
    WorkloadSpec::DcMix { background, long_flows }
}

#[test]
fn background_stays_inside_each_datacenter_and_long_flows_cross_both_ways() {
    let m = MultiDc::bfc_nsdi22_e3();
    let spec = TopologySpec::MultiDc(m.clone());
    let t = spec.build().unwrap();
    let flows = mix(20).build_on(&spec, &t, 7).unwrap();
    let dc = |h: u32| m.dc_of(h).unwrap();
    let (long, bg): (Vec<&FlowSpec>, Vec<&FlowSpec>) = flows.iter().partition(|f| f.size == LONG_LIVED_SIZE);
    assert!(bg.iter().all(|f| dc(f.src) == dc(f.dst)), "every background flow stays in its datacenter");
    assert!(long.iter().all(|f| dc(f.src) != dc(f.dst) && f.start == Time::from_us(5)));
    for from in 0..2 {
        let mut srcs: Vec<u32> = long.iter().filter(|f| dc(f.src) == from).map(|f| f.src).collect();
        assert_eq!(srcs.len(), 20, "20 long flows out of datacenter {from}");
        srcs.sort();
        srcs.dedup();
        assert_eq!(srcs.len(), 20, "from distinct hosts");
    }
    // each datacenter offers 60% of its own ToR uplinks (32 x 100 Gb/s); the Facebook CDF's
    // heavy tail and sigma = 2 bursts leave 20 ms of arrivals within 15% of that
    for d in 0..2 {
        let bytes: u64 = bg.iter().filter(|f| dc(f.src) == d).map(|f| f.size).sum();
        let load = bytes as f64 * 8.0 / 0.020 / 3.2e12;
        assert!((load - 0.6).abs() < 0.15 * 0.6, "datacenter {d}: offered load {load:.3}");
    }
    // a different seed draws other long-flow pairs
    let other = mix(20).build_on(&spec, &t, 8).unwrap();
    let pairs = |v: &[FlowSpec]| -> Vec<(u32, u32)> {
        v.iter().filter(|f| f.size == LONG_LIVED_SIZE).map(|f| (f.src, f.dst)).collect()
    };
    assert_ne!(pairs(&flows), pairs(&other));
}

#[test]
fn dc_mix_needs_two_datacenters_and_at_most_a_datacenter_of_long_flows() {
    let ls = TopologySpec::LeafSpine(hopsim_core::topo::LeafSpine::bfc_nsdi22());
    let t = ls.build().unwrap();
    let e = mix(1).build_on(&ls, &t, 1).unwrap_err();
    assert!(e.contains("multi_dc"), "{e}");
    let spec = TopologySpec::MultiDc(MultiDc::bfc_nsdi22_e3());
    let t = spec.build().unwrap();
    let e = mix(65).build_on(&spec, &t, 1).unwrap_err();
    assert!(e.contains("workload.long_flows") && e.contains("0 to 64"), "{e}");
    let sc = Scenario { topology: ls, workload: mix(1), net: Default::default() };
    assert!(sc.build().is_err());
}
