//! The TCP transport (`transport.mode = "tcp"`, `net::tcp`): a lone drop is repaired by fast
//! retransmit within one RTT plus the duplicate-ACK time, never by the timer; an incast that
//! overflows a lossy buffer recovers by retransmission timeouts of the configured minimum; every
//! byte is accounted for and every flow completes; a lone flow's FCT is still the ideal one;
//! DCTCP's marking on arrival (`ecn.mark_at = "enqueue"`) marks what finds the queue above K.
//!
//! Setting: Pulser §IV's links (10 Gb/s, 10 us) on one switch, DCTCP's step marking at K = 65
//! packets (DCTCP §3.4), no PFC.

use crate::common::*;
use hopsim_core::cc::CcConfig;
use hopsim_core::cc::dctcp::DctcpConfig;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::net::tcp::TcpFlow;
use hopsim_core::params::TcpConfig;
use hopsim_core::params::{EcnConfig, FaultsConfig, LinkLoss, MarkAt, WindowConfig};
use hopsim_core::stats::record::{TraceConfig, EV_ECN, EV_ENQUEUE};
use hopsim_core::topo::star;
use hopsim_core::{Rate, Simulation, Time};

const K: u64 = 65 * 1048;
/// One 1048-byte frame at 10 Gb/s.
const PKT: Time = Time::from_ns(838);

fn tcp_cfg(tcp: TcpConfig) -> NetConfig {
    let mut cfg = NetConfig { cc: CcConfig::Dctcp(DctcpConfig::default()), fc: FcConfig::None, ..Default::default() };
    cfg.switch.lossless = false;
    cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: K, kmax_bytes: K, pmax: 1.0, ref_rate: None };
    cfg.record.buffer_interval = None;
    cfg.host.tcp = Some(tcp);
    cfg
}

fn tcp_of(sim: &Simulation, f: usize) -> &TcpFlow {
    sim.flows[f].tcp.as_deref().expect("a TCP flow")
}

/// A 2 MB flow from host 0 to host 1, the switch-to-receiver link losing packets at random
/// (1 in 2500, each direction) under `seed`.
fn lossy_long_flow(seed: u64) -> Simulation {
    let t = star(2, Rate::gbps(10), Time::from_us(10));
    let mut cfg = tcp_cfg(TcpConfig { min_rto: Time::from_ms(10), initial_rto: Time::from_ms(10), ..Default::default() });
    cfg.seed = seed;
    // one BDP in flight: no standing queue, so the repair's time is the path's alone
    cfg.host.window = WindowConfig::Bdp;
    cfg.faults = FaultsConfig { link_loss: vec![LinkLoss { link: (2, 1), rate: 1.0 / 2500.0 }], ..Default::default() };
    let mut sim = Simulation::new(&t, &[flow(0, 1, 2_000_000, Time::ZERO)], cfg).unwrap();
    // the tests read finished flows' state after the run
    sim.keep_finished_flows();
    sim.run();
    sim
}

#[test]
fn a_single_drop_is_repaired_by_fast_retransmit_within_one_rtt_and_the_dupack_time() {
    // the first seed whose run loses exactly one packet, a data packet (deterministic: the loss
    // streams derive from the seed)
    let sim = (1..60)
        .map(lossy_long_flow)
        .find(|s| s.stats.counters.drops_loss == 1 && s.stats.flows.dropped_bytes[0] == 1000)
        .expect("some seed loses exactly one data packet");
    assert_conserved(&sim.stats);
    let t = tcp_of(&sim, 0);
    assert_eq!((t.fast_retransmits, t.timeouts), (1, 0), "repaired by fast retransmit, not by the timer");
    assert_eq!(sim.stats.counters.timeouts, 0);
    assert_eq!(sim.stats.flows.retx_bytes[0], 1000, "only the lost segment is sent again (no go-back-N)");
    // the receiver's gap lasts from the first segment after the hole to the retransmission:
    // three duplicate ACKs' worth of segments, then one round trip
    let rtt = sim.flows.fixed(0).base_rtt;
    let gap = t.max_hole;
    assert!(gap > rtt, "gap {gap} shorter than an RTT {rtt}?");
    assert!(gap <= rtt + Time(4 * PKT.0), "gap {gap} vs RTT {rtt} + 3 dupACKs");
    // and the flow lost little time: well under one RTO
    let late = sim.stats.flows.fct_ps[0] - sim.stats.flows.ideal_fct_ps[0];
    assert!(late < Time::from_ms(1).0, "finished {late} ps late");
}

/// 24 senders (Pulser §IV's incast degree) of 64 KB each into host 0 through a 100 KB lossy
/// buffer, all at once; TCP with the given minimum RTO (RFC 6298's G small, so that RTO = min).
fn lossy_incast(min_rto: Time) -> Simulation {
    let t = star(25, Rate::gbps(10), Time::from_us(10));
    let mut cfg = tcp_cfg(TcpConfig { min_rto, initial_rto: min_rto, clock_granularity: Time::from_ns(1), ..Default::default() });
    cfg.switch.buffer_bytes = 100_000;
    cfg.host.window = WindowConfig::Off;
    let flows: Vec<_> = (1..25).map(|s| flow(s, 0, 64_000, Time::from_us(5))).collect();
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    // the tests read finished flows' state after the run
    sim.keep_finished_flows();
    sim.run();
    sim
}

