//! `WorkloadSpec::stream_on` against the materialised algorithm it replaces: the parts made
//! whole, concatenated, stable-sorted (`sort_flows`) and numbered (`number_sports`).

use super::background::background_flows;
use super::incast::incast_flows;
use super::mix::long_lived;
use super::{number_sports, sort_flows, FlowSpec};
use crate::scenario::{dc_long_pairs, DC_MIX_TOPOLOGY};
use crate::topo::Topology;
use super::background::BackgroundSpec;
use super::cdf::Cdf;
use crate::scenario::{Background, LoadOn, TopologySpec, WorkloadSpec};
use crate::time::{Rate, Time};
use crate::topo::{LeafSpine, MultiDc};
use super::arrivals::{Arrival, Limit, LoadBasis};
use super::explicit::ExplicitFlow;
use super::incast::{IncastSize, IncastSpec, IncastTiming, Senders};

const SMALL_CDF: &str = "1000 0\n4000 0.5\n20000 1\n";

fn leaf_spine(hosts_per_tor: usize, tors: usize) -> LeafSpine {
    let (r, d) = (Rate::gbps(100), Time::from_us(1));
    LeafSpine { hosts_per_tor, tors, spines: 2, host_rate: r, fabric_rate: r, host_delay: d, fabric_delay: d, links_per_spine: 1 }
}

fn bg(load: f64, arrival: Arrival, duration_us: u64) -> Background {
    Background { cdf: SMALL_CDF.into(), load, load_on: LoadOn::HostLinks, arrival, start: Time::from_us(3), duration: Time::from_us(duration_us), prio: 3, dst: None, rack_size: 0 }
}

fn ef(src: u32, dst: u32, size: u64, start_ns: u64) -> ExplicitFlow {
    ExplicitFlow { src, dst, size, start_ns, prio: 3, incast: false, rate_cap: None }
}

