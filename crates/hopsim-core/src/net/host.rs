//! A RoCE host: a NIC with one queue pair per flow, go-back-N reliability and DCQCN's
//! notification point.
//!
//! Sender (as the HPCC simulator's `RdmaHw`): the NIC serves its queue pairs round robin; a queue
//! pair may send when it has data, its bytes in flight are under the window (the host's per-flow
//! cap, by default one BDP of its path, and the congestion controller's window), its pacing time
//! has come (`next_avail`, from the controller's rate) and its priority is not paused by PFC.
//! Losses are repaired go-back-N: a NACK or a retransmission timeout rewinds `snd_nxt` to the
//! first unacknowledged byte.
//!
//! Receiver: one ACK per data packet carrying the cumulative sequence and the ECN echo; a NACK
//! for a packet beyond the expected one (repeated for the same hole at most once per
//! `nack_interval`); a CNP for an ECN-marked packet, at most one per flow per `cnp_interval`
//! (RoCE runs: none and DCQCN). Control packets take the NIC's control queue ahead of data.
//!
//! What the other congestion controls add (`cc`, `aqm`): ACKs also echo Pulser's EIN bit; in HPCC
//! runs data packets carry the INT header's bytes and collect INT records on the way, which the
//! receiver copies into its ACK (also longer by the header); in ICTCP runs the receiver runs
//! ICTCP's per-interface and per-connection control on every data packet and advertises the
//! resulting receive window in the ACK. Window-based algorithms report their congestion window
//! through `window()`, so the same send loop clocks them by ACKs.

use crate::cc::{AckInfo, AnyCc, CongestionControl, RxIface, RxPacket};
use crate::event::Event;
use crate::fc::nic::{AnyNic, NicFc, NicFlow};
use crate::net::nic_sched::{Blocked, NicSched};
use crate::packet::{tag, Packet, PacketId, PktKind};
use crate::sim::Simulation;
use crate::time::Time;
use crate::workload::FlowSpec;

/// One NIC of a host node. A node with one link has one `Host`; a node with several links (a
/// multi-NIC host, `net::nic_choice`) has one per link, adjacent in `Simulation::hosts` in the
/// order of its local ports, each with its own queue pairs, pauses and line rate, as the HPCC
/// simulator's `RdmaHw` keeps one `RdmaEgressQueue` per `QbbNetDevice`.
pub struct Host {
    pub node: u32,
    /// Global id of this NIC's port.
    pub port: u32,
    /// NICs of the node (1 for a single-homed host); this one is local port `port`'s.
    pub nics: u16,
    /// Flows this host is sending and has not finished, in the NIC's round-robin order.
    pub sched: NicSched,
    /// Receiver-side congestion-control state of the interface (ICTCP's).
    pub rx: RxIface,
    /// The host half of the flow-control scheme.
    pub nic: AnyNic,
    /// Destinations paused by destination-pause frames, and until when (usually empty).
    dst_pause: Vec<(u32, Time)>,
    /// Whether a queue, destination or flow pause has ever reached this host: until then the
    /// send loop skips those checks (PFC's per-priority pause is always checked).
    pub(crate) pauses_seen: bool,
    /// Queue, flow or destination pause frames (and gate actions) that reached this host: the
    /// NIC scheduler files paced flows again when it moves (`NicSched::sync_pauses`).
    pub(crate) pause_epoch: u32,
}

impl Host {
    pub fn new(node: u32, port: u32) -> Host {
        Host { node, port, nics: 1, sched: NicSched::default(), rx: RxIface::default(), nic: AnyNic::default(), dst_pause: vec![], pauses_seen: false, pause_epoch: 0 }
    }

    /// Pause sending to `dst` until `until` (`<= now` resumes it).
    pub fn pause_dst(&mut self, dst: u32, until: Time, now: Time) {
        self.dst_pause.retain(|&(d, u)| d != dst && u > now);
        if until > now {
            self.dst_pause.push((dst, until));
        }
    }

}

/// When sending to `dst` may go on under the destination pauses `paused` (None: not paused).
#[inline]
fn dst_paused_until(paused: &[(u32, Time)], dst: u32, now: Time) -> Option<Time> {
    if paused.is_empty() {
        return None;
    }
    paused.iter().find(|&&(d, u)| d == dst && u > now).map(|&(_, u)| u)
}

/// Whether a pause the NIC obeys beside PFC holds `flow` at `now`: its NIC queue's gate (queue
/// pause), a flow pause, or a pause of its destination (`dst_pause`, the host's).
#[inline]
fn held_at_nic(port: &crate::queues::port::Port, dst_pause: &[(u32, Time)], flow: &Flow, now: Time) -> bool {
    port.gate_closed(flow.nic_queue as usize, now) || flow.paused_until > now || dst_paused_until(dst_pause, flow.spec.dst, now).is_some()
}

