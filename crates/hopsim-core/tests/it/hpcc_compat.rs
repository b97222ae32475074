//! The HPCC simulator's model, option by option (`import-hpcc` turns them all on): each test
//! shows the defining behaviour of one option against hopsim's default.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::params::{AckPriority, CnpMode, EcmpHash};
use hopsim_core::topo::star;
use hopsim_core::{Rate, Time};

/// A lone flow's sender completes when the last ACK is back: exactly one ACK's serialisation
/// and propagation per hop after the receiver got the last byte, on a 2-hop star path.
#[test]
fn sender_completion_is_one_ack_trip_after_the_receiver() {
    let t = star(3, Rate::gbps(100), Time::from_us(1));
    for ack_min in [0u32, 48] {
        let mut cfg = NetConfig::default();
        cfg.host.ack_min = ack_min;
        let r = run(&t, &[flow(0, 2, 100_000, Time::ZERO)], cfg.clone());
        let ack = cfg.host.ack_bytes.max(ack_min) as u64;
        let trip = 2 * (Rate::gbps(100).tx_time(ack).0 + Time::from_us(1).0);
        assert_eq!(r.flows.ack_fct_ps[0], r.flows.fct_ps[0] + trip);
        assert_eq!(r.flows.ack_finish_ps[0], r.flows.finish_ps[0] + trip);
    }
}

/// `ack_priority = "data"`: ACKs crossing a port loaded with data wait behind it (and take
/// buffer); in the control queue they pass it. Hosts 0 and 1 flood host 2; host 2's own flow to
/// host 3 gets its ACKs back through the port towards host 2.
#[test]
fn acks_in_the_data_queue_wait_behind_data() {
    let t = star(4, Rate::gbps(100), Time::from_us(1));
    let flows = [flow(0, 2, 4_000_000, Time::ZERO), flow(1, 2, 4_000_000, Time::ZERO), flow(2, 3, 200_000, Time::from_us(50))];
    let fct = |p: AckPriority| {
        let mut cfg = NetConfig::default();
        cfg.host.ack_priority = p;
        cfg.host.window = hopsim_core::params::WindowConfig::Off;
        let r = run(&t, &flows, cfg);
        assert_conserved(&r);
        (r.flows.ack_fct_ps[2], r.flows.fct_ps[2])
    };
    let (ctrl_ack, ctrl_rx) = fct(AckPriority::Control);
    let (data_ack, data_rx) = fct(AckPriority::Data);
    // the data of flow 2 goes the other way, nearly unhindered
    assert!(ctrl_rx.abs_diff(data_rx) < Time::from_us(1).0, "{ctrl_rx} vs {data_rx}");
    // its last ACK queued behind the incast's backlog at the port to host 2 (tens of us of data)
    assert!(data_ack > ctrl_ack + Time::from_us(10).0, "data {data_ack} vs control {ctrl_ack}");
}

fn incast_cfg() -> NetConfig {
    let mut cfg = NetConfig::default();
    cfg.switch.buffer_bytes = 400_000;
    cfg.host.window = hopsim_core::params::WindowConfig::Off;
    cfg
}

fn incast() -> (hopsim_core::topo::Topology, Vec<hopsim_core::workload::FlowSpec>) {
    let t = star(9, Rate::gbps(100), Time::from_us(1));
    let flows = (1..9).map(|s| flow(s, 0, 1_000_000, Time::ZERO)).collect();
    (t, flows)
}

/// `pfc.until_resume`: every pause is ended by its resume, none is refreshed, and the run stays
/// lossless.
#[test]
fn pauses_until_resume_are_never_refreshed() {
    let (t, flows) = incast();
    let mut cfg = incast_cfg();
    cfg.pfc.until_resume = true;
    let r = run(&t, &flows, cfg);
    assert_conserved(&r);
    assert_eq!(r.counters.drops, 0);
    assert!(r.counters.pauses_sent > 0);
    assert_eq!(r.counters.pauses_sent, r.counters.resumes_sent, "one resume per pause");
}

/// `cnp = "ack_flag"`: no CNP packet is sent, and DCQCN still reacts (every marked packet's ACK
/// counts as a notification, so there are more of them than CNP packets at one per 50 us).
#[test]
fn ack_flag_replaces_cnp_packets() {
    let (t, flows) = incast();
    let mut base = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..incast_cfg() };
    base.switch.buffer_bytes = 12_000_000;
    base.switch.ecn.kmin_bytes = 40_000;
    base.switch.ecn.kmax_bytes = 160_000;
    let mut flag = base.clone();
    flag.host.cnp = CnpMode::AckFlag;
    let (p, f) = (run(&t, &flows, base), run(&t, &flows, flag));
    assert!(p.counters.cnp_bytes > 0 && p.counters.cnps > 0);
    assert_eq!(f.counters.cnp_bytes, 0, "no CNP packets");
    assert!(f.counters.cnps > p.counters.cnps, "a flag per marked packet: {} vs {}", f.counters.cnps, p.counters.cnps);
}

/// `rto = 0`: no retransmission timer, hence no timeouts even where pauses stall a flow for long.
#[test]
fn no_rto_no_timeouts() {
    let (t, flows) = incast();
    let mut cfg = incast_cfg();
    cfg.host.rto = Time::from_ns(500);
    let with = run(&t, &flows, cfg.clone());
    assert!(with.counters.timeouts > 0, "an RTO shorter than the RTT fires");
    cfg.host.rto = Time::ZERO;
    let without = run(&t, &flows, cfg);
    assert_conserved(&without);
    assert_eq!(without.counters.timeouts, 0);
}

/// `routing.ecmp = "hpcc"` gives every flow a valid path, deterministically, and the same FCTs
/// as hopsim's hash on a star (one path only).
#[test]
fn hpcc_ecmp_routes_every_flow() {
    let ls = leaf_spine_100g(4, 4, 4).build();
    let flows: Vec<_> = (0..16u32).map(|s| flow(s, (s + 5) % 16, 50_000, Time::from_ns(100 * s as u64))).collect();
    let mut cfg = NetConfig::default();
    cfg.routing.ecmp = EcmpHash::Hpcc;
    let a = run(&ls, &flows, cfg.clone());
    let b = run(&ls, &flows, cfg);
    assert_conserved(&a);
    assert_eq!(a.flows.fct_ps, b.flows.fct_ps);
    let t = star(4, Rate::gbps(100), Time::from_us(1));
    let f = [flow(0, 1, 30_000, Time::ZERO), flow(2, 1, 30_000, Time::ZERO)];
    let mut c = NetConfig::default();
    let plain = run(&t, &f, c.clone());
    c.routing.ecmp = EcmpHash::Hpcc;
    assert_eq!(run(&t, &f, c).flows.fct_ps, plain.flows.fct_ps);
}
