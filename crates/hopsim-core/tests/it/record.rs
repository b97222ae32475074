//! The HPCC simulator's recorders (`stats::record`): PFC frames logged where they are received,
//! the queue-length histograms of `monitor_buffer`, and the per-packet switch trace.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::stats::RunStats;
use hopsim_core::stats::record::{QlenMonitorConfig, TraceConfig, EV_DEQUEUE, EV_DROP, EV_ECN, EV_ENQUEUE, TRACE_EVENTS};
use hopsim_core::topo::{dumbbell, Topology};
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};
use std::collections::BTreeMap;

/// Dumbbell: hosts 0..n on the left switch (node n + 1), host n on the right (node n + 2); every
/// link 100G, 1 us. The left switch's port onto the middle link is its local port n.
fn incast(n: u32) -> (Topology, Vec<FlowSpec>) {
    let t = dumbbell(n as usize, 1, Rate::gbps(100), Rate::gbps(100), Time::from_us(1));
    let flows = (0..n).map(|s| flow(s, n, 300_000, Time::from_us(1 + s as u64))).collect();
    (t, flows)
}

fn event(code: u8) -> &'static str {
    TRACE_EVENTS[code as usize]
}

/// Replays trace rows in order: per (node, port, queue) the bytes queued after each event must be
/// what the enqueues and dequeues so far add up to (valid when every packet of that queue is
/// traced).
fn assert_qlen_replays(r: &RunStats) {
    let t = &r.trace;
    let mut q: BTreeMap<(u32, u16, u16), u64> = BTreeMap::new();
    for i in 0..t.time_ps.len() {
        let b = q.entry((t.node[i], t.port[i], t.queue[i])).or_default();
        match t.event[i] {
            EV_ENQUEUE => *b += t.size[i] as u64,
            EV_DEQUEUE => *b -= t.size[i] as u64,
            EV_DROP | EV_ECN => {}
            e => panic!("event code {e}"),
        }
        assert_eq!(t.qlen_bytes[i], *b, "row {i}: {} at node {} port {} t={}", event(t.event[i]), t.node[i], t.port[i], t.time_ps[i]);
    }
    assert!(q.values().all(|&b| b == 0), "every traced queue drains");
}

#[test]
fn one_flow_is_traced_at_each_hop_in_time_order_with_the_mmus_queue_lengths() {
    let (t, flows) = incast(2);
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    cfg.record.trace = Some(TraceConfig { flows: vec![1], ports: vec![] });
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let tr = &r.trace;
    assert!(tr.time_ps.windows(2).all(|w| w[0] <= w[1]), "rows in time order");
    assert!(tr.flow.iter().all(|&f| f == 1), "only the traced flow");
    // per packet (seq): enqueue and dequeue at the left switch (node 3), then at the right (4)
    let mut by_seq: BTreeMap<u64, Vec<(u32, u8, u64, u16)>> = BTreeMap::new();
    for i in 0..tr.time_ps.len() {
        by_seq.entry(tr.seq[i]).or_default().push((tr.node[i], tr.event[i], tr.time_ps[i], tr.port[i]));
    }
    let packets = 300_000u64.div_ceil(1000);
    assert_eq!(by_seq.len() as u64, packets);
    for (seq, ev) in &by_seq {
        let kinds: Vec<(u32, u8, u16)> = ev.iter().map(|e| (e.0, e.1, e.3)).collect();
        assert_eq!(kinds, vec![(3, EV_ENQUEUE, 2), (3, EV_DEQUEUE, 2), (4, EV_ENQUEUE, 0), (4, EV_DEQUEUE, 0)], "seq {seq}");
        // one hop later: serialisation at 100G plus 1 us
        let size = 1048u64.min(300_000 - seq + 48);
        let hop = Rate::gbps(100).tx_time(size).0 + Time::from_us(1).0;
        assert_eq!(ev[2].2, ev[1].2 + hop, "seq {seq}: left dequeue to right enqueue");
    }
    // queue lengths count flow 0's bytes too (it shares both queues): an enqueue leaves at least
    // the packet itself queued
    assert!(tr.qlen_bytes.iter().zip(&tr.size).zip(&tr.event).all(|((&q, &s), &e)| e != EV_ENQUEUE || q >= s as u64));
}

