//! The scheduler: events ordered by `(time, key)`, where an event's key is the event itself
//! (kind, then the entity it happens to, then that entity's generation), never when it was
//! pushed.
//!
//! Why a key and not push order: a run split over threads (`crate::engine`) pushes a packet's
//! arrival at a partition's edge when the window's messages are handed over, not when the far
//! side sent it, so the push order of one thread cannot be reproduced by several. The key is a
//! function of the event alone, the same in every partitioning, so equal times pop in the same
//! order whatever the split, and a run is a pure function of its inputs.
//!
//! Events are a few words; components keep at most one live event each (a port's service, a
//! wire's head, a flow's timer, a switch's flow-control timer) and invalidate superseded ones
//! with a generation number rather than removing them from the queue.

use crate::ids::ID_BITS;
use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serialising its packet, or was asked to wake (pacing, pause expiry).
    PortTx { port: u32, gen: u32 },
    /// The packet at the head of a port's wire reaches the far end. `pkt` is that packet (the
    /// wire's front), carried so that the loop can ask the cache for it one event ahead
    /// (`Scheduler::next_hint`).
    Wire { port: u32, pkt: u32 },
    /// The next flow of the (start-sorted) workload begins.
    FlowArrival,
    /// A flow's sender timer (congestion control or retransmission timeout).
    FlowTimer { flow: u32, gen: u32 },
    /// A TCP receiver's delayed-ACK timer: its own event, on the receiver's host, so that a
    /// flow's two ends share no timer and run in different partitions (`crate::net::tcp`).
    AckTimer { flow: u32, gen: u32 },
    /// A switch's flow-control module timer.
    FcTimer { sw: u32, gen: u32 },
    /// Periodic statistics sample.
    Sample,
    /// The next link event of the scenario's faults (`crate::faults`).
    Fault,
}

const ID_MASK: u64 = (1 << ID_BITS) - 1;

impl Event {
    /// One word: kind in the top 3 bits, then the 29-bit id, then the 32-bit generation.
    #[inline]
    fn pack(self) -> u64 {
        let (kind, id, gen) = match self {
            Event::PortTx { port, gen } => (0u64, port, gen),
            Event::Wire { port, pkt } => (1, port, pkt),
            Event::FlowArrival => (2, 0, 0),
            Event::FlowTimer { flow, gen } => (3, flow, gen),
            Event::FcTimer { sw, gen } => (4, sw, gen),
            Event::Sample => (5, 0, 0),
            Event::Fault => (6, 0, 0),
            Event::AckTimer { flow, gen } => (7, flow, gen),
        };
        debug_assert!((id as u64) <= ID_MASK, "id {id} does not fit in {ID_BITS} bits");
        (kind << 61) | ((id as u64 & ID_MASK) << 32) | gen as u64
    }

    #[inline]
    fn unpack(w: u64) -> Event {
        let id = ((w >> 32) & ID_MASK) as u32;
        let gen = w as u32;
        match w >> 61 {
            0 => Event::PortTx { port: id, gen },
            1 => Event::Wire { port: id, pkt: gen },
            2 => Event::FlowArrival,
            3 => Event::FlowTimer { flow: id, gen },
            4 => Event::FcTimer { sw: id, gen },
            5 => Event::Sample,
            6 => Event::Fault,
            _ => Event::AckTimer { flow: id, gen },
        }
    }
}

/// The key that orders an event among events of the same time: its kind's rank, then its
/// entity's id permuted by the instant, then its generation; a function of the event and its
/// time alone, so the same in every partitioning (`crate::engine`).
///
/// - A wire event's packet is left out: a prefetch hint whose slab id differs between
///   partitions (a port has one wire event pending at a time, so nothing is lost).
/// - Ranks: wire arrivals, then flow-control timers, flow timers, delayed-ACK timers, port
///   services, and the rest.
///   This is the order in which one instant's events were usually pushed (an arrival a link
///   delay ahead, a timer a tick ahead, a service one serialisation ahead), which the push order
///   that broke ties before gave in most meetings: a packet that reaches a switch as one of its
///   ports picks its next packet is queued first, so the port sees it.
/// - Ids are permuted by a hash of the instant, so that no port or flow wins every tie: with a
///   fixed order the lowest-numbered of an incast's synchronised senders was served first at
///   every instant, and P-PFC's 16-to-1 queue peaked at 3.35 MB instead of 2.3 MB (its predictions
///   read the ingresses in one fixed order).
#[inline(always)]
pub(crate) fn order_key(time: u64, w: u64) -> u64 {
    let k = w >> 61;
    let gen = if k == 1 { 0 } else { w & 0xFFFF_FFFF };
    (RANK[k as usize] << 61) | (permute(time, (w >> 32) & ID_MASK) << 32) | gen
}

