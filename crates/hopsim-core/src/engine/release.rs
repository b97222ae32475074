//! A split run frees a flow's two halves once nothing can touch it any more, as one thread does
//! (`net::flow_store`), by a decision every partition takes alike at a window's end.
//!
//! Why a decision and not each partition on its own: a flow's packets are counted (`Flow::in_net`)
//! in the partition that handles them, so no one partition's count reaches zero by itself. A data
//! packet is counted in where its sender makes it and out where its receiver takes it (its count
//! there wraps below zero); a packet that crosses a partition holding no state of the flow and is
//! dropped there is counted out by no one (`Simulation::flow_dropped`). The sum over every
//! partition, less those drops, is the flow's packets alive, exactly.
//!
//! So, at each window's end (after the window's messages were taken in, when every packet is in
//! some partition's slab):
//! - a partition whose sender half of a flow is done (`Simulation::sender_finished`) posts that
//!   half (its count, its drops) and posts it again whenever either changes; the partition of its
//!   receiver, which holds every byte by then (the last ACK acknowledges them), sees that post and
//!   does the same for its half from the next window's end on;
//! - a partition that drops a packet of a flow it holds no state of posts the drop;
//! - every partition applies every post, in partition order, to its copy of the board, and frees
//!   the flows whose two halves are posted and whose counts sum to the drops posted: each
//!   partition its state or its fixed data (`FlowStore::release_split`, `FlowStore::forget`).
//!
//! The decision comes a window or two after the one-thread run would free the flow; nothing reads
//! the flow in between but its own late packets, which the counts include. Results do not depend
//! on when the state goes (a slot's number reaches no table), so the tables are the one-thread
//! run's. With a sink, the partition of the flow's sender writes its whole row then (the
//! receiver's finish and bytes come with the receiver's post) into `Part::released`, which the
//! sink takes with the time-growing tables (`parallel::spill_across`): a long run on many threads
//! holds the state of the flows in flight, not of every flow it ran.

use crate::net::flow_store::Elsewhere;
use crate::sim::Simulation;
use std::collections::{BTreeMap, HashMap};

/// One half of a flow as its partition posts it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Half {
    /// The partition's count of the flow's packets (wrapping: see the module docs).
    pub in_net: u32,
    /// Payload bytes of the flow dropped in this partition.
    pub dropped: u64,
    /// The receiver's finish and bytes held (a receiver half's; zero for a sender's).
    pub finish_ps: u64,
    pub delivered: u64,
}

/// What a partition tells the others about flows at a window's end.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Post {
    /// Flow `flow`'s half that runs here: its sender's (`sender`), its receiver's, or both.
    Half { flow: u32, sender: bool, receiver: bool, half: Half },
    /// Packets of `flow` (with `bytes` of payload) dropped here, where it has no state.
    Foreign { flow: u32, packets: u32, bytes: u64 },
}

/// Every partition's copy of what was posted about a flow not freed yet.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Entry {
    sender: Option<Half>,
    receiver: Option<Half>,
    /// The sender's post covers the receiver too (one partition holds both ends).
    both: bool,
    foreign_packets: u32,
    foreign_bytes: u64,
}

impl Entry {
    /// Both halves posted and no packet of the flow alive anywhere.
    fn quiet(&self) -> bool {
        let Some(s) = self.sender else { return false };
        let r = match (self.both, self.receiver) {
            (true, _) => 0,
            (false, Some(r)) => r.in_net,
            (false, None) => return false,
        };
        s.in_net.wrapping_add(r) == self.foreign_packets
    }
}

/// A partition's side of the decisions (in `engine::Part`).
#[derive(Default)]
pub(crate) struct Releases {
    /// Flows with a half done here, and that half as last posted (`None`: not yet).
    watch: BTreeMap<u32, Option<Half>>,
    /// Drops of flows with no state here since the last post.
    foreign: Vec<Post>,
    /// The board: every partition's posts about flows not freed yet.
    board: HashMap<u32, Entry>,
    /// Rows of freed flows written here (the sender's partition), for the sink.
    pub rows: crate::stats::FlowTable,
    /// Rows with a finish time this partition handed out over the run: those of freed flows,
    /// and (partition 0) the end rows of `parallel::end_rows_to_sink`.
    pub finished_rows: u64,
}

impl Releases {
    /// The sender half of flow `f` is done here: post it from this window's end on.
    pub(crate) fn sender_done(&mut self, f: u32) {
        self.watch.insert(f, None);
    }

    /// A packet of flow `f` with `bytes` of payload was dropped here, where `f` has no state.
    pub(crate) fn foreign_drop(&mut self, f: u32, bytes: u64) {
        self.foreign.push(Post::Foreign { flow: f, packets: 1, bytes });
    }
}

