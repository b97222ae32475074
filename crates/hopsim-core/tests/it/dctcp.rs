//! DCTCP (Alizadeh et al. 2010) on one bottleneck: alpha follows the fraction of marked bytes, two
//! long flows share the link fairly at full utilisation, and the queue stays near `K`.

use crate::common::*;
use hopsim_core::cc::dctcp::{Dctcp, DctcpConfig};
use hopsim_core::cc::window::StartMode;
use hopsim_core::cc::{AnyCc, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::{EcnConfig, WindowConfig};
use hopsim_core::topo::star;
use hopsim_core::{Rate, Simulation, Time};

/// DCTCP §3.4: K = 65 packets at 10 Gb/s (1048-byte frames here).
const K: u64 = 65 * 1048;

pub fn dctcp_cfg(cc: DctcpConfig, stop: Time) -> NetConfig {
    let mut cfg = NetConfig { cc: CcConfig::Dctcp(cc), fc: FcConfig::None, stop_time: Some(stop), ..Default::default() };
    cfg.switch.lossless = false;
    cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: K, kmax_bytes: K, pmax: 1.0, ref_rate: None };
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    cfg
}

fn dctcp_of(sim: &Simulation, f: usize) -> &Dctcp {
    match &sim.flows[f].cc {
        AnyCc::Dctcp(d) => d,
        _ => panic!("not DCTCP"),
    }
}

/// Two long flows from hosts 0 and 1 to host 2 over 10 Gb/s links with 10 us of delay each
/// (unloaded RTT about 42 us); the second starts 1 ms later. Returns the simulation at `stop`.
fn two_flows(start: StartMode, stop: Time) -> Simulation {
    let t = star(3, Rate::gbps(10), Time::from_us(10));
    let mut cfg = dctcp_cfg(DctcpConfig { start, ..Default::default() }, stop);
    cfg.record.queue_ports = vec![(3, 2)];
    cfg.record.queue_interval = Time::from_us(5);
    let big = 1u64 << 40;
    let flows = vec![flow(0, 2, big, Time::ZERO), flow(1, 2, big, Time::from_ms(1))];
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    // the tests read finished flows' state after the run
    sim.keep_finished_flows();
    sim.run();
    sim
}

#[test]
fn alpha_tracks_the_marked_fraction() {
    let sim = two_flows(StartMode::LineRate, Time::from_ms(30));
    for f in 0..2 {
        let d = dctcp_of(&sim, f);
        let frac = d.marked_total as f64 / d.acked_total as f64;
        // steady state: a few marked packets per sawtooth, alpha ~ sqrt(2/W) (DCTCP §3.3)
        assert!(frac > 0.01 && frac < 0.5, "flow {f}: marked fraction {frac}");
        let mean = d.alpha_mean();
        assert!((mean - frac).abs() < 0.35 * frac + 0.01, "flow {f}: mean alpha {mean:.4} vs marked fraction {frac:.4}");
        assert!(d.cuts > 10, "flow {f}: only {} cuts", d.cuts);
    }
    assert_eq!(sim.stats.counters.drops, 0, "DCTCP keeps the queue below the buffer");
}

#[test]
fn two_flows_share_the_bottleneck_fairly() {
    let a = two_flows(StartMode::LineRate, Time::from_ms(10));
    let b = two_flows(StartMode::LineRate, Time::from_ms(30));
    let window = Time::from_ms(20);
    let cap = Rate::gbps(10).bytes_in(window) as f64 * 1000.0 / 1048.0; // payload capacity
    let got: Vec<f64> = (0..2).map(|i| (b.stats.flows.delivered_bytes[i] - a.stats.flows.delivered_bytes[i]) as f64).collect();
    for (i, g) in got.iter().enumerate() {
        let dev = (g - cap / 2.0).abs() / (cap / 2.0);
        assert!(dev < 0.10, "flow {i}: {:.2} Gb/s, {:.1}% off the fair share", g * 8.0 / 0.02 / 1e9, dev * 100.0);
    }
    let util = got.iter().sum::<f64>() / cap;
    assert!(util > 0.95, "utilisation {util:.3}");
    // the queue hovers around K: never far above it, rarely empty
    let q = &b.stats.queues;
    let late: Vec<u64> = q.time_ps.iter().zip(&q.bytes).filter(|(t, _)| **t > Time::from_ms(5).0).map(|(_, b)| *b).collect();
    let max = *late.iter().max().unwrap();
    let mean = late.iter().sum::<u64>() as f64 / late.len() as f64;
    assert!(max < 2 * K, "queue peak {max} B vs K = {K}");
    assert!(mean > 0.3 * K as f64 && mean < 1.3 * K as f64, "mean queue {mean:.0} B vs K = {K}");
}

#[test]
fn slow_start_variant_starts_small_and_completes() {
    // BFC Appendix D: DCTCP + SS, initial window 10 packets
    let t = star(3, Rate::gbps(10), Time::from_us(10));
    let cfg = dctcp_cfg(DctcpConfig { start: StartMode::SlowStart, ..Default::default() }, Time::from_ms(50));
    let flows = vec![flow(0, 2, 2_000_000, Time::ZERO), flow(1, 2, 2_000_000, Time::ZERO)];
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    let line = star(3, Rate::gbps(10), Time::from_us(10));
    let cfg = dctcp_cfg(DctcpConfig::default(), Time::from_ms(50));
    let r2 = run(&line, &flows, cfg);
    assert_conserved(&r2);
    // slow start costs a few RTTs on a 2 MB flow; line-rate start does not
    let mean = |r: &hopsim_core::stats::RunStats| r.flows.fct_ps.iter().sum::<u64>() as f64 / 2.0;
    assert!(mean(&r) > mean(&r2), "slow start {:.0} ps vs line rate {:.0} ps", mean(&r), mean(&r2));
}
