//! Floodgate's window, credit, VOQ and switchSYN arithmetic by hand-made cases: a small switch of
//! real ports (no simulation), packets pushed and taken as the engine would, the module's gate
//! actions applied to the ports and its frames collected.

use super::*;
use crate::fc::view::{Peer, SwitchInfo};
use crate::packet::tag;
use crate::queues::mmu::{Mmu, MmuConfig};
use crate::queues::port::{Port, NPRIO};
use crate::queues::sched::SchedulerConfig;
use crate::time::{Rate, TxClock};
use std::collections::VecDeque;

/// A ToR (tier 0): port 0 faces a host, ports 1 and 2 face spines (tier 1); 100 Gb/s, 1 us, four
/// data queues per port (queue 0 non-incast, 1-3 VOQs).
struct Fx {
    info: SwitchInfo,
    mmu: Mmu,
    ports: Vec<Port>,
    /// What each (port, queue) holds, in order.
    held: HashMap<(u16, u16), VecDeque<PktMeta>>,
    sent: Vec<(u16, CtrlMsg)>,
    now: Time,
}

const HOST: u16 = 0;
const UP1: u16 = 1;
const UP2: u16 = 2;

impl Fx {
    fn new() -> Fx {
        Fx::with_uplinks(2)
    }

    /// Port 0 faces a host, ports 1..=k spines.
    fn with_uplinks(k: usize) -> Fx {
        let n = k + 1;
        let mut info = SwitchInfo::bare(vec![Rate::gbps(100); n], 4);
        info.ports = (0..n as u32).collect();
        info.peers = (0..n).map(|p| Peer { tier: if p == 0 { None } else { Some(1) } }).collect();
        let sched = SchedulerConfig::Strict { queues: vec![0] };
        let ports = (0..n as u16).map(|l| Port::with(9, l, TxClock::new(Rate::gbps(100)), Time::from_us(1), 4, 4, 1500, &[3; 4], &sched)).collect();
        let mmu = Mmu::new(MmuConfig::default(), vec![0; n], NPRIO, 4);
        Fx { info, mmu, ports, held: HashMap::new(), sent: vec![], now: Time::ZERO }
    }

    fn view(&self) -> SwitchView<'_> {
        SwitchView { info: &self.info, mmu: &self.mmu, ports: &self.ports }
    }

    fn apply(&mut self, out: Actions) {
        for a in out {
            match a {
                FcAction::Gate { port, queue, until } => self.ports[port as usize].set_gate(queue as usize, self.now, until),
                FcAction::Send { port, msg, .. } => self.sent.push((port, msg)),
                FcAction::Join { port, from, to } => {
                    // as the engine: the head of `from` goes to the tail of `to`
                    let mut m = self.held.get_mut(&(port, from)).and_then(|h| h.pop_front()).expect("a packet to move");
                    self.ports[port as usize].dequeue_data(from as usize, m.size);
                    self.ports[port as usize].enqueue_data(to as usize, 0, m.size);
                    m.queue = to;
                    self.held.entry((port, to)).or_default().push_back(m);
                }
                _ => {}
            }
        }
    }

    /// A packet for `dst` arrives by `ingress` (carrying `psn`) and is queued for `egress`; the
    /// queue it took.
    fn arrive(&mut self, fg: &mut Floodgate, ingress: u16, egress: u16, dst: u32, psn: u32, incast: bool) -> u16 {
        self.arrive_sized(fg, ingress, egress, dst, psn, incast, 1048)
    }

    /// `arrive` for a packet of `size` bytes on the wire.
    #[allow(clippy::too_many_arguments)]
    fn arrive_sized(&mut self, fg: &mut Floodgate, ingress: u16, egress: u16, dst: u32, psn: u32, incast: bool, size: u32) -> u16 {
        let mut m = PktMeta { dst, ingress, egress, size, prio: 3, flags: if incast { tag::INCAST } else { 0 }, ..Default::default() };
        m.tags.psn = psn;
        m.queue = fg.classify(self.now, &m, &self.view());
        self.ports[egress as usize].enqueue_data(m.queue as usize, 0, m.size);
        let mut out = vec![];
        fg.on_enqueue(self.now, &mut m, &self.view(), &mut out);
        self.held.entry((egress, m.queue)).or_default().push_back(m);
        self.apply(out);
        m.queue
    }

    /// The head of queue `q` of `egress` leaves (the caller checked its gate); the PSN it carries.
    fn leave(&mut self, fg: &mut Floodgate, egress: u16, q: u16) -> u32 {
        let mut m = self.held.get_mut(&(egress, q)).and_then(|h| h.pop_front()).expect("a packet there");
        self.ports[egress as usize].dequeue_data(q as usize, m.size);
        let mut out = vec![];
        fg.on_dequeue(self.now, &m, &self.view(), &mut out);
        fg.stamp(self.now, &mut m, &self.view());
        self.apply(out);
        m.tags.psn
    }

    fn closed(&self, p: u16, q: u16) -> bool {
        self.ports[p as usize].gate_closed(q as usize, self.now)
    }

    fn control(&mut self, fg: &mut Floodgate, from: u16, msg: CtrlMsg) {
        let mut out = vec![];
        fg.on_control(self.now, from, &msg, &self.view(), &mut out);
        self.apply(out);
    }

    fn tick(&mut self, fg: &mut Floodgate, at: Time) {
        self.now = at;
        let mut out = vec![];
        fg.on_timer(self.now, &self.view(), &mut out);
        self.apply(out);
    }
}

