//! An egress port and the wire behind it (htsim's Queue + Pipe in one place).
//!
//! A port serialises one packet at a time at its line rate, then puts it on the wire, where it
//! spends the propagation delay. Packets on the wire sit in the port's own ring in arrival order,
//! so the port needs one pending event for its serialiser and one for the wire's head, however
//! many packets are in flight: the event heap stays as small as the number of ports.
//!
//! A packet goes onto the wire the moment its serialisation starts, stamped with its arrival time
//! (start + serialisation + propagation), and the port is busy until the serialisation ends. The
//! port schedules its own service event at that end only when something is waiting to be sent;
//! an idle port that gets a packet later simply starts at once. On a lightly loaded port that is
//! one event per packet (the wire's) instead of two.
//!
//! Switch ports have a strict-priority control queue and `N` data queues served by deficit round
//! robin; each data queue can be paused by its priority (PFC) or, later, individually (BFC). Host
//! ports use only the control queue here: their data comes from the NIC's queue pairs.

use crate::packet::{PacketId, Slab};
use crate::time::{Time, TxClock};
use std::collections::VecDeque;

pub const NPRIO: usize = 8;

pub struct Port {
    pub node: u32,
    /// Index of this port among its node's ports.
    pub local: u16,
    pub clock: TxClock,
    pub delay: Time,
    pub ctrl: VecDeque<PacketId>,
    pub queues: Vec<VecDeque<PacketId>>,
    /// Bytes queued per data queue.
    pub qbytes: Vec<u64>,
    /// Bytes queued over all data queues.
    total: u64,
    /// Bit `q` set when data queue `q` is non-empty.
    nonempty: u64,
    deficit: Vec<u32>,
    credited: bool,
    rr: usize,
    pub quantum: u32,
    /// Priority `p` may not be sent before `pause_until[p]` (PFC frames received on this port).
    pub pause_until: [Time; NPRIO],
    /// End of the current serialisation: the port is free from then on.
    pub busy_until: Time,
    /// Generation of the live `PortTx` event; older ones are stale.
    pub gen: u32,
    /// Time of the live `PortTx` event, if any.
    pub pending: Option<Time>,
    /// Packets on the wire and the time each reaches the far end.
    pub wire: VecDeque<(Time, PacketId)>,
    // statistics
    pub tx_bytes: u64,
    pub tx_data_bytes: u64,
    pub ctrl_bytes: u64,
    /// Pause accounting per priority: the interval during which this port was last told to pause.
    pub pause_from: [Time; NPRIO],
    pub paused_total: [Time; NPRIO],
    pub peak_qbytes: u64,
}

impl Port {
    pub fn new(node: u32, local: u16, clock: TxClock, delay: Time, nqueues: usize, quantum: u32) -> Port {
        Port {
            node,
            local,
            clock,
            delay,
            ctrl: VecDeque::new(),
            queues: (0..nqueues).map(|_| VecDeque::new()).collect(),
            qbytes: vec![0; nqueues],
            total: 0,
            nonempty: 0,
            deficit: vec![0; nqueues],
            credited: false,
            rr: 0,
            quantum,
            pause_until: [Time::ZERO; NPRIO],
            busy_until: Time::ZERO,
            gen: 0,
            pending: None,
            wire: VecDeque::new(),
            tx_bytes: 0,
            tx_data_bytes: 0,
            ctrl_bytes: 0,
            pause_from: [Time::ZERO; NPRIO],
            paused_total: [Time::ZERO; NPRIO],
            peak_qbytes: 0,
        }
    }

    /// Priority that PFC pauses for queue `q`: queues map to priorities one to one.
    #[inline]
    pub fn queue_prio(q: usize) -> usize {
        q % NPRIO
    }

    #[inline]
    pub fn is_paused(&self, prio: usize, now: Time) -> bool {
        self.pause_until[prio] > now
    }

    /// Apply a received PFC frame for `prio`: pause until `until` (== now to resume), keeping
    /// the total paused time exact even when pauses overlap or lapse by themselves.
    pub fn apply_pause(&mut self, prio: usize, now: Time, until: Time) {
        let old_until = self.pause_until[prio];
        if old_until > self.pause_from[prio] {
            // close the previous interval where it really ended
            let end = if old_until < now { old_until } else { now };
            if end > self.pause_from[prio] {
                self.paused_total[prio] += end - self.pause_from[prio];
            }
        }
        self.pause_from[prio] = now;
        self.pause_until[prio] = until;
    }

    /// Total paused time of `prio` up to `now`.
    pub fn paused_time(&self, prio: usize, now: Time) -> Time {
        let mut t = self.paused_total[prio];
        let until = self.pause_until[prio];
        if until > self.pause_from[prio] {
            let end = if until < now { until } else { now };
            if end > self.pause_from[prio] {
                t += end - self.pause_from[prio];
            }
        }
        t
    }