/// Every workload kind, in its plain and edge forms (ties in start, errors of each stage),
/// on the topologies they need: (name, topology, workload).
fn cases() -> Vec<(String, TopologySpec, WorkloadSpec)> {
    let star = TopologySpec::Star { hosts: 16, rate: Rate::gbps(100), delay: Time::from_us(1) };
    let ls = TopologySpec::LeafSpine(leaf_spine(4, 4));
    let mdc = TopologySpec::MultiDc(MultiDc { dc: leaf_spine(4, 2), ..MultiDc::bfc_nsdi22_e3() });
    let mut v: Vec<(String, TopologySpec, WorkloadSpec)> = vec![];
    let mut add = |name: &str, t: &TopologySpec, w: WorkloadSpec| v.push((name.to_string(), t.clone(), w));
    for load in [0.2, 0.9] {
        for arrival in [Arrival::Poisson, Arrival::BFC, Arrival::LogNormal { sigma: 4.0 }, Arrival::LogNormal { sigma: 5.5 }] {
            let b = bg(load, arrival, 150);
            add(&format!("bg {load} {arrival:?}"), &star, WorkloadSpec::Background(b.clone()));
            add(&format!("bg core {load} {arrival:?}"), &ls, WorkloadSpec::Background(Background { load_on: LoadOn::CoreLinks, ..b.clone() }));
            add(&format!("bg racks {load} {arrival:?}"), &ls, WorkloadSpec::Background(Background { rack_size: 4, ..b.clone() }));
            add(&format!("bg dst {load} {arrival:?}"), &ls, WorkloadSpec::Background(Background { dst: Some(5), rack_size: 4, ..b.clone() }));
            let mut inc = IncastSpec::new(5, IncastSize::PerFlowRange { min: 1000, max: 9000 }, IncastTiming::Period(Time::from_us(20)));
            add(&format!("mix {load} {arrival:?}"), &star, WorkloadSpec::IncastMix { background: b.clone(), incast: inc });
            (inc.dst, inc.dst_stride, inc.exclude_dsts_from_background, inc.jitter) = (Some(2), 3, true, Time::from_ns(700));
            add(&format!("mix exclude {load} {arrival:?}"), &star, WorkloadSpec::IncastMix { background: b.clone(), incast: inc });
            let share = IncastSpec { timing: IncastTiming::BackgroundShare { share: 0.2, host_rate: Rate::gbps(100) }, senders: Senders::WithReplacement, ..inc };
            add(&format!("mix share {load} {arrival:?}"), &ls, WorkloadSpec::IncastMix { background: b.clone(), incast: share });
            add(&format!("dc_mix {load} {arrival:?}"), &mdc, WorkloadSpec::DcMix { background: b.clone(), long_flows: 3 });
        }
    }
    // many ties: a huge sigma piles arrivals at few instants (or overruns: an error either way)
    let piled = bg(0.5, Arrival::LogNormal { sigma: 9.0 }, 40);
    add("bg piled", &star, WorkloadSpec::Background(piled.clone()));
    for sigma in [6.5, 7.0, 7.5] {
        add(&format!("bg piled {sigma}"), &star, WorkloadSpec::Background(bg(0.5, Arrival::LogNormal { sigma }, 40)));
        add(&format!("mix piled {sigma}"), &star, WorkloadSpec::IncastMix { background: bg(0.5, Arrival::LogNormal { sigma }, 40), incast: IncastSpec { dst: Some(4), exclude_dsts_from_background: true, ..IncastSpec::new(3, IncastSize::Total(3000), IncastTiming::Period(Time::from_us(7))) } });
    }
    // errors of the background at each stage, alone and before a later part's
    let overrun = bg(0.5, Arrival::LogNormal { sigma: 40.0 }, 40);
    add("bg overrun", &star, WorkloadSpec::Background(overrun.clone()));
    add("bg empty", &star, WorkloadSpec::Background(bg(1e-9, Arrival::Poisson, 10)));
    add("bg one rack", &ls, WorkloadSpec::Background(Background { rack_size: 16, ..bg(0.5, Arrival::Poisson, 50) }));
    add("bg one rack overrun", &ls, WorkloadSpec::Background(Background { rack_size: 16, ..overrun.clone() }));
    add("bg one rack empty", &ls, WorkloadSpec::Background(Background { rack_size: 16, ..bg(1e-9, Arrival::Poisson, 10) }));
    add("bg bad dst", &ls, WorkloadSpec::Background(Background { dst: Some(16), ..bg(0.5, Arrival::Poisson, 50) }));
    add("bg dst core", &ls, WorkloadSpec::Background(Background { dst: Some(1), load_on: LoadOn::CoreLinks, ..bg(0.5, Arrival::Poisson, 50) }));
    add("bg core on star", &star, WorkloadSpec::Background(Background { load_on: LoadOn::CoreLinks, ..bg(0.5, Arrival::Poisson, 50) }));
    add("bg bad cdf", &star, WorkloadSpec::Background(Background { cdf: "x".into(), ..bg(0.5, Arrival::Poisson, 50) }));
    add("bg bad sigma", &star, WorkloadSpec::Background(bg(0.5, Arrival::LogNormal { sigma: -1.0 }, 50)));
    add("bg too many", &star, WorkloadSpec::Background(bg(0.5, Arrival::Poisson, 1_000_000_000)));
    let big = IncastSpec::new(40, IncastSize::Total(100_000), IncastTiming::Period(Time::from_us(10)));
    add("mix bad incast", &star, WorkloadSpec::IncastMix { background: bg(0.5, Arrival::Poisson, 50), incast: big });
    add("mix bad incast overrun", &star, WorkloadSpec::IncastMix { background: overrun.clone(), incast: big });
    add("mix piled exclude", &star, WorkloadSpec::IncastMix { background: piled.clone(), incast: IncastSpec { dst: Some(4), exclude_dsts_from_background: true, ..IncastSpec::new(3, IncastSize::Total(3000), IncastTiming::Period(Time::from_us(7))) } });
    add("dc_mix overrun", &mdc, WorkloadSpec::DcMix { background: overrun.clone(), long_flows: 3 });
    add("dc_mix too long", &mdc, WorkloadSpec::DcMix { background: bg(0.5, Arrival::Poisson, 50), long_flows: 9 });
    add("dc_mix too long overrun", &mdc, WorkloadSpec::DcMix { background: overrun.clone(), long_flows: 9 });
    add("dc_mix dst", &mdc, WorkloadSpec::DcMix { background: Background { dst: Some(1), ..bg(0.5, Arrival::Poisson, 50) }, long_flows: 1 });
    add("dc_mix on star", &star, WorkloadSpec::DcMix { background: bg(0.5, Arrival::Poisson, 50), long_flows: 1 });
    // the small kinds: lists with equal starts and repeated pairs
    let list = vec![ef(1, 2, 10, 5), ef(3, 1, 10, 0), ef(1, 2, 20, 5), ef(1, 2, 30, 0), ef(2, 1, 5, 5), ef(0, 4, 7, 1)];
    add("flows", &star, WorkloadSpec::Flows { flows: list.clone() });
    add("flows bad", &star, WorkloadSpec::Flows { flows: vec![ef(1, 2, 10, 5), ef(3, 3, 10, 0)] });
    let text = "4\n1 2 3 100 1000 2.000001\n3 1 3 100 2000 2.0\n1 2 3 100 3000 2.000001\n2 1 3 7 10 2.0000005\n";
    add("hpcc", &star, WorkloadSpec::HpccFlows { text: text.into(), time_offset: Time::from_ms(2000), source_ports: Default::default() });
    add("hpcc late offset", &star, WorkloadSpec::HpccFlows { text: text.into(), time_offset: Time::from_ms(3000), source_ports: Default::default() });
    add("hpcc bad", &star, WorkloadSpec::HpccFlows { text: "2\n1 2 3 100 10 2.0\n".into(), time_offset: Time::ZERO, source_ports: Default::default() });
    let mut inc = IncastSpec::new(6, IncastSize::Total(60_000), IncastTiming::LoadShare { load: 0.3, host_rate: Rate::gbps(100) });
    add("incast", &star, WorkloadSpec::Incast { incast: inc, start: Time::from_us(1), limit: Limit::Duration(Time::from_us(200)) });
    add("incast count", &star, WorkloadSpec::Incast { incast: IncastSpec { jitter: Time::from_ns(90), ..inc }, start: Time::ZERO, limit: Limit::Count(9) });
    inc.exclude_dsts_from_background = true;
    add("incast exclude", &star, WorkloadSpec::Incast { incast: inc, start: Time::ZERO, limit: Limit::Count(2) });
    add("long", &star, WorkloadSpec::LongLived { pairs: vec![(3, 1), (0, 2), (3, 1), (0, 1)], size: 1 << 40, start: Time::from_us(2) });
    add("long self", &star, WorkloadSpec::LongLived { pairs: vec![(3, 3)], size: 10, start: Time::ZERO });
    v
}

