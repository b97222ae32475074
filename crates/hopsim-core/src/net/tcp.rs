//! The TCP transport (`transport.mode = "tcp"`): how window-based congestion controls (DCTCP,
//! Pulser, ICTCP, or none) recover losses as the Pulser paper's ns-3 TCP does (Pulser §IV: "We
//! use ns-3"), instead of RoCE's go-back-N with receiver NACKs (`net::host`).
//!
//! **Receiver** (RFC 793's cumulative ACK, RFC 5681 §4.2 for when to ACK): a SACK-less receive
//! buffer. A segment at `rcv_nxt` advances it, and with it every out-of-order range already held
//! that it now joins; a segment beyond `rcv_nxt` is kept (`ooo`, disjoint sorted ranges) and
//! answered at once by a duplicate ACK of `rcv_nxt`; an old segment is answered at once by an ACK
//! of `rcv_nxt`. With `transport.tcp.delayed_ack = n > 1` in-order segments are ACKed every `n`th
//! segment or after `delayed_ack_timeout` (RFC 5681 §4.2, RFC 1122 §4.2.3.2; ns-3's `DelAckCount`
//! and `DelAckTimeout`), but at once when a segment fills all or part of a gap (RFC 5681 §4.2),
//! when it completes the flow (it stands for the FIN), and, as DCTCP §3.1's receiver state machine
//! asks, when the CE bit of the arriving segment differs from that of the segments waiting for an
//! ACK: those are ACKed first with their own ECN-Echo. An ACK echoes the send time of the first
//! segment it acknowledges (RFC 7323 §4.3's TSecr rule), ECN-Echo (and Pulser's EIN echo) if any
//! segment it covers carried the mark.
//!
//! **Sender, loss detection** (RFC 5681 §3.2, RFC 6582 §3.2): an ACK is a duplicate when it
//! acknowledges nothing new while data is outstanding. On the `dupack_threshold`th (3) duplicate,
//! outside recovery and if the ACK covers more than `recover` (RFC 6582 step 1-2, so one window's
//! losses cause one reduction), the sender enters fast recovery: `recover <- snd_max`, the first
//! unacknowledged segment is retransmitted at once (it needs no window), the congestion control
//! takes its loss reaction (`on_nack`: DCTCP/ICTCP halve, `cc::window`; Pulser halves its saved
//! window while braking), and the window is inflated by the `3 MSS` that left the network (step
//! 2's `ssthresh + 3 SMSS`). Each further duplicate inflates it by one MSS (step 3), so new data
//! flows while the hole is repaired.
//!
//! **NewReno recovery** (RFC 6582 §3.2 step 3): a *partial* ACK (new data acknowledged, but not all
//! up to `recover`) retransmits the next hole, the first unacknowledged segment, at once, deflates
//! the inflation by the bytes it acknowledged and adds back one MSS, and stays in recovery; the
//! first partial ACK of an episode restarts the retransmission timer (the "Impatient" variant of
//! RFC 6582 §4.1's choice). A *full* ACK (everything up to `recover`) ends recovery and removes
//! the inflation (the window is the congestion control's again: `cwnd = ssthresh` after its cut).
//!
//! **Retransmission timer** (RFC 6298): the first RTT sample `R` sets `SRTT = R`, `RTTVAR = R/2`;
//! later ones `RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R|`, `SRTT <- 7/8 SRTT + 1/8 R` (§2.2-2.3);
//! `RTO = max(min_rto, SRTT + max(G, 4 RTTVAR))`, at most `max_rto` (§2.4-2.5); before any sample
//! `RTO = initial_rto` (§2.1). Samples come from ACKs that acknowledge new data, timed by the
//! echoed send time (RFC 7323's timestamps, which ns-3 turns on by default, so Karn's rule is not
//! needed). On expiry (§5.4-5.7): go back to the first unacknowledged byte (the receiver's buffer
//! makes the next cumulative ACK jump over what it holds, and `snd_nxt` follows it), double the
//! RTO (exponential backoff, kept until an ACK of new data brings a fresh sample), leave fast
//! recovery, set `recover <- snd_max` (RFC 6582 §4: no fast retransmit for the losses of the
//! window that timed out) and let the congestion control take its timeout reaction (`cwnd = 1 MSS`,
//! slow start, `cc::window`).
//!
//! Defaults and sources of `params::TcpConfig` (the Pulser paper names none of its TCP settings,
//! so ns-3's own defaults stand, those of `TcpSocketBase`/`TcpSocket` in the ns-3 releases of the
//! paper's time):
//!
//! | field | default | source |
//! |---|---|---|
//! | `min_rto` | 1 s | ns-3 `TcpSocketBase::MinRto` (`Seconds (1.0)`; RFC 6298 §2.4's 1 s; Linux uses 200 ms) |
//! | `initial_rto` | 1 s | RFC 6298 §2.1; ns-3 `RttEstimator::InitialEstimation` 1 s |
//! | `max_rto` | 60 s | RFC 6298 §2.5 ("at least 60 seconds") |
//! | `clock_granularity` | 1 ms | ns-3 `TcpSocketBase::ClockGranularity` (`MilliSeconds (1)`), RFC 6298's `G` |
//! | `dupack_threshold` | 3 | RFC 5681 §3.2; ns-3 `TcpSocketBase::ReTxThreshold` |
//! | `delayed_ack` | 1 (off: an ACK per segment) | hopsim's ACK per packet; ns-3's `DelAckCount` is 2 |
//! | `delayed_ack_timeout` | 200 ms | ns-3 `TcpSocket::DelAckTimeout`; RFC 1122 §4.2.3.2 (< 500 ms) |
//!
//! **Two ends, two hosts.** The sender's half (window, recovery, RTO) and the receiver's (receive
//! buffer, delayed ACK) share no state and no timer: they learn of each other only by the data
//! and ACKs between them, so a run splits over threads with each half on its own host's thread
//! (`crate::engine`), as RoCE's halves do.
//!
//! Interpretation choices:
//! - A flow is a TCP connection already established: no handshake, no FIN exchange; the segment
//!   that completes the flow is ACKed at once, as a FIN would be.
//! - The inflation of fast recovery is kept here, beside the congestion control's window
//!   (`window = min(cc window, host cap) + inflation`), so that DCTCP, Pulser and ICTCP keep one
//!   `cc::window::TcpWindow` each; a partial ACK deflates only the inflation (the cut window of the
//!   congestion control stands for `ssthresh`).
//! - No limited transmit (RFC 3042), no SACK (the paper's setting is "SACK-less NewReno"), no
//!   receive-window limit beyond ICTCP's advertised window; ACKs are never lost to reordering
//!   because the fabric routes a flow on one path.
//! - DCTCP's ECN-Echo and Pulser's EIN echo on duplicate ACKs reach the congestion control like
//!   any ACK's (Linux reacts to ECE on duplicates too).

