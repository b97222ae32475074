//! Three-tier k-ary fat-tree (Al-Fares, Loukissas, Vahdat, SIGCOMM 2008, §2.2).
//!
//! Why: the standard multi-rooted datacenter tree; with k/2 hosts per edge switch it has full
//! bisection bandwidth, and its up/down paths give ECMP choices at two tiers (edge and
//! aggregation), so it exercises load balancing and multi-hop congestion that a leaf-spine
//! cannot. Per the paper: k pods, each with k/2 edge and k/2 aggregation switches; (k/2)^2 core
//! switches; aggregation switch j of every pod connects to cores j*(k/2) .. j*(k/2)+k/2-1 (the
//! "k/2 strides"), so each core reaches every pod exactly once.

use super::{NodeKind, Topology};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// A k-ary fat-tree. Node ids: hosts first (host `i` of edge `e` of pod `p` is
/// `(p * k/2 + e) * hosts_per_edge + i`), then edge switches (tier 0), aggregation (tier 1) and
/// core (tier 2), each pod-major. Link ids: host links first (link `h` belongs to host `h`), then
/// edge-aggregation links pod by pod, then aggregation-core links; end `a` is always the lower
/// tier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FatTree {
    /// Switch radix; even and at least 2.
    pub k: usize,
    /// Hosts per edge switch: k/2 gives full bisection; more oversubscribes the edge uplinks
    /// (k gives 2:1 when host and fabric rates match).
    pub hosts_per_edge: usize,
    pub host_rate: Rate,
    pub fabric_rate: Rate,
    /// One-way propagation delay of every link.
    pub delay: Time,
}

impl FatTree {
    /// The full-bisection fat-tree (`hosts_per_edge = k/2`). Errs unless k is even and >= 2.
    pub fn new(
        k: usize,
        host_rate: Rate,
        fabric_rate: Rate,
        delay: Time,
    ) -> Result<FatTree, String> {
        let ft = FatTree { k, hosts_per_edge: k / 2, host_rate, fabric_rate, delay };
        ft.check()?;
        Ok(ft)
    }

    /// Overrides the hosts per edge switch (to oversubscribe the edge).
    pub fn with_hosts_per_edge(mut self, n: usize) -> FatTree {
        self.hosts_per_edge = n;
        self
    }

    fn check(&self) -> Result<(), String> {
        if self.k < 2 || !self.k.is_multiple_of(2) {
            return Err(format!("fat-tree k must be even and at least 2, got {}", self.k));
        }
        if self.hosts_per_edge == 0 {
            return Err("fat-tree needs at least one host per edge switch".into());
        }
        Ok(())
    }

    fn half(&self) -> usize {
        self.k / 2
    }
    pub fn n_hosts(&self) -> usize {
        self.k * self.half() * self.hosts_per_edge
    }
    /// Node id of edge switch `e` of pod `p`.
    pub fn edge_id(&self, p: usize, e: usize) -> u32 {
        (self.n_hosts() + p * self.half() + e) as u32
    }
    /// Node id of aggregation switch `j` of pod `p`.
    pub fn agg_id(&self, p: usize, j: usize) -> u32 {
        (self.n_hosts() + self.k * self.half() + p * self.half() + j) as u32
    }
    /// Node id of core switch `c` (0 .. (k/2)^2).
    pub fn core_id(&self, c: usize) -> u32 {
        (self.n_hosts() + 2 * self.k * self.half() + c) as u32
    }
    /// Edge uplink oversubscription: host capacity over uplink capacity per edge switch.
    pub fn oversubscription(&self) -> f64 {
        (self.hosts_per_edge as f64 * self.host_rate.0 as f64)
            / (self.half() as f64 * self.fabric_rate.0 as f64)
    }

    pub fn build(&self) -> Result<Topology, String> {
        self.check()?;
        let (k, h) = (self.k, self.half());
        let mut t = Topology::default();
        for _ in 0..self.n_hosts() {
            t.add_node(NodeKind::Host);
        }
        for (tier, count) in [(0u8, k * h), (1, k * h), (2, h * h)] {
            for _ in 0..count {
                t.add_node(NodeKind::Switch { tier });
            }
        }
        for host in 0..self.n_hosts() {
            let edge = host / self.hosts_per_edge;
            t.add_link(host as u32, self.edge_id(edge / h, edge % h), self.host_rate, self.delay);
        }
        for p in 0..k {
            for e in 0..h {
                for j in 0..h {
                    t.add_link(self.edge_id(p, e), self.agg_id(p, j), self.fabric_rate, self.delay);
                }
            }
        }
        for p in 0..k {
            for j in 0..h {
                for c in j * h..(j + 1) * h {
                    t.add_link(self.agg_id(p, j), self.core_id(c), self.fabric_rate, self.delay);
                }
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ft(k: usize) -> FatTree {
        FatTree::new(k, Rate::gbps(100), Rate::gbps(100), Time::from_us(1)).unwrap()
    }

    #[test]
    fn k4_counts() {
        let f = ft(4);
        let t = f.build().unwrap();
        assert_eq!(t.n_hosts(), 16);
        assert_eq!(t.nodes.len(), 16 + 8 + 8 + 4);
        assert_eq!(t.links.len(), 16 + 16 + 16);
        let tiers = |x| t.nodes.iter().filter(|n| **n == NodeKind::Switch { tier: x }).count();
        assert_eq!((tiers(0), tiers(1), tiers(2)), (8, 8, 4));
        t.validate().unwrap();
    }

    #[test]
    fn every_core_reaches_every_pod_once() {
        let f = ft(6);
        let t = f.build().unwrap();
        for c in 0..9 {
            let mut pods: Vec<usize> = t
                .neighbours(f.core_id(c))
                .iter()
                .map(|&(_, n)| (n - f.agg_id(0, 0)) as usize / 3)
                .collect();
            pods.sort();
            assert_eq!(pods, (0..6).collect::<Vec<_>>());
        }
        // agg 1 of pod 2 reaches cores 3, 4, 5.
        let ups: Vec<u32> = t
            .neighbours(f.agg_id(2, 1))
            .iter()
            .map(|x| x.1)
            .filter(|&n| n >= f.core_id(0))
            .collect();
        assert_eq!(ups, vec![f.core_id(3), f.core_id(4), f.core_id(5)]);
    }

    #[test]
    fn oversubscribed_and_bad_k() {
        let f = ft(4).with_hosts_per_edge(4);
        assert_eq!(f.oversubscription(), 2.0);
        let t = f.build().unwrap();
        assert_eq!(t.n_hosts(), 32);
        assert_eq!(t.links[5].b, f.edge_id(0, 1));
        t.validate().unwrap();
        assert!(FatTree::new(3, Rate::gbps(1), Rate::gbps(1), Time::ZERO).is_err());
        assert!(FatTree::new(0, Rate::gbps(1), Rate::gbps(1), Time::ZERO).is_err());
        assert!(ft(2).build().unwrap().validate().is_ok());
    }
}
