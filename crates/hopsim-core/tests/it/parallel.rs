//! The engine split over threads gives the one-thread run's tables, row for row: busy fabrics
//! under each scheme, run on 1, 2, 3 and 8 threads and on partitions given by hand.

use crate::common::*;
use hopsim_core::cc::CcConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::engine::run_threads;
use hopsim_core::fc::FcConfig;
use hopsim_core::progress::Watch;
use hopsim_core::scenario::Scenario;
use hopsim_core::stats::{FlowTable, RunStats};
use hopsim_core::Time;

/// A 4-ToR, 2-spine leaf-spine of 8 hosts a ToR, 2 MB of buffer a switch, with WebSearch at
/// 60% and 24-to-1 incasts every 50 us, 200 us of arrivals, sampled every 5 us.
pub fn busy(net: NetConfig) -> Scenario {
    let mut net = net;
    net.record.buffer_interval = Some(Time::from_us(5));
    net.record.queue_ports = vec![(32, 0), (33, 1), (35, 8)];
    net.record.cwnd_flows = vec![0, 3, 7, 20];
    if net.switch.buffer_bytes > 2_000_000 {
        net.switch.buffer_bytes = 2_000_000;
    }
    websearch_incastmix((8, 4, 2), 0.6, Time::from_us(200), 24, (50_000, 150_000), Time::from_us(50), net)
}

/// A lossless fabric under `fc` and `cc`, with the AQM `cc` is designed with (HPCC's INT
/// records), as a scenario's `aqm.int = "auto"` gives it.
fn lossless(fc: FcConfig, cc: CcConfig) -> NetConfig {
    let mut n = NetConfig { fc, cc, ..Default::default() };
    n.switch.lossless = n.fc.pauses();
    n.aqm = n.cc.aqm();
    n
}

pub fn on(sc: &Scenario, threads: usize, plan: Option<Vec<u16>>) -> RunStats {
    let (stats, split) = run_threads(&|| sc.build(), threads, plan, Watch::default()).expect("runs");
    assert_eq!(split.note, None, "{threads} threads");
    stats
}

/// Every table of `b` equals `a`'s, naming the first that differs.
pub fn assert_same(a: &RunStats, b: &RunStats, what: &str) {
    assert_eq!(a.flows, b.flows, "{what}: flows");
    assert_eq!(a.pauses, b.pauses, "{what}: pauses");
    assert_eq!(a.control, b.control, "{what}: control");
    assert_eq!(a.buffer, b.buffer, "{what}: buffer samples");
    assert_eq!(a.queues, b.queues, "{what}: queue samples");
    assert_eq!(a.cwnd, b.cwnd, "{what}: cwnd samples");
    assert_eq!(a.module_samples, b.module_samples, "{what}: module samples");
    assert_eq!(a.module_metrics, b.module_metrics, "{what}: module metrics");
    assert_eq!(a.ports, b.ports, "{what}: ports");
    assert_eq!(a.modules, b.modules, "{what}: module counters");
    assert_eq!(a.pfc_received, b.pfc_received, "{what}: PFC frames received");
    assert_eq!(a.qlen, b.qlen, "{what}: queue-length histograms");
    assert_eq!(a.trace, b.trace, "{what}: trace");
    assert_eq!(a.latency, b.latency, "{what}: latency");
    // every counter (the engine's own peaks, which depend on the split, are `diagnostics`)
    assert_eq!(a.counters, b.counters, "{what}: counters");
    assert_eq!(a.stop, b.stop, "{what}: stop");
}

pub fn identical_on_any_threads(sc: &Scenario, name: &str) -> RunStats {
    let one = on(sc, 1, None);
    assert!(one.counters.flows > 20 && one.counters.flows_finished == one.counters.flows, "{name}: a busy run that finishes");
    for t in [2, 3, 8] {
        let split = on(sc, t, None);
        assert_same(&one, &split, &format!("{name} on {t} threads"));
        assert_freed(&split, &format!("{name} on {t} threads"));
    }
    one
}

