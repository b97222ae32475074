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

/// `(time, sequence)` packed so that one integer comparison orders events.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    #[inline]
    fn time(&self) -> Time {
        Time((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
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
        o.key.cmp(&self.key)
    }
}

/// log2 of a calendar bucket's width in picoseconds (16.4 ns): a few packet times at 400 Gb/s.
const WIDTH_SHIFT: u32 = 12;
/// Buckets in the calendar ring (covers 67 us: wires, serialisation and pacing; DCQCN timers
/// and retransmission timeouts mostly land in the far heap).
const NBUCKETS: u64 = 1024;

/// A calendar queue (Brown 1988) in front of a binary heap.
///
/// Why: almost every event of a packet simulation lands less than a link delay ahead of now, so
/// a ring of narrow time buckets makes push O(1) and pop O(bucket size), where a binary heap
/// pays a cache-missing, branch-mispredicting sift of log2(pending) levels on every pop. Events
/// beyond the ring wait in an ordinary heap and move into the ring as it advances. Each bucket is
/// sorted when it becomes current, and the order is exactly `(time, sequence)`, the same as a
/// single heap's, so runs stay bit-identical whatever the bucket sizes.
pub struct Scheduler {
    buckets: Vec<Vec<Entry>>,
    /// Absolute index (time >> WIDTH_SHIFT) of the current bucket.
    cur: u64,
    /// The current bucket's entries, sorted descending (the next event is last).
    current: Vec<Entry>,
    /// Entries in the ring (not counting `current`).
    in_ring: usize,
    far: BinaryHeap<Entry>,
    seq: u64,
    /// Events popped so far (reported as the run's event count).
    pub popped: u64,
    /// Largest number of pending events seen.
    pub peak_len: usize,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler {
            buckets: (0..NBUCKETS).map(|_| Vec::new()).collect(),
            cur: 0,
            current: Vec::new(),
            in_ring: 0,
            far: BinaryHeap::new(),
            seq: 0,
            popped: 0,
            peak_len: 0,
        }
    }
}

impl Scheduler {
    #[inline]
    pub fn push(&mut self, at: Time, ev: Event) {
        self.seq += 1;
        let e = Entry { key: ((at.0 as u128) << 64) | self.seq as u128, ev };
        let idx = at.0 >> WIDTH_SHIFT;
        debug_assert!(idx >= self.cur, "event in the past");
        if idx <= self.cur {
            // newest sequence: it goes before every entry with the same or a later time
            let pos = self.current.partition_point(|x| x.key > e.key);
            self.current.insert(pos, e);
        } else if idx < self.cur + NBUCKETS {
            self.buckets[(idx % NBUCKETS) as usize].push(e);
            self.in_ring += 1;
        } else {
            self.far.push(e);
        }
        let len = self.len();
        if len > self.peak_len {
            self.peak_len = len;
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        loop {
            if let Some(e) = self.current.pop() {
                self.popped += 1;
                return Some((e.time(), e.ev));
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// Move to the next non-empty bucket; false when nothing is pending.
    fn advance(&mut self) -> bool {
        if self.in_ring == 0 {
            match self.far.peek() {
                None => return false,
                Some(e) => self.cur = (e.key >> 64) as u64 >> WIDTH_SHIFT,
            }
        } else {
            self.cur += 1;
        }
        while let Some(e) = self.far.peek() {
            let idx = (e.key >> 64) as u64 >> WIDTH_SHIFT;
            if idx >= self.cur + NBUCKETS {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.buckets[(idx % NBUCKETS) as usize].push(e);
            self.in_ring += 1;
        }
        let b = &mut self.buckets[(self.cur % NBUCKETS) as usize];
        if !b.is_empty() {
            std::mem::swap(&mut self.current, b);
            self.in_ring -= self.current.len();
            self.current.sort_unstable_by(|a, b| b.key.cmp(&a.key));
        }
        true
    }

    pub fn peek_time(&self) -> Option<Time> {
        if let Some(e) = self.current.last() {
            return Some(e.time());
        }
        let mut best: Option<u128> = self.far.peek().map(|e| e.key);
        for b in &self.buckets {
            for e in b {
                if best.is_none_or(|k| e.key < k) {
                    best = Some(e.key);
                }
            }
        }
        best.map(|k| Time((k >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.current.len() + self.in_ring + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// The calendar queue pops exactly what a plain heap of (time, seq) would, for a random mix
    /// of near and far events pushed while popping.
    #[test]
    fn matches_a_plain_heap() {
        let mut rng = crate::rng::Rng::stream(3, 0, 0);
        let mut s = Scheduler::default();
        let mut reference = std::collections::BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        let mut popped = vec![];
        let mut expect = vec![];
        for round in 0..20_000u32 {
            let n = rng.below(3);
            for _ in 0..n {
                let ahead = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(20_000),
                    2 => rng.below(2_000_000),
                    _ => rng.below(2_000_000_000),
                };
                let t = now + ahead;
                seq += 1;
                s.push(Time(t), Event::Wire { port: round });
                reference.push(std::cmp::Reverse((t, seq, round)));
            }
            if rng.below(2) == 0 {
                if let Some((t, e)) = s.pop() {
                    now = t.0;
                    popped.push((t.0, e));
                    let std::cmp::Reverse((rt, _, rp)) = reference.pop().unwrap();
                    expect.push((rt, Event::Wire { port: rp }));
                }
            }
        }
        while let Some((t, e)) = s.pop() {
            popped.push((t.0, e));
            let std::cmp::Reverse((rt, _, rp)) = reference.pop().unwrap();
            expect.push((rt, Event::Wire { port: rp }));
        }
        assert!(reference.is_empty());
        assert_eq!(popped, expect);
    }
}
