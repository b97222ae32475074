//! The engine's half of the HPCC simulator's recorders (`crate::stats::record`): setting them up
//! against the network, feeding them a switch's packet events, and closing them at the end.

use crate::ids::NodeRef;
use crate::packet::PacketId;
use crate::sim::Simulation;
use crate::stats::StopReason;
use crate::stats::record::{QlenMon, Tracer, EV_DEQUEUE, EV_DROP, EV_ECN, EV_ENQUEUE};
use crate::time::Time;

impl Simulation {
    /// Check the recorders' settings against the network and set them up (at assembly).
    pub(crate) fn init_recorders(&mut self) -> Result<(), String> {
        let rec = &self.cfg.record;
        if let Some(c) = &rec.qlen_monitor {
            for (name, v) in [("interval", c.interval), ("dump_interval", c.dump_interval)] {
                if v == Time::ZERO {
                    return Err(format!("record.qlen_monitor.{name}: must be positive; allowed: a time above 0"));
                }
            }
            let mut order = vec![];
            for sw in &self.switches {
                for (local, &p) in sw.info.ports.iter().enumerate() {
                    order.push((p, sw.node, local as u16));
                }
            }
            self.rec.qlen = Some(QlenMon::new(c, self.ports.len(), order));
        }
        if let Some(t) = &rec.trace {
            let mut flows = vec![false; self.flows.len()];
            for &f in &t.flows {
                match flows.get_mut(f as usize) {
                    Some(x) => *x = true,
                    None if self.flows.is_empty() => return Err(format!("record.trace.flows: flow {f} does not exist (no flows)")),
                    None => return Err(format!("record.trace.flows: flow {f} does not exist; allowed: 0 to {}", self.flows.len() - 1)),
                }
            }
            let mut ports = vec![false; self.ports.len()];
            for &(node, local) in &t.ports {
                ports[self.switch_port("record.trace.ports", node, local)? as usize] = true;
            }
            self.rec.trace = Some(Tracer::new(flows, ports));
        }
        if let Some(c) = &rec.latency {
            c.check()?;
            self.rec.latency = Some(Box::new(crate::stats::latency::LatencyRec::new(c)));
        }
        let per_hop = self.rec.latency.as_ref().is_some_and(|l| l.per_hop());
        if per_hop {
            // the hosts some incast-tagged flow goes to (the per-hop classes' third tag)
            self.rec.incast_dst = self.flow_facts.incast_dst.clone();
        }
        self.rec.until = if self.rec.trace.is_some() || per_hop {
            u64::MAX
        } else {
            self.rec.qlen.as_ref().map_or(0, |m| m.last().saturating_add(1))
        };
        Ok(())
    }

    /// Global id of local port `local` of switch `node`, or an error naming `field`.
    pub(crate) fn switch_port(&self, field: &str, node: u32, local: u16) -> Result<u32, String> {
        let what = match self.node_ref.get(node as usize) {
            None => format!("node {node} does not exist (nodes 0 to {})", self.node_ref.len().saturating_sub(1)),
            Some(NodeRef::Host(_)) => format!("node {node} is a host; allowed: switch nodes"),
            Some(NodeRef::Switch(s)) => match self.port_of(node, local) {
                Some(p) => return Ok(p),
                None => format!("switch {node} has no port {local}; allowed: 0 to {}", self.switches[*s as usize].info.ports.len() - 1),
            },
        };
        Err(format!("{field}: [{node}, {local}]: {what}"))
    }

    /// A data packet was queued (`EV_ENQUEUE`), sent (`EV_DEQUEUE`, `marked` if RED marked it
    /// then) or dropped (`EV_DROP`) at switch `s`'s global port `p`, queue `q`. Called only while
    /// a recorder is on. The monitor reads the port's queued data bytes, which are the MMU's
    /// egress bytes of the port summed over its queues (what `monitor_buffer` sums).
    #[inline(never)]
    pub(crate) fn record_packet(&mut self, s: u32, p: u32, q: usize, id: PacketId, ev: u8, marked: bool) {
        let now = self.now.0;
        let port = &self.ports[p as usize];
        if let Some(l) = self.rec.latency.as_deref_mut().filter(|l| l.per_hop()) {
            // `record.latency.per_hop` (stats::latency): queueing time at this egress
            let pkt = self.slab.get(id);
            if pkt.kind == crate::packet::PktKind::Data && pkt.tag_flags & crate::packet::tag::RETX == 0 {
                if ev == EV_ENQUEUE {
                    l.queued(id, self.now);
                } else if ev == EV_DEQUEUE {
                    let class = crate::stats::HopClass::of(self.tiers[port.node as usize], self.tiers[self.ports[p as usize ^ 1].node as usize]);
                    let tag = if self.flows.fixed(pkt.flow).spec.incast {
                        1
                    } else if self.rec.incast_dst.get(pkt.dst as usize).copied().unwrap_or(false) {
                        2
                    } else {
                        0
                    };
                    l.left(id, self.now, class, pkt.ts, tag);
                }
            }
        }
        if let Some(m) = &mut self.rec.qlen {
            if ev != EV_DROP {
                m.set(now, p as usize, port.queued_bytes(), &mut self.stats.qlen);
            }
        }
        if let Some(tr) = &self.rec.trace {
            let pkt = self.slab.get(id);
            if tr.wants(pkt.flow, p) {
                let qlen = self.switches[s as usize].mmu.egress_bytes(port.local as usize, q);
                let t = &mut self.stats.trace;
                for e in [ev, EV_ECN].into_iter().take(if marked { 2 } else { 1 }) {
                    t.time_ps.push(now);
                    t.node.push(port.node);
                    t.port.push(port.local);
                    t.queue.push(q as u16);
                    t.event.push(e);
                    t.flow.push(pkt.flow);
                    t.seq.push(pkt.seq);
                    t.size.push(pkt.size);
                    t.qlen_bytes.push(qlen);
                }
            }
        }
    }

    /// The run ended for `reason`: the monitor's last samples and dumps (see the module doc).
    pub(crate) fn finish_recorders(&mut self, reason: StopReason) {
        let now = self.now.0;
        let stop = self.cfg.stop_time.map_or(u64::MAX, |t| t.0);
        let ended = self.cfg.record.qlen_monitor.as_ref().is_some_and(|c| c.end.is_some());
        if let Some(m) = &mut self.rec.qlen {
            let horizon = if reason == StopReason::Done && ended { now.max(m.last().min(stop)) } else { now };
            m.finish(horizon, &mut self.stats.qlen);
        }
        if let Some(l) = &self.rec.latency {
            self.stats.latency = l.table();
        }
    }
}