/// Both ends of one flow (sender queue pair and receiver state): they share the flow id, and the
/// simulation owns both, so one struct keeps them together in memory. It is the flow's live
/// state, made when the flow starts and freed once nothing can touch it (`net::flow_store`); the
/// fixed fields the send path reads (spec, hash, caps, NICs) are copied in from `FlowFixed` so
/// that path reads one struct.
pub struct Flow {
    pub spec: FlowSpec,
    pub hash: u32,
    pub cc: AnyCc,
    /// Host's cap on bytes in flight.
    pub win_cap: u64,
    /// Line rate of the sender's NIC (`transport.window_by_rate` scales the cap by rate / this).
    line_rate: crate::time::Rate,
    /// Rate and wire size of the last packet paced (`transport.repace_on_rate_change`).
    paced_rate: crate::time::Rate,
    last_size: u32,
    /// Packets of this flow alive in the network (data, ACK, NACK, CNP): counted where made and
    /// where freed or dropped; the state is freed when this reaches zero with both ends done.
    pub(crate) in_net: u32,
    // sender
    pub snd_nxt: u64,
    pub snd_una: u64,
    /// Highest byte sent so far (bytes below it sent again are retransmissions).
    pub snd_max: u64,
    pub next_avail: Time,
    pub rto_at: Option<Time>,
    /// Paused by a flow-pause frame until then (`Time::MAX`: until resumed).
    pub paused_until: Time,
    /// The NIC queue (gate of the host port) the host's module put this flow in.
    pub nic_queue: u16,
    /// The flow's slot in its host's round robin (`NicSched`).
    nic_slot: u32,
    /// The sender's NIC the flow is bound to, and the receiver's NIC its ACKs, NACKs and CNPs
    /// leave by (indices into `Simulation::hosts`, fixed at assembly: `net::nic_choice`).
    pub(crate) src_nic: u32,
    pub(crate) ack_nic: u32,
    /// RFC 7323's timestamps where a receiver measures the RTT (ICTCP, `net::timestamps`): the
    /// newest receiver stamp the sender heard (`TS.Recent`), and the last echo the receiver
    /// took a sample from; 0: none.
    pub(crate) ts_recent: u32,
    pub(crate) ts_sampled: u32,
    timer_at: Option<Time>,
    timer_gen: u32,
    pub sender_done: bool,
    /// Extra header bytes per data packet and per ACK, whether the receiver sends CNPs and
    /// whether data collects INT: what the run's congestion control needs (set at the start).
    hdr_extra: u32,
    ack_extra: u32,
    cnp: bool,
    int: bool,
    // receiver
    pub rcv_nxt: u64,
    last_cnp: Option<Time>,
    last_nack: Option<(u64, Time)>,
    // results
    /// The receiver holds the last byte.
    pub finish: Option<Time>,
    /// The sender holds the last ACK (the HPCC simulator's completion).
    pub ack_finish: Option<Time>,
    pub retx_bytes: u64,
    pub dropped_bytes: u64,
    /// TCP transport state (`transport.mode = "tcp"`, `net::tcp`); `None` under RoCE.
    pub tcp: Option<Box<crate::net::tcp::TcpFlow>>,
}

impl Flow {
    /// The state of flow `fx` as it starts, with its hash, window cap and controller `cc`.
    pub fn new(fx: &crate::net::flow_store::FlowFixed, hash: u32, win_cap: u64, cc: AnyCc) -> Flow {
        Flow {
            spec: fx.spec,
            hash,
            cc,
            win_cap,
            line_rate: fx.line_rate,
            paced_rate: crate::time::Rate(0),
            last_size: 0,
            in_net: 0,
            snd_nxt: 0,
            snd_una: 0,
            snd_max: 0,
            next_avail: Time::ZERO,
            rto_at: None,
            paused_until: Time::ZERO,
            nic_queue: 0,
            nic_slot: 0,
            src_nic: fx.src_nic,
            ack_nic: fx.ack_nic,
            ts_recent: 0,
            ts_sampled: 0,
            timer_at: None,
            timer_gen: 0,
            sender_done: false,
            hdr_extra: 0,
            ack_extra: 0,
            cnp: true,
            int: false,
            rcv_nxt: 0,
            last_cnp: None,
            last_nack: None,
            finish: None,
            ack_finish: None,
            retx_bytes: 0,
            dropped_bytes: 0,
            tcp: None,
        }
    }

    #[inline]
    fn window(&self, by_rate: bool) -> u64 {
        let cap = if by_rate && self.win_cap != u64::MAX && self.line_rate.0 > 0 {
            // `GetWin` with VAR_WIN: win x rate / max rate, at least 1 byte
            ((self.win_cap as u128 * self.cc.rate().0 as u128 / self.line_rate.0 as u128) as u64).max(1)
        } else {
            self.win_cap
        };
        match self.cc.window() {
            Some(w) => w.min(cap),
            None => cap,
        }
    }

