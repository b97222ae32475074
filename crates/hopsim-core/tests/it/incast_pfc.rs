//! 16-to-1 incast into a switch with a small buffer: PFC keeps it lossless (pauses recorded, no
//! drop); without flow control it drops, and go-back-N still completes every flow.

use crate::common::*;
use hopsim_core::cc::CcConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::topo::star;
use hopsim_core::{Rate, Time};

fn incast_cfg(fc: FcConfig) -> NetConfig {
    let mut cfg = NetConfig { fc, cc: CcConfig::None, ..Default::default() };
    cfg.switch.buffer_bytes = 1_000_000;
    cfg.switch.lossless = cfg.fc.pauses();
    cfg.host.window = WindowConfig::Off;
    cfg
}

fn incast_flows() -> Vec<hopsim_core::workload::FlowSpec> {
    (1..=16).map(|s| flow(s, 0, 500_000, Time::from_us(1))).collect()
}

#[test]
fn pfc_is_lossless_and_pauses() {
    let t = star(17, Rate::gbps(100), Time::from_us(1));
    let r = run(&t, &incast_flows(), incast_cfg(FcConfig::Pfc));
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0, "PFC must not drop");
    assert!(r.counters.pauses_sent > 0, "the incast must trigger PFC");
    assert!(r.counters.resumes_sent > 0);
    // pauses are recorded at the switch, toward the senders' ports
    assert_eq!(r.pauses.time_ps.len() as u64, r.counters.pauses_sent + r.counters.resumes_sent);
    let paused: u64 = r.ports.paused_ps.iter().sum();
    assert!(paused > 0, "senders' NIC ports were held");
    assert!(r.flows.retx_bytes.iter().all(|&b| b == 0));
    // the buffer never overflows
    assert!(r.counters.max_switch_buffer_bytes <= 1_000_000);
}

#[test]
fn lossy_fabric_drops_and_go_back_n_recovers() {
    let t = star(17, Rate::gbps(100), Time::from_us(1));
    let r = run(&t, &incast_flows(), incast_cfg(FcConfig::None));
    assert!(r.counters.drops > 0, "a lossy 1 MB switch must drop under 16:1");
    assert_eq!(r.counters.pauses_sent, 0);
    assert!(r.flows.retx_bytes.iter().sum::<u64>() > 0, "losses are repaired by retransmission");
    assert_conserved(&r);
    assert!(r.counters.nacks > 0);
}

#[test]
fn pause_frames_cascade_hop_by_hop() {
    // dumbbell: 8 senders on the left, receiver on the right behind a 25G bottleneck; the left
    // switch fills and pauses the senders, the right one pauses the left switch
    let t = hopsim_core::topo::dumbbell(8, 1, Rate::gbps(100), Rate::gbps(100), Time::from_us(1));
    let mut t = t;
    // receiver's link is slower than the bottleneck: congestion starts at the right switch
    let rx = 8u32;
    let li = t.links.iter().position(|l| l.a == rx || l.b == rx).unwrap();
    t.links[li].rate = Rate::gbps(25);
    let flows: Vec<_> = (0..8).map(|s| flow(s, rx, 400_000, Time::from_us(1))).collect();
    let r = run(&t, &flows, incast_cfg(FcConfig::Pfc));
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0);
    let nodes: std::collections::BTreeSet<u32> = r.pauses.node.iter().copied().collect();
    assert!(nodes.len() >= 2, "pauses must come from both switches, got {nodes:?}");
}
