//! Runs that cannot finish end by themselves: a PFC deadlock on a ring of four switches under
//! cross traffic is found and named, a buffer too small for one packet stops as no progress, and
//! a stop flag set from outside ends a run at the next checkpoint.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::progress::Watch;
use hopsim_core::stats::StopReason;
use hopsim_core::topo::{NodeKind, Topology};
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

pub const RING: u32 = 4;
pub const HOSTS_PER_SWITCH: u32 = 5;

/// Switches 0..4 in a ring (switch i is node i; its local ports 0 and 1 go to its two ring
/// neighbours), each with `HOSTS_PER_SWITCH` hosts; every link 100 Gb/s, 1 us.
pub fn ring() -> Topology {
    let mut t = Topology::default();
    for _ in 0..RING {
        t.add_node(NodeKind::Switch { tier: 0 });
    }
    let (r, d) = (Rate::gbps(100), Time::from_us(1));
    for i in 0..RING {
        t.add_link(i, (i + 1) % RING, r, d);
    }
    for i in 0..RING {
        for _ in 0..HOSTS_PER_SWITCH {
            let h = t.add_node(NodeKind::Host);
            t.add_link(h, i, r, d);
        }
    }
    t
}

pub fn host(switch: u32, k: u32) -> u32 {
    RING + switch * HOSTS_PER_SWITCH + k
}

/// Cross traffic two hops around the ring from every switch, both ways (each host sends to the
/// opposite switch's hosts): 40 flows whose paths chain the ring's ports into cycles.
pub fn cross_traffic() -> Vec<FlowSpec> {
    let mut v = vec![];
    for s in 0..RING {
        for k in 0..HOSTS_PER_SWITCH {
            for j in 0..2 {
                v.push(flow(host(s, k), host((s + 2) % RING, (k + j) % HOSTS_PER_SWITCH), 4_000_000, Time::ZERO));
            }
        }
    }
    v
}

/// A 2 MB shared buffer: some data arrives, then PFC pauses the ring's ports into a cycle long
/// before the flows can finish.
pub fn small_buffer() -> NetConfig {
    let mut c = NetConfig::default();
    c.switch.buffer_bytes = 2_000_000;
    c
}

#[test]
fn ring_deadlock_is_found_and_named() {
    let t0 = Instant::now();
    let r = run(&ring(), &cross_traffic(), small_buffer());
    let wall = t0.elapsed();
    eprintln!("{} ({wall:?} wall, {}/{} flows finished, {} bytes delivered)", r.stop.message, r.counters.flows_finished, r.counters.flows, r.counters.data_bytes_delivered);
    assert_eq!(r.stop.reason, StopReason::Deadlock, "{}", r.stop.message);
    assert!(r.counters.flows_finished < r.counters.flows);
    // the cycle runs through ring ports only, each switch's next one in the cycle its neighbour
    let c = &r.stop.cycle;
    assert!(c.len() >= 2, "{c:?}");
    for &(node, port) in c {
        assert!(node < RING && port < 2, "{c:?} names a host port");
    }
    assert!(r.stop.message.contains("PFC deadlock") && r.stop.message.contains(&format!("(node {}, port {})", c[0].0, c[0].1)));
    assert!(wall.as_secs_f64() < 1.0, "deadlock found after {wall:?}");
}

#[test]
fn with_a_duration_a_deadlock_still_says_so() {
    let mut cfg = small_buffer();
    cfg.stop_time = Some(Time::from_secs_f64(10.0));
    let r = run(&ring(), &cross_traffic(), cfg);
    assert_eq!(r.stop.reason, StopReason::Deadlock);
    assert!(r.counters.end_time_ps < Time::from_secs_f64(1.0).0);
}

#[test]
fn a_lossless_ring_with_room_finishes() {
    // the same traffic with a buffer that holds it all: no pause, no deadlock
    let mut cfg = NetConfig::default();
    cfg.switch.buffer_bytes = 400_000_000;
    let r = run(&ring(), &cross_traffic(), cfg);
    assert_eq!(r.stop.reason, StopReason::Done, "{}", r.stop.message);
    assert_eq!(r.counters.flows_finished, r.counters.flows);
}

