//! The route memo (`topo::route_memo`) gives every packet the route the tables give it, in whole
//! runs: hopsim's ECMP and the HPCC simulator's, data and replies, lossy with go-back-N (late
//! packets of finished flows), and links going down and up mid-run (the tables are rebuilt and
//! the memo must forget). Every record is compared, event count included.

use crate::common::*;
use hopsim_core::Time;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::params::{EcmpHash, FaultsConfig, LinkEvent, LinkState};
use hopsim_core::scenario::Scenario;

/// 16 hosts on four ToRs over three spines, WebSearch at 70% plus 8-to-1 incasts every 50 us.
fn scenario(ecmp: EcmpHash, fc: FcConfig, faults: FaultsConfig) -> Scenario {
    let lossless = fc == FcConfig::Pfc;
    let mut net = NetConfig { fc, seed: 5, cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    net.switch.buffer_bytes = if lossless { 2_000_000 } else { 300_000 };
    net.switch.lossless = net.fc.pauses();
    net.routing.ecmp = ecmp;
    net.record.buffer_interval = None;
    net.faults = faults;
    websearch_incastmix((4, 4, 3), 0.7, Time::from_us(800), 8, (20_000, 60_000), Time::from_us(50), net)
}

#[test]
fn remembered_routes_are_the_tables_routes_in_whole_runs() {
    // leaf_spine_100g: hosts first (0-15), then ToRs 16-19 and spines 20-22
    let flaps = FaultsConfig {
        link_events: vec![
            LinkEvent { at: Time::from_us(120), link: (16, 20), state: LinkState::Down },
            LinkEvent { at: Time::from_us(300), link: (16, 20), state: LinkState::Up },
            LinkEvent { at: Time::from_us(350), link: (18, 21), state: LinkState::Down },
        ],
        ..Default::default()
    };
    for ecmp in [EcmpHash::Hopsim, EcmpHash::Hpcc] {
        for (fc, faults) in [(FcConfig::Pfc, FaultsConfig::default()), (FcConfig::None, FaultsConfig::default()), (FcConfig::Pfc, flaps.clone())] {
            let sc = scenario(ecmp, fc.clone(), faults.clone());
            let lossy = fc == FcConfig::None;
            let memo = sc.run().unwrap();
            let mut sim = sc.build().unwrap();
            sim.use_no_route_memo();
            let plain = sim.run().clone();
            let what = format!("{ecmp:?}, lossy {lossy}, {} link events", faults.link_events.len());
            assert!(memo.counters.flows > 100, "{what}: a busy run");
            assert!(memo.flows == plain.flows, "{what}: the flow records differ");
            assert!(memo.counters == plain.counters, "{what}: the counters differ (events included)");
            assert!(memo.ports == plain.ports, "{what}: the port records differ");
            if lossy {
                assert!(memo.counters.drops > 0, "{what}: the lossy run loses packets and repairs them");
            }
        }
    }
}