    /// Has data and window (pacing and pause aside).
    #[inline]
    fn has_window_and_data(&self, by_rate: bool) -> bool {
        if let Some(t) = &self.tcp {
            // TCP: a pending retransmission goes whatever the window; fast recovery inflates it
            return t.rtx.is_some()
                || (self.snd_nxt < self.spec.size && self.snd_nxt - self.snd_una < self.window(by_rate).saturating_add(t.inflation));
        }
        self.snd_nxt < self.spec.size && self.snd_nxt - self.snd_una < self.window(by_rate)
    }

    /// A pacing rate under the flow's sending-rate cap (`FlowSpec::rate_cap`): the NIC paces at
    /// min(rate, cap).
    #[inline]
    fn capped(&self, r: crate::time::Rate) -> crate::time::Rate {
        match self.spec.rate_cap {
            Some(c) => r.min(c),
            None => r,
        }
    }

    /// `transport.repace_on_rate_change`: the rate changed since the last packet was paced, so
    /// move the next send time by the difference of the last packet's serialisation at the two
    /// rates (the HPCC simulator's `ChangeRate`).
    #[inline]
    fn repace(&mut self, times: crate::time::TxTimes) {
        let r = self.capped(self.cc.rate());
        if r != self.paced_rate && self.paced_rate.0 > 0 {
            let old = times.of(self.paced_rate, self.last_size as u64);
            let new = times.of(r, self.last_size as u64);
            self.next_avail = Time((self.next_avail.0 + new.0).saturating_sub(old.0));
            self.paced_rate = r;
        }
    }
}

impl Simulation {
    // (out of the event loop: once per flow, and inlined it costs the loop registers)
    #[inline(never)]
    pub(crate) fn start_flow(&mut self, f: u32) {
        let now = self.now;
        if let Some(part) = self.part.as_deref() {
            let spec = &self.flows.fixed(f).spec;
            if !part.owns(spec.src) && !part.owns(spec.dst) {
                // neither half runs here: its packets only pass through (a drop is charged to
                // it in `Part::dropped`), and its state would be one more copy per partition
                return;
            }
        }
        let needs = self.cfg.cc.transport_needs();
        let fx = self.flows.fixed(f);
        let cc = fx.new_cc(&self.cfg.cc, self.cfg.host.mtu);
        let state = Flow::new(fx, fx.hash(f, self.cfg.seed), fx.win_cap(&self.cfg.host), cc);
        self.flows.start(f, state);
        let flow = &mut self.flows[f as usize];
        flow.hdr_extra = needs.data_header;
        flow.ack_extra = needs.ack_header;
        flow.cnp = needs.cnp;
        flow.int = needs.int;
        flow.next_avail = now;
        if let Some(t) = &self.cfg.host.tcp {
            flow.tcp = Some(Box::new(crate::net::tcp::TcpFlow::new(t)));
        }
        flow.cc.on_start(now);
        let src = flow.spec.src;
        if !self.owns(src) {
            // the sender half runs where the source is (`crate::engine`); here the flow's state
            // serves its receiver half and the drops charged to it on the way
            return;
        }
        let h = self.join_nic(f);
        if self.ideal.is_some() {
            // Pulser's Ideal: the first packet waits for its booked queue-free path
            self.ideal_book_next(f, now);
        }
        self.arm_flow_timer(f);
        let p = self.hosts[h as usize].port;
        self.kick(p);
    }

    /// Flow `f` joins its NIC (`src_nic`): the host's module puts it in a NIC queue and it goes
    /// last in the NIC's round robin. Returns the NIC.
    pub(crate) fn join_nic(&mut self, f: u32) -> u32 {
        let flow = &mut self.flows[f as usize];
        let h = flow.src_nic;
        let nf = NicFlow { flow: f, dst: flow.spec.dst, prio: flow.spec.prio, size: flow.spec.size, incast: flow.spec.incast };
        let host = &mut self.hosts[h as usize];
        let ngates = self.ports[host.port as usize].ngates();
        flow.nic_queue = host.nic.nic_queue(self.now, &nf, ngates).min(ngates.saturating_sub(1) as u16);
        flow.nic_slot = host.sched.push_prio(f, flow.spec.prio);
        h
    }

    /// Flow `f` leaves its NIC's round robin (it finished, or moves to another NIC).
    pub(crate) fn leave_nic(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        let host = &mut self.hosts[flow.src_nic as usize];
        host.nic.flow_left(self.now, flow.nic_queue);
        let sched = &mut host.sched;
        if sched.remove(flow.nic_slot) {
            let flows = &mut self.flows;
            sched.compact(|f, slot| flows[f as usize].nic_slot = slot);
        }
    }