/// §4.2 by hand: HRTT = 2 x 1 us + 1048 B at 100 Gb/s = 2.08384 us, BDP_nextHop = 26,048 B;
/// C_out x T = 100 Gb/s x 10 us = 125,000 B; (26,048 + 125,000) / 1048 = 144.1 -> 145 packets.
const W0: i64 = 145;

#[test]
fn the_initial_window_is_bdp_next_hop_plus_c_out_times_t() {
    let fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig::default());
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0);
    // the ideal design: ceil(1.5 x 26,048 / 1048) = ceil(37.28) = 38
    let mut ideal = Floodgate::new(FloodgateConfig { ideal: true, ..Default::default() });
    assert_eq!(ideal.window(&fx.view(), UP1, 7), 38);
}

#[test]
fn a_credit_grows_the_window_by_exactly_the_credited_packets() {
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig::default());
    for _ in 0..10 {
        assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, false), 0, "window left: direct");
    }
    // charged when queued (§4.2 "forwarded to the egress queue ... decreased by one")
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0 - 10);
    let psns: Vec<u32> = (0..10).map(|_| fx.leave(&mut fg, UP1, 0)).collect();
    assert_eq!(psns, (0..10).collect::<Vec<u32>>(), "PSNs 0.. in sending order (§4.3)");
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0 - 10, "sent, not yet credited");
    // a credit through PSN 3 returns exactly 4 packets
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 4, psn: 3 });
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0 - 6);
    // an old credit changes nothing; the rest returns the window to its initial value
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 2, psn: 1 });
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0 - 6);
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 6, psn: 9 });
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0);
    assert_eq!(fg.in_flight(), 0);
    // a credit on another port or for another destination touches nothing here
    fx.control(&mut fg, UP2, CtrlMsg::Credit { dst: 7, credits: 1, psn: 100 });
    assert_eq!(fg.window(&fx.view(), UP1, 7), W0);
}

#[test]
fn out_of_window_packets_wait_in_a_voq_that_a_credit_opens_for_exactly_what_it_returns() {
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig::default());
    for _ in 0..W0 {
        assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), 0);
    }
    assert_eq!(fg.window(&fx.view(), UP1, 7), 0);
    // no window left: a VOQ, closed; another destination still goes direct to queue 0
    let v = fx.arrive(&mut fg, HOST, UP1, 7, 0, true);
    assert_eq!(v, 1);
    assert!(fx.closed(UP1, v));
    assert_eq!(fx.arrive(&mut fg, HOST, UP1, 8, 0, false), 0, "non-incast goes direct");
    for _ in 0..3 {
        assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), v, "a destination with a VOQ stays in it");
    }
    for _ in 0..W0 {
        fx.leave(&mut fg, UP1, 0);
    }
    fx.leave(&mut fg, UP1, 0);
    // a credit for 2 packets (PSNs 0, 1) opens the VOQ; after 2 packets it closes again
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 2, psn: 1 });
    assert!(!fx.closed(UP1, v));
    fx.leave(&mut fg, UP1, v);
    assert!(!fx.closed(UP1, v));
    fx.leave(&mut fg, UP1, v);
    assert!(fx.closed(UP1, v), "the window is used up again");
    assert_eq!(fg.window(&fx.view(), UP1, 7), 0);
    // the rest drains with more credit; then the VOQ is released and the destination goes direct
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 10, psn: 11 });
    fx.leave(&mut fg, UP1, v);
    fx.leave(&mut fg, UP1, v);
    assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), 0);
    assert_eq!(fg.voq_allocs, 1);
    assert_eq!(fg.non_incast_in_voq, 0);
}