use crate::cc::{AckInfo, CongestionControl, RxPacket};
use crate::packet::{Packet, PacketId, PktKind};
use crate::params::TcpConfig;
use crate::sim::Simulation;
use crate::time::Time;

/// Checks `transport.mode = "tcp"` against the rest of the settings: its own values, and a
/// congestion control that runs over TCP (the window-based ones, or none). Errors name the field
/// and what is allowed.
pub fn validate_mode(cfg: &crate::config::NetConfig) -> Result<(), String> {
    use crate::cc::CcConfig;
    let Some(t) = &cfg.host.tcp else { return Ok(()) };
    t.validate()?;
    if cfg.cc.runs_over_tcp() {
        return Ok(());
    }
    Err(format!(
        "transport.mode: 'tcp' carries window-based congestion controls; allowed with it: {} (got '{}', which runs on 'roce')",
        CcConfig::tcp_names().join(", "),
        cfg.cc.name()
    ))
}

/// Both ends' TCP state of one flow (boxed in `Flow::tcp`; `None` under RoCE). Each end reads
/// and writes only its own fields, and has its own timer (the sender the flow's, the receiver
/// `Event::AckTimer`), so that in a run split over threads each partition's copy serves the end
/// whose host it owns (`crate::engine`).
#[derive(Clone, Debug)]
pub struct TcpFlow {
    // --- sender
    /// A retransmission waiting to go out (the first unacknowledged byte): sent before new data,
    /// whatever the window.
    pub rtx: Option<u64>,
    /// Consecutive duplicate ACKs.
    pub dupacks: u32,
    /// In fast recovery (RFC 6582) until an ACK reaches `recover`.
    pub in_recovery: bool,
    /// RFC 6582's `recover` as an exclusive end (`snd_max` when set); `None` before any loss.
    pub recover: Option<u64>,
    first_partial: bool,
    /// Fast recovery's window inflation, bytes.
    pub inflation: u64,
    srtt: Option<Time>,
    rttvar: Time,
    /// The retransmission timeout now (backed off after expiries).
    pub rto: Time,
    // --- receiver
    /// Out-of-order ranges held above `rcv_nxt`: sorted, disjoint, not touching.
    ooo: Vec<(u64, u64)>,
    /// In-order segments received and not yet ACKed (delayed ACKs), the marks among them, and the
    /// send time of the first.
    pending: u32,
    pending_ce: bool,
    pending_ein: bool,
    pending_ts: Time,
    /// When the delayed ACK must go, and the generation of the timer event armed for it (the
    /// receiver's own `Event::AckTimer`: a flow's two ends share no timer).
    pub delack_at: Option<Time>,
    delack_gen: u32,
    /// The receive window the receiver's congestion control (ICTCP) chose at the newest data
    /// segment, 0 for none: every ACK advertises the window of its moment, so one the delayed-ACK
    /// timer sends carries it too (else the sender would keep a window the receiver has moved on
    /// from until the next segment's ACK).
    adv: u32,
    /// Since when the receiver has held a gap, and the longest it has held one.
    hole_since: Option<Time>,
    pub max_hole: Time,
    // --- statistics
    pub fast_retransmits: u32,
    pub partial_acks: u32,
    pub timeouts: u32,
    pub dupacks_seen: u64,
    pub rtt_samples: u64,
}