    /// Round robin over the host's queue pairs: the next data packet to send now, if any. Without
    /// pauses in effect at the host the NIC's scheduler finds it among its candidates
    /// (`nic_sched`); with them, the plain scan over every flow decides (the same choice).
    pub(crate) fn host_next_packet(&mut self, h: u32) -> Option<PacketId> {
        let now = self.now;
        let by_rate = self.cfg.host.window_by_rate;
        let host = &mut self.hosts[h as usize];
        let port = &self.ports[host.port as usize];
        let flows = &self.flows;
        if !self.nic_plain && !port.any_prio_paused(now) {
            host.sched.sync_pauses(host.pause_epoch);
            let Host { sched, dst_pause, pauses_seen, .. } = host;
            let f = sched.pick(now, |f| {
                let flow = &flows[f as usize];
                if !flow.has_window_and_data(by_rate) {
                    Err(Blocked::NoWindow)
                } else if *pauses_seen && held_at_nic(port, dst_pause, flow, now) {
                    Err(Blocked::Held)
                } else if flow.next_avail > now {
                    Err(Blocked::PacedUntil(flow.next_avail))
                } else {
                    Ok(())
                }
            })?;
            return Some(self.make_data(h, f));
        }
        let Host { sched, dst_pause, pauses_seen, .. } = host;
        let (slot, f) = sched.pick_paused(|p| port.is_paused(p as usize, now), |f| {
            let flow = &flows[f as usize];
            flow.has_window_and_data(by_rate)
                && flow.next_avail <= now
                && !port.is_paused(flow.spec.prio as usize, now)
                && !(*pauses_seen && held_at_nic(port, dst_pause, flow, now))
        })?;
        sched.picked(slot);
        Some(self.make_data(h, f))
    }

    /// When the host's NIC should look again: the earliest pacing time or pause expiry of a
    /// queue pair that has data and window.
    pub(crate) fn host_wake_time(&mut self, h: u32) -> Option<Time> {
        let now = self.now;
        let by_rate = self.cfg.host.window_by_rate;
        let host = &mut self.hosts[h as usize];
        let port = &self.ports[host.port as usize];
        let fast = !self.nic_plain && !port.any_prio_paused(now);
        if fast {
            host.sched.sync_pauses(host.pause_epoch);
        }
        let wake = |f: u32| -> Option<Time> {
            let flow = &self.flows[f as usize];
            if !flow.has_window_and_data(by_rate) {
                return None;
            }
            let mut w = flow.next_avail;
            let prio = flow.spec.prio as usize;
            if port.is_paused(prio, now) {
                w = w.max(port.cold.prio_pause[prio].until);
            }
            let q = flow.nic_queue as usize;
            if port.gate_closed(q, now) {
                w = w.max(port.gate_until(q));
            }
            w = w.max(flow.paused_until);
            if let Some(u) = dst_paused_until(&host.dst_pause, flow.spec.dst, now) {
                w = w.max(u);
            }
            // paused until resumed: the resume frame kicks the port
            (w != Time::MAX).then_some(w)
        };
        let t = if fast {
            // after a pick that found nothing, a flow with data and window is paced (filed in the
            // heap, unpaused) or held by a pause (still a candidate)
            let held = host.sched.candidates().filter_map(wake).min();
            match (host.sched.next_paced(), held) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        } else {
            let until = |p: u8| port.is_paused(p as usize, now).then(|| port.cold.prio_pause[p as usize].until);
            host.sched.wake_paused(until, wake)
        };
        t.map(|x| x.max(now))
    }

    fn make_data(&mut self, h: u32, f: u32) -> PacketId {
        let now = self.now;
        let hcfg = &self.cfg.host;
        let flow = &mut self.flows[f as usize];
        // TCP: a retransmission of the first unacknowledged segment goes before new data
        let rtx = flow.tcp.as_mut().and_then(|t| t.rtx.take());
        let seq = rtx.unwrap_or(flow.snd_nxt);
        let payload = (flow.spec.size - seq).min(hcfg.mtu as u64) as u32;
        let size = payload + hcfg.header_bytes + flow.hdr_extra;
        let int = flow.int;
        let retx = rtx.is_some() || flow.snd_nxt < flow.snd_max;
        let pkt = Packet {
            kind: PktKind::Data,
            tag_flags: if flow.spec.incast { tag::INCAST } else { 0 } | if retx { tag::RETX } else { 0 },
            queue: flow.nic_queue,
            prio: flow.spec.prio,
            flow: f,
            src: flow.spec.src,
            dst: flow.spec.dst,
            hash: flow.hash,
            size,
            payload,
            seq,
            ts: now,
            ..Default::default()
        };
        if retx {
            flow.retx_bytes += payload as u64;
        }
        flow.in_net = flow.in_net.wrapping_add(1);
        // a TCP retransmission fills a hole below snd_nxt and leaves it where it is
        if rtx.is_none() {
            flow.snd_nxt += payload as u64;
            flow.snd_max = flow.snd_max.max(flow.snd_nxt);
        }
        let rate = flow.capped(if hcfg.pace_at_rate { flow.cc.rate() } else { flow.line_rate });
        flow.next_avail = now + self.cfg.tx_time.of(rate, size as u64);
        flow.paced_rate = rate;
        flow.last_size = size;
        flow.cc.on_send(now, size);
        if flow.rto_at.is_none() {
            flow.rto_at = match &flow.tcp {
                Some(t) => Some(now + t.rto),
                None => rto_deadline(now, hcfg.rto),
            };
        }
        self.stats.counters.data_bytes_sent += payload as u64;
        self.arm_flow_timer(f);
        let id = self.slab.alloc(pkt);
        // a fresh INT stack wherever switches stamp INT (under HPCC, or with INT on by itself)
        if int || self.cfg.aqm.int_max_hops > 0 {
            self.slab.int.stack_mut(id).clear();
        }
        if self.slab.tags.on && matches!(self.cfg.switch.scheduler, crate::queues::sched::SchedulerConfig::Rank) {
            // the rank scheduler's default rank: the flow's bytes left before this packet, so
            // switches serve the shortest remaining flow first (BFC's SRF, App. E.2)
            let left = self.flows[f as usize].spec.size - pkt.seq;
            self.slab.tags.set(id, crate::packet::Tags { rank: left.min(u32::MAX as u64) as u32, ..Default::default() });
        }
        if self.flow_keys && self.slab.tags.on {
            // the seed simulator's flow-table key: its headers' source, port and packet count
            let s = &self.flows[f as usize].spec;
            let packets = s.size.div_ceil(self.cfg.host.mtu as u64).max(1);
            let key = crate::fc::bfc_ns3::flow_key(s.src, s.sport, packets);
            self.slab.tags.set(id, crate::packet::Tags { key, ..self.slab.tags.get(id) });
        }
        self.echo_ts(f, id);
        if self.slab.tags.on && self.hosts[h as usize].nic.stamps() {
            self.nic_stamp(h, id);
        }
        if self.ideal.is_some() {
            // Pulser's Ideal: the next packet waits for its booked queue-free path
            self.ideal_book_next(f, now);
        }
        id
    }

