//! Hosts with several links (multi-NIC hosts): which NIC a flow is bound to, and which NIC its
//! receiver's ACKs, NACKs and CNPs leave by.
//!
//! What the HPCC ns-3 simulator does (alibaba-edu/High-Precision-Congestion-Control, the version
//! the reference runs used): a host has one RDMA NIC per link (`RdmaHw::m_nic`, one
//! `QbbNetDevice` with its own `RdmaEgressQueue`, PFC state and rate each). `third.cc`'s
//! `CalculateRoute` runs its shortest-path BFS towards every host and, unlike a plain host route,
//! lists next hops for hosts too (`nextHop[host][dst]`); `SetRoutingEntries` hands a host's list
//! to its `RdmaHw::AddTableEntry`, so `m_rtTable[dip]` holds the NICs on shortest paths to `dip`.
//! `RdmaHw::AddQueuePair` binds a new queue pair to NIC `GetNicIdxOfQp(qp)` = `v[qp->GetHash() %
//! v.size()]` with `v = m_rtTable[dip]`: a per-flow choice by the 5-tuple hash
//! (`RdmaQueuePair::GetHash`: ns-3's `Hash32`, i.e. 32-bit MurmurHash3 seeded 0x8BADF00D, of the
//! 12 bytes sip, dip, sport, dport), fixed for the flow's life; the queue pair takes that NIC's
//! rate as its line rate and is served only by that NIC's queue. The receiver answers
//! (`ReceiveUdp`) through `GetNicIdxOfRxQp(rxQp)`: the same rule on its own table towards the
//! sender, with the receive queue pair's tuple, which is the data's reversed (sip = receiver,
//! dip = sender, sport = the data's dport, dport = the data's sport). So data and ACKs choose
//! independently, each among the NICs on a shortest path in its own direction.
//!
//! hopsim does the same: `Simulation::hosts` has one `Host` (NIC) per host link, a flow's
//! `src_nic` and `ack_nic` are chosen once at assembly over `Routes::next_hops` of the sending
//! and the receiving host (the NICs on shortest paths, as `m_rtTable`), and everything per NIC
//! (round robin of queue pairs, PFC and queue pauses, gates, line rate, the flow's window, ideal
//! FCT and congestion-control line rate) follows from the port.
//!
//! Interpretation choices:
//! - The hash. Under `routing.ecmp = "hpcc"` (what `import-hpcc` writes) the choice is the
//!   simulator's exactly: `Hash32` of its tuple (`hpcc_nic_hash`) modulo the candidate list in
//!   `CalculateRoute`'s order, so the same flows share a NIC as there. Otherwise it is
//!   hopsim's own ECMP: `Routes::pick` with the flow's hash at the host, the rule every switch on
//!   the path applies, so a host's NIC is just the first hop of the flow's ECMP path (and the
//!   ACK's NIC the first hop of its reverse path). Both are deterministic for a seed and spread
//!   flows evenly over the candidates.
//! - Only the hosts' data and replies are bound this way; control frames (PFC and the schemes'
//!   frames) are link-local and leave by the port they concern.
//! - A one-link host has one candidate, so nothing changes for it: its only NIC, as before.
//! - The choice is made once per flow at assembly, and made again whenever link failures change
//!   the routes (`faults.rs`): the simulator's `TakeDownLink` rebuilds every host's table and
//!   calls `RdmaHw::RedistributeQp`, which moves each queue pair to `GetNicIdxOfQp` under the new
//!   table, and its receivers look their NIC up in the current table at every reply. A moved
//!   flow goes last in its new NIC's round robin and keeps what was fixed at its start (line
//!   rate, window cap, ideal FCT), as the simulator's queue pair keeps its rate and window.

use crate::params::EcmpHash;
use crate::ids::NodeRef;
use crate::sim::Simulation;
use crate::topo::ecmp_hpcc::hpcc_nic_hash;
use crate::topo::routes::NO_ROUTE;
use crate::workload::FlowSpec;

