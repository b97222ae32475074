//! P-PFC in its paper's setting (section 5: 40 Gb/s, 1 us links, 4 MB shared buffer, DCQCN with
//! Table 2's parameters, senders at line rate): under a 16:1 incast it pauses before the standard
//! PFC threshold is reached and keeps the peak queue clearly lower; under a 4:1 incast it sends
//! no pause at all (it must not overreact to moderate congestion, section 5.3).

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::{EcnConfig, Headroom, NetConfig, WindowConfig};
use hopsim_core::fc::{capfc::CapfcConfig, ppfc::PpfcConfig, FcConfig};
use hopsim_core::stats::RunStats;
use hopsim_core::topo::star;
use hopsim_core::{Rate, Time};

fn ppfc_setting(fc: FcConfig, senders: u32) -> RunStats {
    let t = star(senders as usize + 1, Rate::gbps(40), Time::from_us(1));
    let mut cfg = NetConfig { fc, cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    // section 5: "the size of shared buffer to 4 MB and the total size of the buffer to 9 MB";
    // the other 5 MB is headroom and reserve, and standard PFC fires when the shared 4 MB is full
    // (dynamic threshold with alpha = 8: 16 ingresses stop at 128/129 of the shared pool).
    cfg.switch.buffer_bytes = 9_000_000;
    let ports = senders as u64 + 1;
    cfg.switch.headroom = Headroom::Bytes((9_000_000 - 4_000_000 - ports * cfg.switch.reserve_bytes) / ports);
    cfg.switch.alpha = 8.0;
    cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 40_000, kmax_bytes: 200_000, pmax: 1.0, ref_rate: None };
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    let flows: Vec<_> = (1..=senders).map(|s| flow(s, 0, 2_000_000, Time::from_us(1))).collect();
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0);
    r
}

/// Peak bytes queued at the switch port toward the receiver (host 0).
fn peak_queue(r: &RunStats) -> u64 {
    (0..r.ports.node.len()).filter(|&i| r.ports.peer_node[i] == 0).map(|i| r.ports.peak_queue_bytes[i]).max().unwrap()
}

#[test]
fn ppfc_keeps_the_16_to_1_queue_below_pfc() {
    let pfc = ppfc_setting(FcConfig::Pfc, 16);
    let ppfc = ppfc_setting(FcConfig::Ppfc(PpfcConfig::default()), 16);
    let (qp, qpp) = (peak_queue(&pfc), peak_queue(&ppfc));
    assert!(ppfc.counters.pauses_sent > 0, "P-PFC acts under 16:1");
    // measured: PFC 3.39 MB, P-PFC 2.20 MB
    assert!((qpp as f64) < 0.8 * qp as f64, "P-PFC peak {qpp} B should be clearly below PFC's {qp} B");
    // every pause is predictive (a computed duration, never the 0xFFFF XOFF of the standard PFC
    // underneath): P-PFC acted before the PFC threshold was reached
    assert!(ppfc.pauses.quanta.iter().all(|&q| q < u16::MAX), "standard PFC never had to fire");
    // and the P-PFC run is otherwise the PFC run: same flows, all complete
    assert_eq!(ppfc.counters.flows_finished, pfc.counters.flows_finished);
}

#[test]
fn ppfc_sends_no_pause_under_4_to_1() {
    let r = ppfc_setting(FcConfig::Ppfc(PpfcConfig::default()), 4);
    assert_eq!(r.counters.pauses_sent, 0, "4:1 is moderate congestion: no pause");
    // the queue did pass Kmax, so it was the remaining-time prediction (Algorithm 1) that held
    // P-PFC back, not its Kmax gate
    assert!(peak_queue(&r) > 200_000, "peak {} above the port's ECN Kmax", peak_queue(&r));
}

#[test]
fn capfc_pauses_feeders_at_warn() {
    let cap = ppfc_setting(FcConfig::Capfc(CapfcConfig::default()), 16);
    let pfc = ppfc_setting(FcConfig::Pfc, 16);
    assert!(cap.counters.pauses_sent > 0);
    assert!(peak_queue(&cap) < peak_queue(&pfc), "CaPFC holds the queue near WARN");
}

