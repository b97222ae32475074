//! TIMELY (Mittal et al. 2015) reacts to the RTT gradient: a long flow's rate falls while a burst
//! of competing flows builds the queue (RTT grows) and rises again once the queue drains (RTT
//! shrinks, then stays under T_low).

use crate::common::*;
use hopsim_core::cc::timely::TimelyConfig;
use hopsim_core::cc::{AnyCc, CcConfig, CongestionControl};
use hopsim_core::config::NetConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::topo::star;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

/// Host 1 sends a long flow to host 0; at 1 ms hosts 2..9 each send 1 MB to host 0. 10 Gb/s
/// links, 2 us delay (unloaded RTT ~ 9 us, well under T_low = 50 us). PFC keeps it lossless.
fn scenario(stop: Time) -> (Simulation, f64) {
    let t = star(10, Rate::gbps(10), Time::from_us(2));
    let mut cfg = NetConfig { cc: CcConfig::Timely(TimelyConfig::default()), stop_time: Some(stop), ..Default::default() };
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    let mut flows: Vec<FlowSpec> = vec![flow(1, 0, 1 << 40, Time::ZERO)];
    flows.extend((2..10).map(|s| flow(s, 0, 1_000_000, Time::from_ms(1))));
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    sim.run();
    let grad = match &sim.flows[0].cc {
        AnyCc::Timely(x) => x.gradient(),
        _ => unreachable!(),
    };
    (sim, grad)
}

fn rate_at(stop: Time) -> (Rate, f64) {
    let (sim, g) = scenario(stop);
    (sim.flows[0].cc.rate(), g)
}

#[test]
fn rate_falls_while_rtt_grows_and_recovers_after() {
    // alone, under T_low: line rate
    let (before, _) = rate_at(Time::from_us(900));
    assert_eq!(before, Rate::gbps(10));
    // the burst arrives: the queue (and the RTT) grows, the gradient is positive, the rate falls
    let mut saw_positive = false;
    let mut min_rate = before;
    for us in [1_050u64, 1_100, 1_200, 1_400, 2_000] {
        let (r, g) = rate_at(Time::from_us(us));
        saw_positive |= g > 0.0;
        min_rate = min_rate.min(r);
    }
    assert!(saw_positive, "the RTT gradient turned positive during the burst");
    assert!(min_rate.0 < before.0 / 2, "rate fell only to {min_rate}");
    // 8 MB at 10 Gb/s drain in under 8 ms; afterwards the RTT is back under T_low: rate recovers
    let (sim, _) = scenario(Time::from_ms(30));
    assert!(sim.stats.flows.finish_ps[1..].iter().all(|&t| t != u64::MAX), "the burst finished");
    let after = sim.flows[0].cc.rate();
    assert!(after.0 > 9 * before.0 / 10, "rate after the burst {after}");
}
