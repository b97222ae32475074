//! Per-packet one-way latency by flow class (`record.latency`): the P-PFC paper's "tail latency"
//! and "average / 50%ile latency" (Tian et al., TPDS 2020, §5.1 Fig. 6, §5.6 Fig. 16, §5.7
//! Fig. 19) are distributions over packets, not flows, so FCTs cannot give them.
//!
//! What is measured. A data packet's latency is the time from the start of its serialisation at
//! the sender's NIC (`Packet::ts`, stamped when the NIC picks it: `net::host::make_data`) to the
//! arrival of its last bit at the receiver (`net::host::receiver_data`): every queueing,
//! serialisation and propagation delay on the way, the sender's own serialisation included.
//!
//! Classes. Every packet counts in `all` and in `incast` or `non-incast` (the flow's workload tag);
//! with `size_edges = [e1, e2, ...]` (bytes, rising) it also counts in the class of its flow's size
//! bucket within its incast tag: `incast, size < e1`, `incast, e1 <= size < e2`, ...,
//! `non-incast, size >= ek`. Only classes that saw a packet are written (`all` always is).
//!
//! Storage. One log-linear histogram per class ([`LogHist`], HdrHistogram's layout with
//! 2^[`SUB_BITS`] sub-buckets per power of two, written here): values below 2^SUB_BITS ps are kept
//! exactly, above that each bucket's width is at most 2^-(SUB_BITS-1) of its lower bound. A
//! quantile is reported as the midpoint of the bucket holding the sample of that rank, so it is
//! within [`REL_ERROR`] (1/256) of that sample's exact value; min, max, count and mean are exact.
//! Memory is at most 7,424 counters per class, whatever the number of packets.
//!
//! Per hop (`per_hop = true`). Also the queueing time of each data packet at each switch egress
//! it crosses, from its admission to that egress's queue to the start of its serialisation there
//! (VOQ time included: Floodgate's and BFC's queues are the port's), by the port's hop class
//! (`HopClass`: `tor-up`, `agg-down` (a two-tier network's cores), `tor-down`, ...) and incast
//! tag: classes `queueing at tor-up, incast`, `queueing at tor-up, non-incast` and `queueing at
//! tor-up, non-incast to an incast destination` (packets of untagged flows to a host that some
//! incast-tagged flow goes to: under Floodgate they share the incast's VOQ by design, and the
//! paper's workload has none, Floodgate-NS3 keeping Poisson flows off the incast's receivers), and
//! so on. The Floodgate paper's Fig. 11b ("per-hop average queuing time of non-incast flows",
//! §6.1), for every packet instead of a traced sample. The same send-time window selects the
//! packets; size buckets are not kept per hop.
//!
//! Cost. Off, the packet path pays one branch on an `Option` per delivered data packet; on, a
//! leading-zeros count and two increments, in a function kept out of line. Per hop, the switch's
//! packet path takes the recorders' branch (`Recorders::on`) and keeps one time per packet slot.
//!
//! Interpretation choices (ours, not the paper's):
//! - Quantiles are nearest-rank: the p-quantile is the sample of rank ceil(p x count) in
//!   ascending order (the paper does not say which definition it used).
//! - Retransmitted copies (go-back-N after a loss or a timeout) are left out: a copy is timed from
//!   its own transmission, not the first one of its bytes, so counting it would hide the loss.
//!   The sender tags them (`packet::tag::RETX`). Lossless runs (the P-PFC paper's) have none.
//! - Packets still on their way when the run stops are not counted.
//! - A time window (`sent_from`, `sent_until`) selects packets by their send time, so a packet sent inside
//!   it and delivered after `until` counts with its whole latency.

