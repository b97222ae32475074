//! ECMP routing over shortest paths: per node and destination host, every egress port that lies
//! on a shortest (hop-count) path.
//!
//! Why hop-count ECMP: it is what the papers' fabrics run (BFC §6: "flow-level ECMP"; HPCC's
//! ns-3 code installs every shortest-path next hop), and on Clos topologies shortest paths are
//! exactly the up-down paths. Hosts are endpoints only: a path never transits a host other than
//! its destination. Tables are flattened and de-duplicated (a switch sends every destination of
//! a remote pod through the same port set), and single-homed hosts get no row at all, because
//! their only port is their only route.

use super::{NodeKind, Topology};
use crate::rng::mix;
use std::collections::{HashMap, VecDeque};

/// `(port at n, node at the other end)` per node `n`, in increasing port order.
pub(crate) fn adjacency(topo: &Topology) -> Vec<Vec<(u32, u32)>> {
    adjacency_up(topo, &[])
}

/// `adjacency` without the links marked down (`down[l]`; links beyond `down` are up).
fn adjacency_up(topo: &Topology, down: &[bool]) -> Vec<Vec<(u32, u32)>> {
    let mut adj = vec![Vec::new(); topo.nodes.len()];
    for (l, s) in topo.links.iter().enumerate() {
        if down.get(l).copied().unwrap_or(false) {
            continue;
        }
        let l = l as u32;
        adj[s.a as usize].push((2 * l, s.b));
        adj[s.b as usize].push((2 * l + 1, s.a));
    }
    adj
}

/// How each node's candidate next hops are listed: by port, or as the seed simulators'
/// `CalculateRoute` lists them (`topo::ecmp_hpcc`): a BFS from each destination whose neighbour
/// maps iterate in ascending node id, or in descending node id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HopOrder {
    #[default]
    Ports,
    Ids,
    IdsDescending,
}

/// What `Routes::pick` and `Routes::pick_index` return when a node has no route to a destination
/// (a link failure cut it off, `crate::faults`): not a port.
pub const NO_ROUTE: u32 = u32::MAX;

/// The ports of every node, in increasing port order (port numbering as in `topo`'s module doc).
/// Panics if a link names an unknown node (`Topology::validate` catches that first).
pub fn node_ports(topo: &Topology) -> Vec<Vec<u32>> {
    adjacency(topo).into_iter().map(|v| v.into_iter().map(|(p, _)| p).collect()).collect()
}

const NONE: u32 = u32::MAX;

/// A candidate list: `pool[start .. start + len]`. (`len` is `u32`: the struct is 8 bytes either
/// way, and no port count can overflow it.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    start: u32,
    len: u32,
}

/// Shortest-path ECMP next hops for every (node, destination host) pair.
///
/// Destinations share columns. A single-homed host `d` on switch `t` is reached from every node
/// but `t` exactly as `t` itself is (every path to `d` ends with the hop `t -> d`, and hosts do
/// not transit), so all hosts of one switch share one column, computed by one BFS from `t`, and
/// only the entry at `t` itself (the port down to `d`) is per host (`down_port`). That makes the
/// build O(G * (S + E_s) + V + E) for G attachment switches, S switches and E_s links between
/// switches, instead of O(H * (V + E)) for H hosts, and the table G * rows instead of H * rows:
/// a 1e6-host star has one column. Other hosts (multi-homed, or hanging off a host) keep a column
/// of their own, found by a BFS from the host as before. The next hops are identical either way
/// (`grouped_columns_equal_per_host_bfs` checks it).
#[derive(Clone, Debug)]
pub struct Routes {
    /// Dense index of each node that is a host, `NONE` for switches.
    host_index: Vec<u32>,
    /// Node id of each host index.
    host_node: Vec<u32>,
    /// Node at the far end of each port.
    port_peer: Vec<u32>,
    /// Table row of each node, `NONE` for single-homed hosts.
    row: Vec<u32>,
    n_rows: usize,
    /// The only port of each host index (`NONE` unless single-homed).
    host_port: Vec<u32>,
    /// Column of each host index, `NONE` where none was built (`build_for`).
    col: Vec<u32>,
    /// The switch of each host index whose column it shares (`NONE` for a column of its own),
    /// and that switch's port down to the host: the one entry not in the shared column.
    attach: Vec<u32>,
    down_port: Vec<u32>,
    /// `table[col * n_rows + row]`.
    table: Vec<Entry>,
    pool: Vec<u32>,
}