#[test]
fn a_buffer_smaller_than_a_packet_is_refused() {
    let topo = hopsim_core::topo::star(2, Rate::gbps(100), Time::from_us(1));
    let mut cfg = NetConfig::default();
    cfg.switch.buffer_bytes = 500;
    let e = Simulation::new(&topo, &[flow(0, 1, 10_000, Time::ZERO)], cfg).err().expect("refused");
    assert!(e.contains("buffer.size") && e.contains("one packet"), "{e}");
}

#[test]
fn a_buffer_that_drops_every_data_packet_stops_as_no_progress() {
    // exactly one packet of buffer, but HPCC's INT header makes every data packet longer: the
    // switch drops each one, and the sender retries on every RTO for ever
    let topo = hopsim_core::topo::star(2, Rate::gbps(100), Time::from_us(1));
    let cc = hopsim_core::cc::CcConfig::Hpcc(Default::default());
    let mut cfg = NetConfig { aqm: cc.aqm(), cc, ..NetConfig::default() };
    cfg.switch.buffer_bytes = (cfg.host.mtu + cfg.host.header_bytes) as u64;
    cfg.switch.reserve_bytes = 0;
    cfg.switch.lossless = false;
    let t0 = Instant::now();
    let r = run(&topo, &[flow(0, 1, 10_000, Time::ZERO)], cfg);
    assert_eq!(r.stop.reason, StopReason::NoProgress, "{}", r.stop.message);
    assert!(r.counters.drops > 0 && r.counters.data_bytes_delivered == 0);
    assert!(r.stop.message.contains("no data delivered"), "{}", r.stop.message);
    assert!(t0.elapsed().as_secs_f64() < 5.0);
}

#[test]
fn stall_timeout_off_leaves_a_stopped_run_to_its_duration() {
    let mut cfg = small_buffer();
    cfg.stall_timeout = Some(Time::MAX);
    cfg.stop_time = Some(Time::from_ms(30));
    let r = run(&ring(), &cross_traffic(), cfg);
    assert_eq!(r.stop.reason, StopReason::Duration);
}

#[test]
fn a_stop_flag_ends_the_run_at_a_checkpoint() {
    let topo = hopsim_core::topo::star(4, Rate::gbps(100), Time::from_us(1));
    let flows: Vec<FlowSpec> = (0..3).map(|s| flow(s, 3, 1_000_000_000, Time::ZERO)).collect();
    let flag = Arc::new(AtomicBool::new(true));
    let mut sim = Simulation::new(&topo, &flows, NetConfig::default()).unwrap();
    sim.set_watch(Watch::with_flag(flag));
    let r = sim.run();
    assert_eq!(r.stop.reason, StopReason::Interrupted);
    // the flag is seen at the end of the window in which the partition passed CHECK_EVERY
    // events: one window of three 1 us flows holds far fewer than 1,000
    let e = r.counters.events;
    assert!((hopsim_core::progress::CHECK_EVERY..hopsim_core::progress::CHECK_EVERY + 1_000).contains(&e), "{e} events");
    assert_eq!(r.counters.flows_finished, 0);
}

#[test]
fn a_hook_sees_progress_and_can_stop() {
    let topo = hopsim_core::topo::star(4, Rate::gbps(100), Time::from_us(1));
    let flows: Vec<FlowSpec> = (0..3).map(|s| flow(s, 3, 1_000_000_000, Time::ZERO)).collect();
    let seen = Arc::new(std::sync::Mutex::new(vec![]));
    let s2 = seen.clone();
    let hook = Box::new(move |p: &hopsim_core::progress::Progress| {
        s2.lock().unwrap().push(*p);
        s2.lock().unwrap().len() < 3
    });
    let mut sim = Simulation::new(&topo, &flows, NetConfig::default()).unwrap();
    sim.set_watch(Watch::with_hook(hook, std::time::Duration::ZERO));
    let r = sim.run();
    assert_eq!(r.stop.reason, StopReason::Interrupted);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert!(seen[0].now < seen[2].now && seen[0].events < seen[2].events);
    assert_eq!(seen[2].flows, 3);
}
