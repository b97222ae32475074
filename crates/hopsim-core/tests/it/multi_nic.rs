//! Hosts with several links (`net::nic_choice`), end to end on a small dual-homed network: a
//! host's flows spread over its NICs and each stays on one, only NICs on a shortest path carry a
//! flow (data or ACKs), bytes are conserved, a lone flow finishes at the ideal FCT of the NIC it
//! is bound to (each NIC has its own line rate), and a PFC pause of one NIC leaves the other
//! sending.

use crate::common::*;
use hopsim_core::config::NetConfig;
use hopsim_core::fc::{Actions, AnyFc, CtrlMsg, FcAction, FlowControl, Origin, SwitchView};
use hopsim_core::params::EcmpHash;
use hopsim_core::stats::RunStats;
use hopsim_core::stats::ideal::{ideal_fct, Hop};
use hopsim_core::topo::{NodeKind, Topology};
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

/// H is dual-homed: local port 0 to T0 at 100 Gb/s, local port 1 to T1 at 25 Gb/s. D is
/// dual-homed to T0 and T1, R hangs off T2, Q off T0, X off T1; T0, T1 and T2 meet at spine S.
/// Every other link 100 Gb/s; all 1 us.
const H: u32 = 0;
const D: u32 = 1;
const R: u32 = 2;
const Q: u32 = 3;
const X: u32 = 4;
const T1: u32 = 6;

fn net() -> Topology {
    let mut t = Topology::default();
    for _ in 0..5 {
        t.add_node(NodeKind::Host);
    }
    let (t0, t1, t2) = (t.add_node(NodeKind::Switch { tier: 0 }), t.add_node(NodeKind::Switch { tier: 0 }), t.add_node(NodeKind::Switch { tier: 0 }));
    let s = t.add_node(NodeKind::Switch { tier: 1 });
    let (g, d) = (Rate::gbps(100), Time::from_us(1));
    t.add_link(H, t0, g, d);
    t.add_link(H, t1, Rate::gbps(25), d);
    t.add_link(D, t0, g, d);
    t.add_link(D, t1, g, d);
    t.add_link(R, t2, g, d);
    t.add_link(Q, t0, g, d);
    t.add_link(X, t1, g, d);
    for tor in [t0, t1, t2] {
        t.add_link(tor, s, g, d);
    }
    t
}

fn cfg(ecmp: EcmpHash) -> NetConfig {
    let mut c = NetConfig::default();
    c.routing.ecmp = ecmp;
    c.record.buffer_interval = None;
    c
}

fn row(r: &RunStats, node: u32, port: u16) -> usize {
    (0..r.ports.node.len()).find(|&i| r.ports.node[i] == node && r.ports.port[i] == port).unwrap()
}

/// Data and control bytes sent by host `node`'s local port `port`.
fn sent(r: &RunStats, node: u32, port: u16) -> (u64, u64) {
    let i = row(r, node, port);
    (r.ports.tx_bytes[i] - r.ports.ctrl_bytes[i], r.ports.ctrl_bytes[i])
}

#[test]
fn a_dual_homed_hosts_flows_spread_over_both_nics_and_conserve_bytes() {
    for ecmp in [EcmpHash::Hopsim, EcmpHash::Hpcc] {
        // H -> R: both NICs are on shortest paths (via T0 or T1, then S); R -> H: H's ACKs too
        // (ports numbered per pair from 10000 as `third.cc` does: the HPCC hash reads them)
        let size = 20_000;
        let mut flows: Vec<FlowSpec> = (0..48).map(|i| FlowSpec { sport: 10_000 + i as u16, ..flow(H, R, size, Time::from_us(4 * i)) }).collect();
        flows.extend((0..48).map(|i| FlowSpec { sport: 10_000 + i as u16, ..flow(R, H, size, Time::from_us(4 * i + 2)) }));
        let r = run(&net(), &flows, cfg(ecmp));
        assert_conserved(&r);
        assert_eq!(r.counters.drops, 0);
        let (d0, c0) = sent(&r, H, 0);
        let (d1, c1) = sent(&r, H, 1);
        // each flow stays on one NIC: each NIC's data bytes are whole flows' (with headers)
        let wire = (d0 + d1) / 48;
        assert_eq!((d0 + d1) % 48, 0);
        assert_eq!(d0 % wire, 0, "{ecmp:?}: NIC 0 carries parts of flows");
        let n0 = d0 / wire;
        assert!((12..=36).contains(&n0), "{ecmp:?}: NIC 0 carries {n0} of 48 flows, NIC 1 the rest");
        // the ACKs of R's flows leave H by both NICs as well, spread alike
        let acks = (c0 + c1) as f64;
        assert!(c0 as f64 > acks / 4.0 && c1 as f64 > acks / 4.0, "{ecmp:?}: ACK bytes {c0} / {c1}");
    }
}

