//! Background traffic: open-loop flow arrivals with uniform random source/destination pairs.
//!
//! Why one aggregate process rather than one per host: with exponential gaps the two are the
//! same process (a superposition of Poisson processes is Poisson), and BFC (§6.2.1 "Workloads":
//! "For each flow arrival, the source-destination pair is derived from a uniform distribution";
//! `nsdifinal.cc` draws one lognormal gap per flow for the whole network) defines its bursty
//! lognormal arrivals on the aggregate. FlowSail (§VI-B) and Pulser (§IV) also draw sources and
//! destinations uniformly at random.
//!
//! Sizes, gaps and pairs come from three separate streams (`rng::stream::FLOW_SIZE`, `ARRIVAL`,
//! `PAIRS`), so changing the load (the gaps) leaves the sequence of sizes and pairs unchanged.

use super::arrivals::{mean_gap_ps, Arrival, ArrivalClock, Limit, LoadBasis};
use super::cdf::Cdf;
use super::{check_hosts, FlowSpec};
use crate::rng::{stream, Rng};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// Everything but the size distribution (which is not serialisable data but a parsed file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackgroundSpec {
    /// Node ids of the hosts that send and receive; at least two, no duplicates.
    pub hosts: Vec<u32>,
    pub arrival: Arrival,
    pub basis: LoadBasis,
    /// Offered load as a fraction of `basis` (0.3 = 30%).
    pub load: f64,
    pub start: Time,
    pub limit: Limit,
    pub prio: u8,
    pub seed: u64,
    /// Tells apart several generators under one master seed (stream index of all three streams).
    pub stream_index: u64,
    /// Every flow goes to this host (one of `hosts`), from a source drawn uniformly among the
    /// others: cross traffic on one link (BFC §2.1, Fig. 3 and Table 1: "a long-lived flow
    /// competing on a single link" with cross traffic at 60% of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<u32>,
    /// Racks of this many consecutive hosts of `hosts` (0 = no racks): a flow's two ends are
    /// then drawn in different racks. Floodgate-NS3 (`third.cc` `generate_QP`) makes its
    /// Poisson flows only between hosts of different racks (`sender/host_per_rack !=
    /// receiver/host_per_rack`), so all of its background crosses the fabric: a tenth more of
    /// it than a uniform pick over the other hosts gives on 10 racks. Left out of the
    /// serialised spec when 0, so older scenarios keep their hash.
    #[serde(default, skip_serializing_if = "super::incast::is_zero")]
    pub rack_size: u32,
}

/// A host index in `[0, n)` outside the rack of host index `x` (racks of `rack_size` consecutive
/// indices; 0 = the rack is `x` alone), uniform over those: one draw below `n - rack len`, the
/// rack's slots skipped. With `rack_size` 0 this is the plain "any other host" draw.
fn outside_rack(rng: &mut Rng, n: u64, rack_size: u32, x: u64) -> u64 {
    let (lo, len) = match rack_size as u64 {
        0 => (x, 1),
        k => ((x / k) * k, k.min(n - (x / k) * k)),
    };
    let d = rng.below(n - len);
    if d >= lo {
        d + len
    } else {
        d
    }
}

/// Draws the flows of `spec` with sizes from `cdf`, sorted by start time (equal starts in the
/// order drawn): [`BackgroundFlows`] collected.
pub fn background_flows(spec: &BackgroundSpec, cdf: &Cdf) -> Result<Vec<FlowSpec>, String> {
    BackgroundFlows::new(spec, cdf)?.collect()
}

/// The flows of a [`BackgroundSpec`] one at a time, in the order they are drawn (starts never
/// decrease), holding O(hosts) state however many flows the window holds (issue 14).
///
/// Errors: `new` returns every error but an overrun of the arrival process (which comes as the
/// last item, `Some(Err)`) in the precedence `background_flows` always had: the hosts, sigma and
/// load, the expected count, an overrun, no arrival at all, then the rack and `dst` checks.
pub struct BackgroundFlows {
    clock: ArrivalClock,
    sizes: Rng,
    pairs: Rng,
    /// The first arrival, drawn by `new` to refuse a window without one up front.
    first: Option<Time>,
    hosts: Vec<u32>,
    /// `dst`'s index in `hosts`.
    to: Option<u64>,
    rack_size: u32,
    prio: u8,
    cdf: Cdf,
}

