//! Faults in the simulated network (`faults.rs`): random loss on a link drops about the expected
//! share of packets and flows finish by retransmission; a link that goes down mid-flow is routed
//! around, and its return restores the path; a link with no alternative drops and counts what
//! cannot be delivered until the watchdog ends the run; Floodgate's windows recover the credits
//! of lost packets. And idle stretches cost nothing: an incast scheduled at 1e7 s runs in a
//! bounded number of events and samples.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::floodgate::FloodgateConfig;
use hopsim_core::fc::{AnyFc, FcConfig};
use hopsim_core::params::{FaultsConfig, LinkEvent, LinkLoss, LinkState};
use hopsim_core::queues::sched::SchedulerConfig;
use hopsim_core::sim::sample::IDLE_SAMPLES;
use hopsim_core::stats::{RunStats, StopReason};
use hopsim_core::topo::{star, Routes, Topology};
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

/// Row of the port table of (node, peer).
fn port_row(r: &RunStats, node: u32, peer: u32) -> usize {
    (0..r.ports.node.len()).find(|&i| r.ports.node[i] == node && r.ports.peer_node[i] == peer).expect("such a port")
}

fn event(at: Time, link: (u32, u32), state: LinkState) -> LinkEvent {
    LinkEvent { at, link, state }
}

#[test]
fn loss_drops_about_p_of_the_packets_and_the_flow_still_finishes() {
    // host 0 sends 10 MB to host 1 through one switch (node 2); the switch-host 1 link loses 1%
    // of the packets crossing it, in each direction (data one way, ACKs and NACKs the other)
    let t = star(2, Rate::gbps(100), Time::from_us(1));
    let p = 0.01;
    let mut cfg = NetConfig::default();
    cfg.faults.link_loss = vec![LinkLoss { link: (2, 1), rate: p }];
    cfg.record.buffer_interval = None;
    let size = 10_000_000;
    let r = run(&t, &[flow(0, 1, size, Time::ZERO)], cfg);
    assert_conserved(&r);
    assert_eq!(r.stop.reason, StopReason::Done);
    // what crossed the lossy link: data packets (1048 B on the wire) towards host 1, ACKs and
    // NACKs (60 B) back; all of that port's bytes are of those sizes
    let (data_port, ack_port) = (port_row(&r, 2, 1), port_row(&r, 1, 2));
    let data = r.ports.tx_bytes[data_port] / 1048;
    let acks = r.ports.tx_bytes[ack_port] / 60;
    assert_eq!(r.ports.tx_bytes[data_port] % 1048, 0);
    for (port, n) in [(data_port, data), (ack_port, acks)] {
        let lost = r.ports.drops_loss[port] as f64;
        let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
        eprintln!("port {port}: {n} packets, {lost} lost (expected {mean:.1} +- {sd:.1})");
        assert!((lost - mean).abs() < 5.0 * sd, "{lost} lost of {n} at p = {p}");
    }
    assert_eq!(r.counters.drops_loss, r.ports.drops_loss.iter().sum::<u64>());
    assert_eq!(r.counters.drops_loss, r.ports.drops_loss[data_port] + r.ports.drops_loss[ack_port], "only that link loses");
    assert!(r.flows.retx_bytes[0] > 0 && r.flows.dropped_bytes[0] > 0);
    assert_eq!(r.flows.delivered_bytes[0], size);
    assert_eq!(r.counters.drops, 0, "no buffer drops");
    // the same seed loses the same packets; another seed, others
    let again = run(&t, &[flow(0, 1, size, Time::ZERO)], NetConfig { faults: r_faults(p), ..quiet() });
    let other = run(&t, &[flow(0, 1, size, Time::ZERO)], NetConfig { faults: r_faults(p), seed: 2, ..quiet() });
    assert_eq!(again.ports.drops_loss, r.ports.drops_loss);
    assert_ne!(other.ports.drops_loss, r.ports.drops_loss);
}

fn r_faults(p: f64) -> FaultsConfig {
    FaultsConfig { link_loss: vec![LinkLoss { link: (2, 1), rate: p }], ..Default::default() }
}

fn quiet() -> NetConfig {
    let mut c = NetConfig::default();
    c.record.buffer_interval = None;
    c
}

/// 2 ToRs of 4 hosts, 2 spines (hosts 0-3 on ToR 8, 4-7 on ToR 9; spines 10 and 11).
fn two_path() -> (hopsim_core::topo::LeafSpine, Topology) {
    let ls = leaf_spine_100g(4, 2, 2);
    let t = ls.build();
    (ls, t)
}

/// Every host of ToR 0 sends to every host of ToR 1: 16 flows spread over both spines.
fn cross(size: u64, start: Time) -> Vec<FlowSpec> {
    (0..4).flat_map(|s| (4..8).map(move |d| flow(s, d, size, start))).collect()
}

