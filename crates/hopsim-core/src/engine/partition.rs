//! Which logical process (partition) owns each node, and the window width every partitioning
//! shares.
//!
//! A partition owns nodes whole: a switch with its ports, queues, buffer and module, a host with
//! its NICs and the halves of the flows it sends and receives. A single-homed host always goes
//! with its switch (its link is never cut), and nodes joined by a link shorter than
//! `MIN_CUT_DELAY` stay together: a cut link sets the window, and a window of a few nanoseconds
//! costs the threads more in meeting than it gives them in work (a 1 ns link once made a split
//! run of 850,000 events take minutes where one thread took under a second). Every other link
//! may be cut. When the short links join the whole network, it runs on one thread and says so.
//!
//! The automatic plan: units are a first-tier switch with its hosts, or any other switch alone
//! (merged over short links); the first-tier units are dealt, in node order, into
//! contiguous blocks of about equal weight (a fat-tree's or leaf-spine's builder numbers a pod's
//! ToRs together, so a block is a pod or a run of ToRs); then each remaining unit (aggregation,
//! spine, core) joins the partition it has the most links to, the lightest on a tie, among those
//! that stay within 1/64 of an even share, so that a pod's aggregation switches stay with their
//! pod and cores spread evenly. A unit's weight is the sum of its ports' rates: a run spends its
//! events on each port's service and each wire's arrivals, which follow the packets a port
//! carries, and in a network whose tiers run at like utilisation those follow its rate. Why not
//! one per port: where the fabric is faster than the hosts' links (the HPCC simulator's
//! standard fat-tree, 100 Gb/s hosts under 400 Gb/s), counting ports put every core in one of
//! two partitions, which then ran 1.5x the other's events; and why a tight share: at a window's
//! end the partitions wait for the slowest, so each percent of imbalance is a percent of wall
//! time, where a link more or less cut costs a message's hand-over.
//!
//! A plan reads only the network's shape (`Graph`), so the partitions a run will make are known
//! from its topology before anything is built (`crate::footprint` counts memory by them).

use crate::ids::NodeRef;
use crate::sim::Simulation;
use crate::time::Time;
use crate::topo::Topology;

/// The widest window: long links still synchronise at least this often, so that the end of a
/// run, which comes at the end of a window, is never far after its last event of interest.
pub const MAX_WINDOW: Time = Time(1_000_000);

/// The shortest link a plan may cut, and so the narrowest window: 100 ns, about one full-sized
/// packet's service at 100 Gb/s, so that a window holds at least an event a busy port.
pub const MIN_CUT_DELAY: Time = Time(100_000);

/// What a plan reads of a network: each node's tier (`None`: a host) and link count, and each
/// link's ends and shorter delay.
pub struct Graph {
    tiers: Vec<Option<u8>>,
    degree: Vec<u32>,
    links: Vec<(u32, u32, Time)>,
    /// Each link's rate, Mb/s (the faster direction's, at least 1).
    rates: Vec<u64>,
}

impl Graph {
    pub fn of_sim(sim: &Simulation) -> Graph {
        let links: Vec<(u32, u32, Time)> =
            (0..sim.ports.len()).step_by(2).map(|p| (sim.ports[p].node, sim.ports[p + 1].node, sim.ports[p].delay.min(sim.ports[p + 1].delay))).collect();
        let rates = (0..sim.ports.len()).step_by(2).map(|p| sim.ports[p].clock.rate.max(sim.ports[p + 1].clock.rate)).collect();
        let tiers = (0..sim.node_ref.len()).map(|i| if matches!(sim.node_ref[i], NodeRef::Host(_)) { None } else { Some(sim.tiers[i].unwrap_or(0)) }).collect();
        Graph::new(tiers, links, rates)
    }

    pub fn of_topology(t: &Topology) -> Graph {
        Graph::new(
            (0..t.nodes.len() as u32).map(|i| if t.is_host(i) { None } else { Some(t.tier(i).unwrap_or(0)) }).collect(),
            t.links.iter().map(|l| (l.a, l.b, l.delay)).collect(),
            t.links.iter().map(|l| l.rate).collect(),
        )
    }

