//! Replies along their data's path (`routing.ack_path = "reverse"`): an ACK, NACK or CNP leaves
//! each switch by the port its flow's data came in by, instead of by its own ECMP hash.
//!
//! Why: Floodgate-NS3 runs its DCQCN configuration this way (`SYMMETRIC_ROUTING_MODE 1`): every
//! switch records a data packet's ingress port in a tag (switch-node.cc 715-730,
//! `TagForSymmeticRouting`), the receiver copies the recorded ports into its ACK in reverse
//! (rdma-hw.cc 472-488), and each switch sends the ACK out of the next recorded port
//! (switch-node.cc 179-190). Where the reverse hash would send ACKs over another core, their
//! delay and the queues they meet differ, and so do DCQCN's reaction and the sender-side FCT.
//!
//! A flow's data path is fixed by its hash (both `routing.ecmp` hashes are per flow), so the
//! reply's port at a switch is found from that path, not carried in the packet: the walk is done
//! once per flow and switch (`topo::route_memo` keeps the answer). A switch that is not on the
//! data path (a link failure moved the routes, `crate::faults`) falls back to the reply's own hash.
//! The receiver's NIC stays `net::nic_choice`'s choice: only multi-NIC hosts could differ.

use crate::sim::Simulation;

impl Simulation {
    /// The port at switch `node` by which the data of flow `flow` entered it, `None` if the data
    /// path does not pass `node`.
    pub(crate) fn reverse_of_data(&self, node: u32, flow: u32) -> Option<u32> {
        let fx = self.flows.fixed(flow);
        let path = self.flow_path(&fx.spec, fx.hash(flow, self.cfg.seed));
        // ports number both ends of link l as 2l and 2l + 1 (`topo`), so the far end of
        // egress p is p ^ 1
        path.iter().find(|&&p| self.routes.peer_node(p) == node).map(|&p| p ^ 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::params::AckPath;
    use crate::packet::{Packet, PktKind};
    use crate::sim::Simulation;
    use crate::time::{Rate, Time};
    use crate::topo::LeafSpine;
    use crate::workload::FlowSpec;

    /// A 2-leaf, 4-spine fabric with one flow from leaf 0's first host to leaf 1's first host.
    fn fabric(ack_path: AckPath) -> Simulation {
        let (r, d) = (Rate::gbps(100), Time::from_us(1));
        let topo = LeafSpine { hosts_per_tor: 2, tors: 2, spines: 4, host_rate: r, fabric_rate: r, host_delay: d, fabric_delay: d, links_per_spine: 1 }.build();
        let mut cfg = crate::config::NetConfig::default();
        cfg.routing.ack_path = ack_path;
        let flows: Vec<FlowSpec> = (0..64)
            .map(|i| FlowSpec { src: 0, dst: 2, size: 1000, start: Time::from_ns(i), prio: 3, incast: false, dport: 100, sport: 0, pg: 0, rate_cap: None })
            .collect();
        Simulation::new(&topo, &flows, cfg).expect("builds")
    }

    fn reply(sim: &Simulation, flow: u32) -> Packet {
        let fx = sim.flows.fixed(flow);
        Packet { kind: PktKind::Ack, flow, src: fx.spec.dst, dst: fx.spec.src, hash: fx.hash(flow, sim.cfg.seed), ..Default::default() }
    }

    /// Every hop of every flow's ACK leaves by the port the flow's data came in by.
    #[test]
    fn a_reverse_reply_retraces_its_data_path() {
        let sim = fabric(AckPath::Reverse);
        for flow in 0..64 {
            let fx = sim.flows.fixed(flow);
            let data = sim.flow_path(&fx.spec, fx.hash(flow, sim.cfg.seed));
            assert_eq!(data.len(), 4, "host, leaf, spine, leaf");
            for &p in &data[..3] {
                let node = sim.routes.peer_node(p);
                assert_eq!(sim.route(node, &reply(&sim, flow)), p ^ 1, "flow {flow} at node {node}");
            }
        }
    }

    /// With replies hashed on their own, some flows' ACKs cross another spine than their data
    /// (so the test above could fail), and the reverse setting changes none of the data's ports.
    #[test]
    fn hashed_replies_take_other_spines_for_some_flows() {
        let hashed = fabric(AckPath::Hash);
        let reverse = fabric(AckPath::Reverse);
        let mut other = 0;
        for flow in 0..64 {
            let fx = hashed.flows.fixed(flow);
            let data = hashed.flow_path(&fx.spec, fx.hash(flow, hashed.cfg.seed));
            assert_eq!(data, reverse.flow_path(&fx.spec, fx.hash(flow, reverse.cfg.seed)));
            let dst_leaf = hashed.routes.peer_node(data[2]);
            if hashed.route(dst_leaf, &reply(&hashed, flow)) != data[2] ^ 1 {
                other += 1;
            }
        }
        assert!(other > 8, "only {other} of 64 flows' ACKs left the spine of their data");
    }
}
