//! Control frames and flow-control actions: sending a frame of any kind, delivering it to the node
//! at the far end (switch or host), carrying out what modules ask for (frames, gates, kicks,
//! markers, packets joining another queue), and each switch's single module timer.
//!
//! Why link-level pauses are applied here and not by modules: a PFC frame pauses a priority of the
//! port it arrives on, and a queue-pause frame closes one queue of it, whatever scheme the receiver
//! runs — that is the link layer (IEEE 802.1Qbb; BFC §3.3's pause of upstreamQ). Credits and
//! destination or flow pauses mean something only to a scheme, so they go to its module (at a host:
//! the NIC obeys destination and flow pauses, as Floodgate's dstPause and FlowSail's FID pause
//! need).

use crate::event::Event;
use crate::fc::nic::NicFc;
use crate::fc::pause_end;
use crate::fc::{quanta_duration, FcAction, FlowControl};
use crate::ids::NodeRef;
use crate::net::switch::{collect_actions, view};
use crate::packet::ctrl::{CtrlMsg, Origin};
use crate::packet::{Packet, PacketId};
use crate::sim::Simulation;
use crate::time::Time;

impl Simulation {
    /// Node `node` sends `msg` out of its local port `local`, asked for by `by`.
    pub(crate) fn send_control(&mut self, node: u32, local: u16, msg: CtrlMsg, by: Origin) {
        let Some(p) = self.port_of(node, local) else { return };
        if self.faults.is_some() && self.port_is_down(p) {
            // the link is down: the frame is lost (`faults.rs`); it never leaves, so no log has it
            self.stats.counters.drops_link_down += 1;
            if let Some(f) = self.faults.as_mut() {
                f.port_drops[p as usize][crate::faults::Cause::LinkDown as usize] += 1;
            }
            return;
        }
        let now = self.now;
        let peer = self.ports[(p ^ 1) as usize].node;
        let port = &mut self.ports[p as usize];
        if let CtrlMsg::Pfc { prio, quanta } = msg {
            let pl = &mut self.stats.pauses;
            pl.time_ps.push(now.0);
            pl.node.push(node);
            pl.port.push(local);
            pl.prio.push(prio);
            pl.quanta.push(quanta);
            pl.duration_ps.push(quanta_duration(quanta, port.clock.rate).0);
            pl.mechanism.push(by.name().to_string());
            if quanta == 0 {
                self.stats.counters.resumes_sent += 1;
                port.cold.resume_frames += 1;
            } else {
                self.stats.counters.pauses_sent += 1;
                port.cold.pause_frames += 1;
            }
        } else if !matches!(msg, CtrlMsg::QueueBitmap { rides: true, .. }) {
            port.cold.other_ctrl_frames += 1;
        }
        let cl = &mut self.stats.control;
        let (target, value) = msg.log_fields();
        cl.time_ps.push(now.0);
        cl.node.push(node);
        cl.port.push(local);
        cl.peer_node.push(peer);
        cl.kind.push(msg.log_name().to_string());
        cl.target.push(target);
        cl.value.push(value);
        let prio = if let CtrlMsg::Pfc { prio, .. } = msg { prio } else { 0 };
        let frame = Packet { prio, size: msg.wire_bytes(&self.cfg.control), src: node, dst: peer, flow: u32::MAX, ..Default::default() };
        let id = self.slab.alloc_ctrl(frame, msg);
        self.ports[p as usize].ctrl.push_back(id);
        self.kick(p);
    }

