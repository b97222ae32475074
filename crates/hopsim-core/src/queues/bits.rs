//! A set of queue indices of any width (a port may have 1024 data queues or more).
//!
//! Why not a plain `u64`: BFC needs 32 and 128 queues per port, FlowSail sweeps up to 128 and
//! Floodgate's VOQs go to 100, so a port's bitmaps must be wider than a machine word. Why not a
//! `Vec<u64>` alone: nearly every run has 8 queues, and the DRR fast path reads these sets on every
//! packet, so the first 64 queues live in an inline word and only wider ports touch the heap.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueBits {
    /// Queues 0..64.
    w0: u64,
    /// Queues 64.., 64 per word.
    rest: Vec<u64>,
}

impl QueueBits {
    /// An empty set able to hold queues `0..n`.
    pub fn with_capacity(n: usize) -> QueueBits {
        QueueBits { w0: 0, rest: vec![0; n.saturating_sub(64).div_ceil(64)] }
    }

    /// Whether every member fits the inline word (ports of at most 64 queues).
    #[inline]
    pub fn is_narrow(&self) -> bool {
        self.rest.is_empty()
    }

    /// Queues 0..64 as a word.
    #[inline]
    pub fn w0(&self) -> u64 {
        self.w0
    }

    /// Set queues 0..64 from a word (a narrow set's whole contents).
    #[inline]
    pub fn set_w0(&mut self, w: u64) {
        self.w0 = w;
    }

    #[inline]
    pub fn set(&mut self, q: usize) {
        if q < 64 {
            self.w0 |= 1 << q;
        } else {
            self.rest[(q - 64) / 64] |= 1 << (q % 64);
        }
    }

    #[inline]
    pub fn clear(&mut self, q: usize) {
        if q < 64 {
            self.w0 &= !(1 << q);
        } else {
            self.rest[(q - 64) / 64] &= !(1 << (q % 64));
        }
    }

    #[inline]
    pub fn put(&mut self, q: usize, on: bool) {
        if on {
            self.set(q)
        } else {
            self.clear(q)
        }
    }

    #[inline]
    pub fn has(&self, q: usize) -> bool {
        if q < 64 {
            self.w0 & (1 << q) != 0
        } else {
            self.rest[(q - 64) / 64] & (1 << (q % 64)) != 0
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.w0 == 0 && (self.rest.is_empty() || self.rest.iter().all(|&w| w == 0))
    }

    pub fn count(&self) -> usize {
        self.w0.count_ones() as usize + self.rest.iter().map(|w| w.count_ones() as usize).sum::<usize>()
    }

    /// The only member, if there is exactly one.
    #[inline]
    pub fn single(&self) -> Option<usize> {
        if self.rest.is_empty() {
            return (self.w0.count_ones() == 1).then(|| self.w0.trailing_zeros() as usize);
        }
        (self.count() == 1).then(|| self.first().expect("one member"))
    }

    /// Lowest member.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// Lowest member `>= from`.
    pub fn next_from(&self, from: usize) -> Option<usize> {
        if from < 64 {
            let m = self.w0 & (u64::MAX << from);
            if m != 0 {
                return Some(m.trailing_zeros() as usize);
            }
        }
        let start = from.saturating_sub(64);
        let mut wi = start / 64;
        while wi < self.rest.len() {
            let mut w = self.rest[wi];
            if wi == start / 64 && from >= 64 {
                w &= u64::MAX << (start % 64);
            }
            if w != 0 {
                return Some(64 + wi * 64 + w.trailing_zeros() as usize);
            }
            wi += 1;
        }
        None
    }

    /// First member at or after `from`, wrapping around past `n`: round-robin order.
    #[inline]
    pub fn next_cyclic(&self, from: usize) -> Option<usize> {
        self.next_from(from).or_else(|| self.first())
    }

    /// `self = a & !b & !c` word by word (the eligible set: non-empty, not closed, not held).
    #[inline]
    pub fn assign_and_not2(&mut self, a: &QueueBits, b: &QueueBits, c: &QueueBits) {
        self.w0 = a.w0 & !b.w0 & !c.w0;
        for i in 0..self.rest.len() {
            self.rest[i] = a.rest[i] & !b.rest[i] & !c.rest[i];
        }
    }

    /// `self = a & b`.
    #[inline]
    pub fn assign_and(&mut self, a: &QueueBits, b: &QueueBits) {
        self.w0 = a.w0 & b.w0;
        for i in 0..self.rest.len() {
            self.rest[i] = a.rest[i] & b.rest[i];
        }
    }

    /// `self &= !b`.
    #[inline]
    pub fn remove_all(&mut self, b: &QueueBits) {
        self.w0 &= !b.w0;
        for i in 0..self.rest.len() {
            self.rest[i] &= !b.rest[i];
        }
    }

    /// Whether `self & b` is non-empty.
    #[inline]
    pub fn intersects(&self, b: &QueueBits) -> bool {
        self.w0 & b.w0 != 0 || self.rest.iter().zip(&b.rest).any(|(x, y)| x & y != 0)
    }

    /// Members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        let mut next = self.first();
        std::iter::from_fn(move || {
            let q = next?;
            next = self.next_from(q + 1);
            Some(q)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_beyond_one_word_are_kept_and_found_in_order() {
        let mut b = QueueBits::with_capacity(1024);
        for q in [0, 63, 64, 127, 128, 500, 1023] {
            b.set(q);
        }
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 63, 64, 127, 128, 500, 1023]);
        assert_eq!(b.count(), 7);
        assert_eq!(b.next_from(129), Some(500));
        assert_eq!(b.next_from(1024), None);
        assert_eq!(b.next_cyclic(1000), Some(1023));
        b.clear(1023);
        assert_eq!(b.next_cyclic(1000), Some(0));
        assert!(b.has(500) && !b.has(501));
    }

    #[test]
    fn single_and_set_algebra() {
        let mut a = QueueBits::with_capacity(200);
        let mut closed = QueueBits::with_capacity(200);
        let held = QueueBits::with_capacity(200);
        a.set(3);
        a.set(150);
        closed.set(3);
        let mut e = QueueBits::with_capacity(200);
        e.assign_and_not2(&a, &closed, &held);
        assert_eq!(e.single(), Some(150));
        assert!(a.intersects(&closed));
        e.remove_all(&a);
        assert!(e.is_empty());
    }
}
