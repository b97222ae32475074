//! Inter-arrival processes and the conversion of a target load into an arrival rate.
//!
//! Why two load bases: the papers define "load" differently. HPCC's `traffic_gen.py` (and
//! Floodgate-NS3's `third.cc`) give each host a Poisson process with rate
//! `host_rate * load / (8 * mean_size)`, so load is the average utilisation of host links.
//! BFC (NSDI '22, §6.2.1 "Workloads": "by X% load we mean X% load on the links in the core";
//! its `nsdifinal.cc` uses `64 * datarate * utilization_factor` bits/s, i.e. the 64 ToR-spine
//! links) and FlowSail (§VI-B "X% denotes X% load on the core links") scale to a capacity that
//! the caller computes from the topology.

use crate::rng::Rng;
use crate::time::{Rate, Time, PS_PER_S};
use serde::{Deserialize, Serialize};

/// How the gaps between consecutive flow arrivals are drawn (all with the same mean).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arrival {
    /// Exponential gaps (HPCC, Floodgate, FlowSail, Pulser).
    Poisson,
    /// Lognormal gaps with shape `sigma`; BFC §6.2.1 "Workloads": "The flow arrival pattern is
    /// open-loop and follows a *bursty* lognormal inter-arrival-time distribution with
    /// sigma = 2" (its code: `lognormal_distribution(m, sigma)` with m = -sigma^2/2 - ln(rate),
    /// which is `Rng::lognormal_with_mean`).
    LogNormal { sigma: f64 },
}

impl Arrival {
    /// BFC's bursty arrivals (sigma = 2).
    pub const BFC: Arrival = Arrival::LogNormal { sigma: 2.0 };

    /// One gap with the given mean (any unit; the result is in the same unit).
    pub fn gap(&self, rng: &mut Rng, mean: f64) -> f64 {
        match *self {
            Arrival::Poisson => rng.exponential(mean),
            Arrival::LogNormal { sigma } => rng.lognormal_with_mean(mean, sigma),
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Arrival::Poisson => Ok(()),
            Arrival::LogNormal { sigma } if sigma.is_finite() && sigma >= 0.0 => Ok(()),
            Arrival::LogNormal { sigma } => {
                Err(format!("lognormal sigma {sigma} must be finite and >= 0"))
            }
        }
    }
}

/// What "load" is a fraction of.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum LoadBasis {
    /// Each of `hosts` hosts offers `load * host_rate` on its link (HPCC traffic_gen).
    HostLinks { hosts: usize, host_rate: Rate },
    /// The flows together offer `load * bps` (e.g. the core/bisection capacity; BFC, FlowSail).
    Capacity { bps: f64 },
}

impl LoadBasis {
    /// The capacity that `load = 1.0` fills, in bits per second.
    pub fn capacity_bps(&self) -> f64 {
        match *self {
            LoadBasis::HostLinks { hosts, host_rate } => hosts as f64 * host_rate.bps() as f64,
            LoadBasis::Capacity { bps } => bps,
        }
    }
}

/// Aggregate flow arrival rate (flows per second) that makes flows of mean size `mean_size`
/// bytes offer `load` of `basis`: `load * capacity / (8 * mean_size)`.
pub fn total_arrival_rate(load: f64, basis: &LoadBasis, mean_size: f64) -> f64 {
    load * basis.capacity_bps() / (8.0 * mean_size)
}

/// Mean gap (in picoseconds, as a float) of the aggregate process, checked to be usable.
pub fn mean_gap_ps(load: f64, basis: &LoadBasis, mean_size: f64) -> Result<f64, String> {
    if !(load.is_finite() && load > 0.0) {
        return Err(format!("load {load} must be a positive number"));
    }
    if !(mean_size.is_finite() && mean_size > 0.0) {
        return Err(format!("mean flow size {mean_size} must be positive"));
    }
    let rate = total_arrival_rate(load, basis, mean_size);
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("arrival rate {rate} flows/s from {basis:?} is not positive"));
    }
    Ok(PS_PER_S as f64 / rate)
}

