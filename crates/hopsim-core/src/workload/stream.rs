//! Flows in arrival order, made as the run asks for them (issue 14: peak memory bounded by the
//! packets in flight, not by the flows of the whole run).
//!
//! Why it equals the materialised list flow for flow: `build` sorts the concatenation of a
//! workload's parts (`sort_flows`, stable by (start, src, dst)) and then numbers source ports in
//! that order. A stable sort of a concatenation is the merge of its parts each stable-sorted,
//! taking the lowest part on equal keys; a background generator's starts never decrease, so it
//! is stable-sorted once each run of equal starts is (`TiesSorted`). Small parts (flow lists,
//! incast bursts, long-lived flows) are listed and sorted whole; only background is drawn lazily.

use super::background::{BackgroundFlows, BackgroundSpec};
use super::cdf::Cdf;
use super::{arrival_key, sort_flows, FlowSpec, FIRST_SPORT};
use std::collections::HashMap;

/// A workload's flows one at a time, in arrival order (a `FlowStream`, or any other source).
pub type BoxedStream = Box<dyn Iterator<Item = Result<FlowSpec, String>> + Send>;
/// Makes the stream from its start again: it is read once to count, once to check, once to run.
pub(crate) type MakeStream = Box<dyn Fn() -> Result<BoxedStream, String>>;

/// Flows in arrival order, made as they are asked for; `Send + 'static` (owns its data).
///
/// Errors: a workload's errors come from the call that makes the stream (`WorkloadSpec::
/// stream_on`), except an arrival process's overrun, which comes as the first `Err` item (after
/// the flows before it), then `None`. Either way the error is the one the materialised path
/// (`build_on`) returns: where two parts fail, the one it makes first.
pub struct FlowStream {
    merge: Merge,
    sports: SportCounter,
    /// Source ports count per source host, not per pair (`scenario::SourcePorts`).
    per_source: bool,
}

/// The run may move the stream to another thread or keep it past the spec it came from.
const _: fn() = || {
    fn owned_and_sendable<T: Send + 'static>() {}
    owned_and_sendable::<FlowStream>();
};

impl FlowStream {
    /// `parts` merged, source ports numbered per pair over `hosts` (the topology's).
    pub(crate) fn new(parts: Parts, hosts: &[u32]) -> FlowStream {
        FlowStream { merge: Merge::new(parts), sports: SportCounter::new(hosts, DENSE_MAX_HOSTS), per_source: false }
    }

    /// The same flows with source ports numbered per source host (Floodgate-NS3's way): its
    /// counter is the pair (src, src), which no flow uses.
    pub(crate) fn ports_per_source_host(self) -> FlowStream {
        FlowStream { per_source: true, ..self }
    }

    /// Flows (or per-pair counters beyond the dense table) the stream holds now: what grows with
    /// the workload rather than the topology. For tests of the memory bound.
    pub fn held(&self) -> usize {
        self.merge.held() + self.sports.sparse.len()
    }
}

impl Iterator for FlowStream {
    type Item = Result<FlowSpec, String>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.merge.next()?.map(|mut f| {
            if f.sport == 0 {
                f.sport = self.sports.take(f.src, if self.per_source { f.src } else { f.dst });
            }
            f
        }))
    }
}

/// Hosts up to which the per-pair port counters are a dense table (2048^2 x 2 B = 8 MB; 2 MB at
/// 1024 hosts, allocated zeroed, so untouched pages cost no resident memory); beyond, a map of
/// the pairs seen, which grows with the distinct pairs of the workload (a 16-to-1 incast on a
/// 3,000-host star would otherwise allocate 18 MB for 16 pairs).
pub(crate) const DENSE_MAX_HOSTS: usize = 2048;

/// Source ports numbered as `number_sports` does (per (src, dst) pair from `FIRST_SPORT`, in
/// flow order, wrapping as a u16), with counters that do not cost O(flows).
pub(crate) struct SportCounter {
    /// Host rank by node id (`u32::MAX`: not a host; such pairs go to `sparse`).
    rank: Vec<u32>,
    hosts: usize,
    /// Ports taken so far by pair (src rank x hosts + dst rank), as an offset from `FIRST_SPORT`.
    dense: Vec<u16>,
    sparse: HashMap<(u32, u32), u16>,
}

impl SportCounter {
    pub(crate) fn new(hosts: &[u32], dense_max: usize) -> SportCounter {
        if hosts.is_empty() || hosts.len() > dense_max {
            return SportCounter { rank: vec![], hosts: 0, dense: vec![], sparse: HashMap::new() };
        }
        let mut rank = vec![u32::MAX; hosts.iter().max().map_or(0, |&h| h as usize + 1)];
        for (i, &h) in hosts.iter().enumerate() {
            rank[h as usize] = i as u32;
        }
        SportCounter { rank, hosts: hosts.len(), dense: vec![0; hosts.len() * hosts.len()], sparse: HashMap::new() }
    }