#[test]
fn credits_are_aggregated_per_ingress_and_destination_every_t() {
    // the ToR as the downstream of spine port UP1: packets from the spine leave to the host
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig::default());
    for psn in 0..5 {
        fx.arrive(&mut fg, UP1, HOST, 7, psn, false);
    }
    fx.arrive(&mut fg, UP1, HOST, 8, 0, false);
    for _ in 0..6 {
        fx.leave(&mut fg, HOST, 0);
    }
    // the last hop keeps no window and owes nothing to the host behind port 0
    assert_eq!(fg.in_flight(), 0);
    assert_eq!(fg.next_timer(), Some(Time::from_us(10)));
    fx.tick(&mut fg, Time::from_us(10));
    assert_eq!(
        fx.sent,
        vec![(UP1, CtrlMsg::Credit { dst: 7, credits: 5, psn: 4 }), (UP1, CtrlMsg::Credit { dst: 8, credits: 1, psn: 0 })],
        "<dst, credits, PSN> per destination, to the ingress it came by"
    );
    // nothing owed: the next tick sends nothing, and the timer stops
    fx.sent.clear();
    fx.tick(&mut fg, Time::from_us(20));
    assert!(fx.sent.is_empty());
    assert_eq!(fg.next_timer(), None);
}

#[test]
fn switch_syn_recovers_the_window_of_lost_last_packets() {
    // upstream U (this ToR, egress UP1) sends 5 packets for dst 7; the downstream D (a second ToR
    // fixture standing in for the spine, ingress UP1) receives PSNs 0 and 1, forwards and
    // credits them; PSNs 2-4 are lost on the wire, and no later packet's PSN will cover them
    let cfg = FloodgateConfig { syn_timeout: Time::from_us(100), ..Default::default() };
    let (mut fu, mut fd) = (Fx::new(), Fx::new());
    let (mut u, mut d) = (Floodgate::new(cfg.clone()), Floodgate::new(cfg));
    for _ in 0..5 {
        fu.arrive(&mut u, HOST, UP1, 7, 0, true);
    }
    let psns: Vec<u32> = (0..5).map(|_| fu.leave(&mut u, UP1, 0)).collect();
    for &psn in &psns[..2] {
        fd.arrive(&mut d, UP1, HOST, 7, psn, true);
        fd.leave(&mut d, HOST, 0);
    }
    fd.tick(&mut d, Time::from_us(10));
    let credit = fd.sent.pop().expect("a credit");
    assert_eq!(credit, (UP1, CtrlMsg::Credit { dst: 7, credits: 2, psn: 1 }));
    fu.now = Time::from_us(11);
    fu.control(&mut u, UP1, credit.1);
    assert_eq!(u.window(&fu.view(), UP1, 7), W0 - 3, "three lost packets hold the window");
    // no credit for syn_timeout with packets in flight: a switchSYN <dst, last PSN sent>
    fu.tick(&mut u, Time::from_us(50));
    assert!(fu.sent.is_empty(), "not before the timeout");
    fu.tick(&mut u, Time::from_us(120));
    assert_eq!(fu.sent, vec![(UP1, CtrlMsg::Other { tag: SYN, a: 7, b: 4 })]);
    assert_eq!(u.syns, 1);
    // the downstream holds nothing of (UP1, 7): it credits through the SYN's PSN
    fd.now = Time::from_us(121);
    fd.control(&mut d, UP1, fu.sent[0].1);
    fd.tick(&mut d, Time::from_us(130));
    assert_eq!(fd.sent, vec![(UP1, CtrlMsg::Credit { dst: 7, credits: 1, psn: 4 })]);
    fu.control(&mut u, UP1, fd.sent[0].1);
    assert_eq!(u.window(&fu.view(), UP1, 7), W0, "the window is whole again");
    assert_eq!(u.in_flight(), 0);
}

#[test]
fn a_switch_syn_does_not_credit_packets_still_in_the_downstream_buffer() {
    let cfg = FloodgateConfig { syn_timeout: Time::from_us(100), ..Default::default() };
    let mut fd = Fx::new();
    let mut d = Floodgate::new(cfg);
    // PSNs 0-2 arrive and wait at the downstream (say its host port is paused); SYN says 3 sent
    for psn in 0..3 {
        fd.arrive(&mut d, UP1, HOST, 7, psn, true);
    }
    fd.control(&mut d, UP1, CtrlMsg::Other { tag: SYN, a: 7, b: 3 });
    fd.tick(&mut d, Time::from_us(10));
    assert!(fd.sent.is_empty(), "nothing forwarded yet, nothing credited");
    // two leave: credited through PSN 1 only; the last one leaves: through the SYN's PSN 3 (3 was lost)
    fd.leave(&mut d, HOST, 0);
    fd.leave(&mut d, HOST, 0);
    fd.tick(&mut d, Time::from_us(20));
    assert_eq!(fd.sent.pop(), Some((UP1, CtrlMsg::Credit { dst: 7, credits: 2, psn: 1 })));
    fd.leave(&mut d, HOST, 0);
    fd.tick(&mut d, Time::from_us(30));
    assert_eq!(fd.sent.pop(), Some((UP1, CtrlMsg::Credit { dst: 7, credits: 1, psn: 3 })));
}

