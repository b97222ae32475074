//! Topologies as plain data: nodes and full-duplex links. Builders for the papers' topologies
//! live one per file; `routes` turns a topology into per-switch ECMP next-hop tables.
//!
//! Port numbering is derived, not stored: link `l` has port `2l` at its `a` end and `2l+1` at its
//! `b` end, so a port's peer is `p ^ 1` and no table is needed to cross a wire.

use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// What a node is. `tier` is 0 for ToR / leaf / the single star switch, 1 for aggregation /
/// spine, 2 for core; it gives each port its hop class in the statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeKind {
    Host,
    Switch { tier: u8 },
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    pub rate: Rate,
    pub delay: Time,
}

/// A whole network: `nodes[i]` is node `i`; hosts and switches may interleave (the HPCC format
/// lets them).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Topology {
    pub nodes: Vec<NodeKind>,
    pub links: Vec<LinkSpec>,
}

pub mod dumbbell;
pub mod ecmp_hpcc;
pub mod ecmp_ns3;
pub mod fat_tree;
pub mod hpcc_file;
pub mod leaf_spine;
pub mod multi_dc;
pub mod route_memo;
pub mod routes;
pub mod star;
pub mod units;

pub use dumbbell::dumbbell;
pub use fat_tree::FatTree;
pub use hpcc_file::parse_hpcc_topology;
pub use leaf_spine::LeafSpine;
pub use multi_dc::MultiDc;
pub use routes::{node_ports, Routes};
pub use star::star;
pub use units::{parse_rate, parse_time};

/// The link that carries port `p` (see the numbering in the module doc).
#[inline]
pub const fn port_link(p: u32) -> u32 {
    p >> 1
}

/// The port at the other end of the wire from port `p`.
#[inline]
pub const fn peer_port(p: u32) -> u32 {
    p ^ 1
}

impl Topology {
    /// Appends a node and returns its id. Builders use it so ids follow insertion order.
    pub fn add_node(&mut self, kind: NodeKind) -> u32 {
        self.nodes.push(kind);
        (self.nodes.len() - 1) as u32
    }

    /// Appends a link and returns its id; its ports are `2 * id` (at `a`) and `2 * id + 1` (at `b`).
    pub fn add_link(&mut self, a: u32, b: u32, rate: Rate, delay: Time) -> u32 {
        self.links.push(LinkSpec { a, b, rate, delay });
        (self.links.len() - 1) as u32
    }

    /// Whether node `i` exists and is a host.
    #[inline]
    pub fn is_host(&self, i: u32) -> bool {
        matches!(self.nodes.get(i as usize), Some(NodeKind::Host))
    }

    /// The tier of switch `i`, or `None` for a host or an unknown id.
    pub fn tier(&self, i: u32) -> Option<u8> {
        match self.nodes.get(i as usize) {
            Some(NodeKind::Switch { tier }) => Some(*tier),
            _ => None,
        }
    }