    /// The next source port of the pair.
    pub(crate) fn take(&mut self, src: u32, dst: u32) -> u16 {
        let rank = |h: u32| self.rank.get(h as usize).copied().filter(|&r| r != u32::MAX);
        let taken = match (rank(src), rank(dst)) {
            (Some(s), Some(d)) => &mut self.dense[s as usize * self.hosts + d as usize],
            _ => self.sparse.entry((src, dst)).or_insert(0),
        };
        let port = FIRST_SPORT.wrapping_add(*taken);
        *taken = taken.wrapping_add(1);
        port
    }
}

/// One part of a workload, sorted by (start, src, dst).
pub(crate) enum Part {
    /// Background flows as drawn, without those sent from or to a host of `exclude` (sorted).
    Drawn { flows: Box<TiesSorted<BackgroundFlows>>, exclude: Vec<u32> },
    /// A small part, listed in full.
    Listed(std::vec::IntoIter<FlowSpec>),
}

impl Part {
    fn next(&mut self) -> Option<Result<FlowSpec, String>> {
        match self {
            Part::Drawn { flows, exclude } => flows.find(|r| match r {
                Ok(f) => exclude.binary_search(&f.src).is_err() && exclude.binary_search(&f.dst).is_err(),
                Err(_) => true,
            }),
            Part::Listed(v) => v.next().map(Ok),
        }
    }

    fn held(&self) -> usize {
        match self {
            Part::Drawn { flows, .. } => flows.run.capacity(),
            Part::Listed(v) => v.len(),
        }
    }
}

/// A workload's parts, in the order the materialised path makes (and concatenates) them.
#[derive(Default)]
pub(crate) struct Parts(Vec<Part>);

impl Parts {
    /// Adds a small part (sorted here).
    pub(crate) fn listed(&mut self, mut v: Vec<FlowSpec>) {
        sort_flows(&mut v);
        self.0.push(Part::Listed(v.into_iter()));
    }

    /// Adds the background of `spec`, without the flows that touch a host of `exclude`.
    pub(crate) fn drawn(&mut self, spec: &BackgroundSpec, cdf: &Cdf, mut exclude: Vec<u32>) -> Result<(), String> {
        let flows = self.check(BackgroundFlows::new(spec, cdf))?;
        exclude.sort_unstable();
        exclude.dedup();
        self.0.push(Part::Drawn { flows: Box::new(TiesSorted::new(flows)), exclude });
        Ok(())
    }

    /// `r`, or where it failed the error the materialised path meets first: an earlier drawn
    /// part's overrun (it drew that part to its end before going on), else `r`'s. Draws the
    /// earlier parts to their end on that error path.
    pub(crate) fn check<T>(&mut self, r: Result<T, String>) -> Result<T, String> {
        r.map_err(|e| first_error(&mut self.0).unwrap_or(e))
    }
}

/// The first error of `parts`, drawing each to its end (in O(1) memory).
fn first_error(parts: &mut [Part]) -> Option<String> {
    parts.iter_mut().find_map(|p| std::iter::from_fn(|| p.next()).find_map(|r| r.err()))
}

/// A generator whose starts never decrease, with each run of equal starts ordered by (src, dst)
/// as the stable `sort_flows` orders it (in drawn order on equal pairs). Holds one run: a
/// lognormal arrival process of a large sigma piles many flows at one picosecond.
pub(crate) struct TiesSorted<I> {
    inner: I,
    run: Vec<FlowSpec>,
    /// The next flow of `run` to hand out.
    at: usize,
    /// The first flow after `run`, already drawn.
    ahead: Option<FlowSpec>,
}

impl<I: Iterator<Item = Result<FlowSpec, String>>> TiesSorted<I> {
    pub(crate) fn new(inner: I) -> Self {
        TiesSorted { inner, run: Vec::new(), at: 0, ahead: None }
    }
}

impl<I: Iterator<Item = Result<FlowSpec, String>>> Iterator for TiesSorted<I> {
    type Item = Result<FlowSpec, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(&f) = self.run.get(self.at) {
            self.at += 1;
            return Some(Ok(f));
        }
        self.run.clear();
        let first = match self.ahead.take() {
            Some(f) => f,
            None => match self.inner.next()? {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            },
        };
        self.run.push(first);
        loop {
            match self.inner.next() {
                Some(Ok(f)) if f.start == first.start => self.run.push(f),
                Some(Ok(f)) => {
                    debug_assert!(f.start > first.start, "a generator's starts never decrease");
                    self.ahead = Some(f);
                    break;
                }
                Some(Err(e)) => {
                    self.run.clear();
                    return Some(Err(e));
                }
                None => break,
            }
        }
        sort_flows(&mut self.run);
        self.at = 1;
        Some(Ok(self.run[0]))
    }
}