#[test]
fn delay_credit_holds_a_destinations_credits_while_its_voq_here_is_long() {
    // the ToR as downstream of UP1 for dst 7, which it sends on up by UP2 (a middle hop); its
    // own window towards UP2 runs out, so dst 7 waits in a VOQ here
    let mut fx = Fx::new();
    let cfg = FloodgateConfig { thre_credit_bdp: 1.0, ..Default::default() };
    let mut fg = Floodgate::new(cfg.clone());
    let mut psn = 0;
    for _ in 0..W0 {
        fx.arrive(&mut fg, UP1, UP2, 7, psn, true);
        psn += 1;
    }
    // 30 more wait in the VOQ: 30 x 1048 B > 1 BDP (26,048 B)
    for _ in 0..30 {
        assert_eq!(fx.arrive(&mut fg, UP1, UP2, 7, psn, true), 1);
        psn += 1;
    }
    for _ in 0..W0 {
        fx.leave(&mut fg, UP2, 0);
    }
    fx.tick(&mut fg, Time::from_us(10));
    assert!(fx.sent.is_empty(), "held: the VOQ holds {} B", fx.ports[UP2 as usize].queues[1].bytes);
    assert_eq!(fg.credits_delayed, 1);
    // without delayCredit the same state credits at once
    let mut off = Floodgate::new(FloodgateConfig { delay_credit: false, ..cfg });
    let mut fy = Fx::new();
    for p in 0..W0 as u32 + 30 {
        fy.arrive(&mut off, UP1, UP2, 7, p, true);
    }
    for _ in 0..W0 {
        fy.leave(&mut off, UP2, 0);
    }
    fy.tick(&mut off, Time::from_us(10));
    assert_eq!(fy.sent, vec![(UP1, CtrlMsg::Credit { dst: 7, credits: W0 as u32, psn: W0 as u32 - 1 })]);
}

#[test]
fn the_ideal_design_credits_every_packet_at_once() {
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig { ideal: true, ..Default::default() });
    fx.arrive(&mut fg, UP1, HOST, 7, 41, false);
    fx.leave(&mut fg, HOST, 0);
    assert_eq!(fx.sent, vec![(UP1, CtrlMsg::Credit { dst: 7, credits: 1, psn: 41 })]);
}

/// Floodgate-NS3's ideal design: a packet's credit waits while the destination's VOQ bytes here
/// pass the threshold, and goes back with every other held one at the first dequeue under it.
#[test]
fn the_ideal_design_with_delay_credit_holds_credits_until_the_voq_is_short() {
    let cfg = FloodgateConfig { ideal: true, ideal_delay_credit: true, thre_credit_bdp: 1.0, ..Default::default() };
    let (mut fx, mut fg) = (Fx::new(), Floodgate::new(cfg.clone()));
    // dst 7 comes by UP1 and goes on by UP2: the window towards UP2 takes `direct` packets, then
    // 30 wait in the VOQ (31,440 B, over one BDP of 26,048 B)
    let mut psn = 0;
    while fx.arrive(&mut fg, UP1, UP2, 7, psn, true) == 0 {
        psn += 1;
    }
    let direct = psn;
    for _ in 0..29 {
        psn += 1;
        assert_ne!(fx.arrive(&mut fg, UP1, UP2, 7, psn, true), 0);
    }
    for _ in 0..direct {
        fx.leave(&mut fg, UP2, 0);
    }
    assert!(fx.sent.is_empty(), "every credit held");
    assert_eq!(fg.credits_delayed, direct as u64);
    // five VOQ packets leave: 25 left, 26,200 B, still over; the sixth brings it to 25,152 B
    for _ in 0..5 {
        fx.leave(&mut fg, UP2, 1);
    }
    assert!(fx.sent.is_empty());
    fx.leave(&mut fg, UP2, 1);
    assert_eq!(fx.sent, vec![(UP1, CtrlMsg::Credit { dst: 7, credits: direct + 6, psn: direct + 5 })]);
    fx.leave(&mut fg, UP2, 1);
    assert_eq!(fx.sent[1], (UP1, CtrlMsg::Credit { dst: 7, credits: 1, psn: direct + 6 }));
    // the paper's ideal design (default): the same packets credited one by one at once
    let (mut fy, mut off) = (Fx::new(), Floodgate::new(FloodgateConfig { ideal_delay_credit: false, ..cfg }));
    for p in 0..direct + 30 {
        fy.arrive(&mut off, UP1, UP2, 7, p, true);
    }
    for _ in 0..direct {
        fy.leave(&mut off, UP2, 0);
    }
    assert_eq!(fy.sent.len(), direct as usize);
    assert_eq!(off.credits_delayed, 0);
}