/// When a generator stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Limit {
    /// Events whose start lies in [start, start + duration).
    Duration(Time),
    /// Exactly this many events (flows for background traffic, bursts for incast).
    Count(usize),
}

/// Most flows a workload may have: a run numbers its flows in `ids::ID_BITS` bits.
pub const MAX_FLOWS: u64 = 1 << crate::ids::ID_BITS;

/// Arrival instants of a renewal process from `start`: the first at `start + gap`, as HPCC's
/// traffic_gen does. Times accumulate in f64 picoseconds and are rounded once each, so no
/// rounding error builds up over a run.
///
/// Errors (instead of taking every byte of memory) when the window holds more than
/// [`MAX_FLOWS`] arrivals on average, or when the draws overrun 16 times that average (at least a
/// million): a lognormal of a very large sigma draws gaps that round to 0 ps almost always, so
/// its arrivals pile up at one instant without end. The list is [`ArrivalClock`] collected, so the
/// two give the same instants and errors.
pub fn arrival_times(
    arrival: Arrival,
    mean_gap_ps: f64,
    start: Time,
    limit: Limit,
    rng: &mut Rng,
) -> Result<Vec<Time>, String> {
    ArrivalClock::new(arrival, mean_gap_ps, start, limit, rng)?.collect()
}

/// [`arrival_times`] one instant at a time, holding O(1) state: a streamed run draws its
/// background flows as they arrive instead of listing a whole window first (issue 14).
///
/// The expected-count check is made by `new`; the overrun check when it trips, as the last item
/// (`Some(Err)`, then `None`). `R` is the random stream, owned (`Rng`) or borrowed (`&mut Rng`).
pub struct ArrivalClock<R = Rng> {
    arrival: Arrival,
    mean_gap_ps: f64,
    start: Time,
    limit: Limit,
    expected: f64,
    /// Most arrivals drawn before the process counts as overrun.
    cap: usize,
    /// The running instant in f64 ps, rounded once per arrival.
    t: f64,
    drawn: usize,
    done: bool,
    rng: R,
}

impl<R: std::borrow::BorrowMut<Rng>> ArrivalClock<R> {
    pub fn new(arrival: Arrival, mean_gap_ps: f64, start: Time, limit: Limit, rng: R) -> Result<Self, String> {
        let expected = match limit {
            Limit::Count(n) => n as f64,
            Limit::Duration(d) => d.0 as f64 / mean_gap_ps,
        };
        // (NaN, from a zero mean gap over no time, fails this too)
        if expected.is_nan() || expected >= MAX_FLOWS as f64 {
            return Err(format!(
                "workload: about {expected:.0} flows would start (a mean gap of {mean_gap_ps:.3} ps); a run holds fewer than {MAX_FLOWS}"
            ));
        }
        let cap = ((expected * 16.0) as u64).clamp(1 << 20, MAX_FLOWS) as usize;
        Ok(ArrivalClock { arrival, mean_gap_ps, start, limit, expected, cap, t: start.0 as f64, drawn: 0, done: false, rng })
    }

    /// The next instant, `None` at the limit, or the overrun error.
    fn step(&mut self) -> Option<Result<Time, String>> {
        if let Limit::Count(n) = self.limit {
            if self.drawn >= n {
                return None;
            }
        }
        if self.drawn >= self.cap {
            return Some(Err(format!(
                "workload: the arrivals ({:?}) overran {} flows where about {:.0} were expected; the arrival process is too bursty to draw",
                self.arrival, self.cap, self.expected
            )));
        }
        self.t += self.arrival.gap(self.rng.borrow_mut(), self.mean_gap_ps);
        if self.t.is_nan() || self.t >= u64::MAX as f64 {
            return None;
        }
        let at = Time(self.t.round() as u64);
        if let Limit::Duration(d) = self.limit {
            if at.0 >= self.start.0.saturating_add(d.0) {
                return None;
            }
        }
        self.drawn += 1;
        Some(Ok(at))
    }
}