    fn new(tiers: Vec<Option<u8>>, links: Vec<(u32, u32, Time)>, rates: Vec<crate::time::Rate>) -> Graph {
        let mut degree = vec![0u32; tiers.len()];
        for &(a, b, _) in &links {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        let rates = rates.iter().map(|r| (r.bps() / 1_000_000).max(1)).collect();
        Graph { tiers, degree, links, rates }
    }

    fn single_homed(&self, n: u32) -> bool {
        self.tiers[n as usize].is_none() && self.degree[n as usize] == 1
    }

    /// Whether a plan may cut link `l`: neither end a single-homed host, and no shorter than
    /// `MIN_CUT_DELAY`.
    fn cuttable(&self, l: usize) -> bool {
        let (a, b, d) = self.links[l];
        d >= MIN_CUT_DELAY && !self.single_homed(a) && !self.single_homed(b)
    }
}

/// Node `i` belongs to partition `of[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub of: Vec<u16>,
    pub parts: u16,
    /// Units that links shorter than `MIN_CUT_DELAY` joined (0 for a plan given by hand).
    pub short_joins: usize,
}

impl Plan {
    /// Every node in one partition.
    pub fn single(nodes: usize) -> Plan {
        Plan { of: vec![0; nodes], parts: 1, short_joins: 0 }
    }

