//! `transport.ack_every` (the BFC paper's simulator's `L2AckInterval`, qbb-net-device.cc:1117-1128):
//! a receiver acknowledges after every Nth in-order packet from the (N+1)th on and after the
//! last, and the sender still completes on that last ACK.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::params::WindowConfig;
use hopsim_core::topo::star;
use hopsim_core::{Rate, Time};

/// ACK frames the receiver (host 1) sent for one 600-packet flow, and the flow's sender FCT.
fn acks(every: u32) -> (u64, u64) {
    let t = star(2, Rate::gbps(100), Time::from_us(1));
    let mut cfg = NetConfig::default();
    cfg.cc = hopsim_core::cc::CcConfig::None;
    cfg.host.mtu = 1000;
    cfg.host.ack_bytes = 30;
    cfg.host.window = WindowConfig::Off;
    cfg.host.ack_every = every;
    let r = run(&t, &[flow(0, 1, 600_000, Time::from_us(1))], cfg);
    assert_conserved(&r);
    let p = &r.ports;
    let row = (0..p.node.len()).find(|&i| p.node[i] == 1).expect("the receiver's port");
    (p.ctrl_bytes[row] / 30, r.flows.fct_ps[0])
}

#[test]
fn an_ack_after_every_nth_packet_from_the_n_plus_first_and_after_the_last() {
    let (every_packet, fct1) = acks(1);
    assert_eq!(every_packet, 600);
    // packets 257 and 513, and the 600th
    let (bfc, fct256) = acks(256);
    assert_eq!(bfc, 3);
    assert_eq!(acks(1000).0, 1, "only the last");
    // without a window the data leave at line rate either way: the same completion
    assert_eq!(fct1, fct256);
}
