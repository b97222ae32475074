//! Floodgate's defining behaviours on a leaf-spine under a 24-to-1 incast: the incast waits in
//! VOQs upstream instead of filling the last hop, and a flow to another host behind the same
//! last hop is not blocked by it (PFC pauses the shared spine-to-ToR links and blocks it).

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::floodgate::{Floodgate, FloodgateConfig, VoqPool, VoqService, WindowScope};
use hopsim_core::fc::pfc_tag::PfcTagConfig;
use hopsim_core::fc::{AnyFc, FcConfig};
use hopsim_core::params::{LinkLoss, WindowConfig};
use hopsim_core::queues::sched::SchedulerConfig;
use hopsim_core::stats::{RunStats, StopReason};
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Simulation, Time};

/// 4 ToRs of 8 hosts, 2 spines, 100 Gb/s and 1 us everywhere. Hosts 0-7 are on ToR 0.
fn topo() -> hopsim_core::topo::Topology {
    leaf_spine_100g(8, 4, 2)
    .build()
}

/// 24 senders on ToRs 1-3 send 500 KB each to host 0; host 8 (ToR 1) sends 2 MB to host 1,
/// which shares ToR 0's downlinks from the spines with the incast.
fn flows() -> Vec<FlowSpec> {
    let mut f: Vec<FlowSpec> = (8..32).map(|s| FlowSpec { incast: true, ..flow(s, 0, 500_000, Time::ZERO) }).collect();
    f.push(flow(8, 1, 2_000_000, Time::from_us(5)));
    f
}

fn net(fc: FcConfig) -> NetConfig {
    let mut n = NetConfig { fc, ..Default::default() };
    n.switch.lossless = n.fc.pauses();
    n.switch.scheduler = SchedulerConfig::Strict { queues: vec![0] };
    n.record.buffer_interval = None;
    n
}

fn last_hop_peak(r: &RunStats) -> u64 {
    // ToR 0's port towards host 0: the incast's last hop
    let tor0 = r.ports.node.iter().zip(&r.ports.peer_node).position(|(&n, &p)| p == 0 && n >= 32).unwrap();
    r.ports.peak_queue_bytes[tor0]
}

#[test]
fn incast_waits_upstream_and_does_not_block_other_traffic() {
    let fg = run(&topo(), &flows(), net(FcConfig::Floodgate(FloodgateConfig::default())));
    let pfc = run(&topo(), &flows(), net(FcConfig::Pfc));
    assert_conserved(&fg);
    assert_eq!(fg.counters.drops, 0);
    let victim = flows().len() - 1;
    let slow = |r: &RunStats| r.flows.fct_ps[victim] as f64 / r.flows.ideal_fct_ps[victim] as f64;
    eprintln!(
        "last hop peak: floodgate {} B, pfc {} B; victim slowdown floodgate {:.2}, pfc {:.2}; modules {:?}; max buffer fg {} pfc {}",
        last_hop_peak(&fg),
        last_hop_peak(&pfc),
        slow(&fg),
        slow(&pfc),
        fg.modules,
        fg.counters.max_switch_buffer_bytes,
        pfc.counters.max_switch_buffer_bytes
    );
    assert!(fg.modules["floodgate_voq_allocs"] > 0 && fg.modules["floodgate_credits"] > 0);
    assert!(fg.counters.credit_bytes > 0);
    // the incast is held upstream: the last hop holds a fraction of what it holds under PFC
    assert!(last_hop_peak(&fg) * 3 < last_hop_peak(&pfc), "{} vs {}", last_hop_peak(&fg), last_hop_peak(&pfc));
    // and the other flow behind the same ToR is not blocked by it
    assert!(slow(&fg) < 1.5, "victim slowdown {}", slow(&fg));
    assert!(slow(&pfc) > 2.0 * slow(&fg), "PFC blocks the victim: {}", slow(&pfc));
}

/// §4.3's ideal design: the first-hop ToRs pause the incast's senders per destination (dstPause)
/// once its VOQ passes one hop BDP, so less of the incast sits in the network.
#[test]
fn dst_pause_keeps_the_incast_at_the_senders() {
    let plain = run(&topo(), &flows(), net(FcConfig::Floodgate(FloodgateConfig::default())));
    let ideal = run(&topo(), &flows(), net(FcConfig::Floodgate(FloodgateConfig { dst_pause: true, ..Default::default() })));
    assert_conserved(&ideal);
    assert!(ideal.modules["floodgate_dst_pauses"] > 0);
    assert!(ideal.counters.dst_pause_bytes > 0);
    assert!(
        ideal.counters.max_switch_buffer_bytes < plain.counters.max_switch_buffer_bytes,
        "{} vs {}",
        ideal.counters.max_switch_buffer_bytes,
        plain.counters.max_switch_buffer_bytes
    );
}