/// The routing table's size for a topology: rows (switches and hosts with more than one link),
/// columns (attachment switches of single-homed hosts, plus one per other host), as `Routes`
/// lays it out. For memory estimates.
pub fn table_shape(topo: &Topology) -> (usize, usize) {
    let mut links = vec![0u32; topo.nodes.len()];
    let mut peer = vec![NONE; topo.nodes.len()];
    for s in &topo.links {
        for (x, y) in [(s.a, s.b), (s.b, s.a)] {
            if let Some(c) = links.get_mut(x as usize) {
                *c += 1;
                peer[x as usize] = y;
            }
        }
    }
    let mut attach = vec![false; topo.nodes.len()];
    let (mut rows, mut cols) = (0, 0);
    for (i, k) in topo.nodes.iter().enumerate() {
        let host = *k == NodeKind::Host;
        if !(host && links[i] == 1) {
            rows += 1;
        }
        if host {
            let p = peer[i];
            if links[i] == 1 && !topo.is_host(p) {
                if !attach[p as usize] {
                    attach[p as usize] = true;
                    cols += 1;
                }
            } else {
                cols += 1;
            }
        }
    }
    (rows, cols)
}

impl Routes {
    /// Routes to every host. Expects a topology that passes `Topology::validate`; unreachable
    /// pairs simply get no next hops.
    pub fn build(topo: &Topology) -> Routes {
        Routes::build_ordered(topo, HopOrder::Ports)
    }

    /// `build`, with each candidate list in `order`.
    pub fn build_ordered(topo: &Topology, order: HopOrder) -> Routes {
        Routes::build_without(topo, order, &[])
    }

    /// `build_ordered` over the links that are up: `down[l]` marks link `l` down (a link failure,
    /// `crate::faults`); ports keep their numbers. Pairs the remaining links do not connect get
    /// no next hops (`pick` then returns [`NO_ROUTE`]). Columns for every host: after a failure
    /// any host may need a new route.
    pub fn build_without(topo: &Topology, order: HopOrder, down: &[bool]) -> Routes {
        Routes::build_for(topo, order, &topo.host_ids(), down).expect("routing table fits in memory")
    }