#[test]
fn a_traced_port_sees_every_packet_and_its_queue_lengths_replay_exactly() {
    let (t, flows) = incast(4);
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    cfg.record.trace = Some(TraceConfig { flows: vec![], ports: vec![(5, 4)] });
    // force marks: every departure leaving anything behind is marked
    cfg.switch.ecn.kmin_bytes = 0;
    cfg.switch.ecn.kmax_bytes = 0;
    cfg.switch.ecn.ref_rate = None;
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let tr = &r.trace;
    assert!(tr.node.iter().all(|&n| n == 5) && tr.port.iter().all(|&p| p == 4));
    let n = |e: u8| tr.event.iter().filter(|&&x| x == e).count();
    let packets = 4 * 300;
    assert_eq!((n(EV_ENQUEUE), n(EV_DEQUEUE)), (packets, packets));
    assert!(n(EV_ECN) > 0, "a queue built up");
    // an ECN row follows the dequeue of the same packet, with the same queue length
    for i in (0..tr.event.len()).filter(|&i| tr.event[i] == EV_ECN) {
        assert_eq!(tr.event[i - 1], EV_DEQUEUE);
        assert_eq!((tr.seq[i], tr.flow[i], tr.time_ps[i], tr.qlen_bytes[i]), (tr.seq[i - 1], tr.flow[i - 1], tr.time_ps[i - 1], tr.qlen_bytes[i - 1]));
        assert!(tr.qlen_bytes[i] > 0);
    }
    let peak = tr.qlen_bytes.iter().max().copied().unwrap();
    let row = r.ports.node.iter().zip(&r.ports.port).position(|(&n, &p)| (n, p) == (5, 4)).unwrap();
    assert_eq!(peak, r.ports.peak_queue_bytes[row], "one queue in use: its peak is the port's");
    assert_qlen_replays(&r);
}

#[test]
fn drops_are_traced_where_the_mmu_refuses() {
    let (t, flows) = incast(8);
    let mut cfg = NetConfig { fc: FcConfig::None, cc: CcConfig::None, ..Default::default() };
    cfg.switch.lossless = false;
    cfg.switch.buffer_bytes = 200_000;
    cfg.host.window = WindowConfig::Off;
    cfg.record.trace = Some(TraceConfig { flows: vec![], ports: vec![(9, 8)] });
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let drops = r.trace.event.iter().filter(|&&e| e == EV_DROP).count() as u64;
    assert!(drops > 0);
    assert_eq!(drops, r.counters.drops, "every drop is at the bottleneck port");
    let dropped: u64 = (0..r.trace.event.len()).filter(|&i| r.trace.event[i] == EV_DROP).map(|i| r.trace.size[i] as u64 - 48).sum();
    assert_eq!(dropped, r.counters.data_bytes_dropped);
    assert_qlen_replays(&r);
}

#[test]
fn recorders_do_not_change_a_run() {
    let (t, flows) = incast(6);
    let mut cfg = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    cfg.switch.buffer_bytes = 1_000_000;
    cfg.switch.ecn.kmin_bytes = 20_000;
    cfg.switch.ecn.kmax_bytes = 80_000;
    let off = run(&t, &flows, cfg.clone());
    cfg.record.qlen_monitor = Some(QlenMonitorConfig { dump_interval: Time::from_us(10), ..Default::default() });
    cfg.record.trace = Some(TraceConfig { flows: vec![0, 3], ports: vec![(7, 6), (8, 0)] });
    let on = run(&t, &flows, cfg);
    assert!(!on.qlen.count.is_empty() && !on.trace.time_ps.is_empty());
    assert!(off.qlen.count.is_empty() && off.trace.time_ps.is_empty());
    assert!(on.counters.pauses_sent > 0 && on.trace.event.contains(&EV_ECN), "pauses and marks happened");
    assert_eq!(on.flows, off.flows);
    assert_eq!(on.pauses, off.pauses);
    assert_eq!(on.control, off.control);
    assert_eq!(on.pfc_received, off.pfc_received);
    assert_eq!(on.ports, off.ports);
    assert_eq!(on.buffer, off.buffer);
    assert_eq!(on.counters, off.counters, "not one event more");
}