#[test]
fn a_shared_voq_serves_its_head_only_whatever_the_port() {
    // one switch-wide VOQ: dst 7 (by UP1) runs out of window and takes it; dst 8 (by UP2) runs
    // out too and is hashed into the same FIFO behind dst 7
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig { max_voq: 1, voq_pool: VoqPool::Shared, ..Default::default() });
    for _ in 0..W0 {
        fx.arrive(&mut fg, HOST, UP1, 7, 0, true);
        fx.arrive(&mut fg, HOST, UP2, 8, 0, true);
    }
    assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), 1);
    assert_eq!(fx.arrive(&mut fg, HOST, UP2, 8, 0, true), 1);
    assert_eq!((fg.voq_allocs, fg.voq_hashed), (1, 1));
    assert!(fx.closed(UP1, 1) && fx.closed(UP2, 1));
    for _ in 0..W0 {
        fx.leave(&mut fg, UP1, 0);
        fx.leave(&mut fg, UP2, 0);
    }
    // dst 8 gets window, but its packet is behind dst 7's head: still closed
    fx.control(&mut fg, UP2, CtrlMsg::Credit { dst: 8, credits: 5, psn: 4 });
    assert!(fx.closed(UP2, 1), "head-of-line blocked behind another port's packet");
    // dst 7's credit opens the head; once it left, dst 8's packet is the head and may go
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 5, psn: 4 });
    assert!(!fx.closed(UP1, 1));
    fx.leave(&mut fg, UP1, 1);
    assert!(fx.closed(UP1, 1) || fx.held[&(UP1, 1)].is_empty());
    assert!(!fx.closed(UP2, 1));
    fx.leave(&mut fg, UP2, 1);
    assert_eq!(fg.pool.as_ref().unwrap().in_use(), 0, "drained and released");
}

#[test]
fn one_window_per_destination_is_spent_by_every_uplink() {
    // §7.2's "global per-dst sending window": dst 7's packets by UP1 and UP2 spend one window
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig::default());
    for i in 0..W0 {
        assert_eq!(fx.arrive(&mut fg, HOST, if i % 2 == 0 { UP1 } else { UP2 }, 7, 0, true), 0);
    }
    assert_eq!((fg.window(&fx.view(), UP1, 7), fg.window(&fx.view(), UP2, 7)), (0, 0));
    let v = fx.arrive(&mut fg, HOST, UP2, 7, 0, true);
    assert_eq!(v, 1);
    assert!(fx.closed(UP2, v));
    for _ in 0..(W0 + 1) / 2 {
        fx.leave(&mut fg, UP1, 0);
    }
    for _ in 0..W0 / 2 {
        fx.leave(&mut fg, UP2, 0);
    }
    // a credit from the spine behind UP1 opens the VOQ on UP2
    fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 1, psn: 0 });
    assert_eq!(fg.window(&fx.view(), UP2, 7), 1);
    assert!(!fx.closed(UP2, v));
    // while dst 7 waits here, its packets by UP1 queue too rather than overtake, window or not
    assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), 1);
    assert!(!fx.closed(UP1, 1));
    // the VOQ packet by UP2 spends the last packet of window: every VOQ of dst 7 closes
    fx.leave(&mut fg, UP2, v);
    assert_eq!(fg.window(&fx.view(), UP1, 7), 0);
    assert!(fx.closed(UP1, 1));
    // with a window per (uplink, destination), UP2 has its own: the same packet goes direct
    let mut fy = Fx::new();
    let mut pp = Floodgate::new(FloodgateConfig { window: WindowScope::Port, ..Default::default() });
    for _ in 0..W0 {
        fy.arrive(&mut pp, HOST, UP1, 7, 0, true);
    }
    assert_eq!(fy.arrive(&mut pp, HOST, UP2, 7, 0, true), 0);
    assert_eq!(pp.window(&fy.view(), UP2, 7), W0 - 1);
}

/// A ToR whose ports 0 and 1 face hosts A and B and port 2 a spine.
fn two_hosts() -> Fx {
    let mut fx = Fx::new();
    fx.info.peers = vec![Peer { tier: None }, Peer { tier: None }, Peer { tier: Some(1) }];
    fx
}

/// The dstPause frames sent so far, as (host port, pause).
fn dst_pauses(fx: &Fx) -> Vec<(u16, bool)> {
    fx.sent.iter().filter_map(|&(p, m)| if let CtrlMsg::DstPause { pause, .. } = m { Some((p, pause)) } else { None }).collect()
}