/// The flows as `build_on` made them before it streamed: every part whole, then one stable sort
/// of their concatenation and one numbering of source ports.
fn materialised(spec: &TopologySpec, w: &WorkloadSpec, t: &Topology, seed: u64) -> Result<Vec<FlowSpec>, String> {
    let mut flows = match w {
        WorkloadSpec::Background(b) => {
            let (s, cdf) = b.spec(t, seed, 0)?;
            background_flows(&s, &cdf)?
        }
        WorkloadSpec::IncastMix { background, incast } => {
            let (bg, cdf) = background.spec(t, seed, 0)?;
            mixed(&bg, &cdf, incast)?
        }
        WorkloadSpec::DcMix { background: b, long_flows } => {
            let TopologySpec::MultiDc(m) = spec else { return Err(DC_MIX_TOPOLOGY.into()) };
            if b.dst.is_some() {
                return Err("workload.dst: not with kind = \"dc_mix\" (its background stays inside each datacenter)".into());
            }
            let n = m.n_hosts() / 2;
            let dcs: Vec<Vec<u32>> = (0..2).map(|dc| (0..n).map(|i| m.host_id(dc, i)).collect()).collect();
            let (s, cdf) = b.spec(t, seed, 0)?;
            let mut flows = vec![];
            for (i, hosts) in dcs.iter().enumerate() {
                let basis = match s.basis {
                    LoadBasis::Capacity { bps } => LoadBasis::Capacity { bps: bps / 2.0 },
                    LoadBasis::HostLinks { host_rate, .. } => LoadBasis::HostLinks { hosts: hosts.len(), host_rate },
                };
                flows.extend(background_flows(&BackgroundSpec { hosts: hosts.clone(), basis, stream_index: i as u64, ..s.clone() }, &cdf)?);
            }
            flows.extend(long_lived(&dc_long_pairs(*long_flows, &dcs, seed)?, super::mix::LONG_LIVED_SIZE, b.start, b.prio)?);
            flows
        }
        // lists, files, bursts and long-lived flows are listed whole by both
        _ => w.build(t, seed)?,
    };
    sort_flows(&mut flows);
    number_sports(&mut flows);
    Ok(flows)
}