/// With PFC underneath, the scheme's queues all carry the data class, so a PFC pause closes the
/// VOQs too and the fabric stays lossless even when the buffer is far too small for the incast.
#[test]
fn pfc_underneath_keeps_it_lossless() {
    let mut n = net(FcConfig::Floodgate(FloodgateConfig { pfc: true, ..Default::default() }));
    n.switch.buffer_bytes = 600_000;
    let r = run(&topo(), &flows(), n);
    assert_conserved(&r);
    assert!(r.counters.pauses_sent > 0, "PFC fired");
    assert_eq!(r.counters.drops, 0);
}

/// Floodgate's modules of a finished simulation, switch by switch.
fn modules(sim: &Simulation) -> Vec<&Floodgate> {
    sim.switches
        .iter()
        .map(|s| match &s.fc {
            AnyFc::Floodgate(f) => &**f,
            AnyFc::FloodgatePfc(w) => &w.inner.0,
            _ => panic!("not floodgate"),
        })
        .collect()
}

/// A tiny deterministic generator for hand-made workloads.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// §6.1 "VOQ usage": on a non-blocking leaf-spine shaped as the paper's (4 ToRs of 4 hosts at
/// 100 Gb/s, one spine at 400 Gb/s, so a window sized for the 400 Gb/s next hop has room for a
/// 100 Gb/s flow),
/// background flows of 1 KB-400 KB between host pairs (each host receiving from one sender at a
/// time, a permutation that changes every 100 us, after the last
/// round's flows are done) mixed with two incasts of 12 x 30-40 MTU into
/// host 0: only the incast destination is ever given a VOQ, and no non-incast packet waits in
/// one, however long its flow.
#[test]
fn only_the_incast_destination_gets_a_voq_in_an_incastmix() {
    let t = hopsim_core::topo::LeafSpine { fabric_rate: hopsim_core::Rate::gbps(400), ..leaf_spine_100g(4, 4, 1) }.build();
    let mut rng = Lcg(7);
    let mut f: Vec<FlowSpec> = vec![];
    for round in 0..8u64 {
        // a random derangement of hosts 1-15
        let mut perm: Vec<u32> = (1..16).collect();
        for i in (1..perm.len()).rev() {
            perm.swap(i, rng.next(i as u64 + 1) as usize);
        }
        for (i, &d) in perm.iter().enumerate() {
            let s = 1 + i as u32;
            let d = if d == s { perm[(i + 1) % perm.len()] } else { d };
            if d == s {
                continue;
            }
            let size = [1_000, 5_000, 20_000, 100_000, 400_000][rng.next(5) as usize];
            f.push(flow(s, d, size, Time::from_us(round * 100)));
        }
    }
    let mut at = 0;
    for (k, start) in [(0u32, 20u64), (1, 150)] {
        for s in 4..16u32 {
            let size = 1460 * (30 + ((s + k) % 11) as u64);
            f.push(FlowSpec { incast: true, ..flow(s, 0, size, Time::from_us(start)) });
            at += 1;
        }
    }
    assert_eq!(at, 24);
    let mut sim = Simulation::new(&t, &f, net(FcConfig::Floodgate(FloodgateConfig::default()))).unwrap();
    let r = sim.run().clone();
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0);
    let dsts: std::collections::BTreeSet<u32> = modules(&sim).iter().flat_map(|m| m.voq_destinations.iter().copied()).collect();
    eprintln!("VOQ destinations {dsts:?}; modules {:?}", r.modules);
    assert!(r.modules["floodgate_voq_allocs"] > 0, "the incast was recognised");
    assert_eq!(dsts, [0].into(), "only the incast destination");
    assert_eq!(r.modules["floodgate_non_incast_in_voq"], 0);
}