    /// `build_without` with columns only for the destinations `dsts` (host node ids; others are
    /// ignored): `next_hops(_, d)` is empty for any other host `d`. A simulation needs columns
    /// only for its flows' ends, so a large network with few flows builds few columns. Errs
    /// (instead of aborting) when the table cannot be allocated.
    pub fn build_for(topo: &Topology, order: HopOrder, dsts: &[u32], down: &[bool]) -> Result<Routes, String> {
        let hpcc_order = order != HopOrder::Ports;
        let n = topo.nodes.len();
        let adj = adjacency_up(topo, down);
        let is_host = |i: u32| topo.nodes[i as usize] == NodeKind::Host;
        let host_node = topo.host_ids();
        let mut host_index = vec![NONE; n];
        let mut host_port = vec![NONE; host_node.len()];
        for (hi, &h) in host_node.iter().enumerate() {
            host_index[h as usize] = hi as u32;
            if adj[h as usize].len() == 1 {
                host_port[hi] = adj[h as usize][0].0;
            }
        }
        let mut row = vec![NONE; n];
        let mut row_node = Vec::new();
        for i in 0..n as u32 {
            if !(is_host(i) && adj[i as usize].len() == 1) {
                row[i as usize] = row_node.len() as u32;
                row_node.push(i);
            }
        }
        let mut port_peer = vec![0; 2 * topo.links.len()];
        for (l, s) in topo.links.iter().enumerate() {
            port_peer[2 * l] = s.b;
            port_peer[2 * l + 1] = s.a;
        }
        // which column each wanted destination reads, and the BFS source of each column
        let mut attach = vec![NONE; host_node.len()];
        let mut down_port = vec![NONE; host_node.len()];
        let mut col = vec![NONE; host_node.len()];
        let mut col_of_switch: HashMap<u32, u32> = HashMap::new();
        let mut sources = Vec::new();
        for &d in dsts {
            let Some(&di) = host_index.get(d as usize) else { continue };
            if di == NONE || col[di as usize] != NONE {
                continue;
            }
            let hp = host_port[di as usize];
            let t = if hp == NONE { NONE } else { port_peer[hp as usize] };
            if t != NONE && !is_host(t) {
                attach[di as usize] = t;
                down_port[di as usize] = hp ^ 1;
                col[di as usize] = *col_of_switch.entry(t).or_insert_with(|| {
                    sources.push(t);
                    sources.len() as u32 - 1
                });
            } else {
                sources.push(d);
                col[di as usize] = sources.len() as u32 - 1;
            }
        }
        // A BFS for a shared column never needs the single-homed hosts (they neither forward nor
        // are its destination): it walks an adjacency without them, O(S + E_s) per column.
        let leaf = |v: u32| is_host(v) && adj[v as usize].len() == 1;
        let adj_fwd: Vec<Vec<(u32, u32)>> = if sources.iter().any(|&s| !is_host(s)) {
            adj.iter().map(|v| v.iter().copied().filter(|&(_, x)| !leaf(x)).collect()).collect()
        } else {
            Vec::new()
        };
        let n_rows = row_node.len();
        let cells = sources.len().checked_mul(n_rows).ok_or("routing table size overflows")?;
        let mut table: Vec<Entry> = Vec::new();
        table.try_reserve_exact(cells).map_err(|_| {
            format!("routing table: cannot allocate {} bytes ({} destination columns x {n_rows} rows)", cells.saturating_mul(8), sources.len())
        })?;
        table.resize(cells, Entry::default());
        let mut pool = Vec::new();
        let mut interned: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut last = vec![Entry::default(); n_rows];
        let mut dist = vec![NONE; n];
        let mut queue = VecDeque::new();
        let mut reached = Vec::new();
        let mut cand = Vec::new();
        // neighbours in node-id order (either way) and the BFS pop rank, for `hpcc_order`
        let sorted_ids = |adj: &[Vec<(u32, u32)>], wanted: bool| -> Vec<Vec<u32>> {
            if !(hpcc_order && wanted) {
                return Vec::new();
            }
            adj.iter()
                .map(|v| {
                    let mut w: Vec<u32> = v.iter().map(|&(_, x)| x).collect();
                    w.sort_unstable();
                    w.dedup();
                    if order == HopOrder::IdsDescending {
                        w.reverse();
                    }
                    w
                })
                .collect()
        };
        let by_id_own = sorted_ids(&adj, sources.iter().any(|&s| is_host(s)));
        let by_id_fwd = sorted_ids(&adj_fwd, !adj_fwd.is_empty());
        let mut rank = vec![NONE; if hpcc_order { n } else { 0 }];
        let mut seen = vec![false; if hpcc_order { n } else { 0 }];
        for (ci, &d) in sources.iter().enumerate() {
            // `d`: a destination host with a column of its own, or the switch of a shared one
            let shared = !is_host(d);
            let (adj, by_id) = if shared { (&adj_fwd, &by_id_fwd) } else { (&adj, &by_id_own) };
            if hpcc_order {
                // third.cc's BFS: only switches are expanded; a node's rank is when it was popped
                seen[d as usize] = true;
                reached.push(d);
                queue.push_back(d);
                let mut r = 0;
                while let Some(u) = queue.pop_front() {
                    rank[u as usize] = r;
                    r += 1;
                    for &v in &by_id[u as usize] {
                        if !seen[v as usize] {
                            seen[v as usize] = true;
                            reached.push(v);
                            if !is_host(v) {
                                queue.push_back(v);
                            }
                        }
                    }
                }
            }
            dist[d as usize] = 0;
            reached.push(d);
            queue.push_back(d);
            while let Some(u) = queue.pop_front() {
                if u != d && is_host(u) {
                    continue; // hosts do not forward
                }
                for &(_, v) in &adj[u as usize] {
                    if dist[v as usize] == NONE {
                        dist[v as usize] = dist[u as usize] + 1;
                        reached.push(v);
                        queue.push_back(v);
                    }
                }
            }
            let out = &mut table[ci * n_rows..(ci + 1) * n_rows];
            for (r, &u) in row_node.iter().enumerate() {
                let du = dist[u as usize];
                if u == d || du == NONE {
                    continue;
                }
                cand.clear();
                cand.extend(
                    adj[u as usize]
                        .iter()
                        .filter(|&&(_, v)| dist[v as usize] == du - 1 && (v == d || !is_host(v)))
                        .map(|&(p, _)| p),
                );
                if hpcc_order {
                    cand.sort_by_key(|&p| rank[port_peer[p as usize] as usize]);
                }
                let prev = last[r];
                let e = if pool[prev.start as usize..(prev.start + prev.len) as usize] == cand[..] {
                    prev
                } else if let Some(&start) = interned.get(&cand[..]) {
                    Entry { start, len: cand.len() as u32 }
                } else {
                    let start = pool.len() as u32;
                    pool.extend_from_slice(&cand);
                    interned.insert(cand.clone(), start);
                    Entry { start, len: cand.len() as u32 }
                };
                out[r] = e;
                last[r] = e;
            }
            // clear what this BFS touched, not all n nodes
            for v in reached.drain(..) {
                dist[v as usize] = NONE;
                if hpcc_order {
                    seen[v as usize] = false;
                    rank[v as usize] = NONE;
                }
            }
        }
        pool.shrink_to_fit();
        Ok(Routes { host_index, host_node, port_peer, row, n_rows, host_port, col, attach, down_port, table, pool })
    }

