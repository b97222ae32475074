//! How a host of an Ideal run (`crate::cc::ideal`) asks the oracle for its next packet's time.
//! Here, not beside the oracle: booking walks the run's routes and ports, which the engine owns,
//! while the oracle's calendar is a model that knows only port ids and durations.

use crate::cc::ideal::Hop;
use crate::packet::{Packet, PktKind};
use crate::sim::Simulation;
use crate::time::Time;

impl Simulation {
    /// Ideal runs: book flow `f`'s next packet (if it has one) from `ready` on and hold the flow
    /// until its booked time.
    pub(crate) fn ideal_book_next(&mut self, f: u32, ready: Time) {
        let now = self.now;
        let flow = &self.flows[f as usize];
        if flow.snd_nxt >= flow.spec.size {
            return;
        }
        let h = &self.cfg.host;
        let size = (flow.spec.size - flow.snd_nxt).min(h.mtu as u64) as u32 + h.header_bytes;
        let ack = h.ack_bytes.max(h.ack_min);
        if self.ideal.as_ref().is_some_and(|o| o.paths[f as usize].is_none()) {
            let p = self.ideal_paths(f);
            self.ideal.as_mut().expect("an Ideal run").paths[f as usize] = Some(Box::new(p));
        }
        let oracle = self.ideal.as_ref().expect("an Ideal run");
        let (data, back) = &**oracle.paths[f as usize].as_ref().expect("set above");
        let mut hops = Vec::with_capacity(data.len() + back.len());
        let mut off = 0u64;
        for (ports, bytes) in [(data, size), (back, ack)] {
            for &p in ports {
                let port = &self.ports[p as usize];
                let dur = port.clock.tx_time(bytes).0;
                hops.push(Hop { port: p, offset: off, dur });
                off += dur + port.delay.0;
            }
        }
        let t = self.ideal.as_mut().expect("an Ideal run").book(now.0, ready.0.max(now.0), &hops);
        self.flows[f as usize].next_avail = Time(t);
    }

    /// The ports flow `f`'s data and its ACKs take, as `route` picks them packet by packet.
    fn ideal_paths(&self, f: u32) -> (Vec<u32>, Vec<u32>) {
        let flow = &self.flows[f as usize];
        let probe = |kind: PktKind, src: u32, dst: u32| Packet { kind, flow: f, src, dst, hash: flow.hash, ..Default::default() };
        let walk = |pkt: Packet, nic: u32| -> Vec<u32> {
            let mut out = vec![self.hosts[nic as usize].port];
            let mut node = self.ports[out[0] as usize ^ 1].node;
            while node != pkt.dst && out.len() < 64 {
                let p = self.route(node, &pkt);
                out.push(p);
                node = self.ports[p as usize ^ 1].node;
            }
            out
        };
        let s = flow.spec;
        (walk(probe(PktKind::Data, s.src, s.dst), flow.src_nic), walk(probe(PktKind::Ack, s.dst, s.src), flow.ack_nic))
    }
}