    /// Host ids in increasing order (the dense host index of `Routes` follows this order).
    pub fn hosts(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.nodes.len() as u32).filter(move |&i| self.is_host(i))
    }

    /// Host ids in increasing order, collected.
    pub fn host_ids(&self) -> Vec<u32> {
        self.hosts().collect()
    }

    /// Switch ids in increasing order.
    pub fn switch_ids(&self) -> Vec<u32> {
        (0..self.nodes.len() as u32).filter(|&i| !self.is_host(i)).collect()
    }

    pub fn n_hosts(&self) -> usize {
        self.hosts().count()
    }

    /// What node `h` can send at: the sum of its links' rates (a single-homed host's one link;
    /// a multi-NIC host's NICs together, `net::nic_choice`). The rate that
    /// `workload.load_on = "host_links"` takes a host's load of. Scans all links.
    pub fn host_rate(&self, h: u32) -> Rate {
        Rate(self.links.iter().filter(|l| l.a == h || l.b == h).fold(0u64, |s, l| s.saturating_add(l.rate.0)))
    }

    /// The node that owns port `p`. Panics if `p` names no port.
    #[inline]
    pub fn port_node(&self, p: u32) -> u32 {
        let l = &self.links[port_link(p) as usize];
        if p & 1 == 0 {
            l.a
        } else {
            l.b
        }
    }

    /// `(port at i, node at the other end)` for every link of `i`, in increasing port order.
    /// Scans all links, so it suits set-up code; `routes::node_ports` builds every list at once.
    pub fn neighbours(&self, i: u32) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for (l, s) in self.links.iter().enumerate() {
            let l = l as u32;
            if s.a == i {
                v.push((2 * l, s.b));
            }
            if s.b == i {
                v.push((2 * l + 1, s.a));
            }
        }
        v
    }

    /// Checks what the simulator relies on and names the first problem found: a link to an
    /// unknown node, a self-loop, a zero rate, or a node that cannot be reached.
    ///
    /// Reachability is judged the way `Routes` forwards: hosts are endpoints, never transit, so
    /// every node must be reachable from the first switch through switches only. A network with
    /// no switch (hosts wired to each other) is checked as a plain graph from node 0.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.nodes.len();
        if n == 0 {
            return Err("topology has no nodes".into());
        }
        if n > u32::MAX as usize / 2 || self.links.len() > (u32::MAX / 2) as usize {
            return Err("topology too large for 32-bit node and port ids".into());
        }
        for (l, s) in self.links.iter().enumerate() {
            for end in [s.a, s.b] {
                if end as usize >= n {
                    return Err(format!(
                        "link {l} ({}-{}) names node {end}, but there are only {n} nodes",
                        s.a, s.b
                    ));
                }
            }
            if s.a == s.b {
                return Err(format!("link {l} is a self-loop on node {}", s.a));
            }
            if s.rate.0 == 0 {
                return Err(format!("link {l} ({}-{}) has zero rate", s.a, s.b));
            }
            s.delay.check_setting(&format!("link {l} ({}-{}) delay", s.a, s.b))?;
        }
        let adj = routes::adjacency(self);
        let start = (0..n as u32).find(|&i| !self.is_host(i));
        let transit_all = start.is_none();
        let start = start.unwrap_or(0);
        let mut seen = vec![false; n];
        seen[start as usize] = true;
        let mut queue = vec![start];
        while let Some(u) = queue.pop() {
            if u != start && !transit_all && self.is_host(u) {
                continue;
            }
            for &(_, v) in &adj[u as usize] {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    queue.push(v);
                }
            }
        }
        if let Some(bad) = seen.iter().position(|&s| !s) {
            let what = if self.is_host(bad as u32) { "host" } else { "switch" };
            return Err(format!(
                "topology is disconnected: {what} {bad} is unreachable from node {start}{}",
                if transit_all { "" } else { " (hosts do not forward)" }
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize) -> Topology {
        let mut t = Topology::default();
        for _ in 0..n {
            t.add_node(NodeKind::Switch { tier: 0 });
        }
        for i in 1..n as u32 {
            t.add_link(i - 1, i, Rate::gbps(1), Time::from_ns(1));
        }
        t
    }

    #[test]
    fn helpers() {
        let t = star(3, Rate::gbps(100), Time::from_us(1));
        assert_eq!(t.host_ids(), vec![0, 1, 2]);
        assert_eq!(t.switch_ids(), vec![3]);
        assert!(t.is_host(2) && !t.is_host(3) && !t.is_host(99));
        assert_eq!(t.tier(3), Some(0));
        assert_eq!(t.neighbours(3), vec![(1, 0), (3, 1), (5, 2)]);
        assert_eq!(t.port_node(5), 3);
        assert_eq!(t.port_node(peer_port(5)), 2);
        assert_eq!(port_link(5), 2);
        assert!(t.validate().is_ok());
    }

    #[test]
    fn validate_names_problems() {
        let mut t = line(3);
        t.links[1].b = 7;
        assert!(t.validate().unwrap_err().contains("node 7"));
        let mut t = line(3);
        t.links[0].b = 0;
        assert!(t.validate().unwrap_err().contains("self-loop"));
        let mut t = line(3);
        t.links[1].rate = Rate(0);
        assert!(t.validate().unwrap_err().contains("zero rate"));
        let mut t = line(3);
        t.add_node(NodeKind::Host);
        let e = t.validate().unwrap_err();
        assert!(e.contains("host 3 is unreachable"), "{e}");
        assert!(Topology::default().validate().is_err());
    }

    #[test]
    fn hosts_are_not_transit() {
        // switch 0 - host 1 - switch 2: connected as a graph, but no switch path joins 0 and 2.
        let mut t = Topology::default();
        t.add_node(NodeKind::Switch { tier: 0 });
        t.add_node(NodeKind::Host);
        t.add_node(NodeKind::Switch { tier: 0 });
        t.add_link(0, 1, Rate::gbps(1), Time::ZERO);
        t.add_link(1, 2, Rate::gbps(1), Time::ZERO);
        assert!(t.validate().unwrap_err().contains("switch 2"));
        // two hosts and no switch: fine.
        let mut t = Topology::default();
        t.add_node(NodeKind::Host);
        t.add_node(NodeKind::Host);
        t.add_link(0, 1, Rate::gbps(1), Time::ZERO);
        assert!(t.validate().is_ok());
    }
}
