//! Which logical process (partition) owns each node, and the window width every partitioning
//! shares.
//!
//! A partition owns nodes whole: a switch with its ports, queues, buffer and module, a host with
//! its NICs and the halves of the flows it sends and receives. A single-homed host always goes
//! with its switch (its link is never cut), and nodes joined by a zero-delay link stay together
//! (a cut link must take time to cross). Every other link may be cut.
//!
//! The automatic plan: units are a first-tier switch with its hosts, or any other switch alone
//! (merged over zero-delay links); the first-tier units are dealt, in node order, into
//! contiguous blocks of about equal weight (a fat-tree's or leaf-spine's builder numbers a pod's
//! ToRs together, so a block is a pod or a run of ToRs); then each remaining unit (aggregation,
//! spine, core) joins the partition it has the most links to, the lightest on a tie, so that a
//! pod's aggregation switches stay with their pod and cores spread evenly. A unit's weight is its
//! ports: each port's service and each wire arrival are what a run spends its events on.

use crate::ids::NodeRef;
use crate::sim::Simulation;
use crate::time::Time;

/// The widest window: long links still synchronise at least this often, so that the end of a
/// run, which comes at the end of a window, is never far after its last event of interest.
pub const MAX_WINDOW: Time = Time(1_000_000);

/// Node `i` belongs to partition `of[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub of: Vec<u16>,
    pub parts: u16,
}

impl Plan {
    /// Every node in one partition.
    pub fn single(nodes: usize) -> Plan {
        Plan { of: vec![0; nodes], parts: 1 }
    }

    /// A partitioning given by hand (`of[node]`): checked against what every plan must keep
    /// (hosts with their only switch, zero-delay links uncut, no empty partition).
    pub fn explicit(sim: &Simulation, of: Vec<u16>) -> Result<Plan, String> {
        if of.len() != sim.node_ref.len() {
            return Err(format!("partition: {} entries for {} nodes", of.len(), sim.node_ref.len()));
        }
        let parts = of.iter().copied().max().map_or(1, |m| m + 1);
        for k in 0..parts {
            if !of.contains(&k) {
                return Err(format!("partition: partition {k} owns no node (allowed: 0 to {} with every one used)", parts - 1));
            }
        }
        for p in (0..sim.ports.len()).step_by(2) {
            let (a, b) = (sim.ports[p].node, sim.ports[p + 1].node);
            if of[a as usize] == of[b as usize] {
                continue;
            }
            if sim.ports[p].delay == Time::ZERO {
                return Err(format!("partition: nodes {a} and {b} are joined by a zero-delay link and must share a partition"));
            }
            for n in [a, b] {
                if matches!(sim.node_ref[n as usize], NodeRef::Host(h) if sim.hosts[h as usize].nics == 1) {
                    return Err(format!("partition: host {n} has one link and must share its switch's partition"));
                }
            }
        }
        Ok(Plan { of, parts })
    }