    pub fn n_hosts(&self) -> usize {
        self.host_node.len()
    }

    /// Dense index (0..H, in node-id order) of a host, or `None` for a switch or unknown id.
    #[inline]
    pub fn host_index(&self, node: u32) -> Option<u32> {
        match self.host_index.get(node as usize) {
            Some(&i) if i != NONE => Some(i),
            _ => None,
        }
    }

    /// Node id of host index `idx`.
    #[inline]
    pub fn host_node(&self, idx: u32) -> u32 {
        self.host_node[idx as usize]
    }

    /// The node at the far end of port `p`.
    #[inline]
    pub fn peer_node(&self, p: u32) -> u32 {
        self.port_peer[p as usize]
    }

    /// Ports at `node` on shortest paths to host `dst_node`, in increasing port order. Empty
    /// when `node == dst_node`, when `dst_node` is not a host, or when there is no route.
    #[inline]
    pub fn next_hops(&self, node: u32, dst_node: u32) -> &[u32] {
        let Some(di) = self.host_index(dst_node) else { return &[] };
        let Some(&r) = self.row.get(node as usize) else { return &[] };
        if r != NONE {
            let c = self.col[di as usize];
            if c == NONE {
                return &[];
            }
            let e = self.table[c as usize * self.n_rows + r as usize];
            if e.len == 0 && self.attach[di as usize] == node {
                return std::slice::from_ref(&self.down_port[di as usize]);
            }
            return &self.pool[e.start as usize..(e.start + e.len) as usize];
        }
        // A single-homed host: its one port, if the far end delivers or forwards to dst.
        let hi = self.host_index[node as usize] as usize;
        let p = &self.host_port[hi];
        let peer = self.port_peer[*p as usize];
        let ok = node != dst_node
            && (peer == dst_node
                || (self.host_index(peer).is_none() && !self.next_hops(peer, dst_node).is_empty()));
        if ok {
            std::slice::from_ref(p)
        } else {
            &[]
        }
    }

