//! Measurement inside the run: periodic buffer and queue samples, and the per-flow, per-port and
//! module tables filled at the end. Models only keep counters; this file reads them out.

use crate::cc::CongestionControl;
use crate::event::Event;
use crate::fc::FlowControl;
use crate::ids::NodeRef;
use crate::sim::Simulation;
use crate::stats::HopClass;
use crate::time::Time;

/// Samples an idle network gets before the sampler sleeps (see `on_sample`).
pub const IDLE_SAMPLES: u64 = 1000;

impl Simulation {
    /// The periodic buffer and queue sample (`record.buffer_interval`, `record.queue_ports`), at
    /// every multiple of the sampling step.
    ///
    /// Idle stretches. While the network is idle — no packet anywhere (queued, on a wire, or a
    /// control frame) and every flow that has started has finished, at the start of the
    /// engine's window (`crate::engine`) — every sample is the same
    /// but for its time, and a run whose next flow starts much later (an incast at 1e7 s) would
    /// take them for ever. So the sampler takes the first [`IDLE_SAMPLES`] samples of an idle
    /// stretch as usual and then sleeps until the next flow starts (or the next link event,
    /// `faults.rs`), resuming at the first sample time at or after it. The buffer and queue
    /// tables thus have every sample of any idle stretch shorter than `IDLE_SAMPLES` steps (10 ms
    /// at the default 10 us), bit for bit as before, and of a longer one its first
    /// `IDLE_SAMPLES` rows: no rows between, where the network held nothing. Module and flow
    /// timers need no such rule: they stop by themselves once nothing is queued or in flight.
    pub(crate) fn on_sample(&mut self) {
        let now = self.now;
        let rec = &self.cfg.record;
        if rec.buffer_interval.is_some_and(|iv| now.0 % iv.0.max(1) == 0) {
            let b = &mut self.stats.buffer;
            let part = self.part.as_deref();
            for sw in &self.switches {
                if part.is_some_and(|x| !x.owns(sw.node)) {
                    continue;
                }
                b.switch_time_ps.push(now.0);
                b.switch_node.push(sw.node);
                b.switch_bytes.push(sw.mmu.used());
                for &p in &sw.info.ports {
                    b.port_time_ps.push(now.0);
                    b.port_row.push(p);
                    b.port_bytes.push(self.ports[p as usize].queued_bytes());
                    b.port_tx_bytes.push(self.ports[p as usize].tx_data_bytes);
                    b.port_active.push(self.ports[p as usize].active_queues() as u32);
                }
            }
            for &f in &rec.cwnd_flows {
                // (no fixed data: every flow of its chunk was freed, so its sender was done)
                let Some(fx) = self.flows.fixed_get(f) else { continue };
                if fx.spec.start > now {
                    continue;
                }
                if let Some(part) = self.part.as_deref_mut() {
                    // a split run: the receiver's bytes where the receiver is (`engine::merge`)
                    if part.owns(fx.spec.dst) {
                        part.delivered.push((now.0, f, self.flows.get(f).map_or(0, |x| x.rcv_nxt)));
                    }
                    if !part.owns(fx.spec.src) {
                        continue;
                    }
                }
                let (cwnd, delivered) = match self.flows.get(f) {
                    Some(flow) if flow.sender_done => continue,
                    Some(flow) => (flow.cc.window().unwrap_or(flow.win_cap), flow.rcv_nxt),
                    // due to start at this very time and not started yet: its fresh controller
                    None if !self.flows.started(f) => (fx.new_cc(&self.cfg.cc, self.cfg.host.mtu).window().unwrap_or(fx.win_cap(&self.cfg.host)), 0),
                    // freed: its sender was done
                    None => continue,
                };
                let c = &mut self.stats.cwnd;
                c.time_ps.push(now.0);
                c.flow.push(f);
                c.cwnd_bytes.push(cwnd);
                c.delivered_bytes.push(delivered);
            }
            self.sample_modules(now);
        }
        let rec = &self.cfg.record;
        if !rec.queue_ports.is_empty() && now.0 % rec.queue_interval.0.max(1) == 0 {
            for &(node, local) in &rec.queue_ports {
                if !self.owns(node) {
                    continue;
                }
                if let Some(p) = self.port_of(node, local) {
                    let q = &mut self.stats.queues;
                    q.time_ps.push(now.0);
                    q.node.push(node);
                    q.port.push(local);
                    q.bytes.push(self.ports[p as usize].queued_bytes());
                }
            }
        }
        let step = match (rec.buffer_interval, rec.queue_ports.is_empty()) {
            (Some(b), true) => b,
            (None, false) => rec.queue_interval,
            (Some(b), false) => Time(gcd(b.0, rec.queue_interval.0)),
            (None, true) => return,
        };
        let step = step.0.max(1);
        let mut next = now + Time(step);
        if self.network_idle {
            self.idle_samples += 1;
            if self.idle_samples >= IDLE_SAMPLES {
                if let Some(wake) = self.next_activity().filter(|&w| w > next) {
                    // the first sample time at or after it (none if that is beyond time itself)
                    let Some(t) = wake.0.checked_next_multiple_of(step) else { return };
                    next = Time(t);
                }
            }
        } else {
            self.idle_samples = 0;
        }
        self.sched.push(next, Event::Sample);
    }

