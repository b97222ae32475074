//! Two long DCQCN flows on one bottleneck converge to within 10% of the fair share.

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::params::{EcnConfig, WindowConfig};
use hopsim_core::topo::star;
use hopsim_core::workload::FlowSpec;
use hopsim_core::{Rate, Simulation, Time};

fn delivered_at(stop: Time) -> (Vec<u64>, hopsim_core::stats::Counters) {
    let t = star(3, Rate::gbps(40), Time::from_us(1));
    // P-PFC's Table 2 ECN setting with DCQCN: Kmin 40 KB, Kmax 200 KB, Pmax 1
    let mut cfg = NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), stop_time: Some(stop), ..Default::default() };
    cfg.switch.ecn = EcnConfig { enabled: true, kmin_bytes: 40_000, kmax_bytes: 200_000, pmax: 1.0, ref_rate: None };
    cfg.host.window = WindowConfig::Off;
    cfg.record.buffer_interval = None;
    let big = 1u64 << 40;
    // the second flow starts later: it must claim its share from the first
    let flows: Vec<FlowSpec> = vec![flow(0, 2, big, Time::ZERO), flow(1, 2, big, Time::from_ms(2))];
    let mut sim = Simulation::new(&t, &flows, cfg).unwrap();
    sim.run();
    (sim.stats.flows.delivered_bytes.clone(), sim.stats.counters.clone())
}

#[test]
fn two_dcqcn_flows_share_fairly() {
    let (a, _) = delivered_at(Time::from_ms(20));
    let (b, c) = delivered_at(Time::from_ms(40));
    // it is DCQCN that shares the link: rate cuts on CNPs keep the queue under the PFC threshold
    // (without congestion control these line-rate senders fill the buffer and are paused)
    assert!(c.cnps > 0, "DCQCN must have been told about congestion");
    assert_eq!(c.pauses_sent, 0, "the queue must stay below the PFC threshold");
    let window = Time::from_ms(20);
    let fair = Rate::gbps(40).bytes_in(window) as f64 / 2.0;
    let got: Vec<f64> = (0..2).map(|i| (b[i] - a[i]) as f64).collect();
    for (i, g) in got.iter().enumerate() {
        let dev = (g - fair).abs() / fair;
        assert!(dev < 0.10, "flow {i}: {:.2} Gb/s vs fair {:.2} Gb/s ({:.1}% off)", g * 8.0 / 0.02 / 1e9, fair * 8.0 / 0.02 / 1e9, dev * 100.0);
    }
    // and the link is used: goodput over 90% of the payload capacity
    let total: f64 = got.iter().sum();
    assert!(total > 0.85 * 2.0 * fair, "utilisation {:.2}", total / (2.0 * fair));
}