/// `incastmix` as it was: the background whole, the bursts over its window, the destinations'
/// background dropped, one stable sort.
fn mixed(bg: &BackgroundSpec, cdf: &Cdf, incast: &IncastSpec) -> Result<Vec<FlowSpec>, String> {
    let incast = &incast.beside_background(bg.load * bg.basis.capacity_bps(), bg.hosts.len());
    let mut flows = background_flows(bg, cdf)?;
    let window = match bg.limit {
        Limit::Duration(d) => d,
        Limit::Count(_) => Time((flows.last().map_or(bg.start, |f| f.start).0 - bg.start.0).saturating_add(1)),
    };
    let bursts = incast_flows(incast, &bg.hosts, bg.start, Limit::Duration(window), bg.seed, bg.stream_index)?;
    if incast.exclude_dsts_from_background {
        let dsts: Vec<u32> = bursts.iter().map(|f| f.dst).collect();
        flows.retain(|f| !dsts.contains(&f.src) && !dsts.contains(&f.dst));
    }
    flows.extend(bursts);
    sort_flows(&mut flows);
    Ok(flows)
}

/// Flows that start at the same picosecond as the one before them, from another pair than it:
/// where the order rests on the tie-break.
fn ties(v: &[FlowSpec]) -> usize {
    v.windows(2).filter(|w| w[0].start == w[1].start && (w[0].src, w[0].dst) != (w[1].src, w[1].dst)).count()
}

#[test]
fn the_stream_is_the_materialised_workload_flow_for_flow() {
    let (mut compared, mut tied, mut errors, mut late) = (0, 0, 0, 0);
    for (name, spec, w) in cases() {
        let t = spec.build().unwrap();
        for seed in 0..5 {
            let want = materialised(&spec, &w, &t, seed);
            let streamed = w.stream_on(&spec, &t, seed);
            if let (Err(e), Ok(_)) = (&want, &streamed) {
                // only an overrun is found while drawing
                assert!(e.contains("overran"), "{name} seed {seed}: {e} comes from the stream");
                late += 1;
            }
            let got = streamed.and_then(|s| s.collect::<Result<Vec<_>, _>>());
            assert_eq!(got, want, "{name} seed {seed}");
            // a second stream is the same (the lead's counting, checking and running passes)
            assert_eq!(w.stream_on(&spec, &t, seed).and_then(|s| s.collect::<Result<Vec<_>, _>>()), want, "{name} seed {seed}, again");
            match want {
                Ok(v) => {
                    compared += v.len();
                    tied += ties(&v);
                }
                Err(_) => errors += 1,
            }
        }
    }
    // the cases reach what they are there for: many flows, many ties, errors found up front and late
    assert!(compared > 2_000_000 && tied > 100_000 && errors > 50 && late > 5, "{compared} flows, {tied} ties, {errors} errors ({late} late)");
}

/// `incastmix` with a count limit (which the scenario kinds do not make: their windows are
/// durations) ends its bursts' window at the last background start, as it did.
#[test]
fn a_count_limited_incast_mix_is_the_materialised_one() {
    use super::mix::incastmix;
    let cdf = Cdf::parse(SMALL_CDF).unwrap();
    for (seed, sigma, exclude) in [(1, 0.0, false), (2, 0.0, true), (3, 6.0, true), (4, 2.0, false)] {
        let arrival = if sigma > 0.0 { Arrival::LogNormal { sigma } } else { Arrival::Poisson };
        let bg = BackgroundSpec {
            hosts: (0..12).collect(),
            arrival,
            basis: LoadBasis::HostLinks { hosts: 12, host_rate: Rate::gbps(100) },
            load: 0.6,
            start: Time::from_us(4),
            limit: Limit::Count(20_000),
            prio: 3,
            seed,
            stream_index: 1,
            dst: None,
            rack_size: 0,
        };
        let mut inc = IncastSpec::new(4, IncastSize::Total(40_000), IncastTiming::Period(Time::from_us(9)));
        (inc.dst, inc.dst_stride, inc.exclude_dsts_from_background) = (Some(3), 5, exclude);
        let got = incastmix(&bg, &cdf, &inc).unwrap();
        assert_eq!(got, mixed(&bg, &cdf, &inc).unwrap(), "seed {seed}");
        assert!(got.iter().filter(|f| f.incast).count() >= 20, "seed {seed}: bursts over the window");
    }
}
