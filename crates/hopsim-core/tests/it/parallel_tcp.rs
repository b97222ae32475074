//! The TCP transport and ICTCP split over threads with the one-thread run's tables: a flow's
//! sender (RTO, congestion control) runs where its source is, its receiver (receive buffer,
//! delayed ACK on a timer of its own, ICTCP's window and its RTT by timestamps) where its
//! destination is, and they meet only in packets.

use crate::parallel::{busy, identical_on_any_threads};
use hopsim_core::cc::CcConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::engine::run_threads;
use hopsim_core::progress::Watch;
use hopsim_core::params::{EcnConfig, TcpConfig};
use hopsim_core::stats::RunStats;
use hopsim_core::Time;

/// TCP over a lossy fabric of 150 KB buffers, ECN marking at 65 KB: losses repaired by fast
/// retransmit and by 1 ms timeouts, and with `delayed_ack` 2 the receivers' delayed-ACK timers
/// (10 us) fire on flows whose last odd segment waits.
fn tcp_net(cc: CcConfig) -> NetConfig {
    let mut n = NetConfig { cc, ..Default::default() };
    n.switch.lossless = false;
    n.switch.buffer_bytes = 150_000;
    n.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 65_000, kmax_bytes: 65_000, pmax: 1.0, ref_rate: None };
    n.host.tcp = Some(TcpConfig {
        min_rto: Time::from_ms(1),
        initial_rto: Time::from_ms(1),
        clock_granularity: Time::from_us(1),
        delayed_ack: 2,
        delayed_ack_timeout: Time::from_us(10),
        ..Default::default()
    });
    n
}

/// `identical_on_any_threads`, with a check that the run did split.
fn splits_identically(net: NetConfig, name: &str) -> RunStats {
    let sc = busy(net);
    let (_, split) = run_threads(&|| sc.build(), 3, None, Watch::default()).expect("runs");
    assert_eq!((split.threads, split.note), (3, None), "{name}: three partitions");
    identical_on_any_threads(&sc, name)
}

fn module(r: &RunStats, name: &str) -> u64 {
    r.modules.get(name).copied().unwrap_or(0)
}

#[test]
fn dctcp_over_tcp_is_identical_on_1_2_3_and_8_threads() {
    let r = splits_identically(tcp_net(CcConfig::Dctcp(Default::default())), "DCTCP over TCP");
    assert!(r.counters.drops > 0 && module(&r, "tcp_fast_retransmits") > 0, "losses repaired: {:?} {:?}", r.counters, r.modules);
    assert!(module(&r, "tcp_dupacks") > 0, "{:?}", r.modules);
}

#[test]
fn pulser_over_tcp_is_identical_on_1_2_3_and_8_threads() {
    let r = splits_identically(tcp_net(CcConfig::Pulser(Default::default())), "Pulser over TCP");
    assert!(r.counters.drops > 0, "{:?}", r.counters);
}

/// ICTCP's receivers set the windows from what they receive and time themselves by RTTs they
/// measure; over TCP and over the RoCE transport.
#[test]
fn ictcp_is_identical_on_1_2_3_and_8_threads() {
    let over_tcp = splits_identically(tcp_net(CcConfig::Ictcp(Default::default())), "ICTCP over TCP");
    let mut roce = NetConfig { cc: CcConfig::Ictcp(Default::default()), ..Default::default() };
    roce.switch.lossless = false;
    let over_roce = splits_identically(roce, "ICTCP over RoCE");
    // the receivers move the windows: the chosen flows' windows (min of cwnd and the advertised
    // window) leave the 2-MSS start
    for (r, what) in [(&over_tcp, "TCP"), (&over_roce, "RoCE")] {
        let mss = NetConfig::default().host.mtu as u64;
        assert!(r.cwnd.cwnd_bytes.iter().any(|&w| w > 2 * mss), "ICTCP over {what}: windows grew");
    }
}