    /// A control frame arrived on global port `p`: the link layer obeys pauses, then the node's
    /// module sees the frame.
    pub(crate) fn control_received(&mut self, p: u32, id: PacketId) {
        let msg = self.slab.ctrl(id);
        self.slab.free(id);
        let now = self.now;
        let node = self.ports[p as usize].node;
        if let CtrlMsg::Pfc { prio, quanta } = msg {
            let is_switch = matches!(self.node_ref[node as usize], NodeRef::Switch(_));
            self.stats.pfc_received.push(now, node, is_switch, self.ports[p as usize].local, prio, quanta > 0);
        }
        match self.owner_of_port(p) {
            NodeRef::Switch(s) => {
                let reopened = self.obey_link_pause(p, &msg);
                let sw = &mut self.switches[s as usize];
                let local = self.ports[p as usize].local;
                sw.fc.on_control(now, local, &msg, &view!(sw, &self.ports), &mut self.fc_out);
                collect_actions!(self, node);
                self.arm_fc_timer(s);
                if reopened {
                    self.kick(p);
                }
            }
            NodeRef::Host(h) => {
                // `h` is the NIC the frame reached: its pauses, gates and module
                let obeys = self.hosts[h as usize].nic.obeys(msg.kind());
                let mut reopened = false;
                let mut kick = p;
                if obeys {
                    if !matches!(msg, CtrlMsg::Pfc { .. }) {
                        let host = &mut self.hosts[h as usize];
                        host.pauses_seen = true;
                        host.pause_epoch = host.pause_epoch.wrapping_add(1);
                    }
                    reopened = match msg {
                        CtrlMsg::Pfc { .. } | CtrlMsg::QueuePause { .. } | CtrlMsg::QueueBitmap { .. } => self.obey_link_pause(p, &msg),
                        CtrlMsg::DstPause { dst, .. } => {
                            let until = pause_end(now, &msg, self.ports[p as usize].clock.rate);
                            self.hosts[h as usize].pause_dst(dst, until, now);
                            until <= now
                        }
                        // (a flow whose fixed data went with its chunk, every flow of which was
                        // freed, is this host's: without link faults, which keep every flow's
                        // data, a pause comes back by the link the flow's packets left by)
                        CtrlMsg::FlowPause { flow, .. } if (flow as usize) < self.flows.len() && self.flows.fixed_get(flow).is_none_or(|f| f.spec.src == node) => {
                            let until = pause_end(now, &msg, self.ports[p as usize].clock.rate);
                            // a pause names a flow whose packet reached a switch, so it has
                            // started; if its state was freed since, the pause holds nothing
                            // but the NIC still looks again, as it did when every flow kept its state
                            debug_assert!(self.flows.started(flow), "a flow pause for flow {flow}, which has not started");
                            if let Some(f) = self.flows.get_mut(flow) {
                                f.paused_until = until;
                            }
                            // the flow's own NIC looks again (on a multi-NIC host, maybe not `p`'s,
                            // after a link fault moved the flow): `p`'s, by the same argument,
                            // where the flow's data is gone
                            kick = match self.flows.fixed_get(flow) {
                                Some(_) => self.hosts[self.flows.src_nic(flow) as usize].port,
                                None => p,
                            };
                            until <= now
                        }
                        _ => false,
                    };
                }
                self.hosts[h as usize].nic.on_control(now, &msg, &mut self.fc_out);
                collect_actions!(self, node);
                if reopened {
                    self.kick(kick);
                }
            }
        }
        self.apply_actions();
    }

    /// Apply a PFC or queue-pause frame to the port it arrived on; whether it reopened something.
    fn obey_link_pause(&mut self, p: u32, msg: &CtrlMsg) -> bool {
        let now = self.now;
        let port = &mut self.ports[p as usize];
        let until = match *msg {
            // `flow_control.pfc.until_resume`: every PFC pause holds until its resume frame
            CtrlMsg::Pfc { quanta, .. } if quanta > 0 && self.cfg.pfc.until_resume => Time::MAX,
            _ => pause_end(now, msg, port.clock.rate),
        };
        match *msg {
            CtrlMsg::Pfc { prio, .. } => port.apply_pause(prio as usize, now, until),
            CtrlMsg::QueuePause { queue, .. } if (queue as usize) < port.ngates() => port.set_gate(queue as usize, now, until),
            CtrlMsg::QueueBitmap { base, bits, .. } => {
                let mut reopened = false;
                for i in 0..64usize {
                    let q = base as usize + i;
                    if q >= port.ngates() {
                        break;
                    }
                    let close = bits & (1 << i) != 0;
                    if close != port.gate_closed(q, now) {
                        port.set_gate(q, now, if close { Time::MAX } else { now });
                        reopened |= !close;
                    }
                }
                return reopened;
            }
            _ => return false,
        }
        until <= now
    }

    /// Carry out queued flow-control actions (they may queue more). Usually there are none, so
    /// the check is inlined and the work kept out of line.
    #[inline]
    pub(crate) fn apply_actions(&mut self) {
        if !self.acts.is_empty() {
            self.apply_actions_now();
        }
    }