#[test]
fn only_nics_on_a_shortest_path_carry_a_flow() {
    for ecmp in [EcmpHash::Hopsim, EcmpHash::Hpcc] {
        // Q sits on T0, X on T1: H reaches each by one NIC in two hops, the other NIC is four
        let mut flows = vec![];
        for i in 0..16 {
            flows.push(flow(H, Q, 10_000, Time::from_us(i)));
            flows.push(flow(Q, H, 10_000, Time::from_us(i)));
            flows.push(flow(H, X, 10_000, Time::from_us(i)));
            flows.push(flow(X, H, 10_000, Time::from_us(i)));
        }
        for (i, f) in flows.iter_mut().enumerate() {
            f.sport = 10_000 + i as u16;
        }
        let only_q: Vec<FlowSpec> = flows.iter().copied().filter(|f| f.src == Q || f.dst == Q).collect();
        let r = run(&net(), &only_q, cfg(ecmp));
        assert_conserved(&r);
        assert!(sent(&r, H, 0).0 > 0 && sent(&r, H, 0).1 > 0);
        assert_eq!(sent(&r, H, 1), (0, 0), "{ecmp:?}: no data and no ACK of Q's flows by the NIC to T1");
        let only_x: Vec<FlowSpec> = flows.iter().copied().filter(|f| f.src == X || f.dst == X).collect();
        let r = run(&net(), &only_x, cfg(ecmp));
        assert_conserved(&r);
        assert_eq!(sent(&r, H, 0), (0, 0), "{ecmp:?}: nothing of X's flows by the NIC to T0");
        let r = run(&net(), &flows, cfg(ecmp));
        assert_conserved(&r);
    }
}

#[test]
fn a_lone_flow_finishes_at_the_ideal_fct_of_its_nic() {
    let c = NetConfig::default();
    let (mtu, hdr) = (c.host.mtu, c.host.header_bytes);
    let hop = |gbps| Hop { rate: Rate::gbps(gbps), delay: Time::from_us(1) };
    let size = 1_000_000;
    let mut seen = [false; 2];
    for seed in 1..=16 {
        let cfg = NetConfig { cc: hopsim_core::cc::CcConfig::None, seed, ..cfg(EcmpHash::Hopsim) };
        let r = run(&net(), &[flow(H, R, size, Time::from_us(3))], cfg);
        assert_conserved(&r);
        let nic = if sent(&r, H, 1).0 > 0 { 1 } else { 0 };
        assert_eq!(sent(&r, H, 1 - nic as u16).0, 0, "seed {seed}: one NIC only");
        seen[nic] = true;
        // H -> T -> S -> T2 -> R, its first hop at the NIC's rate
        let want = ideal_fct(size, mtu, hdr, &[hop(if nic == 0 { 100 } else { 25 }), hop(100), hop(100), hop(100)], hopsim_core::time::TxTimes::Exact);
        assert_eq!(r.flows.ideal_fct_ps[0], want.0, "seed {seed}: ideal on NIC {nic}'s rate");
        assert_eq!(r.flows.fct_ps[0], want.0, "seed {seed}: lone flow on NIC {nic} == ideal");
    }
    assert_eq!(seen, [true, true], "the seeds put the flow on each NIC");
}

/// A switch module that sends scripted frames at given times.
struct Scripted(Vec<(Time, FcAction)>);

impl FlowControl for Scripted {
    fn on_timer(&mut self, now: Time, _view: &SwitchView, out: &mut Actions) {
        self.0.retain(|&(t, a)| {
            if t <= now {
                out.push(a);
            }
            t > now
        });
    }
    fn next_timer(&self) -> Option<Time> {
        self.0.iter().map(|x| x.0).min()
    }
}

