//! Faults in the simulated network (a scenario's `[faults]`, [`FaultsConfig`]): random packet
//! loss on links, and links that go down and come back up at given times. Floodgate's loss
//! experiments (§6, Fig. 12) and the HPCC simulator's ERROR_RATE_PER_LINK and LINK_DOWN need them.
//!
//! Loss. Each direction of a lossy link loses every packet that crosses it, of any kind (data,
//! ACK, NACK, CNP, control frames), independently with the link's probability, decided when the
//! packet reaches the far end: the HPCC simulator's receive error model in packet units
//! (`RateErrorModel`, `ERROR_UNIT_PACKET`, checked first thing in `QbbNetDevice::Receive`). A
//! corrupted frame is lost whatever it carries, so PFC frames and credits are lost too; a lost
//! PFC resume under `flow_control.pfc.until_resume` holds its priority until the watchdog ends the
//! run, as it would in that simulator. The draws of each direction come from a stream of their
//! own ([`crate::rng::stream::LOSS`], indexed by the sending port), so making one more link lossy
//! changes no other link's losses. A link's rate is `faults.link_loss`'s for it, else the rate an
//! HPCC topology file gives it (its fifth column, as that simulator reads it), else
//! `faults.loss_rate`.
//!
//! Link down. Both ends lose at once what the link held: the packets queued at both of its ports
//! (control and data queues, their buffer released as if they had left, so the switch's
//! flow-control module sees them go and resumes what they held paused) and those on its wire
//! (dropped as they arrive). Pauses and gates on both ports are lifted and the modules forget the
//! neighbour (`FlowControl::on_link_down`), so no PFC state of a dead port blocks anything; frames
//! sent to a dead port are dropped. Routes are computed again over the links that are up (the
//! HPCC simulator's `TakeDownLink` recomputes every route the same way): ECMP leaves the dead link
//! out, a packet reaching a switch with no route left to its destination is dropped as
//! unreachable, and flows repair their losses by their own means (NACKs, retransmission timeouts);
//! a flow that can no longer finish is ended by the watchdog. A dead port sends nothing: it is
//! kept busy until `Time::MAX`, so the packet path needs no check of its own for it.
//!
//! Link up. The ports serve again, routes are computed over the links that are up, and both ends
//! look for something to send.
//!
//! Counting. Every dropped packet is counted by cause (`drops_loss`, `drops_link_down`,
//! `drops_unreachable` in the counters and per port), and a dropped data packet's payload goes to
//! `data_bytes_dropped` and its flow's `dropped_bytes` like a buffer drop's, so bytes sent =
//! delivered + dropped still holds for a run whose flows all finish. Per port: losses count at the
//! port whose wire lost the packet, link-down drops at the port whose queue or wire held it,
//! unreachable drops at the switch port the packet arrived by.
//!
//! Split over threads (`crate::engine`): every partition applies each link event at its time
//! and computes the routes again (each holds the whole topology); the partitions owning the
//! link's ends empty its queues, tell their modules and, when it comes back, serve its ports. A
//! cut wire's far end keeps its ring, so the packets on it at the failure are counted where they
//! arrive; those sent in the window being run are still messages in the sender's partition,
//! which marks them (`Msg::doomed`) and the far side adds them to the count as they come in,
//! after the ring's (the wire is FIFO). One thread's count of the whole wire is thus the same.
//!
//! Cost when off: `Simulation::faults` is `None`; the wire's arrival path tests it once, and a
//! switch tests its route lookup for [`NO_ROUTE`], which only a failure can produce.
//!
//! Interpretation choices: a link named by its two end nodes means every parallel link between
//! them; events at the same time apply in the order listed; a link already down (or up) ignores a
//! second down (or up).

use crate::event::Event;
use crate::fc::FlowControl;
use crate::ids::NodeRef;
use crate::net::switch::{collect_actions, meta, view};
use crate::packet::{PacketId, PktKind};
use crate::params::{FaultsConfig, LinkState};
use crate::rng::{stream, Rng};
use crate::sim::Simulation;
use crate::stats::record::EV_DROP;
use crate::time::Time;
use crate::topo::{Routes, Topology};
use std::collections::HashMap;

