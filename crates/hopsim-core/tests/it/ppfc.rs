//! P-PFC in its paper's setting (section 5: 40 Gb/s, 1 us links, 4 MB shared buffer, DCQCN with
//! Table 2's parameters, senders at line rate, CNPs on the per-flow clock of the paper's ns-3,
//! `transport.cnp_timing = "flow_clock"`): under a 16:1 incast standard PFC fills the shared buffer
//! as in the paper, P-PFC pauses before the standard PFC threshold is reached and keeps the peak
//! queue clearly lower; under a 4:1 incast it sends no pause at all (it must not overreact to
//! moderate congestion, section 5.3). On section 5.5's dumbbell (10 Gb/s hosts, a 40 Gb/s link
//! between the ToRs) each predictive pause lasts (queue + increment) / drain rate, the drain rate
//! being the congested egress port's.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::{capfc::CapfcConfig, ppfc::{Increment, PpfcConfig, TransmissionSpeed}, quanta_for, FcConfig};
use hopsim_core::params::{CnpTiming, EcnConfig, Headroom, WindowConfig};
use hopsim_core::stats::RunStats;
use hopsim_core::stats::record::{TraceConfig, EV_DEQUEUE, EV_ENQUEUE};
use hopsim_core::topo::{dumbbell, star};
use hopsim_core::{Rate, Time};

fn ppfc_setting(fc: FcConfig, senders: u32) -> RunStats {
    ppfc_setting_with(fc, senders, CnpTiming::FlowClock)
}

