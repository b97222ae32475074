//! The queue-level flow-control substrate, end to end, with small test modules plugged into a real
//! network: a queue-pause frame stops only the packets of that upstream queue (found through the
//! upstreamQ tag the upstream switch stamps); a destination pause stops only that destination's
//! flows at the NIC; a flow pause stops one flow; order markers hold a queue until their twin
//! leaves. These are the engine features BFC, Floodgate and FlowSail are built on.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::nic::{AnyNic, NicFc};
use hopsim_core::fc::{Actions, AnyFc, CtrlKind, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, SwitchView};
use hopsim_core::stats::RunStats;
use hopsim_core::topo::{NodeKind, Topology};
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

const H0: u32 = 0;
const H1: u32 = 1;
const S0: u32 = 2;
const S1: u32 = 3;
const H2: u32 = 4;
const H3: u32 = 5;

/// H0, H1 -> S0 -> S1 -> H2, H3, every link 100 Gb/s and 1 us. S0's local ports: 0 to H0, 1 to H1,
/// 2 to S1; S1's: 0 to S0, 1 to H2, 2 to H3.
fn net() -> Topology {
    let mut t = Topology::default();
    for k in [NodeKind::Host, NodeKind::Host, NodeKind::Switch { tier: 0 }, NodeKind::Switch { tier: 0 }, NodeKind::Host, NodeKind::Host] {
        t.add_node(k);
    }
    let (r, d) = (Rate::gbps(100), Time::from_us(1));
    t.add_link(H0, S0, r, d);
    t.add_link(H1, S0, r, d);
    t.add_link(S0, S1, r, d);
    t.add_link(S1, H2, r, d);
    t.add_link(S1, H3, r, d);
    t
}

fn cfg() -> NetConfig {
    let mut c = NetConfig::default();
    c.switch.buffer_bytes = 32_000_000;
    c.switch.alpha = 8.0;
    c.record.buffer_interval = None;
    c
}

fn spec(src: u32, dst: u32, prio: u8) -> FlowSpec {
    FlowSpec { prio, ..flow(src, dst, 2_000_000, Time::ZERO) }
}

/// A module that stamps upstreamQ on departing packets and fires scripted actions at given times.
#[derive(Default)]
struct Scripted {
    stamp: bool,
    script: Vec<(Time, FcAction)>,
    /// Downstream half of a per-queue pause: pause the upstream queue named by the upstreamQ tag
    /// of the first packet from it seen at or after `watch.0`, for `watch.2`.
    watch: Option<(Time, u16, Time)>,
}

impl FlowControl for Scripted {
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, _view: &SwitchView, out: &mut Actions) {
        if let Some((from, q, len)) = self.watch {
            if now >= from && pkt.tags.upstream_q == q {
                self.watch = None;
                let pause = |on| FcAction::Send { port: pkt.ingress, msg: CtrlMsg::QueuePause { queue: q, pause: on }, by: Origin::Scheme };
                out.push(pause(true));
                self.script.push((now + len, pause(false)));
            }
        }
    }
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, _view: &SwitchView) {
        if self.stamp {
            pkt.tags.upstream_q = pkt.queue;
        }
    }
    fn on_timer(&mut self, now: Time, _view: &SwitchView, out: &mut Actions) {
        self.script.retain(|&(t, a)| {
            if t <= now {
                out.push(a);
            }
            t > now
        });
    }
    fn next_timer(&self) -> Option<Time> {
        self.script.iter().map(|x| x.0).min()
    }
    fn uses_tags(&self) -> bool {
        true
    }
}

fn sim(flows: &[FlowSpec], s0: Scripted, s1: Scripted) -> Simulation {
    let mut sim = Simulation::new(&net(), flows, cfg()).expect("builds");
    sim.set_switch_fc(S0, AnyFc::Custom(Box::new(s0))).unwrap();
    sim.set_switch_fc(S1, AnyFc::Custom(Box::new(s1))).unwrap();
    sim
}

fn finish(r: &RunStats, f: usize) -> Time {
    Time(r.flows.finish_ps[f])
}

fn port_row(r: &RunStats, node: u32, port: u16) -> usize {
    (0..r.ports.node.len()).find(|&i| r.ports.node[i] == node && r.ports.port[i] == port).unwrap()
}