/// Why a packet was dropped by a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    Loss = 0,
    LinkDown = 1,
    Unreachable = 2,
}

/// The fault state of a run (only runs with faults have one).
pub(crate) struct Faults {
    /// Loss probability of each port's direction of its link (0: lossless).
    loss: Vec<f64>,
    /// The loss stream of each port (drawn only where `loss > 0`).
    rng: Vec<Rng>,
    /// Packets on each port's wire when its link last went down: that many next arrivals are
    /// dropped (the wire is FIFO, so they are exactly those).
    doomed: Vec<u32>,
    /// Whether each link is down.
    pub(crate) down: Vec<bool>,
    /// Link events in time order: time, the links, what happens to them.
    events: Vec<(Time, Vec<u32>, LinkState)>,
    next: usize,
    /// The network, to compute routes again, and the order routes list next hops in.
    topo: Topology,
    hop_order: crate::topo::routes::HopOrder,
    /// Drops per port by [`Cause`].
    pub(crate) port_drops: Vec<[u64; 3]>,
}

impl Faults {
    /// The fault state of `cfg` on `topo` (`None` when no fault is configured). Errors name the
    /// field and what is allowed.
    pub(crate) fn build(cfg: &FaultsConfig, topo: &Topology, seed: u64, hop_order: crate::topo::routes::HopOrder) -> Result<Option<Faults>, String> {
        if cfg.is_off() {
            return Ok(None);
        }
        let rate_ok = |r: f64| r.is_finite() && (0.0..=1.0).contains(&r);
        if !rate_ok(cfg.loss_rate) {
            return Err(format!("faults.loss_rate: {} is not a probability; allowed: 0 to 1 (0% to 100%)", cfg.loss_rate));
        }
        let mut by_pair: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
        for (l, s) in topo.links.iter().enumerate() {
            by_pair.entry((s.a.min(s.b), s.a.max(s.b))).or_default().push(l as u32);
        }
        let links_of = |field: String, (a, b): (u32, u32)| -> Result<Vec<u32>, String> {
            by_pair.get(&(a.min(b), a.max(b))).cloned().ok_or_else(|| {
                let n = topo.nodes.len();
                if a as usize >= n || b as usize >= n {
                    format!("{field}: [{a}, {b}] names a node that does not exist; node ids are 0 to {}", n.saturating_sub(1))
                } else {
                    format!("{field}: no link joins nodes {a} and {b}")
                }
            })
        };
        let nports = topo.links.len() * 2;
        let mut loss = vec![cfg.loss_rate; nports];
        for ll in &cfg.file_loss {
            // checked by the file's reader: a probability, of a link the file lists
            for l in by_pair.get(&(ll.link.0.min(ll.link.1), ll.link.0.max(ll.link.1))).into_iter().flatten() {
                loss[2 * *l as usize] = ll.rate;
                loss[2 * *l as usize + 1] = ll.rate;
            }
        }
        for (i, ll) in cfg.link_loss.iter().enumerate() {
            if !rate_ok(ll.rate) {
                return Err(format!("faults.link_loss[{i}].rate: {} is not a probability; allowed: 0 to 1 (0% to 100%)", ll.rate));
            }
            for l in links_of(format!("faults.link_loss[{i}].link"), ll.link)? {
                loss[2 * l as usize] = ll.rate;
                loss[2 * l as usize + 1] = ll.rate;
            }
        }
        let mut events = Vec::with_capacity(cfg.link_events.len());
        for (i, e) in cfg.link_events.iter().enumerate() {
            if e.at == Time::MAX {
                return Err(format!("faults.link_events[{i}].at: {} is beyond the end of simulated time", e.at));
            }
            events.push((e.at, links_of(format!("faults.link_events[{i}].link"), e.link)?, e.state));
        }
        // stable: events at the same time keep the order they are listed in
        events.sort_by_key(|e| e.0);
        Ok(Some(Faults {
            rng: (0..nports as u64).map(|p| Rng::stream(seed, stream::LOSS, p)).collect(),
            loss,
            doomed: vec![0; nports],
            down: vec![false; topo.links.len()],
            events,
            next: 0,
            topo: topo.clone(),
            hop_order,
            port_drops: vec![[0; 3]; nports],
        }))
    }

