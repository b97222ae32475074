//! Flows made as they arrive (`Simulation::from_stream`, `net::arrivals`), which `Scenario::build`
//! uses, give the same run as the whole flow list added at assembly (`from_flows`), record for
//! record, module counters, event count and stop included; and the per-flow data they hold
//! follows the flows in flight, not the workload's length.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, hpcc::HpccConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::fc::bfc::BfcConfig;
use hopsim_core::fc::floodgate::FloodgateConfig;
use hopsim_core::fc::flowsail::FlowsailConfig;
use hopsim_core::params::{EcmpHash, EcnConfig};
use hopsim_core::progress::{Sink, Watch};
use hopsim_core::scenario::{Scenario, WorkloadSpec};
use hopsim_core::stats::latency::LatencyConfig;
use hopsim_core::stats::{FlowTable, RunStats, StopReason};
use hopsim_core::{Simulation, Time};
use std::sync::{Arc, Mutex};

/// WebSearch at 60% plus 8-to-1 incasts every 50 us on 16 hosts for `us`, `cc` over `fc`.
fn mix(cc: CcConfig, fc: FcConfig, us: u64) -> Scenario {
    let mut net = NetConfig { fc, cc, seed: 5, ..Default::default() };
    net.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 10_000, kmax_bytes: 50_000, pmax: 0.5, ref_rate: None };
    net.switch.lossless = net.fc.pauses();
    net.record.buffer_interval = Some(Time::from_us(20));
    websearch_incastmix((4, 4, 2), 0.6, Time::from_us(us), 8, (20_000, 60_000), Time::from_us(50), net)
}

/// Flows of 1 to 10 KB: thousands in a few hundred microseconds.
const SMALL_FLOWS: &str = "1000 0\n10000 1\n";

/// The scenario assembled from its whole flow list, as before flows were made as they arrive.
fn whole(sc: &Scenario) -> Simulation {
    let (topo, file_loss) = sc.topology.build_with_loss().unwrap();
    let flows = sc.workload.build_on(&sc.topology, &topo, sc.net.seed).unwrap();
    let mut net = sc.net.clone();
    net.faults.file_loss = file_loss;
    Simulation::from_flows(&topo, flows, net).unwrap()
}

/// Run with a sink of `chunk` rows (or none); the flows table sorted by flow id.
fn run(mut sim: Simulation, chunk: Option<usize>) -> (Simulation, RunStats) {
    let got: Arc<Mutex<FlowTable>> = Arc::default();
    if let Some(n) = chunk {
        let into = got.clone();
        let sink: Sink = Box::new(move |s: &RunStats| {
            into.lock().unwrap().append(&s.flows);
            true
        });
        sim.set_watch(Watch::with_sink(sink, n));
    }
    sim.run();
    sim.check_flow_packets();
    let mut stats = sim.stats.clone();
    let mut rows = std::mem::take(&mut *got.lock().unwrap());
    rows.append(&stats.flows);
    rows.sort_by_flow();
    stats.flows = rows;
    // (spilled time-growing tables left with the sink: compare what the run kept of them too)
    (sim, stats)
}

fn assert_same(a: &RunStats, b: &RunStats, what: &str) {
    // by their text: an unfinished flow's slowdown is NaN, which equals nothing
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows), "{what}: the flow records differ");
    assert!(a.counters == b.counters, "{what}: the counters differ (events included)");
    assert!(a.modules == b.modules, "{what}: the module counters differ: {:?} vs {:?}", a.modules, b.modules);
    assert!(a.ports == b.ports, "{what}: the port records differ");
    assert_eq!(format!("{:?}", a.latency), format!("{:?}", b.latency), "{what}: the latency records differ");
    assert_eq!(format!("{:?}", a.stop), format!("{:?}", b.stop), "{what}: the runs stopped differently");
    assert_eq!(format!("{:?}", a.pauses), format!("{:?}", b.pauses), "{what}: the pause logs differ");
}