/// The k-way merge of sorted parts by (start, src, dst), the lowest part first on equal keys:
/// the stable sort of their concatenation. Ends after the first error.
pub(crate) struct Merge {
    parts: Vec<Part>,
    /// Each part's next flow (`None`: the part is over), once `primed`.
    heads: Vec<Option<FlowSpec>>,
    primed: bool,
    done: bool,
}

impl Merge {
    pub(crate) fn new(parts: Parts) -> Merge {
        let heads = vec![None; parts.0.len()];
        Merge { parts: parts.0, heads, primed: false, done: false }
    }

    fn held(&self) -> usize {
        self.parts.iter().map(Part::held).sum()
    }

    /// Pulls part `i`'s next flow into its head; on an error, the error the materialised path
    /// meets first (an earlier part's, drawn to its end there before part `i` was made).
    fn pull(&mut self, i: usize) -> Result<(), String> {
        self.heads[i] = match self.parts[i].next().transpose() {
            Ok(f) => f,
            Err(e) => {
                self.done = true;
                return Err(first_error(&mut self.parts[..i]).unwrap_or(e));
            }
        };
        Ok(())
    }
}

impl Iterator for Merge {
    type Item = Result<FlowSpec, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if !self.primed {
            self.primed = true;
            for i in 0..self.parts.len() {
                if let Err(e) = self.pull(i) {
                    return Some(Err(e));
                }
            }
        }
        let mut best: Option<(usize, FlowSpec)> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some(f) = h {
                // strictly less: the lowest part wins a tie
                if best.is_none_or(|(_, b)| arrival_key(f) < arrival_key(&b)) {
                    best = Some((i, *f));
                }
            }
        }
        let Some((i, f)) = best else {
            self.done = true;
            return None;
        };
        match self.pull(i) {
            Ok(()) => Some(Ok(f)),
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Background, LoadOn, TopologySpec, WorkloadSpec};
    use crate::time::{Rate, Time};
    use crate::workload::arrivals::Arrival;
    use crate::workload::number_sports;
    use crate::workload::tests::f;

    #[test]
    fn the_merge_takes_the_lowest_part_on_equal_keys() {
        let mut parts = Parts::default();
        parts.listed(vec![f(1, 2, 5, 10), f(1, 2, 5, 11), f(0, 9, 7, 12)]);
        parts.listed(vec![f(1, 2, 5, 20), f(0, 1, 5, 21), f(0, 9, 7, 22)]);
        let sizes: Vec<u64> = Merge::new(parts).map(|r| r.unwrap().size).collect();
        assert_eq!(sizes, vec![21, 10, 11, 20, 12, 22]);
    }

    /// Floodgate-NS3's numbering: one counter per source host, whatever the destination; the
    /// HPCC simulator's: one per pair.
    #[test]
    fn a_flow_file_numbers_ports_per_pair_or_per_source_host() {
        use crate::scenario::SourcePorts;
        let t = TopologySpec::Star { hosts: 4, rate: Rate::gbps(100), delay: Time::from_us(1) }.build().unwrap();
        // host ids 0..3 on the star; flows 0->1, 0->2, 0->1, 1->0 at 2 s + i ns
        let text = "4\n0 1 3 100 1000 2.000000001\n0 2 3 100 1000 2.000000002\n0 1 3 100 1000 2.000000003\n1 0 3 100 1000 2.000000004\n";
        let ports = |source_ports| {
            let w = WorkloadSpec::HpccFlows { text: text.into(), time_offset: Time::from_secs_f64(2.0), source_ports };
            w.build(&t, 1).unwrap().iter().map(|f| f.sport).collect::<Vec<_>>()
        };
        assert_eq!(ports(SourcePorts::PerPair), vec![10000, 10000, 10001, 10000]);
        assert_eq!(ports(SourcePorts::PerSourceHost), vec![10000, 10001, 10002, 10000]);
        // a port the file gives (its eighth field) stays, and takes none of the pair's; the
        // materialised list numbers alike
        let given = text.replace("0 2 3 100 1000 2.000000002", "0 1 3 100 1000 2.000000002 0 49153");
        let w = WorkloadSpec::HpccFlows { text: given, time_offset: Time::from_secs_f64(2.0), source_ports: SourcePorts::PerPair };
        let flows = w.build(&t, 1).unwrap();
        assert_eq!(flows.iter().map(|f| f.sport).collect::<Vec<_>>(), vec![10000, 49153, 10001, 10000]);
        let mut listed: Vec<FlowSpec> = flows.iter().map(|f| FlowSpec { sport: if f.sport == 49153 { f.sport } else { 0 }, ..f.clone() }).collect();
        number_sports(&mut listed);
        assert_eq!(listed, flows);
    }

    #[test]
    fn ports_are_numbered_as_number_sports_does() {
        // hosts 3, 5, ..., 41; flows also from and to ids that are not hosts; one pair past the wrap
        let hosts: Vec<u32> = (0..20).map(|i| 3 + 2 * i).collect();
        let mut rng = crate::rng::Rng::stream(7, crate::rng::stream::PAIRS, 0);
        let mut flows: Vec<FlowSpec> = (0..30_000).map(|i| f(rng.below(44) as u32, rng.below(44) as u32, i, 1)).collect();
        flows.extend((0..70_000).map(|i| f(if i % 7 == 0 { 9 } else { 5 }, 7, 30_000 + i, 1)));
        let mut want = flows.clone();
        number_sports(&mut want);
        assert!(want.iter().any(|f| f.sport < FIRST_SPORT), "a pair wraps");
        for dense_max in [DENSE_MAX_HOSTS, 0] {
            let mut c = SportCounter::new(&hosts, dense_max);
            let got: Vec<u16> = flows.iter().map(|f| c.take(f.src, f.dst)).collect();
            assert!(got.iter().zip(&want).all(|(g, w)| *g == w.sport), "dense up to {dense_max} hosts");
            // only the pairs with an end outside the hosts need a map entry in the dense table
            let outside = want.iter().filter(|f| !hosts.contains(&f.src) || !hosts.contains(&f.dst)).map(|f| (f.src, f.dst));
            let outside = outside.collect::<std::collections::BTreeSet<_>>().len();
            assert_eq!(c.sparse.len() == outside, dense_max > 0);
        }
    }

    /// Issue 14: a background of 250k flows streams through state that does not grow with it.
    #[test]
    fn a_streamed_background_holds_a_few_flows_at_a_time() {
        let topo = TopologySpec::Star { hosts: 64, rate: Rate::gbps(100), delay: Time::from_us(1) };
        let t = topo.build().unwrap();
        for arrival in [Arrival::Poisson, Arrival::BFC] {
            let w = WorkloadSpec::Background(Background {
                cdf: "1000 0\n4000 0.5\n20000 1\n".into(),
                load: 0.9,
                load_on: LoadOn::HostLinks,
                arrival,
                start: Time::ZERO,
                duration: Time::from_us(2500),
                prio: 3,
                dst: None,
                rack_size: 0,
            });
            let mut s = w.stream_on(&topo, &t, 3).unwrap();
            let (mut n, mut most) = (0, 0);
            while let Some(r) = s.next() {
                r.unwrap();
                n += 1;
                most = most.max(s.held());
            }
            assert!(n > 200_000, "{n} flows");
            assert!(most <= 8, "{arrival:?}: held up to {most} flows");
        }
    }

    /// Where two drawn parts overrun, the first part's error wins, as the materialised path
    /// draws it whole first, even though the merge meets the second part's overrun first.
    #[test]
    fn an_earlier_part_error_wins() {
        use crate::workload::arrivals::{Limit, LoadBasis};
        use crate::workload::background::{background_flows, BackgroundSpec};
        let spec = |start: u64, us: u64, sigma: f64, seed: u64| BackgroundSpec {
            hosts: (0..8).collect(),
            arrival: Arrival::LogNormal { sigma },
            basis: LoadBasis::HostLinks { hosts: 8, host_rate: Rate::gbps(100) },
            load: 0.5,
            start: Time::from_us(start),
            limit: Limit::Duration(Time::from_us(us)),
            prio: 3,
            seed,
            stream_index: 0,
            dst: None,
            rack_size: 0,
        };
        let cdf = Cdf::constant(1000);
        // The first part piles its flows in runs of about a thousand (sigma 9) after 50 us and
        // overruns late; the second piles all of its own before 10 us (sigma 40) and overruns at once.
        let seed = (0..).find(|&s| background_flows(&spec(50, 40, 9.0, s), &cdf).is_err()).unwrap();
        let (first, second) = (spec(50, 40, 9.0, seed), spec(0, 10, 40.0, seed));
        let mut parts = Parts::default();
        parts.drawn(&first, &cdf, vec![]).unwrap();
        parts.drawn(&second, &cdf, vec![]).unwrap();
        let want = background_flows(&first, &cdf).unwrap_err();
        assert_ne!(want, background_flows(&second, &cdf).unwrap_err());
        assert_eq!(Merge::new(parts).find_map(|r| r.err()), Some(want));
    }
}
