//! Flow state lives from a flow's start until nothing can touch it (`net::flow_store`): freeing
//! it then must change no result. Each scenario runs twice, freeing states and keeping every
//! state to the end (`keep_finished_flows`), and every record is compared, module counters and
//! event count included; the per-flow memory follows the flows in flight, not the workload; and
//! packets that reach a flow after its sender finished (CNPs, duplicate retransmissions, their
//! ACKs) find its state. Each run is checked at its end for a count of packets alive per flow
//! that matches the packets in the slab (`check_flow_packets`; debug builds check every run).

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, dctcp::DctcpConfig, hpcc::HpccConfig, timely::TimelyConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::fc::bfc::BfcConfig;
use hopsim_core::fc::floodgate::FloodgateConfig;
use hopsim_core::params::TcpConfig;
use hopsim_core::params::{EcnConfig, FaultsConfig, LinkLoss};
use hopsim_core::progress::{Sink, Watch};
use hopsim_core::scenario::Scenario;
use hopsim_core::stats::{FlowTable, RunStats};
use hopsim_core::topo::{NodeKind, Topology};
use hopsim_core::{Rate, Simulation, Time};
use std::sync::{Arc, Mutex};

/// 16 hosts on four ToRs over two spines (hosts 0-15, ToRs 16-19, spines 20-21), WebSearch at
/// 60% plus 8-to-1 incasts every 50 us, with `cc` over `fc` (lossless when `fc` pauses); ECN
/// marks from 10 KB, so that DCQCN's receivers send CNPs.
fn mix(cc: CcConfig, fc: FcConfig, buffer: u64) -> Scenario {
    let mut net = NetConfig { fc, cc, seed: 3, ..Default::default() };
    net.switch.buffer_bytes = buffer;
    net.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 10_000, kmax_bytes: 50_000, pmax: 0.5, ref_rate: None };
    net.switch.lossless = net.fc.pauses();
    net.record.buffer_interval = None;
    websearch_incastmix((4, 4, 2), 0.6, Time::from_us(600), 8, (20_000, 60_000), Time::from_us(50), net)
}

/// A go-back-N RoCE run that drops (a small lossy buffer) with DCQCN's CNPs, one for every
/// marked packet: retransmissions and CNPs still in flight when senders finish.
fn lossy_dcqcn() -> Scenario {
    let mut sc = mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::None, 150_000);
    sc.net.host.cnp_interval = Time::ZERO;
    sc
}

/// TCP (DCTCP) with a lossy ToR-to-spine link besides buffer drops.
fn tcp_lossy() -> Scenario {
    let mut sc = mix(CcConfig::Dctcp(DctcpConfig::default()), FcConfig::None, 300_000);
    sc.net.host.tcp = Some(TcpConfig::default());
    sc.net.faults = FaultsConfig { link_loss: vec![LinkLoss { link: (16, 20), rate: 1e-3 }], ..Default::default() };
    sc
}

/// Eight dual-homed hosts (each on ToRs 8 and 9, joined by spine 10) sending to each other.
fn multi_nic() -> (Topology, Vec<hopsim_core::workload::FlowSpec>) {
    let mut t = Topology::default();
    for _ in 0..8 {
        t.add_node(NodeKind::Host);
    }
    let (t0, t1) = (t.add_node(NodeKind::Switch { tier: 0 }), t.add_node(NodeKind::Switch { tier: 0 }));
    let s = t.add_node(NodeKind::Switch { tier: 1 });
    let (g, d) = (Rate::gbps(100), Time::from_us(1));
    for h in 0..8 {
        t.add_link(h, t0, g, d);
        t.add_link(h, t1, Rate::gbps(50), d);
    }
    t.add_link(t0, s, g, d);
    t.add_link(t1, s, g, d);
    let flows = (0..400u32).map(|i| flow(i % 8, (i * 3 + 1 + i / 8) % 8, 5_000 + (i as u64 * 7919) % 60_000, Time(i as u64 * 500_000))).filter(|f| f.src != f.dst).collect();
    (t, flows)
}

/// The run freed and the run with every state kept, and the freed run's simulation.
fn both(build: impl Fn() -> Simulation) -> (Simulation, RunStats) {
    let mut freed = build();
    freed.run();
    // (CI's tests build in release, where `finish` skips this check)
    freed.check_flow_packets();
    let mut kept = build();
    kept.keep_finished_flows();
    kept.run();
    (freed, kept.stats.clone())
}

