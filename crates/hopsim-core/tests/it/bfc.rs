//! BFC's defining behaviours in whole networks: only the congested flows' upstream queues are
//! paused (the testbed of §6.1, Fig. 6), no drops with the paper's buffers under its 55% + 5%
//! incast mix (§6.2), and Ideal-FQ's max-min fair shares.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::fc::bfc::{Assignment, BfcConfig};
use hopsim_core::params::WindowConfig;
use hopsim_core::scenario::{Background, LoadOn, Scenario, TopologySpec, WorkloadSpec};
use hopsim_core::stats::RunStats;
use hopsim_core::topo::{NodeKind, Topology};
use hopsim_core::workload::FlowSpec;
use hopsim_core::workload::arrivals::Arrival;
use hopsim_core::workload::incast::IncastSpec;
use hopsim_core::{Rate, Time};

pub fn bfc_net(cfg: BfcConfig, nqueues: usize) -> NetConfig {
    let mut net = NetConfig { fc: FcConfig::Bfc(cfg), ..Default::default() };
    net.switch.nqueues = nqueues;
    net.switch.lossless = false;
    net.record.buffer_interval = None;
    net
}

/// Fig. 6: group 1 senders -> switch 1 -> switch 2 -> receiver 1; group 2 senders -> switch 1 ->
/// switch 2 -> receiver 2; group 3 senders -> switch 3 -> switch 2 -> receiver 2. All links
/// 100 Gb/s, 1 us. Returns the topology and the sender ids of each group and the receivers.
pub fn testbed(g1: u32, g2: u32, g3: u32) -> (Topology, [Vec<u32>; 3], u32, u32) {
    let mut t = Topology::default();
    let (r, d) = (Rate::gbps(100), Time::from_us(1));
    let sw: Vec<u32> = (0..3).map(|_| t.add_node(NodeKind::Switch { tier: 0 })).collect();
    t.add_link(sw[0], sw[1], r, d);
    t.add_link(sw[2], sw[1], r, d);
    let r1 = t.add_node(NodeKind::Host);
    let r2 = t.add_node(NodeKind::Host);
    t.add_link(r1, sw[1], r, d);
    t.add_link(r2, sw[1], r, d);
    let mut groups: [Vec<u32>; 3] = Default::default();
    for (g, (n, s)) in [(g1, sw[0]), (g2, sw[0]), (g3, sw[2])].into_iter().enumerate() {
        for _ in 0..n {
            let h = t.add_node(NodeKind::Host);
            t.add_link(h, s, r, d);
            groups[g].push(h);
        }
    }
    (t, groups, r1, r2)
}

/// §6.1's queue-assignment experiment: two group 1 flows, four group 2 and eight group 3, all
/// 1.5 MB, no end-to-end congestion control; 16 queues per port as on the loopback testbed.
fn fig8(assignment: Assignment) -> (RunStats, Vec<usize>) {
    fig8_with(BfcConfig { assignment, ..Default::default() })
}

fn fig8_with(cfg: BfcConfig) -> (RunStats, Vec<usize>) {
    let (t, flows, group1) = fig8_flows();
    (run(&t, &flows, bfc_net(cfg, 16)), group1)
}

/// §6.1's flows on the testbed: two of group 1, four of group 2 and eight of group 3, 1.5 MB
/// each; the indices of group 1's flows.
pub fn fig8_flows() -> (Topology, Vec<FlowSpec>, Vec<usize>) {
    let (t, g, r1, r2) = testbed(2, 4, 8);
    let mut flows = vec![];
    let mut group1 = vec![];
    for &s in &g[0] {
        group1.push(flows.len());
        flows.push(flow(s, r1, 1_500_000, Time::ZERO));
    }
    for &s in g[1].iter().chain(&g[2]) {
        flows.push(flow(s, r2, 1_500_000, Time::ZERO));
    }
    (t, flows, group1)
}

