//! The NIC's scheduler (`net::nic_sched`) makes exactly the plain round robin's choices in whole
//! runs: many concurrent flows per host, under rate-paced (DCQCN, TIMELY), window-clocked (DCTCP,
//! HPCC) and window-capped line-rate senders, lossless and lossy (NACKs, timeouts, go-back-N), and
//! DCTCP over the TCP transport (fast retransmit, NewReno, delayed ACKs).
//! Every record is compared, event count included, so an event that gives a flow window without
//! waking its NIC's scheduler (a new transport path that forgets `kick_sender`) fails here.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, dctcp::DctcpConfig, hpcc::HpccConfig, timely::TimelyConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::fc::bfc::BfcConfig;
use hopsim_core::fc::floodgate::FloodgateConfig;
use hopsim_core::fc::flowsail::FlowsailConfig;
use hopsim_core::params::TcpConfig;
use hopsim_core::scenario::Scenario;
use hopsim_core::stats::RunStats;
use hopsim_core::{Rate, Time};

/// Eight hosts on two ToRs, WebSearch at 80% of the host links plus 12-to-1 incasts every 100 us:
/// tens of flows at a host at once.
fn scenario(cc: CcConfig, fc: FcConfig, buffer: u64, tcp: bool, cap: Option<Rate>) -> Scenario {
    let mut net = NetConfig { fc, seed: 3, cc, ..Default::default() };
    net.switch.buffer_bytes = buffer;
    net.switch.lossless = net.fc.pauses();
    net.record.buffer_interval = None;
    // a sending-rate cap leaves gaps between a flow's packets, so flows wait paced while pauses
    // come and go
    net.host.rate_cap = cap;
    if tcp {
        // TCP's own repair paths (fast retransmit, NewReno's partial ACKs, its timer, delayed ACKs)
        net.host.tcp = Some(TcpConfig { min_rto: Time::from_ms(1), delayed_ack: 2, ..Default::default() });
    }
    websearch_incastmix((8, 2, 1), 0.8, Time::from_us(600), 12, (20_000, 60_000), Time::from_us(100), net)
}

fn both(sc: &Scenario) -> (RunStats, RunStats) {
    let fast = sc.run().unwrap();
    let mut sim = sc.build().unwrap();
    sim.use_plain_nic_scan();
    let plain = sim.run().clone();
    (fast, plain)
}

#[test]
fn the_nic_scheduler_picks_as_the_plain_round_robin_in_whole_runs() {
    let ccs = [
        CcConfig::Dcqcn(DcqcnConfig::default()),
        CcConfig::Timely(TimelyConfig::default()),
        CcConfig::Dctcp(DctcpConfig::default()),
        CcConfig::Hpcc(HpccConfig::default()),
        CcConfig::None,
        // Pulser's Ideal holds packets at the sender until their booked path is free (it never
        // queues, so it loses nothing even in the small buffer)
        CcConfig::Ideal,
    ];
    let runs = ccs.into_iter().map(|cc| (cc, false)).chain([(CcConfig::Dctcp(DctcpConfig::default()), true)]);
    for (cc, tcp) in runs {
        for (fc, buffer) in [(FcConfig::Pfc, 2_000_000), (FcConfig::None, 300_000)] {
            check(cc.clone(), fc, buffer, tcp, None);
        }
    }
}

/// Schemes that pause at the NIC what PFC does not: BFC's per-queue pause of a flow's own NIC
/// queue, FlowSail's flow pause, Floodgate's dstPause (its ideal design). Held flows stay the
/// scheduler's candidates and a pause re-files the paced ones; the choices stay the plain scan's.
#[test]
fn the_nic_scheduler_picks_as_the_plain_round_robin_under_nic_pauses() {
    let fcs = [
        FcConfig::Bfc(BfcConfig::default()),
        FcConfig::Flowsail(FlowsailConfig::default()),
        FcConfig::Floodgate(FloodgateConfig { ideal: true, ..Default::default() }),
    ];
    for fc in fcs {
        for cc in [CcConfig::Dcqcn(DcqcnConfig::default()), CcConfig::None] {
            for cap in [None, Some(Rate::gbps(20))] {
                check(cc.clone(), fc.clone(), 2_000_000, false, cap);
            }
        }
    }
}

/// One scenario with the NIC scheduler and with the plain scan: every record the same.
fn check(cc: CcConfig, fc: FcConfig, buffer: u64, tcp: bool, cap: Option<Rate>) {
    let sc = scenario(cc.clone(), fc.clone(), buffer, tcp, cap);
    let (fast, plain) = both(&sc);
    let what = format!("{cc:?} over {fc:?}, tcp {tcp}, cap {cap:?}");
    assert!(fast.counters.flows > 100, "{what}: a busy run");
    // (whole records compared; the messages stay short)
    assert!(fast.flows == plain.flows, "{what}: the flow records differ");
    assert!(fast.counters == plain.counters, "{what}: the counters differ (events included)");
    assert!(fast.pauses == plain.pauses, "{what}: the pause logs differ");
    assert!(fast.control == plain.control, "{what}: the control-frame logs differ");
    if fc == FcConfig::None && cc != CcConfig::Ideal {
        assert!(fast.counters.drops > 0, "{what}: the lossy runs lose packets and repair them");
    }
}