    /// Let the host's NIC module write the tags of a packet it sends.
    #[inline(never)]
    fn nic_stamp(&mut self, h: u32, id: PacketId) {
        let pkt = *self.slab.get(id);
        let mut m = crate::net::switch::meta(&pkt, self.slab.tags.get(id), 0);
        let before = (m.flags, m.tags);
        self.hosts[h as usize].nic.stamp(self.now, &mut m);
        if (m.flags, m.tags) != before {
            self.slab.get_mut(id).tag_flags = m.flags;
            self.slab.tags.set(id, m.tags);
        }
    }

    /// Queue a control packet (ACK, NACK, CNP) at NIC `h` (the flow's `ack_nic`); the caller
    /// counts it in the flow's `in_net` (it holds the flow already).
    pub(crate) fn host_send_control(&mut self, h: u32, pkt: Packet) -> PacketId {
        let id = self.slab.alloc(pkt);
        let p = self.hosts[h as usize].port;
        self.ports[p as usize].ctrl.push_back(id);
        self.kick(p);
        id
    }

    pub(crate) fn host_receive(&mut self, h: u32, id: PacketId) {
        let pkt = *self.slab.get(id);
        self.slab.free(id);
        // `id` stays readable after `free` until the next allocation: the INT records it holds are
        // read (ACK) or copied into the reply (data) before that. Each handler counts the packet
        // out of its flow's `in_net` where it first holds the flow (no second look-up), and frees
        // the flow's state if that was its last packet and both ends are done (`release_if_done`).
        match pkt.kind {
            PktKind::Data => self.receiver_data(h, id, &pkt),
            PktKind::Ack => self.sender_ack(pkt.flow, id, &pkt),
            PktKind::Nack => self.sender_nack(pkt.flow, id, &pkt),
            PktKind::Cnp => {
                let now = self.now;
                self.stats.counters.cnps += 1;
                let flow = &mut self.flows[pkt.flow as usize];
                flow.in_net = flow.in_net.wrapping_sub(1);
                flow.cc.on_cnp(now);
                self.arm_flow_timer(pkt.flow);
                // After `sender_finished` this still runs (the flow's state lives while its CNPs
                // are in flight): the controller sees the CNP, the timer stays off, and `nic_touch`
                // touches the NIC slot the flow last held. That slot is DEAD (a no-op) unless the
                // NIC compacted its slots since, when it may name another flow, which becomes a
                // candidate again if it was paced or dormant (its next pick re-checks it); kept as
                // it is so that results do not change.
                self.nic_touch(pkt.flow);
                if self.flows[pkt.flow as usize].in_net == 0 {
                    self.release_if_done(pkt.flow);
                }
            }
            PktKind::Ctrl | PktKind::Marker => unreachable!("control frames and markers never reach a host's receive path"),
        }
    }

    /// A packet of flow `f` carrying `payload` bytes was dropped (by a switch's buffer or a
    /// fault): charged to the flow, or, in a partition that holds no state of it (`start_flow`),
    /// to `Part::dropped`.
    #[cold]
    #[inline(never)]
    pub(crate) fn flow_dropped(&mut self, f: u32, payload: u64) {
        match self.flows.get_mut(f) {
            Some(flow) => {
                flow.dropped_bytes += payload;
                self.flow_packet_gone(f);
            }
            None => {
                let part = self.part.as_deref_mut().expect("a flow without state is a split run's");
                if payload > 0 {
                    *part.dropped.entry(f).or_default() += payload;
                }
                part.releases.foreign_drop(f, payload);
            }
        }
    }