#[test]
fn an_incast_overflowing_a_lossy_buffer_recovers_by_rtos_of_the_configured_minimum() {
    for min_rto in [Time::from_ms(2), Time::from_ms(4)] {
        let sim = lossy_incast(min_rto);
        assert_conserved(&sim.stats);
        assert!(sim.stats.counters.drops > 100, "the buffer overflows: {} drops", sim.stats.counters.drops);
        let tcp: u32 = (0..24).map(|f| tcp_of(&sim, f).timeouts).sum();
        assert_eq!(tcp as u64, sim.stats.counters.timeouts);
        // tail losses leave no duplicate ACKs behind them: most senders need the timer, and the
        // synchronised restarts overflow the buffer again (TCP incast, Vasudevan et al. 2009)
        let timed_out = (0..24).filter(|&f| tcp_of(&sim, f).timeouts > 0).count();
        assert!(timed_out >= 12, "only {timed_out} senders timed out");
        for f in 0..24 {
            let n = tcp_of(&sim, f).timeouts as u64;
            if n == 0 {
                continue;
            }
            // each timeout costs the minimum RTO (a fresh RTT sample between them ends any
            // backoff), and the rest of the flow's time is a few round trips of sending per
            // cycle (about 4 RTTs of 42 us: slow start from one segment until the next loss)
            let fct = sim.stats.flows.fct_ps[f];
            let rest = fct as i64 - (n * min_rto.0) as i64;
            let most = Time::from_us(500 + 250 * n).0 as i64;
            assert!(rest > 0 && rest < most, "flow {f}: {n} timeouts of {min_rto}, FCT {fct} ps");
        }
    }
}

#[test]
fn a_lone_flow_over_tcp_finishes_in_its_ideal_time() {
    let t = star(2, Rate::gbps(10), Time::from_us(10));
    for size in [1, 1000, 1001, 64_000, 1_000_000] {
        for cc in [CcConfig::None, CcConfig::Dctcp(DctcpConfig::default())] {
            for delayed_ack in [1, 2] {
                let mut cfg = tcp_cfg(TcpConfig { delayed_ack, ..Default::default() });
                cfg.cc = cc.clone();
                cfg.host.window = WindowConfig::Off;
                let r = run(&t, &[flow(0, 1, size, Time::from_us(3))], cfg);
                assert_conserved(&r);
                assert_eq!(r.flows.fct_ps[0], r.flows.ideal_fct_ps[0], "size {size}, {cc:?}, delayed_ack {delayed_ack}");
                assert_eq!((r.counters.drops, r.counters.timeouts), (0, 0));
                let segments = size.div_ceil(1000);
                // ack_bytes counts every link an ACK crosses: two here
                let acks = r.counters.ack_bytes / 60 / 2;
                if delayed_ack == 1 {
                    assert_eq!(acks, segments, "an ACK per segment");
                } else {
                    assert_eq!(acks, segments.div_ceil(2), "an ACK per two segments, and the last at once");
                }
            }
        }
    }
}

#[test]
fn tcp_keeps_an_incast_with_drops_conserved_and_deterministic() {
    let a = lossy_incast(Time::from_ms(1));
    let b = lossy_incast(Time::from_ms(1));
    assert_conserved(&a.stats);
    assert_eq!(a.stats.flows.fct_ps, b.stats.flows.fct_ps);
    assert_eq!(a.stats.counters.data_bytes_sent, b.stats.counters.data_bytes_sent);
    // every sender's receiver got the flow whole
    assert_eq!(a.stats.flows.delivered_bytes, a.stats.flows.size_bytes);
    for f in 0..a.flows.len() {
        assert!(tcp_of(&a, f).held().is_empty());
    }
    // fast retransmit repaired the losses that had segments behind them
    let fr: u32 = (0..24).map(|f| tcp_of(&a, f).fast_retransmits).sum();
    assert!(fr > 0, "no fast retransmit at all");
}

/// Two line-rate senders into one receiver for 100 packets each: the queue rises to about 100
/// packets and drains. Which packets of flow 0 are marked at the bottleneck, by sequence.
fn marked_seqs(mark_at: MarkAt) -> (Vec<u64>, u64) {
    let t = star(3, Rate::gbps(10), Time::from_us(1));
    let mut cfg = tcp_cfg(TcpConfig::default());
    cfg.cc = CcConfig::None;
    cfg.host.window = WindowConfig::Off;
    cfg.switch.ecn_mark_at = mark_at;
    cfg.record.trace = Some(TraceConfig { flows: vec![0], ports: vec![] });
    let flows = vec![flow(0, 2, 100_000, Time::ZERO), flow(1, 2, 100_000, Time::ZERO)];
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    sim.run();
    let tr = &sim.stats.trace;
    let seqs = (0..tr.event.len()).filter(|&i| tr.event[i] == EV_ECN).map(|i| tr.seq[i]).collect();
    // the queue each of flow 0's packets found on arrival: the bytes after its enqueue less its own
    let last_found = (0..tr.event.len()).filter(|&i| tr.event[i] == EV_ENQUEUE).map(|i| tr.qlen_bytes[i] - tr.size[i] as u64).last().unwrap();
    (seqs, last_found)
}

#[test]
fn marking_on_arrival_marks_the_packets_that_find_the_queue_above_k() {
    let (enq, last_found) = marked_seqs(MarkAt::Enqueue);
    let (deq, _) = marked_seqs(MarkAt::Dequeue);
    assert!(!enq.is_empty() && !deq.is_empty());
    // flow 0's last packet arrived to a long queue: marked on arrival, but it leaves an empty
    // queue behind, so marking at dequeue spares it
    assert!(last_found > K, "the last packet found {last_found} bytes");
    assert_eq!(enq.last(), Some(&99_000));
    assert!(!deq.contains(&99_000));
    // on arrival the queue passes K later than the packets that will leave it above K: marking
    // starts at a later packet
    assert!(enq[0] > deq[0], "first marked: {} on arrival, {} at dequeue", enq[0], deq[0]);
}