impl Simulation {
    /// The port by which host `from` sends the packets of flow `f` (spec `s`, hash `hash`) to
    /// host `to`: its data when `reply` is false (`from` = the flow's source), its ACKs, NACKs
    /// and CNPs when true (`from` = the flow's destination). `NO_ROUTE` if no NIC of `from`
    /// reaches `to`.
    pub(crate) fn nic_port(&self, from: u32, to: u32, s: &FlowSpec, hash: u32, reply: bool) -> u32 {
        match self.ecmp {
            EcmpHash::Hopsim => return self.routes.pick(from, to, hash as u64),
            // its hosts route as its switches do: the tuple over the host's equal-cost links
            EcmpHash::Ns3Global => return self.routes.pick_index(from, to, self.header_hash(from, from, to, s, reply)),
            EcmpHash::Hpcc => {}
        }
        let (src, dst) = if reply { (s.dst, s.src) } else { (s.src, s.dst) };
        debug_assert_eq!((from, to), (src, dst));
        self.routes.pick_index(from, to, hpcc_nic_hash(src, dst, s.sport, s.dport, reply))
    }

    /// The NIC (index into `hosts`) that owns host port `p`. Panics if `p` is a switch's port.
    #[inline]
    pub(crate) fn nic_of_port(&self, p: u32) -> u32 {
        match self.owner_of_port(p) {
            NodeRef::Host(nic) => nic,
            NodeRef::Switch(_) => panic!("port {p} is a switch's, not a NIC"),
        }
    }

    /// What owns port `p`: its switch, or its NIC (`NodeRef::Host` of the NIC's index). One
    /// load from the port itself, where the node's `node_ref` would need two.
    #[inline]
    pub(crate) fn owner_of_port(&self, p: u32) -> NodeRef {
        self.ports[p as usize].owner
    }

    /// Record the owner of every port, for `owner_of_port`: a switch port's switch, a host
    /// port's NIC.
    pub(crate) fn set_port_owners(ports: &mut [crate::queues::port::Port], node_ref: &[NodeRef]) {
        for port in ports {
            port.owner = match node_ref[port.node as usize] {
                NodeRef::Host(h) => NodeRef::Host(h + port.local as u32),
                s => s,
            };
        }
    }

    /// The sender's and receiver's NICs (`src_nic`, `ack_nic`) of flow `id` with spec `f` and
    /// ECMP hash `hash`, given the first port of its data path. Errors name the flow when the
    /// receiver cannot answer.
    pub(crate) fn nic_binding(&self, id: u32, f: &FlowSpec, hash: u32, first_port: u32) -> Result<(u32, u32), String> {
        let NodeRef::Host(h) = self.node_ref[f.dst as usize] else { unreachable!("flows end at hosts") };
        // a one-link receiver answers by its only NIC (no look-up: most flows of most runs)
        let ack_nic = if self.hosts[h as usize].nics == 1 {
            h
        } else {
            let back = self.nic_port(f.dst, f.src, f, hash, true);
            if back == NO_ROUTE {
                return Err(format!("flow {id}: no route back from {} to {} for its ACKs", f.dst, f.src));
            }
            self.nic_of_port(back)
        };
        Ok((self.nic_of_port(first_port), ack_nic))
    }
}