#[test]
fn only_the_congested_flows_upstream_queues_are_paused() {
    let (dynamic, g1) = fig8(Assignment::Dynamic);
    let (single, _) = fig8(Assignment::Single);
    assert_conserved(&dynamic);
    assert_eq!(dynamic.counters.drops, 0);
    let mean = |r: &RunStats| g1.iter().map(|&i| r.flows.fct_ps[i] as f64).sum::<f64>() / g1.len() as f64 / 1e6;
    // max-min: 12 flows share receiver 2's link (8.33 Gb/s each), so group 1's two flows have the
    // other 66.7 Gb/s of switch 1 -> switch 2: 33.3 Gb/s each. Group 1 is never paused by switch
    // 2, but switch 1 pauses its NIC queues (Th is one hop BDP at the 33.3 Gb/s drain rate), and
    // App. A's model says such a flow runs dry E = (x - 1) / (x + x^2 - 1) of the time with
    // x = 100 / 33.3 = 3 (enqueue over dequeue rate): 2/11. So its FCT is 1.5 MB at
    // 33.3 x (1 - 2/11) Gb/s, plus three hops of latency.
    let fair = 100e9 * (1.0 - 4.0 / 12.0) / 2.0;
    let x: f64 = 100e9 / fair;
    let e = (x - 1.0) / (x + x * x - 1.0);
    let model_us = 1.5e6 * 8.0 / (fair * (1.0 - e)) * 1e6 + 3.0 * 1.084;
    let got = mean(&dynamic);
    assert!((got - model_us).abs() < 0.05 * model_us, "dynamic: group 1 in {got:.0} us, App. A's model {model_us:.0} us");
    // in one queue, group 1 waits whenever group 2's queue is paused (HoL blocking, Fig. 8): it
    // finishes with group 2
    assert!(mean(&single) > 2.5 * got, "single {:.0} us vs dynamic {got:.0} us", mean(&single));
    // the pauses went to switch 1 (node 0) and to the group 2 and 3 senders, queue by queue
    let c = &dynamic.control;
    assert!(c.kind.iter().all(|k| k == "queue_pause"));
    assert!(c.kind.len() > 10);
}

/// §6.2's Clos (128 hosts, 8 ToRs, 8 spines, 100 Gb/s, 1 us, 12 MB) under the Google workload at
/// 55% of the core plus 5% of 100-to-1 incasts of 20 MB, lognormal arrivals (sigma = 2), BFC
/// with 32 queues and no PFC, line-rate senders capped at 1 BDP: no packet is dropped.
#[test]
fn no_drops_with_the_papers_buffers_under_its_incast_mix() {
    let cdf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/BFC_W3_GoogleAllRPC.txt")).unwrap();
    let mut incast = IncastSpec::bfc();
    incast.dst = None;
    let sc = Scenario {
        topology: TopologySpec::LeafSpine(leaf_spine_100g(16, 8, 8)),
        workload: WorkloadSpec::IncastMix {
            background: Background {
                cdf,
                load: 0.55,
                load_on: LoadOn::CoreLinks,
                arrival: Arrival::LogNormal { sigma: 2.0 },
                start: Time::ZERO,
                duration: Time::from_us(600),
                prio: 3,
                dst: None,
                rack_size: 0,
            },
            incast,
        },
        net: NetConfig {
            stop_time: Some(Time::from_ms(3)),
            record: hopsim_core::config::RecordConfig { buffer_interval: Some(Time::from_us(10)), ..Default::default() },
            ..bfc_net(BfcConfig::default(), 32)
        },
    };
    let r = sc.run().unwrap();
    assert!(r.counters.flows > 500, "{} flows", r.counters.flows);
    assert_eq!(r.counters.drops, 0);
    assert!(r.counters.queue_pause_bytes > 0, "BFC paused something");
    assert_eq!(r.counters.data_bytes_dropped, 0);
    // the background flows (arrivals end at 600 us) have finished by 3 ms
    let bg_done = (0..r.flows.flow_id.len()).filter(|&i| !r.flows.incast[i]).all(|i| r.flows.finish_ps[i] != u64::MAX);
    assert!(bg_done, "every background flow finishes");
    // the active flows BFC reports per egress (module_samples) hold at least the port's
    // non-empty queues (buffer samples); at a port with no collision yet (no flow has found
    // every queue taken, or come back by the sticky rule to a queue a new flow had taken), each
    // active flow has a queue of its own. Without counting the sticky returns 6% of such samples
    // disagreed; with sticky_hrtt = 0 none did.
    let m = &r.module_samples;
    let id = |name: &str| r.module_metrics.iter().position(|x| x == name).expect("reported") as u16;
    let series = |metric: u16| -> std::collections::HashMap<(u64, u32, u16), f64> {
        (0..m.time_ps.len()).filter(|&i| m.metric[i] == metric).map(|i| ((m.time_ps[i], m.node[i], m.port[i]), m.value[i])).collect()
    };
    let (active, collided) = (series(id("active_flows")), series(id("collisions")));
    let b = &r.buffer;
    let (mut busy, mut equal) = (0, 0);
    for i in 0..b.port_time_ps.len() {
        let row = b.port_row[i] as usize;
        let key = (b.port_time_ps[i], r.ports.node[row], r.ports.port[row]);
        let Some(&flows) = active.get(&key) else { continue };
        let queues = b.port_active[i] as f64;
        assert!(queues <= flows, "{key:?}: {queues} non-empty queues but {flows} active flows");
        if queues > 0.0 && collided[&key] == 0.0 {
            busy += 1;
            equal += (queues == flows) as u32;
        }
    }
    assert!(busy > 1000 && equal == busy, "{equal} of {busy} busy samples agree");
}