/// The data bytes port `row` had sent by each buffer sample, as (time, bytes).
fn tx_series(r: &RunStats, row: usize) -> Vec<(u64, u64)> {
    let b = &r.buffer;
    (0..b.port_row.len()).filter(|&i| b.port_row[i] as usize == row).map(|i| (b.port_time_ps[i], b.port_tx_bytes[i])).collect()
}

#[test]
fn a_link_down_mid_flow_is_routed_around_and_flows_finish() {
    let (ls, t) = two_path();
    let (tor0, spine0) = (ls.tor_id(0), ls.spine_id(0));
    // without the link, ToR 0 reaches ToR 1's hosts through spine 1 only
    let link = t.links.iter().position(|l| (l.a, l.b) == (tor0, spine0)).unwrap();
    let mut down = vec![false; t.links.len()];
    down[link] = true;
    let full = Routes::build(&t);
    let cut = Routes::build_without(&t, hopsim_core::topo::routes::HopOrder::Ports, &down);
    assert_eq!(full.next_hops(tor0, 5).len(), 2);
    assert_eq!(cut.next_hops(tor0, 5).len(), 1);
    assert_eq!(cut.peer_node(cut.next_hops(tor0, 5)[0]), ls.spine_id(1));

    let at = Time::from_us(30);
    let mut cfg = NetConfig::default();
    cfg.record.buffer_interval = Some(Time::from_us(5));
    cfg.faults.link_events = vec![event(at, (spine0, tor0), LinkState::Down)];
    let r = run(&t, &cross(2_000_000, Time::ZERO), cfg);
    assert_conserved(&r);
    assert_eq!(r.stop.reason, StopReason::Done);
    let up = port_row(&r, tor0, spine0);
    assert!(r.counters.drops_link_down > 0, "packets queued at or on the link were lost");
    assert_eq!(r.counters.drops_link_down, r.ports.drops_link_down.iter().sum::<u64>());
    assert!(r.ports.drops_link_down[up] + r.ports.drops_link_down[port_row(&r, spine0, tor0)] > 0);
    // the link carried data before it went down, nothing after
    let s = tx_series(&r, up);
    let before = s.iter().filter(|x| x.0 <= at.0).map(|x| x.1).max().unwrap();
    assert!(before > 0, "{s:?}");
    assert!(s.iter().all(|x| x.0 <= at.0 || x.1 == s.iter().find(|y| y.0 > at.0).unwrap().1), "{s:?}");
    let fct_max = r.flows.fct_ps.iter().max().unwrap();
    assert!(*fct_max > at.0, "flows ran past the failure");
}

#[test]
fn a_link_that_comes_back_up_carries_traffic_again() {
    let (ls, t) = two_path();
    let (tor0, spine0) = (ls.tor_id(0), ls.spine_id(0));
    let (down_at, up_at) = (Time::from_us(20), Time::from_us(200));
    let mut cfg = NetConfig::default();
    cfg.record.buffer_interval = Some(Time::from_us(5));
    cfg.faults.link_events = vec![event(down_at, (tor0, spine0), LinkState::Down), event(up_at, (tor0, spine0), LinkState::Up)];
    // one wave of flows across the failure, another after the link is back
    let mut flows = cross(1_000_000, Time::ZERO);
    flows.extend(cross(1_000_000, Time::from_us(300)));
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let up = port_row(&r, tor0, spine0);
    let s = tx_series(&r, up);
    let at = |t: Time| s.iter().filter(|x| x.0 <= t.0).map(|x| x.1).max().unwrap();
    assert!(at(down_at) > 0);
    assert_eq!(at(up_at), at(down_at), "nothing while down: {s:?}");
    // the first wave's flows still running at `up_at` hash onto the link again, and the second
    // wave uses it too
    assert!(at(up_at + Time::from_us(20)) > at(up_at), "{s:?}");
    assert!(at(Time::MAX) > at(Time::from_us(300)), "{s:?}");
}