    /// A partitioning given by hand (`of[node]`): checked against what every plan must keep
    /// (hosts with their only switch, links shorter than `MIN_CUT_DELAY` uncut, no empty
    /// partition).
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
        let g = Graph::of_sim(sim);
        for (l, &(a, b, d)) in g.links.iter().enumerate() {
            if of[a as usize] == of[b as usize] || g.cuttable(l) {
                continue;
            }
            if d < MIN_CUT_DELAY {
                return Err(format!(
                    "partition: nodes {a} and {b} are joined by a link of {}ns, shorter than the shortest window ({}ns), and must share a partition",
                    d.0 as f64 / 1e3,
                    MIN_CUT_DELAY.0 / 1000
                ));
            }
            let n = if g.single_homed(a) { a } else { b };
            return Err(format!("partition: host {n} has one link and must share its switch's partition"));
        }
        Ok(Plan { of, parts, short_joins: 0 })
    }

    /// The automatic plan for `parts` partitions (fewer where the network has fewer units).
    pub fn auto(sim: &Simulation, parts: usize) -> Plan {
        Plan::of_graph(&Graph::of_sim(sim), parts)
    }

    /// `auto` on a network's shape.
    pub fn of_graph(g: &Graph, parts: usize) -> Plan {
        let n = g.tiers.len();
        let mut uf = UnionFind::new(n);
        let mut short_joins = 0;
        for (l, &(a, b, d)) in g.links.iter().enumerate() {
            if !g.cuttable(l) && uf.join(a as usize, b as usize) && d < MIN_CUT_DELAY && !g.single_homed(a) && !g.single_homed(b) {
                short_joins += 1;
            }
        }
        // a multi-homed host joins the unit of its first link's switch
        let mut first_link: Vec<Option<u32>> = vec![None; n];
        for &(a, b, _) in &g.links {
            for (x, y) in [(a, b), (b, a)] {
                if first_link[x as usize].is_none() {
                    first_link[x as usize] = Some(y);
                }
            }
        }
        for i in 0..n {
            if let (None, Some(peer)) = (g.tiers[i], first_link[i]) {
                uf.join(i, peer as usize);
            }
        }
        let root: Vec<usize> = (0..n).map(|i| uf.find(i)).collect();
        let mut weight = vec![0u64; n];
        for (&(a, b, _), &r) in g.links.iter().zip(&g.rates) {
            weight[root[a as usize]] += r;
            weight[root[b as usize]] += r;
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
            if g.tiers[i].is_none_or(|t| t == 0) {
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
        for &(a, b, _) in &g.links {
            let (a, b) = (root[a as usize], root[b as usize]);
            if a != b {
                links[a].push(b);
                links[b].push(a);
            }
        }
        // an upper unit may not take a partition past its share by more than 1/64 (see the module doc)
        let cap = total.div_ceil(parts as u64) + total / (64 * parts as u64).max(1);
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
        Plan { of, parts: used, short_joins }
    }

    /// The partition that owns port `p`.
    #[inline]
    pub fn port_part(&self, sim: &Simulation, p: u32) -> u16 {
        self.of[sim.ports[p as usize].node as usize]
    }
}

/// The window width of a network, the same for every partitioning of it: the shortest delay of
/// any link a plan may cut (between switches, or a multi-homed host's, no shorter than
/// `MIN_CUT_DELAY`), at most `MAX_WINDOW`. Why not each plan's own shortest cut: the run ends
/// at the end of a window (`crate::engine`), so windows must not depend on the plan for the
/// tables not to.
pub fn window_width(sim: &Simulation) -> Time {
    Graph::of_sim(sim).window()
}

impl Graph {
    /// `window_width` of this network.
    pub fn window(&self) -> Time {
        (0..self.links.len()).filter(|&l| self.cuttable(l)).map(|l| self.links[l].2).fold(MAX_WINDOW, Time::min)
    }
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
    /// Join the sets of `a` and `b`; the smaller root stays the root (deterministic). Whether
    /// they were apart.
    fn join(&mut self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.up[hi] = lo;
        }
        ra != rb
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Rate;

    /// Four ToRs with two hosts each under two spines, 1 us everywhere.
    fn leaf_spine() -> Topology {
        crate::topo::LeafSpine { hosts_per_tor: 2, tors: 4, spines: 2, host_rate: Rate::gbps(100), fabric_rate: Rate::gbps(100), host_delay: Time::from_us(1), fabric_delay: Time::from_us(1), links_per_spine: 1 }
            .build()
    }

    fn set_delay(t: &mut Topology, a: u32, b: u32, d: Time) {
        for l in &mut t.links {
            if (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a) {
                l.delay = d;
            }
        }
    }

    #[test]
    fn a_link_shorter_than_the_shortest_window_is_never_cut_nor_sets_the_window() {
        let mut t = leaf_spine();
        // nodes: hosts 0-7, ToRs 8-11, spines 12-13; ToR 11 hangs on spine 13 by 1 ns
        set_delay(&mut t, 11, 13, Time(1_000));
        let g = Graph::of_topology(&t);
        assert_eq!(g.window(), Time::from_us(1), "the 1 ns link does not set the window");
        let plan = Plan::of_graph(&g, 4);
        assert_eq!(plan.of[11], plan.of[13], "{:?}", plan.of);
        assert_eq!(plan.short_joins, 1);
        assert!(plan.parts > 1, "the rest still splits: {:?}", plan.of);
        // a link of exactly the shortest window may be cut, and then sets it
        set_delay(&mut t, 11, 13, MIN_CUT_DELAY);
        let g = Graph::of_topology(&t);
        assert_eq!(g.window(), MIN_CUT_DELAY);
        assert_eq!(Plan::of_graph(&g, 4).short_joins, 0);
    }

    /// The HPCC simulator's fat-tree (100 Gb/s hosts, 400 Gb/s fabric; 5 pods of 4 ToRs and 4
    /// aggregation switches, 16 cores) in two: each half of the rate-weighted network within
    /// 1/64 of the other, the cores in both, and every ToR's hosts with it.
    #[test]
    fn a_fabric_faster_than_the_hosts_splits_by_rate_not_by_ports() {
        let t = crate::topo::hpcc_file::tests::hpcc_320();
        let g = Graph::of_topology(&t);
        let plan = Plan::of_graph(&g, 2);
        assert_eq!(plan.parts, 2);
        let mut load = [0u64; 2];
        for (&(a, b, _), &r) in g.links.iter().zip(&g.rates) {
            load[plan.of[a as usize] as usize] += r;
            load[plan.of[b as usize] as usize] += r;
        }
        let (lo, hi) = (load[0].min(load[1]), load[0].max(load[1]));
        assert!(hi - lo <= (lo + hi) / 64, "rate-weighted halves {load:?}");
        let cores: Vec<u16> = (360..376).map(|n| plan.of[n]).collect();
        assert!(cores.contains(&0) && cores.contains(&1), "cores {cores:?}");
        for l in t.links.iter().filter(|l| t.is_host(l.a) || t.is_host(l.b)) {
            assert_eq!(plan.of[l.a as usize], plan.of[l.b as usize], "a host and its ToR");
        }
    }

    #[test]
    fn short_links_everywhere_make_one_partition() {
        let mut t = leaf_spine();
        for l in &mut t.links {
            l.delay = Time(1_000);
        }
        let g = Graph::of_topology(&t);
        let plan = Plan::of_graph(&g, 8);
        assert_eq!(plan.parts, 1);
        assert!(plan.short_joins > 0);
        assert_eq!(g.window(), MAX_WINDOW);
        // while 1 us links split four ways
        assert_eq!(Plan::of_graph(&Graph::of_topology(&leaf_spine()), 8).parts, 4);
    }
}
