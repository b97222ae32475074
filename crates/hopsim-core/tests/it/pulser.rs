//! Pulser (Almasi et al.): the switch marks EIN within N dequeues of a 24-to-1 incast's onset and
//! never on a single long flow; a long flow's sender cuts to cwnd_safe = 4 MSS on the first EIN
//! echo and restores its pre-incast window once the incast is over.
//!
//! Setting as in Pulser §IV, on one switch: 10 Gb/s links with 10 us of delay, incast degree 24,
//! short flows of 32 KB (the top of §IV's 8-32 KB), DCTCP marking at K = 65 packets, no PFC.

use crate::common::*;
use hopsim_core::cc::pulser::{Pulser, PulserConfig};
use hopsim_core::cc::{AnyCc, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::{EcnConfig, WindowConfig};
use hopsim_core::topo::star;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

const K: u64 = 65 * 1048;
const INCAST_AT: Time = Time::from_ms(3);
/// Receiver 0, long-flow sender 1, incast senders 2..=25; the switch is node 26.
const HOSTS: usize = 26;

fn cfg(stop: Time) -> NetConfig {
    let mut cfg = NetConfig { cc: CcConfig::Pulser(PulserConfig::default()), fc: FcConfig::None, stop_time: Some(stop), ..Default::default() };
    cfg.aqm = cfg.cc.aqm();
    cfg.switch.lossless = false;
    cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: K, kmax_bytes: K, pmax: 1.0, ref_rate: None };
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    cfg
}

fn incast(at: Time) -> Vec<FlowSpec> {
    (2..2 + 24).map(|s| FlowSpec { incast: true, ..flow(s, 0, 32_000, at) }).collect()
}

fn simulate(flows: &[FlowSpec], stop: Time) -> Simulation {
    let t = star(HOSTS, Rate::gbps(10), Time::from_us(10));
    let mut sim = Simulation::new(&t, flows, cfg(stop)).unwrap();
    // the tests read finished flows' state after the run
    sim.keep_finished_flows();
    sim.run();
    sim
}

fn pulser(sim: &Simulation, f: usize) -> &Pulser {
    match &sim.flows[f].cc {
        AnyCc::Pulser(p) => p,
        _ => panic!("not Pulser"),
    }
}

/// Long flow (flow 0) from host 1, plus the incast at `INCAST_AT`.
fn with_long_flow(stop: Time) -> Simulation {
    let mut flows = vec![flow(1, 0, 1 << 40, Time::ZERO)];
    flows.extend(incast(INCAST_AT));
    simulate(&flows, stop)
}

#[test]
fn marks_within_n_dequeues_of_incast_onset() {
    // the port to host 0 is idle until the incast: its first dequeue is the onset
    let sim = simulate(&incast(Time::from_us(100)), Time::from_ms(5));
    let ein = &sim.switches[0].aqm.ein[0];
    let first = ein.first_mark.expect("the incast is detected");
    assert!(first <= 50, "first EIN mark at dequeue {first}, N = 50");
    assert!(ein.marked > 0);
    assert_conserved(&sim.stats);
    // every incast sender heard of it and braked
    for f in 0..24 {
        assert!(pulser(&sim, f).cuts >= 1, "incast flow {f} never cut");
    }
}

#[test]
fn no_marks_on_a_single_long_flow() {
    // equal link rates (Pulser §IV): one flow cannot grow the switch queue at all
    let sim = simulate(&[flow(1, 0, 1 << 40, Time::ZERO)], Time::from_ms(20));
    let marked: u64 = sim.switches.iter().map(|s| s.aqm.ein_marked()).sum();
    assert_eq!(marked, 0, "EIN on a lone flow");
    assert_eq!(pulser(&sim, 0).cuts, 0);
    let delivered = sim.stats.flows.delivered_bytes[0] as f64;
    let cap = Rate::gbps(10).bytes_in(Time::from_ms(20)) as f64 * 1000.0 / 1048.0;
    assert!(delivered > 0.95 * cap, "goodput {:.3} of capacity", delivered / cap);
}

#[test]
fn cuts_to_cwnd_safe_and_restores_the_pre_incast_window() {
    let w_pre = pulser(&with_long_flow(INCAST_AT), 0).cwnd();
    let sim = with_long_flow(Time::from_ms(10));
    let p = pulser(&sim, 0);
    let cut_at = p.first_cut_at.expect("the long flow saw EIN");
    assert!(cut_at > INCAST_AT && cut_at < INCAST_AT + Time::from_us(200), "cut at {cut_at}");
    // it saved the window it had before the incast (give or take the growth of one RTT)
    let saved = p.first_saved.unwrap();
    assert!(saved.abs_diff(w_pre) <= 2_000, "saved {saved} vs pre-incast {w_pre}");
    // right after the cut: 4 MSS
    let during = with_long_flow(cut_at + Time::from_us(1));
    let pd = pulser(&during, 0);
    assert!(pd.braking());
    assert_eq!(pd.cwnd(), 4 * 1000);
    // once the incast is over, the saved window comes back in one step
    let back_at = p.first_restore_at.expect("restored after the incast");
    assert_eq!(p.first_restored, Some(saved));
    assert!(back_at < cut_at + Time::from_ms(2), "braked {} us", (back_at.0 - cut_at.0) / 1_000_000);
    assert!(sim.stats.flows.finish_ps[1..].iter().all(|&t| t != u64::MAX), "the incast completed");
    let after = with_long_flow(back_at);
    assert_eq!(pulser(&after, 0).cwnd(), saved);
    assert!(!pulser(&after, 0).braking());
}
