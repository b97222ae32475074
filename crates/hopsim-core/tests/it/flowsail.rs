//! FlowSail's defining behaviours on the BFC testbed of `bfc.rs` (Fig. 6's three flow groups):
//! with only two queues per port it pauses the congested flows alone and isolates them upstream,
//! so the victim flows go on as under ideal per-flow flow control, where BFC with one data queue
//! blocks them; and order marks keep every flow in order (no go-back-N retransmission).

use crate::bfc::{bfc_net, fig8_flows};
use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::bfc::{Assignment, BfcConfig};
use hopsim_core::fc::flowsail::FlowsailConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::stats::RunStats;

fn flowsail_net(nqueues: usize) -> NetConfig {
    let mut net = bfc_net(BfcConfig::default(), nqueues);
    net.fc = FcConfig::Flowsail(FlowsailConfig::default());
    net.switch.lossless = true;
    net
}

#[test]
fn two_queues_suffice_to_pause_only_the_congested_flows() {
    let (t, flows, g1) = fig8_flows();
    let fs = run(&t, &flows, flowsail_net(2));
    let bfc_one_queue = run(&t, &flows, bfc_net(BfcConfig { assignment: Assignment::Dynamic, ..Default::default() }, 2));
    let ideal = run(&t, &flows, bfc_net(BfcConfig { per_flow: true, ..Default::default() }, 16));
    assert_conserved(&fs);
    assert_eq!(fs.counters.drops, 0);
    let mean = |r: &RunStats| g1.iter().map(|&i| r.flows.fct_ps[i] as f64).sum::<f64>() / g1.len() as f64 / 1e6;
    eprintln!("group 1 FCT us: flowsail {:.0}, bfc 1q {:.0}, ideal {:.0}", mean(&fs), mean(&bfc_one_queue), mean(&ideal));
    eprintln!("{:?}", fs.flows.fct_ps.iter().map(|x| x / 1_000_000).collect::<Vec<_>>());
    eprintln!("modules {:?}", fs.modules);
    // BFC with one data queue pauses group 1 with group 2; FlowSail does not
    assert!(mean(&bfc_one_queue) > 2.0 * mean(&fs));
    // and FlowSail tracks ideal per-flow flow control
    assert!((mean(&fs) / mean(&ideal) - 1.0).abs() < 0.15);
    // only flow pauses went out (FlowSail's frames carry the FID), and flows were isolated
    assert!(fs.control.kind.iter().all(|k| k == "flow_pause" || k == "pfc"));
    assert!(fs.modules["flowsail_isolations"] > 0);
}

#[test]
fn order_marks_keep_every_flow_in_order() {
    let (t, flows, _) = fig8_flows();
    let fs = run(&t, &flows, flowsail_net(2));
    let inserted: u64 = fs.ports.markers_inserted.iter().sum();
    let matched: u64 = fs.ports.markers_matched.iter().sum();
    assert!(inserted > 0 && inserted == matched, "{inserted} order-mark pairs, {matched} matched");
    assert_eq!(fs.counters.nacks, 0, "nothing arrived out of order");
    assert_eq!(fs.flows.retx_bytes.iter().sum::<u64>(), 0);
}