    /// One of `next_hops(node, dst_node)`, chosen by a per-switch mix of the flow hash so that
    /// successive switches choose independently; [`NO_ROUTE`] if there is no next hop.
    #[inline]
    pub fn pick(&self, node: u32, dst_node: u32, flow_hash: u64) -> u32 {
        let c = self.next_hops(node, dst_node);
        match c.len() {
            0 => NO_ROUTE,
            1 => c[0],
            n => c[(mix(&[flow_hash, node as u64]) % n as u64) as usize],
        }
    }

    /// The candidate at `index % n` of `next_hops(node, dst_node)` (a hash the caller computed,
    /// as the HPCC simulator's ECMP does); [`NO_ROUTE`] if there is no next hop.
    #[inline]
    pub fn pick_index(&self, node: u32, dst_node: u32, index: u32) -> u32 {
        let c = self.next_hops(node, dst_node);
        if c.is_empty() {
            return NO_ROUTE;
        }
        c[index as usize % c.len()]
    }

    /// The egress ports from `src` to `dst` that `pick` chooses for `flow_hash`, starting with
    /// `src`'s own port. Empty if `src == dst` or there is no route.
    pub fn path(&self, src: u32, dst: u32, flow_hash: u64) -> Vec<u32> {
        self.path_by(src, dst, |node| self.pick(node, dst, flow_hash))
    }

    /// The egress ports from `src` to `dst`, `choose(node)` picking one of `next_hops(node, dst)`
    /// at each node on the way (called only where there is one). Empty if `src == dst` or there
    /// is no route.
    pub fn path_by(&self, src: u32, dst: u32, choose: impl Fn(u32) -> u32) -> Vec<u32> {
        let mut ports = Vec::new();
        let mut cur = src;
        while cur != dst {
            if self.next_hops(cur, dst).is_empty() {
                return Vec::new();
            }
            let p = choose(cur);
            ports.push(p);
            cur = self.port_peer[p as usize];
        }
        ports
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Rate, Time};
    use crate::topo::{star, FatTree, LeafSpine, MultiDc};

    fn check_path(t: &Topology, r: &Routes, src: u32, dst: u32, h: u64) -> Vec<u32> {
        let p = r.path(src, dst, h);
        let mut cur = src;
        for &port in &p {
            assert_eq!(t.port_node(port), cur);
            cur = r.peer_node(port);
        }
        assert_eq!(cur, dst);
        p
    }

    /// The per-destination build this module had before columns were shared: one BFS from each
    /// destination host (third.cc's BFS for `hpcc_order`), every node's candidates listed.
    fn reference_next_hops(topo: &Topology, order: HopOrder) -> Vec<Vec<Vec<u32>>> {
        let hpcc_order = order != HopOrder::Ports;
        let n = topo.nodes.len();
        let adj = adjacency(topo);
        let is_host = |i: u32| topo.nodes[i as usize] == NodeKind::Host;
        let mut port_peer = vec![0; 2 * topo.links.len()];
        for (l, s) in topo.links.iter().enumerate() {
            port_peer[2 * l] = s.b;
            port_peer[2 * l + 1] = s.a;
        }
        let by_id: Vec<Vec<u32>> = adj
            .iter()
            .map(|v| {
                let mut w: Vec<u32> = v.iter().map(|&(_, x)| x).collect();
                w.sort_unstable();
                w.dedup();
                if order == HopOrder::IdsDescending {
                    w.reverse();
                }
                w
            })
            .collect();
        let mut out = Vec::new();
        for d in topo.host_ids() {
            let mut rank = vec![NONE; n];
            let mut seen = vec![false; n];
            let mut queue = VecDeque::from([d]);
            seen[d as usize] = true;
            let mut r = 0;
            while let Some(u) = queue.pop_front() {
                rank[u as usize] = r;
                r += 1;
                for &v in &by_id[u as usize] {
                    if !seen[v as usize] {
                        seen[v as usize] = true;
                        if !is_host(v) {
                            queue.push_back(v);
                        }
                    }
                }
            }
            let mut dist = vec![NONE; n];
            dist[d as usize] = 0;
            queue.push_back(d);
            while let Some(u) = queue.pop_front() {
                if u != d && is_host(u) {
                    continue;
                }
                for &(_, v) in &adj[u as usize] {
                    if dist[v as usize] == NONE {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push_back(v);
                    }
                }
            }
            let col = (0..n as u32)
                .map(|u| {
                    let du = dist[u as usize];
                    if u == d || du == NONE {
                        return vec![];
                    }
                    let mut c: Vec<u32> = adj[u as usize]
                        .iter()
                        .filter(|&&(_, v)| dist[v as usize] == du - 1 && (v == d || !is_host(v)))
                        .map(|&(p, _)| p)
                        .collect();
                    if hpcc_order {
                        c.sort_by_key(|&p| rank[port_peer[p as usize] as usize]);
                    }
                    c
                })
                .collect();
            out.push(col);
        }
        out
    }