impl TcpFlow {
    pub fn new(cfg: &TcpConfig) -> TcpFlow {
        TcpFlow {
            rtx: None,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            first_partial: true,
            inflation: 0,
            srtt: None,
            rttvar: Time::ZERO,
            rto: cfg.first_rto(),
            ooo: vec![],
            pending: 0,
            pending_ce: false,
            pending_ein: false,
            pending_ts: Time::ZERO,
            delack_at: None,
            delack_gen: 0,
            adv: 0,
            hole_since: None,
            max_hole: Time::ZERO,
            fast_retransmits: 0,
            partial_acks: 0,
            timeouts: 0,
            dupacks_seen: 0,
            rtt_samples: 0,
        }
    }

    /// Smoothed RTT (`None` before the first sample).
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    /// RFC 6298 §2.2-2.4: take an RTT sample `r` and recompute the RTO (which also ends any
    /// backoff, §5.7).
    pub fn rtt_sample(&mut self, r: Time, cfg: &TcpConfig) {
        self.rtt_samples += 1;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            Some(s) => {
                self.rttvar = Time((3 * (self.rttvar.0 as u128) / 4 + (s.0.abs_diff(r.0) as u128) / 4) as u64);
                self.srtt = Some(Time((7 * (s.0 as u128) / 8 + (r.0 as u128) / 8) as u64));
            }
        }
        let s = self.srtt.unwrap_or(r);
        let rto = Time(s.0.saturating_add(cfg.clock_granularity.0.max(self.rttvar.0.saturating_mul(4))));
        self.rto = rto.max(cfg.min_rto).min(cfg.max_rto);
    }

    /// RFC 6298 §5.5: back the timer off (double it, at most `max_rto`).
    pub fn back_off(&mut self, cfg: &TcpConfig) {
        self.rto = Time(self.rto.0.saturating_mul(2)).min(cfg.max_rto);
    }

    /// The receiver got `[seq, end)` while expecting `rcv_nxt`: the new `rcv_nxt`, and whether the
    /// segment filled all or part of a gap.
    pub fn receive(&mut self, rcv_nxt: u64, seq: u64, end: u64) -> (u64, bool) {
        if end <= rcv_nxt {
            return (rcv_nxt, false);
        }
        if seq > rcv_nxt {
            self.hold(seq, end);
            return (rcv_nxt, false);
        }
        let fills = !self.ooo.is_empty();
        let mut nxt = end;
        // absorb the held ranges the segment now reaches
        let k = self.ooo.iter().take_while(|&&(s, _)| s <= nxt).count();
        for &(_, e) in &self.ooo[..k] {
            nxt = nxt.max(e);
        }
        self.ooo.drain(..k);
        (nxt, fills)
    }

    /// Keep the out-of-order range `[seq, end)`, merging it with those it meets.
    fn hold(&mut self, seq: u64, end: u64) {
        let i = self.ooo.partition_point(|&(_, e)| e < seq);
        let j = self.ooo.partition_point(|&(s, _)| s <= end);
        if i == j {
            self.ooo.insert(i, (seq, end));
        } else {
            let s = self.ooo[i].0.min(seq);
            let e = self.ooo[j - 1].1.max(end);
            self.ooo.drain(i..j);
            self.ooo.insert(i, (s, e));
        }
    }

    /// Out-of-order ranges held (for tests).
    pub fn held(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// The receiver's gap bookkeeping after a segment: a gap opens, persists or closes.
    fn track_hole(&mut self, now: Time) {
        match (self.ooo.is_empty(), self.hole_since) {
            (false, None) => self.hole_since = Some(now),
            (true, Some(t)) => {
                self.max_hole = self.max_hole.max(now - t);
                self.hole_since = None;
            }
            _ => {}
        }
    }

    /// Counters for the run summary's `modules`.
    pub fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("tcp_fast_retransmits", self.fast_retransmits as u64));
        out.push(("tcp_partial_acks", self.partial_acks as u64));
        out.push(("tcp_timeouts", self.timeouts as u64));
        out.push(("tcp_dupacks", self.dupacks_seen));
    }
}

