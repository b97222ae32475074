//! Floodgate's switch-wide VOQ pool (`voq_pool = "shared"` or `"grouped"`): the VOQs of the
//! paper's own switch (Fig. 5, §5.1: "the pipeline design makes it easy to share switch resources
//! such as flow tables and VOQ queues"; §7.2: one VOQ bitmap per switch), which §4.2's "VOQ
//! grouping" is about.
//!
//! Why a module of its own: in the per-port pool (the default) a VOQ belongs to one egress port,
//! so up- and down-going traffic never share one and Fig. 4's circular wait cannot form. To show
//! that circular wait (and that §4.2's groups remove it), the VOQs must be what the paper's switch
//! has: a pool shared by every egress port, each VOQ one FIFO, whose head alone may leave, and
//! only when the head's destination has window towards its egress port ("Only packets whose
//! destination has adequate sending windows can be forwarded", §7.3).
//!
//! How it maps onto the engine's queues: pool VOQ `v` (1..=n) is queue `v` of every egress port;
//! the pool keeps the FIFO order of the packets over the ports (`fifo[v]`, `(port, dst)` in
//! arrival order) and opens the gate of queue `v` only on the port of the FIFO's head, and only
//! while its destination has window. A packet behind the head waits, whatever its port: the
//! head-of-line blocking of one shared FIFO.
//!
//! Groups (§4.2): "in Floodgate's middle-layer switches which could forward downstream/upstream
//! traffic simultaneously ... VOQs are classified into two groups. A portion of VOQs are reserved
//! for downstream traffic, the left are for upstream traffic." A middle-layer switch is one with
//! switches both above and below it (a fat-tree's aggregation); on the others every VOQ serves the
//! one direction their traffic takes.
//!
//! Interpretation choices: a port is down-going when the node behind it is a host or a switch of
//! a lower tier, up-going otherwise; the down group is VOQs `1..=max(1, n/2)`, the up group the
//! rest (with `n = 1` both groups are that one VOQ, so grouping needs two VOQs); a destination is
//! in at most one VOQ of the switch at a time (the paper's "whether the data's destination host
//! has already been allocated with a VOQ"), and when its group has no free VOQ a hash of the
//! destination picks one in the group.

use std::collections::{HashMap, VecDeque};

/// The switch-wide pool of `n` VOQs.
#[derive(Debug, Default)]
pub(super) struct Pool {
    /// Per VOQ `v` (index `v - 1`): its packets' (egress port, destination, bytes) in arrival
    /// order.
    fifo: Vec<VecDeque<(u16, u32, u32)>>,
    /// Per VOQ: the destinations mapped to it.
    dsts: Vec<Vec<u32>>,
    /// Destination -> its VOQ.
    of_dst: HashMap<u32, u16>,
    /// Last VOQ of the down group (`n` when the switch is not grouped).
    down_end: u16,
}

impl Pool {
    /// A pool of `n` VOQs; `grouped`: split into a down and an up group.
    pub(super) fn new(n: usize, grouped: bool) -> Pool {
        let n16 = n as u16;
        Pool {
            fifo: (0..n).map(|_| VecDeque::new()).collect(),
            dsts: vec![vec![]; n],
            of_dst: HashMap::new(),
            down_end: if grouped { (n16 / 2).max(1) } else { n16 },
        }
    }

    /// The VOQ `dst` is in, if any.
    pub(super) fn voq_of(&self, dst: u32) -> Option<u16> {
        self.of_dst.get(&dst).copied()
    }

    /// The VOQs a packet leaving up (`up`) or down may take.
    fn group(&self, up: bool) -> std::ops::RangeInclusive<u16> {
        let n = self.fifo.len() as u16;
        if up && self.down_end < n {
            self.down_end + 1..=n
        } else if up {
            1..=n
        } else {
            1..=self.down_end
        }
    }

