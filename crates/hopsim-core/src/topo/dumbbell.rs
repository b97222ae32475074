//! Dumbbell: two switches joined by one bottleneck link, hosts on either side.
//!
//! Why: the classic congestion-control test bed; every left-to-right flow shares exactly one
//! bottleneck (the left switch's port onto the middle link), so convergence and fairness can be
//! read off one queue.

use super::{NodeKind, Topology};
use crate::time::{Rate, Time};

/// Hosts `0..left` hang off the left switch (id `left + right`), hosts `left..left + right`
/// off the right switch (id `left + right + 1`); both switches are tier 0. Host `h` uses link
/// `h`; the bottleneck is the last link (id `left + right`, end `a` at the left switch). Every
/// link has one-way `delay`.
pub fn dumbbell(
    left: usize,
    right: usize,
    host_rate: Rate,
    bottleneck_rate: Rate,
    delay: Time,
) -> Topology {
    let mut t = Topology::default();
    for _ in 0..left + right {
        t.add_node(NodeKind::Host);
    }
    let ls = t.add_node(NodeKind::Switch { tier: 0 });
    let rs = t.add_node(NodeKind::Switch { tier: 0 });
    for h in 0..(left + right) as u32 {
        let sw = if (h as usize) < left { ls } else { rs };
        t.add_link(h, sw, host_rate, delay);
    }
    t.add_link(ls, rs, bottleneck_rate, delay);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape() {
        let t = dumbbell(2, 3, Rate::gbps(100), Rate::gbps(10), Time::from_us(1));
        assert_eq!(t.nodes.len(), 7);
        assert_eq!(t.links.len(), 6);
        assert_eq!(t.host_ids(), vec![0, 1, 2, 3, 4]);
        assert_eq!((t.links[1].b, t.links[2].b), (5, 6));
        let mid = t.links[5];
        assert_eq!((mid.a, mid.b, mid.rate), (5, 6, Rate::gbps(10)));
        t.validate().unwrap();
    }
}