fn ppfc_setting_with(fc: FcConfig, senders: u32, cnp_timing: CnpTiming) -> RunStats {
    let t = star(senders as usize + 1, Rate::gbps(40), Time::from_us(1));
    let mut cfg = NetConfig { fc, cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    // the paper's ns-3 (ns3-rdma) sends CNPs on a per-flow 50 us clock (scenarios/ppfc-16to1.toml)
    cfg.host.cnp_timing = cnp_timing;
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
    // standard PFC fills the shared buffer and fires (section 5.1: it "uses up the whole switch
    // buffer space"); measured: PFC 4.04 MB, P-PFC 2.33 MB
    assert!(qp > 3_900_000 && pfc.counters.pauses_sent > 0, "PFC peak {qp} B, {} pauses", pfc.counters.pauses_sent);
    assert!((qpp as f64) < 0.7 * qp as f64, "P-PFC peak {qpp} B should be clearly below PFC's {qp} B");
    // every pause is predictive (a computed duration, never the 0xFFFF XOFF of the standard PFC
    // underneath): P-PFC acted before the PFC threshold was reached
    assert!(ppfc.pauses.quanta.iter().all(|&q| q < u16::MAX), "standard PFC never had to fire");
    // and the P-PFC run is otherwise the PFC run: same flows, all complete
    assert_eq!(ppfc.counters.flows_finished, pfc.counters.flows_finished);
}

/// The paper's queue peaks under PFC + DCQCN are those of a DCQCN that first cuts some 50 us after
/// the incast starts (the ns-3 it runs sends CNPs on a per-flow 50 us clock): 6:1 peaks at
/// 1,702 KB (section 5.2, Fig. 6a) and 10:1 at 3.4 MB (section 1, Fig. 1c). DCQCN section 3's
/// notification point, a CNP at the first mark, reacts within microseconds and peaks at half that.
#[test]
fn the_papers_queue_peaks_need_its_cnp_clock() {
    let clock = peak_queue(&ppfc_setting(FcConfig::Pfc, 6)) as f64;
    let first_mark = peak_queue(&ppfc_setting_with(FcConfig::Pfc, 6, CnpTiming::SinceLast)) as f64;
    // measured: 2.02 MB with the clock, 0.85 MB without
    assert!((clock / 1_702_000.0 - 1.0).abs() < 0.25, "6:1 peak {clock} B vs the paper's 1,702 KB");
    assert!(first_mark < 0.6 * 1_702_000.0, "6:1 peak {first_mark} B with a CNP at the first mark");
    let clock = peak_queue(&ppfc_setting(FcConfig::Pfc, 10)) as f64;
    // measured: 3.96 MB (the shared buffer is full: PFC fires, which the paper's run just avoids)
    assert!((clock / 3_400_000.0 - 1.0).abs() < 0.25, "10:1 peak {clock} B vs the paper's 3.4 MB");
    // (16:1 is no test of the clock: standard PFC fires with it and without it, 32 and 24 pauses
    // measured; under the event order before the engine's per-instant permutation of equal-time
    // events, none without it. The peaks above are what the clock decides.)
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


/// Section 5.5's dumbbell, hand-checked: 10 Gb/s hosts, 1 us links and a 40 Gb/s inter-ToR link,
/// the section 5 buffer and ECN. Four hosts on the left ToR (hosts 0-3, 40 Gb/s together, what the
/// inter-ToR link carries) and sixteen on the right (hosts 5-20) send at line rate to host 4 on
/// the right: its 10 Gb/s port at the right ToR takes 200 Gb/s, and P-PFC there pauses the
/// inter-ToR link (a 40 Gb/s ingress) and the local hosts (10 Gb/s ingresses).
///
/// From the packet trace of that egress port, at each predictive pause at time t to ingress i:
/// `packets` = the bytes of i's flows in the queue just before t, `increment` = the net bytes i's
/// flows added to it over the last interval [t - 1 us, t) (everything that enters at i goes to host
/// 4, so this is i's whole ingress increment), and the pause must be
/// `quanta_for((packets + increment) / 10 Gb/s, rate of i)`: Algorithm 3 with the egress port's
/// rate as Transmission_speed (P-PFC section 4.4, Theorem 3.2's v_r). For the inter-ToR link this
/// is 4x what dividing by that ingress link's 40 Gb/s would give.
#[test]
fn dumbbell_pause_is_queue_plus_increment_over_the_egress_rate() {
    let (left, right) = (4u32, 17u32);
    let t = dumbbell(left as usize, right as usize, Rate::gbps(10), Rate::gbps(40), Time::from_us(1));
    let (ls, rs, dst) = (left + right, left + right + 1, left);
    let mut cfg = NetConfig { fc: FcConfig::Ppfc(PpfcConfig::default()), cc: CcConfig::None, ..Default::default() };
    cfg.switch.buffer_bytes = 9_000_000;
    let ports = right as u64 + 1;
    cfg.switch.headroom = Headroom::Bytes((9_000_000 - 4_000_000 - ports * cfg.switch.reserve_bytes) / ports);
    cfg.switch.alpha = 8.0;
    cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 40_000, kmax_bytes: 200_000, pmax: 1.0, ref_rate: None };
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    cfg.stop_time = Some(Time::from_us(1000));
    let senders: Vec<u32> = (0..left).chain(left + 1..left + right).collect();
    let flows: Vec<_> = senders.iter().map(|&s| flow(s, dst, 4_000_000, Time::from_us(1))).collect();
    // the local ports of the right ToR: towards host 4 (the congested egress) and towards the left ToR
    let local = |peer: u32| local_port(&t, rs, peer);
    let (egress, uplink) = (local(dst), local(ls));
    cfg.record.trace = Some(TraceConfig { flows: vec![], ports: vec![(rs, egress)] });
    let r = run(&t, &flows, cfg);
    assert_eq!(r.counters.drops, 0);

    let src_of: std::collections::HashMap<u32, u32> = r.flows.flow_id.iter().copied().zip(r.flows.src.iter().copied()).collect();
    // which ingress of the right ToR a flow enters by
    let ingress_of = |flow: u32| {
        let s = src_of[&flow];
        if s < left { uplink } else { local(s) }
    };
    let tr = &r.trace;
    let ev: Vec<(u64, u16, i64)> = (0..tr.time_ps.len())
        .filter(|&i| tr.node[i] == rs && tr.port[i] == egress && (tr.event[i] == EV_ENQUEUE || tr.event[i] == EV_DEQUEUE))
        .map(|i| (tr.time_ps[i], ingress_of(tr.flow[i]), if tr.event[i] == EV_ENQUEUE { tr.size[i] as i64 } else { -(tr.size[i] as i64) }))
        .collect();
    let interval = PpfcConfig::default().interval.0;
    let drain = Rate::gbps(10);
    let (mut checked, mut checked_uplink) = (0, 0);
    let p = &r.pauses;
    for k in 0..p.time_ps.len() {
        if p.node[k] != rs || p.mechanism[k] != "ppfc" {
            continue;
        }
        let (at, port) = (p.time_ps[k], p.port[k]);
        // an event at the very instant of the tick or of the interval's start could fall on either
        // side of it (equal times pop in scheduling order): leave such a pause out
        if ev.iter().any(|e| e.0 == at || e.0 == at - interval) {
            continue;
        }
        let mine = ev.iter().filter(|e| e.1 == port && e.0 < at);
        let packets: i64 = mine.clone().map(|e| e.2).sum();
        let increment: i64 = mine.filter(|e| e.0 >= at - interval).map(|e| e.2).sum();
        assert!(packets > 0 && increment > 1, "Algorithm 2 chose port {port} at {at}: packets {packets}, increment {increment}");
        let ingress_rate = if port == uplink { Rate::gbps(40) } else { Rate::gbps(10) };
        let expect = quanta_for(drain.tx_time((packets + increment) as u64), ingress_rate);
        assert_eq!(p.quanta[k], expect, "pause to port {port} at {at} ps: packets {packets} B, increment {increment} B");
        if port == uplink && expect < u16::MAX {
            // 4x what the ingress link's rate would give (up to the quantum rounding), unless
            // capped at the largest pause a PFC frame can ask for (0xFFFF quanta, 839 us at 40G)
            let over_ingress = quanta_for(Rate::gbps(40).tx_time((packets + increment) as u64), ingress_rate);
            assert!((expect as i64 - 4 * over_ingress as i64).abs() <= 4, "{expect} vs 4 x {over_ingress}");
            checked_uplink += 1;
        }
        checked += 1;
    }
    // measured: 177 pauses checked, 4 of them to the inter-ToR link below the 0xFFFF cap
    assert!(checked >= 100 && checked_uplink >= 3, "checked {checked} pauses, {checked_uplink} to the inter-ToR link");
}

/// Local port of switch `sw` whose link goes to node `peer`.
fn local_port(t: &hopsim_core::topo::Topology, sw: u32, peer: u32) -> u16 {
    let ports = &hopsim_core::topo::node_ports(t)[sw as usize];
    ports.iter().position(|&p| t.port_node(hopsim_core::topo::peer_port(p)) == peer).expect("a link to peer") as u16
}

/// `transport.cnp_timing = "flow_clock"` (ns3-rdma's `CheckandSendQCN`): a 2:1 incast at 40 Gb/s
/// marks from the first microseconds (Kmin 40 KB), but the receiver's first CNP for a flow waits
/// for the flow's first tick, 50 us after its first packet, so the queue grows at the full
/// 40 Gb/s excess until then. With DCQCN section 3's notification point the first mark gets a CNP
/// at once: the rates halve and the queue stops near Kmin.
#[test]
fn flow_clock_cnps_wait_for_the_flows_first_tick() {
    let queue_at = |timing: CnpTiming| {
        let t = star(3, Rate::gbps(40), Time::from_us(1));
        let mut cfg = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
        cfg.host.cnp_timing = timing;
        cfg.host.window = WindowConfig::Off;
        cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 40_000, kmax_bytes: 200_000, pmax: 1.0, ref_rate: None };
        cfg.record.buffer_interval = None;
        cfg.record.queue_ports = vec![(3, 0)];
        cfg.record.queue_interval = Time::from_us(1);
        cfg.stop_time = Some(Time::from_us(120));
        let flows = [flow(1, 0, 10_000_000, Time::ZERO), flow(2, 0, 10_000_000, Time::ZERO)];
        let r = run(&t, &flows, cfg);
        let q = r.queues.clone();
        move |us: u64| q.bytes[q.time_ps.iter().position(|&t| t == us * 1_000_000).unwrap()]
    };
    let clock = queue_at(CnpTiming::FlowClock);
    // 40 Gb/s too much = 5 KB/us from the first packet's arrival (about 1.2 us): one 1048 B
    // packet every 209.6 ns beyond the drain, within two packets of the line past 50 us
    for us in [10u64, 30, 50, 53] {
        let line = (us as f64 - 1.2) * 5_000.0;
        assert!((clock(us) as f64 - line).abs() < 2.0 * 1048.0, "{us} us: {} B vs {line} B", clock(us));
    }
    // the first CNPs (ticks at ~51 us, two links back to the senders) halve both rates to 20 Gb/s:
    // the queue stops growing (measured: 275,624 B from 57 us on)
    assert!(clock(70) <= clock(58) + 1048, "{} B at 70 us, {} B at 58 us", clock(70), clock(58));
    let first_mark = queue_at(CnpTiming::SinceLast);
    // measured: 96,416 B at 50 us (marks are random between Kmin and Kmax), against 244,184 B
    assert!(first_mark(50) < clock(50) / 2, "a CNP at the first mark: {} B at 50 us", first_mark(50));
}