/// §4.3 under 10% random loss on the spine 0 -> ToR 0 link, the incast's last switch-to-switch
/// hop (data lost one way, credits and switchSYNs the other): every flow completes, switchSYNs
/// are sent, and once nothing is in flight every window is back to its initial value. A lost
/// packet's window comes back with a later packet's PSN (the hosts' retransmissions cross the
/// link again); a lost last credit only through a switchSYN (without SYNs this test fails; the
/// SYN's own PSN, for lost last packets, is pinned by the unit test
/// `switch_syn_recovers_the_window_of_lost_last_packets`).
#[test]
fn ten_percent_loss_on_one_link_every_flow_completes_and_the_windows_recover() {
    let ls = leaf_spine_100g(8, 4, 2);
    let t = ls.build();
    let mut f = flows();
    // a late flow inside ToR 1 keeps the run going until every credit and SYN has come back
    f.push(flow(8, 9, 10_000, Time::from_ms(40)));
    let fc = FloodgateConfig { syn_timeout: Time::from_us(300), ..Default::default() };
    let mut cfg = net(FcConfig::Floodgate(fc));
    cfg.faults.link_loss = vec![LinkLoss { link: (ls.spine_id(0), ls.tor_id(0)), rate: 0.1 }];
    let mut sim = Simulation::new(&t, &f, cfg).unwrap();
    let r = sim.run().clone();
    eprintln!("lost {}, modules {:?}", r.counters.drops_loss, r.modules);
    assert_conserved(&r);
    assert!(r.counters.drops_loss > 100, "{}", r.counters.drops_loss);
    assert!(r.modules["floodgate_syns"] > 0);
    assert!(r.modules["floodgate_voq_allocs"] > 0, "the windows were used up on the way");
    let per: Vec<u64> = modules(&sim).iter().map(|m| m.in_flight()).collect();
    eprintln!("in flight per switch {per:?}, end {}", r.counters.end_time_ps);
    assert_eq!(r.modules["floodgate_in_flight"], 0, "every window whole again");
    let per: Vec<u64> = modules(&sim).iter().map(|m| m.in_flight()).collect();
    assert_eq!(per, vec![0; per.len()], "end {:?} {}", r.stop.reason, r.counters.end_time_ps);
}

/// Fig. 4 on the smallest three-tier network (a k = 2 fat-tree: two pods of one edge and one
/// aggregation switch each, one core; 4 hosts per edge, 100 Gb/s host links, 400 Gb/s fabric):
/// pod A's hosts 2-3 send 2 MB to each of pod B's hosts 4 and 5 while pod B's 6-7 send to pod A's
/// 0 and 1, at line rate (no host window), with two VOQs per switch. With one shared pool the
/// aggregation ("leaf") switches put up- and down-going destinations in the same FIFO VOQs and
/// their credits wait on each other in a cycle: nothing is delivered until the watchdog stops the
/// run. With §4.2's groups (one VOQ down, one up) every flow finishes.
#[test]
fn without_voq_groups_the_fig4_topology_deadlocks_and_with_them_it_does_not() {
    let t = hopsim_core::topo::FatTree::new(2, hopsim_core::Rate::gbps(100), hopsim_core::Rate::gbps(400), Time::from_us(1))
        .unwrap()
        .with_hosts_per_edge(8)
        .build()
        .unwrap();
    let mut f: Vec<FlowSpec> = vec![];
    for s in 2..8u32 {
        for d in [8u32, 9] {
            f.push(FlowSpec { incast: true, ..flow(s, d, 1_000_000, Time::ZERO) });
            f.push(FlowSpec { incast: true, ..flow(s + 8, d - 8, 1_000_000, Time::ZERO) });
        }
    }
    let go = |pool: VoqPool| {
        let fc = FloodgateConfig { max_voq: 2, voq_pool: pool, ..Default::default() };
        let mut n = net(FcConfig::Floodgate(fc));
        n.host.window = WindowConfig::Off;
        n.stall_timeout = Some(Time::from_ms(3));
        n.stop_time = Some(Time::from_ms(50));
        run(&t, &f, n)
    };
    let shared = go(VoqPool::Shared);
    let grouped = go(VoqPool::Grouped);
    eprintln!(
        "shared: {:?} {} of {} finished, {}, modules {:?}; grouped: {:?} {} finished, modules {:?}",
        shared.stop.reason, shared.counters.flows_finished, shared.counters.flows, shared.stop.message, shared.modules, grouped.stop.reason, grouped.counters.flows_finished, grouped.modules
    );
    assert!(matches!(shared.stop.reason, StopReason::NoProgress | StopReason::Deadlock), "{:?}", shared.stop.reason);
    assert!(shared.counters.flows_finished < shared.counters.flows);
    assert!(shared.modules["floodgate_voq_hashed"] > 0, "destinations shared a VOQ");
    assert_eq!(grouped.stop.reason, StopReason::Done);
    assert_conserved(&grouped);
    assert!(grouped.modules["floodgate_voq_hashed"] > 0, "they share VOQs there too, within a group");
}