#[test]
fn dst_pause_tests_the_voq_by_default_and_one_source_hosts_own_bytes_in_the_floodgate_ns3_reading() {
    const A: u16 = 0;
    const B: u16 = 1;
    const UP: u16 = 2;
    // thre_off = thre_on = one host-link BDP, 26,048 B = 24.9 packets of 1,048 B; the ideal
    // window towards the spine is 38 packets
    let run = |on: DstPauseOn| {
        let mut fx = two_hosts();
        let mut fg = Floodgate::new(FloodgateConfig { ideal: true, dst_pause_on: on, ..Default::default() });
        for _ in 0..38 {
            assert_eq!(fx.arrive(&mut fg, A, UP, 7, 0, true), 0, "window left: direct");
        }
        for _ in 0..20 {
            assert_ne!(fx.arrive(&mut fg, A, UP, 7, 0, true), 0, "no window: the VOQ");
        }
        // B's 10 packets take the VOQ past thre_off (30 x 1,048 B); B holds 10,480 B of its own
        for _ in 0..10 {
            fx.arrive(&mut fg, B, UP, 7, 0, true);
        }
        let paused = dst_pauses(&fx);
        // A's 38 direct packets leave: A holds 20 VOQ packets (20,960 B) afterwards
        for _ in 0..38 {
            fx.leave(&mut fg, UP, 0);
        }
        (paused, dst_pauses(&fx))
    };
    // §4.3: the destination's VOQ passed thre_off when B's packets came: B is paused, A (whose
    // packets all came before) is not; the VOQ is still long, so nobody is resumed
    assert_eq!(run(DstPauseOn::Voq), (vec![(B, true)], vec![(B, true)]));
    // Floodgate-NS3: A is paused on its own bytes (its 25th packet) and B, with 10,480 B held,
    // never; A is resumed once its own bytes fall below thre_on, whatever the VOQ holds
    assert_eq!(run(DstPauseOn::SourceHost), (vec![(A, true)], vec![(A, true), (A, false)]));
}

#[test]
fn win_m_multiplies_the_next_hops_bdp_in_the_practical_window() {
    let fx = Fx::new();
    // ceil((1.5 x 26,048 + 125,000) / 1,048) = ceil(156.56) = 157 (Floodgate-NS3's SWITCH_WIN_M 1.5)
    let mut fg = Floodgate::new(FloodgateConfig { win_m: 1.5, ..Default::default() });
    assert_eq!(fg.window(&fx.view(), UP1, 7), 157);
    assert!(FloodgateConfig { win_m: 0.0, ..Default::default() }.validate().unwrap_err().contains("win_m"));
}

#[test]
fn a_byte_counter_credits_at_dequeue_once_it_is_reached_and_the_timer_sends_the_rest() {
    let credits = |fx: &Fx| fx.sent.iter().filter_map(|&(p, m)| if let CtrlMsg::Credit { credits, psn, .. } = m { Some((p, credits, psn)) } else { None }).collect::<Vec<_>>();
    for bc in [None, Some(3000)] {
        let mut fx = Fx::new();
        let mut fg = Floodgate::new(FloodgateConfig { byte_counter: bc, ..Default::default() });
        // four packets for the host behind port 0 come from the spine behind UP1 and leave
        for psn in 0..4 {
            fx.arrive(&mut fg, UP1, HOST, 7, psn, true);
            fx.leave(&mut fg, HOST, 0);
        }
        if bc.is_none() {
            assert!(credits(&fx).is_empty(), "credits wait for the timer (§4.1)");
        } else {
            // 3 x 1,048 B >= 3,000 B: one credit for three packets at the third one's dequeue
            assert_eq!(credits(&fx), vec![(UP1, 3, 2)]);
        }
        fx.tick(&mut fg, Time::from_us(10));
        let want = if bc.is_none() { vec![(UP1, 4, 3)] } else { vec![(UP1, 3, 2), (UP1, 1, 3)] };
        assert_eq!(credits(&fx), want);
    }
    assert!(FloodgateConfig { byte_counter: Some(0), ..Default::default() }.validate().unwrap_err().contains("byte_counter"));
}

/// Floodgate-NS3's byte counter under delayCredit: credits due to every upstream while the VOQ
/// was long all go back at the first dequeue under the threshold, whichever upstream's packet
/// that is (its `SwitchNotifyDequeue` checks every upstream), not only to that packet's.
#[test]
fn a_byte_counter_releases_every_upstreams_held_credits_at_the_first_dequeue_under_the_threshold() {
    const UP3: u16 = 3;
    let mut fx = Fx::with_uplinks(3);
    let cfg = FloodgateConfig { thre_credit_bdp: 1.0, byte_counter: Some(3000), ..Default::default() };
    let mut fg = Floodgate::new(cfg);
    // dst 7 comes from the spines behind UP1 and UP3 in turn and goes on by UP2: W0 direct, then
    // 30 in the VOQ (31,440 B, over one BDP of 26,048 B)
    let from = |psn: u32| if psn.is_multiple_of(2) { UP1 } else { UP3 };
    for psn in 0..W0 as u32 + 30 {
        fx.arrive(&mut fg, from(psn), UP2, 7, psn, true);
    }
    for _ in 0..W0 {
        fx.leave(&mut fg, UP2, 0);
    }
    assert!(fx.sent.is_empty(), "both upstreams are owed over 3,000 B, held by the VOQ");
    for _ in 0..5 {
        fx.leave(&mut fg, UP2, 1);
    }
    assert!(fx.sent.is_empty(), "25 left: 26,200 B, still over");
    // the sixth is UP1's (psn 150): it brings the VOQ to 25,152 B and both upstreams are credited
    fx.leave(&mut fg, UP2, 1);
    let credited: Vec<(u16, u32)> = fx.sent.iter().filter_map(|&(p, m)| if let CtrlMsg::Credit { credits, .. } = m { Some((p, credits)) } else { None }).collect();
    assert_eq!(credited, vec![(UP1, 76), (UP3, 75)], "every upstream owed a byte counter's worth");
}

