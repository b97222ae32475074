//! Each running flow's egress port at every switch it has crossed, so that a switch looks a
//! packet's route up in a few compares instead of hashing and indexing the ECMP tables per hop.
//!
//! Why it is exact: a route is a pure function of (node, flow, direction) — hopsim's ECMP hashes
//! the flow's fixed hash at the node, the HPCC simulator's hashes the flow's five-tuple with the
//! reply bit (`Simulation::route`) — so the first packet of a flow in each direction learns the
//! answer every later one would compute. The memo is a cache, never a source: a miss computes the
//! route as before, and a link fault, which rebuilds the tables, empties it.
//!
//! Why per running flow and not per flow: only flows that have started and not finished hold an
//! entry (a slot reused once the flow ends), so memory follows the flows in flight, not the
//! workload's length. Packets of a finished flow still in flight (late ACKs, duplicate
//! retransmissions) take the uncached path.

/// Keys and ports one entry holds: the data path and the reply path of a 3-tier fat-tree
/// (at most 5 switches each) fit; a longer path caches its first hops and computes the rest.
const HOPS: usize = 10;
/// A flow that has no entry yet.
const NONE: u32 = u32::MAX;
/// A flow that finished: its late packets are routed without caching.
const DONE: u32 = u32::MAX - 1;

/// One flow's hops: `len` first, then (key, port) pairs side by side, on a cache-line boundary, so
/// that a look-up of the first seven hops (every data hop of a 3-tier fat-tree, and the first
/// two of its ACKs) reads one line: with keys and ports in separate arrays an entry straddled
/// lines, and the look-up missed twice per hop on a 1024-host fat-tree.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Entry {
    len: u32,
    /// `node << 1 | reply` of each hop learned so far, and the port it leaves by.
    hops: [(u32, u32); HOPS],
}

const EMPTY: Entry = Entry { len: 0, hops: [(0, 0); HOPS] };

/// log2 of the flow ids in a chunk of slots. A chunk goes once all its flows finished, so the
/// slots follow the flows in flight (a long flow keeps its chunk, 4 KB), not the run's length.
const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNK_MASK: usize = CHUNK - 1;

/// The entry (or NONE / DONE) of `CHUNK` consecutive flow ids.
struct SlotChunk {
    slot: [u32; CHUNK],
    /// Flows of the chunk that finished.
    done: u32,
}

#[derive(Default)]
pub struct RouteMemo {
    /// Entry of each flow, or NONE / DONE, by `flow >> CHUNK_BITS`; `None` once every flow of the
    /// chunk finished (a finished flow's late packets find no slot, as they find DONE).
    chunks: Vec<Option<Box<SlotChunk>>>,
    /// Chunks held now and at the most.
    held: usize,
    peak_held: usize,
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// Remember nothing (`Simulation::use_no_route_memo`).
    off: bool,
}

/// The memo's key of `node` for a data packet (`reply == false`) or an ACK, NACK or CNP.
#[inline]
pub fn key(node: u32, reply: bool) -> u32 {
    node << 1 | reply as u32
}

impl RouteMemo {
    pub fn new(flows: usize) -> RouteMemo {
        let mut m = RouteMemo::default();
        m.grow(flows);
        m
    }

    /// A memo that remembers nothing: every route is computed.
    pub fn off() -> RouteMemo {
        RouteMemo { off: true, ..Default::default() }
    }

    /// Make room for flows `0..flows` (`Simulation::add_flow`, and flows made as they arrive).
    pub fn grow(&mut self, flows: usize) {
        while !self.off && self.chunks.len() << CHUNK_BITS < flows {
            self.chunks.push(Some(Box::new(SlotChunk { slot: [NONE; CHUNK], done: 0 })));
            self.held += 1;
            self.peak_held = self.peak_held.max(self.held);
        }
    }

    #[inline]
    fn slot(&self, flow: u32) -> Option<u32> {
        let c = self.chunks.get(flow as usize >> CHUNK_BITS)?.as_deref()?;
        Some(c.slot[flow as usize & CHUNK_MASK])
    }

    /// The port learned for `flow` at `key`, if any.
    #[inline]
    pub fn get(&self, flow: u32, key: u32) -> Option<u32> {
        let s = self.slot(flow)?;
        let e = self.entries.get(s as usize)?;
        let n = e.len as usize;
        e.hops[..n].iter().find(|&&(k, _)| k == key).map(|&(_, p)| p)
    }