impl<R: std::borrow::BorrowMut<Rng>> Iterator for ArrivalClock<R> {
    type Item = Result<Time, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step();
        // fused after the limit or the error: a later call must not draw on
        self.done = !matches!(item, Some(Ok(_)));
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn host_link_load_matches_hpcc_traffic_gen() {
        // traffic_gen.py: per-host avg_inter_arrival = 1 / (bandwidth * load / 8 / avg).
        let basis = LoadBasis::HostLinks { hosts: 320, host_rate: Rate::gbps(100) };
        let per_host = 100e9 * 0.3 / 8.0 / 1_711_250.0;
        let total = total_arrival_rate(0.3, &basis, 1_711_250.0);
        assert!((total / (320.0 * per_host) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn capacity_load_matches_bfc() {
        // nsdifinal.cc: flows_per_sec = 64 * 100 Gb/s * 0.6 / (avg * 8).
        let basis = LoadBasis::Capacity { bps: 64.0 * 100e9 };
        let r = total_arrival_rate(0.6, &basis, 2907.0);
        assert!((r - 64.0 * 100e9 * 0.6 / (2907.0 * 8.0)).abs() < 1e-6);
        assert!(mean_gap_ps(0.0, &basis, 2907.0).is_err());
        assert!(mean_gap_ps(0.5, &basis, 0.0).is_err());
        assert!(mean_gap_ps(0.5, &LoadBasis::Capacity { bps: 0.0 }, 1.0).is_err());
    }

    #[test]
    fn both_processes_have_the_requested_mean_rate() {
        for a in [Arrival::Poisson, Arrival::BFC] {
            let mut r = Rng::stream(9, stream::ARRIVAL, 0);
            let mean = 1_000_000.0; // 1 us
            let ts = arrival_times(a, mean, Time::ZERO, Limit::Count(400_000), &mut r).unwrap();
            let avg = ts.last().unwrap().0 as f64 / ts.len() as f64;
            // sigma = 2 lognormal has a heavy tail: allow 5%.
            assert!((avg / mean - 1.0).abs() < 0.05, "{a:?}: {avg}");
        }
    }

    #[test]
    fn duration_limit_is_half_open_and_count_is_exact() {
        let mut r = Rng::stream(1, stream::ARRIVAL, 0);
        let start = Time::from_us(5);
        let ts =
            arrival_times(Arrival::Poisson, 1e5, start, Limit::Duration(Time::from_us(100)), &mut r).unwrap();
        assert!(!ts.is_empty());
        assert!(ts.iter().all(|t| *t > start && *t < Time::from_us(105)));
        assert!(ts.windows(2).all(|w| w[0] <= w[1]));
        let ts = arrival_times(Arrival::Poisson, 1e5, start, Limit::Count(7), &mut r).unwrap();
        assert_eq!(ts.len(), 7);
        assert!(Arrival::LogNormal { sigma: f64::NAN }.validate().is_err());
    }

    #[test]
    fn the_clock_ends_with_its_overrun() {
        // sigma 40 puts nearly every arrival at the first instant: the cap of 2^20 trips
        let clock = ArrivalClock::new(Arrival::LogNormal { sigma: 40.0 }, 1e5, Time::ZERO, Limit::Duration(Time::from_us(1)), Rng::stream(2, stream::ARRIVAL, 0));
        let mut clock = clock.unwrap();
        let ok = clock.by_ref().take_while(|r| r.is_ok()).count();
        assert_eq!(ok, 1 << 20);
        assert!(clock.next().is_none(), "nothing after the error");
        let e = arrival_times(Arrival::LogNormal { sigma: 40.0 }, 1e5, Time::ZERO, Limit::Duration(Time::from_us(1)), &mut Rng::stream(2, stream::ARRIVAL, 0));
        assert!(e.unwrap_err().contains("overran 1048576 flows where about 10 were expected"));
        assert!(ArrivalClock::new(Arrival::Poisson, 0.0, Time::ZERO, Limit::Duration(Time::ZERO), Rng::stream(2, stream::ARRIVAL, 0)).is_err());
    }
}
