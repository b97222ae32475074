//! Incast: bursts of `degree` flows that start together towards one destination host.
//!
//! Why a separate generator: every paper under study stresses its scheme with N-to-1 bursts on
//! top of background traffic, and each sets the burst differently (fixed or random destination,
//! total or per-flow size, periodic or load-driven). `IncastSpec` covers all of them; the
//! named constructors record each paper's setting and the section it comes from.
//! Flows are tagged `incast = true` so metrics can split their FCTs from the background's.

use super::arrivals::{arrival_times, Arrival, Limit};
use super::{check_hosts, sort_flows, FlowSpec, DEFAULT_PRIO};
use crate::rng::{stream, Rng};
use crate::time::{Rate, Time, PS_PER_S};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Size of the flows of one burst.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum IncastSize {
    /// Each flow uniform in [min, max] bytes, drawn independently.
    PerFlowRange { min: u64, max: u64 },
    /// The burst carries this many bytes, split equally (the first `bytes % degree` flows get
    /// one byte more, so the total is exact).
    Total(u64),
}

/// When bursts happen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum IncastTiming {
    /// One burst every period, the first at the window start.
    Period(Time),
    /// Poisson bursts whose mean period makes the incast bytes average `load * host_rate`
    /// into a fixed destination: period = degree * mean_flow_size * 8 / (load * host_rate).
    /// With a random destination each of the H hosts is equally likely the target, so the
    /// aggregate burst rate is H times higher and every host still receives `load` on average.
    LoadShare { load: f64, host_rate: Rate },
    /// Poisson bursts whose bytes average `share` of those of the background traffic they are
    /// mixed with, so the incast follows the background's load: FlowSail §VI-B adds to X% load on
    /// the core links "50-to-1 incast traffic ... a total load of (0.1*X)%", `share` = 0.1. Only in
    /// an incast mix, which turns it into a `LoadShare` of `host_rate` (`beside_background`).
    BackgroundShare { share: f64, host_rate: Rate },
    /// A single burst at this absolute instant (the window is ignored).
    Once(Time),
}

/// How the senders of one burst are drawn among the hosts other than the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Senders {
    /// `degree` distinct senders (an N-to-1 incast as the papers' text describes it).
    Distinct,
    /// Each flow's sender drawn independently, so a host may send several flows (what the
    /// Floodgate-NS3 and BFC simulators' code does).
    WithReplacement,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IncastSpec {
    /// Flows per burst.
    pub degree: usize,
    pub size: IncastSize,
    pub timing: IncastTiming,
    /// Fixed destination, or `None` for a destination drawn uniformly among the hosts per burst.
    pub dst: Option<u32>,
    /// With `dst`: burst k goes to the host `k x dst_stride` places after `dst` in the host list
    /// (wrapping), so successive incasts hit different destinations in a fixed order; 0 = always
    /// `dst`. Floodgate-NS3's successive incasts (`third.cc`, `dst = i % rack_num *
    /// host_per_rack`) are `dst` = the first host, stride = hosts per rack: the first host of
    /// each rack in turn. Left out of the serialised spec when 0, so older scenarios keep their
    /// hash.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dst_stride: u32,
    /// In an incast mix: drop the background flows sent from or to any burst's destination, so
    /// a destination's link carries its incasts alone. Floodgate-NS3 does this
    /// (`generate_load_poisson_fromcdf_incast`: "remove poisson flows which use incast dst as src
    /// or dst"), and it sets how long an incast keeps the last hop congested: with the
    /// background's 0.8 of load still arriving there, a 36.8 MB burst drains at the 0.2 left
    /// instead of the whole link (Floodgate §6's Table 2). Left out of the serialised spec when
    /// false, so older scenarios keep their hash.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exclude_dsts_from_background: bool,
    /// Racks of this many consecutive hosts of the host list (0 = no racks): a burst's senders
    /// are then drawn outside its destination's rack. Floodgate-NS3
    /// (`generate_load_poisson_fromcdf_incast`) redraws a sender in the destination's rack
    /// (`src / host_per_rack == dst / host_per_rack`: `--j; continue`), so the whole burst
    /// crosses the fabric; drawn among all other hosts, a tenth of it stays in the rack on 10
    /// racks. With replacement only, as there. Left out of the serialised spec when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rack_size: u32,
    pub senders: Senders,
    /// Each flow starts at the burst instant plus a uniform offset in [0, jitter); 0 = together.
    pub jitter: Time,
    pub prio: u8,
}

