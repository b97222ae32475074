//! Pulser's Ideal (`cc::ideal`): senders with an oracle that books every packet a queue-free path
//! never queue in the network: an 8-to-1 incast keeps at most the one packet being forwarded in
//! the switch (line-rate senders would pile up 450 KB there), while the bottleneck stays busy (the
//! last flow ends when all the bytes have crossed it back to back); so do crossing flows and
//! incasts on a leaf-spine.

use crate::common::*;
use hopsim_core::cc::CcConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::topo::{star, LeafSpine};
use hopsim_core::{Rate, Simulation, Time};

fn ideal_cfg() -> NetConfig {
    let mut cfg = NetConfig { cc: CcConfig::Ideal, fc: FcConfig::None, ..Default::default() };
    cfg.switch.lossless = false;
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    cfg
}

#[test]
fn an_ideal_incast_never_queues_and_keeps_the_bottleneck_busy() {
    let t = star(9, Rate::gbps(10), Time::from_us(10));
    let flows: Vec<_> = (1..9).map(|s| flow(s, 0, 64_000, Time::from_us(1))).collect();
    let mut sim = Simulation::new(&t, &flows, ideal_cfg()).unwrap();
    sim.run();
    assert_conserved(&sim.stats);
    assert_eq!(sim.stats.counters.drops, 0);
    assert!(sim.stats.counters.max_switch_buffer_bytes <= 1048, "{} bytes queued", sim.stats.counters.max_switch_buffer_bytes);
    // 8 x 64 packets of 1048 B back to back on the 10G link to host 0, plus one path's latency
    let wire = Rate::gbps(10).tx_time(8 * 64 * 1048).0;
    let last = *sim.stats.flows.fct_ps.iter().max().unwrap();
    assert!(last >= wire && last < wire + Time::from_us(25).0, "last FCT {last} ps vs {wire} ps on the wire");
    let o = sim.ideal.as_ref().unwrap();
    assert_eq!(o.booked, 8 * 64);
    assert!(o.held_ps > 0, "the incast's packets waited at their senders");
}

#[test]
fn ideal_flows_across_a_fabric_never_queue() {
    let ls = LeafSpine {
        hosts_per_tor: 4,
        tors: 4,
        spines: 2,
        host_rate: Rate::gbps(10),
        fabric_rate: Rate::gbps(10),
        host_delay: Time::from_us(1),
        fabric_delay: Time::from_us(1),
        links_per_spine: 1,
    };
    let t = ls.build();
    // every host sends to a host of another rack, and two incasts meet at hosts 0 and 5
    let mut flows: Vec<_> = (0..16u32).map(|s| flow(s, (s + 5) % 16, 200_000, Time::from_us(s as u64))).collect();
    flows.extend((8..14).map(|s| flow(s, 0, 30_000, Time::from_us(20))));
    let mut sim = Simulation::new(&t, &flows, ideal_cfg()).unwrap();
    sim.run();
    assert_conserved(&sim.stats);
    assert_eq!(sim.stats.counters.drops, 0);
    assert!(sim.stats.counters.max_switch_buffer_bytes <= 1048, "{} bytes queued", sim.stats.counters.max_switch_buffer_bytes);
}