#[test]
fn pauses_across_a_dead_link_hold_nothing_for_ever() {
    // an 8-to-1 incast from ToR 0's hosts to host 8 on ToR 1 under PFC with pauses held until
    // resumed (the HPCC simulator's): ToR 1 pauses the spines, the spines pause ToR 0. Spine 0's
    // link to ToR 1 dies while ToR 1 holds it paused and comes back 300 us later, when ToR 1 has
    // long drained what came from it. The resume could not cross the dead link, so a pause held
    // until resumed would hold spine 0's port for ever once the link is back (the run would stall
    // with the flows hashed onto it unfinished); pauses of a dead link are lifted with it, so
    // every flow finishes, some of them over the link again.
    let ls = leaf_spine_100g(8, 2, 2);
    let t = ls.build();
    let flows: Vec<FlowSpec> = (0..8).map(|s| flow(s, 8, 1_000_000, Time::ZERO)).collect();
    let mut cfg = NetConfig::default();
    cfg.switch.buffer_bytes = 1_000_000;
    cfg.pfc.until_resume = true;
    cfg.record.buffer_interval = None;
    let base = run(&t, &flows, cfg.clone());
    assert!(base.counters.pauses_sent > 0, "the incast pauses");
    // ToR 1's first pause of spine 0
    let (tor1, spine0) = (ls.tor_id(1), ls.spine_id(0));
    let local = base.ports.port[port_row(&base, tor1, spine0)];
    let p = base.pauses.node.iter().zip(&base.pauses.port).position(|(&n, &l)| n == tor1 && l == local).unwrap();
    assert!(base.pauses.quanta[p] > 0 && base.pauses.quanta[p + 1..].iter().zip(&base.pauses.node[p + 1..]).any(|(&q, &n)| q == 0 && n == tor1));
    let (down, up) = (Time(base.pauses.time_ps[p] + 3_000_000), Time(base.pauses.time_ps[p] + 303_000_000));
    let link = (spine0, tor1);
    cfg.faults.link_events = vec![event(down, link, LinkState::Down), event(up, link, LinkState::Up)];
    let r = run(&t, &flows, cfg);
    eprintln!("{:?} pauses {} resumes {}", r.stop, r.counters.pauses_sent, r.counters.resumes_sent);
    assert_conserved(&r);
    assert_eq!(r.stop.reason, StopReason::Done);
    assert!(r.counters.drops_link_down > 0);
    assert!(*r.flows.finish_ps.iter().max().unwrap() > up.0, "flows ran past the link's return");
}

#[test]
fn a_dead_link_without_an_alternative_drops_and_counts_until_the_watchdog_ends_the_run() {
    // one spine: when ToR 0's only uplink dies, ToR 1's hosts are unreachable from ToR 0
    let ls = leaf_spine_100g(2, 2, 1);
    let t = ls.build();
    let (tor0, spine) = (ls.tor_id(0), ls.spine_id(0));
    let mut cfg = NetConfig { stall_timeout: Some(Time::from_ms(3)), ..Default::default() };
    cfg.faults.link_events = vec![event(Time::from_us(10), (tor0, spine), LinkState::Down)];
    let flows = vec![flow(0, 2, 5_000_000, Time::ZERO), flow(3, 1, 5_000_000, Time::ZERO), flow(0, 1, 100_000, Time::ZERO)];
    let r = run(&t, &flows, cfg);
    eprintln!("{}: {:?}", r.stop.message, r.counters);
    assert_eq!(r.stop.reason, StopReason::NoProgress, "{}", r.stop.message);
    assert!(r.counters.drops_unreachable > 0, "retransmissions reach ToR 0 and go no further");
    assert!(r.counters.drops_link_down > 0);
    assert_eq!(r.counters.drops_unreachable, r.ports.drops_unreachable.iter().sum::<u64>());
    // the flow inside ToR 0 was unaffected; the two across it never finish
    assert_eq!(r.counters.flows_finished, 1);
    assert!(r.flows.finish_ps[2] != u64::MAX);
    assert!(r.counters.data_bytes_sent >= r.counters.data_bytes_delivered + r.counters.data_bytes_dropped);

    // a host whose own link dies: its flow stops, the run ends the same way
    let t = star(3, Rate::gbps(100), Time::from_us(1));
    let mut cfg = NetConfig { stall_timeout: Some(Time::from_ms(3)), ..Default::default() };
    cfg.faults.link_events = vec![event(Time::from_us(10), (0, 3), LinkState::Down)];
    let r = run(&t, &[flow(0, 1, 5_000_000, Time::ZERO), flow(2, 1, 100_000, Time::ZERO)], cfg);
    assert_eq!(r.stop.reason, StopReason::NoProgress, "{}", r.stop.message);
    assert_eq!(r.counters.flows_finished, 1);
}

#[test]
fn fault_settings_naming_no_link_or_no_probability_are_refused() {
    let t = star(2, Rate::gbps(100), Time::from_us(1));
    let fl = [flow(0, 1, 1000, Time::ZERO)];
    let err = |f: FaultsConfig| Simulation::new(&t, &fl, NetConfig { faults: f, ..Default::default() }).err().expect("refused");
    let e = err(FaultsConfig { link_events: vec![event(Time::ZERO, (0, 1), LinkState::Down)], ..Default::default() });
    assert!(e.contains("faults.link_events[0].link") && e.contains("no link joins nodes 0 and 1"), "{e}");
    let e = err(FaultsConfig { link_loss: vec![LinkLoss { link: (0, 9), rate: 0.1 }], ..Default::default() });
    assert!(e.contains("faults.link_loss[0].link") && e.contains("does not exist"), "{e}");
    let e = err(FaultsConfig { loss_rate: 1.5, ..Default::default() });
    assert!(e.starts_with("faults.loss_rate"), "{e}");
    let e = err(FaultsConfig { link_loss: vec![LinkLoss { link: (0, 2), rate: f64::NAN }], ..Default::default() });
    assert!(e.starts_with("faults.link_loss[0].rate"), "{e}");
}