#[test]
fn a_queue_pause_stops_only_that_upstream_queue() {
    // two 2 MB flows share S0 -> S1 in queues 1 and 2 (priorities 1 and 2)
    let flows = [spec(H0, H2, 1), spec(H1, H2, 2)];
    let base = sim(&flows, Scripted { stamp: true, ..Default::default() }, Scripted::default()).run().clone();
    let gap = |r: &RunStats| finish(r, 0).0 as i64 - finish(r, 1).0 as i64;
    assert!(gap(&base).abs() < 5_000_000, "unpaused, DRR shares fairly: {:?}", (finish(&base, 0), finish(&base, 1)));

    // S1 pauses upstream queue 1 for 100 us once it sees a packet tagged upstreamQ = 1 after 20 us
    let s1 = Scripted { watch: Some((Time::from_us(20), 1, Time::from_us(100))), ..Default::default() };
    let r = sim(&flows, Scripted { stamp: true, ..Default::default() }, s1).run().clone();
    assert_conserved(&r);
    let c = &r.control;
    assert_eq!(c.kind, vec!["queue_pause", "queue_pause"]);
    assert_eq!((c.node[0], c.port[0], c.peer_node[0], c.target[0], c.value[0]), (S1, 0, S0, 1, 1));
    assert_eq!((c.target[1], c.value[1]), (1, 0));
    assert_eq!(c.time_ps[1] - c.time_ps[0], Time::from_us(100).0);
    assert_eq!(r.counters.queue_pause_bytes, 128);
    // queue 1 of S0's port to S1 was closed for the pause (within an ACK's serialisation of
    // jitter on each frame); nothing else was closed
    let row = port_row(&r, S0, 2);
    let closed = r.ports.gate_closed_ps[row] as i64;
    assert!((closed - Time::from_us(100).0 as i64).abs() < 20_000, "closed {closed} ps");
    assert_eq!(r.ports.gate_closed_ps.iter().sum::<u64>(), r.ports.gate_closed_ps[row]);
    // queue 2's flow took the whole link meanwhile and finishes about 100 us earlier
    assert!(gap(&r) > 80_000_000, "flow 0 at {:?}, flow 1 at {:?}", finish(&r, 0), finish(&r, 1));
    // work conservation: the last byte leaves when it would have without the pause
    let last = |r: &RunStats| finish(r, 0).max(finish(r, 1)).0 as i64;
    assert!((last(&r) - last(&base)).abs() < 2_000_000);
}

/// S0's local port 0 faces H0: frames sent there reach H0's NIC.
fn to_h0(t: Time, msg: CtrlMsg) -> (Time, FcAction) {
    (t, FcAction::Send { port: 0, msg, by: Origin::Scheme })
}

#[test]
fn a_destination_pause_stops_only_that_destinations_flows_at_the_nic() {
    let flows = [spec(H0, H2, 3), spec(H0, H3, 3)];
    let script = vec![
        to_h0(Time::from_us(20), CtrlMsg::DstPause { dst: H2, pause: true }),
        to_h0(Time::from_us(120), CtrlMsg::DstPause { dst: H2, pause: false }),
    ];
    let base = sim(&flows, Scripted::default(), Scripted::default()).run().clone();
    let r = sim(&flows, Scripted { script: script.clone(), ..Default::default() }, Scripted::default()).run().clone();
    assert_conserved(&r);
    assert_eq!(r.control.kind, vec!["dst_pause", "dst_pause"]);
    let gap = |r: &RunStats| finish(r, 0).0 as i64 - finish(r, 1).0 as i64;
    assert!(gap(&base).abs() < 5_000_000);
    assert!(gap(&r) > 80_000_000, "H2's flow waits, H3's goes on: {:?}", (finish(&r, 0), finish(&r, 1)));

    // a NIC that ignores destination pauses is not stopped
    struct Deaf;
    impl NicFc for Deaf {
        fn obeys(&self, k: CtrlKind) -> bool {
            k != CtrlKind::DstPause
        }
    }
    let mut s = sim(&flows, Scripted { script, ..Default::default() }, Scripted::default());
    s.set_host_nic(H0, AnyNic::Custom(Box::new(Deaf))).unwrap();
    let deaf = s.run().clone();
    assert_eq!(deaf.flows.finish_ps, base.flows.finish_ps);
}

#[test]
fn a_flow_pause_stops_one_flow() {
    let flows = [spec(H0, H2, 3), spec(H0, H2, 3)];
    let script = vec![
        to_h0(Time::from_us(20), CtrlMsg::FlowPause { flow: 0, pause: true }),
        to_h0(Time::from_us(120), CtrlMsg::FlowPause { flow: 0, pause: false }),
    ];
    let r = sim(&flows, Scripted { script, ..Default::default() }, Scripted::default()).run().clone();
    assert_conserved(&r);
    assert_eq!(r.control.kind, vec!["flow_pause", "flow_pause"]);
    assert!(finish(&r, 0).0 > finish(&r, 1).0 + 80_000_000, "{:?}", (finish(&r, 0), finish(&r, 1)));
}

