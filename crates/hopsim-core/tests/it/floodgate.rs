//! Floodgate's defining behaviours on a leaf-spine under a 24-to-1 incast: the incast waits in
//! VOQs upstream instead of filling the last hop, and a flow to another host behind the same
//! last hop is not blocked by it (PFC pauses the shared spine-to-ToR links and blocks it).

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::floodgate::FloodgateConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::net::sched::SchedulerConfig;
use hopsim_core::stats::RunStats;
use hopsim_core::workload::FlowSpec;
use hopsim_core::Time;

/// 4 ToRs of 8 hosts, 2 spines, 100 Gb/s and 1 us everywhere. Hosts 0-7 are on ToR 0.
fn topo() -> hopsim_core::topo::Topology {
    leaf_spine_100g(8, 4, 2)
    .build()
}

/// 24 senders on ToRs 1-3 send 500 KB each to host 0; host 8 (ToR 1) sends 2 MB to host 1,
/// which shares ToR 0's downlinks from the spines with the incast.
fn flows() -> Vec<FlowSpec> {
    let mut f: Vec<FlowSpec> = (8..32).map(|s| FlowSpec { incast: true, ..flow(s, 0, 500_000, Time::ZERO) }).collect();
    f.push(flow(8, 1, 2_000_000, Time::from_us(5)));
    f
}

fn net(fc: FcConfig) -> NetConfig {
    let mut n = NetConfig { fc, ..Default::default() };
    n.switch.lossless = n.fc.pauses();
    n.switch.scheduler = SchedulerConfig::Strict { queues: vec![0] };
    n.record.buffer_interval = None;
    n
}

fn last_hop_peak(r: &RunStats) -> u64 {
    // ToR 0's port towards host 0: the incast's last hop
    let tor0 = r.ports.node.iter().zip(&r.ports.peer_node).position(|(&n, &p)| p == 0 && n >= 32).unwrap();
    r.ports.peak_queue_bytes[tor0]
}

#[test]
fn incast_waits_upstream_and_does_not_block_other_traffic() {
    let fg = run(&topo(), &flows(), net(FcConfig::Floodgate(FloodgateConfig::default())));
    let pfc = run(&topo(), &flows(), net(FcConfig::Pfc));
    assert_conserved(&fg);
    assert_eq!(fg.counters.drops, 0);
    let victim = flows().len() - 1;
    let slow = |r: &RunStats| r.flows.fct_ps[victim] as f64 / r.flows.ideal_fct_ps[victim] as f64;
    eprintln!(
        "last hop peak: floodgate {} B, pfc {} B; victim slowdown floodgate {:.2}, pfc {:.2}; modules {:?}; max buffer fg {} pfc {}",
        last_hop_peak(&fg),
        last_hop_peak(&pfc),
        slow(&fg),
        slow(&pfc),
        fg.modules,
        fg.counters.max_switch_buffer_bytes,
        pfc.counters.max_switch_buffer_bytes
    );
    assert!(fg.modules["floodgate_voq_allocs"] > 0 && fg.modules["floodgate_credits"] > 0);
    assert!(fg.counters.credit_bytes > 0);
    // the incast is held upstream: the last hop holds a fraction of what it holds under PFC
    assert!(last_hop_peak(&fg) * 3 < last_hop_peak(&pfc), "{} vs {}", last_hop_peak(&fg), last_hop_peak(&pfc));
    // and the other flow behind the same ToR is not blocked by it
    assert!(slow(&fg) < 1.5, "victim slowdown {}", slow(&fg));
    assert!(slow(&pfc) > 2.0 * slow(&fg), "PFC blocks the victim: {}", slow(&pfc));
}

/// §4.3's ideal design: the first-hop ToRs pause the incast's senders per destination (dstPause)
/// once its VOQ passes one hop BDP, so less of the incast sits in the network.
#[test]
fn dst_pause_keeps_the_incast_at_the_senders() {
    let plain = run(&topo(), &flows(), net(FcConfig::Floodgate(FloodgateConfig::default())));
    let ideal = run(&topo(), &flows(), net(FcConfig::Floodgate(FloodgateConfig { dst_pause: true, ..Default::default() })));
    assert_conserved(&ideal);
    assert!(ideal.modules["floodgate_dst_pauses"] > 0);
    assert!(ideal.counters.dst_pause_bytes > 0);
    assert!(
        ideal.counters.max_switch_buffer_bytes < plain.counters.max_switch_buffer_bytes,
        "{} vs {}",
        ideal.counters.max_switch_buffer_bytes,
        plain.counters.max_switch_buffer_bytes
    );
}

/// With PFC underneath, the scheme's queues all carry the data class, so a PFC pause closes the
/// VOQs too and the fabric stays lossless even when the buffer is far too small for the incast.
#[test]
fn pfc_underneath_keeps_it_lossless() {
    let mut n = net(FcConfig::Floodgate(FloodgateConfig { pfc: true, ..Default::default() }));
    n.switch.buffer_bytes = 600_000;
    let r = run(&topo(), &flows(), n);
    assert_conserved(&r);
    assert!(r.counters.pauses_sent > 0, "PFC fired");
    assert_eq!(r.counters.drops, 0);
}