#[test]
fn acks_in_the_data_queues_take_the_non_incast_queue_and_neither_spend_window_nor_earn_credit() {
    let mut fx = Fx::new();
    let mut fg = Floodgate::new(FloodgateConfig::default());
    // dst 7's window is spent and it waits in a VOQ
    for _ in 0..W0 {
        fx.arrive(&mut fg, HOST, UP1, 7, 0, true);
    }
    assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), 1);
    // an ACK to host 7 goes by the non-incast queue all the same, and charges nothing
    let mut ack = PktMeta { dst: 7, ingress: HOST, egress: UP1, size: 84, prio: 3, flags: tag::ACK, ..Default::default() };
    ack.queue = fg.classify(fx.now, &ack, &fx.view());
    assert_eq!(ack.queue, 0);
    let mut out = vec![];
    fg.on_enqueue(fx.now, &mut ack, &fx.view(), &mut out);
    fg.on_dequeue(fx.now, &ack, &fx.view(), &mut out);
    assert!(out.is_empty());
    assert_eq!(fg.window(&fx.view(), UP1, 7), 0);
    // an ACK from the spine leaving towards the host is owed no credit
    let mut back = PktMeta { dst: 3, ingress: UP1, egress: HOST, size: 84, prio: 3, flags: tag::ACK, ..Default::default() };
    back.queue = fg.classify(fx.now, &back, &fx.view());
    fg.on_enqueue(fx.now, &mut back, &fx.view(), &mut out);
    fg.on_dequeue(fx.now, &back, &fx.view(), &mut out);
    fx.tick(&mut fg, Time::from_us(10));
    assert!(!fx.sent.iter().any(|(_, m)| matches!(m, CtrlMsg::Credit { dst: 3, .. })), "no credit for an ACK");
}

/// Floodgate-NS3's windows count bytes (`m_wins[dst] -= pktSize`, a packet goes while
/// `m_wins[dst] >= pktSize`): small packets fit many more to a window than the paper's count
/// of packets lets through. The window is 26,048 + 125,000 = 151,048 B; 100 B packets go
/// direct while one more MTU (1,048 B) fits: 1,501 of them (150,100 + 1,048 > 151,048).
#[test]
fn a_window_in_bytes_lets_small_packets_through_by_their_size() {
    let small = |fx: &mut Fx, fg: &mut Floodgate, psn: u32| fx.arrive_sized(fg, HOST, UP1, 7, psn, true, 100);
    for (unit, direct) in [(WindowUnit::Packets, W0 as u32), (WindowUnit::Bytes, 1501)] {
        let (mut fx, mut fg) = (Fx::new(), Floodgate::new(FloodgateConfig { window_unit: unit, ..Default::default() }));
        let mut n = 0;
        while small(&mut fx, &mut fg, n) == 0 {
            n += 1;
        }
        assert_eq!(n, direct, "{unit:?}");
        // a credit through the first 20 packets' PSN lets exactly 20 more go
        for _ in 0..20 {
            fx.leave(&mut fg, UP1, 0);
        }
        let psn = if unit == WindowUnit::Bytes { 20 * 100 - 1 } else { 19 };
        fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 20, psn });
        // the VOQ opens for exactly 20 (100 B each: 148,100 B charged, and 20 more keep one MTU free)
        for _ in 0..30 {
            small(&mut fx, &mut fg, 0);
        }
        let mut sent = 0;
        while !fx.closed(UP1, 1) {
            fx.leave(&mut fg, UP1, 1);
            sent += 1;
        }
        assert_eq!(sent, 20, "{unit:?}");
    }
}

/// One packet time of `Fx`'s ports: each port with something eligible sends one packet, its
/// non-incast queue first, then an open VOQ (the strict scheduler of §4.2); the destinations
/// sent, per port.
fn packet_time(fx: &mut Fx, fg: &mut Floodgate) -> Vec<(u16, u32)> {
    let mut sent = vec![];
    for p in [UP1, UP2] {
        let q = (0..4u16).find(|&q| fx.held.get(&(p, q)).is_some_and(|h| !h.is_empty()) && !fx.closed(p, q));
        if let Some(q) = q {
            let dst = fx.held[&(p, q)][0].dst;
            fx.leave(fg, p, q);
            sent.push((p, dst));
        }
    }
    sent
}