impl BackgroundFlows {
    pub fn new(spec: &BackgroundSpec, cdf: &Cdf) -> Result<BackgroundFlows, String> {
        check_hosts(&spec.hosts, 2)?;
        spec.arrival.validate()?;
        let gap = mean_gap_ps(spec.load, &spec.basis, cdf.mean())?;
        let arrivals = Rng::stream(spec.seed, stream::ARRIVAL, spec.stream_index);
        let mut clock = ArrivalClock::new(spec.arrival, gap, spec.start, spec.limit, arrivals)?;
        let to = pair_ends(spec);
        // The pair checks come after an overrun or an empty window: when they fail, the
        // arrivals are drawn to their end to tell which error is first (an error path, O(1) memory).
        let mut first = None;
        for t in clock.by_ref() {
            first.get_or_insert(t?);
            if to.is_ok() {
                break;
            }
        }
        let Some(first) = first else {
            // a run with no flows would end at once and look like a success
            return Err(format!(
                "workload: no flow starts within the duration: at load {} the mean gap between flows ({}) is longer than the duration; raise workload.load or workload.duration, or use a CDF of smaller flows (its mean is {:.0} bytes)",
                spec.load,
                crate::time::Time(gap.min(u64::MAX as f64) as u64),
                cdf.mean()
            ));
        };
        Ok(BackgroundFlows {
            clock,
            sizes: Rng::stream(spec.seed, stream::FLOW_SIZE, spec.stream_index),
            pairs: Rng::stream(spec.seed, stream::PAIRS, spec.stream_index),
            first: Some(first),
            hosts: spec.hosts.clone(),
            to: to?,
            rack_size: spec.rack_size,
            prio: spec.prio,
            cdf: cdf.clone(),
        })
    }
}

/// Checks that `spec`'s pairs can be drawn; `dst`'s index in the hosts, if it names one.
fn pair_ends(spec: &BackgroundSpec) -> Result<Option<u64>, String> {
    let n = spec.hosts.len() as u64;
    if spec.rack_size > 0 && n <= spec.rack_size as u64 {
        return Err(format!(
            "workload.inter_rack: all {n} hosts are in one rack of {}, so no flow can leave its rack",
            spec.rack_size
        ));
    }
    match spec.dst {
        Some(d) => Ok(Some(spec.hosts.iter().position(|&h| h == d).ok_or_else(|| format!("workload.dst: node {d} is not a host; allowed: a host's node id"))? as u64)),
        None => Ok(None),
    }
}

impl Iterator for BackgroundFlows {
    type Item = Result<FlowSpec, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = match self.first.take() {
            Some(t) => t,
            None => match self.clock.next()? {
                Ok(t) => t,
                Err(e) => return Some(Err(e)),
            },
        };
        let n = self.hosts.len() as u64;
        let (s, d) = match self.to {
            // a source outside the destination's rack (without racks: among the n-1 other hosts)
            Some(d) => (outside_rack(&mut self.pairs, n, self.rack_size, d), d),
            None => {
                let s = self.pairs.below(n);
                (s, outside_rack(&mut self.pairs, n, self.rack_size, s))
            }
        };
        Some(Ok(FlowSpec {
            src: self.hosts[s as usize],
            dst: self.hosts[d as usize],
            size: self.cdf.sample(&mut self.sizes),
            start,
            prio: self.prio,
            incast: false,
            dport: super::DEFAULT_DPORT,
            sport: 0,
            pg: 0,
            rate_cap: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Rate;

    fn spec(limit: Limit) -> BackgroundSpec {
        BackgroundSpec {
            hosts: (10..26).collect(),
            arrival: Arrival::Poisson,
            basis: LoadBasis::HostLinks { hosts: 16, host_rate: Rate::gbps(100) },
            load: 0.5,
            start: Time::from_us(10),
            limit,
            prio: 3,
            seed: 42,
            stream_index: 0,
            dst: None,
            rack_size: 0,
        }
    }

    #[test]
    fn deterministic_sorted_and_valid_pairs() {
        let cdf = Cdf::uniform(1_000, 100_000).unwrap();
        let s = spec(Limit::Count(5_000));
        let a = background_flows(&s, &cdf).unwrap();
        assert_eq!(a, background_flows(&s, &cdf).unwrap());
        assert_eq!(a.len(), 5_000);
        assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(a
            .iter()
            .all(|f| f.src != f.dst && (10..26).contains(&f.src) && (10..26).contains(&f.dst)));
        assert!(a.iter().all(|f| f.prio == 3 && !f.incast && f.start > s.start));
        let mut other = s.clone();
        other.seed = 43;
        assert_ne!(a, background_flows(&other, &cdf).unwrap());
    }

    #[test]
    fn offered_load_matches_target() {
        let cdf = Cdf::uniform(1_000, 100_000).unwrap();
        let d = Time::from_ms(20);
        let flows = background_flows(&spec(Limit::Duration(d)), &cdf).unwrap();
        let bytes: u64 = flows.iter().map(|f| f.size).sum();
        let offered = bytes as f64 * 8.0 / d.as_secs_f64();
        let target = 0.5 * 16.0 * 100e9;
        assert!((offered / target - 1.0).abs() < 0.03, "{offered} vs {target}");
    }

    #[test]
    fn pairs_are_uniform_over_ordered_pairs() {
        let cdf = Cdf::constant(1000);
        let mut s = spec(Limit::Count(120_000));
        s.hosts = vec![0, 1, 2, 3];
        let flows = background_flows(&s, &cdf).unwrap();
        let mut count = [[0usize; 4]; 4];
        for f in &flows {
            count[f.src as usize][f.dst as usize] += 1;
        }
        for (i, row) in count.iter().enumerate() {
            for (j, &c) in row.iter().enumerate() {
                if i == j {
                    assert_eq!(c, 0);
                } else {
                    assert!((c as f64 / 10_000.0 - 1.0).abs() < 0.05, "{i}->{j}: {c}");
                }
            }
        }
    }

    #[test]
    fn a_destination_gets_every_flow_at_the_load_of_its_link() {
        let cdf = Cdf::uniform(1_000, 50_000).unwrap();
        let mut s = spec(Limit::Duration(Time::from_ms(20)));
        s.dst = Some(13);
        s.basis = LoadBasis::HostLinks { hosts: 1, host_rate: Rate::gbps(100) };
        let f = background_flows(&s, &cdf).unwrap();
        assert!(f.iter().all(|f| f.dst == 13 && f.src != 13 && (10..26).contains(&f.src)));
        let mut srcs: Vec<u32> = f.iter().map(|f| f.src).collect();
        srcs.sort();
        srcs.dedup();
        assert_eq!(srcs.len(), 15, "every other host sends");
        let bytes: u64 = f.iter().map(|f| f.size).sum();
        let load = bytes as f64 * 8.0 / 0.020 / 100e9;
        assert!((load - 0.5).abs() < 0.05, "offered {load:.3} of the destination's link");
        s.dst = Some(99);
        assert!(background_flows(&s, &cdf).unwrap_err().contains("workload.dst"));
    }

    #[test]
    fn load_change_keeps_sizes_and_pairs() {
        let cdf = Cdf::uniform(1_000, 100_000).unwrap();
        let a = background_flows(&spec(Limit::Count(100)), &cdf).unwrap();
        let mut s = spec(Limit::Count(100));
        s.load = 0.9;
        let b = background_flows(&s, &cdf).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.src, x.dst, x.size), (y.src, y.dst, y.size));
        }
        assert!(b.last().unwrap().start < a.last().unwrap().start);
    }