/// The paper's leaf-spine shape (§6: 4 cores, 100/400 Gb/s, 600 ns per hop) with `tors` ToRs.
fn paper_shape(hosts_per_tor: usize, tors: usize) -> hopsim_core::topo::Topology {
    hopsim_core::topo::LeafSpine {
        hosts_per_tor,
        tors,
        spines: 4,
        host_rate: hopsim_core::Rate::gbps(100),
        fabric_rate: hopsim_core::Rate::gbps(400),
        host_delay: Time::from_ns(600),
        fabric_delay: Time::from_ns(600),
        links_per_spine: 1,
    }
    .build()
}

/// The paper's switches (§6: 20 MB buffers) with 32 queues a port and 1460 B packets.
fn paper_net(fc: FcConfig) -> NetConfig {
    let mut n = net(fc);
    n.switch.buffer_bytes = 20_000_000;
    n.switch.nqueues = 32;
    n.host.mtu = 1460;
    n
}

/// Fig. 14's setting (§6.2 "When the number of ToR scales up") on the paper's leaf-spine shape
/// (16 hosts per ToR, 4 cores, 100/400 Gb/s, 600 ns): every host of K_1 ToRs sends one 30-40 MTU
/// flow to host 0 at once. The online appendix's Theorem 2 bounds what each tier holds: a source
/// ToR lets only its one per-dst window `win_1` through in the first RTT, so a core holds at most
/// `win_1 x K_1 / K_2` (eqs. 6-7), and the last hop at most `win_2 x K_2` (eq. 12), whatever K_1.
/// The cores' peak therefore grows with the ToRs (the bound, not a flat line); the last hop's
/// stays flat; delayCredit keeps the cores at the bound (without it, credits returned during the
/// burst let the ToRs send past it). With a window per (uplink, destination) instead of §7.2's
/// one per destination, each ToR lets K_2 windows through and the cores exceed the bound.
/// ECMP spreads a ToR's flows unevenly over the cores, so the bound is checked on the cores
/// together (the theorem assumes a perfect spread). Returns (the cores' peaks summed, the
/// last-hop port's peak, credits delayed).
fn tor_scale(tors: usize, fc: FloodgateConfig) -> (u64, u64, u64) {
    let t = paper_shape(16, tors + 1);
    let f: Vec<FlowSpec> = (16..16 * (tors as u32 + 1)).map(|s| FlowSpec { incast: true, ..flow(s, 0, 1460 * (30 + (s as u64 * 7) % 11), Time::from_us(10)) }).collect();
    let r = run(&t, &f, paper_net(FcConfig::Floodgate(FloodgateConfig { pfc: true, ..fc })));
    assert_conserved(&r);
    let p = &r.ports;
    let peaks = |cls: &str| -> Vec<u64> { (0..p.node.len()).filter(|&i| p.hop_class[i] == cls).map(|i| p.peak_queue_bytes[i]).collect() };
    (peaks("agg-down").iter().sum(), *peaks("tor-down").iter().max().unwrap(), r.modules["floodgate_credits_delayed"])
}