#[test]
fn pfc_on_one_nic_leaves_the_other_sending() {
    // H -> Q leaves by NIC 0 (to T0), H -> X by NIC 1 (to T1); T1 pauses H's NIC 1 from 20 to 120 us
    let flows = [flow(H, Q, 2_000_000, Time::ZERO), flow(H, X, 1_000_000, Time::ZERO)];
    let pfc = |t, quanta| (t, FcAction::Send { port: 0, msg: CtrlMsg::Pfc { prio: 3, quanta }, by: Origin::Scheme });
    let script = vec![pfc(Time::from_us(20), u16::MAX), pfc(Time::from_us(120), 0)];
    let run_with = |script: Vec<(Time, FcAction)>| {
        let mut sim = Simulation::new(&net(), &flows, cfg(EcmpHash::Hopsim)).expect("builds");
        sim.set_switch_fc(T1, AnyFc::Custom(Box::new(Scripted(script)))).unwrap();
        sim.run().clone()
    };
    let base = run_with(vec![]);
    let r = run_with(script);
    assert_conserved(&r);
    assert_eq!(r.pauses.node, vec![T1, T1]);
    let paused = |node, port| r.ports.paused_ps[row(&r, node, port)];
    let p1 = paused(H, 1) as i64;
    assert!((p1 - Time::from_us(100).0 as i64).abs() < 1_000_000, "NIC 1 paused {p1} ps");
    assert_eq!(paused(H, 0), 0, "NIC 0 never paused");
    // NIC 0's flow is untouched to the picosecond; NIC 1's waits out the pause
    assert_eq!(r.flows.finish_ps[0], base.flows.finish_ps[0]);
    assert!(r.flows.finish_ps[1] >= base.flows.finish_ps[1] + Time::from_us(95).0, "{} vs {}", r.flows.finish_ps[1], base.flows.finish_ps[1]);
}

#[test]
fn a_nic_whose_link_fails_hands_its_flows_and_acks_to_the_other() {
    use hopsim_core::params::{LinkEvent, LinkState};
    // flows both ways between H and R use both of H's NICs; at 20 us H's link to T1 (NIC 1)
    // fails for good: its flows move to NIC 0 and so do the ACKs H sends (RedistributeQp)
    let mut flows: Vec<FlowSpec> = (0..16).map(|i| FlowSpec { sport: 10_000 + i, ..flow(H, R, 300_000, Time::ZERO) }).collect();
    flows.extend((0..16).map(|i| FlowSpec { sport: 10_000 + i, ..flow(R, H, 300_000, Time::ZERO) }));
    let base = run(&net(), &flows, cfg(EcmpHash::Hopsim));
    assert!(sent(&base, H, 1).0 > 1_000_000 && sent(&base, H, 1).1 > 0, "NIC 1 carries data and ACKs without the failure");
    let mut c = cfg(EcmpHash::Hopsim);
    c.faults.link_events = vec![LinkEvent { at: Time::from_us(20), link: (H, T1), state: LinkState::Down }];
    // a flow left on the dead NIC would retransmit for ever: stop well after all should be done
    c.stop_time = Some(Time::from_us(2_000));
    let r = run(&net(), &flows, c.clone());
    assert_conserved(&r);
    // NIC 1 sent only what 20 us at 25 Gb/s allow (and one packet under way)
    let (d1, c1) = sent(&r, H, 1);
    assert!(d1 + c1 <= 62_500 + 1_100, "NIC 1 went on sending: {d1} data, {c1} ACK bytes");
    // split with every switch apart and H, on two switches, apart too (a host with one link
    // goes with its switch): the flows move NICs where their senders run, the receivers' ACKs
    // where theirs do, as on one thread
    let t = net();
    let mut of: Vec<u16> = (0..t.nodes.len() as u16).collect();
    for l in &t.links {
        for (a, b) in [(l.a, l.b), (l.b, l.a)] {
            if t.is_host(a) && t.links.iter().filter(|x| x.a == a || x.b == a).count() == 1 {
                of[a as usize] = b as u16;
            }
        }
    }
    let used: Vec<u16> = of.iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let of: Vec<u16> = of.iter().map(|x| used.binary_search(x).expect("used") as u16).collect();
    let parts = used.len();
    let make = || Simulation::new(&net(), &flows, c.clone());
    let (split, info) = hopsim_core::engine::run_threads(&make, parts, Some(of), Default::default()).expect("runs");
    assert!(info.threads >= 5, "{info:?}");
    crate::parallel::assert_same(&r, &split, "every switch apart");
}