impl IncastSpec {
    /// Random destination, distinct senders, no jitter, default priority.
    pub fn new(degree: usize, size: IncastSize, timing: IncastTiming) -> IncastSpec {
        IncastSpec {
            degree,
            size,
            timing,
            dst: None,
            dst_stride: 0,
            exclude_dsts_from_background: false,
            rack_size: 0,
            senders: Senders::Distinct,
            jitter: Time::ZERO,
            prio: DEFAULT_PRIO,
        }
    }

    /// Whether bursts rotate over destinations (`dst` with a `dst_stride`).
    fn rotates(&self) -> bool {
        self.dst.is_some() && self.dst_stride > 0
    }

    /// Mean bytes of one flow.
    pub fn mean_flow_size(&self) -> f64 {
        match self.size {
            IncastSize::PerFlowRange { min, max } => (min as f64 + max as f64) / 2.0,
            IncastSize::Total(b) => b as f64 / self.degree.max(1) as f64,
        }
    }

    /// Mean bytes of one burst.
    pub fn mean_burst_bytes(&self) -> f64 {
        self.mean_flow_size() * self.degree as f64
    }

    /// Mean time between bursts given the number of hosts (`None` for `Once`).
    pub fn mean_period(&self, n_hosts: usize) -> Result<Option<Time>, String> {
        match self.timing {
            IncastTiming::Once(_) => Ok(None),
            IncastTiming::Period(p) => Ok(Some(p)),
            IncastTiming::LoadShare { load, host_rate } => {
                let targets = if self.dst.is_some() { 1.0 } else { n_hosts as f64 };
                let bps = load * host_rate.bps() as f64 * targets;
                if !(bps.is_finite() && bps > 0.0) {
                    return Err(format!("incast load {load} x {host_rate} gives no positive rate"));
                }
                Ok(Some(secs_to_time(self.mean_burst_bytes() * 8.0 / bps)))
            }
            IncastTiming::BackgroundShare { .. } => {
                Err("workload.incast.background_share: a share of the background's load needs background traffic (allowed with workload.kind = \"incast_mix\")".into())
            }
        }
    }

    /// This incast with a `BackgroundShare` made the `LoadShare` it stands for, beside background
    /// traffic offering `background_bps` bits/s in all: bursts into `n_hosts` destinations (one
    /// with `dst`) then offer `share * background_bps`. Other timings are returned as they are.
    pub fn beside_background(&self, background_bps: f64, n_hosts: usize) -> IncastSpec {
        let mut s = *self;
        if let IncastTiming::BackgroundShare { share, host_rate } = self.timing {
            let targets = if self.dst.is_some() { 1.0 } else { n_hosts as f64 };
            s.timing = IncastTiming::LoadShare { load: share * background_bps / (host_rate.bps() as f64 * targets), host_rate };
        }
        s
    }

    fn validate(&self, hosts: &[u32]) -> Result<Vec<u32>, String> {
        check_hosts(hosts, if self.dst.is_some() { 1 } else { 2 })?;
        if self.degree == 0 {
            return Err("incast degree must be at least 1".to_string());
        }
        match self.size {
            IncastSize::PerFlowRange { min, max } if min == 0 || min > max => {
                return Err(format!("incast flow size range [{min}, {max}] must have 1 <= min <= max"))
            }
            IncastSize::Total(b) if b < self.degree as u64 => {
                return Err(format!(
                    "incast total {b} B is less than 1 B per flow for {} flows",
                    self.degree
                ))
            }
            _ => {}
        }
        if let IncastTiming::Period(p) = self.timing {
            if p == Time::ZERO {
                return Err("incast period must be positive".to_string());
            }
        }
        if let (Some(d), true) = (self.dst, self.rotates()) {
            if !hosts.contains(&d) {
                return Err(format!("incast dst {d} is not a host, so dst_stride has no host list position to start from"));
            }
        }
        // A rotating destination is one of the candidates, as a random one is.
        let candidates: Vec<u32> = match self.dst {
            Some(d) if !self.rotates() => hosts.iter().copied().filter(|&h| h != d).collect(),
            _ => hosts.to_vec(),
        };
        // With a random or rotating destination one more host is excluded per burst.
        let available = candidates.len() - usize::from(self.dst.is_none() || self.rotates());
        if self.senders == Senders::Distinct && self.degree > available {
            return Err(format!(
                "incast degree {} needs that many distinct senders, \
                 only {available} hosts besides the destination",
                self.degree
            ));
        }
        if available == 0 {
            return Err("no host can send: the only host is the destination".to_string());
        }
        if self.rack_size > 0 {
            if self.senders != Senders::WithReplacement {
                return Err("workload.incast.inter_rack draws each sender anew until it is outside the destination's rack: allowed with senders = \"with_replacement\"".into());
            }
            if hosts.len() <= self.rack_size as usize {
                return Err(format!("workload.incast.inter_rack: all {} hosts are in one rack of {}, so no sender is outside the destination's", hosts.len(), self.rack_size));
            }
        }
        Ok(candidates)
    }
}