impl Simulation {
    /// The receiver's half of the TCP transport for data packet `pkt` (slab id `id`) at host `h`.
    /// It reads and writes the flow's receiver fields only (`rcv_nxt`, `finish`, the receive
    /// buffer, the delayed ACK), so that it may run in another partition than the sender.
    pub(crate) fn tcp_receiver_data(&mut self, h: u32, id: PacketId, pkt: &Packet) {
        let now = self.now;
        let hcfg = &self.cfg.host;
        let tcfg = hcfg.tcp.as_ref().expect("a TCP run");
        let (every, delack_iv) = (tcfg.delayed_ack, tcfg.delayed_ack_timeout);
        let ack_size = hcfg.ack_bytes.max(hcfg.ack_min);
        self.stats.counters.data_bytes_delivered += pkt.payload as u64;
        let rtt = self.rcv_rtt_sample(pkt.flow, id, pkt);
        let flow = &mut self.flows[pkt.flow as usize];
        let end = pkt.seq + pkt.payload as u64;
        let finishing = pkt.seq <= flow.rcv_nxt && end >= flow.spec.size && flow.rcv_nxt < flow.spec.size;
        // receiver-side congestion control (ICTCP's window) runs on every data packet
        let host = &mut self.hosts[h as usize];
        let rx = RxPacket { now, wire: pkt.size, payload: pkt.payload, finishing, capacity: self.ports[host.port as usize].clock.rate, rtt };
        let adv = flow.cc.on_data_received(&mut host.rx, &rx).map_or(0, |w| w.min(u32::MAX as u64) as u32);
        let t = flow.tcp.as_mut().expect("a TCP flow");
        t.adv = adv;
        let in_order = pkt.seq <= flow.rcv_nxt && end > flow.rcv_nxt;
        let (nxt, filled) = t.receive(flow.rcv_nxt, pkt.seq, end);
        t.track_hole(now);
        let ce = pkt.ecn();
        let reply = Packet {
            kind: PktKind::Ack,
            prio: pkt.prio,
            flow: pkt.flow,
            src: pkt.dst,
            dst: pkt.src,
            hash: pkt.hash,
            size: ack_size,
            ..Default::default()
        };
        // what to send: at most a flush of the segments waiting with the other CE state, then
        // this segment's own ACK (or nothing, if it waits)
        let mut out: [Option<Packet>; 2] = [None, None];
        let mut arm = None;
        if in_order && t.pending > 0 && t.pending_ce != ce {
            // DCTCP §3.1: the CE state changed; ACK what waits with its own echo first
            out[0] = Some(Packet { seq: flow.rcv_nxt, ts: t.pending_ts, marks: marks(t.pending_ce, t.pending_ein), ..reply });
            t.pending = 0;
            t.delack_at = None;
        }
        flow.rcv_nxt = nxt;
        if nxt >= flow.spec.size && flow.finish.is_none() {
            flow.finish = Some(now);
        }
        if in_order {
            if t.pending == 0 {
                t.pending_ts = pkt.ts;
                t.pending_ce = false;
                t.pending_ein = false;
            }
            t.pending += 1;
            t.pending_ce |= ce;
            t.pending_ein |= pkt.ein();
            if t.pending >= every || filled || finishing || nxt >= flow.spec.size {
                out[1] = Some(Packet { seq: nxt, ts: t.pending_ts, marks: marks(t.pending_ce, t.pending_ein), ..reply });
                t.pending = 0;
                t.delack_at = None;
            } else if t.delack_at.is_none() {
                t.delack_at = Some(now + delack_iv);
                t.delack_gen = t.delack_gen.wrapping_add(1);
                arm = Some((now + delack_iv, t.delack_gen));
            }
        } else {
            // out of order or old: a (duplicate) ACK at once, echoing this segment; what waits
            // for a delayed ACK is covered by it
            out[1] = Some(Packet { seq: nxt, ts: pkt.ts, marks: marks(ce || t.pending_ce && t.pending > 0, pkt.ein()), ..reply });
            t.pending = 0;
            t.delack_at = None;
        }
        // this packet is gone, its ACKs are on their way (a held ACK's flow keeps its timer, and
        // a flow whose sender is done has nothing held: everything was acknowledged); wrapping:
        // in a partition of a split run a flow's count is only its part (`engine`)
        flow.in_net = flow.in_net.wrapping_sub(1).wrapping_add(out.iter().flatten().count() as u32);
        let idle = flow.in_net == 0;
        let ack_h = flow.ack_nic;
        for p in out.into_iter().flatten() {
            let id = self.host_send_control(ack_h, p);
            self.advertise(id, adv);
            self.stamp_ack_ts(id);
        }
        if let Some((at, gen)) = arm {
            self.sched.push(at, crate::event::Event::AckTimer { flow: pkt.flow, gen });
        }
        if idle {
            self.release_if_done(pkt.flow);
        }
    }

