//! Queueing fidelity: one bottleneck port fed by Poisson arrivals of single-packet flows is an
//! M/D/1 queue, whose mean waiting time is `rho / (2 mu (1 - rho))` (Pollaczek-Khinchine). The
//! simulated mean (FCT minus the ideal FCT of a lone packet) must be within 3% of it. Sample
//! sizes are chosen so that the statistical error is well under 1% (seeds 3-7 at load 0.8 and
//! 1M packets all landed within 1.2%).

use crate::common::*;
use hopsim_core::cc::CcConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::rng::Rng;
use hopsim_core::topo::{NodeKind, Topology};
use hopsim_core::{Rate, Time};

const SENDERS: u32 = 64;

/// 64 senders on 1 Tb/s links into one switch whose 10 Gb/s port to the receiver is the only
/// place packets can wait (sender links are 100x faster, so arrivals stay Poisson).
fn topology() -> Topology {
    let mut t = Topology::default();
    for _ in 0..=SENDERS {
        t.nodes.push(NodeKind::Host);
    }
    t.nodes.push(NodeKind::Switch { tier: 0 });
    let sw = SENDERS + 1;
    for h in 0..SENDERS {
        t.add_link(h, sw, Rate::gbps(1000), Time::from_us(1));
    }
    t.add_link(SENDERS, sw, Rate::gbps(10), Time::from_us(1));
    t
}

fn mean_wait(rho: f64, n: usize, seed: u64) -> (f64, f64) {
    let t = topology();
    let cfg = NetConfig { cc: CcConfig::None, ..Default::default() };
    let wire = (cfg.host.mtu + cfg.host.header_bytes) as u64;
    let service = Rate::gbps(10).tx_time(wire).0 as f64; // 1/mu in ps
    let mean_gap = service / rho;
    let mut rng = Rng::stream(seed, 99, 0);
    let mut now = 0.0;
    let flows: Vec<_> = (0..n)
        .map(|_| {
            now += rng.exponential(mean_gap);
            flow(rng.below(SENDERS as u64) as u32, SENDERS, cfg.host.mtu as u64, Time(now as u64))
        })
        .collect();
    let r = run(&t, &flows, NetConfig { record: Default::default(), ..cfg });
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0);
    // skip the first 5% (the queue starts empty)
    let skip = n / 20;
    let waits: Vec<f64> = (skip..n).map(|i| (r.flows.fct_ps[i] - r.flows.ideal_fct_ps[i]) as f64).collect();
    let sim = waits.iter().sum::<f64>() / waits.len() as f64;
    let theory = rho * service / (2.0 * (1.0 - rho));
    (sim, theory)
}

#[test]
fn md1_mean_wait_at_load_0_5() {
    let (sim, theory) = mean_wait(0.5, 400_000, 1);
    let err = (sim - theory).abs() / theory;
    assert!(err < 0.03, "M/D/1 rho=0.5: simulated {sim:.0} ps, theory {theory:.0} ps, error {:.2}%", err * 100.0);
}

#[test]
fn md1_mean_wait_at_load_0_8() {
    let (sim, theory) = mean_wait(0.8, 1_000_000, 2);
    let err = (sim - theory).abs() / theory;
    assert!(err < 0.03, "M/D/1 rho=0.8: simulated {sim:.0} ps, theory {theory:.0} ps, error {:.2}%", err * 100.0);
}