pub(crate) fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// Seconds to a positive time (at least 1 ps, so a period can never be zero).
pub(super) fn secs_to_time(s: f64) -> Time {
    Time((s * PS_PER_S as f64).round().max(1.0) as u64)
}

/// Burst instants of `spec` in the window (`start`, `limit`).
fn burst_times(
    spec: &IncastSpec,
    n_hosts: usize,
    start: Time,
    limit: Limit,
    rng: &mut Rng,
) -> Result<Vec<Time>, String> {
    // refuse before drawing what a run could not hold (a count or a window of very many bursts)
    let max = super::arrivals::MAX_FLOWS;
    let too_many = |bursts: u64| (bursts as u128) * (spec.degree as u128) >= max as u128;
    let refuse = |bursts: String| format!("incast: {bursts} bursts of {} flows are too many; a run holds fewer than {max} flows", spec.degree);
    Ok(match spec.timing {
        IncastTiming::Once(at) => {
            if too_many(1) {
                return Err(refuse("1".into()));
            }
            vec![at]
        }
        IncastTiming::Period(p) => {
            let count = match limit {
                Limit::Count(n) => n as u64,
                Limit::Duration(d) => d.0 / p.0.max(1) + 1,
            };
            if too_many(count) {
                return Err(refuse(count.to_string()));
            }
            // start + k*p for k = 0, 1, ... until the limit (or u64 overflow).
            let inside = |k: u64, t: u64| match limit {
                Limit::Count(n) => k < n as u64,
                Limit::Duration(d) => t < start.0.saturating_add(d.0),
            };
            (0u64..)
                .map_while(|k| p.0.checked_mul(k).and_then(|o| start.0.checked_add(o)).map(|t| (k, t)))
                .take_while(|&(k, t)| inside(k, t))
                .map(|(_, t)| Time(t))
                .collect()
        }
        IncastTiming::LoadShare { .. } | IncastTiming::BackgroundShare { .. } => {
            let mean = spec.mean_period(n_hosts)?.map_or(0, |t| t.0) as f64;
            let bursts = arrival_times(Arrival::Poisson, mean, start, limit, rng)?;
            if too_many(bursts.len() as u64) {
                return Err(refuse(bursts.len().to_string()));
            }
            bursts
        }
    })
}

