//! The scheduler: a binary heap of `(time, sequence, event)`.
//!
//! Equal times pop in insertion order (the sequence number breaks ties), so a run is a pure
//! function of its inputs. Events are a few words; components keep at most one live event each
//! (a port's service, a wire's head, a flow's timer, a switch's flow-control timer) and invalidate
//! superseded ones with a generation number rather than removing them from the heap.

use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serialising its packet, or was asked to wake (pacing, pause expiry).
    PortTx { port: u32, gen: u32 },
    /// The packet at the head of a port's wire reaches the far end.
    Wire { port: u32 },
    /// The next flow of the (start-sorted) workload begins.
    FlowArrival,
    /// A flow's sender timer (congestion control or retransmission timeout).
    FlowTimer { flow: u32, gen: u32 },
    /// A switch's flow-control module timer.
    FcTimer { sw: u32, gen: u32 },
    /// Periodic statistics sample.
    Sample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Time,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then_with(|| o.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
pub struct Scheduler {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// Events popped so far (reported as the run's event count).
    pub popped: u64,
}

impl Scheduler {
    #[inline]
    pub fn push(&mut self, at: Time, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry { at, seq: self.seq, ev });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((e.at, e.ev))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_fifo() {
        let mut s = Scheduler::default();
        s.push(Time(5), Event::Wire { port: 1 });
        s.push(Time(3), Event::Wire { port: 2 });
        s.push(Time(5), Event::Wire { port: 3 });
        s.push(Time(3), Event::Wire { port: 4 });
        let order: Vec<u32> = std::iter::from_fn(|| s.pop())
            .map(|(_, e)| match e {
                Event::Wire { port } => port,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
        assert_eq!(s.popped, 4);
    }
}