    pub fn enqueue_data(&mut self, q: usize, id: PacketId, size: u32) {
        self.queues[q].push_back(id);
        self.qbytes[q] += size as u64;
        self.total += size as u64;
        self.nonempty |= 1 << q;
        if self.total > self.peak_qbytes {
            self.peak_qbytes = self.total;
        }
    }

    /// Remove the head of data queue `q` (the one `pick_data` chose).
    #[inline]
    pub fn dequeue_data(&mut self, q: usize, size: u32) -> PacketId {
        let id = self.queues[q].pop_front().expect("picked queue is non-empty");
        self.qbytes[q] -= size as u64;
        self.total -= size as u64;
        if self.queues[q].is_empty() {
            self.nonempty &= !(1 << q);
        }
        id
    }

    /// Anything waiting in the control or data queues.
    #[inline]
    pub fn has_backlog(&self) -> bool {
        !self.ctrl.is_empty() || self.nonempty != 0
    }

    #[inline]
    pub fn queued_bytes(&self) -> u64 {
        self.total
    }

    /// Non-empty data queues whose priority is not paused now.
    #[inline]
    fn eligible(&self, now: Time) -> u64 {
        let mut m = self.nonempty;
        let mut bits = m;
        while bits != 0 {
            let q = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if self.is_paused(Self::queue_prio(q), now) {
                m &= !(1 << q);
            }
        }
        m
    }

    /// Deficit round robin over the unpaused, non-empty data queues; returns the queue served.
    /// A queue that is alone eligible is served directly: DRR would give it every turn anyway.
    pub fn pick_data(&mut self, now: Time, slab: &Slab) -> Option<usize> {
        let elig = self.eligible(now);
        if elig == 0 {
            return None;
        }
        if elig.count_ones() == 1 {
            return Some(elig.trailing_zeros() as usize);
        }
        let n = self.queues.len();
        for _ in 0..(2 * n + 1) {
            let q = self.rr;
            if elig & (1 << q) != 0 {
                if !self.credited {
                    self.deficit[q] += self.quantum;
                    self.credited = true;
                }
                let size = slab.get(self.queues[q][0]).size;
                if self.deficit[q] >= size {
                    self.deficit[q] -= size;
                    return Some(q);
                }
            } else if self.nonempty & (1 << q) == 0 {
                self.deficit[q] = 0;
            }
            self.credited = false;
            self.rr = (q + 1) % n;
        }
        None
    }

    /// Earliest time a paused, non-empty data queue may resume (to wake the port then).
    pub fn next_unpause(&self, now: Time) -> Option<Time> {
        let mut t: Option<Time> = None;
        for (q, dq) in self.queues.iter().enumerate() {
            let p = Self::queue_prio(q);
            if !dq.is_empty() && self.is_paused(p, now) {
                let u = self.pause_until[p];
                if t.is_none_or(|x| u < x) {
                    t = Some(u);
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::time::Rate;

    fn port(nq: usize) -> Port {
        Port::new(0, 0, TxClock::new(Rate::gbps(100)), Time::from_us(1), nq, 1500)
    }

    #[test]
    fn drr_alternates_and_skips_paused() {
        let mut slab = Slab::default();
        let mut p = port(4);
        for q in [1usize, 1, 2, 2] {
            let id = slab.alloc(Packet { size: 1000, ..Default::default() });
            p.enqueue_data(q, id, 1000);
        }
        let mut order = vec![];
        while let Some(q) = p.pick_data(Time(0), &slab) {
            p.dequeue_data(q, 1000);
            order.push(q);
        }
        // quantum 1500 with 1000 B packets: one packet per visit, alternating
        assert_eq!(order, vec![1, 2, 1, 2]);

        let id = slab.alloc(Packet { size: 1000, ..Default::default() });
        p.enqueue_data(3, id, 1000);
        p.apply_pause(3, Time(0), Time(100));
        assert_eq!(p.pick_data(Time(50), &slab), None);
        assert_eq!(p.next_unpause(Time(50)), Some(Time(100)));
        assert_eq!(p.pick_data(Time(100), &slab), Some(3));
    }

    #[test]
    fn paused_time_is_exact() {
        let mut p = port(1);
        p.apply_pause(3, Time(10), Time(110)); // pause 100
        p.apply_pause(3, Time(60), Time(60)); // resumed after 50
        assert_eq!(p.paused_time(3, Time(1000)), Time(50));
        p.apply_pause(3, Time(200), Time(300)); // lapses by itself
        assert_eq!(p.paused_time(3, Time(1000)), Time(150));
        assert_eq!(p.paused_time(3, Time(250)), Time(100));
    }
}
