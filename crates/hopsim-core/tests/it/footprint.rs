//! The memory estimate (`hopsim_core::footprint`) against what building and running a scenario
//! allocates. This binary's allocator counts, per thread, the bytes live and their peak, so the
//! check is exact and deterministic (no RSS, no timing): a test measures only its own thread.
//!
//! The estimate also counts the output tables a second time (the binding's copy into Python and
//! the front's Arrow tables), which the core alone never allocates, so it may exceed the core's
//! peak by more where samples dominate: it must be at least half of the core's peak and at most
//! 2.5 times it for these scenarios, where the event logs it leaves out (pause and control frames)
//! are small. (Against a whole `hopsim run`'s peak RSS it was within 2x: see the module doc of
//! `hopsim_core::footprint`.)

use crate::common::*;
use hopsim_core::cc::{dcqcn::DcqcnConfig, CcConfig};
use hopsim_core::config::NetConfig;
use hopsim_core::fc::FcConfig;
use hopsim_core::scenario::{Background, LoadOn, Scenario, TopologySpec, WorkloadSpec};
use hopsim_core::topo::FatTree;
use hopsim_core::workload::arrivals::{Arrival, Limit};
use hopsim_core::workload::incast::{IncastSize, IncastSpec, IncastTiming};
use hopsim_core::{Rate, Time};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    // `try_with`: allocations while a thread's locals are being torn down go uncounted
    let _ = LIVE.try_with(|l| {
        let v = l.get() + delta;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counting touches only
// const-initialised thread locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count(l.size() as i64);
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        count(l.size() as i64);
        System.alloc_zeroed(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count(-(l.size() as i64));
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        count(new as i64 - l.size() as i64);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak bytes this thread held beyond what it held before, while building and running `sc`
/// (the results kept, as a caller would).
fn peak_of_run(sc: &Scenario) -> u64 {
    let base = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(base));
    let stats = sc.run().expect("scenario runs");
    let peak = PEAK.with(|p| p.get()) - base;
    drop(stats);
    peak as u64
}

fn assert_close(sc: &Scenario, what: &str) {
    let est = sc.estimate().unwrap();
    let peak = peak_of_run(sc);
    let ratio = est.total() as f64 / peak as f64;
    eprintln!("{what}: estimate {} bytes, allocated at most {peak} ({ratio:.2})", est.total());
    assert!((0.5..=2.5).contains(&ratio), "{what}: estimate {} vs allocated {peak} ({ratio:.2}); {:#?}", est.total(), est.parts);
}

fn incast(degree: usize, size: u64) -> IncastSpec {
    let mut i = IncastSpec::new(degree, IncastSize::PerFlowRange { min: size, max: size }, IncastTiming::Once(Time::from_us(1)));
    i.dst = Some(0);
    i
}

#[test]
fn estimate_of_a_wide_star_is_its_ports() {
    let sc = Scenario {
        topology: TopologySpec::Star { hosts: 3000, rate: Rate::gbps(100), delay: Time::from_us(1) },
        workload: WorkloadSpec::Incast { incast: incast(16, 50_000), start: Time::ZERO, limit: Limit::Count(1) },
        net: NetConfig::default(),
    };
    assert_eq!(sc.estimate().unwrap().parts[0].name, "network");
    assert_close(&sc, "star");
}

#[test]
fn estimate_of_a_fat_tree_incast() {
    let g = Rate::gbps(100);
    let sc = Scenario {
        topology: TopologySpec::FatTree(FatTree::new(12, g, g, Time::from_us(1)).unwrap()),
        workload: WorkloadSpec::Incast { incast: incast(32, 100_000), start: Time::ZERO, limit: Limit::Count(1) },
        net: NetConfig { cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() },
    };
    assert_close(&sc, "fat-tree");
}

#[test]
fn estimate_of_many_flows_and_samples() {
    let cdf = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/WebSearch_HPCC.txt")).unwrap();
    let mut net = NetConfig { fc: FcConfig::Pfc, cc: CcConfig::Dcqcn(DcqcnConfig::default()), ..Default::default() };
    net.switch.buffer_bytes = 2_000_000;
    net.record.buffer_interval = Some(Time::from_ns(200));
    net.stop_time = Some(Time::from_us(1000));
    let sc = Scenario {
        topology: TopologySpec::LeafSpine(leaf_spine_100g(8, 4, 2)),
        workload: WorkloadSpec::Background(Background {
            cdf,
            load: 0.4,
            load_on: LoadOn::HostLinks,
            arrival: Arrival::Poisson,
            start: Time::ZERO,
            duration: Time::from_us(1000),
            prio: 3,
            dst: None,
            rack_size: 0,
        }),
        net,
    };
    assert_close(&sc, "leaf-spine background");
}

/// A run on many threads holds a copy of the network once a partition it makes, not once a
/// thread asked: a one-switch star makes one partition, a 12-ary fat-tree 72 at most (its ToRs),
/// and a run of Pulser's Ideal one whatever is asked (a TCP run splits).
#[test]
fn estimate_on_many_threads_counts_the_partitions_made() {
    let star = Scenario {
        topology: TopologySpec::Star { hosts: 64, rate: Rate::gbps(100), delay: Time::from_us(1) },
        workload: WorkloadSpec::Incast { incast: incast(16, 50_000), start: Time::ZERO, limit: Limit::Count(1) },
        net: NetConfig::default(),
    };
    let one = star.estimate_threads(None, 1).unwrap().total();
    assert_eq!(star.estimate_threads(None, 16).unwrap().total(), one, "one switch: one partition");
    let g = Rate::gbps(100);
    let mut tree = Scenario {
        topology: TopologySpec::FatTree(FatTree::new(12, g, g, Time::from_us(1)).unwrap()),
        workload: WorkloadSpec::Incast { incast: incast(32, 100_000), start: Time::ZERO, limit: Limit::Count(1) },
        net: NetConfig::default(),
    };
    let one = tree.estimate_threads(None, 1).unwrap();
    let many = tree.estimate_threads(None, 100_000).unwrap();
    assert!(many.parts.iter().any(|p| p.detail.ends_with("once in each of 72 partitions")), "{:?}", many.parts);
    assert_eq!(many.total(), tree.estimate_threads(None, 72).unwrap().total());
    assert!(many.total() > one.total() && many.total() <= 72 * one.total());
    tree.net.host.tcp = Some(Default::default());
    assert!(tree.estimate_threads(None, 16).unwrap().total() > tree.estimate_threads(None, 1).unwrap().total(), "TCP splits");
    tree.net.cc = hopsim_core::cc::CcConfig::Ideal;
    assert_eq!(tree.estimate_threads(None, 16).unwrap().total(), tree.estimate_threads(None, 1).unwrap().total(), "Pulser's Ideal: one partition");
}