#[test]
fn the_cores_hold_at_most_one_window_per_tor_and_the_last_hop_stays_flat_as_tors_scale_up() {
    // win = BDP_nextHop + C_out x T (§4.2) at 400 Gb/s: 400 Gb/s x (2 x 600 ns + 10 us) plus the
    // MTU's serialisation, rounded up to whole packets: about 561 KB
    let win = 400e9 / 8.0 * (1.2e-6 + 10e-6) + 1600.0;
    let ks = [4usize, 8, 16];
    let with: Vec<(u64, u64, u64)> = ks.iter().map(|&k| tor_scale(k, FloodgateConfig::default())).collect();
    let without = tor_scale(16, FloodgateConfig { delay_credit: false, ..Default::default() });
    let per_port = tor_scale(16, FloodgateConfig { window: WindowScope::Port, ..Default::default() });
    eprintln!("(core, last hop, delayed) at K_1 = {ks:?}: {with:?}; K_1 = 16 without delayCredit {without:?}, per-port windows {per_port:?}; win {win:.0}");
    for (i, &k) in ks.iter().enumerate() {
        let bound = win * k as f64;
        assert!((with[i].0 as f64) < 1.03 * bound, "K_1 = {k}: cores {} above K_2 x win_1 x K_1 / K_2 = {bound:.0}", with[i].0);
        assert!((with[i].1 as f64) < 1.03 * win * 4.0, "K_1 = {k}: last hop {} above win_2 x K_2", with[i].1);
    }
    // the last hop is flat from 4 to 16 ToRs; the cores grow with them, as the bound does
    assert!(with[2].0 > 3 * with[0].0, "cores {} vs {}", with[2].0, with[0].0);
    assert!(with[2].1 as f64 <= 1.15 * with[0].1 as f64, "last hop {} vs {}", with[2].1, with[0].1);
    assert!(with[2].2 > 0 && without.2 == 0);
    assert!(without.0 as f64 > 1.1 * with[2].0 as f64, "delayCredit keeps the cores at the bound: {} vs {}", without.0, with[2].0);
    assert!(per_port.0 as f64 > 1.2 * with[2].0 as f64, "a window per uplink lets more in: {} vs {}", per_port.0, with[2].0);
}

/// PFC w/ tag (appendix B): the last hop pauses only the incast's destination at the spines, and
/// the spines pass the pause back to the ToRs and those to the senders; so the incast waits
/// upstream in per-destination VOQs while the flow to host 1, behind the same last hop and over
/// the same spine-to-ToR links, is not blocked — where standard PFC pauses those links whole.
#[test]
fn pfc_with_tag_pauses_only_the_incast_destination() {
    let tag = run(&topo(), &flows(), net(FcConfig::PfcTag(PfcTagConfig::default())));
    let pfc = run(&topo(), &flows(), net(FcConfig::Pfc));
    assert_conserved(&tag);
    assert_eq!(tag.counters.drops, 0);
    let victim = flows().len() - 1;
    let slow = |r: &RunStats| r.flows.fct_ps[victim] as f64 / r.flows.ideal_fct_ps[victim] as f64;
    let c = &tag.control;
    let tagged: Vec<usize> = (0..c.kind.len()).filter(|&i| c.kind[i] == "dst_pause").collect();
    eprintln!("victim slowdown tag {:.2} pfc {:.2}; modules {:?}; {} tagged frames; last hop peak tag {} pfc {}", slow(&tag), slow(&pfc), tag.modules, tagged.len(), last_hop_peak(&tag), last_hop_peak(&pfc));
    assert!(tag.modules["pfc_tag_pauses"] > 0 && tag.modules["pfc_tag_voq_allocs"] > 0);
    assert!(tagged.iter().all(|&i| c.target[i] == 0), "every tagged pause names the incast's destination");
    // a pause went back further than the last hop: spines paused ToRs (or ToRs paused hosts)
    let tor0 = topo().nodes.len() as u32 - 2 - 4;
    assert!(tagged.iter().any(|&i| c.node[i] != tor0), "hop by hop");
    assert_eq!(tag.counters.pfc_bytes, 0, "no standard PFC frame");
    assert!(slow(&tag) < 1.5, "victim slowdown {}", slow(&tag));
    assert!(slow(&pfc) > 2.0 * slow(&tag));
    // the last hop holds about the pause threshold, not the incast
    assert!(last_hop_peak(&tag) * 3 < last_hop_peak(&pfc));
}

