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

/// log2 of a calendar bucket's width in picoseconds (2 ns: a few packets at 400 Gb/s).
const WIDTH_SHIFT: u32 = 11;
/// Buckets in the calendar ring (covers 4.2 us: wires, serialisation and pacing; DCQCN timers
/// and retransmission timeouts mostly land in the far heap).
const NBUCKETS: u64 = 2048;

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
    /// Bit per ring bucket: set when the bucket holds entries.
    occupied: [u64; (NBUCKETS / 64) as usize],
    far: BinaryHeap<Entry>,
    seq: u64,
    /// Events popped so far (reported as the run's event count).
    pub popped: u64,
    /// Largest number of pending events seen (checked whenever a bucket is opened).
    pub peak_len: usize,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler {
            buckets: (0..NBUCKETS).map(|_| Vec::new()).collect(),
            cur: 0,
            current: Vec::new(),
            in_ring: 0,
            occupied: [0; (NBUCKETS / 64) as usize],
            far: BinaryHeap::new(),
            seq: 0,
            popped: 0,
            peak_len: 0,
        }
    }
}

/// Entries reach a bucket mostly in increasing key order (later pushes carry later times and
/// larger sequence numbers), so reversing first leaves an almost-sorted run that insertion sort
/// finishes in near-linear time; the general sort only takes over for unusually full buckets.
#[inline]
fn sort_descending(v: &mut [Entry]) {
    v.reverse();
    if v.len() > 64 {
        v.sort_unstable_by(|a, b| b.key.cmp(&a.key));
        return;
    }
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].key < x.key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
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
            self.place(idx, e);
        } else {
            self.far.push(e);
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

    /// Absolute index of the first occupied ring bucket at or after `from` (ring entries all lie
    /// in `[from, from + NBUCKETS)` when this is called).
    fn next_occupied(&self, from: u64) -> Option<u64> {
        if self.in_ring == 0 {
            return None;
        }
        let p0 = (from % NBUCKETS) as usize;
        let words = (NBUCKETS / 64) as usize;
        let (w0, b0) = (p0 / 64, p0 % 64);
        for k in 0..=words {
            let w = (w0 + k) % words;
            let mut bits = self.occupied[w];
            if k == 0 {
                bits &= !0u64 << b0;
            }
            if bits != 0 {
                let pos = (w * 64 + bits.trailing_zeros() as usize) as u64;
                let dist = (pos + NBUCKETS - p0 as u64) % NBUCKETS;
                return Some(from + dist);
            }
        }
        None
    }

    #[inline]
    fn place(&mut self, idx: u64, e: Entry) {
        let slot = (idx % NBUCKETS) as usize;
        self.buckets[slot].push(e);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_ring += 1;
    }

    /// Move to the next non-empty bucket, jumping over empty ones with the occupancy bitmap;
    /// false when nothing is pending.
    fn advance(&mut self) -> bool {
        let ring_next = self.next_occupied(self.cur + 1);
        let far_next = self.far.peek().map(|e| (e.key >> 64) as u64 >> WIDTH_SHIFT);
        self.cur = match (ring_next, far_next) {
            (None, None) => return false,
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (Some(a), Some(b)) => a.min(b),
        };
        while let Some(e) = self.far.peek() {
            let idx = (e.key >> 64) as u64 >> WIDTH_SHIFT;
            if idx >= self.cur + NBUCKETS {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.place(idx, e);
        }
        let slot = (self.cur % NBUCKETS) as usize;
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        let b = &mut self.buckets[slot];
        std::mem::swap(&mut self.current, b);
        self.in_ring -= self.current.len();
        sort_descending(&mut self.current);
        let len = self.len();
        if len > self.peak_len {
            self.peak_len = len;
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