#[test]
fn flows_made_as_they_arrive_give_the_run_of_the_whole_list() {
    let dcqcn = || CcConfig::Dcqcn(DcqcnConfig::default());
    let mut cases: Vec<(&str, Scenario)> = vec![("DCQCN over PFC", mix(dcqcn(), FcConfig::Pfc, 600))];
    let mut hpcc = mix(CcConfig::Hpcc(HpccConfig::default()), FcConfig::Pfc, 600);
    // the HPCC simulator's hash reads the source ports, numbered per host pair in flow order
    hpcc.net.routing.ecmp = EcmpHash::Hpcc;
    cases.push(("HPCC, HPCC's ECMP", hpcc));
    let mut cut = mix(dcqcn(), FcConfig::Pfc, 600);
    cut.net.stop_time = Some(Time::from_us(200));
    cases.push(("cut at 200 us", cut));
    // cut before the first flow: the module counters of flows that never started still name
    // their controller's counters
    let pulser = CcConfig::Pulser(hopsim_core::cc::pulser::PulserConfig::default());
    let mut early = mix(pulser, FcConfig::Pfc, 1000);
    let WorkloadSpec::IncastMix { background, .. } = early.workload.clone() else { unreachable!() };
    // (the background alone: the bursts start at 0)
    early.workload = WorkloadSpec::Background(background);
    early.net.stop_time = Some(Time(1));
    cases.push(("cut before any flow", early));
    let mut lat = mix(dcqcn(), FcConfig::Pfc, 300);
    lat.net.record.latency = Some(LatencyConfig { per_hop: true, ..Default::default() });
    cases.push(("per-hop latency", lat));
    cases.push(("Floodgate", mix(dcqcn(), FcConfig::Floodgate(FloodgateConfig::default()), 400)));
    let mut bfc = mix(CcConfig::None, FcConfig::Bfc(BfcConfig::default()), 400);
    bfc.net.switch.nqueues = 32;
    bfc.net.switch.lossless = false;
    cases.push(("BFC", bfc));
    cases.push(("Pulser's Ideal", mix(CcConfig::Ideal, FcConfig::None, 300)));
    // FlowSail's pauses name flows, some of them freed, with their chunk, before the pause
    // arrives: many small flows beside the incasts
    let mut fs = mix(CcConfig::None, FcConfig::Flowsail(FlowsailConfig::default()), 300);
    fs.net.switch.nqueues = 2;
    if let WorkloadSpec::IncastMix { background, .. } = &mut fs.workload {
        background.cdf = SMALL_FLOWS.into();
    }
    cases.push(("FlowSail", fs));
    // drops with no retransmission: the watchdog stops the run after its default wait, which
    // follows the largest base RTT of all flows, the ones not arrived yet included
    let mut stall = mix(dcqcn(), FcConfig::None, 300);
    stall.net.switch.buffer_bytes = 120_000;
    stall.net.host.rto = Time::ZERO;
    cases.push(("stalled", stall));
    for (what, sc) in &cases {
        for chunk in [None, Some(50)] {
            let (lazy, a) = run(sc.build().unwrap(), chunk);
            let (eager, b) = run(whole(sc), chunk);
            assert!(lazy.streams_flows() && !eager.streams_flows(), "{what}");
            assert_eq!(lazy.max_base_rtt(), eager.max_base_rtt(), "{what}: the watchdog waits as long");
            assert!(a.counters.flows >= 50, "{what}: {} flows", a.counters.flows);
            assert_same(&a, &b, &format!("{what}, sink {chunk:?}"));
            if *what == "FlowSail" {
                let (store, _, span) = lazy.peak_flow_chunks();
                let paused = a.modules.get("flowsail_pauses").copied().unwrap_or(0);
                assert!(paused > 100 && (chunk.is_none() || store < span), "{what}: {paused} flow pauses, {store} of {span} chunks held: {:?}", a.modules);
            }
            if *what == "cut before any flow" {
                assert!(a.counters.flows_finished == 0 && a.modules.contains_key("pulser_cuts"), "{what}: {:?}", a.modules);
            }
            if *what == "cut at 200 us" {
                assert!(lazy.flows.created() < lazy.flows.len() && a.counters.flows_finished < a.counters.flows, "{what}: flows never arrived");
            }
            if *what == "stalled" {
                // the watchdog's stop, not the event queue running dry
                assert!(a.stop.reason == StopReason::NoProgress && a.stop.message.contains("no data delivered for"), "{what}: {}", a.stop.message);
            }
        }
    }
}

#[test]
fn per_flow_data_follows_the_flows_in_flight_when_flows_are_made_as_they_arrive() {
    // flows of 1-10 KB at 60% of 16 hosts' links for 300 us: about 7,000 flows, a few dozen in
    // flight at once
    use hopsim_core::scenario::{Background, LoadOn};
    let mut sc = mix(CcConfig::Dcqcn(DcqcnConfig::default()), FcConfig::Pfc, 300);
    sc.net.record.buffer_interval = None;
    let cdf = SMALL_FLOWS.to_string();
    let arrival = hopsim_core::workload::arrivals::Arrival::Poisson;
    sc.workload = WorkloadSpec::Background(Background { cdf, load: 0.6, load_on: LoadOn::HostLinks, arrival, start: Time::ZERO, duration: Time::from_us(300), prio: 3, dst: None, rack_size: 0 });
    let (sim, r) = run(sc.build().unwrap(), Some(1000));
    let (store, memo, span) = sim.peak_flow_chunks();
    eprintln!("{} flows in {span} chunks, at most {} in flight; at most {store} chunks of fixed data and {memo} of route slots held", r.counters.flows, r.diagnostics.peak_live_flows);
    assert!(span >= 6, "{span} chunks");
    assert!(store <= 3 && memo <= 3, "{store} and {memo} of {span} chunks held at once");
    // the whole list holds every chunk of fixed data (the route slots it adds at assembly too)
    let (sim, b) = run(whole(&sc), Some(1000));
    assert_eq!(sim.peak_flow_chunks(), (span, span, span));
    assert_same(&r, &b, "small flows");
}