#[test]
fn markers_hold_a_queue_until_their_twin_leaves() {
    // flow 0 in queue 1, flow 1 in queue 2 of S0's port 2 (to S1). At 20 us, queue 1 closes for
    // 100 us and a marker pair goes in: hold in queue 2, release behind queue 1's backlog. Queue 2
    // may not pass its marker until queue 1's earlier packets have left, so flow 1 stalls too.
    let flows = [spec(H0, H2, 1), spec(H1, H2, 2)];
    let t0 = Time::from_us(20);
    let gate = |t, until| (t, FcAction::Gate { port: 2, queue: 1, until });
    let only_gate = vec![gate(t0, Time::MAX), gate(t0 + Time::from_us(100), t0 + Time::from_us(100))];
    let mut with_markers = only_gate.clone();
    with_markers.insert(1, (t0, FcAction::Markers { port: 2, hold: 2, release: 1 }));
    let gated = sim(&flows, Scripted { script: only_gate, ..Default::default() }, Scripted::default()).run().clone();
    let marked = sim(&flows, Scripted { script: with_markers, ..Default::default() }, Scripted::default()).run().clone();
    assert_conserved(&marked);
    let row = port_row(&marked, S0, 2);
    assert_eq!((marked.ports.markers_inserted[row], marked.ports.markers_matched[row]), (1, 1));
    // without markers queue 2 keeps the link busy during the gate; with them it waits for queue 1
    assert!(finish(&gated, 1).0 + 80_000_000 < finish(&marked, 1).0, "{:?} vs {:?}", finish(&gated, 1), finish(&marked, 1));
    // markers carry no bytes: the same data was delivered
    assert_eq!(marked.counters.data_bytes_delivered, gated.counters.data_bytes_delivered);
}

fn run_sched(sched: hopsim_core::queues::sched::SchedulerConfig, flows: &[FlowSpec]) -> RunStats {
    let mut c = cfg();
    c.switch.scheduler = sched;
    run(&net(), flows, c)
}

#[test]
fn the_rank_scheduler_serves_the_shortest_remaining_flow_first_and_strict_queues_go_first() {
    use hopsim_core::queues::sched::SchedulerConfig;
    // a long flow in queue 1 and a short one in queue 2 share S0 -> S1
    let flows = [spec(H0, H2, 1), FlowSpec { size: 200_000, ..spec(H1, H2, 2) }];
    let drr = run_sched(SchedulerConfig::Drr, &flows);
    let srf = run_sched(SchedulerConfig::Rank, &flows);
    assert_conserved(&srf);
    // DRR halves the short flow's rate at the bottleneck; SRF gives it the whole link
    let short = |r: &RunStats| r.flows.fct_ps[1] as f64 / r.flows.ideal_fct_ps[1] as f64;
    assert!(short(&drr) > 1.6, "DRR: {}", short(&drr));
    assert!(short(&srf) < 1.2, "SRF: {}", short(&srf));
    // strict priority for queue 1: the long flow goes first and the short one waits for it
    let strict = run_sched(SchedulerConfig::Strict { queues: vec![1] }, &flows);
    assert!(finish(&strict, 1) > finish(&strict, 0) - Time::from_us(20), "{:?}", (finish(&strict, 0), finish(&strict, 1)));
    assert!(short(&strict) > 5.0);
}

/// A module that reports, at every buffer sample, the bytes queued at each of its ports and one
/// switch-wide value: what `FlowControl::sample` is for (VOQs in use, flows paused, ...).
struct Reporter;

impl FlowControl for Reporter {
    fn sample(&self, _now: Time, view: &SwitchView, out: &mut hopsim_core::fc::Samples) {
        for p in 0..view.nports() {
            out.push((p as u16, "queued", view.port_bytes(p as u16) as f64));
        }
        out.push((hopsim_core::fc::SWITCH_WIDE, "ports", view.nports() as f64));
    }
}

#[test]
fn module_samples_follow_the_buffer_samples() {
    let mut c = cfg();
    c.record.buffer_interval = Some(Time::from_us(10));
    // two senders into S0 -> S1: S0's port to S1 queues
    let mut sim = Simulation::new(&net(), &[spec(H0, H2, 3), spec(H1, H3, 3)], c).expect("builds");
    sim.set_switch_fc(S0, AnyFc::Custom(Box::new(Reporter))).unwrap();
    let r = sim.run();
    let m = &r.module_samples;
    assert_eq!(r.module_metrics, vec!["queued".to_string(), "ports".to_string()]);
    // only S0 reports: 3 ports + 1 switch-wide row per sample, at every buffer sample time
    let samples = r.buffer.switch_time_ps.len() / 2; // two switches
    assert_eq!(m.time_ps.len(), samples * 4);
    assert!(m.node.iter().all(|&n| n == S0));
    let wide: Vec<usize> = (0..m.port.len()).filter(|&i| m.port[i] == hopsim_core::fc::SWITCH_WIDE).collect();
    assert_eq!(wide.len(), samples);
    assert!(wide.iter().all(|&i| m.value[i] == 3.0 && m.metric[i] == 1));
    // the values are the switch's own: S0's port to S1 (local 2) matches the buffer table's rows
    let s0_bytes: Vec<u64> = (0..r.buffer.port_time_ps.len())
        .filter(|&i| r.ports.node[r.buffer.port_row[i] as usize] == S0 && r.ports.port[r.buffer.port_row[i] as usize] == 2)
        .map(|i| r.buffer.port_bytes[i])
        .collect();
    let reported: Vec<u64> = (0..m.port.len()).filter(|&i| m.port[i] == 2 && m.metric[i] == 0).map(|i| m.value[i] as u64).collect();
    assert_eq!(reported, s0_bytes);
    assert!(reported.iter().any(|&b| b > 0), "the flow queues at S0 at some sample");
}
