//! Per-flow sending-rate caps (issue 13 item 2; FlowSail Fig. 8's 60/20/20 Gb/s flows, P-PFC
//! Fig. 9a's per-host rates): the NIC spaces a capped flow's packets at the cap, so a lone flow
//! finishes in closed form, and a host's cap applies to its flows with the lower of the two
//! winning.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::params::HostRateCap;
use hopsim_core::topo::star;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Time};

/// One flow of 1,000 full packets (1,000 B payload + 48 B header) over a 100 Gb/s star (two
/// hops of 1 us): its last packet leaves the NIC 999 pacing gaps after the first, then crosses
/// both hops at line rate. `gap_rate` is the rate the NIC should pace at.
fn expected_fct(gap_rate: Rate) -> u64 {
    let wire = 1048;
    let gap = gap_rate.tx_time(wire).0;
    let hop = Rate::gbps(100).tx_time(wire).0 + Time::from_us(1).0;
    999 * gap + 2 * hop
}

fn lone(cap: Option<Rate>, cfg: NetConfig) -> hopsim_core::stats::RunStats {
    let t = star(4, Rate::gbps(100), Time::from_us(1));
    let f = FlowSpec { rate_cap: cap, ..flow(0, 3, 1_000_000, Time::from_us(3)) };
    let r = run(&t, &[f], cfg);
    assert_conserved(&r);
    r
}

#[test]
fn a_lone_flow_capped_at_20g_finishes_in_size_over_20g_plus_path_delay() {
    let r = lone(Some(Rate::gbps(20)), NetConfig::default());
    // 999 x 419.2 ns + 2 x (83.84 ns + 1 us) = 420.948 us: size / 20G (419.2 us of wire bytes)
    // plus the path's delay, less one gap (the first packet leaves at once)
    assert_eq!(r.flows.fct_ps[0], expected_fct(Rate::gbps(20)));
    assert_eq!(expected_fct(Rate::gbps(20)), 420_948_480);
    // its ideal is the same flow at the cap: within one packet's time at the cap
    let ideal = r.flows.ideal_fct_ps[0];
    assert!(r.flows.fct_ps[0] <= ideal && ideal - r.flows.fct_ps[0] < 419_200, "fct {} ideal {ideal}", r.flows.fct_ps[0]);
    // uncapped, the same flow runs at line rate (the cap, not something else, slowed it)
    let free = lone(None, NetConfig::default());
    assert_eq!(free.flows.fct_ps[0], expected_fct(Rate::gbps(100)));
    assert_eq!(free.flows.fct_ps[0], free.flows.ideal_fct_ps[0]);
}

#[test]
fn a_host_cap_applies_to_its_flows_and_the_lower_cap_wins() {
    let mut cfg = NetConfig::default();
    cfg.host.rate_cap = Some(Rate::gbps(40));
    cfg.host.host_rate_caps = vec![HostRateCap { host: 0, rate: Rate::gbps(10) }];
    // host 0's own cap (10G) overrides every host's (40G), and beats the flow's 20G
    assert_eq!(lone(Some(Rate::gbps(20)), cfg.clone()).flows.fct_ps[0], expected_fct(Rate::gbps(10)));
    // a flow's cap below its host's wins
    assert_eq!(lone(Some(Rate::gbps(5)), cfg.clone()).flows.fct_ps[0], expected_fct(Rate::gbps(5)));
    // every host's cap applies where no per-host one does
    cfg.host.host_rate_caps.clear();
    assert_eq!(lone(None, cfg).flows.fct_ps[0], expected_fct(Rate::gbps(40)));
}

#[test]
fn a_zero_cap_is_refused_naming_the_flow() {
    let t = star(4, Rate::gbps(100), Time::from_us(1));
    let f = FlowSpec { rate_cap: Some(Rate(0)), ..flow(0, 3, 1000, Time::ZERO) };
    let err = hopsim_core::Simulation::new(&t, &[f], NetConfig::default()).err().expect("refused");
    assert!(err.contains("flow 0") && err.contains("rate cap"), "{err}");
    // a per-host cap must name a host (node 4 is the star's switch)
    let mut cfg = NetConfig::default();
    cfg.host.host_rate_caps = vec![HostRateCap { host: 4, rate: Rate::gbps(1) }];
    let err = hopsim_core::Simulation::new(&t, &[flow(0, 3, 1000, Time::ZERO)], cfg).err().expect("refused");
    assert!(err.contains("transport.host_rate_caps") && err.contains("node 4"), "{err}");
}