impl Simulation {
    /// The routes changed (a link went down or came up, `faults.rs`): each unfinished flow of a
    /// multi-NIC host takes the NIC the new routes choose (`RdmaHw::RedistributeQp`), and its
    /// receiver's replies the NIC they choose. A pair with no route left keeps its NIC (its
    /// packets are lost on the way, as any flow's whose path broke). Nothing to do without
    /// multi-NIC hosts.
    pub(crate) fn rebind_nics(&mut self) {
        if self.hosts.iter().all(|h| h.nics == 1) {
            return;
        }
        for f in 0..self.flows.len() as u32 {
            // a flow not started has its binding in its fixed data; a freed one had finished
            let started = self.flows.started(f);
            if started && self.flows.get(f).is_none_or(|fl| fl.sender_done) {
                continue;
            }
            let fx = self.flows.fixed(f);
            let (s, hash) = (fx.spec, fx.hash(f, self.cfg.seed));
            let back = self.nic_port(s.dst, s.src, &s, hash, true);
            if back != NO_ROUTE {
                let nic = self.nic_of_port(back);
                self.flows.set_ack_nic(f, nic);
            }
            let out = self.nic_port(s.src, s.dst, &s, hash, false);
            if out == NO_ROUTE || self.nic_of_port(out) == self.flows.src_nic(f) {
                continue;
            }
            if !started {
                self.flows.fixed_mut(f).src_nic = self.nic_of_port(out);
                continue;
            }
            if !self.owns(s.src) {
                // the receiver's half: its copy follows, the sender's partition moves the flow
                self.flows[f as usize].src_nic = self.nic_of_port(out);
                continue;
            }
            self.leave_nic(f);
            self.flows[f as usize].src_nic = self.nic_of_port(out);
            let h = self.join_nic(f);
            self.kick(self.hosts[h as usize].port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NetConfig;
use crate::params::EcmpHash;
    use crate::time::{Rate, Time};
    use crate::topo::{NodeKind, Topology};

    const H: u32 = 0;
    const R: u32 = 1;
    const Q: u32 = 2;
    const X: u32 = 3;

    /// H dual-homed (local port 0 to T0, 1 to T1); R on T2, Q on T0, X on T1; ToRs under spine S.
    fn net() -> Topology {
        let mut t = Topology::default();
        for _ in 0..4 {
            t.add_node(NodeKind::Host);
        }
        let tors: Vec<u32> = (0..3).map(|_| t.add_node(NodeKind::Switch { tier: 0 })).collect();
        let s = t.add_node(NodeKind::Switch { tier: 1 });
        let (g, d) = (Rate::gbps(100), Time::from_us(1));
        for (a, b) in [(H, tors[0]), (H, tors[1]), (R, tors[2]), (Q, tors[0]), (X, tors[1])] {
            t.add_link(a, b, g, d);
        }
        for &tor in &tors {
            t.add_link(tor, s, g, d);
        }
        t
    }

    /// `n` flows `src -> dst`, ports numbered from 10000 as `third.cc` does.
    fn flows(src: u32, dst: u32, n: usize) -> Vec<FlowSpec> {
        (0..n)
            .map(|i| FlowSpec { src, dst, size: 1000, start: Time::ZERO, prio: 3, incast: false, sport: 10_000 + i as u16, dport: 100, pg: 0, rate_cap: None })
            .collect()
    }

    fn build(f: &[FlowSpec], ecmp: EcmpHash, seed: u64) -> Simulation {
        let mut cfg = NetConfig { seed, ..Default::default() };
        cfg.routing.ecmp = ecmp;
        Simulation::new(&net(), f, cfg).expect("builds")
    }

    /// Which of H's NICs (0 or 1; H's NICs are `hosts` 0 and 1) each flow sends by and each
    /// flow's ACKs leave H by (for flows to H).
    fn nics(s: &Simulation) -> (Vec<u32>, Vec<u32>) {
        let all = || (0..s.flows.len() as u32).map(|i| s.flows.fixed(i));
        (all().map(|f| f.src_nic).collect(), all().map(|f| f.ack_nic).collect())
    }

    #[test]
    fn only_nics_on_a_shortest_path_are_chosen() {
        for ecmp in [EcmpHash::Hopsim, EcmpHash::Hpcc] {
            // Q is two hops away through T0 (NIC 0), four through T1; X the other way round
            let s = build(&flows(H, Q, 200), ecmp, 1);
            assert!(nics(&s).0.iter().all(|&n| n == 0), "{ecmp:?}");
            let s = build(&flows(H, X, 200), ecmp, 1);
            assert!(nics(&s).0.iter().all(|&n| n == 1), "{ecmp:?}");
            // the replies to Q's and X's flows leave H by the same rule
            let s = build(&flows(Q, H, 200), ecmp, 1);
            assert!(nics(&s).1.iter().all(|&n| n == 0), "{ecmp:?}");
            let s = build(&flows(X, H, 200), ecmp, 1);
            assert!(nics(&s).1.iter().all(|&n| n == 1), "{ecmp:?}");
        }
    }

    #[test]
    fn flows_spread_evenly_over_nics_on_equal_paths() {
        for ecmp in [EcmpHash::Hopsim, EcmpHash::Hpcc] {
            let n = 2000;
            let s = build(&flows(H, R, n), ecmp, 1);
            let on1 = nics(&s).0.iter().filter(|&&k| k == 1).count();
            assert!((900..=1100).contains(&on1), "{ecmp:?}: {on1} of {n} flows on NIC 1");
            let s = build(&flows(R, H, n), ecmp, 1);
            let on1 = nics(&s).1.iter().filter(|&&k| k == 1).count();
            assert!((900..=1100).contains(&on1), "{ecmp:?}: {on1} of {n} flows' ACKs by NIC 1");
            // a single-homed host's NIC is its only one
            let r_nic = s.flows.fixed(0).src_nic;
            assert!((0..n as u32).all(|i| s.flows.fixed(i).src_nic == r_nic) && s.hosts[r_nic as usize].node == R);
        }
    }

    #[test]
    fn the_choice_is_deterministic_and_hopsims_follows_the_seed() {
        let f = flows(H, R, 64);
        for ecmp in [EcmpHash::Hopsim, EcmpHash::Hpcc] {
            assert_eq!(nics(&build(&f, ecmp, 7)), nics(&build(&f, ecmp, 7)), "{ecmp:?}");
        }
        // hopsim's hash mixes the seed in; the simulator's reads only the addresses and ports
        assert_ne!(nics(&build(&f, EcmpHash::Hopsim, 7)).0, nics(&build(&f, EcmpHash::Hopsim, 8)).0);
        assert_eq!(nics(&build(&f, EcmpHash::Hpcc, 7)), nics(&build(&f, EcmpHash::Hpcc, 8)));
    }

    #[test]
    fn a_multi_nic_hosts_modules_are_set_per_nic() {
        use crate::fc::nic::AnyNic;
        let mut s = build(&flows(H, R, 1), EcmpHash::Hopsim, 1);
        let e = s.set_host_nic(H, AnyNic::default()).unwrap_err();
        assert!(e.contains("node 0 has 2 NICs") && e.contains("set_host_nic_at"), "{e}");
        assert!(s.set_host_nic_at(H, 1, AnyNic::default()).is_ok());
        assert_eq!(s.set_host_nic_at(H, 2, AnyNic::default()).unwrap_err(), "node 0 has no NIC on local port 2; allowed: 0 to 1");
        assert!(s.set_host_nic(R, AnyNic::default()).is_ok());
        assert_eq!((s.port_of(H, 1), s.port_of(H, 2)), (Some(s.hosts[1].port), None));
    }

    #[test]
    fn hpcc_mode_takes_the_simulators_hash_modulo_its_nic_list() {
        // third.cc's BFS from R reaches S, then T0 before T1 (node-id order): H's list towards R
        // is [NIC to T0, NIC to T1], and GetNicIdxOfQp takes v[Hash32(tuple) % 2]
        let f = flows(H, R, 64);
        let s = build(&f, EcmpHash::Hpcc, 1);
        for (i, spec) in f.iter().enumerate() {
            let want = hpcc_nic_hash(H, R, spec.sport, spec.dport, false) % 2;
            assert_eq!(s.flows.fixed(i as u32).src_nic, want, "flow {i}");
        }
        // the receiver's answer, H -> R: its receive queue pair's tuple, the data's reversed
        let f = flows(R, H, 64);
        let s = build(&f, EcmpHash::Hpcc, 1);
        for (i, spec) in f.iter().enumerate() {
            let want = hpcc_nic_hash(H, R, spec.sport, spec.dport, true) % 2;
            assert_eq!(s.flows.fixed(i as u32).ack_nic, want, "flow {i}");
        }
    }
}