use crate::stats::HopClass;
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// `record.latency`: on when present. `size_edges`: flow-size bucket edges in bytes, rising
/// (empty: classes by incast tag only). `sent_from` / `sent_until`: only packets sent in `[sent_from, sent_until)`
/// count (the P-PFC paper reads "the first 1500 microseconds", Fig. 19, and "the first 1700",
/// Figs. 11b and 12b); `sent_until = None`: to the end of the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LatencyConfig {
    pub size_edges: Vec<u64>,
    pub sent_from: Time,
    pub sent_until: Option<Time>,
    /// Also the queueing time at each switch egress, by hop class (see the module doc).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub per_hop: bool,
}

impl LatencyConfig {
    /// Refuse edges that are not positive and strictly rising, naming the field.
    pub fn check(&self) -> Result<(), String> {
        for (i, w) in self.size_edges.windows(2).enumerate() {
            if w[1] <= w[0] {
                return Err(format!(
                    "record.latency.size_edges: edge {} ({} bytes) is not above edge {} ({} bytes); allowed: sizes above 0, strictly rising",
                    i + 1,
                    w[1],
                    i,
                    w[0]
                ));
            }
        }
        if self.sent_until.is_some_and(|u| u <= self.sent_from) {
            return Err("record.latency.sent_until: not after record.latency.sent_from; allowed: a time after `sent_from`, or omitted (the run's end)".into());
        }
        if self.size_edges.first() == Some(&0) {
            return Err("record.latency.size_edges: 0 bytes; allowed: sizes above 0, strictly rising".into());
        }
        Ok(())
    }
}

/// Sub-bucket bits: 2^SUB_BITS exact values, then 2^(SUB_BITS-1) buckets per power of two.
pub const SUB_BITS: u32 = 8;
const HALF: u64 = 1 << (SUB_BITS - 1);
/// Bound on a reported quantile's error relative to the exact sample of its rank.
pub const REL_ERROR: f64 = 1.0 / (1u64 << SUB_BITS) as f64;

/// A log-linear histogram of u64 values (HdrHistogram's bucket layout): index `v` for
/// `v < 2^SUB_BITS`; above, with `shift = msb(v) - (SUB_BITS - 1)`, index
/// `shift * 2^(SUB_BITS-1) + (v >> shift)`, which continues the exact range without a gap.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogHist {
    counts: Vec<u64>,
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

impl LogHist {
    #[inline]
    pub fn index(v: u64) -> usize {
        if v < (1 << SUB_BITS) {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros();
        let shift = msb - (SUB_BITS - 1);
        (shift as u64 * HALF + (v >> shift)) as usize
    }

    /// The values bucket `i` holds: `[lo, hi]`.
    pub fn bounds(i: usize) -> (u64, u64) {
        let i = i as u64;
        if i < (1 << SUB_BITS) {
            return (i, i);
        }
        let shift = i / HALF - 1;
        let mant = i - shift * HALF;
        let lo = mant << shift;
        (lo, lo + ((1u64 << shift) - 1))
    }

    #[inline]
    pub fn add(&mut self, v: u64) {
        let i = Self::index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += v as u128;
    }

    /// The nearest-rank `q`-quantile (0 < q <= 1): the midpoint of the bucket holding the sample
    /// of rank ceil(q x count), clamped to [min, max]; None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::bounds(i);
                return Some((lo + (hi - lo) / 2).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Add `other`'s samples: bucket counts add, so the merged histogram is the one that would
    /// have seen both sets of samples, and its quantiles are taken after (a run split over
    /// partitions, `crate::engine::merge`).
    pub fn merge(&mut self, other: &LogHist) {
        if other.count == 0 {
            return;
        }
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.min = if self.count == 0 { other.min } else { self.min.min(other.min) };
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.sum += other.sum;
    }
}

/// The per-class latency table: one row per class that saw a packet, times in picoseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyTable {
    pub class: Vec<String>,
    pub count: Vec<u64>,
    pub min_ps: Vec<u64>,
    pub p50_ps: Vec<u64>,
    pub p95_ps: Vec<u64>,
    pub p99_ps: Vec<u64>,
    pub max_ps: Vec<u64>,
    pub mean_ps: Vec<f64>,
}

/// The recorder: `all`, then by incast tag x size bucket.
#[derive(Clone, Debug)]
pub struct LatencyRec {
    edges: Vec<u64>,
    from: Time,
    until: Time,
    all: LogHist,
    /// `[incast][bucket]`: bucket 0 = the tag's whole class, 1.. = size buckets (when edges).
    by: [Vec<LogHist>; 2],
    /// Per hop: `[hop class][tag]` ([`HOP_TAGS`]), and when each packet slot entered its current
    /// queue.
    hop: Option<(Vec<[LogHist; 3]>, Vec<Time>)>,
}

/// The per-hop classes' tags, by index: what `left`'s `tag` means.
pub const HOP_TAGS: [&str; 3] = ["non-incast", "incast", "non-incast to an incast destination"];

impl LatencyRec {
    pub fn new(cfg: &LatencyConfig) -> LatencyRec {
        let n = if cfg.size_edges.is_empty() { 1 } else { cfg.size_edges.len() + 2 };
        let hop = cfg.per_hop.then(|| (vec![Default::default(); HopClass::ALL.len()], vec![]));
        LatencyRec { edges: cfg.size_edges.clone(), from: cfg.sent_from, until: cfg.sent_until.unwrap_or(Time::MAX), all: LogHist::default(), by: [vec![LogHist::default(); n], vec![LogHist::default(); n]], hop }
    }