#[test]
fn ideal_fq_gives_a_long_flow_its_max_min_share() {
    // four long flows into one receiver over a star: fair queuing gives each a quarter of the
    // link; one of them also has its sender's link to itself, which changes nothing
    let t = hopsim_core::topo::star(5, Rate::gbps(100), Time::from_us(1));
    let long = |s| FlowSpec { src: s, dst: 0, size: 1 << 40, start: Time::ZERO, prio: 3, incast: false, dport: 100, sport: 0, pg: 0, rate_cap: None };
    let flows = [long(1), long(2), long(3), long(4)];
    let mut net = bfc_net(BfcConfig::ideal_fq(), 32);
    net.fc = FcConfig::IdealFq;
    net.switch.buffer_bytes = 1 << 40;
    net.host.window = WindowConfig::Bdp;
    let stop = Time::from_ms(2);
    net.stop_time = Some(stop);
    let r = run(&t, &flows, net);
    for f in 0..4 {
        // goodput: payload bytes, 1000 of every 1048 on the wire
        let share = 25.0 * 1000.0 / 1048.0;
        let gbps = r.flows.delivered_bytes[f] as f64 * 8.0 / stop.as_secs_f64() / 1e9;
        assert!((gbps - share).abs() < 0.02 * share, "flow {f}: {gbps:.2} Gb/s of goodput, max-min share {share:.2}");
    }
    assert_eq!(r.counters.drops, 0);
    assert_eq!(r.counters.queue_pause_bytes, 0, "Ideal-FQ has no backpressure");
}

/// §3.3.2: "BFC performs nearly identically to an ideal (but impractical) variant that pauses
/// flows directly using the flow ID". With a queue per flow (16 queues, 14 flows) the two agree.
#[test]
fn ideal_per_flow_control_pauses_flows_by_id_and_bfc_tracks_it() {
    let (ideal, g1) = fig8_with(BfcConfig { per_flow: true, ..Default::default() });
    let (dynamic, _) = fig8(Assignment::Dynamic);
    assert_conserved(&ideal);
    assert!(ideal.control.kind.iter().all(|k| k == "flow_pause") && !ideal.control.kind.is_empty());
    let mean = |r: &RunStats| g1.iter().map(|&i| r.flows.fct_ps[i] as f64).sum::<f64>() / g1.len() as f64;
    let last = |r: &RunStats| *r.flows.finish_ps.iter().max().unwrap() as f64;
    assert!((mean(&ideal) / mean(&dynamic) - 1.0).abs() < 0.05, "group 1: ideal {} vs BFC {}", mean(&ideal), mean(&dynamic));
    assert!((last(&ideal) / last(&dynamic) - 1.0).abs() < 0.02);
}

