//! Composite workloads: "incastmix" (background + incast bursts) and long-lived flows.
//!
//! Why: Floodgate's main scenario (§6 "Workloads", §6.1 "Simulations Under Incastmix
//! Scenarios") is Poisson background flows mixed with periodic incast; BFC (§6.2.2, Fig. 9)
//! and FlowSail (§VI-B) run the same kind of mix. The incast bursts span the background's
//! time window, as Floodgate-NS3 does (`incast_time = max_time / incast_interval`).
//! Long-lived flows serve throughput micro-benchmarks such as BFC §2.1 Fig. 3 ("a long-lived
//! flow competing on a single link" with cross traffic).

use super::arrivals::Limit;
use super::background::{BackgroundFlows, BackgroundSpec};
use super::cdf::Cdf;
use super::incast::{incast_flows, IncastSpec};
use super::stream::{Merge, Parts};
use super::{sort_flows, FlowSpec};
use crate::time::Time;

/// Size given to a long-lived flow: 2^50 B (about 1.1 PB) never finishes in a simulated
/// run (over 6 hours at 400 Gb/s), yet leaves headroom so that byte counters (size * 8, size
/// plus headers) cannot overflow a u64.
pub const LONG_LIVED_SIZE: u64 = 1 << 50;

/// Background flows of `bg` plus incast bursts of `incast` among the same hosts, sorted by
/// start time. The bursts cover the background's window: [start, start + duration) for a
/// duration limit, [start, last background start] for a count limit. The incast streams use
/// the background's seed and stream index, under their own stream keys. An incast given as a
/// share of the background's load (`IncastTiming::BackgroundShare`) offers that share of the
/// background's offered bits per second.
pub fn incastmix(bg: &BackgroundSpec, cdf: &Cdf, incast: &IncastSpec) -> Result<Vec<FlowSpec>, String> {
    Merge::new(incastmix_parts(bg, cdf, incast)?).collect()
}

/// `incastmix`'s parts: the background, drawn as the run goes, then the bursts, listed.
///
/// Two things are known only after the background: with a count limit the window ends at the
/// last background start, found by drawing the background once more (O(1) memory, time as
/// long as the run's draws); with `exclude_dsts_from_background` the burst destinations, which
/// the listed bursts give before the background is drawn.
pub(crate) fn incastmix_parts(bg: &BackgroundSpec, cdf: &Cdf, incast: &IncastSpec) -> Result<Parts, String> {
    let incast = &incast.beside_background(bg.load * bg.basis.capacity_bps(), bg.hosts.len());
    let window = match bg.limit {
        Limit::Duration(d) => d,
        Limit::Count(_) => {
            let mut last = bg.start;
            for f in BackgroundFlows::new(bg, cdf)? {
                last = f?.start;
            }
            // +1 ps so that a burst at the last background start is still inside.
            Time((last.0 - bg.start.0).saturating_add(1))
        }
    };
    let mut parts = Parts::default();
    // Made before the background here, so its errors wait for the background's.
    let bursts = incast_flows(incast, &bg.hosts, bg.start, Limit::Duration(window), bg.seed, bg.stream_index);
    // Floodgate-NS3 draws the background first and then drops every flow that touches a burst's
    // destination, so the other flows keep their draws (and times) as they were.
    let exclude = match (&bursts, incast.exclude_dsts_from_background) {
        (Ok(b), true) => b.iter().map(|f| f.dst).collect(),
        _ => vec![],
    };
    parts.drawn(bg, cdf, exclude)?;
    let bursts = parts.check(bursts)?;
    parts.listed(bursts);
    Ok(parts)
}