    /// When the first link event happens, if any.
    pub(crate) fn first_event(&self) -> Option<Time> {
        self.events.first().map(|e| e.0)
    }

    /// When the next link event not yet applied happens, if any.
    pub(crate) fn next_event(&self) -> Option<Time> {
        self.events.get(self.next).map(|e| e.0)
    }

    /// Whether the link of port `p` is down.
    #[inline]
    pub(crate) fn port_down(&self, p: u32) -> bool {
        self.down[(p / 2) as usize]
    }

    fn routes(&self) -> Routes {
        Routes::build_without(&self.topo, self.hop_order, &self.down)
    }
}

impl Simulation {
    /// A packet came off port `p`'s wire: whether a fault drops it (it was on the wire when the
    /// link went down, or the link loses it). Called only in runs with faults.
    #[cold]
    #[inline(never)]
    pub(crate) fn fault_arrival(&mut self, p: u32, id: PacketId) -> bool {
        let f = self.faults.as_mut().expect("a run with faults");
        let pi = p as usize;
        let cause = if f.doomed[pi] > 0 {
            f.doomed[pi] -= 1;
            Cause::LinkDown
        } else if f.loss[pi] > 0.0 && f.rng[pi].uniform() < f.loss[pi] {
            Cause::Loss
        } else {
            return false;
        };
        self.fault_drop(id, cause, p);
        true
    }

    /// Count packet `id` dropped for `cause` at port `p` and free it.
    pub(crate) fn fault_drop(&mut self, id: PacketId, cause: Cause, p: u32) {
        let pkt = *self.slab.get(id);
        let c = &mut self.stats.counters;
        match cause {
            Cause::Loss => c.drops_loss += 1,
            Cause::LinkDown => c.drops_link_down += 1,
            Cause::Unreachable => c.drops_unreachable += 1,
        }
        let payload = if pkt.kind == PktKind::Data { pkt.payload as u64 } else { 0 };
        c.data_bytes_dropped += payload;
        if let Some(f) = self.faults.as_mut() {
            f.port_drops[p as usize][cause as usize] += 1;
        }
        self.slab.free(id);
        if pkt.kind.of_flow() {
            self.flow_dropped(pkt.flow, payload);
        }
    }

    /// A packet reached switch port `inp` for a destination the switch has no route to (a link
    /// failure cut it off): dropped and counted.
    #[cold]
    #[inline(never)]
    pub(crate) fn drop_unreachable(&mut self, inp: u32, id: PacketId) {
        self.fault_drop(id, Cause::Unreachable, inp);
    }

    /// Whether global port `p` belongs to a link that is down.
    #[inline]
    pub(crate) fn port_is_down(&self, p: u32) -> bool {
        self.faults.as_ref().is_some_and(|f| f.port_down(p))
    }

    /// Apply every link event due now and schedule the next.
    pub(crate) fn on_fault(&mut self) {
        loop {
            let f = self.faults.as_mut().expect("a run with faults");
            let Some((t, links, state)) = f.events.get(f.next).cloned() else { break };
            if t > self.now {
                self.sched.push(t, Event::Fault);
                break;
            }
            f.next += 1;
            let mut changed = vec![];
            for l in links {
                let done = match state {
                    LinkState::Down => self.link_down(l),
                    LinkState::Up => self.link_up(l),
                };
                if done {
                    changed.push(l);
                }
            }
            if !changed.is_empty() {
                let f = self.faults.as_ref().expect("a run with faults");
                self.routes = f.routes();
                self.route_memo.clear();
                self.rebind_nics();
                if state == LinkState::Up {
                    // both ends look for something to send, over the new routes (each where it runs)
                    for p in changed.into_iter().flat_map(|l| [2 * l, 2 * l + 1]) {
                        if self.owns(self.ports[p as usize].node) {
                            self.kick(p);
                        }
                    }
                }
            }
        }
        self.apply_actions();
    }

