//! A lone flow's FCT equals its ideal FCT to the picosecond (slowdown exactly 1), on every
//! topology family: the engine adds no delay of its own.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::topo::{star, FatTree, LeafSpine};
use hopsim_core::{Rate, Time};

fn check(topo: &hopsim_core::topo::Topology, src: u32, dst: u32, sizes: &[u64]) {
    for &size in sizes {
        for cc in [hopsim_core::cc::CcConfig::None] {
            let cfg = NetConfig { cc, ..Default::default() };
            let r = run(topo, &[flow(src, dst, size, Time::from_us(3))], cfg);
            assert_conserved(&r);
            assert_eq!(r.flows.fct_ps[0], r.flows.ideal_fct_ps[0], "size {size}: fct == ideal");
            assert_eq!(r.flows.slowdown[0], 1.0);
            assert_eq!(r.counters.drops, 0);
        }
    }
}

const SIZES: &[u64] = &[1, 1000, 1001, 64_000, 1_000_000, 5_000_000];

#[test]
fn star_path() {
    let t = star(4, Rate::gbps(100), Time::from_us(1));
    check(&t, 0, 3, SIZES);
}

#[test]
fn leaf_spine_path() {
    let ls = LeafSpine {
        hosts_per_tor: 4,
        tors: 4,
        spines: 2,
        host_rate: Rate::gbps(100),
        fabric_rate: Rate::gbps(400),
        host_delay: Time::from_us(1),
        fabric_delay: Time::from_ns(1500),
        links_per_spine: 1,
    };
    let t = ls.build();
    check(&t, 0, 13, SIZES);
}

#[test]
fn fat_tree_path() {
    let t = FatTree::new(4, Rate::gbps(25), Rate::gbps(100), Time::from_us(1)).unwrap().build().unwrap();
    // hosts 0 and 15 are in different pods: a 6-hop path
    check(&t, 0, 15, SIZES);
}

#[test]
fn slower_downlink_is_the_bottleneck() {
    // receiver on a 10G link behind 100G fabric: ideal FCT paces at the slowest hop
    let mut t = star(2, Rate::gbps(100), Time::from_us(1));
    t.links[1].rate = Rate::gbps(10);
    check(&t, 0, 1, &[1, 1500, 100_000, 1_000_000]);
}


/// `tx_time = "whole_ns"` (ns-3's times at its 1 ns resolution): every packet time on every link
/// and in the NIC's pacing is ns-3's, cut down to whole nanoseconds, and the ideal FCT is cut
/// alike, so a lone flow still finishes at its ideal FCT to the picosecond. A flow of equal
/// packets over two equal hops finishes a packet time early per packet plus one (the first
/// packet crosses both hops).
#[test]
fn whole_ns_times_take_off_what_ns3_cuts_from_each_packet_time() {
    use hopsim_core::time::{ns3_tx_time, TxTimes};
    let t = star(4, Rate::gbps(100), Time::from_us(1));
    let base = NetConfig::default();
    let (mtu, wire) = (base.host.mtu as u64, (base.host.mtu + base.host.header_bytes) as u64);
    let k = 50;
    let one = |tx_time| run(&t, &[flow(0, 3, k * mtu, Time::from_us(3))], NetConfig { tx_time, ..base.clone() });
    let (exact, cut) = (one(TxTimes::Exact), one(TxTimes::WholeNs));
    let per = Rate::gbps(100).tx_time(wire).0 - ns3_tx_time(Rate::gbps(100), wire).0;
    assert!(per > 0, "{wire} B at 100 Gb/s is no whole number of nanoseconds");
    assert_eq!(exact.flows.fct_ps[0] - cut.flows.fct_ps[0], (k + 1) * per);
    assert_eq!(cut.flows.fct_ps[0], cut.flows.ideal_fct_ps[0], "a lone flow at its ideal FCT");
    assert_eq!(cut.flows.slowdown[0], 1.0);
    assert_conserved(&cut);
    // and on a fat tree, every size
    let ft = hopsim_core::topo::FatTree::new(4, Rate::gbps(25), Rate::gbps(100), Time::from_us(1)).unwrap().build().unwrap();
    for size in SIZES {
        let r = run(&ft, &[flow(0, 15, *size, Time::from_us(3))], NetConfig { tx_time: TxTimes::WholeNs, ..base.clone() });
        assert_eq!(r.flows.fct_ps[0], r.flows.ideal_fct_ps[0], "size {size}");
    }
}