impl Simulation {
    /// This partition's posts at a window's end (see the module docs).
    pub(crate) fn release_posts(&mut self) -> Vec<Post> {
        let Some(part) = self.part.as_deref_mut() else { return vec![] };
        let mut posts = std::mem::take(&mut part.releases.foreign);
        let (me, of) = (part.me, &part.dest);
        for (&f, last) in part.releases.watch.iter_mut() {
            let Some(flow) = self.flows.get(f) else { continue };
            let (sender, receiver) = (of[flow.spec.src as usize] == me, of[flow.spec.dst as usize] == me);
            let half = Half {
                in_net: flow.in_net,
                dropped: flow.dropped_bytes,
                finish_ps: if receiver { flow.finish.map_or(u64::MAX, |t| t.0) } else { 0 },
                delivered: if receiver { flow.rcv_nxt } else { 0 },
            };
            if *last != Some(half) {
                *last = Some(half);
                posts.push(Post::Half { flow: f, sender, receiver, half });
            }
        }
        posts
    }

    /// Apply every partition's posts (`all[k]`: partition `k`'s, this window's end) and free the
    /// flows they let go; every partition takes the same decisions.
    pub(crate) fn apply_release_posts(&mut self, all: &[&[Post]]) {
        let Some(part) = self.part.as_deref_mut() else { return };
        let mut touched = vec![];
        for post in all.iter().flat_map(|p| p.iter()) {
            match *post {
                Post::Half { flow, sender, receiver, half } => {
                    let e = part.releases.board.entry(flow).or_default();
                    if sender {
                        e.sender = Some(half);
                        e.both = receiver;
                        // the receiver's partition posts its half from now on
                        let dst = self.flows.fixed(flow).spec.dst;
                        if !receiver && part.owns(dst) {
                            part.releases.watch.entry(flow).or_insert(None);
                        }
                    } else {
                        e.receiver = Some(half);
                    }
                    touched.push(flow);
                }
                Post::Foreign { flow, packets, bytes } => {
                    let e = part.releases.board.entry(flow).or_default();
                    e.foreign_packets = e.foreign_packets.wrapping_add(packets);
                    e.foreign_bytes += bytes;
                    touched.push(flow);
                }
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let now = self.now;
        for f in touched {
            let part = self.part.as_deref_mut().expect("a split run");
            let e = part.releases.board[&f];
            if !e.quiet() {
                continue;
            }
            part.releases.board.remove(&f);
            part.releases.watch.remove(&f);
            let rows_out = self.flows.rows_out();
            if rows_out {
                // the row (the sender's partition's) counts these
                part.dropped.remove(&f);
            }
            let spec = self.flows.fixed(f).spec;
            let (sender, receiver) = (part.owns(spec.src), part.owns(spec.dst));
            // (its sender's partition let its routes go when the sender finished)
            self.route_memo.release(f);
            if !sender && !receiver {
                self.flows.forget(f);
                continue;
            }
            let rec = e.receiver.filter(|_| !e.both);
            let elsewhere = Elsewhere {
                receiver: rec.map(|h| (h.finish_ps, h.delivered)),
                dropped: rec.map_or(0, |h| h.dropped) + e.foreign_bytes,
            };
            let before = self.flows.finished_rows();
            self.flows.release_split(f, now, sender, &elsewhere, &mut part.releases.rows);
            part.releases.finished_rows += self.flows.finished_rows() - before;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn half(in_net: u32) -> Option<Half> {
        Some(Half { in_net, ..Default::default() })
    }

    #[test]
    fn a_flow_is_quiet_when_its_halves_counts_sum_to_the_drops_no_one_counted() {
        // a data packet made by the sender (+1) and taken by the receiver (-1, wrapped)
        let e = Entry { sender: half(1), receiver: half(u32::MAX), ..Default::default() };
        assert!(e.quiet());
        // one half not posted yet: its count is not known
        assert!(!Entry { receiver: None, ..e }.quiet());
        assert!(!Entry { sender: None, ..e }.quiet());
        // a packet still on its way
        assert!(!Entry { sender: half(2), ..e }.quiet());
        // ... dropped where the flow has no state: counted out by the drop's post
        assert!(Entry { sender: half(2), foreign_packets: 1, ..e }.quiet());
        // one partition with both ends: its count alone, whatever a stale receiver post says
        assert!(Entry { sender: half(0), receiver: half(7), both: true, ..Default::default() }.quiet());
        assert!(!Entry { sender: half(1), both: true, ..Default::default() }.quiet());
    }
}
