//! `flow_control.bfc.flow_index = "ns3_header"`: senders write each packet's flow-table key
//! (`bfc_ns3::flow_key`: source address, source port and packet count, as the BFC simulator's
//! `GethqCnt` reads them) and switches index their flow table by it, so two flows whose keys meet
//! share one entry, and one queue assignment, at every hop.

use crate::bfc::bfc_net;
use crate::common::*;
use hopsim_core::fc::bfc::{BfcConfig, FlowIndex};
use hopsim_core::fc::bfc_ns3::flow_key;
use hopsim_core::Time;

/// Queue assignments of two flows from host 0 to host 4 (ToR, spine, ToR), the second with
/// source port `sport_b`, under `flow_index`.
fn assignments(flow_index: FlowIndex, sport_b: u16) -> u64 {
    let t = leaf_spine_100g(4, 2, 1).build();
    let cfg = bfc_net(BfcConfig { flow_index, table_entries: Some(7200), ..Default::default() }, 32);
    let mtu = cfg.host.mtu as u64;
    let mut a = flow(0, 4, 14 * mtu, Time::from_us(1));
    a.sport = 49_153;
    let mut b = flow(0, 4, 13 * mtu, Time::from_us(1));
    b.sport = sport_b;
    let r = run(&t, &[a, b], cfg);
    assert_conserved(&r);
    r.modules["bfc_assignments"]
}

#[test]
fn two_flows_whose_header_keys_meet_share_one_entry_at_every_hop() {
    // 49153 + 13 x 14 = 49166 + 13 x 13: one key, so one entry
    assert_eq!(flow_key(0, 49_153, 14), flow_key(0, 49_166, 13));
    let shared = assignments(FlowIndex::Ns3Header, 49_166);
    let apart = assignments(FlowIndex::Ns3Header, 49_167);
    assert_eq!(shared, 3, "the first flow's assignment at each of three hops serves both");
    assert_eq!(apart, 6, "neighbouring keys: an entry each");
    assert_eq!(assignments(FlowIndex::FidHash, 49_166), 6, "by flow id the ports do not matter");
}