    /// Remember that `flow` leaves the node of `key` by `port` (nothing for a finished flow, or
    /// once its entry is full).
    pub fn put(&mut self, flow: u32, key: u32, port: u32) {
        let Some(c) = self.chunks.get_mut(flow as usize >> CHUNK_BITS).and_then(|c| c.as_deref_mut()) else { return };
        let s = match c.slot[flow as usize & CHUNK_MASK] {
            DONE => return,
            NONE => {
                let s = self.free.pop().unwrap_or_else(|| {
                    self.entries.push(EMPTY);
                    self.entries.len() as u32 - 1
                });
                self.entries[s as usize].len = 0;
                c.slot[flow as usize & CHUNK_MASK] = s;
                s
            }
            s => s,
        };
        let e = &mut self.entries[s as usize];
        let n = e.len as usize;
        if n < HOPS {
            e.hops[n] = (key, port);
            e.len += 1;
        }
    }

    /// `flow` finished: its entry goes back to the pool, and its chunk once all its flows did.
    pub fn release(&mut self, flow: u32) {
        let i = flow as usize >> CHUNK_BITS;
        let Some(c) = self.chunks.get_mut(i).and_then(|c| c.as_deref_mut()) else { return };
        let s = &mut c.slot[flow as usize & CHUNK_MASK];
        if *s == DONE {
            return;
        }
        if *s != NONE {
            self.free.push(*s);
        }
        *s = DONE;
        c.done += 1;
        if c.done as usize == CHUNK {
            self.chunks[i] = None;
            self.held -= 1;
        }
    }

    /// Forget every route (the tables changed), keeping which flows finished.
    pub fn clear(&mut self) {
        for c in self.chunks.iter_mut().flatten() {
            for s in c.slot.iter_mut() {
                if *s != DONE {
                    *s = NONE;
                }
            }
        }
        self.free.clear();
        self.entries.clear();
    }

    /// Entries in use (flows holding routes).
    pub fn in_use(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Chunks of slots held now.
    pub fn chunks_held(&self) -> usize {
        self.held
    }

    /// The most chunks of slots held at once.
    pub fn peak_chunks(&self) -> usize {
        self.peak_held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_per_flow_node_and_direction() {
        let mut m = RouteMemo::new(3);
        assert_eq!(m.get(0, key(7, false)), None);
        m.put(0, key(7, false), 41);
        m.put(0, key(7, true), 40);
        m.put(1, key(7, false), 43);
        assert_eq!(m.get(0, key(7, false)), Some(41));
        assert_eq!(m.get(0, key(7, true)), Some(40));
        assert_eq!(m.get(1, key(7, false)), Some(43));
        assert_eq!(m.get(1, key(7, true)), None);
        assert_eq!(m.get(2, key(7, false)), None);
    }

    #[test]
    fn a_finished_flow_gives_its_entry_back_and_is_not_cached_again() {
        let mut m = RouteMemo::new(2);
        m.put(0, key(1, false), 5);
        m.release(0);
        assert_eq!(m.in_use(), 0);
        assert_eq!(m.get(0, key(1, false)), None);
        m.put(0, key(1, false), 5);
        assert_eq!(m.get(0, key(1, false)), None, "late packets of a finished flow are not cached");
        // the next flow reuses the entry, starting empty
        m.put(1, key(2, false), 9);
        assert_eq!(m.in_use(), 1);
        assert_eq!(m.get(1, key(1, false)), None);
        assert_eq!(m.get(1, key(2, false)), Some(9));
    }

    #[test]
    fn a_full_entry_keeps_its_first_hops_and_clear_forgets_all() {
        let mut m = RouteMemo::new(1);
        for n in 0..(HOPS as u32 + 3) {
            m.put(0, key(n, false), 100 + n);
        }
        assert_eq!(m.get(0, key(0, false)), Some(100));
        assert_eq!(m.get(0, key(HOPS as u32 - 1, false)), Some(100 + HOPS as u32 - 1));
        assert_eq!(m.get(0, key(HOPS as u32, false)), None);
        m.clear();
        assert_eq!(m.get(0, key(0, false)), None);
        assert_eq!(m.in_use(), 0);
    }

    #[test]
    fn a_chunk_goes_once_all_its_flows_finished_and_its_late_packets_are_not_cached() {
        let mut m = RouteMemo::new(2 * CHUNK + 1);
        assert_eq!(m.chunks_held(), 3);
        for f in 0..CHUNK as u32 {
            m.put(f, key(1, false), 7);
            // a second release of a flow counts once
            m.release(f);
            m.release(f);
        }
        m.put(CHUNK as u32, key(1, false), 8);
        assert_eq!(m.chunks_held(), 2, "the first chunk's flows all finished");
        assert_eq!(m.in_use(), 1);
        m.put(3, key(1, false), 9);
        assert_eq!(m.get(3, key(1, false)), None);
        assert_eq!(m.get(CHUNK as u32, key(1, false)), Some(8));
        // a chunk with one flow still running stays
        for f in CHUNK as u32 + 1..2 * CHUNK as u32 {
            m.release(f);
        }
        assert_eq!(m.chunks_held(), 2);
        m.release(CHUNK as u32);
        assert_eq!((m.chunks_held(), m.in_use()), (1, 0));
    }
}
