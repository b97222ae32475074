//! `record.latency` (stats::latency): a lone flow's packets each take exactly their
//! store-and-forward delay, and the recorder reports it within its stated error; classes follow
//! the flows' incast tags; retransmitted copies are not counted.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::params::{FaultsConfig, LinkLoss};
use hopsim_core::stats::RunStats;
use hopsim_core::stats::latency::{LatencyConfig, REL_ERROR};
use hopsim_core::topo::{star, LeafSpine};
use hopsim_core::{Rate, Time};

fn on() -> NetConfig {
    let mut c = NetConfig::default();
    c.cc = hopsim_core::cc::CcConfig::None;
    c.record.buffer_interval = None;
    c.record.latency = Some(LatencyConfig::default());
    c
}

fn row(r: &RunStats, class: &str) -> usize {
    r.latency.class.iter().position(|c| c == class).unwrap_or_else(|| panic!("no class {class}: {:?}", r.latency.class))
}

fn close(got: u64, exact: u64, what: &str) {
    assert!((got as f64 - exact as f64).abs() <= REL_ERROR * exact as f64, "{what}: {got} ps vs exact {exact} ps");
}

/// Hops (rate, delay) of the path; a packet of `wire` bytes that finds every hop idle takes the
/// sum over hops of its serialisation plus propagation (store and forward).
fn path_delay(hops: &[(Rate, Time)], wire: u64) -> u64 {
    hops.iter().map(|&(r, d)| r.tx_time(wire).0 + d.0).sum()
}

/// Latency of a train of packets of `wires` bytes sent back to back from the first hop (each
/// starts when the one before has left the NIC): at every hop a packet starts when it has arrived
/// whole and the packet before it has left (the tandem-queue recursion of store and forward).
fn train_delays(hops: &[(Rate, Time)], wires: &[u64]) -> Vec<u64> {
    let mut free = vec![0u64; hops.len()]; // when each hop's port is free again
    let mut out = vec![];
    let mut send = 0u64;
    for &w in wires {
        let mut t = send;
        for (h, &(r, d)) in hops.iter().enumerate() {
            let end = t.max(free[h]) + r.tx_time(w).0;
            free[h] = end;
            t = end + d.0;
        }
        out.push(t - send);
        send += hops[0].0.tx_time(w).0;
    }
    out
}

fn check_lone(topo: &hopsim_core::topo::Topology, src: u32, dst: u32, hops: &[(Rate, Time)]) {
    let cfg = on();
    let (mtu, hdr) = (cfg.host.mtu as u64, cfg.host.header_bytes as u64);
    let size = 40 * mtu + 337; // 40 full packets and a short last one
    let r = run(topo, &[flow(src, dst, size, Time::from_us(3))], cfg);
    assert_conserved(&r);
    let mut wires = vec![mtu + hdr; 40];
    wires.push(337 + hdr);
    let exact = train_delays(hops, &wires);
    // a full packet finds every hop idle; the short last one waits behind the one before it
    // at the first hop no faster than the NIC
    let full = path_delay(hops, mtu + hdr);
    assert!(exact[..40].iter().all(|&x| x == full));
    let last = exact[40];
    assert!(last > path_delay(hops, 337 + hdr));
    let i = row(&r, "all");
    let l = &r.latency;
    assert_eq!(l.count[i], 41);
    assert_eq!((l.min_ps[i], l.max_ps[i]), (last, full), "min and max are exact");
    close(l.p50_ps[i], full, "p50");
    close(l.p99_ps[i], full, "p99");
    let mean = (40 * full + last) as f64 / 41.0;
    assert!((l.mean_ps[i] - mean).abs() < 1e-6 * mean, "mean {} vs {mean}", l.mean_ps[i]);
    let j = row(&r, "non-incast");
    assert_eq!((l.count[j], l.max_ps[j]), (41, full));
    assert!(!l.class.iter().any(|c| c == "incast"), "no incast packet, no incast row");
}

#[test]
fn lone_flow_packets_take_their_store_and_forward_delay_on_a_star() {
    let (r, d) = (Rate::gbps(40), Time::from_us(1));
    check_lone(&star(4, r, d), 0, 3, &[(r, d), (r, d)]);
}

#[test]
fn lone_flow_packets_take_their_store_and_forward_delay_across_a_leaf_spine() {
    let ls = LeafSpine {
        hosts_per_tor: 2,
        tors: 2,
        spines: 1,
        host_rate: Rate::gbps(100),
        fabric_rate: Rate::gbps(400),
        host_delay: Time::from_us(1),
        fabric_delay: Time::from_ns(1500),
        links_per_spine: 1,
    };
    let (h, f) = ((ls.host_rate, ls.host_delay), (ls.fabric_rate, ls.fabric_delay));
    // host 0 (ToR 4) to host 3 (ToR 5): host link, ToR-spine, spine-ToR, host link
    check_lone(&ls.build(), 0, 3, &[h, f, f, h]);
}

#[test]
fn classes_follow_incast_tags_and_size_buckets() {
    let t = star(4, Rate::gbps(40), Time::from_us(1));
    let mut cfg = on();
    cfg.record.latency = Some(LatencyConfig { size_edges: vec![10_000], ..Default::default() });
    let mut a = flow(0, 3, 50_000, Time::ZERO);
    a.incast = true;
    let mut b = flow(1, 3, 50_000, Time::ZERO);
    b.incast = true;
    let c = flow(2, 3, 5_000, Time::ZERO);
    let r = run(&t, &[a, b, c], cfg);
    let l = &r.latency;
    let n = |class: &str| l.count[row(&r, class)];
    assert_eq!((n("all"), n("incast"), n("non-incast")), (105, 100, 5));
    assert_eq!((n("incast, size >= 10000"), n("non-incast, size < 10000")), (100, 5));
    // three senders into one 40G port: the incast packets queue, so their tail is above the
    // lone-path delay of a full packet
    let full = path_delay(&[(Rate::gbps(40), Time::from_us(1)); 2], 1048);
    assert!(l.p99_ps[row(&r, "incast")] > full && l.min_ps[row(&r, "all")] <= full);
}