/// The monitor's histograms over a whole congested run equal those of a sampler that looks at
/// every 100 ns instant, replaying the port's queue from the packet trace; and they agree with the
/// queue-length series that sample events take at the same instants (`record.queue_ports`) except
/// at instants where a packet event falls exactly on a sample: the sample event of the series was
/// scheduled one interval earlier and may come first (as in the HPCC simulator), the monitor
/// sees the state after every event at that time.
#[test]
fn the_monitor_equals_a_sampler_at_every_instant_of_a_run() {
    let (t, flows) = incast(4);
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    let ports = vec![(5u32, 4u16), (6, 0)];
    cfg.record.buffer_interval = None;
    cfg.record.queue_ports = ports.clone();
    cfg.record.queue_interval = Time::from_ns(100);
    cfg.record.trace = Some(TraceConfig { flows: vec![], ports: ports.clone() });
    // dumps every 20 us, absolute time offset by 2 s; the last one is partial
    let offset = Time::from_secs_f64(2.0);
    cfg.record.qlen_monitor = Some(QlenMonitorConfig { time_offset: offset, dump_interval: Time::from_us(20), ..Default::default() });
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let q = &r.qlen;
    let dumps: Vec<u64> = q.dump_time_ps.iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let last_sample = r.counters.end_time_ps / 100_000 * 100_000;
    assert_eq!(*dumps.last().unwrap(), last_sample + offset.0, "a last partial dump at the last sample");
    assert!(dumps[..dumps.len() - 1].iter().enumerate().all(|(i, &d)| d == offset.0 + i as u64 * 20_000_000), "{dumps:?}");
    let (tr, series) = (&r.trace, &r.queues);
    let mut ties = 0;
    for (node, port) in ports {
        // the port's egress bytes after each change, from the trace
        let mut changes = vec![];
        let mut bytes = 0u64;
        for i in (0..tr.time_ps.len()).filter(|&i| (tr.node[i], tr.port[i]) == (node, port)) {
            match tr.event[i] {
                EV_ENQUEUE => bytes += tr.size[i] as u64,
                EV_DEQUEUE => bytes -= tr.size[i] as u64,
                _ => continue,
            }
            changes.push((tr.time_ps[i], bytes));
        }
        let mut want: BTreeMap<u32, u64> = BTreeMap::new();
        let mut sampled = vec![];
        let (mut next, mut value) = (0, 0u64);
        for g in (0..=last_sample).step_by(100_000) {
            while next < changes.len() && changes[next].0 <= g {
                value = changes[next].1;
                next += 1;
            }
            *want.entry((value / 1000) as u32).or_default() += 1;
            sampled.push((g, value));
        }
        let got: BTreeMap<u32, u64> = (0..q.kb.len())
            .filter(|&i| q.dump_time_ps[i] == last_sample + offset.0 && (q.node[i], q.port[i]) == (node, port))
            .map(|i| (q.kb[i], q.count[i]))
            .collect();
        assert_eq!(got, want, "node {node} port {port}");
        if node == 5 {
            assert!(got.len() > 10, "the bottleneck queue went through many sizes");
        }
        // the event-driven series: the same value at every instant but where a change falls on it
        let on_grid: std::collections::BTreeSet<u64> = changes.iter().map(|c| c.0).filter(|t| t % 100_000 == 0).collect();
        let mine: Vec<(u64, u64)> =
            (0..series.time_ps.len()).filter(|&i| (series.node[i], series.port[i]) == (node, port)).map(|i| (series.time_ps[i], series.bytes[i])).collect();
        assert_eq!(mine.len(), sampled.len());
        for (a, b) in mine.iter().zip(&sampled) {
            assert_eq!(a.0, b.0);
            if a.1 != b.1 {
                assert!(on_grid.contains(&a.0), "node {node} port {port}: {a:?} vs {b:?} with no change at that instant");
                ties += 1;
            }
        }
    }
    assert!(ties <= 3, "ties are rare: {ties}");
    // every switch port is in every dump (a sample is counted somewhere in each)
    let ports_per_dump = (0..q.kb.len()).filter(|&i| q.dump_time_ps[i] == dumps[0]).count();
    assert_eq!(ports_per_dump, 4 + 1 + 1 + 1, "5 ports at the left switch, 2 at the right, all empty at t = 0");
}

/// With an `end` the samples go on after the last flow finished, with the idle network, up to
/// the first grid instant at or after `end`, as the HPCC simulator running to its stop time does.
#[test]
fn a_monitor_with_an_end_samples_the_idle_network_after_the_run() {
    let (t, flows) = incast(2);
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    let mon = QlenMonitorConfig {
        start: Time::from_us(5),
        end: Some(Time::from_ns(1_000_050)),
        interval: Time::from_ns(100),
        dump_interval: Time::from_us(500),
        time_offset: Time::ZERO,
    };
    cfg.record.qlen_monitor = Some(mon);
    let r = run(&t, &flows, cfg);
    assert!(r.counters.end_time_ps < 1_000_000_000, "the run ends before `end`");
    let q = &r.qlen;
    let dumps: Vec<u64> = q.dump_time_ps.iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    // 500 us and 1 ms are dump instants; the last sample is at 1.0001 ms (the first at or after
    // `end`), written as a partial dump
    assert_eq!(dumps, vec![500_000_000, 1_000_000_000, 1_000_100_000]);
    let total = |d: u64, node: u32, port: u16| -> u64 {
        (0..q.kb.len()).filter(|&i| q.dump_time_ps[i] == d && (q.node[i], q.port[i]) == (node, port)).map(|i| q.count[i]).sum()
    };
    assert_eq!(total(500_000_000, 3, 2), (500_000 - 5_000) / 100 + 1);
    assert_eq!(total(1_000_100_000, 4, 0), (1_000_100 - 5_000) / 100 + 1);
}