fn assert_same(a: &RunStats, b: &RunStats, what: &str) {
    // (by their text: an unfinished flow's slowdown is NaN, which equals nothing)
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows), "{what}: the flow records differ");
    assert!(a.counters == b.counters, "{what}: the counters differ (events included)");
    assert!(a.modules == b.modules, "{what}: the module counters differ: {:?} vs {:?}", a.modules, b.modules);
    assert!(a.ports == b.ports, "{what}: the port records differ");
    assert!(a.cwnd == b.cwnd, "{what}: the window samples differ");
}

#[test]
fn freeing_finished_flows_changes_no_result() {
    let mut cases: Vec<(&str, Box<dyn Fn() -> Simulation>)> = vec![];
    let sc = |s: Scenario| move || s.build().unwrap();
    cases.push(("DCQCN over PFC", Box::new(sc(mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::Pfc, 2_000_000)))));
    cases.push(("lossy DCQCN", Box::new(sc(lossy_dcqcn()))));
    cases.push(("HPCC over PFC", Box::new(sc(mix(CcConfig::Hpcc(HpccConfig::default()), FcConfig::Pfc, 2_000_000)))));
    cases.push(("TCP with loss", Box::new(sc(tcp_lossy()))));
    cases.push(("TIMELY", Box::new(sc(mix(CcConfig::Timely(TimelyConfig::default()), FcConfig::Pfc, 2_000_000)))));
    cases.push(("Floodgate", Box::new(sc(mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::Floodgate(FloodgateConfig::default()), 2_000_000)))));
    let mut bfc = mix(CcConfig::None, FcConfig::Bfc(BfcConfig::default()), 2_000_000);
    bfc.net.switch.nqueues = 32;
    bfc.net.switch.lossless = false;
    cases.push(("BFC", Box::new(sc(bfc))));
    // cut mid-run: flows live at the end, flows never started, windows sampled
    let mut cut = mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::Pfc, 2_000_000);
    cut.net.stop_time = Some(Time::from_us(250));
    cut.net.record.buffer_interval = Some(Time::from_us(5));
    cut.net.record.cwnd_flows = (0..40).collect();
    cases.push(("cut at 250 us", Box::new(sc(cut))));
    let (t, flows) = multi_nic();
    cases.push((
        "multi-NIC",
        Box::new(move || {
            let mut net = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
            net.record.buffer_interval = None;
            Simulation::new(&t, &flows, net).unwrap()
        }),
    ));
    for (what, build) in &cases {
        let (freed, kept) = both(build);
        let r = &freed.stats;
        assert!(r.counters.flows >= 100, "{what}: a busy run ({} flows)", r.counters.flows);
        assert_same(r, &kept, what);
        // the freed run held no more states than flows were in flight at once
        assert_eq!(freed.flows.slots() as u64, r.diagnostics.peak_live_flows, "{what}");
        assert!(r.diagnostics.peak_live_flows < r.counters.flows, "{what}: {} states for {} flows", r.diagnostics.peak_live_flows, r.counters.flows);
        if *what == "cut at 250 us" {
            assert!(r.counters.flows_finished < r.counters.flows && !freed.flows.started(r.counters.flows as u32 - 1), "{what}: flows left unstarted");
            assert!(!r.cwnd.flow.is_empty());
        }
        eprintln!("{what}: {} flows, at most {} live, {} released late, {} CNPs", r.counters.flows, r.diagnostics.peak_live_flows, freed.flows.late_releases(), r.counters.cnps);
    }
}

