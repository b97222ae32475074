//! The link layer: a port's service (serialise the next packet, put it on the wire) and a wire's
//! delivery at the far end. See `queues::port` for why each port keeps at most one pending service
//! event and one wire event.

use crate::event::Event;
use crate::fc::CtrlKind;
use crate::ids::NodeRef;
use crate::packet::PktKind;
use crate::sim::Simulation;

impl Simulation {
    /// Something was queued at port `p`: serve it now if the port is free, or make sure it is
    /// served when its current serialisation ends.
    #[inline]
    pub(crate) fn kick(&mut self, p: u32) {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        if port.busy_until <= now {
            if port.pending.is_none_or(|t| t > now) {
                self.port_service(p);
            }
        } else if port.pending.is_none_or(|t| t > port.busy_until) {
            port.gen = port.gen.wrapping_add(1);
            port.pending = Some(port.busy_until);
            self.sched.push(port.busy_until, Event::PortTx { port: p, gen: port.gen });
        }
    }

    /// Pick the next packet of a free port and start serialising it (it goes onto the wire at
    /// once, stamped with its arrival time), or arrange a wake-up for pacing or pause expiry.
    pub(crate) fn port_service(&mut self, p: u32) {
        let pi = p as usize;
        // a host port's owner is its NIC (`net::nic_choice`)
        let node = self.owner_of_port(p);
        let next = match self.ports[pi].ctrl.front() {
            Some(&id) if !self.nic_acks_pausable || self.ctrl_may_leave(pi, id) => self.ports[pi].ctrl.pop_front(),
            _ => match node {
                NodeRef::Switch(s) => self.switch_dequeue(s, p),
                NodeRef::Host(h) => self.host_next_packet(h),
            },
        };
        let now = self.now;
        let port = &mut self.ports[pi];
        port.gen = port.gen.wrapping_add(1);
        port.pending = None;
        match next {
            Some(id) => {
                let pkt = self.slab.get(id);
                let end = now + port.clock.tx_time(pkt.size);
                port.busy_until = end;
                port.tx_bytes += pkt.size as u64;
                let c = &mut self.stats.counters;
                // a part of a bitmap riding another's frame (no bytes) is not a packet of its own
                c.packets_sent += (pkt.size != 0) as u64;
                match pkt.kind {
                    PktKind::Data => port.tx_data_bytes += pkt.size as u64,
                    k => {
                        port.ctrl_bytes += pkt.size as u64;
                        let b = pkt.size as u64;
                        match k {
                            PktKind::Ack => c.ack_bytes += b,
                            PktKind::Nack => c.nack_bytes += b,
                            PktKind::Cnp => c.cnp_bytes += b,
                            PktKind::Ctrl => match self.slab.ctrl(id).kind() {
                                CtrlKind::Pfc => c.pfc_bytes += b,
                                CtrlKind::QueuePause => c.queue_pause_bytes += b,
                                CtrlKind::Credit => c.credit_bytes += b,
                                CtrlKind::DstPause => c.dst_pause_bytes += b,
                                CtrlKind::FlowPause => c.flow_pause_bytes += b,
                                CtrlKind::Other => c.other_ctrl_bytes += b,
                            },
                            PktKind::Data | PktKind::Marker => unreachable!("not a control packet"),
                        }
                    }
                }
                let arrive = end + port.delay;
                let more = port.has_backlog();
                if self.part.as_deref().is_some_and(|x| x.cut[pi]) {
                    // the far end is another partition's: the wire's ring is there
                    self.send_across(p, arrive, id);
                } else {
                    if port.wire.is_empty() {
                        self.sched.push(arrive, Event::Wire { port: p, pkt: id });
                    }
                    port.wire.push_back((arrive, id));
                }
                let more = more || matches!(node, NodeRef::Host(h) if !self.hosts[h as usize].sched.is_empty());
                if more {
                    let port = &mut self.ports[pi];
                    port.pending = Some(end);
                    self.sched.push(end, Event::PortTx { port: p, gen: port.gen });
                }
            }
            None => {
                let mut wake = match node {
                    NodeRef::Switch(_) => port.next_unpause(now),
                    NodeRef::Host(h) => self.host_wake_time(h),
                };
                if let Some(&id) = self.ports[pi].ctrl.front() {
                    // an ACK held by its paused priority (`transport.ack_priority = "data"`)
                    let until = self.ports[pi].cold.prio_pause[self.slab.get(id).prio as usize].until;
                    if until != crate::time::Time::MAX {
                        wake = Some(wake.map_or(until, |w| w.min(until)).max(now));
                    }
                }
                let port = &mut self.ports[pi];
                port.pending = wake;
                if let Some(w) = wake {
                    self.sched.push(w, Event::PortTx { port: p, gen: port.gen });
                }
            }
        }
        self.apply_actions();
    }

    /// Whether the control packet at the head of port `pi`'s control queue may leave now: an ACK
    /// or NACK of a host under `transport.ack_priority = "data"` and `ack_pause_at_nic` waits
    /// while its priority is paused (the HPCC simulator's NIC checks `paused[ack_q_idx]` before
    /// its ACK queue).
    fn ctrl_may_leave(&self, pi: usize, id: crate::packet::PacketId) -> bool {
        let pkt = self.slab.get(id);
        !(matches!(pkt.kind, PktKind::Ack | PktKind::Nack) && self.ports[pi].is_paused(pkt.prio as usize, self.now))
    }

    pub(crate) fn on_port_tx(&mut self, p: u32, gen: u32) {
        let port = &mut self.ports[p as usize];
        if port.gen != gen {
            return;
        }
        port.pending = None;
        if port.busy_until <= self.now {
            self.port_service(p);
        }
    }

    pub(crate) fn on_wire(&mut self, p: u32) {
        let port = &mut self.ports[p as usize];
        let (_, id) = port.wire.pop_front().expect("wire event without a packet");
        if let Some(&(t, next)) = port.wire.front() {
            self.sched.push(t, Event::Wire { port: p, pkt: next });
        }
        if self.faults.is_some() && self.fault_arrival(p, id) {
            return; // lost on the way, or the link went down under it (`faults.rs`)
        }
        let peer = p ^ 1;
        if self.slab.get(id).kind == PktKind::Ctrl {
            self.control_received(peer, id);
            return;
        }
        match self.owner_of_port(peer) {
            NodeRef::Switch(s) => self.switch_receive(s, peer, id),
            NodeRef::Host(h) => self.host_receive(h, id),
        }
    }
}