/// The in-flight packets Floodgate's windows hold at switch `s` (`Floodgate::in_flight`).
fn floodgate_in_flight(sim: &Simulation) -> Vec<u64> {
    sim.switches
        .iter()
        .map(|s| match &s.fc {
            AnyFc::Floodgate(f) => f.in_flight(),
            AnyFc::FloodgatePfc(w) => w.inner.0.in_flight(),
            _ => panic!("not floodgate"),
        })
        .collect()
}

#[test]
fn floodgate_recovers_the_credits_of_lost_packets() {
    // 8 senders on ToRs 1-2 send to host 0; the ToR 1 - spine 0 link loses 10% of what crosses
    // it: data charged to ToR 1's window towards the spine, and the credits coming back. A lost
    // packet's credit comes with the next packet's (PSNs are cumulative, §4.3); a lost last credit
    // with a switchSYN after `syn_timeout` (1 ms). A late flow inside ToR 2 keeps the run going
    // until every credit has had time to come back.
    let ls = leaf_spine_100g(4, 3, 2);
    let t = ls.build();
    let mut flows: Vec<FlowSpec> = (4..12).map(|s| FlowSpec { incast: true, ..flow(s, 0, 300_000, Time::ZERO) }).collect();
    flows.push(flow(8, 9, 10_000, Time::from_ms(20)));
    // which credits are lost depends on the seed (its loss draws, and its ECMP hashes, which may
    // send no flow over the lossy link): over a few seeds some last credit is lost and a
    // switchSYN brings it back; in every run every window recovers
    let (mut syns, mut lost) = (0, 0);
    for seed in 1..=4 {
        let mut cfg = NetConfig { fc: FcConfig::Floodgate(FloodgateConfig::default()), seed, ..Default::default() };
        cfg.switch.lossless = false;
        cfg.switch.scheduler = SchedulerConfig::Strict { queues: vec![0] };
        cfg.record.buffer_interval = None;
        cfg.faults.link_loss = vec![LinkLoss { link: (ls.tor_id(1), ls.spine_id(0)), rate: 0.1 }];
        let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
        let r = sim.run().clone();
        eprintln!("seed {seed}: modules {:?}, lost {}", r.modules, r.counters.drops_loss);
        assert_conserved(&r);
        assert!(r.modules["floodgate_credits"] > 0, "{:?}", r.modules);
        assert_eq!(floodgate_in_flight(&sim), vec![0; 5], "every window got its credits back");
        syns += r.modules["floodgate_syns"];
        lost += r.counters.drops_loss;
    }
    assert!(lost > 0 && syns > 0, "some lost last credit came back with a switchSYN ({lost} packets lost)");
}

#[test]
fn an_incast_at_1e7_seconds_ends_in_a_bounded_number_of_events_and_samples() {
    // nothing before the incast: the sampler takes IDLE_SAMPLES samples of the idle network, then
    // sleeps until the flows start instead of sampling every 10 us for 1e7 s
    let t = star(8, Rate::gbps(100), Time::from_us(1));
    let start = Time::from_secs_f64(1e7);
    let flows: Vec<FlowSpec> = (1..8).map(|s| flow(s, 0, 100_000, start)).collect();
    let cfg = NetConfig::default();
    assert_eq!(cfg.record.buffer_interval, Some(Time::from_us(10)));
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    assert!(r.counters.end_time_ps > start.0);
    let samples = r.buffer.switch_time_ps.len() as u64;
    eprintln!("{} events, {samples} samples", r.counters.events);
    // 1000 idle samples, then about 60 us of incast at 10 us: a few more
    assert!((IDLE_SAMPLES..IDLE_SAMPLES + 20).contains(&samples), "{samples}");
    assert!(r.counters.events < 100_000, "{}", r.counters.events);
    // the samples resume on the grid, at the first one at or after the flows' start
    let resumed = r.buffer.switch_time_ps[IDLE_SAMPLES as usize];
    assert!(resumed >= start.0 && resumed.is_multiple_of(Time::from_us(10).0) && resumed - start.0 < Time::from_us(10).0);
    assert_eq!(r.buffer.switch_time_ps[IDLE_SAMPLES as usize - 1], (IDLE_SAMPLES - 1) * Time::from_us(10).0);
}