    /// A packet of flow `f` was dropped on the way (rare: kept out of the forwarding path's code).
    #[cold]
    #[inline(never)]
    pub(crate) fn flow_packet_gone(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        flow.in_net = flow.in_net.wrapping_sub(1);
        if flow.in_net == 0 {
            self.release_if_done(f);
        }
    }

    /// Flow `f` has no packet left in the network (`in_net` is zero): if its sender is done and
    /// its receiver holds every byte, nothing can touch it again and its state is freed
    /// (`net::flow_store`). Called last by whatever handled the flow's last packet.
    #[inline(never)]
    pub(crate) fn release_if_done(&mut self, f: u32) {
        if self.part.is_some() {
            // a flow's packets are counted in the partition they are in: no one partition
            // knows that none is left, and the partitions free it together (`engine::release`)
            return;
        }
        let flow = &self.flows[f as usize];
        debug_assert_eq!(flow.in_net, 0);
        if flow.sender_done && flow.rcv_nxt == flow.spec.size {
            self.flows.release(f, self.now, &mut self.stats.flows);
        }
    }

    fn receiver_data(&mut self, h: u32, data_id: PacketId, pkt: &Packet) {
        // (a run's flows are all TCP or none: `start_flow`)
        if self.cfg.host.tcp.is_some() {
            return self.tcp_receiver_data(h, data_id, pkt);
        }
        let now = self.now;
        let hcfg = &self.cfg.host;
        let (ack_bytes, nack_iv, cnp_iv) = (hcfg.ack_bytes, hcfg.nack_interval, hcfg.cnp_interval);
        let (ack_min, cnp_packets) = (hcfg.ack_min, hcfg.cnp == crate::params::CnpMode::Packet);
        let cnp_clock = hcfg.cnp_timing == crate::params::CnpTiming::FlowClock;
        let (ack_every, mtu) = (hcfg.ack_every.max(1) as u64, hcfg.mtu.max(1) as u64);
        self.stats.counters.data_bytes_delivered += pkt.payload as u64;
        let rtt = self.rcv_rtt_sample(pkt.flow, data_id, pkt);
        let flow = &mut self.flows[pkt.flow as usize];
        // `record.latency` (stats::latency): first transmissions only
        if let Some(l) = self.rec.latency.as_deref_mut() {
            if pkt.tag_flags & tag::RETX == 0 {
                l.record(pkt.ts, now, flow.spec.incast, flow.spec.size);
            }
        }
        let (cnp, int, ack_h) = (flow.cnp, flow.int, flow.ack_nic);
        let in_order = pkt.seq == flow.rcv_nxt;
        let finishing = in_order && flow.rcv_nxt + pkt.payload as u64 == flow.spec.size;
        // receiver-side congestion control (ICTCP's window) runs on every data packet
        let host = &mut self.hosts[h as usize];
        let rx = RxPacket { now, wire: pkt.size, payload: pkt.payload, finishing, capacity: self.ports[host.port as usize].clock.rate, rtt };
        let adv = flow.cc.on_data_received(&mut host.rx, &rx).map_or(0, |w| w.min(u32::MAX as u64) as u32);
        let reply = Packet {
            prio: pkt.prio,
            flow: pkt.flow,
            src: pkt.dst,
            dst: pkt.src,
            hash: pkt.hash,
            size: (ack_bytes + flow.ack_extra).max(ack_min),
            ts: pkt.ts,
            marks: pkt.marks,
            ..Default::default()
        };
        let mut out: [Option<Packet>; 2] = [None, None];
        if in_order {
            flow.rcv_nxt += pkt.payload as u64;
            if flow.rcv_nxt == flow.spec.size && flow.finish.is_none() {
                flow.finish = Some(now);
            }
            // `transport.ack_every`: the packets received so far, the ACK after every Nth one
            // past the first N (the BFC simulator's milestones) and after the last
            let count = flow.rcv_nxt.div_ceil(mtu);
            if ack_every == 1 || finishing || (count > 1 && (count - 1) % ack_every == 0) {
                out[0] = Some(Packet { kind: PktKind::Ack, seq: flow.rcv_nxt, ..reply });
            }
        } else if pkt.seq > flow.rcv_nxt {
            self.stats.counters.out_of_order += 1;
            let due = match flow.last_nack {
                Some((s, t)) => s != flow.rcv_nxt || now >= t + nack_iv,
                None => true,
            };
            if due {
                flow.last_nack = Some((flow.rcv_nxt, now));
                out[0] = Some(Packet { kind: PktKind::Nack, seq: flow.rcv_nxt, ..reply });
                self.stats.counters.nacks += 1;
            }
        } else {
            out[0] = Some(Packet { kind: PktKind::Ack, seq: flow.rcv_nxt, ..reply });
        }
        // (with `transport.cnp = "ack_flag"` the ACK's ECN echo is the notification)
        if cnp_clock {
            // `transport.cnp_timing = "flow_clock"`: `last_cnp` holds the flow's next tick, set
            // at its first packet (which gets a CNP at once if it is marked, as in ns3-rdma)
            let due = match flow.last_cnp {
                None => {
                    flow.last_cnp = Some(now + cnp_iv);
                    pkt.ecn()
                }
                Some(tick) if pkt.ecn() && now >= tick => {
                    let iv = cnp_iv.0.max(1);
                    flow.last_cnp = Some(Time(tick.0 + iv * ((now.0 - tick.0) / iv + 1)));
                    true
                }
                Some(_) => false,
            };
            if cnp && cnp_packets && due {
                out[1] = Some(Packet { kind: PktKind::Cnp, size: ack_bytes, ..reply });
            }
        } else if cnp && cnp_packets && pkt.ecn() && flow.last_cnp.is_none_or(|t| now >= t + cnp_iv) {
            flow.last_cnp = Some(now);
            out[1] = Some(Packet { kind: PktKind::Cnp, size: ack_bytes, ..reply });
        }
        // this packet is gone, its replies are on their way
        // (wrapping: in a partition of a split run a flow's count is only its part, `engine`)
        let replies = out[0].is_some() as u32 + out[1].is_some() as u32;
        flow.in_net = flow.in_net.wrapping_sub(1).wrapping_add(replies);
        if replies == 0 && flow.in_net == 0 {
            // nothing answers it (a NACK not yet due) and nothing else of the flow is out
            return self.release_if_done(pkt.flow);
        }
        if let Some(p) = out[0] {
            let id = self.host_send_control(ack_h, p);
            if adv > 0 {
                // ICTCP's advertised window rides the ACK's own tag field
                self.slab.tags.set(id, crate::packet::Tags { rwnd: adv, ..Default::default() });
            }
            self.stamp_ack_ts(id);
            if int {
                self.slab.int.copy(data_id, id);
            }
        }
        if let Some(p) = out[1] {
            self.host_send_control(ack_h, p);
        }
    }