    /// Whether the switches must report their queueing (`per_hop`).
    pub fn per_hop(&self) -> bool {
        self.hop.is_some()
    }

    /// Packet slot `id` entered a switch egress queue at `now` (per hop).
    #[inline(never)]
    pub fn queued(&mut self, id: u32, now: Time) {
        if let Some((_, at)) = &mut self.hop {
            let i = id as usize;
            if i >= at.len() {
                at.resize(i + 1, Time::ZERO);
            }
            at[i] = now;
        }
    }

    /// Packet slot `id`, sent by its host at `sent`, of tag `tag` ([`HOP_TAGS`]), left a queue
    /// of a port of class `class` at `now` (per hop).
    #[inline(never)]
    pub fn left(&mut self, id: u32, now: Time, class: HopClass, sent: Time, tag: usize) {
        if sent < self.from || sent >= self.until {
            return;
        }
        if let Some((h, at)) = &mut self.hop {
            let since = at.get(id as usize).copied().unwrap_or(now);
            h[class as usize][tag].add(now.0.saturating_sub(since.0));
        }
    }

    /// One delivered packet of a flow of `size` bytes, sent at `sent`, arrived at `now`.
    #[inline(never)]
    pub fn record(&mut self, sent: Time, now: Time, incast: bool, size: u64) {
        if sent < self.from || sent >= self.until {
            return;
        }
        let v = now.0.saturating_sub(sent.0);
        self.all.add(v);
        let by = &mut self.by[incast as usize];
        by[0].add(v);
        if !self.edges.is_empty() {
            let b = self.edges.partition_point(|&e| e <= size);
            by[1 + b].add(v);
        }
    }