/// The stall of a switch-wide VOQ and how Floodgate-NS3's order removes it. Destination 7 is
/// reached by both uplinks; its window is spent, so its packets wait in the one FIFO VOQ: first
/// one for UP1, then three for UP2. UP1 is kept 100% busy by non-incast traffic to destination 9
/// (a new packet every packet time); UP2 is idle. A credit returns window for all four.
/// - `voq_service = "strict"`: the FIFO's head may leave only by UP1, after UP1's non-incast
///   queue, which never empties; UP2's VOQ packets stay behind it and idle UP2 sends nothing.
/// - `"egress_fifo"` (Floodgate-NS3, voq.cc lines 100-129): the credit moves all four into their
///   uplinks' FIFOs, so UP2 sends destination 7's packets from the credit's packet time on.
#[test]
fn a_voq_with_window_and_an_idle_uplink_sends_within_one_packet_time_while_the_fifo_head_waits_for_a_busy_uplink() {
    let first_up2_send = |service: VoqService| -> Option<usize> {
        let mut fx = Fx::new();
        let mut fg = Floodgate::new(FloodgateConfig { max_voq: 1, voq_pool: VoqPool::Shared, voq_service: service, ..Default::default() });
        for i in 0..W0 {
            assert_eq!(fx.arrive(&mut fg, HOST, if i % 2 == 0 { UP1 } else { UP2 }, 7, 0, true), 0);
        }
        assert_eq!(fx.arrive(&mut fg, HOST, UP1, 7, 0, true), 1, "out of window: the VOQ");
        for _ in 0..3 {
            assert_eq!(fx.arrive(&mut fg, HOST, UP2, 7, 0, true), 1);
        }
        // what was sent direct leaves; UP1 then has a backlog of non-incast traffic
        while fx.held.get(&(UP1, 0)).is_some_and(|h| !h.is_empty()) {
            fx.leave(&mut fg, UP1, 0);
        }
        while fx.held.get(&(UP2, 0)).is_some_and(|h| !h.is_empty()) {
            fx.leave(&mut fg, UP2, 0);
        }
        for _ in 0..20 {
            assert_eq!(fx.arrive(&mut fg, HOST, UP1, 9, 0, false), 0);
        }
        fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 10, psn: 9 });
        let mut first = None;
        for k in 0..60 {
            // UP1 stays busy: one more non-incast packet every packet time
            fx.arrive(&mut fg, HOST, UP1, 9, 0, false);
            if packet_time(&mut fx, &mut fg).contains(&(UP2, 7)) && first.is_none() {
                first = Some(k);
            }
        }
        assert_eq!(fg.sent_without_window, 0);
        first
    };
    assert_eq!(first_up2_send(VoqService::EgressFifo), Some(0), "UP2 sends at the credit's packet time");
    assert_eq!(first_up2_send(VoqService::Strict), None, "the paper's strict order stalls behind UP1's head");
}

/// `window_fit = "own_size"` (Floodgate-NS3's `CheckDstWin(dst, pktSize)`): a 100 B packet goes
/// direct while 100 B fit the 151,048 B window: 1,510 of them (151,000 + 100 > 151,048), where
/// the MTU test lets 1,501 go. At the head of a VOQ too: with 148 B of window left a 100 B
/// head joins the egress FIFO and a 1,048 B one behind it waits.
#[test]
fn a_window_tested_against_the_packets_own_size_lets_small_packets_use_all_of_it() {
    for (fit, direct) in [(WindowFit::Mtu, 1501u32), (WindowFit::OwnSize, 1510)] {
        let cfg = FloodgateConfig { window_unit: WindowUnit::Bytes, window_fit: fit, voq_pool: VoqPool::Shared, voq_service: VoqService::EgressFifo, ..Default::default() };
        let (mut fx, mut fg) = (Fx::new(), Floodgate::new(cfg));
        let mut n = 0;
        while fx.arrive_sized(&mut fg, HOST, UP1, 7, 0, true, 100) == 0 {
            n += 1;
        }
        assert_eq!(n, direct, "{fit:?}");
        if fit == WindowFit::Mtu {
            continue;
        }
        // 151,000 B charged, a 100 B packet in the VOQ; a 1,048 B one joins it
        assert_eq!(fx.arrive_sized(&mut fg, HOST, UP1, 7, 0, true, 1048), 1);
        for _ in 0..n {
            fx.leave(&mut fg, UP1, 0);
        }
        // 100 B credited back: 150,900 B charged, 148 B left
        fx.control(&mut fg, UP1, CtrlMsg::Credit { dst: 7, credits: 1, psn: 99 });
        let sizes: Vec<u32> = fx.held[&(UP1, 0)].iter().map(|m| m.size).collect();
        assert_eq!(sizes, vec![100], "the 100 B head joined, the 1,048 B packet waits");
        assert_eq!(fx.held[&(UP1, 1)].len(), 1);
    }
}