/// Fig. 15's setting (§6.3, successive incasts "for different destination hosts"): on the paper's
/// shape (16 hosts per ToR, 100/400 Gb/s, 600 ns, 4 cores; 6 ToRs here), a burst every 5 us in which
/// every other host sends one 30-40 MTU flow to a new destination. Each destination has its own
/// per-dst windows, so Theorem 2's bound on a core port holds per destination: with the
/// destinations taking the racks in turn (`dst_stride` = hosts per ToR, Floodgate-NS3's order)
/// each core port towards a ToR carries one incast and the cores' peak stays flat as the incasts
/// follow one another, while ToR-up grows with them (the first hops hold the incasts: a ToR's 16
/// flows of an incast, 818 KB, pass its one window of about 561 KB); with
/// every destination behind one ToR (`dst_stride` = 1) its core ports hold one window's worth per
/// destination and the peak grows: what random destinations did to Fig. 15 when they stacked.
/// (The geometry alone keeps any scheme's cores flat over the racks; what is Floodgate's is that
/// its cores stay under the bound and under PFC's.)
/// Returns (the cores' peaks towards one ToR summed, the largest of them; the largest ToR-up port peak).
fn successive(bursts: usize, stride: u32, fc: FcConfig) -> (u64, u64) {
    use hopsim_core::workload::arrivals::Limit;
    use hopsim_core::workload::incast::{incast_flows, IncastSize, IncastSpec, IncastTiming};
    let t = paper_shape(16, 6);
    let mut spec = IncastSpec::new(95, IncastSize::PerFlowRange { min: 43_800, max: 58_400 }, IncastTiming::Period(Time::from_us(5)));
    (spec.dst, spec.dst_stride) = (Some(0), stride);
    let f = incast_flows(&spec, &t.host_ids(), Time::ZERO, Limit::Count(bursts), 1, 0).unwrap();
    let r = run(&t, &f, paper_net(fc));
    assert_conserved(&r);
    let p = &r.ports;
    // the cores' ports towards one ToR, summed (ECMP spreads a ToR's flows unevenly over the
    // cores, so Theorem 2's bound is checked on them together, as in Fig. 14's test)
    let mut towards: std::collections::BTreeMap<u32, u64> = Default::default();
    for i in (0..p.node.len()).filter(|&i| p.hop_class[i] == "agg-down") {
        *towards.entry(p.peer_node[i]).or_default() += p.peak_queue_bytes[i];
    }
    let tor_up = (0..p.node.len()).filter(|&i| p.hop_class[i] == "tor-up").map(|i| p.peak_queue_bytes[i]).max().unwrap();
    (*towards.values().max().unwrap(), tor_up)
}

#[test]
fn successive_incasts_to_the_racks_in_turn_keep_the_cores_flat_and_fill_the_first_hops() {
    let fg = || FcConfig::Floodgate(FloodgateConfig { pfc: true, ..Default::default() });
    let (two, six) = (successive(2, 16, fg()), successive(6, 16, fg()));
    let stacked = successive(6, 1, fg());
    let pfc = successive(6, 16, FcConfig::Pfc);
    eprintln!("(core, tor-up) peaks: 2 incasts {two:?}, 6 over the racks {six:?}, 6 behind ToR 0 {stacked:?}, PFC alone {pfc:?}");
    // the source ToRs hold back what their windows do not cover: less reaches the cores than
    // under PFC alone, whose senders' first windows all arrive there
    assert!((six.0 as f64) < 0.9 * pfc.0 as f64, "Floodgate's cores {} vs PFC's {}", six.0, pfc.0);
    // Theorem 2 per destination: the 5 source ToRs let one window each (about 561 KB, see the
    // Fig. 14 test) towards the incast's ToR, 2.81 MB over its core ports, however many incasts
    let bound = 1.03 * (400e9 / 8.0 * (1.2e-6 + 10e-6) + 1600.0) * 5.0;
    assert!((two.0 as f64) < bound && (six.0 as f64) < bound, "cores {} / {} above {bound:.0}", two.0, six.0);
    assert!((six.0 as f64) < 1.2 * two.0 as f64, "cores flat over the racks: {} vs {}", six.0, two.0);
    assert!(six.1 as f64 > 1.5 * two.1 as f64, "ToR-up grows with the incasts: {} vs {}", six.1, two.1);
    assert!(stacked.0 as f64 > 1.5 * six.0 as f64, "destinations behind one ToR stack at its core ports: {} vs {}", stacked.0, six.0);
}