/// A monitor whose `end` falls while the queues still change: the switch stops calling it after
/// its last instant (`Recorders::wants`), and its histograms are those of a run that keeps
/// calling it to the end (the trace on too keeps the calls going), dumps still due included.
#[test]
fn a_monitor_that_ends_mid_run_counts_as_one_called_to_the_end() {
    let (t, flows) = incast(4);
    let mon = QlenMonitorConfig {
        start: Time::ZERO,
        end: Some(Time::from_us(30)),
        interval: Time::from_ns(100),
        dump_interval: Time::from_us(20),
        time_offset: Time::ZERO,
    };
    let run_with = |trace: bool| {
        let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
        cfg.record.qlen_monitor = Some(mon.clone());
        // every port of the left switch (node 5), so the trace sees the bottleneck's changes
        cfg.record.trace = trace.then(|| TraceConfig { flows: vec![], ports: (0..5).map(|l| (5, l)).collect() });
        run(&t, &flows, cfg)
    };
    let (ended, called) = (run_with(false), run_with(true));
    let tr = &called.trace;
    let after = (0..tr.time_ps.len()).filter(|&i| tr.time_ps[i] > 30_000_000 && tr.event[i] != EV_ECN).count();
    assert!(after > 100, "the queues change after the monitor's end: {after} trace rows");
    assert_eq!(ended.qlen, called.qlen);
    // dumps at 0 and 20 us and at the last instant (30 us); every port counts each of the 301
    // instants
    let q = &ended.qlen;
    let dumps: std::collections::BTreeSet<u64> = q.dump_time_ps.iter().copied().collect();
    assert_eq!(dumps.into_iter().collect::<Vec<_>>(), vec![0, 20_000_000, 30_000_000]);
    let total: u64 = (0..q.kb.len()).filter(|&i| q.dump_time_ps[i] == 30_000_000 && (q.node[i], q.port[i]) == (5, 4)).map(|i| q.count[i]).sum();
    assert_eq!(total, 301);
    let busy = (0..q.kb.len()).filter(|&i| q.dump_time_ps[i] == 30_000_000 && (q.node[i], q.port[i]) == (5, 4) && q.kb[i] > 0).count();
    assert!(busy > 5, "the bottleneck queue went through several sizes before the end: {busy}");
}

#[test]
fn pfc_frames_are_logged_where_they_arrive() {
    // 8 senders into one receiver behind a 25G link: the right switch pauses the left one, the
    // left one pauses the senders (hosts)
    let mut t = dumbbell(8, 1, Rate::gbps(100), Rate::gbps(100), Time::from_us(1));
    let li = t.links.iter().position(|l| l.a == 8 || l.b == 8).unwrap();
    t.links[li].rate = Rate::gbps(25);
    let flows: Vec<FlowSpec> = (0..8).map(|s| flow(s, 8, 200_000, Time::from_us(1))).collect();
    let mut cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    cfg.switch.buffer_bytes = 1_000_000;
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    let r = sim.run().clone();
    assert_conserved(&r);
    let rx = &r.pfc_received;
    assert!(rx.is_switch.contains(&true) && rx.is_switch.contains(&false), "switches and hosts received frames");
    // every frame sent arrives at the other end of its link, in order, one wire time later
    // per sending (node, port): (time, priority, pause) of each frame
    type Frames = BTreeMap<(u32, u16), Vec<(u64, u8, bool)>>;
    let mut sent = Frames::new();
    for i in 0..r.pauses.time_ps.len() {
        sent.entry((r.pauses.node[i], r.pauses.port[i])).or_default().push((r.pauses.time_ps[i], r.pauses.prio[i], r.pauses.quanta[i] > 0));
    }
    let mut got = Frames::new();
    for i in 0..rx.time_ps.len() {
        // the sender is the port at the other end: global ports 2l and 2l + 1 are a link's ends
        let p = sim.port_of(rx.node[i], rx.port[i]).unwrap() ^ 1;
        let from = (sim.ports[p as usize].node, sim.ports[p as usize].local);
        got.entry(from).or_default().push((rx.time_ps[i], rx.prio[i], rx.pause[i]));
        let is_switch = rx.node[i] >= 9;
        assert_eq!(rx.is_switch[i], is_switch);
    }
    assert_eq!(sent.keys().collect::<Vec<_>>(), got.keys().collect::<Vec<_>>());
    for (k, s) in &sent {
        let g = &got[k];
        assert!(g.len() <= s.len() && g.len() + 1 >= s.len(), "{k:?}: all but one in flight at the end arrived");
        for (a, b) in s.iter().zip(g) {
            assert_eq!((a.1, a.2), (b.1, b.2));
            assert!(b.0 > a.0 + Time::from_us(1).0, "{k:?}: received {} after sent {}", b.0, a.0);
        }
    }
}