    /// The automatic plan for `parts` partitions (fewer where the network has fewer units).
    pub fn auto(sim: &Simulation, parts: usize) -> Plan {
        let n = sim.node_ref.len();
        let mut uf = UnionFind::new(n);
        for p in (0..sim.ports.len()).step_by(2) {
            let (a, b) = (sim.ports[p].node, sim.ports[p + 1].node);
            let single_homed = |x: u32| matches!(sim.node_ref[x as usize], NodeRef::Host(h) if sim.hosts[h as usize].nics == 1);
            if sim.ports[p].delay == Time::ZERO || single_homed(a) || single_homed(b) {
                uf.join(a as usize, b as usize);
            }
        }
        // a multi-homed host joins the unit of its first link's switch
        let mut first_link: Vec<Option<u32>> = vec![None; n];
        for p in 0..sim.ports.len() {
            let node = sim.ports[p].node as usize;
            if first_link[node].is_none() {
                first_link[node] = Some(sim.ports[p ^ 1].node);
            }
        }
        for i in 0..n {
            if let (NodeRef::Host(_), Some(peer)) = (sim.node_ref[i], first_link[i]) {
                uf.join(i, peer as usize);
            }
        }
        let root: Vec<usize> = (0..n).map(|i| uf.find(i)).collect();
        let mut weight = vec![0u64; n];
        for p in &sim.ports {
            weight[root[p.node as usize]] += 1;
        }
        // units in order of their smallest node; a unit is "first tier" if it holds a host or a
        // tier-0 switch
        let mut units: Vec<usize> = vec![];
        let mut seen = vec![false; n];
        let mut first_tier = vec![false; n];
        for i in 0..n {
            let r = root[i];
            if !seen[r] {
                seen[r] = true;
                units.push(r);
            }
            if sim.tiers[i].is_none_or(|t| t == 0) {
                first_tier[r] = true;
            }
        }
        let lower: Vec<usize> = units.iter().copied().filter(|&u| first_tier[u]).collect();
        let upper: Vec<usize> = units.iter().copied().filter(|&u| !first_tier[u]).collect();
        let parts = parts.clamp(1, lower.len().max(1)).min(u16::MAX as usize);
        let mut part_of_unit = vec![u16::MAX; n];
        let mut load = vec![0u64; parts];
        let total: u64 = units.iter().map(|&u| weight[u]).sum();
        let lower_total: u64 = lower.iter().map(|&u| weight[u]).sum();
        // blocks of the first-tier units: partition k takes units until its share of their weight
        let mut acc = 0u64;
        for &u in &lower {
            let k = ((acc * parts as u64) / lower_total.max(1)).min(parts as u64 - 1) as usize;
            part_of_unit[u] = k as u16;
            load[k] += weight[u];
            acc += weight[u];
        }
        // links between units, for the upper tiers' choice
        let mut links: Vec<Vec<usize>> = vec![vec![]; n];
        for p in (0..sim.ports.len()).step_by(2) {
            let (a, b) = (root[sim.ports[p].node as usize], root[sim.ports[p + 1].node as usize]);
            if a != b {
                links[a].push(b);
                links[b].push(a);
            }
        }
        let cap = total.div_ceil(parts as u64) + total / (8 * parts as u64).max(1);
        for &u in &upper {
            let mut score = vec![0u64; parts];
            for &v in &links[u] {
                if part_of_unit[v] != u16::MAX {
                    score[part_of_unit[v] as usize] += 1;
                }
            }
            let best = (0..parts)
                .filter(|&k| load[k] + weight[u] <= cap)
                .max_by(|&a, &b| score[a].cmp(&score[b]).then(load[b].cmp(&load[a])).then(b.cmp(&a)))
                .unwrap_or_else(|| (0..parts).min_by_key(|&k| (load[k], k)).expect("a partition"));
            part_of_unit[u] = best as u16;
            load[best] += weight[u];
        }
        let of: Vec<u16> = (0..n).map(|i| part_of_unit[root[i]]).collect();
        let used = of.iter().copied().max().map_or(1, |m| m + 1);
        Plan { of, parts: used }
    }

    /// The partition that owns port `p`.
    #[inline]
    pub fn port_part(&self, sim: &Simulation, p: u32) -> u16 {
        self.of[sim.ports[p as usize].node as usize]
    }
}

/// The window width of a network, the same for every partitioning of it: the shortest delay of
/// any link a plan may cut (between switches, or a multi-homed host's), at most `MAX_WINDOW`.
/// Why not each plan's own shortest cut: the run ends at the end of a window (`crate::engine`),
/// so windows must not depend on the plan for the tables not to.
pub fn window_width(sim: &Simulation) -> Time {
    let mut w = MAX_WINDOW;
    for p in (0..sim.ports.len()).step_by(2) {
        let (a, b) = (sim.ports[p].node, sim.ports[p + 1].node);
        let single_homed = |x: u32| matches!(sim.node_ref[x as usize], NodeRef::Host(h) if sim.hosts[h as usize].nics == 1);
        let d = sim.ports[p].delay.min(sim.ports[p + 1].delay);
        if d > Time::ZERO && !single_homed(a) && !single_homed(b) {
            w = w.min(d);
        }
    }
    w
}

struct UnionFind {
    up: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind { up: (0..n).collect() }
    }
    fn find(&mut self, mut i: usize) -> usize {
        while self.up[i] != i {
            self.up[i] = self.up[self.up[i]];
            i = self.up[i];
        }
        i
    }
    /// Join the sets of `a` and `b`; the smaller root stays the root (deterministic).
    fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.up[hi] = lo;
        }
    }
}