    /// The gates a batch opens or closes all take effect before any port it kicks picks a
    /// packet, and what a kicked port's hooks ask (a module closing the gates its window no
    /// longer allows) takes effect before the next port is kicked: otherwise a credit that opens
    /// a destination's VOQs on several ports for one packet of window lets each port send one.
    #[inline(never)]
    fn apply_actions_now(&mut self) {
        while !self.acts.is_empty() {
            let batch = std::mem::take(&mut self.acts);
            let mut kicks: Vec<u32> = Vec::new();
            for (node, a) in batch {
                match a {
                    FcAction::Send { port, msg, by } => self.send_control(node, port, msg, by),
                    FcAction::Gate { port, queue, until } => {
                        if let Some(p) = self.port_of(node, port) {
                            let now = self.now;
                            let pt = &mut self.ports[p as usize];
                            if (queue as usize) < pt.ngates() {
                                pt.set_gate(queue as usize, now, until);
                                if let NodeRef::Host(h) = self.owner_of_port(p) {
                                    let host = &mut self.hosts[h as usize];
                                    host.pauses_seen = true;
                                    host.pause_epoch = host.pause_epoch.wrapping_add(1);
                                }
                                if until <= now && !kicks.contains(&p) {
                                    kicks.push(p);
                                }
                            }
                        }
                    }
                    FcAction::Kick { port } => {
                        if let Some(p) = self.port_of(node, port) {
                            if !kicks.contains(&p) {
                                kicks.push(p);
                            }
                        }
                    }
                    FcAction::Markers { port, hold, release } => {
                        if let Some(p) = self.port_of(node, port) {
                            let pt = &mut self.ports[p as usize];
                            let n = pt.nqueues();
                            if (hold as usize) < n && (release as usize) < n {
                                pt.insert_markers(hold as usize, release as usize, &mut self.slab);
                                self.kick(p);
                            }
                        }
                    }
                    FcAction::Join { port, from, to } => {
                        if let (Some(p), Some(NodeRef::Switch(s))) = (self.port_of(node, port), self.node_ref.get(node as usize).copied()) {
                            let pt = &mut self.ports[p as usize];
                            let n = pt.nqueues();
                            if (from as usize) < n && (to as usize) < n {
                                if let Some(id) = pt.move_head(from as usize, to as usize, &mut self.slab) {
                                    let size = self.slab.get(id).size;
                                    self.switches[s as usize].mmu.move_egress(port as usize, from as usize, to as usize, size);
                                    if !kicks.contains(&p) {
                                        kicks.push(p);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            for p in kicks {
                self.kick(p);
                // a port that sent applied its hooks' actions itself; one that did not leaves none
                self.apply_actions();
            }
        }
    }

    /// Make sure switch `s` has its flow-control timer armed at the module's next deadline.
    /// Called after every hook, so the check is inlined and the arming kept out of line.
    #[inline(always)]
    pub(crate) fn arm_fc_timer(&mut self, s: u32) {
        let sw = &self.switches[s as usize];
        // twice per hop: PFC alone, the common case, skips the dispatch over every module kind
        let next = match &sw.fc {
            crate::fc::AnyFc::Pfc(p) => p.next_timer(),
            fc => fc.next_timer(),
        };
        if let Some(t) = next {
            if sw.fc_at.is_none_or(|x| t < x) {
                self.arm_fc_timer_at(s, t);
            }
        }
    }

    #[inline(never)]
    fn arm_fc_timer_at(&mut self, s: u32, t: crate::time::Time) {
        let sw = &mut self.switches[s as usize];
        sw.fc_gen = sw.fc_gen.wrapping_add(1);
        sw.fc_at = Some(t);
        self.sched.push(t.max(self.now), Event::FcTimer { sw: s, gen: sw.fc_gen });
    }

    pub(crate) fn on_fc_timer(&mut self, s: u32, gen: u32) {
        let sw = &mut self.switches[s as usize];
        if sw.fc_gen != gen {
            return;
        }
        sw.fc_at = None;
        if sw.fc.next_timer().is_some_and(|t| t <= self.now) {
            let node = sw.node;
            sw.fc.on_timer(self.now, &view!(sw, &self.ports), &mut self.fc_out);
            collect_actions!(self, node);
        }
        self.arm_fc_timer(s);
        self.apply_actions();
    }
}