    /// Every (node, destination) of `t` routes as the per-destination build does, in both orders.
    fn assert_same_as_reference(t: &Topology) {
        for hpcc in [HopOrder::Ports, HopOrder::Ids, HopOrder::IdsDescending] {
            let want = reference_next_hops(t, hpcc);
            let r = Routes::build_ordered(t, hpcc);
            for (di, d) in t.host_ids().into_iter().enumerate() {
                for u in 0..t.nodes.len() as u32 {
                    let c = &want[di][u as usize];
                    // a single-homed host's own port is its route whenever its switch has one
                    if r.row[u as usize] == NONE {
                        continue;
                    }
                    assert_eq!(r.next_hops(u, d), &c[..], "node {u} to host {d}, order {hpcc:?}");
                }
            }
        }
    }

    #[test]
    fn grouped_columns_equal_per_host_bfs() {
        let (g, us) = (Rate::gbps(100), Time::from_us(1));
        assert_same_as_reference(&star(6, g, us));
        assert_same_as_reference(&crate::topo::dumbbell(3, 2, g, g, us));
        assert_same_as_reference(&LeafSpine { links_per_spine: 2, ..LeafSpine::bfc_nsdi22() }.build());
        assert_same_as_reference(&FatTree::new(4, g, g, us).unwrap().with_hosts_per_edge(3).build().unwrap());
        assert_same_as_reference(&MultiDc::default().build());
        assert_same_as_reference(&crate::topo::hpcc_file::tests::hpcc_320());
        // multi-homed hosts, a host hanging off a host, and switches wired in id order unlike
        // their links' order
        let mut t = Topology::default();
        for k in [NodeKind::Host, NodeKind::Host, NodeKind::Switch { tier: 0 }, NodeKind::Switch { tier: 0 }, NodeKind::Host] {
            t.add_node(k);
        }
        for k in [NodeKind::Switch { tier: 1 }, NodeKind::Switch { tier: 1 }, NodeKind::Host, NodeKind::Host] {
            t.add_node(k);
        }
        let (r1, z) = (Rate::gbps(1), Time::ZERO);
        for (a, b) in [(0, 2), (0, 3), (1, 3), (4, 2), (3, 6), (3, 5), (2, 5), (2, 6), (7, 6), (8, 4), (4, 3)] {
            t.add_link(a, b, r1, z);
        }
        assert_same_as_reference(&t);
    }

    #[test]
    fn build_for_has_columns_only_for_the_wanted_hosts() {
        let ls = LeafSpine::bfc_nsdi22();
        let t = ls.build();
        let all = Routes::build(&t);
        let r = Routes::build_for(&t, HopOrder::Ports, &[0, 20, 9999], &[]).unwrap();
        assert_eq!(r.col.iter().filter(|&&c| c != NONE).count(), 2);
        assert_eq!(r.table.len(), 2 * r.n_rows); // host 0 on ToR 0, host 20 on ToR 1
        for u in 0..t.nodes.len() as u32 {
            assert_eq!(r.next_hops(u, 0), all.next_hops(u, 0));
            assert_eq!(r.next_hops(u, 20), all.next_hops(u, 20));
        }
        assert!(r.next_hops(ls.tor_id(0), 21).is_empty());
        assert_eq!(table_shape(&t), (all.n_rows, ls.tors));
    }