/// Each kind's rank among one instant's events (`order_key`), and its inverse.
const RANK: [u64; 8] = [4, 0, 5, 2, 1, 6, 7, 3];
const KIND_OF_RANK: [u64; 8] = [1, 4, 3, 7, 0, 2, 5, 6];
/// The odd factor of the id permutation, and its inverse modulo 2^64 (so also modulo 2^29).
const PERMUTE_MUL: u64 = 0x2545_F491;
const PERMUTE_INV: u64 = {
    // Newton's iteration for an inverse modulo 2^64: each step doubles the bits that are right
    let mut x = PERMUTE_MUL;
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(PERMUTE_MUL.wrapping_mul(x)));
        i += 1;
    }
    x
};

/// A hash of the instant, for the id permutation.
#[inline(always)]
fn instant_hash(time: u64) -> u64 {
    (time.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 35) & ID_MASK
}

/// A permutation of the ids that changes with the instant: ids XOR a hash of the time, times an
/// odd number, modulo 2^29.
#[inline(always)]
fn permute(time: u64, id: u64) -> u64 {
    ((id ^ instant_hash(time)).wrapping_mul(PERMUTE_MUL)) & ID_MASK
}

/// The word a pending event is kept and sorted by: its `order_key` with a wire event's packet
/// in the low bits (where other kinds keep their generation). It orders events exactly as
/// `(order_key, packed event)` does: equal keys mean one kind and one entity, whose packed words
/// then differ only in those low bits. Why keep this word rather than the event: a bucket is
/// sorted when it opens, and working out both keys at each of its comparisons was 7% of the
/// standard benchmark's instructions; now each event's key is worked out once, when pushed, and
/// turned back into the event (`event_of`) when popped.
#[inline(always)]
fn sort_word(time: u64, w: u64) -> u64 {
    order_key(time, w) | (w & 0xFFFF_FFFF)
}

/// The packed event a `sort_word` of time `time` stands for.
#[inline(always)]
fn event_of(time: u64, word: u64) -> u64 {
    let id = ((word >> 32).wrapping_mul(PERMUTE_INV) & ID_MASK) ^ instant_hash(time);
    (KIND_OF_RANK[(word >> 61) as usize] << 61) | (id << 32) | (word & 0xFFFF_FFFF)
}

/// Whether `a` pops after `b`: later time, or the same time and a larger word.
#[inline(always)]
fn after(a: &Near, b: &Near) -> bool {
    (a.time, a.word) > (b.time, b.word)
}

/// A near event in the calendar ring: 16 bytes, its time and `sort_word`, which order it.
#[derive(Clone, Copy, Debug, Default)]
struct Near {
    time: u64,
    word: u64,
}

/// A far event in the overflow heap: its time and `sort_word`, high and low.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Far {
    key: u128,
}

impl PartialOrd for Far {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Far {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest entry.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

impl Far {
    #[inline]
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }

    #[inline]
    fn near(&self) -> Near {
        Near { time: self.time(), word: self.key as u64 }
    }
}

/// log2 of a calendar bucket's width in picoseconds (512 ps: a busy 320-host fabric pushes about
/// 9 events a nanosecond, and a narrower bucket keeps the insertion sort of `advance` short; at
/// 256 ps the ring's bitmap walk costs more than the sort saves).
const WIDTH_SHIFT: u32 = 9;
/// Buckets in the calendar ring (covers 4.2 us: wires, serialisation and pacing; DCQCN timers
/// and retransmission timeouts mostly land in the far heap).
const NBUCKETS: u64 = 8192;

/// A calendar queue (Brown 1988) in front of a binary heap.
///
/// Why: almost every event of a packet simulation lands less than a link delay ahead of now, so
/// a ring of narrow time buckets makes push O(1) and pop O(bucket size), where a binary heap
/// pays a cache-missing, branch-mispredicting sift of log2(pending) levels on every pop. Events
/// beyond the ring wait in an ordinary heap and move into the ring as it advances.
///
/// Order is exactly `(time, order_key)`, the same as one heap's, so runs are bit-identical
/// whatever the bucket sizes: a bucket is sorted by that key when it is opened, and an event
/// pushed into the open bucket is inserted at its place.
pub struct Scheduler {
    buckets: Vec<Vec<Near>>,
    /// Absolute index (time >> WIDTH_SHIFT) of the current bucket.
    cur: u64,
    /// The current bucket's entries, sorted by time descending, equal times newest first (the
    /// next event is last).
    current: Vec<Near>,
    /// Entries in the ring (not counting `current`).
    in_ring: usize,
    /// Bit per ring bucket: set when the bucket holds entries.
    occupied: [u64; (NBUCKETS / 64) as usize],
    far: BinaryHeap<Far>,
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
            popped: 0,
            peak_len: 0,
        }
    }
}

