//! The data-queue scheduler of one port: which eligible (non-empty, gate open, not held by a
//! marker) queue sends next.
//!
//! - `Drr`: deficit round robin over every eligible queue, one MTU-sized quantum per visit (the
//!   default; fair queuing among BFC's per-flow queues).
//! - `Strict { queues }`: the listed queues strictly before the rest, lowest index first, and DRR
//!   among the rest (Floodgate serves its non-incast queue strictly before the VOQs, §3.2).
//! - `Rank`: the eligible queue whose head packet carries the smallest rank tag (ties: lowest
//!   index). The sending host writes the flow's remaining bytes into every data packet
//!   (`Tags::rank`), which makes this shortest-remaining-flow-first, BFC's SRF variant (App. E.2);
//!   a module's `stamp` may rewrite it hop by hop.
//! - `Rr`: plain round robin, one packet per visit whatever its size, from the queue after the
//!   last one served: the BFC paper's simulator (BFC_NS3_NSDI2022, `BEgressQueue::DoDequeueRR`,
//!   broadcom-egress-queue.cc:193-276, `m_rrlast`). With packets of mixed sizes it shares a link
//!   by packets, not bytes, as DRR does. (A queue that is alone eligible is served without the
//!   scheduler, as under DRR, so the pointer stays where the last contested pick left it.)
//!
//! Why the DRR walks by jumps: with 128 or 1024 queues, stepping the round-robin pointer one index
//! at a time costs a scan of the whole port per packet. Only two kinds of index do anything when
//! the pointer visits them: an eligible queue (it is credited and maybe served) and an empty queue
//! that still holds a deficit (it is reset). The walk jumps from one such index to the next and
//! counts the skipped visits, so it makes the very same choices, deficits and pointer moves as the
//! plain one-step loop, visit budget (`2n + 1` visits per pick) included; a unit test checks it
//! against that loop.

use super::bits::QueueBits;
use serde::{Deserialize, Serialize};

/// Which discipline a port uses among its data queues (control frames always go first).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SchedulerConfig {
    #[default]
    Drr,
    /// These queues strictly first (lowest index first), DRR among the others.
    Strict { queues: Vec<u16> },
    /// Smallest head-of-queue rank tag first.
    Rank,
    /// One packet per visit, in index order from after the last queue served.
    Rr,
}

pub struct Sched {
    kind: Kind,
    pub quantum: u32,
    deficit: Vec<u32>,
    /// Queues whose deficit is not zero.
    deficit_nz: QueueBits,
    credited: bool,
    rr: usize,
    /// Scratch: empty queues holding a deficit.
    stale: QueueBits,
    /// Scratch: eligible queues outside the strict set.
    rest: QueueBits,
}

enum Kind {
    Drr,
    Strict(QueueBits),
    Rank,
    Rr,
}

impl Sched {
    pub fn new(cfg: &SchedulerConfig, nqueues: usize, quantum: u32) -> Sched {
        let kind = match cfg {
            SchedulerConfig::Drr => Kind::Drr,
            SchedulerConfig::Strict { queues } => {
                let mut s = QueueBits::with_capacity(nqueues);
                for &q in queues {
                    if (q as usize) < nqueues {
                        s.set(q as usize);
                    }
                }
                Kind::Strict(s)
            }
            SchedulerConfig::Rank => Kind::Rank,
            SchedulerConfig::Rr => Kind::Rr,
        };
        Sched {
            kind,
            quantum,
            deficit: vec![0; nqueues],
            deficit_nz: QueueBits::with_capacity(nqueues),
            credited: false,
            rr: 0,
            stale: QueueBits::with_capacity(nqueues),
            rest: QueueBits::with_capacity(nqueues),
        }
    }

