//! Two datacenters joined by one long link (BFC paper, NSDI'22, Appendix E.3).
//!
//! Why: a long inter-DC link has a bandwidth-delay product hundreds of times that of the
//! fabric, so it tests whether a scheme keeps a long link busy without its in-flight data
//! hurting the tail latency of local traffic.
//!
//! Defaults follow E.3: "a Clos topology with 64 leaf servers, and 100 Gbps links", and "two
//! gateway switches connect the data centers using a 200 Gbps link with 200 μs of one-way
//! delay". The paper leaves some choices open; ours, all overridable:
//! - 64 hosts *per* datacenter (we read "64 leaf servers" as each DC's Clos), laid out like the
//!   §6 Clos: 16 hosts per ToR, so 4 ToRs, and 8 spines (2:1 at the ToR), 1 us per link.
//! - Each gateway is a dedicated switch (tier 2) above its DC's spines, one 100 Gb/s, 1 us link
//!   to every spine, so inter-DC traffic takes ECMP up to any spine and the gateway's port onto
//!   the long link is the bottleneck the paper measures.

use super::{LeafSpine, NodeKind, Topology};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// Two identical leaf-spine datacenters and a gateway-to-gateway long link. Node ids: DC 0's
/// hosts, DC 1's hosts, DC 0's switches (ToRs then spines), DC 1's switches, gateway 0,
/// gateway 1. Link ids: host links (link `h` belongs to host `h`), DC 0's fabric, DC 1's
/// fabric, spine-gateway links (end `a` at the spine), and last the long link (end `a` at
/// gateway 0).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MultiDc {
    /// The layout of each datacenter.
    pub dc: LeafSpine,
    /// Rate of each spine-gateway link.
    pub gateway_rate: Rate,
    pub gateway_delay: Time,
    /// The inter-datacenter link.
    pub long_rate: Rate,
    pub long_delay: Time,
}

impl Default for MultiDc {
    fn default() -> Self {
        MultiDc::bfc_nsdi22_e3()
    }
}

impl MultiDc {
    /// BFC Appendix E.3: 2 x 64 hosts at 100 Gb/s, 200 Gb/s long link with 200 us one-way delay.
    pub fn bfc_nsdi22_e3() -> MultiDc {
        MultiDc {
            dc: LeafSpine { tors: 4, ..LeafSpine::bfc_nsdi22() },
            gateway_rate: Rate::gbps(100),
            gateway_delay: Time::from_us(1),
            long_rate: Rate::gbps(200),
            long_delay: Time::from_us(200),
        }
    }

    fn dc_hosts(&self) -> usize {
        self.dc.n_hosts()
    }
    fn dc_switches(&self) -> usize {
        self.dc.tors + self.dc.spines
    }
    pub fn n_hosts(&self) -> usize {
        2 * self.dc_hosts()
    }
    /// Node id of host `i` of datacenter `dc` (0 or 1).
    pub fn host_id(&self, dc: usize, i: usize) -> u32 {
        (dc * self.dc_hosts() + i) as u32
    }
    /// Node id of ToR `t` of datacenter `dc`.
    pub fn tor_id(&self, dc: usize, t: usize) -> u32 {
        (self.n_hosts() + dc * self.dc_switches() + t) as u32
    }
    /// Node id of spine `s` of datacenter `dc`.
    pub fn spine_id(&self, dc: usize, s: usize) -> u32 {
        self.tor_id(dc, self.dc.tors + s)
    }
    /// Node id of the gateway of datacenter `dc`.
    pub fn gateway_id(&self, dc: usize) -> u32 {
        (self.n_hosts() + 2 * self.dc_switches() + dc) as u32
    }
    /// Which datacenter a node belongs to (`None` for an unknown id).
    pub fn dc_of(&self, node: u32) -> Option<usize> {
        let n = node as usize;
        let (h, s) = (self.dc_hosts(), self.dc_switches());
        if n < 2 * h {
            Some(n / h)
        } else if n < 2 * h + 2 * s {
            Some((n - 2 * h) / s)
        } else if n < 2 * h + 2 * s + 2 {
            Some(n - 2 * h - 2 * s)
        } else {
            None
        }
    }
    /// Link id of the long link (the last link).
    pub fn long_link_id(&self) -> u32 {
        (self.n_hosts()
            + 2 * self.dc.tors * self.dc.spines * self.dc.links_per_spine
            + 2 * self.dc.spines) as u32
    }

    pub fn build(&self) -> Topology {
        let one = self.dc.build();
        let (h, s) = (self.dc_hosts(), self.dc_switches());
        let map = |dc: usize, n: u32| -> u32 {
            let n = n as usize;
            if n < h {
                (dc * h + n) as u32
            } else {
                (2 * h + dc * s + (n - h)) as u32
            }
        };
        let mut t = Topology::default();
        for _ in 0..2 * h {
            t.add_node(NodeKind::Host);
        }
        for _ in 0..2 {
            t.nodes.extend_from_slice(&one.nodes[h..]);
        }
        t.add_node(NodeKind::Switch { tier: 2 });
        t.add_node(NodeKind::Switch { tier: 2 });
        for range in [0..h, h..one.links.len()] {
            for dc in 0..2 {
                for l in &one.links[range.clone()] {
                    t.add_link(map(dc, l.a), map(dc, l.b), l.rate, l.delay);
                }
            }
        }
        for dc in 0..2 {
            for sp in 0..self.dc.spines {
                t.add_link(
                    self.spine_id(dc, sp),
                    self.gateway_id(dc),
                    self.gateway_rate,
                    self.gateway_delay,
                );
            }
        }
        t.add_link(self.gateway_id(0), self.gateway_id(1), self.long_rate, self.long_delay);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e3_shape() {
        let m = MultiDc::default();
        let t = m.build();
        assert_eq!(t.n_hosts(), 128);
        assert_eq!(t.nodes.len(), 128 + 2 * 12 + 2);
        assert_eq!(t.links.len(), 128 + 2 * 32 + 16 + 1);
        let long = t.links[m.long_link_id() as usize];
        assert_eq!(m.long_link_id() as usize, t.links.len() - 1);
        assert_eq!((long.a, long.b), (m.gateway_id(0), m.gateway_id(1)));
        assert_eq!((long.rate, long.delay), (Rate::gbps(200), Time::from_us(200)));
        // host links keep "link h belongs to host h", and hosts land on their own DC's ToRs.
        for hst in 0..128u32 {
            assert_eq!(t.links[hst as usize].a, hst);
            assert_eq!(m.dc_of(t.links[hst as usize].b), m.dc_of(hst));
        }
        assert_eq!(t.links[64].b, m.tor_id(1, 0));
        assert_eq!(t.tier(m.spine_id(1, 7)), Some(1));
        assert_eq!(t.tier(m.gateway_id(1)), Some(2));
        assert_eq!(m.dc_of(m.gateway_id(1)), Some(1));
        assert_eq!(m.dc_of(m.spine_id(0, 7)), Some(0));
        assert_eq!(m.dc_of(999), None);
        // fabric links never cross datacenters.
        for l in &t.links[128..t.links.len() - 1] {
            assert_eq!(m.dc_of(l.a), m.dc_of(l.b));
        }
        t.validate().unwrap();
    }
}