    /// Give `dst` a VOQ of its group: an empty one from the bitmap, else a hash of `dst` (§4.2).
    /// Returns the VOQ and whether it was free.
    pub(super) fn alloc(&mut self, dst: u32, up: bool, hash: impl Fn(u32) -> u64) -> (u16, bool) {
        let g = self.group(up);
        let free = g.clone().find(|&v| self.dsts[v as usize - 1].is_empty() && self.fifo[v as usize - 1].is_empty());
        let (v, was_free) = match free {
            Some(v) => (v, true),
            None => {
                let (lo, hi) = (*g.start(), *g.end());
                (lo + (hash(dst) % (hi - lo + 1) as u64) as u16, false)
            }
        };
        self.dsts[v as usize - 1].push(dst);
        self.of_dst.insert(dst, v);
        (v, was_free)
    }

    /// A packet of `size` bytes for `dst` leaving by `port` joined VOQ `v`: whether it is the
    /// head now.
    pub(super) fn push(&mut self, v: u16, port: u16, dst: u32, size: u32) -> bool {
        let f = &mut self.fifo[v as usize - 1];
        f.push_back((port, dst, size));
        f.len() == 1
    }

    /// The head of VOQ `v`: its port and destination.
    pub(super) fn head(&self, v: u16) -> Option<(u16, u32)> {
        self.fifo[v as usize - 1].front().map(|&(p, d, _)| (p, d))
    }

    /// The head of VOQ `v` with its bytes.
    pub(super) fn head_sized(&self, v: u16) -> Option<(u16, u32, u32)> {
        self.fifo[v as usize - 1].front().copied()
    }

    /// A packet for `dst` left queue `v` of `port`. It is the head unless the engine is emptying
    /// a port whose link went down (it empties port by port), hence the search.
    pub(super) fn pop(&mut self, v: u16, port: u16, dst: u32) {
        let f = &mut self.fifo[v as usize - 1];
        if f.front().is_some_and(|&(p, d, _)| (p, d) == (port, dst)) {
            f.pop_front();
        } else if let Some(i) = f.iter().position(|&(p, d, _)| (p, d) == (port, dst)) {
            f.remove(i);
        }
    }

    /// Whether VOQ `v` holds nothing.
    pub(super) fn is_empty(&self, v: u16) -> bool {
        self.fifo[v as usize - 1].is_empty()
    }

    /// Release drained VOQ `v`: its destinations go direct again.
    pub(super) fn release(&mut self, v: u16) {
        for d in self.dsts[v as usize - 1].drain(..) {
            self.of_dst.remove(&d);
        }
    }

    /// VOQs holding packets.
    pub(super) fn in_use(&self) -> usize {
        self.fifo.iter().filter(|f| !f.is_empty()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_split_the_pool_and_a_full_group_hashes_within_itself() {
        let mut p = Pool::new(4, true);
        // down group 1..=2, up group 3..=4
        assert_eq!(p.alloc(10, false, |_| 0), (1, true));
        p.push(1, 0, 10, 1000);
        assert_eq!(p.alloc(11, true, |_| 0), (3, true));
        p.push(3, 5, 11, 1000);
        assert_eq!(p.alloc(12, false, |_| 0), (2, true));
        p.push(2, 0, 12, 1000);
        // the down group is full: hashed within 1..=2, never into the up group
        assert_eq!(p.alloc(13, false, |_| 1), (2, false));
        assert_eq!(p.voq_of(13), Some(2));
        // ungrouped: one group of all four
        let mut s = Pool::new(4, false);
        for d in 0..4 {
            let (v, free) = s.alloc(d, d % 2 == 0, |_| 0);
            assert!(free);
            s.push(v, 0, d, 1000);
        }
        assert_eq!(s.alloc(9, true, |_| 2), (3, false));
    }

    #[test]
    fn fifo_order_spans_ports_and_release_unmaps() {
        let mut p = Pool::new(1, false);
        let (v, _) = p.alloc(7, true, |_| 0);
        assert!(p.push(v, 2, 7, 1000));
        assert!(!p.push(v, 0, 8, 500));
        assert_eq!(p.head_sized(v), Some((2, 7, 1000)));
        assert_eq!(p.head(v), Some((2, 7)));
        p.pop(v, 2, 7);
        assert_eq!(p.head(v), Some((0, 8)), "the packet of another port is next");
        p.pop(v, 0, 8);
        assert!(p.is_empty(v));
        p.release(v);
        assert_eq!(p.voq_of(7), None);
        assert_eq!(p.in_use(), 0);
    }
}