/// Sort a bucket (in push order) descending by `(time, order_key)` (the next event last).
/// Entries reach a bucket mostly in increasing time, so reversing first leaves an almost-sorted
/// run that an insertion sort finishes in near-linear time.
#[inline]
fn sort_bucket(v: &mut [Near]) {
    v.reverse();
    if v.len() > 64 {
        v.sort_unstable_by(|a, b| (b.time, b.word).cmp(&(a.time, a.word)));
        return;
    }
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && after(&x, &v[j - 1]) {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

impl Scheduler {
    /// Inlined into every caller (a push of a known event kind folds `pack` to a constant, and
    /// the ring's fast path is a handful of instructions); LLVM declined the plain `#[inline]`
    /// for its many call sites and paid a call, a register spill and a runtime `pack` on each of
    /// the two pushes per packet hop. The rare paths stay out of line.
    #[inline(always)]
    pub fn push(&mut self, at: Time, ev: Event) {
        let ev = ev.pack();
        // (an index before the current bucket is possible after `peek_time` opened a later
        // bucket and a window's messages then arrive: those go into `current` at their place)
        let idx = at.0 >> WIDTH_SHIFT;
        if idx > self.cur && idx < self.cur + NBUCKETS {
            self.place(idx, Near { time: at.0, word: sort_word(at.0, ev) });
        } else {
            self.push_outside_ring(at, idx, ev);
        }
    }

    /// An event in the bucket being popped, or beyond the ring.
    #[cold]
    #[inline(never)]
    fn push_outside_ring(&mut self, at: Time, idx: u64, ev: u64) {
        let e = Near { time: at.0, word: sort_word(at.0, ev) };
        if idx <= self.cur {
            // at its place in the descending vector
            let pos = self.current.partition_point(|x| after(x, &e));
            self.current.insert(pos, e);
        } else {
            self.far.push(Far { key: ((at.0 as u128) << 64) | e.word as u128 });
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        loop {
            if let Some(e) = self.current.pop() {
                self.popped += 1;
                return Some((Time(e.time), Event::unpack(event_of(e.time, e.word))));
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// The time of the event that pops next, if any (opens the next bucket if needed).
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        loop {
            if let Some(e) = self.current.last() {
                return Some(Time(e.time));
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// Pop the next event if it comes before `end` (the end of the window being run).
    #[inline(always)]
    pub fn pop_before(&mut self, end: Time) -> Option<(Time, Event)> {
        loop {
            if let Some(e) = self.current.last() {
                // (a window ending at the end of time holds the events at it too)
                if e.time >= end.0 && end.0 != u64::MAX {
                    return None;
                }
                let e = self.current.pop().expect("looked at");
                self.popped += 1;
                return Some((Time(e.time), Event::unpack(event_of(e.time, e.word))));
            }
            if !self.advance() {
                return None;
            }
        }
    }

    /// The event that pops next, if it is already in the current bucket (the usual case): a hint
    /// for prefetching what it will touch, read without popping.
    #[inline]
    pub fn next_hint(&self) -> Option<Event> {
        self.current.last().map(|e| Event::unpack(event_of(e.time, e.word)))
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

    #[inline(always)]
    fn place(&mut self, idx: u64, e: Near) {
        let slot = (idx % NBUCKETS) as usize;
        self.buckets[slot].push(e);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_ring += 1;
    }

    /// Move to the next non-empty bucket, jumping over empty ones with the occupancy bitmap;
    /// false when nothing is pending.
    fn advance(&mut self) -> bool {
        let ring_next = self.next_occupied(self.cur + 1);
        let far_next = self.far.peek().map(|e| e.time() >> WIDTH_SHIFT);
        self.cur = match (ring_next, far_next) {
            (None, None) => return false,
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (Some(a), Some(b)) => a.min(b),
        };
        while let Some(e) = self.far.peek() {
            let idx = e.time() >> WIDTH_SHIFT;
            if idx >= self.cur + NBUCKETS {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.place(idx, e.near());
        }
        let slot = (self.cur % NBUCKETS) as usize;
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        let b = &mut self.buckets[slot];
        std::mem::swap(&mut self.current, b);
        self.in_ring -= self.current.len();
        sort_bucket(&mut self.current);
        let len = self.len();
        if len > self.peak_len {
            self.peak_len = len;
        }
        true
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
    fn events_pack_into_a_word() {
        for e in [
            Event::PortTx { port: 7, gen: u32::MAX },
            Event::Wire { port: (1 << 29) - 1, pkt: u32::MAX },
            Event::FlowArrival,
            Event::FlowTimer { flow: 123_456, gen: 9 },
            Event::FcTimer { sw: 3, gen: 0 },
            Event::Sample,
            Event::Fault,
            Event::AckTimer { flow: 77, gen: 3 },
        ] {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }

    #[test]
    fn pops_by_time_then_rank_whatever_the_push_order() {
        let mut s = Scheduler::default();
        s.push(Time(5), Event::PortTx { port: 3, gen: 0 });
        s.push(Time(3), Event::PortTx { port: 1, gen: 1 });
        s.push(Time(3), Event::FlowTimer { flow: 0, gen: 1 });
        s.push(Time(3), Event::FcTimer { sw: 9, gen: 2 });
        s.push(Time(3), Event::Wire { port: 4, pkt: 9 });
        s.push(Time(3), Event::AckTimer { flow: 0, gen: 5 });
        s.push(Time(2), Event::Sample);
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| s.pop()).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(
            order,
            vec![
                (2, Event::Sample),
                (3, Event::Wire { port: 4, pkt: 9 }),
                (3, Event::FcTimer { sw: 9, gen: 2 }),
                (3, Event::FlowTimer { flow: 0, gen: 1 }),
                (3, Event::AckTimer { flow: 0, gen: 5 }),
                (3, Event::PortTx { port: 1, gen: 1 }),
                (5, Event::PortTx { port: 3, gen: 0 }),
            ]
        );
        assert_eq!(s.popped, 7);
    }

    /// The kept word turns back into the event it was made from at any instant, and orders
    /// events as their key and packed word do.
    #[test]
    fn the_sort_word_is_the_key_and_turns_back_into_the_event() {
        let mut rng = crate::rng::Rng::stream(11, 0, 0);
        for k in 0..8 {
            assert_eq!(KIND_OF_RANK[RANK[k] as usize], k as u64);
        }
        assert_eq!(PERMUTE_MUL.wrapping_mul(PERMUTE_INV), 1);
        let mut words = vec![];
        for _ in 0..20_000 {
            let t = rng.below(4) * 512 + rng.below(1 << 40);
            // any kind, id and generation (kinds without them pack to zeros)
            let e = Event::unpack((rng.below(8) << 61) | (rng.below(ID_MASK + 1) << 32) | (rng.next_u64() & 0xFFFF_FFFF));
            let w = e.pack();
            assert_eq!(event_of(t, sort_word(t, w)), w, "{e:?} at {t}");
            words.push((t, w));
        }
        // pairs at one instant, wires of one port among them
        for pair in words.chunks(2) {
            let (t, a) = pair[0];
            let b = if pair[1].1 >> 61 == 1 && a >> 61 == 1 { (a & !0xFFFF_FFFF) | (pair[1].1 & 0xFFFF_FFFF) } else { pair[1].1 };
            assert_eq!(sort_word(t, a).cmp(&sort_word(t, b)), (order_key(t, a), a).cmp(&(order_key(t, b), b)));
        }
    }

    /// A wire event's packet is a hint, not part of its order; one entity's events go by
    /// generation.
    #[test]
    fn a_wire_events_packet_does_not_order_it() {
        let a = Event::Wire { port: 6, pkt: 1 }.pack();
        let b = Event::Wire { port: 6, pkt: 999 }.pack();
        assert_eq!(order_key(7, a), order_key(7, b));
        let t1 = Event::FlowTimer { flow: 6, gen: 1 }.pack();
        let t2 = Event::FlowTimer { flow: 6, gen: 2 }.pack();
        assert!(order_key(7, t1) < order_key(7, t2));
    }

    /// No port wins every tie: among 16 ports meeting at each of 1,000 instants, each comes
    /// first at some instant, and none at more than a few times its share.
    #[test]
    fn no_port_is_first_at_every_instant() {
        let mut first = [0u32; 16];
        for t in 0..1000u64 {
            let time = t * 1_000_000;
            let best = (0..16u32).min_by_key(|&p| order_key(time, Event::Wire { port: 100 + p, pkt: 0 }.pack())).expect("ports");
            first[best as usize] += 1;
        }
        assert!(first.iter().all(|&n| n > 0 && n < 200), "{first:?}");
    }

    fn random_event(rng: &mut crate::rng::Rng) -> Event {
        let id = rng.below(50) as u32;
        let gen = rng.below(4) as u32;
        match rng.below(5) {
            0 => Event::PortTx { port: id, gen },
            1 => Event::Wire { port: id, pkt: rng.below(1000) as u32 },
            2 => Event::FlowTimer { flow: id, gen },
            3 => Event::AckTimer { flow: id, gen },
            _ => Event::FcTimer { sw: id, gen },
        }
    }

    /// The calendar queue pops exactly what a plain heap of `(time, order_key)` would, for a
    /// random mix of near, far and same-instant events pushed while popping.
    #[test]
    fn matches_a_plain_heap() {
        let mut rng = crate::rng::Rng::stream(3, 0, 0);
        let mut s = Scheduler::default();
        let mut reference = std::collections::BinaryHeap::new();
        let mut now = 0u64;
        let mut popped = vec![];
        let mut expect = vec![];
        for _ in 0..20_000u32 {
            let n = rng.below(3);
            for _ in 0..n {
                let ahead = match rng.below(5) {
                    0 => 0,
                    1 => rng.below(20_000),
                    2 => rng.below(2_000_000),
                    3 => rng.below(4),
                    _ => rng.below(2_000_000_000),
                };
                let t = now + ahead;
                let e = random_event(&mut rng);
                s.push(Time(t), e);
                reference.push(std::cmp::Reverse((t, order_key(t, e.pack()), e.pack())));
            }
            if rng.below(2) == 0 {
                if let Some((t, e)) = s.pop() {
                    now = t.0;
                    popped.push((t.0, e.pack()));
                    let std::cmp::Reverse((rt, _, rw)) = reference.pop().unwrap();
                    expect.push((rt, rw));
                }
            }
        }
        while let Some((t, e)) = s.pop() {
            popped.push((t.0, e.pack()));
            let std::cmp::Reverse((rt, _, rw)) = reference.pop().unwrap();
            expect.push((rt, rw));
        }
        assert!(reference.is_empty());
        assert_eq!(popped, expect);
    }
}