    /// Take link `l` down (see the module doc); false if it was down already. Routes are the
    /// caller's to compute again.
    fn link_down(&mut self, l: u32) -> bool {
        let now = self.now;
        let f = self.faults.as_mut().expect("a run with faults");
        if f.down[l as usize] {
            return false;
        }
        f.down[l as usize] = true;
        for p in [2 * l, 2 * l + 1] {
            self.flush_port(p);
            let wire = self.ports[p as usize].wire.len() as u32;
            self.faults.as_mut().expect("a run with faults").doomed[p as usize] = wire;
            // a cut wire's packets sent in this window are still messages here: they are
            // doomed too, after those the far side's ring holds (`doomed_across`)
            if let Some(part) = self.part.as_deref_mut().filter(|x| x.cut[p as usize]) {
                for m in part.out.iter_mut().flat_map(|b| b.msgs.iter_mut()).filter(|m| m.port == p) {
                    m.doomed = true;
                }
            }
        }
        for p in [2 * l, 2 * l + 1] {
            let port = &mut self.ports[p as usize];
            port.open_all(now);
            // dead: busy for ever, so `kick` never serves it and no event of its own is live
            port.busy_until = Time::MAX;
            port.pending = Some(Time::MAX);
            port.gen = port.gen.wrapping_add(1);
        }
        for p in [2 * l, 2 * l + 1] {
            let node = self.ports[p as usize].node;
            if !self.owns(node) {
                continue; // (its module runs in the partition that owns it)
            }
            if let NodeRef::Switch(s) = self.node_ref[node as usize] {
                let local = self.ports[p as usize].local;
                let sw = &mut self.switches[s as usize];
                sw.fc.on_link_down(now, local, &view!(sw, &self.ports), &mut self.fc_out);
                collect_actions!(self, node);
                self.arm_fc_timer(s);
            }
        }
        true
    }

    /// Drop everything queued at port `p` (its link went down): a switch's data packets leave
    /// the buffer as if sent, and its flow-control module sees them go.
    fn flush_port(&mut self, p: u32) {
        if !self.owns(self.ports[p as usize].node) {
            return; // (nothing waits at a port of a node another partition runs)
        }
        let now = self.now;
        let drained = self.ports[p as usize].drain_all();
        let node = self.ports[p as usize].node;
        let local = self.ports[p as usize].local;
        for (q, id) in drained {
            let pkt = *self.slab.get(id);
            if pkt.kind == PktKind::Marker {
                self.slab.free(id);
                continue;
            }
            if let (Some(q), NodeRef::Switch(s)) = (q, self.node_ref[node as usize]) {
                let sw = &mut self.switches[s as usize];
                sw.mmu.release(pkt.ingress as usize, pkt.prio as usize, local as usize, q, pkt.size, pkt.charge);
                let m = meta(&pkt, self.slab.tags.get(id), local);
                sw.fc.on_dequeue(now, &m, &view!(sw, &self.ports), &mut self.fc_out);
                collect_actions!(self, node);
                if self.rec.wants(self.now) {
                    self.record_packet(s, p, q, id, EV_DROP, false);
                }
                self.arm_fc_timer(s);
            }
            self.fault_drop(id, Cause::LinkDown, p);
        }
    }

    /// A message across a cut link that was on its wire when the link went down (`link_down`
    /// marked it in the sending partition): the next arrival on port `p`'s wire after those
    /// already counted, as one thread's count of the whole wire has it (the wire is FIFO and the
    /// messages of a window arrive after every packet already on this side's ring).
    pub(crate) fn doomed_across(&mut self, p: u32) {
        self.faults.as_mut().expect("a run with link events").doomed[p as usize] += 1;
    }

    /// Bring link `l` back up; false if it was up already. Routes and the kick of both ends are
    /// the caller's.
    fn link_up(&mut self, l: u32) -> bool {
        let now = self.now;
        let f = self.faults.as_mut().expect("a run with faults");
        if !f.down[l as usize] {
            return false;
        }
        f.down[l as usize] = false;
        for p in [2 * l, 2 * l + 1] {
            let port = &mut self.ports[p as usize];
            port.busy_until = now;
            port.pending = None;
            port.gen = port.gen.wrapping_add(1);
        }
        true
    }
}