#[test]
fn off_by_default_and_the_run_is_unchanged_by_it() {
    let t = star(4, Rate::gbps(40), Time::from_us(1));
    let fl = [flow(0, 3, 200_000, Time::ZERO), flow(1, 3, 300_000, Time::ZERO)];
    let mut off = on();
    off.record.latency = None;
    let a = run(&t, &fl, off);
    let b = run(&t, &fl, on());
    assert!(a.latency.class.is_empty());
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.counters.events, b.counters.events);
}

#[test]
fn retransmitted_copies_are_not_counted() {
    // a lossy last hop: go-back-N sends packets again (some of them already delivered, arriving
    // a second time); only first copies count, so no more than one per packet of the flow
    let t = star(2, Rate::gbps(100), Time::from_us(1));
    let mut cfg = on();
    cfg.faults = FaultsConfig { link_loss: vec![LinkLoss { link: (2, 1), rate: 0.02 }], ..Default::default() };
    let size = 1_000_000;
    let r = run(&t, &[flow(0, 1, size, Time::ZERO)], cfg);
    let packets = size.div_ceil(1000);
    let lost = r.counters.drops_loss;
    assert!(r.flows.retx_bytes[0] > 0 && lost > 0);
    let n = r.latency.count[row(&r, "all")];
    let copies_in = r.counters.data_bytes_delivered / 1000;
    assert!(copies_in > packets, "the test needs duplicates: {copies_in} copies of {packets} packets arrived");
    assert!(n <= packets && n + lost >= packets, "{n} counted of {packets} packets ({lost} lost)");
}

/// Per-hop queueing times of a train of packets of `wires` bytes sent back to back: at each hop,
/// how long each packet waits from its arrival (whole) until its port is free.
fn train_waits(hops: &[(Rate, Time)], wires: &[u64]) -> Vec<Vec<u64>> {
    let mut free = vec![0u64; hops.len()];
    let mut waits = vec![vec![]; hops.len()];
    let mut send = 0u64;
    for &w in wires {
        let mut t = send;
        for (h, &(r, d)) in hops.iter().enumerate() {
            waits[h].push(free[h].saturating_sub(t));
            let end = t.max(free[h]) + r.tx_time(w).0;
            free[h] = end;
            t = end + d.0;
        }
        send += hops[0].0.tx_time(w).0;
    }
    waits
}

/// `per_hop`: a lone incast-tagged flow from a 100 Gb/s host through 40 Gb/s ToR-spine links
/// queues at its ToR's uplink only (the spine and the last hop get it paced at 40 Gb/s); each
/// hop class's mean and max are exact (the tandem recursion), and nothing is counted for the
/// other tag.
#[test]
fn per_hop_queueing_is_the_wait_at_each_egress_by_hop_class() {
    let ls = LeafSpine {
        hosts_per_tor: 2,
        tors: 2,
        spines: 1,
        host_rate: Rate::gbps(100),
        fabric_rate: Rate::gbps(40),
        host_delay: Time::from_us(1),
        fabric_delay: Time::from_us(1),
        links_per_spine: 1,
    };
    let mut cfg = on();
    cfg.record.latency = Some(LatencyConfig { per_hop: true, ..Default::default() });
    let (mtu, hdr) = (cfg.host.mtu as u64, cfg.host.header_bytes as u64);
    let mut f = flow(0, 3, 30 * mtu, Time::from_us(3));
    f.incast = true;
    let r = run(&ls.build(), &[f], cfg);
    let (h, fb) = ((ls.host_rate, ls.host_delay), (ls.fabric_rate, ls.fabric_delay));
    let waits = train_waits(&[h, fb, fb, h], &vec![mtu + hdr; 30]);
    let l = &r.latency;
    for (hop, class) in [(1, "tor-up"), (2, "agg-down"), (3, "tor-down")] {
        let i = row(&r, &format!("queueing at {class}, incast"));
        let w = &waits[hop];
        let mean = w.iter().sum::<u64>() as f64 / w.len() as f64;
        assert_eq!((l.count[i], l.max_ps[i]), (30, *w.iter().max().unwrap()), "{class}");
        assert!((l.mean_ps[i] - mean).abs() < 1e-6 * mean.max(1.0), "{class}: mean {} vs {mean}", l.mean_ps[i]);
    }
    assert!(l.max_ps[row(&r, "queueing at tor-up, incast")] > 20 * (Rate::gbps(40).tx_time(mtu + hdr).0 - Rate::gbps(100).tx_time(mtu + hdr).0));
    assert_eq!(l.max_ps[row(&r, "queueing at tor-down, incast")], 0);
    assert!(!l.class.iter().any(|c| c.starts_with("queueing at") && c.ends_with("non-incast")));
    // off: no per-hop rows, and the run is the same
    let mut plain = on();
    plain.record.latency = Some(LatencyConfig::default());
    let mut f2 = flow(0, 3, 30 * mtu, Time::from_us(3));
    f2.incast = true;
    let q = run(&ls.build(), &[f2], plain);
    assert!(!q.latency.class.iter().any(|c| c.starts_with("queueing")));
    assert_eq!((q.flows.fct_ps[0], q.counters.events), (r.flows.fct_ps[0], r.counters.events));
}