    /// Put the receive window `adv` (ICTCP's; 0 for none) on ACK `id`: it rides the ACK's own
    /// tag field.
    fn advertise(&mut self, id: PacketId, adv: u32) {
        if adv > 0 {
            self.slab.tags.set(id, crate::packet::Tags { rwnd: adv, ..Default::default() });
        }
    }

    /// The receiver's delayed-ACK timer of flow `f` (generation `gen`) fired: send the ACK that
    /// waits, if this timer is still the one armed for it (a freed flow's stale timer finds no
    /// state; an ACK sent since disarmed it).
    pub(crate) fn tcp_on_ack_timer(&mut self, f: u32, gen: u32) {
        let Some(flow) = self.flows.get_mut(f) else { return };
        let Some(t) = flow.tcp.as_mut() else { return };
        if t.delack_gen != gen || t.delack_at.is_none() {
            return;
        }
        t.delack_at = None;
        if t.pending == 0 {
            return;
        }
        t.pending = 0;
        let size = self.cfg.host.ack_bytes.max(self.cfg.host.ack_min);
        let p = Packet {
            kind: PktKind::Ack,
            prio: flow.spec.prio,
            flow: f,
            src: flow.spec.dst,
            dst: flow.spec.src,
            hash: flow.hash,
            size,
            seq: flow.rcv_nxt,
            ts: t.pending_ts,
            marks: marks(t.pending_ce, t.pending_ein),
            ..Default::default()
        };
        let (h, adv) = (flow.ack_nic, t.adv);
        flow.in_net = flow.in_net.wrapping_add(1);
        let id = self.host_send_control(h, p);
        self.advertise(id, adv);
        self.stamp_ack_ts(id);
    }

