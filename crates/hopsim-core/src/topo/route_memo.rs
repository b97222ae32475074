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

#[derive(Default)]
pub struct RouteMemo {
    /// Entry of each flow, or NONE / DONE.
    slot: Vec<u32>,
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
        RouteMemo { slot: vec![NONE; flows], entries: Vec::new(), free: Vec::new(), off: false }
    }

    /// A memo that remembers nothing: every route is computed.
    pub fn off() -> RouteMemo {
        RouteMemo { off: true, ..Default::default() }
    }

    /// Make room for flows added after the memo was made (`Simulation::add_flow`).
    pub fn grow(&mut self, flows: usize) {
        if !self.off && self.slot.len() < flows {
            self.slot.resize(flows, NONE);
        }
    }

    /// The port learned for `flow` at `key`, if any.
    #[inline]
    pub fn get(&self, flow: u32, key: u32) -> Option<u32> {
        let s = *self.slot.get(flow as usize)?;
        let e = self.entries.get(s as usize)?;
        let n = e.len as usize;
        e.hops[..n].iter().find(|&&(k, _)| k == key).map(|&(_, p)| p)
    }

    /// Remember that `flow` leaves the node of `key` by `port` (nothing for a finished flow, or
    /// once its entry is full).
    pub fn put(&mut self, flow: u32, key: u32, port: u32) {
        let Some(&s) = self.slot.get(flow as usize) else { return };
        let s = match s {
            DONE => return,
            NONE => {
                let s = self.free.pop().unwrap_or_else(|| {
                    self.entries.push(EMPTY);
                    self.entries.len() as u32 - 1
                });
                self.entries[s as usize].len = 0;
                self.slot[flow as usize] = s;
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

    /// `flow` finished: its entry goes back to the pool.
    pub fn release(&mut self, flow: u32) {
        let Some(s) = self.slot.get_mut(flow as usize) else { return };
        if *s != NONE && *s != DONE {
            self.free.push(*s);
        }
        *s = DONE;
    }

    /// Forget every route (the tables changed), keeping which flows finished.
    pub fn clear(&mut self) {
        for s in self.slot.iter_mut() {
            if *s != DONE {
                *s = NONE;
            }
        }
        self.free.clear();
        self.entries.clear();
    }

    /// Entries in use (flows holding routes).
    pub fn in_use(&self) -> usize {
        self.entries.len() - self.free.len()
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
}
