//! `routing.ecmp = "ns3_global"`: every flow crosses the spine ns-3 global routing's tuple picks
//! (`topo::ecmp_ns3`), its priority group moving it, its source port not (8 spines: the tuple's
//! last three bits).

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::params::EcmpHash;
use hopsim_core::stats::record::TraceConfig;
use hopsim_core::topo::ecmp_ns3::ns3_tuple_hash;
use hopsim_core::Time;

#[test]
fn each_flow_crosses_the_spine_its_tuple_gives() {
    let t = leaf_spine_100g(4, 2, 8).build();
    let spine0 = 4 * 2 + 2; // hosts 0-7, ToRs 8-9, spines 10-17
    let flows: Vec<_> = (0..24u16)
        .map(|i| {
            let mut f = flow(i as u32 % 4, 4 + (i as u32 / 4) % 4, 3000, Time::from_us(1 + i as u64));
            f.dport = 40_000 + f.dst as u16;
            f.pg = 180 + 2_731 * i;
            f
        })
        .collect();
    let mut cfg = NetConfig::default();
    cfg.routing.ecmp = EcmpHash::Ns3Global;
    cfg.record.trace = Some(TraceConfig { flows: (0..flows.len() as u32).collect(), ports: vec![] });
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let mut spines = std::collections::BTreeSet::new();
    for (i, f) in flows.iter().enumerate() {
        let seen: std::collections::BTreeSet<u32> =
            (0..r.trace.node.len()).filter(|&k| r.trace.flow[k] == i as u32 && r.trace.node[k] >= spine0).map(|k| r.trace.node[k] - spine0).collect();
        let want = ns3_tuple_hash(f.src, f.dst, f.sport, f.dport, f.pg, false) % 8;
        assert_eq!(seen, [want].into(), "flow {i} (pg {})", f.pg);
        spines.insert(want);
    }
    assert!(spines.len() >= 6, "the priority groups spread the flows: {spines:?}");
}