/// A split run frees each flow's halves once nothing can touch it (`engine::release`): at the
/// end only flows that finished in the run's last microseconds (whose last packets may still be
/// out, or whose decision is a window or two away) hold state, at most one per half.
pub fn assert_freed(r: &RunStats, what: &str) {
    let end = r.counters.end_time_ps;
    let recent = r.flows.ack_finish_ps.iter().filter(|&&t| t != u64::MAX && t + 5_000_000 >= end).count() as u64;
    let unfinished = r.flows.ack_finish_ps.iter().filter(|&&t| t == u64::MAX).count() as u64;
    let held = r.diagnostics.live_flows_at_end;
    assert!(held <= 2 * (recent + unfinished), "{what}: {held} flow states held at the end, {recent} flows finished in its last 5 us, {unfinished} unfinished");
}

#[test]
fn dcqcn_with_pfc_is_identical_on_1_2_3_and_8_threads() {
    let r = identical_on_any_threads(&busy(lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default()))), "DCQCN + PFC");
    assert!(r.counters.cnps > 0 && r.counters.pauses_sent > 0, "the run marks and pauses: {:?}", r.counters);
}

#[test]
fn hpcc_with_int_is_identical_on_1_2_3_and_8_threads() {
    identical_on_any_threads(&busy(lossless(FcConfig::Pfc, CcConfig::Hpcc(Default::default()))), "HPCC");
}

#[test]
fn bfc_is_identical_on_1_2_3_and_8_threads() {
    let mut n = lossless(FcConfig::Bfc(Default::default()), CcConfig::None);
    n.switch.nqueues = 32;
    identical_on_any_threads(&busy(n), "BFC");
}

#[test]
fn floodgate_practical_and_ideal_are_identical_on_1_2_3_and_8_threads() {
    use hopsim_core::fc::floodgate::FloodgateConfig;
    let practical = FloodgateConfig::default();
    identical_on_any_threads(&busy(lossless(FcConfig::Floodgate(practical.clone()), CcConfig::Dcqcn(Default::default()))), "practical Floodgate");
    let ideal = FloodgateConfig { ideal: true, ..practical };
    identical_on_any_threads(&busy(lossless(FcConfig::Floodgate(ideal), CcConfig::Dcqcn(Default::default()))), "ideal Floodgate");
}

#[test]
fn flowsail_is_identical_on_1_2_3_and_8_threads() {
    identical_on_any_threads(&busy(lossless(FcConfig::Flowsail(Default::default()), CcConfig::None)), "FlowSail");
}

#[test]
fn dctcp_rate_over_a_lossy_fabric_is_identical_on_1_2_3_and_8_threads() {
    let mut n = NetConfig { cc: CcConfig::DctcpRate(Default::default()), ..Default::default() };
    n.switch.buffer_bytes = 150_000;
    n.switch.lossless = false;
    let r = identical_on_any_threads(&busy(n), "rate DCTCP, lossy");
    assert!(r.counters.drops > 0, "the small buffer drops");
}

/// Per-packet latency histograms (end to end by incast tag and size, and queueing per hop)
/// split: each partition counts what its hosts receive and its switches queue, and the bucket
/// counts add up before the percentiles are taken.
#[test]
fn latency_histograms_are_identical_on_1_2_3_and_8_threads() {
    use hopsim_core::stats::latency::LatencyConfig;
    let mut n = lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default()));
    n.record.latency = Some(LatencyConfig { size_edges: vec![10_000, 100_000], per_hop: true, ..Default::default() });
    let r = identical_on_any_threads(&busy(n), "latency");
    let l = &r.latency;
    assert!(l.class.len() > 8 && l.class.iter().any(|c| c.starts_with("queueing at tor-up, incast")), "{:?}", l.class);
    assert!(l.p99_ps[0] > l.p50_ps[0], "a tail: {l:?}");
}