/// `flow_control.pfc.until_resume` turns every PFC pause into one that waits for a resume frame;
/// P-PFC's pauses end by their duration and it sends no resume, so the run would stall: refused.
#[test]
fn ppfc_refuses_pauses_held_until_resume() {
    let t = star(3, Rate::gbps(40), Time::from_us(1));
    let mut cfg = NetConfig { fc: FcConfig::Ppfc(PpfcConfig::default()), ..Default::default() };
    cfg.pfc.until_resume = true;
    let err = hopsim_core::Simulation::new(&t, &[flow(1, 0, 1000, Time::ZERO)], cfg).err().expect("refused");
    assert!(err.contains("until_resume") && err.contains("ppfc"), "{err}");
}

/// Table 3's 6:1 row (0 / 5 / 43 messages for T = 50 / 100 / 150 us) is what P-PFC gives when
/// Algorithms 1 and 3 count the bytes that *arrived* at each ingress (`increment = "arrivals"`,
/// §6.1's `T_min = B / (P V)`): 6 x 40 Gb/s of arrivals fill the free shared buffer within
/// T = 100 us once the queue nears its 1.7 MB peak, while the net growth (6 x 40 less the 40 Gb/s
/// drain) never does, and at T = 50 us neither does.
#[test]
fn arrivals_reading_gives_table_3s_six_to_one_row() {
    let pauses = |inc: Increment, t_us: u64| {
        let cfg = PpfcConfig { increment: inc, t: Time::from_us(t_us), ..Default::default() };
        ppfc_setting(FcConfig::Ppfc(cfg), 6).counters.pauses_sent
    };
    // measured: 6 and 0
    assert!(pauses(Increment::Arrivals, 100) > 0, "arrivals: P-PFC acts at 6:1 with T = 100 us (Table 3: 5)");
    assert_eq!(pauses(Increment::Net, 100), 0, "net growth: silent at 6:1 with T = 100 us");
    assert_eq!(pauses(Increment::Arrivals, 50), 0, "Table 3: 0 at 6:1 with T = 50 us");
}

/// With `transmission_speed = "share"` each predictive pause lasts until the whole egress queue
/// could drain (Theorem 3.2's bound): at least the queue's drain time when it was sent, which the
/// egress-rate reading, splitting it among 16 ingresses, never reaches.
#[test]
fn share_reading_pauses_for_the_whole_queue() {
    let share = PpfcConfig { transmission_speed: TransmissionSpeed::Share, ..Default::default() };
    let r = ppfc_setting(FcConfig::Ppfc(share), 16);
    let e = ppfc_setting(FcConfig::Ppfc(PpfcConfig::default()), 16);
    // the gate opens above Kmax (200 KB): a whole-queue pause is at least 200 KB / 40 Gb/s = 40 us
    let min_share = r.pauses.duration_ps.iter().copied().min().unwrap();
    assert!(min_share >= Time::from_us(40).0, "shortest share pause {min_share} ps");
    let max_egress = e.pauses.duration_ps.iter().copied().max().unwrap();
    assert!(max_egress < min_share, "egress reading's longest pause {max_egress} ps");
    // (what it does to the peak depends on the rest of the setting: with `increment = "arrivals"`,
    // scenarios/papers/ppfc's, 1.71 MB against 2.30 MB; with net increments, as here, no lower)
}