/// §3.3.2's pause-bitmap refresh guards against lost pause/resume frames. Where no frame can be
/// lost it is skipped by default (`refresh_when = "faults"`): the testbed run then logs no bitmap
/// and its per-queue pauses and resumes alternate exactly, queue by queue. The paper's switch
/// (`"always"`) and a run whose scenario has faults (here a link whose loss rate is 0, so the
/// frames' fate is the same) both refresh, identically. Group 1's FCT stays within 5% (App. A's
/// model, as in the test above): the 64 B frames shift the phases of pauses and resumes a little,
/// and group 1's FCT is that sensitive (frames of 1 B instead of 64 move it by 3% either way).
#[test]
fn the_pause_bitmap_refresh_is_sent_only_where_frames_can_be_lost() {
    use hopsim_core::fc::bfc::RefreshWhen;
    use hopsim_core::params::LinkLoss;
    let (t, flows, g1) = fig8_flows();
    let with = |cfg: BfcConfig, faults: bool| {
        let mut net = bfc_net(cfg, 16);
        if faults {
            net.faults.link_loss = vec![LinkLoss { link: (0, 1), rate: 0.0 }];
        }
        run(&t, &flows, net)
    };
    let bitmaps = |r: &RunStats| r.control.kind.iter().filter(|k| *k == "queue_bitmap").count();
    let plain = with(BfcConfig::default(), false);
    assert_eq!(bitmaps(&plain), 0);
    // per queue: pause, resume, pause, ... in time order (the control log's rows are exact)
    let c = &plain.control;
    let mut state = std::collections::HashMap::new();
    for i in 0..c.kind.len() {
        assert_eq!(c.kind[i], "queue_pause");
        let was = state.insert((c.node[i], c.port[i], c.target[i]), c.value[i]).unwrap_or(0);
        assert_ne!(was, c.value[i], "row {i}: a queue paused twice or resumed twice");
    }
    let always = with(BfcConfig { refresh_when: RefreshWhen::Always, ..Default::default() }, false);
    let lossy = with(BfcConfig::default(), true);
    assert!(bitmaps(&always) > 100, "{} bitmaps", bitmaps(&always));
    assert_eq!(always.control, lossy.control, "a run with faults refreshes as the paper's switch does");
    assert_eq!(always.flows.fct_ps, lossy.flows.fct_ps);
    let mean = |r: &RunStats| g1.iter().map(|&i| r.flows.fct_ps[i] as f64).sum::<f64>() / g1.len() as f64;
    assert!((mean(&always) / mean(&plain) - 1.0).abs() < 0.05, "group 1: {} vs {}", mean(&always), mean(&plain));
}

