//! Two-tier leaf-spine (folded Clos): every ToR wired to every spine.
//!
//! Why: the BFC paper (NSDI'22, §6 "Network Topology") evaluates on such a Clos — 128 servers,
//! 8 ToRs of 16 servers, 8 spines, all links 100 Gb/s with 1 us propagation delay, 2:1
//! oversubscribed at the ToR — and it is the smallest topology with multipath (ECMP over spines)
//! and a congestion point inside the fabric.

use super::{NodeKind, Topology};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

fn one() -> usize {
    1
}

/// A leaf-spine network. Node ids: hosts first (host `h` of ToR `t` is `t * hosts_per_tor + h`),
/// then ToRs (tier 0), then spines (tier 1). Link ids: host links first (link `i` belongs to host
/// `i`, end `a` at the host), then for each ToR, each spine, each parallel link, a fabric link
/// with end `a` at the ToR.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeafSpine {
    pub hosts_per_tor: usize,
    pub tors: usize,
    pub spines: usize,
    pub host_rate: Rate,
    pub fabric_rate: Rate,
    pub host_delay: Time,
    pub fabric_delay: Time,
    /// Parallel links between each ToR and each spine (1 unless a topology bundles links).
    #[serde(default = "one")]
    pub links_per_spine: usize,
}

impl LeafSpine {
    /// The BFC paper's §6 topology: 8 ToRs x 16 hosts, 8 spines, 100 Gb/s and 1 us everywhere
    /// (2:1 oversubscription at the ToR).
    pub fn bfc_nsdi22() -> LeafSpine {
        LeafSpine {
            hosts_per_tor: 16,
            tors: 8,
            spines: 8,
            host_rate: Rate::gbps(100),
            fabric_rate: Rate::gbps(100),
            host_delay: Time::from_us(1),
            fabric_delay: Time::from_us(1),
            links_per_spine: 1,
        }
    }

    /// Picks the spine count so that ToR downlink capacity over uplink capacity,
    /// `hosts_per_tor * host_rate / (spines * fabric_rate)`, equals `oversub` (one link per
    /// ToR-spine pair). Errs when that needs a fractional or zero number of spines.
    pub fn with_oversubscription(
        hosts_per_tor: usize,
        tors: usize,
        host_rate: Rate,
        fabric_rate: Rate,
        oversub: f64,
        host_delay: Time,
        fabric_delay: Time,
    ) -> Result<LeafSpine, String> {
        if !(oversub.is_finite() && oversub > 0.0) {
            return Err(format!("oversubscription must be a positive number, got {oversub}"));
        }
        if fabric_rate.0 == 0 {
            return Err("fabric rate must be positive".into());
        }
        let down = hosts_per_tor as f64 * host_rate.0 as f64;
        let exact = down / (oversub * fabric_rate.0 as f64);
        let spines = exact.round();
        if spines < 1.0 || (exact - spines).abs() > 1e-6 * exact.max(1.0) {
            return Err(format!(
                "oversubscription {oversub} with {hosts_per_tor} hosts at {host_rate} per ToR and \
                 {fabric_rate} uplinks needs {exact:.4} spines; it must be a positive integer"
            ));
        }
        Ok(LeafSpine {
            hosts_per_tor,
            tors,
            spines: spines as usize,
            host_rate,
            fabric_rate,
            host_delay,
            fabric_delay,
            links_per_spine: 1,
        })
    }

    pub fn n_hosts(&self) -> usize {
        self.hosts_per_tor * self.tors
    }
    /// Node id of ToR `t`.
    pub fn tor_id(&self, t: usize) -> u32 {
        (self.n_hosts() + t) as u32
    }
    /// Node id of spine `s`.
    pub fn spine_id(&self, s: usize) -> u32 {
        (self.n_hosts() + self.tors + s) as u32
    }
    /// Downlink over uplink capacity at a ToR.
    pub fn oversubscription(&self) -> f64 {
        (self.hosts_per_tor as f64 * self.host_rate.0 as f64)
            / ((self.spines * self.links_per_spine) as f64 * self.fabric_rate.0 as f64)
    }

    /// Builds the topology. Degenerate parameters (no spines with several ToRs, zero rates)
    /// yield a topology that `Topology::validate` rejects.
    pub fn build(&self) -> Topology {
        let mut t = Topology::default();
        for _ in 0..self.n_hosts() {
            t.add_node(NodeKind::Host);
        }
        for _ in 0..self.tors {
            t.add_node(NodeKind::Switch { tier: 0 });
        }
        for _ in 0..self.spines {
            t.add_node(NodeKind::Switch { tier: 1 });
        }
        for h in 0..self.n_hosts() {
            t.add_link(
                h as u32,
                self.tor_id(h / self.hosts_per_tor),
                self.host_rate,
                self.host_delay,
            );
        }
        for tor in 0..self.tors {
            for s in 0..self.spines {
                for _ in 0..self.links_per_spine {
                    t.add_link(
                        self.tor_id(tor),
                        self.spine_id(s),
                        self.fabric_rate,
                        self.fabric_delay,
                    );
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfc_shape() {
        let ls = LeafSpine::bfc_nsdi22();
        let t = ls.build();
        assert_eq!(t.n_hosts(), 128);
        assert_eq!(t.nodes.len(), 128 + 8 + 8);
        assert_eq!(t.links.len(), 128 + 64);
        assert_eq!(t.links[17].b, ls.tor_id(1));
        assert_eq!(t.tier(ls.tor_id(7)), Some(0));
        assert_eq!(t.tier(ls.spine_id(0)), Some(1));
        assert_eq!(ls.oversubscription(), 2.0);
        t.validate().unwrap();
    }

    #[test]
    fn oversubscription_picks_spines() {
        let d = Time::from_us(1);
        let ls =
            LeafSpine::with_oversubscription(16, 8, Rate::gbps(100), Rate::gbps(100), 2.0, d, d)
                .unwrap();
        assert_eq!(ls, LeafSpine::bfc_nsdi22());
        let ls =
            LeafSpine::with_oversubscription(32, 4, Rate::gbps(25), Rate::gbps(100), 1.0, d, d)
                .unwrap();
        assert_eq!(ls.spines, 8);
        let e =
            LeafSpine::with_oversubscription(16, 8, Rate::gbps(100), Rate::gbps(100), 3.0, d, d)
                .unwrap_err();
        assert!(e.contains("5.3333"), "{e}");
        assert!(LeafSpine::with_oversubscription(1, 2, Rate::gbps(1), Rate::gbps(100), 1.0, d, d)
            .is_err());
        assert!(LeafSpine::with_oversubscription(
            1,
            2,
            Rate::gbps(1),
            Rate::gbps(1),
            f64::NAN,
            d,
            d
        )
        .is_err());
    }

    #[test]
    fn parallel_links() {
        let mut ls = LeafSpine::bfc_nsdi22();
        ls.links_per_spine = 2;
        let t = ls.build();
        assert_eq!(t.links.len(), 128 + 128);
        assert_eq!(ls.oversubscription(), 1.0);
        t.validate().unwrap();
    }
}