    /// Choose among the eligible queues `elig` (non-empty ones are `nonempty`); `head_size(q)` and
    /// `head_rank(q)` read the head packet of queue `q`.
    #[inline]
    pub fn pick(
        &mut self,
        elig: &QueueBits,
        nonempty: &QueueBits,
        head_size: impl Fn(usize) -> u32,
        head_rank: impl Fn(usize) -> u64,
    ) -> Option<usize> {
        match &self.kind {
            Kind::Drr => self.drr(elig, nonempty, head_size),
            Kind::Strict(s) => {
                if elig.intersects(s) {
                    return elig.iter().find(|&q| s.has(q));
                }
                let mut rest = std::mem::take(&mut self.rest);
                rest.assign_and(elig, elig);
                rest.remove_all(s);
                let r = self.drr(&rest, nonempty, head_size);
                self.rest = rest;
                r
            }
            Kind::Rr => {
                let q = elig.next_cyclic(self.rr)?;
                self.rr = (q + 1) % self.deficit.len().max(1);
                Some(q)
            }
            Kind::Rank => {
                let mut best: Option<(u64, usize)> = None;
                for q in elig.iter() {
                    let r = head_rank(q);
                    if best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, q));
                    }
                }
                best.map(|(_, q)| q)
            }
        }
    }

    /// Deficit round robin (see the module doc for why it jumps).
    fn drr(&mut self, elig: &QueueBits, nonempty: &QueueBits, head_size: impl Fn(usize) -> u32) -> Option<usize> {
        if elig.is_empty() {
            return None;
        }
        // A queue that is alone eligible is served directly: DRR would give it every turn anyway.
        if let Some(q) = elig.single() {
            return Some(q);
        }
        let n = self.deficit.len();
        let budget = 2 * n + 1;
        let mut steps = 0;
        let mut stale = std::mem::take(&mut self.stale);
        stale.assign_and(&self.deficit_nz, &self.deficit_nz);
        stale.remove_all(nonempty);
        let dist = |from: usize, to: usize| (to + n - from) % n;
        let out = loop {
            let a = elig.next_cyclic(self.rr);
            let b = stale.next_cyclic(self.rr);
            let q = match (a, b) {
                (Some(a), Some(b)) => {
                    if dist(self.rr, b) < dist(self.rr, a) {
                        b
                    } else {
                        a
                    }
                }
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (None, None) => break None,
            };
            let d = dist(self.rr, q);
            if steps + d >= budget {
                // the budget runs out on no-op visits before reaching q
                let left = budget - steps;
                if left > 0 {
                    self.credited = false;
                }
                self.rr = (self.rr + left) % n;
                break None;
            }
            if d > 0 {
                self.credited = false;
            }
            self.rr = q;
            steps += d;
            if elig.has(q) {
                if !self.credited {
                    self.deficit[q] += self.quantum;
                    self.deficit_nz.set(q);
                    self.credited = true;
                }
                let size = head_size(q);
                if self.deficit[q] >= size {
                    self.deficit[q] -= size;
                    self.deficit_nz.put(q, self.deficit[q] != 0);
                    break Some(q);
                }
            } else {
                // an empty queue forgets its deficit when the pointer passes it
                self.deficit[q] = 0;
                self.deficit_nz.clear(q);
                stale.clear(q);
            }
            self.credited = false;
            self.rr = (q + 1) % n;
            steps += 1;
            if steps >= budget {
                break None;
            }
        };
        self.stale = stale;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The one-step DRR loop the jumping walk must reproduce exactly.
    struct Plain {
        deficit: Vec<u32>,
        credited: bool,
        rr: usize,
        quantum: u32,
    }

    impl Plain {
        fn pick(&mut self, elig: &[bool], nonempty: &[bool], size: &[u32]) -> Option<usize> {
            let n = elig.len();
            let ne = elig.iter().filter(|&&e| e).count();
            if ne == 0 {
                return None;
            }
            if ne == 1 {
                return elig.iter().position(|&e| e);
            }
            for _ in 0..(2 * n + 1) {
                let q = self.rr;
                if elig[q] {
                    if !self.credited {
                        self.deficit[q] += self.quantum;
                        self.credited = true;
                    }
                    if self.deficit[q] >= size[q] {
                        self.deficit[q] -= size[q];
                        return Some(q);
                    }
                } else if !nonempty[q] {
                    self.deficit[q] = 0;
                }
                self.credited = false;
                self.rr = (q + 1) % n;
            }
            None
        }
    }

    #[test]
    fn jumping_drr_makes_the_same_choices_as_the_one_step_loop() {
        for &(n, quantum) in &[(8usize, 1500u32), (70, 1500), (130, 700), (5, 300)] {
            let mut rng = Rng::stream(9, 0, n as u64);
            let mut s = Sched::new(&SchedulerConfig::Drr, n, quantum);
            let mut p = Plain { deficit: vec![0; n], credited: false, rr: 0, quantum };
            for _ in 0..20_000 {
                let nonempty: Vec<bool> = (0..n).map(|_| rng.below(3) == 0).collect();
                let elig: Vec<bool> = nonempty.iter().map(|&x| x && rng.below(4) != 0).collect();
                let size: Vec<u32> = (0..n).map(|_| 64 + rng.below(1400) as u32).collect();
                let (mut e, mut ne) = (QueueBits::with_capacity(n), QueueBits::with_capacity(n));
                for q in 0..n {
                    e.put(q, elig[q]);
                    ne.put(q, nonempty[q]);
                }
                let a = s.pick(&e, &ne, |q| size[q], |_| 0);
                let b = p.pick(&elig, &nonempty, &size);
                assert_eq!(a, b);
                assert_eq!((s.rr, s.credited), (p.rr, p.credited));
                assert_eq!(s.deficit, p.deficit);
            }
        }
    }

    #[test]
    fn strict_queues_go_first_and_rank_picks_the_smallest_head() {
        let n = 10;
        let mut strict = Sched::new(&SchedulerConfig::Strict { queues: vec![7] }, n, 1500);
        let mut e = QueueBits::with_capacity(n);
        e.set(2);
        e.set(7);
        e.set(9);
        assert_eq!(strict.pick(&e, &e, |_| 1000, |_| 0), Some(7));
        e.clear(7);
        let first = strict.pick(&e, &e, |_| 1000, |_| 0).unwrap();
        assert!(first == 2 || first == 9);
        let mut rank = Sched::new(&SchedulerConfig::Rank, n, 1500);
        e.set(7);
        let ranks = [0u64, 0, 50, 0, 0, 0, 0, 20, 0, 90];
        assert_eq!(rank.pick(&e, &e, |_| 1000, |q| ranks[q]), Some(7));
    }

    /// Round robin serves one packet per visit whatever its size (BFC_NS3_NSDI2022's
    /// DoDequeueRR): a queue of 1,020 B packets and one of 100 B packets alternate packet by
    /// packet, where DRR (quantum 1,500 B) gives the small packets' queue about 10x the packets.
    #[test]
    fn round_robin_alternates_packets_whatever_their_size() {
        let n = 4;
        let size = |q: usize| if q == 1 { 1020 } else { 100 };
        let mut e = QueueBits::with_capacity(n);
        e.set(1);
        e.set(3);
        let served = |cfg: SchedulerConfig| {
            let mut s = Sched::new(&cfg, n, 1500);
            let picks: Vec<usize> = (0..40).map(|_| s.pick(&e, &e, size, |_| 0).unwrap()).collect();
            picks.iter().filter(|&&q| q == 3).count()
        };
        assert_eq!(served(SchedulerConfig::Rr), 20, "one packet each per round");
        assert!(served(SchedulerConfig::Drr) > 30, "DRR shares bytes: the small packets' queue sends more packets");
        // the pointer moves on from the last queue served
        let mut s = Sched::new(&SchedulerConfig::Rr, n, 1500);
        e.set(0);
        let order: Vec<usize> = (0..6).map(|_| s.pick(&e, &e, size, |_| 0).unwrap()).collect();
        assert_eq!(order, vec![0, 1, 3, 0, 1, 3]);
    }
}