/// Fig. 9's short-flow tail in miniature (§6.2.2; fc/bfc.rs, `lone_packet_pauses`): a source
/// ToR A, a spine S, the incast's ToR B (receivers 1 and 2) and ToR C (40 incast senders) and D
/// (receiver 3). The 100 long flows C -> receiver 1 take every data queue of S's port to B, each
/// paused by B. A one-packet flow A -> receiver 1 lands in one of those paused queues above `Th`;
/// by §3.3.2's pseudo-code it pauses the A uplink queue it came from until it leaves S (it waits
/// behind a paused queue), that queue is empty, so A soon gives it to a new flow, and one-packet
/// flows to the idle receiver 3 wait behind a pause they did not cause. With the rule of the
/// paper's simulator (`lone_packet_pauses = false`) such packets pause nothing and those flows
/// cross at line rate; the flows to receiver 1 still wait at S (a collision either way).
#[test]
fn one_packet_flows_stuck_behind_an_incast_pause_other_flows_only_by_the_pseudo_code() {
    let mut t = Topology::default();
    let (r, d) = (Rate::gbps(100), Time::from_us(1));
    let tor: Vec<u32> = (0..4).map(|_| t.add_node(NodeKind::Switch { tier: 0 })).collect();
    let spine = t.add_node(NodeKind::Switch { tier: 1 });
    for &s in &tor {
        t.add_link(s, spine, r, d);
    }
    let mut hosts_at = |tr: u32, n: usize| -> Vec<u32> {
        (0..n)
            .map(|_| {
                let h = t.add_node(NodeKind::Host);
                t.add_link(h, tr, r, d);
                h
            })
            .collect()
    };
    let senders = hosts_at(tor[0], 8);
    let r1 = hosts_at(tor[1], 2)[0];
    let incast = hosts_at(tor[2], 100);
    let r3 = hosts_at(tor[3], 1)[0];
    let mut flows: Vec<FlowSpec> = incast.iter().map(|&s| flow(s, r1, 200_000, Time::ZERO)).collect();
    let first_short = flows.len();
    for i in 0..600u32 {
        // every 0.5 us a one-packet flow from ToR A, three to receiver 1 for one to receiver 3
        let dst = if i % 4 == 3 { r3 } else { r1 };
        flows.push(flow(senders[i as usize % 8], dst, 500, Time::from_us(50) + Time(i as u64 * 500_000)));
    }
    // a flow table of 1000x the queues: with the default 100x, 3% of the new flows' FIDs share
    // an entry with one of the 100 incast flows at S, join its queue as that entry's second
    // packet and pause A by either rule (8 pauses); here that is 0.3%
    let with = |lone_packet_pauses: bool| {
        run(&t, &flows, bfc_net(BfcConfig { lone_packet_pauses, table_factor: 1000, ..Default::default() }, 32))
    };
    let (paper, ns3) = (with(true), with(false));
    let slowdowns = |r: &RunStats, dst: u32| -> Vec<f64> {
        let mut s: Vec<f64> = (first_short..flows.len())
            .filter(|&i| flows[i].dst == dst)
            .map(|i| r.flows.fct_ps[i] as f64 / r.flows.ideal_fct_ps[i] as f64)
            .collect();
        s.sort_by(|a, b| a.total_cmp(b));
        s
    };
    let (a, b) = (slowdowns(&paper, r3), slowdowns(&ns3, r3));
    let p99 = |s: &[f64]| s[s.len() * 99 / 100];
    let waited = |s: &[f64]| s.iter().filter(|&&x| x > 2.0).count();
    eprintln!(
        "flows to the idle receiver: pseudo-code p99 {:.2} max {:.2}, {} of {} above 2x; simulator's rule p99 {:.2} max {:.2}, {} above 2x",
        p99(&a), a[a.len() - 1], waited(&a), a.len(), p99(&b), b[b.len() - 1], waited(&b)
    );
    let (c, e) = (slowdowns(&paper, r1), slowdowns(&ns3, r1));
    eprintln!("flows to the incast's receiver: p99 {:.1} vs {:.1}", p99(&c), p99(&e));
    let pauses_to_a = |r: &RunStats| r.control.node.iter().zip(&r.control.port).zip(&r.control.value).filter(|&((&n, &p), &v)| n == spine && p == 0 && v == 1).count();
    eprintln!("pause frames from S to A: {} vs {}", pauses_to_a(&paper), pauses_to_a(&ns3));
    for r in [&paper, &ns3] {
        assert_conserved(r);
        assert_eq!(r.counters.drops, 0);
    }
    // the flows to receiver 1 wait at S either way (every queue there is taken)
    assert!(p99(&c) > 2.0 && p99(&e) > 2.0);
    // by the pseudo-code their packets pause A's uplink queues, and flows to receiver 3 wait
    assert!(pauses_to_a(&paper) > 10 && waited(&a) > 0 && a[a.len() - 1] > 2.0);
    // by the simulator's rule (almost) nothing pauses A, and (almost) every flow to receiver 3
    // crosses at line rate (measured: 2 pauses and one flow of 150 at 4.3x, the one that met
    // them; the pseudo-code's 76 pauses delay several)
    assert!(pauses_to_a(&ns3) <= 2, "{} pauses from S to A", pauses_to_a(&ns3));
    assert!(waited(&b) <= 1 && p99(&b) < 1.05, "flows to receiver 3: {} above 2x, p99 {:.2}x", waited(&b), p99(&b));
    assert!(waited(&a) >= waited(&b));
}
