//! HPCC (Li et al. 2019): with INT from the switch, four long flows into one receiver keep the
//! bottleneck queue near zero while the link runs near the target utilisation eta = 0.95; the INT
//! header's bytes are on the wire.

use crate::common::*;
use hopsim_core::cc::hpcc::HpccConfig;
use hopsim_core::cc::{AnyCc, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::topo::star;
use hopsim_core::{Rate, Simulation, Time};

const N: u32 = 4;

/// Hosts 1..=4 send long flows to host 0 over 100 Gb/s, 1 us links; stop at `stop`.
fn scenario(stop: Time) -> Simulation {
    let t = star(N as usize + 1, Rate::gbps(100), Time::from_us(1));
    let mut cfg = NetConfig { cc: CcConfig::Hpcc(HpccConfig::default()), stop_time: Some(stop), ..Default::default() };
    cfg.aqm = cfg.cc.aqm();
    cfg.record.buffer_interval = None;
    cfg.record.queue_ports = vec![(N + 1, 0)];
    cfg.record.queue_interval = Time::from_ns(500);
    let flows: Vec<_> = (1..=N).map(|s| flow(s, 0, 1 << 40, Time::ZERO)).collect();
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    // the tests read finished flows' state after the run
    sim.keep_finished_flows();
    sim.run();
    sim
}

/// Bytes the switch's port to host 0 has sent.
fn bottleneck_tx(sim: &Simulation) -> u64 {
    let p = sim.port_of(N + 1, 0).unwrap();
    sim.ports[p as usize].tx_bytes
}

#[test]
fn queue_near_zero_and_utilisation_near_eta() {
    let (t1, t2) = (Time::from_us(500), Time::from_us(2500));
    let a = scenario(t1);
    let b = scenario(t2);
    let wire = (bottleneck_tx(&b) - bottleneck_tx(&a)) as f64;
    let util = wire / Rate::gbps(100).bytes_in(Time(t2.0 - t1.0)) as f64;
    assert!((util - 0.95).abs() < 0.03, "bottleneck utilisation {util:.3}, eta 0.95");
    // the queue after convergence: near empty (a few packets), never a BDP
    let q = &b.stats.queues;
    let late: Vec<u64> = q.time_ps.iter().zip(&q.bytes).filter(|(t, _)| **t >= t1.0).map(|(_, b)| *b).collect();
    let mean = late.iter().sum::<u64>() as f64 / late.len() as f64;
    let max = *late.iter().max().unwrap();
    assert!(mean < 5_000.0, "mean queue {mean:.0} B");
    assert!(max < 50_000, "queue peak {max} B after convergence");
    // every sender estimates U near eta
    for f in 0..b.flows.len() {
        let AnyCc::Hpcc(h) = &b.flows[f].cc else { panic!() };
        assert!((h.utilisation() - 0.95).abs() < 0.1, "U = {}", h.utilisation());
    }
    assert_eq!(b.stats.counters.pauses_sent, 0, "no PFC needed");
}

#[test]
fn int_header_is_counted_on_the_wire() {
    // a lone 100 KB flow: 100 data packets of 1000 + 48 + 42 bytes, 100 ACKs of 60 + 42 (counted
    // on both hops of the star)
    let t = star(2, Rate::gbps(100), Time::from_us(1));
    let mut cfg = NetConfig { cc: CcConfig::Hpcc(HpccConfig::default()), ..Default::default() };
    cfg.aqm = cfg.cc.aqm();
    cfg.record.buffer_interval = None;
    let r = run(&t, &[flow(0, 1, 100_000, Time::ZERO)], cfg);
    assert_conserved(&r);
    assert_eq!(r.counters.ack_bytes, 2 * 100 * (60 + 42));
    let sender_port = r.ports.node.iter().position(|&n| n == 0).unwrap();
    assert_eq!(r.ports.tx_bytes[sender_port], 100 * (1000 + 48 + 42));
}