/// Random loss on every link splits: each wire's losses are drawn where its packets arrive, from
/// its own stream; DCQCN's go-back-N repairs them the same way on any thread count.
#[test]
fn dcqcn_over_lossy_links_is_identical_on_1_2_3_and_8_threads() {
    let mut n = NetConfig { cc: CcConfig::Dcqcn(Default::default()), ..Default::default() };
    n.switch.lossless = false;
    n.faults.loss_rate = 0.002;
    let r = identical_on_any_threads(&busy(n), "DCQCN, 0.2% loss");
    assert!(r.counters.drops_loss > 20 && r.counters.nacks > 0, "{:?}", r.counters);
}

/// A plan given by hand: spines in one partition, every ToR with its hosts in another (five
/// partitions for 36 nodes), and every node in its own partition where it may be.
#[test]
fn partitions_given_by_hand_give_the_same_tables() {
    let sc = busy(lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default())));
    let one = on(&sc, 1, None);
    let topo = sc.topology.build().expect("topology");
    // leaf-spine numbering: hosts 0-31, ToRs 32-35, spines 36-37
    let tor_of = |n: usize| if n < 32 { n / 8 } else { n - 32 };
    let by_tor: Vec<u16> = (0..topo.nodes.len()).map(|n| if n >= 36 { 4 } else { tor_of(n) as u16 }).collect();
    assert_same(&one, &on(&sc, 5, Some(by_tor)), "ToRs apart, spines together");
    let spread: Vec<u16> = (0..topo.nodes.len()).map(|n| if n >= 36 { (n - 32) as u16 } else { tor_of(n) as u16 }).collect();
    assert_same(&one, &on(&sc, 6, Some(spread)), "every switch apart");
}

/// What must run whole says so, and runs right.
#[test]
fn a_run_that_cannot_be_split_says_why_and_runs_on_one_thread() {
    let sc = busy(NetConfig { cc: CcConfig::Ideal, ..Default::default() });
    let (stats, split) = run_threads(&|| sc.build(), 4, None, Watch::default()).expect("runs");
    assert_eq!(split.threads, 1);
    assert!(split.note.as_deref().is_some_and(|n| n.contains("Ideal")), "{:?}", split.note);
    assert_same(&on(&sc, 1, None), &stats, "Pulser's Ideal");
}

/// Links shorter than the shortest useful window are never cut: a fabric of 1 ns links keeps
/// the whole network in one partition and says why, with the one-thread run's tables; a fabric
/// with one such link still splits, its ends together.
#[test]
fn links_shorter_than_a_useful_window_are_never_cut() {
    use hopsim_core::scenario::TopologySpec;
    let mut sc = busy(lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default())));
    let TopologySpec::LeafSpine(l) = &mut sc.topology else { unreachable!() };
    l.fabric_delay = Time(1_000);
    let (stats, split) = run_threads(&|| sc.build(), 4, None, Watch::default()).expect("runs");
    assert_eq!(split.threads, 1);
    assert!(split.note.as_deref().is_some_and(|n| n.contains("shorter than 100ns")), "{:?}", split.note);
    assert_same(&on(&sc, 1, None), &stats, "1 ns fabric");
    // a plan given by hand may not cut one either
    let topo = sc.topology.build().expect("topology");
    let by_tor: Vec<u16> = (0..topo.nodes.len()).map(|n| if n >= 36 { 0 } else if n < 32 { (n / 8) as u16 } else { (n - 32) as u16 }).collect();
    let err = run_threads(&|| sc.build(), 4, Some(by_tor), Watch::default()).err().expect("refused");
    assert!(err.contains("shorter than the shortest window"), "{err}");
}

/// A stop asked before a split run starts ends it before its first window: every partition
/// reads the stop flag, not only the first after its own 16,384 events.
#[test]
fn a_split_run_hears_a_stop_before_its_first_window() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let sc = busy(lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default())));
    let flag = Arc::new(AtomicBool::new(true));
    let (stats, split) = run_threads(&|| sc.build(), 3, None, Watch::with_flag(flag)).expect("runs");
    assert_eq!(split.threads, 3);
    assert_eq!(stats.stop.reason.name(), "interrupted");
    assert!(stats.stop.message.ends_with("after 0 events"), "{}", stats.stop.message);
}