/// Floodgate-NS3's `ACK_HIGH_PRIO 0` under Floodgate: ACKs ride the non-incast data queue at
/// switches (no window, no credit) and the incast still waits upstream, every flow finishing.
/// Host 0 also sends 2 MB to host 8, so the ACKs to host 8's flow share ToR 1's port towards
/// host 8 with data.
#[test]
fn acks_in_the_data_queues_under_floodgate_run_and_the_incast_still_waits_upstream() {
    let mut f = flows();
    f.push(flow(0, 8, 2_000_000, Time::ZERO));
    let mut n = net(FcConfig::Floodgate(FloodgateConfig::default()));
    n.host.ack_priority = hopsim_core::params::AckPriority::Data;
    let data = run(&topo(), &f, n);
    let ctrl = run(&topo(), &f, net(FcConfig::Floodgate(FloodgateConfig::default())));
    assert_conserved(&data);
    assert_eq!(data.counters.drops, 0);
    assert!(data.modules["floodgate_voq_allocs"] > 0);
    assert!(last_hop_peak(&data) * 3 < last_hop_peak(&run(&topo(), &flows(), net(FcConfig::Pfc))));
    // ACKs to host 8 now queue behind host 0's data at ToR 1: its flow's sender learns later
    let victim = flows().len() - 1;
    assert!(data.flows.ack_fct_ps[victim] > ctrl.flows.ack_fct_ps[victim], "{} vs {}", data.flows.ack_fct_ps[victim], ctrl.flows.ack_fct_ps[victim]);
}

/// The ideal design (§3.2: "a packet is forwarded only when its destination has window") on the
/// paper's leaf-spine shape under successive incasts (a burst every 5 us, each to the first host
/// of the next rack): no VOQ packet leaves a switch while its destination's window is spent, with
/// either VOQ pool, and with VOQ packets joining the egress FIFO (`voq_service = "egress_fifo"`,
/// the engine moving them between queues) every window comes back whole. A packet arriving for a destination without window makes it a new VOQ that
/// the module closes at once; the port must not pick that packet before the close takes effect
/// (it did: a packet arriving at an idle uplink went out before the close took effect, and a
/// credit that freed one packet of window opened the destination's VOQs on every uplink, each
/// sending one: 3,390 packets beyond the windows here, the cores filling with what the windows
/// should have held at the source ToRs).
#[test]
fn no_voq_packet_leaves_without_window_in_the_ideal_design_under_successive_incasts() {
    use hopsim_core::workload::arrivals::Limit;
    use hopsim_core::workload::incast::{incast_flows, IncastSize, IncastSpec, IncastTiming};
    let t = paper_shape(16, 4);
    let mut spec = IncastSpec::new(63, IncastSize::PerFlowRange { min: 43_800, max: 58_400 }, IncastTiming::Period(Time::from_us(5)));
    (spec.dst, spec.dst_stride) = (Some(0), 16);
    let f = incast_flows(&spec, &t.host_ids(), Time::ZERO, Limit::Count(4), 1, 0).unwrap();
    for (pool, voq_service) in [(VoqPool::PerPort, VoqService::Strict), (VoqPool::Shared, VoqService::Strict), (VoqPool::Shared, VoqService::EgressFifo)] {
        let r = run(&t, &f, paper_net(FcConfig::Floodgate(FloodgateConfig { ideal: true, voq_pool: pool, voq_service, pfc: true, ..Default::default() })));
        assert_conserved(&r);
        assert!(r.modules["floodgate_voq_allocs"] > 0);
        assert_eq!(r.modules["floodgate_sent_without_window"], 0, "{pool:?} {voq_service:?}: {:?}", r.modules);
        assert_eq!(r.modules["floodgate_in_flight"], 0, "{pool:?} {voq_service:?}: every window credited back");
    }
}

/// `ecn_counts_voq` (Floodgate-NS3: ECN reads a port's bytes from admission, VOQ packets
/// included): with DCQCN and a low marking threshold, the flow to host 1 leaves ToR 1 by an
/// uplink whose VOQs hold the 24-to-1 incast's packets; judged with those bytes its packets are
/// marked and DCQCN slows it several times over, where judged on its own queue (hopsim's default)
/// it goes through at nearly line rate.
#[test]
fn bytes_waiting_in_voqs_count_toward_ecn_marks_when_asked() {
    use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
    use hopsim_core::params::EcnConfig;
    let victim_fct = |ecn_counts_voq: bool| {
        let mut n = net(FcConfig::Floodgate(FloodgateConfig { ecn_counts_voq, ..Default::default() }));
        n.cc = CcConfig::Dcqcn(DcqcnConfig::default());
        n.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 20_000, kmax_bytes: 400_000, pmax: 1.0, ref_rate: None };
        let r = run(&topo(), &flows(), n);
        assert_conserved(&r);
        r.flows.fct_ps[flows().len() - 1]
    };
    let (alone, together) = (victim_fct(false), victim_fct(true));
    assert!(together > 3 * alone, "the flow to host 1: {together} ps with VOQ bytes counted, {alone} ps without");
}