    fn sender_ack(&mut self, f: u32, id: PacketId, pkt: &Packet) {
        if self.cfg.host.tcp.is_some() {
            return self.tcp_sender_ack(f, id, pkt);
        }
        let now = self.now;
        let rto = self.cfg.host.rto;
        self.heard_ack_ts(f, id);
        let flow = &mut self.flows[f as usize];
        flow.in_net = flow.in_net.wrapping_sub(1);
        if flow.sender_done {
            // a late ACK (of a duplicate retransmission)
            if flow.in_net == 0 {
                self.release_if_done(f);
            }
            return;
        }
        let mut newly = 0;
        if pkt.seq > flow.snd_una {
            newly = pkt.seq - flow.snd_una;
            flow.snd_una = pkt.seq;
            if flow.snd_nxt < flow.snd_una {
                flow.snd_nxt = flow.snd_una;
            }
            flow.rto_at = if flow.snd_una < flow.snd_max { rto_deadline(now, rto) } else { None };
        }
        self.cnp_flag(f, pkt);
        let flow = &mut self.flows[f as usize];
        let int = if flow.int { self.slab.int.hops(id) } else { &[] };
        let rwnd = self.slab.tags.get(id).rwnd;
        let info = ack_info(now, pkt, newly, flow.snd_nxt, int, rwnd);
        flow.cc.on_ack(now, &info);
        self.after_ack(f);
    }

    /// `transport.cnp = "ack_flag"`: an ACK or NACK echoing an ECN mark is a CNP to the sender's
    /// congestion control, handled before the ACK's own feedback as the HPCC simulator's
    /// `ReceiveAck` does (it runs `cnp_received_mlx` before the mode's ACK handler).
    #[inline(always)]
    fn cnp_flag(&mut self, f: u32, pkt: &Packet) {
        if pkt.ecn() && self.cfg.host.cnp == crate::params::CnpMode::AckFlag && self.cfg.cc.transport_needs().cnp {
            self.stats.counters.cnps += 1;
            self.flows[f as usize].cc.on_cnp(self.now);
        }
    }

    /// After an ACK or NACK: finish the sender, or re-arm its timer and let it send.
    pub(crate) fn after_ack(&mut self, f: u32) {
        if self.cfg.host.repace_on_rate_change {
            self.flows[f as usize].repace(self.cfg.tx_time);
        }
        let flow = &self.flows[f as usize];
        if flow.snd_una >= flow.spec.size {
            self.sender_finished(f);
        } else {
            self.arm_flow_timer(f);
            self.kick_sender(f);
        }
    }