/// The time-growing tables a split run hands to the sink, chunk by chunk, then what is left:
/// the one-thread run's tables, row for row, and no chunk much above the threshold: a long run
/// on many threads holds no more of its samples and logs than on one. Floodgate for module
/// samples and control frames, DCQCN over PFC for pauses.
#[test]
fn a_split_run_gives_the_sink_its_samples_and_logs_in_chunks() {
    use hopsim_core::fc::floodgate::FloodgateConfig;
    let floodgate = busy(lossless(FcConfig::Floodgate(FloodgateConfig::default()), CcConfig::Dcqcn(Default::default())));
    let whole = chunks_add_up(&floodgate, "Floodgate");
    assert!(!whole.module_samples.time_ps.is_empty() && !whole.control.time_ps.is_empty(), "samples and control frames");
    let pfc = busy(lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default())));
    let whole = chunks_add_up(&pfc, "DCQCN + PFC");
    assert!(!whole.pauses.time_ps.is_empty() && !whole.pfc_received.time_ps.is_empty(), "pauses");
}

/// With a sink, a split run writes each freed flow's row whole where its sender is, the
/// receiver's finish and bytes and every partition's drops put in (`engine::release`): rows
/// row for row the one-thread run's, where the flows' packets are dropped (small lossy buffers,
/// a lossy fabric under rate DCTCP) and where a scheme pauses flows (FlowSail).
#[test]
fn a_split_run_with_a_sink_writes_each_flows_row_whole() {
    let mut small = NetConfig { cc: CcConfig::DctcpRate(Default::default()), ..Default::default() };
    small.switch.buffer_bytes = 150_000;
    small.switch.lossless = false;
    let whole = chunks_add_up(&busy(small.clone()), "rate DCTCP, lossy");
    assert!(whole.flows.dropped_bytes.iter().any(|&b| b > 0), "drops charged to flows");
    // stopped with flows in flight: the rows of those left are merged from their halves; with
    // no window samples the flows are made as they arrive, and those that never did get rows too
    small.stop_time = Some(Time::from_us(150));
    let cut = chunks_add_up(&busy(small.clone()), "rate DCTCP, lossy, stopped at 150 us");
    assert!(cut.counters.flows_finished > 0 && cut.counters.flows_finished < cut.counters.flows, "{:?}", cut.counters);
    let mut streamed = busy(small);
    streamed.net.record.cwnd_flows.clear();
    let cut = chunks_add_up(&streamed, "rate DCTCP, lossy, flows made as they arrive, stopped at 150 us");
    assert!(cut.flows.start_ps.iter().any(|&t| t > 150_000_000), "flows that never arrived have rows");
    let mut lossy = NetConfig { cc: CcConfig::Dcqcn(Default::default()), ..Default::default() };
    lossy.switch.lossless = false;
    lossy.faults.loss_rate = 0.002;
    chunks_add_up(&busy(lossy), "DCQCN, 0.2% loss");
    chunks_add_up(&busy(lossless(FcConfig::Flowsail(Default::default()), CcConfig::None)), "FlowSail");
}

