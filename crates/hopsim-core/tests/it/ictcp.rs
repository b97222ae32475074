//! ICTCP (Wu et al. 2013): the receiver keeps the sum of the windows it advertises near what its
//! link can carry in one RTT, so a 24-to-1 incast neither fills the switch nor loses packets, while
//! a lone connection's window still grows to fill the link.

use crate::common::*;
use hopsim_core::cc::dctcp::DctcpConfig;
use hopsim_core::cc::ictcp::{Ictcp, IctcpConfig};
use hopsim_core::cc::window::StartMode;
use hopsim_core::cc::{AnyCc, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::topo::star;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

/// 10 Gb/s, 10 us links: unloaded RTT ~ 42 us, BDP ~ 52 KB.
const BDP: u64 = 52_000;

fn cfg(cc: CcConfig) -> NetConfig {
    let mut cfg = NetConfig { cc, fc: FcConfig::None, stop_time: Some(Time::from_ms(100)), ..Default::default() };
    cfg.switch.lossless = false;
    cfg.switch.ecn.enabled = false;
    cfg.switch.buffer_bytes = 400_000;
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    cfg
}

fn simulate(cc: CcConfig, flows: &[FlowSpec]) -> Simulation {
    let t = star(26, Rate::gbps(10), Time::from_us(10));
    let mut sim = Simulation::new(&t, flows, cfg(cc)).unwrap();
    // the tests read finished flows' state after the run
    sim.keep_finished_flows();
    sim.run();
    sim
}

fn ictcp(sim: &Simulation, f: usize) -> &Ictcp {
    match &sim.flows[f].cc {
        AnyCc::Ictcp(x) => x,
        _ => panic!("not ICTCP"),
    }
}

fn incast() -> Vec<FlowSpec> {
    (1..=24).map(|s| FlowSpec { incast: true, ..flow(s, 0, 256_000, Time::from_us(10)) }).collect()
}

/// Peak queue at the switch's port to host 0 (the switch is node 26).
fn peak_queue(sim: &Simulation) -> u64 {
    sim.ports[sim.port_of(26, 0).unwrap() as usize].peak_qbytes
}

#[test]
fn lone_connection_window_fills_the_link() {
    let sim = simulate(CcConfig::Ictcp(IctcpConfig::default()), &[flow(1, 0, 20_000_000, Time::ZERO)]);
    assert_conserved(&sim.stats);
    let x = ictcp(&sim, 0);
    assert!(x.rx.max_rwnd >= BDP * 7 / 10, "lone window peaked at {}", x.rx.max_rwnd);
    // FCT within 25% of ideal: the window is not what limits it
    let sd = sim.stats.flows.slowdown[0];
    assert!(sd < 1.25, "slowdown {sd:.2}");
}

#[test]
fn receive_window_is_limited_under_incast() {
    let sim = simulate(CcConfig::Ictcp(IctcpConfig::default()), &incast());
    assert_conserved(&sim.stats);
    let host0 = &sim.hosts[0].rx.ictcp;
    let peak_sum = host0.peak_sum_rwnd;
    let max_each = (0..24).map(|f| ictcp(&sim, f).rx.max_rwnd).max().unwrap();
    // the sum of advertised windows stays near alpha x C x RTT (plus the 2-MSS floors)
    assert!(peak_sum <= 2 * BDP + 24 * 2_000, "sum of windows peaked at {peak_sum}");
    assert!(max_each <= BDP / 2, "one connection's window reached {max_each}");
    assert_eq!(sim.stats.counters.drops, 0, "ICTCP keeps the incast from overflowing");
    // plain TCP (slow start from 10 packets, no ECN) on the same incast fills the buffer and drops
    let tcp = CcConfig::Dctcp(DctcpConfig { start: StartMode::SlowStart, ..Default::default() });
    let plain = simulate(tcp, &incast());
    assert_conserved(&plain.stats);
    assert!(plain.stats.counters.drops > 0, "plain TCP should overflow a 400 KB buffer");
    assert!(peak_queue(&sim) < peak_queue(&plain) / 2, "ICTCP queue {} vs TCP {}", peak_queue(&sim), peak_queue(&plain));
}

/// Over the TCP transport with delayed ACKs (every second segment, or after 2 us), an ACK the
/// receiver's timer sends advertises the window of its moment like any other: a 4-to-1 incast's
/// windows grow from 2 MSS by steps the quota cuts to odd sizes, and the odd segment at a
/// window's end waits for the timer.
#[test]
fn every_ack_advertises_the_window_delayed_ones_too() {
    use hopsim_core::params::TcpConfig;
    let t = star(26, Rate::gbps(10), Time::from_us(10));
    let mut net = cfg(CcConfig::Ictcp(IctcpConfig::default()));
    net.host.tcp = Some(TcpConfig {
        min_rto: Time::from_ms(1),
        initial_rto: Time::from_ms(1),
        clock_granularity: Time::from_us(1),
        delayed_ack: 2,
        delayed_ack_timeout: Time::from_us(2),
        ..Default::default()
    });
    let flows: Vec<FlowSpec> = incast().into_iter().take(4).collect();
    let mut sim = Simulation::new(&t, &flows, net).unwrap();
    sim.keep_finished_flows();
    sim.run();
    assert_conserved(&sim.stats);
    assert_eq!(sim.stats.counters.flows_finished, 4, "every flow finishes");
    let without: Vec<u64> = (0..4).map(|f| ictcp(&sim, f).acks_without_window).collect();
    assert!(without.iter().all(|&n| n == 0), "ACKs with no window, per flow: {without:?}");
    // the windows did move while segments waited: not the 2-MSS start throughout
    let mss = NetConfig::default().host.mtu as u64;
    assert!((0..4).all(|f| ictcp(&sim, f).rx.max_rwnd > 2 * mss), "windows grew");
}