    /// Add another recorder's histograms (same settings: another partition of the run).
    pub fn merge(&mut self, other: &LatencyRec) {
        self.all.merge(&other.all);
        for (mine, theirs) in self.by.iter_mut().zip(&other.by) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.merge(b);
            }
        }
        if let (Some((mine, _)), Some((theirs, _))) = (&mut self.hop, &other.hop) {
            for (a, b) in mine.iter_mut().flatten().zip(theirs.iter().flatten()) {
                a.merge(b);
            }
        }
    }

    fn bucket_name(&self, b: usize) -> String {
        let e = &self.edges;
        if b == 0 {
            format!("size < {}", e[0])
        } else if b == e.len() {
            format!("size >= {}", e[b - 1])
        } else {
            format!("{} <= size < {}", e[b - 1], e[b])
        }
    }

    /// The table (see the module doc for the classes and the error bound).
    pub fn table(&self) -> LatencyTable {
        let mut t = LatencyTable::default();
        let mut row = |name: String, h: &LogHist, always: bool| {
            if h.count == 0 && !always {
                return;
            }
            t.class.push(name);
            t.count.push(h.count);
            t.min_ps.push(h.min);
            t.p50_ps.push(h.quantile(0.50).unwrap_or(0));
            t.p95_ps.push(h.quantile(0.95).unwrap_or(0));
            t.p99_ps.push(h.quantile(0.99).unwrap_or(0));
            t.max_ps.push(h.max);
            t.mean_ps.push(h.mean().unwrap_or(f64::NAN));
        };
        row("all".into(), &self.all, true);
        for (incast, tag) in [(true, "incast"), (false, "non-incast")] {
            let by = &self.by[incast as usize];
            row(tag.into(), &by[0], false);
            for (b, h) in by.iter().enumerate().skip(1) {
                row(format!("{tag}, {}", self.bucket_name(b - 1)), h, false);
            }
        }
        if let Some((h, _)) = &self.hop {
            for class in HopClass::ALL {
                for tag in [1, 0, 2] {
                    row(format!("queueing at {}, {}", class.name(), HOP_TAGS[tag]), &h[class as usize][tag], false);
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn buckets_are_contiguous_and_within_the_error_bound() {
        let mut prev_hi = None;
        for i in 0..LogHist::index(u64::MAX) + 1 {
            let (lo, hi) = LogHist::bounds(i);
            if let Some(p) = prev_hi {
                assert_eq!(lo, p + 1, "bucket {i} does not follow on");
            }
            assert_eq!(LogHist::index(lo), i);
            assert_eq!(LogHist::index(hi), i);
            // a reported midpoint is within REL_ERROR of any value in the bucket
            let mid = lo + (hi - lo) / 2;
            assert!((hi - mid) as f64 <= REL_ERROR * lo.max(1) as f64 + 0.5, "bucket {i} [{lo}, {hi}] too wide");
            prev_hi = Some(hi);
        }
        assert_eq!(prev_hi, Some(u64::MAX));
    }

    #[test]
    fn quantiles_are_within_the_bound_of_the_exact_nearest_rank() {
        let mut rng = Rng::stream(7, 0, 0);
        let mut h = LogHist::default();
        let mut v: Vec<u64> = (0..20_000).map(|_| (rng.uniform().powi(3) * 2e9) as u64 + 1).collect();
        for &x in &v {
            h.add(x);
        }
        v.sort_unstable();
        for q in [0.01, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let exact = v[((q * v.len() as f64).ceil() as usize).max(1) - 1];
            let got = h.quantile(q).unwrap();
            assert!((got as f64 - exact as f64).abs() <= REL_ERROR * exact as f64, "q {q}: {got} vs exact {exact}");
        }
        assert_eq!((h.min, h.max, h.count), (v[0], *v.last().unwrap(), v.len() as u64));
        assert_eq!(h.sum, v.iter().map(|&x| x as u128).sum::<u128>());
    }

    #[test]
    fn merged_histograms_are_the_histogram_of_all_samples() {
        let (mut a, mut b, mut whole) = (LogHist::default(), LogHist::default(), LogHist::default());
        for v in (1..5000u64).map(|i| i * i * 37 % 1_000_003) {
            if v % 3 == 0 { &mut a } else { &mut b }.add(v);
            whole.add(v);
        }
        let mut empty = LogHist::default();
        empty.merge(&a);
        empty.merge(&b);
        assert_eq!(empty, whole);
        a.merge(&b);
        assert_eq!(a, whole);
        assert_eq!(a.quantile(0.99), whole.quantile(0.99));
    }

    #[test]
    fn a_single_value_is_reported_exactly() {
        let mut h = LogHist::default();
        for _ in 0..5 {
            h.add(123_456_789);
        }
        assert_eq!(h.quantile(0.5), Some(123_456_789));
        assert_eq!(h.quantile(0.99), Some(123_456_789));
    }

    #[test]
    fn classes_split_by_incast_tag_and_size_bucket() {
        let mut r = LatencyRec::new(&LatencyConfig { size_edges: vec![1000, 100_000], ..Default::default() });
        r.record(Time(0), Time(10), true, 500);
        r.record(Time(0), Time(20), false, 1000);
        r.record(Time(0), Time(30), false, 5_000_000);
        let t = r.table();
        let rows: Vec<(&str, u64, u64)> = t.class.iter().zip(&t.count).zip(&t.max_ps).map(|((c, &n), &m)| (c.as_str(), n, m)).collect();
        assert_eq!(
            rows,
            vec![
                ("all", 3, 30),
                ("incast", 1, 10),
                ("incast, size < 1000", 1, 10),
                ("non-incast", 2, 30),
                ("non-incast, 1000 <= size < 100000", 1, 20),
                ("non-incast, size >= 100000", 1, 30),
            ]
        );
    }

    #[test]
    fn the_window_selects_packets_by_send_time() {
        let mut r = LatencyRec::new(&LatencyConfig { sent_from: Time(100), sent_until: Some(Time(200)), ..Default::default() });
        for (sent, now) in [(99, 150), (100, 500), (199, 210), (200, 205)] {
            r.record(Time(sent), Time(now), false, 1);
        }
        let t = r.table();
        assert_eq!((t.count[0], t.min_ps[0], t.max_ps[0]), (2, 11, 400));
        assert!(LatencyConfig { sent_from: Time(5), sent_until: Some(Time(5)), ..Default::default() }.check().unwrap_err().contains("sent_until"));
    }

    #[test]
    fn per_hop_rows_are_by_hop_class_and_tag() {
        let mut r = LatencyRec::new(&LatencyConfig { per_hop: true, sent_until: Some(Time(1_000)), ..Default::default() });
        // slot 3 waits 150 ps at a ToR uplink, then none at a core; the slot is reused by the hop
        r.queued(3, Time(100));
        r.left(3, Time(250), HopClass::TorUp, Time(0), 0);
        r.queued(3, Time(300));
        r.left(3, Time(300), HopClass::AggDown, Time(0), 0);
        r.queued(5, Time(0));
        r.left(5, Time(40), HopClass::TorUp, Time(0), 2);
        r.queued(6, Time(0));
        r.left(6, Time(70), HopClass::TorDown, Time(0), 1);
        // sent after the window: not counted
        r.queued(7, Time(2_000));
        r.left(7, Time(2_500), HopClass::TorUp, Time(1_000), 0);
        let t = r.table();
        let rows: Vec<(&str, u64, u64)> = t.class.iter().zip(&t.count).zip(&t.max_ps).map(|((c, &n), &m)| (c.as_str(), n, m)).collect();
        assert_eq!(
            rows,
            vec![
                ("all", 0, 0),
                ("queueing at tor-down, incast", 1, 70),
                ("queueing at tor-up, non-incast", 1, 150),
                ("queueing at tor-up, non-incast to an incast destination", 1, 40),
                ("queueing at agg-down, non-incast", 1, 0),
            ]
        );
        assert!(!LatencyRec::new(&LatencyConfig::default()).per_hop());
    }

    #[test]
    fn edges_must_rise() {
        assert!(LatencyConfig { size_edges: vec![10, 10], ..Default::default() }.check().unwrap_err().contains("record.latency.size_edges"));
        assert!(LatencyConfig { size_edges: vec![0], ..Default::default() }.check().is_err());
        assert!(LatencyConfig { size_edges: vec![1, 2], ..Default::default() }.check().is_ok());
    }
}