#[test]
fn live_flow_states_follow_the_flows_in_flight_not_the_workload() {
    // WebSearch at 50% plus 12-to-1 incasts every 200 us over 3 ms on 32 hosts
    let mut net = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), fc: FcConfig::Pfc, ..Default::default() };
    net.record.buffer_interval = None;
    let sc = websearch_incastmix((8, 4, 2), 0.5, Time::from_us(3000), 12, (30_000, 40_000), Time::from_us(200), net);
    let mut sim = sc.build().unwrap();
    sim.run();
    sim.check_flow_packets();
    let (c, d) = (&sim.stats.counters, &sim.stats.diagnostics);
    assert_conserved(&sim.stats);
    assert!(c.flows > 500, "{} flows", c.flows);
    eprintln!("{} flows, at most {} live", c.flows, d.peak_live_flows);
    assert!(d.peak_live_flows * 5 < c.flows, "{} live states at the peak for {} flows", d.peak_live_flows, c.flows);
    // at the end only flows with packets still in the network hold state
    assert!(sim.flows.live_now() as u64 <= d.peak_packets_alive);
    // a finished flow's state is gone, and reading it by the old index path says so
    let done = (0..sim.flows.len() as u32).find(|&f| sim.flows.get(f).is_none()).expect("some flow was freed");
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.flows[done as usize].snd_una)).unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("was freed") && msg.contains("keep_finished_flows"), "{msg}");
    // its results are in the flows table
    assert_eq!(sim.stats.flows.delivered_bytes[done as usize], sim.stats.flows.size_bytes[done as usize]);
}

#[test]
fn packets_reaching_a_finished_sender_find_its_state() {
    // go-back-N under drops and DCQCN's CNPs, and TCP under loss: packets of finished senders
    // stay in the network (duplicate data the receiver answers, CNPs the controller sees)
    for (what, sc) in [("lossy DCQCN", lossy_dcqcn()), ("TCP with loss", tcp_lossy())] {
        let (freed, kept) = both(|| sc.build().unwrap());
        let r = &freed.stats;
        assert!(r.counters.drops + r.counters.drops_loss > 0, "{what}: the run loses packets");
        assert!(freed.flows.late_releases() > 0, "{what}: no flow outlived its sender");
        assert_same(r, &kept, what);
    }
}


#[test]
fn flow_rows_leave_through_the_sink_while_flows_run() {
    // the rows of freed flows go to the sink as they come; sorted by flow id, they and the rows
    // left at the end (live flows, flows never started) are the table a run without a sink builds
    let mut cut = mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::Pfc, 2_000_000);
    cut.net.stop_time = Some(Time::from_us(250));
    let cases = [("DCQCN over PFC", mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::Pfc, 2_000_000)), ("lossy DCQCN", lossy_dcqcn()), ("TCP with loss", tcp_lossy()), ("cut at 250 us", cut)];
    for (what, sc) in cases {
        let mut plain = sc.build().unwrap();
        plain.run();
        let whole = plain.stats.clone();
        // (chunks handed over, the latest finish time among the rows of each)
        let got: Arc<Mutex<(FlowTable, Vec<(usize, u64)>)>> = Arc::default();
        let into = got.clone();
        let sink: Sink = Box::new(move |s: &RunStats| {
            let mut g = into.lock().unwrap();
            g.0.append(&s.flows);
            let last = s.flows.finish_ps.iter().copied().filter(|&t| t != u64::MAX).max().unwrap_or(0);
            g.1.push((s.flows.len(), last));
            true
        });
        let mut sim = sc.build().unwrap();
        sim.set_watch(Watch::with_sink(sink, 20));
        sim.run();
        sim.check_flow_packets();
        let (mut rows, chunks) = std::mem::take(&mut *got.lock().unwrap());
        let left = sim.stats.flows.len();
        rows.append(&sim.stats.flows);
        rows.sort_by_flow();
        assert_eq!(format!("{:?}", rows), format!("{:?}", whole.flows), "{what}: the flow rows differ");
        assert_same(&sim.stats, &RunStats { flows: sim.stats.flows.clone(), ..whole.clone() }, what);
        // rows left while the run went on: the first chunk's flows had finished long before
        // flows that finished later (or never), and the end held only a chunk's worth
        let first_done = chunks.iter().find(|c| c.0 > 0).expect("rows before the end").1;
        let later = whole.flows.finish_ps.iter().filter(|&&t| t > first_done).count();
        assert!(later > 50, "{what}: {later} flows finished after the first chunk's ({chunks:?})");
        assert!(chunks.iter().filter(|c| c.0 > 0).count() >= 2, "{what}: {chunks:?}");
        // the rows of the flows not freed at the end (live, never started: most of the workload
        // in the cut run) leave a chunk at a time too; the run keeps less than a chunk
        assert!(left < 20, "{what}: {left} rows kept at the end");
        // no chunk much beyond the threshold (the rows of flows freed within one checkpoint's
        // events), the end's included: the cut run's hundred unfinished flows leave in chunks
        assert!(chunks.iter().all(|c| c.0 < 20 + 30), "{what}: {chunks:?}");
    }
}