fn chunks_add_up(sc: &Scenario, name: &str) -> RunStats {
    use std::sync::{Arc, Mutex};
    let whole = on(sc, 1, None);
    for threads in [1, 3] {
        let what = format!("{name} on {threads} threads");
        let got: Arc<Mutex<(RunStats, Vec<usize>, usize)>> = Arc::default();
        let into = got.clone();
        let mut watch = Watch::default();
        watch.spill_rows = 2000;
        watch.sink = Some(Box::new(move |s: &RunStats| {
            let mut g = into.lock().unwrap();
            add(&mut g.0, s);
            g.1.push(s.spill_rows() - s.flows.len());
            g.2 += s.flows.len();
            true
        }));
        let (left, _) = run_threads(&|| sc.build(), threads, None, watch).expect("runs");
        let (mut all, chunks, early_rows) = std::mem::take(&mut *got.lock().unwrap());
        // (a run stopped early is short: a chunk or two, and most rows left at the end)
        let ran_out = whole.counters.flows_finished == whole.counters.flows;
        assert!(chunks.len() >= if ran_out { 3 } else { 1 }, "{what}: several chunks: {chunks:?}");
        // freed flows' rows leave with the chunks, whole, as one thread's do
        assert!(!ran_out || early_rows * 2 > whole.flows.len(), "{what}: {early_rows} of {} flows' rows before the end", whole.flows.len());
        assert!(chunks.iter().all(|&c| c < 2000 + 20_000), "{what}: {chunks:?}");
        add(&mut all, &left);
        assert_eq!(all.buffer, whole.buffer, "{what}: buffer samples");
        assert_eq!(all.queues, whole.queues, "{what}: queue samples");
        assert_eq!(all.pauses, whole.pauses, "{what}: pauses");
        assert_eq!(all.control, whole.control, "{what}: control");
        assert_eq!(all.pfc_received, whole.pfc_received, "{what}: PFC frames received");
        assert_eq!(all.module_samples, whole.module_samples, "{what}: module samples");
        assert_eq!(left.module_metrics, whole.module_metrics, "{what}: module metrics");
        assert_eq!(left.counters.flows_finished, whole.counters.flows_finished, "{what}");
        all.flows.sort_by_flow();
        // (an unfinished flow's slowdown is NaN, equal to nothing: compared as a sentinel)
        let unnan = |t: &FlowTable| {
            let mut t = t.clone();
            t.slowdown.iter_mut().filter(|x| x.is_nan()).for_each(|x| *x = -1.0);
            t
        };
        assert_eq!(unnan(&all.flows), unnan(&whole.flows), "{what}: flows");
    }
    return whole;

    fn add(into: &mut RunStats, from: &RunStats) {
        into.flows.append(&from.flows);
        into.buffer.append_rows(&from.buffer);
        into.queues.append_rows(&from.queues);
        into.pauses.append_rows(&from.pauses);
        into.control.append_rows(&from.control);
        into.pfc_received.append_rows(&from.pfc_received);
        into.module_samples.append_rows(&from.module_samples);
    }
}

/// Links going down and up split: every partition applies each event at its time and routes
/// again, and a cut wire's packets in flight at a failure are dropped where they arrive (those
/// already on the far side's ring and those still messages of the window being run) as one
/// thread drops them. Off the windows' grid, so that a window's messages are in flight at each
/// failure: a spine link down for 90 us, another down for half a microsecond (back up
/// within a window, so what it carries after is not doomed), a host's link down for 20 us.
#[test]
fn links_going_down_and_up_are_identical_on_1_2_3_and_8_threads() {
    use hopsim_core::params::{LinkEvent, LinkState};
    let ev = |us: f64, link: (u32, u32), state| LinkEvent { at: Time::from_ns((us * 1000.0) as u64), link, state };
    let mut n = lossless(FcConfig::Pfc, CcConfig::Dcqcn(Default::default()));
    n.faults.link_events = vec![
        ev(60.3, (32, 36), LinkState::Down),
        ev(80.2, (33, 37), LinkState::Down),
        ev(80.7, (33, 37), LinkState::Up),
        ev(100.4, (0, 32), LinkState::Down),
        ev(120.6, (0, 32), LinkState::Up),
        ev(150.1, (32, 36), LinkState::Up),
    ];
    let sc = busy(n);
    let one = on(&sc, 1, None);
    assert!(one.counters.drops_link_down > 20, "packets lost to the failures: {:?}", one.counters);
    for t in [2, 3, 8] {
        let (stats, split) = run_threads(&|| sc.build(), t, None, Watch::default()).expect("runs");
        assert!(split.threads > 1 && split.note.is_none(), "{t} threads: split {split:?}");
        assert_same(&one, &stats, &format!("link events on {t} threads"));
    }
}