    /// Every switch's module reports its values over time (`FlowControl::sample`).
    fn sample_modules(&mut self, now: Time) {
        let mut buf = std::mem::take(&mut self.sample_buf);
        for sw in &self.switches {
            if !self.owns(sw.node) {
                continue;
            }
            sw.fc.sample(now, &crate::net::switch::view!(sw, &self.ports), &mut buf);
            for (port, name, value) in buf.drain(..) {
                let metric = self.stats.module_metric(name);
                let m = &mut self.stats.module_samples;
                m.time_ps.push(now.0);
                m.node.push(sw.node);
                m.port.push(port);
                m.metric.push(metric);
                m.value.push(value);
            }
        }
        self.sample_buf = buf;
    }

    /// When something next happens to an idle network: the next flow starts, or the next link
    /// event (`faults.rs`).
    fn next_activity(&self) -> Option<Time> {
        let flow = self.next_start();
        let fault = self.faults.as_ref().and_then(|f| f.next_event());
        match (flow, fault) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fill the per-flow and per-port tables at the end of the run.
    #[cold]
    #[inline(never)]
    pub(crate) fn finish(&mut self) {
        let now = self.now;
        if cfg!(debug_assertions) && self.part.is_none() {
            self.check_flow_packets();
        }
        // (before their rows use up the flows that never arrived)
        let written = self.part.as_deref().is_some_and(|p| p.end_rows_written);
        let unarrived = match self.part.as_deref_mut() {
            Some(p) if written => p.unarrived.take(),
            _ => self.an_unarrived_flow(),
        };
        // in a run with a sink, a chunk at a time (the flows never started can be most of them);
        // a split run's went to its sink already (`engine::parallel::end_rows_to_sink`)
        let mut next = (!written).then_some(0);
        while let Some(from) = next {
            next = self.flows.write_rows(&mut self.stats.flows, from, self.watch.chunk_rows());
            self.watch.spill(&mut self.stats);
        }
        // flows made as they arrive: those that never did (ids after every added flow's)
        while self.lazy.is_some() && !written {
            let more = self.write_unarrived_rows(self.watch.chunk_rows());
            self.watch.spill(&mut self.stats);
            if !more {
                break;
            }
        }
        let pt = &mut self.stats.ports;
        for (p, port) in self.ports.iter().enumerate() {
            let peer = &self.ports[p ^ 1];
            pt.node.push(port.node);
            pt.port.push(port.local);
            pt.peer_node.push(peer.node);
            pt.hop_class.push(HopClass::of(self.tiers[port.node as usize], self.tiers[peer.node as usize]).name().to_string());
            pt.rate_bps.push(port.clock.rate.0);
            pt.tx_bytes.push(port.tx_bytes);
            pt.ctrl_bytes.push(port.ctrl_bytes);
            let cap = port.clock.rate.bytes_in(now).max(1);
            pt.utilisation.push(port.tx_bytes as f64 / cap as f64);
            let paused: u64 = (0..crate::queues::port::NPRIO).map(|q| port.paused_time(q, now).0).sum();
            pt.paused_ps.push(paused);
            pt.gate_closed_ps.push((0..port.ngates()).map(|q| port.gate_closed_time(q, now).0).sum());
            pt.peak_queue_bytes.push(port.peak_qbytes);
            pt.pause_frames.push(port.cold.pause_frames);
            pt.resume_frames.push(port.cold.resume_frames);
            pt.other_ctrl_frames.push(port.cold.other_ctrl_frames);
            pt.markers_inserted.push(port.cold.markers_inserted);
            pt.markers_matched.push(port.cold.markers_matched);
            let ein = match self.node_ref[port.node as usize] {
                NodeRef::Switch(s) => self.switches[s as usize].aqm.ein.get(port.local as usize).map_or(0, |e| e.marked),
                NodeRef::Host(_) => 0,
            };
            pt.ein_marks.push(ein);
            let d = self.faults.as_ref().map_or([0; 3], |f| f.port_drops[p]);
            pt.drops_loss.push(d[0]);
            pt.drops_link_down.push(d[1]);
            pt.drops_unreachable.push(d[2]);
        }
        // module counters, summed over the network
        let mut named = vec![];
        for sw in &self.switches {
            if !self.owns(sw.node) {
                continue;
            }
            sw.fc.counters(&mut named);
            if !sw.aqm.ein.is_empty() {
                named.push(("ein_marks", sw.aqm.ein_marked()));
            }
        }
        // (a flow's controller counts where its sender runs)
        let part = self.part.as_deref();
        let senders = |src: u32| part.is_none_or(|x| x.owns(src));
        self.flows.module_counters(&self.cfg.cc, self.cfg.host.mtu, unarrived.as_ref(), &senders, &mut named);
        let m = &mut self.stats.modules;
        for (k, v) in named {
            *m.entry(k.to_string()).or_insert(0) += v;
        }

        let c = &mut self.stats.counters;
        c.events = self.sched.popped;
        c.flows = self.flows.len() as u64;
        c.flows_finished = self.flows.finished_rows();
        c.end_time_ps = now.0;
        c.data_bytes_in_flight = self.slab.live_packets().filter(|p| p.kind == crate::packet::PktKind::Data).map(|p| p.payload as u64).sum();
        c.max_switch_buffer_bytes = self.switches.iter().map(|s| s.mmu.peak_used).max().unwrap_or(0);
        self.stats.diagnostics = crate::stats::Diagnostics {
            peak_packets_alive: self.slab.capacity_used() as u64,
            peak_live_flows: self.flows.peak_live() as u64,
            peak_pending_events: self.sched.peak_len as u64,
            live_flows_at_end: self.flows.live_now() as u64,
            peak_flow_chunks: self.flows.chunks_held().1 as u64,
        };
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