    fn sender_nack(&mut self, f: u32, id: PacketId, pkt: &Packet) {
        let now = self.now;
        let rto = self.cfg.host.rto;
        self.heard_ack_ts(f, id);
        let flow = &mut self.flows[f as usize];
        flow.in_net = flow.in_net.wrapping_sub(1);
        if flow.sender_done {
            if flow.in_net == 0 {
                self.release_if_done(f);
            }
            return;
        }
        let mut newly = 0;
        if pkt.seq > flow.snd_una {
            newly = pkt.seq - flow.snd_una;
            flow.snd_una = pkt.seq;
        }
        // go back N: resend from the receiver's expected byte
        flow.snd_nxt = flow.snd_una;
        flow.rto_at = rto_deadline(now, rto);
        let snd_max = flow.snd_max;
        self.cnp_flag(f, pkt);
        // the NACK echoes INT like an ACK (the HPCC simulator runs its CC on NACKs too)
        let int = if self.flows[f as usize].int { self.slab.int.hops(id) } else { &[] };
        let info = ack_info(now, pkt, newly, snd_max, int, self.slab.tags.get(id).rwnd);
        self.flows[f as usize].cc.on_nack(now, &info);
        self.after_ack(f);
    }

    /// The sender holds the last ACK (handled last by the ACK's or NACK's handler, which counted
    /// the packet out: the state is freed here if nothing else of the flow is out).
    fn sender_finished(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        let idle = flow.in_net == 0;
        flow.sender_done = true;
        flow.ack_finish = Some(self.now);
        flow.rto_at = None;
        flow.timer_at = None;
        flow.timer_gen = flow.timer_gen.wrapping_add(1);
        self.leave_nic(f);
        self.flows_done += 1;
        self.route_memo.release(f);
        if let Some(part) = self.part.as_deref_mut() {
            part.releases.sender_done(f);
        } else if idle {
            self.release_if_done(f);
        }
    }

    /// Something happened to flow `f` (an ACK, a NACK, its timer) that may let it send: its NIC
    /// looks at it again and the port looks for something to send.
    fn kick_sender(&mut self, f: u32) {
        let h = self.nic_touch(f);
        let p = self.hosts[h as usize].port;
        self.kick(p);
    }

    /// Make flow `f` a candidate of its NIC's scheduler again (`nic_sched`): every event that may
    /// give a flow window or data back calls this. Returns the flow's NIC.
    fn nic_touch(&mut self, f: u32) -> u32 {
        let flow = &self.flows[f as usize];
        self.hosts[flow.src_nic as usize].sched.touch(flow.nic_slot);
        flow.src_nic
    }

    /// Keep one pending timer per flow at the earlier of its controller's deadline and its RTO.
    /// A later deadline leaves the armed event in place; it fires early, finds nothing due, and
    /// re-arms, which is cheaper than re-pushing on every ACK.
    pub(crate) fn arm_flow_timer(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        if flow.sender_done {
            return;
        }
        let want = match (flow.cc.next_timer(), flow.rto_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = want {
            if flow.timer_at.is_none_or(|x| t < x) {
                flow.timer_gen = flow.timer_gen.wrapping_add(1);
                flow.timer_at = Some(t);
                self.sched.push(t.max(self.now), Event::FlowTimer { flow: f, gen: flow.timer_gen });
            }
        }
    }

    pub(crate) fn on_flow_timer(&mut self, f: u32, gen: u32) {
        let now = self.now;
        // the timer names the flow by id: a freed flow's stale timer finds no state (never the
        // reused slot's); a live flow's by its generation
        let Some(flow) = self.flows.get_mut(f) else { return };
        if flow.timer_gen != gen || flow.sender_done {
            return;
        }
        flow.timer_at = None;
        if flow.tcp.is_some() {
            self.tcp_on_timer(f);
            self.arm_flow_timer(f);
            self.kick_sender(f);
            return;
        }
        if flow.cc.next_timer().is_some_and(|t| t <= now) {
            flow.cc.on_timer(now);
            if self.cfg.host.repace_on_rate_change {
                flow.repace(self.cfg.tx_time);
            }
        }
        if flow.rto_at.is_some_and(|t| t <= now) {
            if flow.snd_una < flow.snd_max {
                flow.snd_nxt = flow.snd_una;
                flow.cc.on_timeout(now);
                self.stats.counters.timeouts += 1;
                flow.rto_at = rto_deadline(now, self.cfg.host.rto);
            } else {
                flow.rto_at = None;
            }
        }
        self.arm_flow_timer(f);
        self.kick_sender(f);
    }
}

/// When a retransmission timer set at `now` expires; `transport.rto = 0` turns it off.
#[inline]
fn rto_deadline(now: Time, rto: Time) -> Option<Time> {
    (rto.0 > 0).then(|| now + rto)
}

/// What an ACK or NACK tells the sender's congestion control (`snd_nxt` is the sender's next or
/// highest byte, `int` the echoed telemetry, empty outside HPCC runs).
fn ack_info<'a>(now: Time, pkt: &Packet, newly: u64, snd_nxt: u64, int: &'a [crate::packet::int::IntHop], rwnd: u32) -> AckInfo<'a> {
    AckInfo {
        ack_seq: pkt.seq,
        newly_acked: newly,
        ecn_echo: pkt.ecn(),
        ein_echo: pkt.ein(),
        rtt: now - pkt.ts,
        snd_nxt,
        adv_window: (rwnd > 0).then_some(rwnd as u64),
        int,
    }
}