    #[test]
    fn bad_specs_are_errors() {
        let cdf = Cdf::constant(1000);
        let mut s = spec(Limit::Count(10));
        s.hosts = vec![1];
        assert!(background_flows(&s, &cdf).unwrap_err().contains("at least 2"));
        s.hosts = vec![1, 2, 1];
        assert!(background_flows(&s, &cdf).unwrap_err().contains("more than once"));
        let mut s = spec(Limit::Count(10));
        s.load = -1.0;
        assert!(background_flows(&s, &cdf).is_err());
        let mut s = spec(Limit::Count(10));
        s.arrival = Arrival::LogNormal { sigma: -1.0 };
        assert!(background_flows(&s, &cdf).is_err());
        // the checks of the pairs come after those of the arrivals: an overrun, then no arrival
        let mut s = spec(Limit::Duration(Time::from_us(10)));
        s.rack_size = 16;
        assert!(background_flows(&s, &cdf).unwrap_err().contains("one rack"));
        s.arrival = Arrival::LogNormal { sigma: 40.0 };
        assert!(background_flows(&s, &cdf).unwrap_err().contains("overran"));
        (s.load, s.arrival) = (1e-9, Arrival::Poisson);
        assert!(background_flows(&s, &cdf).unwrap_err().contains("no flow starts"));
        s.dst = Some(99);
        assert!(background_flows(&s, &cdf).unwrap_err().contains("no flow starts"));
    }

    #[test]
    fn inter_rack_pairs_leave_the_source_rack_uniformly() {
        // 16 hosts in racks of 4 (Floodgate-NS3's generate_QP pairs): every destination is in
        // another rack, each of the 12 hosts outside the source's rack about equally often.
        let cdf = Cdf::uniform(1_000, 100_000).unwrap();
        let mut s = spec(Limit::Count(24_000));
        s.rack_size = 4;
        let flows = background_flows(&s, &cdf).unwrap();
        let rack = |h: u32| (h - 10) / 4;
        assert!(flows.iter().all(|f| rack(f.src) != rack(f.dst)));
        let mut seen = [[0u32; 16]; 16];
        for f in &flows {
            seen[(f.src - 10) as usize][(f.dst - 10) as usize] += 1;
        }
        for (src, row) in seen.iter().enumerate() {
            let n: u32 = row.iter().sum();
            for (dst, &k) in row.iter().enumerate() {
                if src / 4 != dst / 4 {
                    let share = k as f64 / n as f64;
                    assert!((share - 1.0 / 12.0).abs() < 0.03, "{src}->{dst}: {share}");
                }
            }
        }
        // one-host racks are no racks: the draws of the plain pick, flow for flow
        let mut one = s.clone();
        one.rack_size = 1;
        let mut none = s.clone();
        none.rack_size = 0;
        assert_eq!(background_flows(&one, &cdf).unwrap(), background_flows(&none, &cdf).unwrap());
        // to one destination: every source outside its rack
        let mut to = s.clone();
        to.dst = Some(13);
        assert!(background_flows(&to, &cdf).unwrap().iter().all(|f| f.dst == 13 && rack(f.src) != 0));
        // a single rack leaves no pair
        let mut all = s;
        all.rack_size = 16;
        assert!(background_flows(&all, &cdf).unwrap_err().contains("one rack"));
    }
}