    #[test]
    fn a_million_host_star_routes_in_one_column() {
        let t = star(1_000_000, Rate::gbps(100), Time::from_us(1));
        let r = Routes::build(&t);
        assert_eq!(r.table.len(), 1);
        assert_eq!(r.path(999_999, 0, 3), vec![2 * 999_999, 1]);
    }

    #[test]
    fn star_paths() {
        let t = star(4, Rate::gbps(100), Time::from_us(1));
        let r = Routes::build(&t);
        assert_eq!(r.path(0, 1, 7), vec![0, 3]);
        assert_eq!(check_path(&t, &r, 3, 2, 1).len(), 2);
        assert_eq!(r.next_hops(4, 2), &[5]);
        assert!(r.path(1, 1, 0).is_empty());
        assert!(r.next_hops(0, 4).is_empty()); // a switch is no destination
        assert_eq!(node_ports(&t)[4], vec![1, 3, 5, 7]);
        assert_eq!(
            (r.n_hosts(), r.host_index(3), r.host_index(4), r.host_node(2)),
            (4, Some(3), None, 2)
        );
    }

    #[test]
    fn leaf_spine_ecmp() {
        let ls = LeafSpine::bfc_nsdi22();
        let t = ls.build();
        let r = Routes::build(&t);
        let tor0 = ls.tor_id(0);
        assert_eq!(r.next_hops(tor0, 20).len(), ls.spines); // host 20 sits on ToR 1
        assert_eq!(r.next_hops(tor0, 3).len(), 1);
        assert_eq!(check_path(&t, &r, 0, 20, 9).len(), 4);
        assert_eq!(check_path(&t, &r, 0, 3, 9).len(), 2);
        // parallel links multiply the choices.
        let ls2 = LeafSpine { links_per_spine: 2, ..ls.clone() };
        let r2 = Routes::build(&ls2.build());
        assert_eq!(r2.next_hops(tor0, 20).len(), 2 * ls.spines);
        let c = r.next_hops(tor0, 127);
        assert!(c.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn fat_tree_k4() {
        let f = FatTree::new(4, Rate::gbps(100), Rate::gbps(100), Time::from_us(1)).unwrap();
        let t = f.build().unwrap();
        let r = Routes::build(&t);
        // host 0: pod 0 edge 0; host 15: pod 3.
        assert_eq!(r.next_hops(f.edge_id(0, 0), 15).len(), 2);
        assert_eq!(r.next_hops(f.agg_id(0, 1), 15).len(), 2);
        assert_eq!(r.next_hops(f.core_id(0), 15).len(), 1);
        assert_eq!(r.next_hops(f.agg_id(3, 0), 15).len(), 1);
        for h in 0..32 {
            assert_eq!(check_path(&t, &r, 0, 15, h).len(), 6);
        }
        assert_eq!(check_path(&t, &r, 0, 2, 1).len(), 4); // same pod, other edge
        assert_eq!(check_path(&t, &r, 0, 1, 1).len(), 2); // same edge
                                                          // every (src, dst) pair routes.
        for s in 0..16 {
            for d in 0..16 {
                if s != d {
                    check_path(&t, &r, s, d, s as u64 * 31 + d as u64);
                }
            }
        }
    }

    #[test]
    fn hashes_spread_and_decorrelate() {
        let ls = LeafSpine::bfc_nsdi22();
        let r = Routes::build(&ls.build());
        let c = r.next_hops(ls.tor_id(0), 20).to_vec();
        let mut count = vec![0usize; c.len()];
        for h in 0..8000u64 {
            let p = r.pick(ls.tor_id(0), 20, h);
            count[c.iter().position(|&x| x == p).unwrap()] += 1;
        }
        assert!(count.iter().all(|&k| (800..1200).contains(&k)), "{count:?}");
        // Two switches with the same candidate count choose differently for the same hashes.
        let f = FatTree::new(4, Rate::gbps(100), Rate::gbps(100), Time::ZERO).unwrap();
        let r = Routes::build(&f.build().unwrap());
        let (e, a) = (f.edge_id(0, 0), f.agg_id(0, 0));
        let idx = |node: u32, h: u64| {
            let c = r.next_hops(node, 15);
            c.iter().position(|&x| x == r.pick(node, 15, h)).unwrap()
        };
        let same = (0..1000u64).filter(|&h| idx(e, h) == idx(a, h)).count();
        assert!((350..650).contains(&same), "{same}");
    }

    #[test]
    fn multi_dc_goes_through_gateways() {
        let m = MultiDc::default();
        let t = m.build();
        let r = Routes::build(&t);
        let p = check_path(&t, &r, 0, 100, 5);
        assert_eq!(p.len(), 7); // host, ToR, spine, gateway, gateway, spine, ToR
        assert!(p.contains(&(2 * m.long_link_id())));
        assert_eq!(r.next_hops(m.tor_id(0, 0), 100).len(), 8);
        assert_eq!(r.next_hops(m.gateway_id(1), 100).len(), 8);
    }

    #[test]
    fn hosts_do_not_transit_and_multihomed_hosts_route() {
        // host 0 dual-homed to switches 2 and 3; host 1 on switch 3; switch 2 only reaches host 1
        // through host 0, which must not forward.
        let mut t = Topology::default();
        for k in [
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch { tier: 0 },
            NodeKind::Switch { tier: 0 },
        ] {
            t.add_node(k);
        }
        let (r1, z) = (Rate::gbps(1), Time::ZERO);
        t.add_link(0, 2, r1, z);
        t.add_link(0, 3, r1, z);
        t.add_link(1, 3, r1, z);
        let r = Routes::build(&t);
        assert!(r.next_hops(2, 1).is_empty());
        assert_eq!(r.next_hops(0, 1), &[2]);
        assert_eq!(r.path(0, 1, 0), vec![2, 4 + 1]);
        assert_eq!(r.next_hops(1, 0), &[4]);
        assert_eq!(r.next_hops(3, 0), &[3]);
    }

    #[test]
    fn hpcc_file_routes_fast() {
        let t = crate::topo::hpcc_file::tests::hpcc_320();
        let start = std::time::Instant::now();
        let r = Routes::build(&t);
        let took = start.elapsed();
        assert!(took.as_secs_f64() < 1.0, "{took:?}");
        // ToR 320 serves hosts 0..16; cross-pod traffic fans out over its 4 uplinks.
        assert_eq!(r.next_hops(320, 5).len(), 1);
        let far = r.next_hops(320, 319).len();
        assert_eq!(far, 4);
        for (s, d) in [(0, 319), (0, 17), (5, 6), (100, 200)] {
            check_path(&t, &r, s, d, 42);
        }
        assert_eq!(r.path(0, 319, 1).len(), 6);
    }

    #[test]
    fn hpcc_order_lists_next_hops_in_bfs_order_of_node_ids() {
        // host 0 - tor 4, host 1 - tor 5; tors linked to spines 6 and 7, with links declared in
        // the order (tor5, spine7) before (tor5, spine6): port order at tor 5 lists spine 7 first,
        // the BFS from host 0 reaches spine 6 first (its neighbours in id order).
        let mut t = Topology::default();
        for _ in 0..4 {
            t.add_node(NodeKind::Host);
        }
        for tier in [0, 0, 1, 1] {
            t.add_node(NodeKind::Switch { tier });
        }
        let (r, d) = (Rate::gbps(100), Time::from_us(1));
        t.add_link(0, 4, r, d);
        t.add_link(1, 5, r, d);
        t.add_link(5, 7, r, d);
        t.add_link(5, 6, r, d);
        t.add_link(4, 6, r, d);
        t.add_link(4, 7, r, d);
        let peers = |rt: &Routes| rt.next_hops(5, 0).iter().map(|&p| rt.peer_node(p)).collect::<Vec<_>>();
        assert_eq!(peers(&Routes::build(&t)), vec![7, 6]);
        assert_eq!(peers(&Routes::build_ordered(&t, HopOrder::Ids)), vec![6, 7]);
        // neighbour maps iterated the other way round: 4 reaches 7 before 6
        assert_eq!(peers(&Routes::build_ordered(&t, HopOrder::IdsDescending)), vec![7, 6]);
    }
}