/// One flow per (src, dst) pair, all starting at `start`, of `size` bytes (use
/// `LONG_LIVED_SIZE` for flows that last the whole run).
pub fn long_lived(
    pairs: &[(u32, u32)],
    size: u64,
    start: Time,
    prio: u8,
) -> Result<Vec<FlowSpec>, String> {
    if size == 0 {
        return Err("long-lived flow size must be at least 1 byte".to_string());
    }
    if let Some((s, _)) = pairs.iter().find(|(s, d)| s == d) {
        return Err(format!("long-lived flow from host {s} to itself"));
    }
    let mut v: Vec<FlowSpec> = pairs
        .iter()
        .map(|&(src, dst)| FlowSpec { src, dst, size, start, prio, incast: false, dport: super::DEFAULT_DPORT, sport: 0, pg: 0, rate_cap: None })
        .collect();
    sort_flows(&mut v);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Rate;
    use crate::workload::arrivals::{Arrival, LoadBasis};
    use crate::workload::background::background_flows;
    use crate::workload::incast::{IncastSize, IncastTiming};
    use crate::workload::DEFAULT_PRIO;

    fn bg(limit: Limit) -> BackgroundSpec {
        BackgroundSpec {
            hosts: (0..32).collect(),
            arrival: Arrival::Poisson,
            basis: LoadBasis::HostLinks { hosts: 32, host_rate: Rate::gbps(100) },
            load: 0.5,
            start: Time::from_us(30),
            limit,
            prio: DEFAULT_PRIO,
            seed: 5,
            stream_index: 0,
            dst: None,
            rack_size: 0,
        }
    }

    #[test]
    fn incastmix_merges_sorted_and_keeps_tags() {
        let cdf = Cdf::uniform(1_000, 50_000).unwrap();
        let inc =
            IncastSpec::new(8, IncastSize::Total(800_000), IncastTiming::Period(Time::from_us(100)));
        let spec = bg(Limit::Duration(Time::from_ms(1)));
        let mix = incastmix(&spec, &cdf, &inc).unwrap();
        let bgs = background_flows(&spec, &cdf).unwrap();
        let n_inc = mix.iter().filter(|f| f.incast).count();
        assert_eq!(n_inc, 10 * 8);
        assert_eq!(mix.len(), bgs.len() + n_inc);
        assert!(mix
            .windows(2)
            .all(|w| (w[0].start, w[0].src, w[0].dst) <= (w[1].start, w[1].src, w[1].dst)));
        assert!(mix.iter().all(|f| f.start >= spec.start && f.start < Time::from_us(1030)));
        // Background flows are the same with or without incast.
        let only_bg: Vec<FlowSpec> = mix.iter().filter(|f| !f.incast).copied().collect();
        let mut sorted_bg = bgs;
        sort_flows(&mut sorted_bg);
        assert_eq!(only_bg, sorted_bg);
    }

    /// Floodgate-NS3's incastmix: with `exclude_dsts_from_background` no background flow is sent
    /// from or to a burst's destination (rotating over three hosts here), and every other
    /// background flow is the one the plain mix has, at the same time; the bursts are unchanged.
    #[test]
    fn excluding_the_destinations_drops_their_background_flows_alone() {
        let cdf = Cdf::uniform(1_000, 50_000).unwrap();
        let mut inc =
            IncastSpec::new(8, IncastSize::Total(800_000), IncastTiming::Period(Time::from_us(400)));
        (inc.dst, inc.dst_stride) = (Some(4), 8);
        let spec = bg(Limit::Duration(Time::from_ms(1)));
        let plain = incastmix(&spec, &cdf, &inc).unwrap();
        inc.exclude_dsts_from_background = true;
        let quiet = incastmix(&spec, &cdf, &inc).unwrap();
        let dsts = [4, 12, 20];
        let touches = |f: &FlowSpec| dsts.contains(&f.src) || dsts.contains(&f.dst);
        let bursts = |m: &[FlowSpec]| m.iter().filter(|f| f.incast).copied().collect::<Vec<_>>();
        assert_eq!(bursts(&quiet), bursts(&plain));
        assert!(bursts(&quiet).iter().all(|f| dsts.contains(&f.dst)));
        let kept: Vec<FlowSpec> = plain.iter().filter(|f| f.incast || !touches(f)).copied().collect();
        assert!(kept.len() < plain.len() - 20, "the three destinations' background flows: {}", plain.len() - kept.len());
        assert_eq!(quiet, kept);
        assert!(quiet.iter().filter(|f| !f.incast).all(|f| !touches(f)));
    }

    /// FlowSail §VI-B's "(0.1*X)%" incast: with `BackgroundShare`, the incast bytes stay a tenth
    /// of the background's as the background's load (host links) or its basis (core capacity)
    /// changes, and the incast alone refuses it, naming the field.
    #[test]
    fn a_background_share_incast_follows_the_background_load() {
        let cdf = Cdf::uniform(1_000, 50_000).unwrap();
        let inc = IncastSpec::new(
            8,
            IncastSize::PerFlowRange { min: 50_000, max: 200_000 },
            IncastTiming::BackgroundShare { share: 0.1, host_rate: Rate::gbps(100) },
        );
        for (load, basis) in [
            (0.4, LoadBasis::HostLinks { hosts: 32, host_rate: Rate::gbps(100) }),
            (0.8, LoadBasis::HostLinks { hosts: 32, host_rate: Rate::gbps(100) }),
            (0.6, LoadBasis::Capacity { bps: 1.6e12 }),
        ] {
            let spec = BackgroundSpec { load, basis, ..bg(Limit::Duration(Time::from_ms(20))) };
            let mix = incastmix(&spec, &cdf, &inc).unwrap();
            let bytes = |incast: bool| mix.iter().filter(|f| f.incast == incast).map(|f| f.size as f64).sum::<f64>();
            let ratio = bytes(true) / bytes(false);
            assert!((ratio - 0.1).abs() < 0.015, "load {load} {basis:?}: incast / background bytes {ratio}");
        }
        let err = incast_flows(&inc, &(0..32).collect::<Vec<_>>(), Time::ZERO, Limit::Duration(Time::from_ms(1)), 1, 0).unwrap_err();
        assert!(err.contains("workload.incast.background_share") && err.contains("incast_mix"), "{err}");
    }

    #[test]
    fn count_limit_spans_background_window() {
        let cdf = Cdf::constant(10_000);
        let inc = IncastSpec::new(4, IncastSize::Total(40_000), IncastTiming::Period(Time::from_us(1)));
        let spec = bg(Limit::Count(1000));
        let mix = incastmix(&spec, &cdf, &inc).unwrap();
        let last_bg = mix.iter().filter(|f| !f.incast).map(|f| f.start).max().unwrap();
        let last_inc = mix.iter().filter(|f| f.incast).map(|f| f.start).max().unwrap();
        assert!(last_inc <= last_bg && last_bg.0 - last_inc.0 < Time::from_us(1).0);
    }

    #[test]
    fn long_lived_flows() {
        let v = long_lived(&[(3, 1), (0, 2)], LONG_LIVED_SIZE, Time::from_us(5), 3).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].src, v[0].dst), (0, 2));
        assert!(v.iter().all(|f| f.size == LONG_LIVED_SIZE && f.start == Time::from_us(5) && !f.incast));
        assert!(LONG_LIVED_SIZE.checked_mul(8).is_some());
        assert!(long_lived(&[(1, 1)], 10, Time::ZERO, 3).is_err());
        assert!(long_lived(&[(1, 2)], 0, Time::ZERO, 3).is_err());
    }
}
