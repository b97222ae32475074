//! A watch's sink (`progress::Sink`) takes the tables that grow with simulated time (and the
//! flows table's rows, as flows are freed) in chunks while the run goes on: what it is handed,
//! followed by what is left at the end, is exactly what an unwatched run keeps (the flows table's
//! rows once sorted by flow id), and no chunk holds much more than the threshold.

use crate::common::*;
use hopsim_core::cc::CcConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::progress::Watch;
use hopsim_core::stats::record::TraceConfig;
use hopsim_core::stats::RunStats;
use hopsim_core::topo::dumbbell;
use hopsim_core::{Rate, Simulation, Time};
use std::sync::{Arc, Mutex};

fn append(into: &mut RunStats, from: &RunStats) {
    let (a, b) = (&mut into.buffer, &from.buffer);
    a.switch_time_ps.extend(&b.switch_time_ps);
    a.switch_node.extend(&b.switch_node);
    a.switch_bytes.extend(&b.switch_bytes);
    a.port_time_ps.extend(&b.port_time_ps);
    a.port_row.extend(&b.port_row);
    a.port_bytes.extend(&b.port_bytes);
    a.port_tx_bytes.extend(&b.port_tx_bytes);
    a.port_active.extend(&b.port_active);
    let (a, b) = (&mut into.queues, &from.queues);
    a.time_ps.extend(&b.time_ps);
    a.node.extend(&b.node);
    a.port.extend(&b.port);
    a.bytes.extend(&b.bytes);
    let (a, b) = (&mut into.trace, &from.trace);
    a.time_ps.extend(&b.time_ps);
    a.node.extend(&b.node);
    a.port.extend(&b.port);
    a.queue.extend(&b.queue);
    a.event.extend(&b.event);
    a.flow.extend(&b.flow);
    a.seq.extend(&b.seq);
    a.size.extend(&b.size);
    a.qlen_bytes.extend(&b.qlen_bytes);
    into.flows.append(&from.flows);
}

#[test]
fn chunks_handed_to_the_sink_add_up_to_the_unwatched_tables() {
    let n = 8u32;
    let t = dumbbell(n as usize, 1, Rate::gbps(100), Rate::gbps(100), Time::from_us(1));
    let flows: Vec<_> = (0..n).map(|s| flow(s, n, 400_000, Time::from_us(1 + s as u64))).collect();
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    cfg.record.buffer_interval = Some(Time::from_ns(200));
    cfg.record.queue_ports = vec![(n + 1, n as u16)];
    cfg.record.queue_interval = Time::from_ns(100);
    cfg.record.trace = Some(TraceConfig { flows: vec![2], ports: vec![] });
    let whole = run(&t, &flows, cfg.clone());
    assert!(whole.spill_rows() > 5_000, "enough rows to need several chunks: {}", whole.spill_rows());

    let got: Arc<Mutex<(RunStats, Vec<usize>)>> = Arc::default();
    let into = got.clone();
    let mut sim = Simulation::new(&t, &flows, cfg).expect("scenario builds");
    let mut watch = Watch::default();
    watch.spill_rows = 1000;
    watch.sink = Some(Box::new(move |s: &RunStats| {
        let mut g = into.lock().unwrap();
        append(&mut g.0, s);
        g.1.push(s.spill_rows());
        true
    }));
    sim.set_watch(watch);
    let left = sim.run().clone();
    let (mut spilled, chunks) = std::mem::take(&mut *got.lock().unwrap());
    assert!(chunks.len() >= 3, "several chunks: {chunks:?}");
    // a chunk is handed over after the sample (or checkpoint) that filled it: at most one
    // sample's rows beyond the threshold, plus the trace rows of one checkpoint's events
    assert!(chunks.iter().all(|&c| (1000..1000 + 2 * 4096).contains(&c)), "{chunks:?}");
    append(&mut spilled, &left);
    assert_eq!(spilled.buffer, whole.buffer);
    assert_eq!(spilled.queues, whole.queues);
    assert_eq!(spilled.trace, whole.trace);
    // the flows table's rows come in release order: in flow-id order they are the unwatched run's
    spilled.flows.sort_by_flow();
    assert_eq!(spilled.flows, whole.flows);
    // and the rest of the results are those of the unwatched run
    assert_eq!(left.counters, whole.counters);
}

#[test]
fn a_sink_that_refuses_stops_the_run() {
    let n = 4u32;
    let t = dumbbell(n as usize, 1, Rate::gbps(100), Rate::gbps(100), Time::from_us(1));
    let flows: Vec<_> = (0..n).map(|s| flow(s, n, 2_000_000, Time::from_us(1))).collect();
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    cfg.record.buffer_interval = Some(Time::from_ns(100));
    let mut sim = Simulation::new(&t, &flows, cfg).expect("scenario builds");
    let mut watch = Watch::default();
    watch.spill_rows = 100;
    watch.sink = Some(Box::new(|_: &RunStats| false));
    sim.set_watch(watch);
    let r = sim.run();
    assert_eq!(r.stop.reason.name(), "interrupted");
    assert!(r.counters.flows_finished < r.counters.flows);
}