/// All flows of the incast bursts of `spec` among `hosts` within the window, sorted.
/// Streams: `rng::stream::INCAST` with indices `4*stream_index + {0: hosts, 1: sizes,
/// 2: burst times, 3: jitter}`, so e.g. a new size range leaves destinations unchanged.
pub fn incast_flows(
    spec: &IncastSpec,
    hosts: &[u32],
    start: Time,
    limit: Limit,
    seed: u64,
    stream_index: u64,
) -> Result<Vec<FlowSpec>, String> {
    let candidates = spec.validate(hosts)?;
    let rng = |k: u64| Rng::stream(seed, stream::INCAST, stream_index.wrapping_mul(4).wrapping_add(k));
    let (mut pick, mut sizes, mut times, mut jitter) = (rng(0), rng(1), rng(2), rng(3));
    let bursts = burst_times(spec, hosts.len(), start, limit, &mut times)?;
    let mut flows = Vec::with_capacity(bursts.len().saturating_mul(spec.degree).min(1 << 24));
    // The senders' pool of a burst is `candidates` without the destination, partially shuffled.
    // It is not built: slot k holds `candidates[k]` (or `[k + 1]` from the destination's slot on),
    // unless this burst's shuffle moved something there (`moved`), so a burst costs O(degree)
    // instead of O(hosts) and the draws, hence the flows, are those of the built pool.
    let mut moved: HashMap<usize, u32> = HashMap::new();
    // a host's rack: its place in `hosts` over the rack size (only read when there are racks)
    let place: HashMap<u32, usize> = if spec.rack_size > 0 { hosts.iter().enumerate().map(|(i, &h)| (h, i)).collect() } else { HashMap::new() };
    let rack = |h: u32| place.get(&h).map(|&i| i / spec.rack_size.max(1) as usize);
    // a rotating destination's place in `candidates` (all the hosts) for burst 0
    let first = spec.dst.and_then(|d| candidates.iter().position(|&h| h == d)).unwrap_or(0);
    for (b, t) in bursts.into_iter().enumerate() {
        let (dst, skip) = match spec.dst {
            Some(_) if spec.rotates() => {
                let k = ((first as u64 + b as u64 * spec.dst_stride as u64) % candidates.len() as u64) as usize;
                (candidates[k], k)
            }
            Some(d) => (d, usize::MAX), // not among the candidates
            None => {
                let k = pick.below(candidates.len() as u64) as usize;
                (candidates[k], k)
            }
        };
        let len = candidates.len() - usize::from(skip != usize::MAX);
        moved.clear();
        let slot = |moved: &HashMap<usize, u32>, k: usize| moved.get(&k).copied().unwrap_or(candidates[k + usize::from(k >= skip)]);
        for i in 0..spec.degree {
            let src = match spec.senders {
                // Partial Fisher-Yates: position i gets a uniform pick of the rest.
                Senders::Distinct => {
                    let j = i + pick.below((len - i) as u64) as usize;
                    let (at_i, at_j) = (slot(&moved, i), slot(&moved, j));
                    moved.insert(j, at_i);
                    moved.insert(i, at_j);
                    at_j
                }
                Senders::WithReplacement => loop {
                    let s = slot(&moved, pick.below(len as u64) as usize);
                    if spec.rack_size == 0 || rack(s) != rack(dst) {
                        break s;
                    }
                },
            };
            let size = match spec.size {
                IncastSize::PerFlowRange { min, max } => sizes.range_inclusive(min, max),
                IncastSize::Total(b) => {
                    let n = spec.degree as u64;
                    b / n + u64::from((i as u64) < b % n)
                }
            };
            let off = if spec.jitter.0 > 0 { jitter.below(spec.jitter.0) } else { 0 };
            flows.push(FlowSpec {
                src,
                dst,
                size,
                start: Time(t.0.saturating_add(off)),
                prio: spec.prio,
                incast: true,
                dport: super::DEFAULT_DPORT,
                sport: 0,
                pg: 0,
                rate_cap: None,
            });
        }
    }
    sort_flows(&mut flows);
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn hosts(n: u32) -> Vec<u32> {
        (100..100 + n).collect()
    }

    /// The flows as the generator made them when it built each burst's pool (O(hosts) a burst).
    fn built_pools(spec: &IncastSpec, hosts: &[u32], start: Time, limit: Limit, seed: u64) -> Vec<FlowSpec> {
        let candidates = spec.validate(hosts).unwrap();
        let rng = |k: u64| Rng::stream(seed, stream::INCAST, k);
        let (mut pick, mut sizes, mut times, mut jitter) = (rng(0), rng(1), rng(2), rng(3));
        let mut flows = vec![];
        for (b, t) in burst_times(spec, hosts.len(), start, limit, &mut times).unwrap().into_iter().enumerate() {
            let dst = match spec.dst {
                Some(d) if spec.dst_stride > 0 => {
                    let first = candidates.iter().position(|&h| h == d).unwrap();
                    candidates[(first + b * spec.dst_stride as usize) % candidates.len()]
                }
                Some(d) => d,
                None => candidates[pick.below(candidates.len() as u64) as usize],
            };
            let mut pool: Vec<u32> = candidates.iter().copied().filter(|&h| h != dst).collect();
            for i in 0..spec.degree {
                let src = match spec.senders {
                    Senders::Distinct => {
                        let j = i + pick.below((pool.len() - i) as u64) as usize;
                        pool.swap(i, j);
                        pool[i]
                    }
                    Senders::WithReplacement => pool[pick.below(pool.len() as u64) as usize],
                };
                let size = match spec.size {
                    IncastSize::PerFlowRange { min, max } => sizes.range_inclusive(min, max),
                    IncastSize::Total(b) => b / spec.degree as u64 + u64::from((i as u64) < b % spec.degree as u64),
                };
                let off = if spec.jitter.0 > 0 { jitter.below(spec.jitter.0) } else { 0 };
                let (prio, dport) = (spec.prio, crate::workload::DEFAULT_DPORT);
                flows.push(FlowSpec { src, dst, size, start: Time(t.0 + off), prio, incast: true, dport, sport: 0, pg: 0, rate_cap: None });
            }
        }
        sort_flows(&mut flows);
        flows
    }

    #[test]
    fn pools_are_not_built_but_draw_the_same_senders() {
        for (dst, senders, degree) in [
            (None, Senders::Distinct, 7),
            (None, Senders::Distinct, 19), // every host but the destination
            (Some(105), Senders::Distinct, 5),
            (None, Senders::WithReplacement, 9),
            (Some(100), Senders::WithReplacement, 30),
        ] {
            for stride in [0, 3] {
                let mut s = IncastSpec::new(degree, IncastSize::PerFlowRange { min: 1, max: 1000 }, IncastTiming::Period(Time::from_us(3)));
                (s.dst, s.senders, s.jitter) = (dst, senders, Time::from_ns(500));
                s.dst_stride = if dst.is_some() { stride } else { 0 };
                let got = incast_flows(&s, &hosts(20), Time::ZERO, Limit::Count(40), 7, 0).unwrap();
                assert_eq!(got, built_pools(&s, &hosts(20), Time::ZERO, Limit::Count(40), 7), "{dst:?} {senders:?} {degree} {stride}");
                assert_eq!(got.len(), 40 * degree);
            }
        }
    }

    #[test]
    fn a_dst_stride_rotates_the_destination_burst_by_burst() {
        // Floodgate-NS3's successive incasts: the first host of each rack in turn (5 racks of 4).
        let mut s = IncastSpec::new(19, IncastSize::PerFlowRange { min: 1, max: 1000 }, IncastTiming::Period(Time::from_us(5)));
        (s.dst, s.dst_stride) = (Some(100), 4);
        let flows = incast_flows(&s, &hosts(20), Time::ZERO, Limit::Count(7), 3, 0).unwrap();
        let mut by_burst: Vec<(u64, u32, BTreeSet<u32>)> = vec![];
        for f in &flows {
            match by_burst.iter_mut().find(|(t, ..)| *t == f.start.0) {
                Some((_, d, srcs)) => {
                    assert_eq!(*d, f.dst);
                    assert!(srcs.insert(f.src), "distinct senders");
                }
                None => by_burst.push((f.start.0, f.dst, BTreeSet::from([f.src]))),
            }
        }
        by_burst.sort();
        let dsts: Vec<u32> = by_burst.iter().map(|(_, d, _)| *d).collect();
        assert_eq!(dsts, vec![100, 104, 108, 112, 116, 100, 104]);
        // every host but the burst's destination sends: the destination is excluded per burst
        for (_, d, srcs) in &by_burst {
            assert_eq!(srcs.len(), 19);
            assert!(!srcs.contains(d));
        }
        // a start that is not a host is refused, naming the field
        s.dst = Some(7);
        assert!(incast_flows(&s, &hosts(20), Time::ZERO, Limit::Count(1), 3, 0).unwrap_err().contains("dst_stride"));
    }

    #[test]
    fn total_split_is_exact() {
        let mut s = IncastSpec::new(3, IncastSize::Total(10), IncastTiming::Once(Time::from_us(1)));
        s.dst = Some(100);
        let flows = incast_flows(&s, &hosts(8), Time::ZERO, Limit::Count(0), 1, 0).unwrap();
        let mut sizes: Vec<u64> = flows.iter().map(|f| f.size).collect();
        sizes.sort();
        assert_eq!(sizes, vec![3, 3, 4]);
        assert!(flows.iter().all(|f| f.dst == 100 && f.src != 100 && f.start == Time::from_us(1)));
    }

    #[test]
    fn load_share_gives_the_target_load_per_destination() {
        let rate = Rate::gbps(100);
        let mut s = IncastSpec::new(
            10,
            IncastSize::PerFlowRange { min: 10_000, max: 30_000 },
            IncastTiming::LoadShare { load: 0.5, host_rate: rate },
        );
        s.dst = Some(105);
        // period = 10 * 20 KB * 8 / 50 Gb/s = 32 us.
        assert_eq!(s.mean_period(16).unwrap(), Some(Time::from_us(32)));
        let d = Time::from_ms(100);
        let flows = incast_flows(&s, &hosts(16), Time::ZERO, Limit::Duration(d), 7, 0).unwrap();
        let load = flows.iter().map(|f| f.size).sum::<u64>() as f64 * 8.0 / d.as_secs_f64() / 100e9;
        assert!((load - 0.5).abs() < 0.03, "{load}");
        // Random destination: H times more bursts, each host still gets 0.5 on average.
        s.dst = None;
        assert_eq!(s.mean_period(16).unwrap(), Some(Time::from_us(2)));
        let flows = incast_flows(&s, &hosts(16), Time::ZERO, Limit::Duration(d), 7, 0).unwrap();
        let load =
            flows.iter().map(|f| f.size).sum::<u64>() as f64 * 8.0 / d.as_secs_f64() / 100e9 / 16.0;
        assert!((load - 0.5).abs() < 0.03, "{load}");
    }

    #[test]
    fn jitter_spreads_starts_within_bound() {
        let mut s = IncastSpec::pulser(100_000, IncastTiming::Once(Time::from_us(10)));
        s.jitter = Time::from_ns(500);
        let flows = incast_flows(&s, &hosts(40), Time::ZERO, Limit::Count(1), 5, 0).unwrap();
        assert_eq!(flows.len(), 24);
        assert!(flows.iter().all(|f| f.start >= Time::from_us(10) && f.start < Time::ps(10_500_000)));
        assert!(flows.iter().map(|f| f.start).collect::<BTreeSet<_>>().len() > 1);
    }

    #[test]
    fn deterministic_and_bad_specs_rejected() {
        let s = IncastSpec::bfc();
        let a = incast_flows(&s, &hosts(128), Time::ZERO, Limit::Count(3), 9, 0).unwrap();
        assert_eq!(a, incast_flows(&s, &hosts(128), Time::ZERO, Limit::Count(3), 9, 0).unwrap());
        assert_ne!(a, incast_flows(&s, &hosts(128), Time::ZERO, Limit::Count(3), 9, 1).unwrap());
        // 100 distinct senders need 101 hosts.
        assert!(incast_flows(&s, &hosts(100), Time::ZERO, Limit::Count(1), 9, 0)
            .unwrap_err()
            .contains("distinct"));
        let mut w = s;
        w.senders = Senders::WithReplacement;
        assert_eq!(incast_flows(&w, &hosts(10), Time::ZERO, Limit::Count(1), 9, 0).unwrap().len(), 100);
        let mut z = s;
        z.degree = 0;
        assert!(incast_flows(&z, &hosts(10), Time::ZERO, Limit::Count(1), 9, 0).is_err());
        let mut r = s;
        r.size = IncastSize::PerFlowRange { min: 5, max: 4 };
        assert!(incast_flows(&r, &hosts(200), Time::ZERO, Limit::Count(1), 9, 0).is_err());
        let mut p = s;
        p.timing = IncastTiming::Period(Time::ZERO);
        assert!(incast_flows(&p, &hosts(200), Time::ZERO, Limit::Count(1), 9, 0).is_err());
        let mut l = s;
        l.timing = IncastTiming::LoadShare { load: 0.0, host_rate: Rate::gbps(100) };
        assert!(incast_flows(&l, &hosts(200), Time::ZERO, Limit::Count(1), 9, 0).is_err());
    }

    #[test]
    fn inter_rack_senders_stay_outside_the_destination_rack() {
        // Floodgate-NS3's incastmix: 720 senders with replacement, none in the destination's rack
        // (racks of 16 here, of 4 hosts each on 20 hosts below), the destination rotating.
        let mut s = IncastSpec::floodgate(Rate::gbps(100), 1460);
        s.dst = Some(100);
        s.dst_stride = 4;
        s.rack_size = 4;
        let flows = incast_flows(&s, &hosts(20), Time::ZERO, Limit::Count(5), 3, 0).unwrap();
        assert_eq!(flows.len(), 5 * 720);
        let rack = |h: u32| (h - 100) / 4;
        assert!(flows.iter().all(|f| rack(f.src) != rack(f.dst)));
        // every host outside the rack sends some
        let srcs: BTreeSet<u32> = flows.iter().filter(|f| f.dst == 100).map(|f| f.src).collect();
        assert_eq!(srcs, (104..120).collect());
        // without racks a tenth-odd of the senders share the destination's rack
        s.rack_size = 0;
        let mixed = incast_flows(&s, &hosts(20), Time::ZERO, Limit::Count(5), 3, 0).unwrap();
        assert!(mixed.iter().any(|f| rack(f.src) == rack(f.dst)));
        // distinct senders are not redrawn: refused
        s.rack_size = 4;
        s.senders = Senders::Distinct;
        s.degree = 8;
        assert!(incast_flows(&s, &hosts(20), Time::ZERO, Limit::Count(1), 3, 0).unwrap_err().contains("with_replacement"));
    }
}
