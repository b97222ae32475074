//! Star: n hosts on one switch, the smallest network with a shared egress queue.
//!
//! Why: incast and fairness tests need exactly one congestion point (the switch port to the
//! receiver) and nothing else; every path is host -> switch -> host, two ports long.

use super::{NodeKind, Topology};
use crate::time::{Rate, Time};

/// `n_hosts` hosts (ids `0..n_hosts`) each wired to one switch (id `n_hosts`, tier 0) at
/// `host_rate` with one-way `delay`. Link `h` joins host `h` (end `a`) to the switch.
pub fn star(n_hosts: usize, host_rate: Rate, delay: Time) -> Topology {
    let mut t = Topology::default();
    for _ in 0..n_hosts {
        t.add_node(NodeKind::Host);
    }
    let sw = t.add_node(NodeKind::Switch { tier: 0 });
    for h in 0..n_hosts as u32 {
        t.add_link(h, sw, host_rate, delay);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape() {
        let t = star(4, Rate::gbps(100), Time::from_us(1));
        assert_eq!(t.nodes.len(), 5);
        assert_eq!(t.links.len(), 4);
        assert_eq!(t.host_ids(), vec![0, 1, 2, 3]);
        assert_eq!(t.nodes[4], NodeKind::Switch { tier: 0 });
        assert!(t.links.iter().all(|l| l.b == 4 && l.rate == Rate::gbps(100)));
        t.validate().unwrap();
    }
}