    /// The sender's half: an ACK of flow `f` arrived (see the module doc).
    pub(crate) fn tcp_sender_ack(&mut self, f: u32, id: PacketId, pkt: &Packet) {
        let now = self.now;
        self.heard_ack_ts(f, id);
        let tcfg = self.cfg.host.tcp.as_ref().expect("a TCP run");
        let flow = &mut self.flows[f as usize];
        flow.in_net = flow.in_net.wrapping_sub(1);
        if flow.sender_done {
            if flow.in_net == 0 {
                self.release_if_done(f);
            }
            return;
        }
        let mss = self.cfg.host.mtu as u64;
        let t = flow.tcp.as_mut().expect("a TCP flow");
        let mut newly = 0;
        let mut loss = false;
        if pkt.seq > flow.snd_una {
            newly = pkt.seq - flow.snd_una;
            flow.snd_una = pkt.seq;
            if flow.snd_nxt < flow.snd_una {
                flow.snd_nxt = flow.snd_una;
            }
            if t.rtx.is_some_and(|s| s < flow.snd_una) {
                t.rtx = None;
            }
            t.dupacks = 0;
            t.rtt_sample(now - pkt.ts, tcfg);
            let mut restart = true;
            if t.in_recovery {
                if flow.snd_una >= t.recover.unwrap_or(0) {
                    // full ACK: recovery is over (RFC 6582 step 3, full acknowledgment)
                    t.in_recovery = false;
                    t.inflation = 0;
                } else {
                    // partial ACK: the next hole goes out now, and recovery goes on
                    t.partial_acks += 1;
                    t.rtx = Some(flow.snd_una);
                    t.inflation = t.inflation.saturating_sub(newly) + if newly >= mss { mss } else { 0 };
                    restart = t.first_partial;
                    t.first_partial = false;
                }
            }
            if restart || flow.rto_at.is_none() {
                flow.rto_at = (flow.snd_una < flow.snd_max).then(|| now + t.rto);
            } else if flow.snd_una >= flow.snd_max {
                flow.rto_at = None;
            }
        } else if pkt.seq == flow.snd_una && flow.snd_una < flow.snd_max {
            t.dupacks += 1;
            t.dupacks_seen += 1;
            if t.in_recovery {
                t.inflation += mss;
            } else if t.dupacks == tcfg.dupack_threshold && t.recover.is_none_or(|r| flow.snd_una > r) {
                // fast retransmit (RFC 6582 step 2)
                t.in_recovery = true;
                t.first_partial = true;
                t.recover = Some(flow.snd_max);
                t.rtx = Some(flow.snd_una);
                t.inflation = tcfg.dupack_threshold as u64 * mss;
                t.fast_retransmits += 1;
                loss = true;
            }
        }
        let rwnd = self.slab.tags.get(id).rwnd;
        let flow = &mut self.flows[f as usize];
        let info = AckInfo {
            ack_seq: pkt.seq,
            newly_acked: newly,
            ecn_echo: pkt.ecn(),
            ein_echo: pkt.ein(),
            rtt: now - pkt.ts,
            snd_nxt: flow.snd_nxt,
            adv_window: (rwnd > 0).then_some(rwnd as u64),
            int: &[],
        };
        flow.cc.on_ack(now, &info);
        if loss {
            // the congestion control's reaction to a loss, once per window (`cc::window`)
            let info = AckInfo { snd_nxt: flow.snd_max, ..info };
            flow.cc.on_nack(now, &info);
        }
        self.after_ack(f);
    }

    /// Flow `f`'s sender timer fired in a TCP run: the congestion control's deadline, the
    /// retransmission timeout (the receiver's delayed ACK has its own, `tcp_on_ack_timer`).
    pub(crate) fn tcp_on_timer(&mut self, f: u32) {
        let now = self.now;
        let tcfg = self.cfg.host.tcp.as_ref().expect("a TCP run");
        let flow = &mut self.flows[f as usize];
        if flow.sender_done {
            return;
        }
        if flow.cc.next_timer().is_some_and(|t| t <= now) {
            flow.cc.on_timer(now);
        }
        if flow.rto_at.is_some_and(|t| t <= now) {
            let t = flow.tcp.as_mut().expect("a TCP flow");
            if flow.snd_una < flow.snd_max {
                // RFC 6298 §5.4-5.6 and RFC 6582 §4
                t.timeouts += 1;
                t.back_off(tcfg);
                t.in_recovery = false;
                t.inflation = 0;
                t.dupacks = 0;
                t.rtx = None;
                t.recover = Some(flow.snd_max);
                flow.snd_nxt = flow.snd_una;
                flow.rto_at = Some(now + t.rto);
                flow.cc.on_timeout(now);
                self.stats.counters.timeouts += 1;
            } else {
                flow.rto_at = None;
            }
        }
    }
}

/// The marks byte of an ACK echoing ECN (CE) and EIN.
#[inline]
fn marks(ce: bool, ein: bool) -> u8 {
    let mut p = Packet::default();
    if ce {
        p.set_ecn();
    }
    if ein {
        p.set_ein();
    }
    p.marks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> Time {
        Time::from_us(x)
    }

    #[test]
    fn defaults_are_ns3_tcp_socket_bases() {
        let c = TcpConfig::default();
        assert_eq!((c.min_rto, c.initial_rto, c.max_rto), (Time::from_ms(1000), Time::from_ms(1000), Time::from_ms(60_000)));
        assert_eq!((c.clock_granularity, c.dupack_threshold, c.delayed_ack), (Time::from_ms(1), 3, 1));
        assert!(c.validate().is_ok());
        assert!(TcpConfig { dupack_threshold: 0, ..c.clone() }.validate().unwrap_err().contains("transport.tcp.dupack_threshold"));
        assert!(TcpConfig { max_rto: us(1), ..c.clone() }.validate().unwrap_err().contains("transport.tcp.max_rto"));
        assert!(TcpConfig { delayed_ack: 0, ..c }.validate().is_err());
    }

    #[test]
    fn rto_follows_rfc_6298() {
        let cfg = TcpConfig { min_rto: us(100), clock_granularity: us(1), ..Default::default() };
        let mut t = TcpFlow::new(&cfg);
        assert_eq!(t.rto, Time::from_ms(1000), "before a sample: the initial RTO");
        // first sample R = 80 us: SRTT 80, RTTVAR 40, RTO = 80 + 4 x 40 = 240 us
        t.rtt_sample(us(80), &cfg);
        assert_eq!((t.srtt(), t.rto), (Some(us(80)), us(240)));
        // second R = 160: RTTVAR = 30 + 20 = 50, SRTT = 70 + 20 = 90, RTO = 90 + 200 = 290
        t.rtt_sample(us(160), &cfg);
        assert_eq!((t.srtt(), t.rttvar, t.rto), (Some(us(90)), us(50), us(290)));
        // steady samples shrink RTTVAR until min_rto binds
        for _ in 0..200 {
            t.rtt_sample(us(10), &cfg);
        }
        assert_eq!(t.rto, us(100), "clamped at min_rto");
        // backoff doubles up to max_rto; a new sample resets it
        t.back_off(&cfg);
        t.back_off(&cfg);
        assert_eq!(t.rto, us(400));
        let cap = TcpConfig { max_rto: us(500), ..cfg.clone() };
        t.back_off(&cap);
        assert_eq!(t.rto, us(500));
        t.rtt_sample(us(10), &cfg);
        assert_eq!(t.rto, us(100));
        // granularity: with RTTVAR ~ 0, RTO = SRTT + G
        let g = TcpConfig { min_rto: us(1), clock_granularity: Time::from_ms(1), ..Default::default() };
        let mut t = TcpFlow::new(&g);
        for _ in 0..300 {
            t.rtt_sample(us(50), &g);
        }
        assert_eq!(t.rto, us(1050));
    }

    #[test]
    fn receive_buffer_holds_out_of_order_data_and_acks_the_next_expected_byte() {
        let mut t = TcpFlow::new(&TcpConfig::default());
        // in order
        assert_eq!(t.receive(0, 0, 1000), (1000, false));
        // 1000..2000 lost; 2000.., 3000.. held
        assert_eq!(t.receive(1000, 2000, 3000), (1000, false));
        assert_eq!(t.receive(1000, 3000, 4000), (1000, false));
        assert_eq!(t.held(), &[(2000, 4000)]);
        // 5000.. held apart, then 4000.. joins everything
        assert_eq!(t.receive(1000, 5000, 6000), (1000, false));
        assert_eq!(t.held(), &[(2000, 4000), (5000, 6000)]);
        assert_eq!(t.receive(1000, 4000, 5000), (1000, false));
        assert_eq!(t.held(), &[(2000, 6000)]);
        // a duplicate of held data changes nothing
        assert_eq!(t.receive(1000, 3000, 4000), (1000, false));
        assert_eq!(t.held(), &[(2000, 6000)]);
        // the hole filled: rcv_nxt jumps over what is held
        assert_eq!(t.receive(1000, 1000, 2000), (6000, true));
        assert!(t.held().is_empty());
        // old data
        assert_eq!(t.receive(6000, 1000, 2000), (6000, false));
    }
}
