//! Three recorders for users of the HPCC ns-3 simulator (alibaba-edu/High-Precision-Congestion-
//! Control, whose outputs `hopsim export-hpcc` writes again):
//!
//! - **PFC frames received** ([`PfcRxLog`], always kept): its `pfc.txt` has one line per PFC frame
//!   a device *receives* (`get_pfc` in `scratch/third.cc`, fired from `QbbNetDevice::Receive`),
//!   while `RunStats::pauses` logs frames where they are sent. Filled in `net::control`.
//! - **Queue-length histograms** ([`QlenMon`], `record.qlen_monitor`): its `qlen.txt`
//!   (`monitor_buffer` in `third.cc`): every `interval` from `start`, each switch port's egress
//!   bytes (summed over its queues) add one to the bucket `bytes / 1000` of that port's histogram;
//!   at each sample whose absolute time is a multiple of `dump_interval` the cumulative histograms
//!   are written out.
//! - **Packet trace** ([`PacketTrace`], `record.trace`): enqueue, dequeue, drop and ECN-mark events
//!   at switches of the data packets of chosen flows or at chosen ports, the columns of its
//!   `mix.tr` that `trace_reader` prints (`TraceFormat` in `trace-format.h`).
//!
//! Cost. While neither the monitor nor the trace is on, and once the monitor's last instant has
//! passed, the switch's packet path pays one comparison per enqueue, dequeue and drop
//! (`Recorders::wants`). The monitor schedules no events: a
//! 100 ms window at 100 ns would be a million samples of every port. Instead each port keeps its
//! egress total and the time since which it has held it; when the total changes at time t, the
//! grid instants in `[since, t)` are counted in one division and added to the old value's bucket.
//! Dump instants are settled lazily too: the first change after one (or the end of the run)
//! flushes every port up to it first. So the histograms are exactly those of a sampler that looks
//! at every grid instant, at the cost of a few integer operations per queue change (a unit test
//! checks them against such a sampler).
//!
//! Equal times. In ns-3 a sample at time t is an event scheduled one interval earlier, so it comes
//! after the packet events at t that were scheduled before that, and before those scheduled later.
//! Here a sample at t sees the state after *every* event at t (a change at exactly t counts from
//! t on). The two differ only for a packet event landing exactly on a grid instant that was
//! scheduled less than one interval before it; with picosecond times that is rare.
//!
//! End of the run. The samples go up to the run's end. Where `end` is set and every flow finished
//! before it, they go on to `end` (at most to `duration`) with the last state, as the HPCC
//! simulator, which runs to its stop time, would see an idle network. Samples taken after the last
//! dump instant are written out as a last, partial dump at the time of the last sample (not a
//! multiple of `dump_interval`; the HPCC simulator would not write it).

use crate::time::Time;
use serde::{Deserialize, Serialize};

/// `record.qlen_monitor`: the HPCC simulator's QLEN_MON_START, QLEN_MON_END and its
/// `qlen_mon_interval` and `qlen_dump_interval`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QlenMonitorConfig {
    /// Run time of the first sample (the HPCC simulator's QLEN_MON_START less `time_offset`).
    pub start: Time,
    /// Run time of the end of sampling: after a sample taken before `end` comes another, so the
    /// last is the first grid instant at or after `end` (the HPCC simulator's QLEN_MON_END less
    /// `time_offset`). `None`: until the run ends.
    pub end: Option<Time>,
    /// Time between samples (HPCC: 100 ns).
    pub interval: Time,
    /// Histograms are written at samples whose absolute time (run time + `time_offset`) is a
    /// multiple of this (HPCC: 100 ms).
    pub dump_interval: Time,
    /// What to add to run times to get the HPCC simulator's times: the flow file's time offset
    /// (its flows start at 2 s, hopsim's run starts at 0).
    pub time_offset: Time,
}

impl Default for QlenMonitorConfig {
    fn default() -> Self {
        QlenMonitorConfig {
            start: Time::ZERO,
            end: None,
            interval: Time::from_ns(100),
            dump_interval: Time::from_ms(100),
            time_offset: Time::ZERO,
        }
    }
}

/// `record.trace`: the flows (ids) and the switch ports (node, local port) whose data packets'
/// switch events are recorded; a packet is recorded if its flow or its egress port is listed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    pub flows: Vec<u32>,
    pub ports: Vec<(u32, u16)>,
}

/// Every PFC frame received: time, receiving node, whether it is a switch (else a host), the local
/// port it arrived on, its priority, and whether it pauses (quanta > 0) or resumes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PfcRxLog {
    pub time_ps: Vec<u64>,
    pub node: Vec<u32>,
    pub is_switch: Vec<bool>,
    pub port: Vec<u16>,
    pub prio: Vec<u8>,
    pub pause: Vec<bool>,
}

impl PfcRxLog {
    pub fn push(&mut self, time: Time, node: u32, is_switch: bool, port: u16, prio: u8, pause: bool) {
        self.time_ps.push(time.0);
        self.node.push(node);
        self.is_switch.push(is_switch);
        self.port.push(port);
        self.prio.push(prio);
        self.pause.push(pause);
    }
}

/// Queue-length histograms, long format: at each dump, for every switch port (node, local port)
/// in node then port order, one row per non-empty bucket: `count` samples saw between `kb` and
/// `kb + 1` thousand bytes. Cumulative from the first sample. `dump_time_ps` is absolute (run
/// time + `time_offset`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct QlenHist {
    pub dump_time_ps: Vec<u64>,
    pub node: Vec<u32>,
    pub port: Vec<u16>,
    pub kb: Vec<u32>,
    pub count: Vec<u64>,
}

/// Names of the packet trace's event codes: the HPCC simulator's `Event` (trace-format.h:
/// Recv 0, Enqu 1, Dequ 2, Drop 3; `Recv` is not recorded here), then ECN marks.
pub const TRACE_EVENTS: [&str; 5] = ["recv", "enqueue", "dequeue", "drop", "ecn"];
pub const EV_ENQUEUE: u8 = 1;
pub const EV_DEQUEUE: u8 = 2;
pub const EV_DROP: u8 = 3;
pub const EV_ECN: u8 = 4;

/// Switch events of traced data packets: time, switch, egress port (local), queue, event code
/// ([`TRACE_EVENTS`]), flow, byte offset of the payload, wire size, and the bytes of that egress
/// queue after the event (the MMU's egress account, the HPCC trace's `qlen`). An ECN mark follows
/// the dequeue it happened at, with the same queue length.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PacketTrace {
    pub time_ps: Vec<u64>,
    pub node: Vec<u32>,
    pub port: Vec<u16>,
    pub queue: Vec<u16>,
    pub event: Vec<u8>,
    pub flow: Vec<u32>,
    pub seq: Vec<u64>,
    pub size: Vec<u32>,
    pub qlen_bytes: Vec<u64>,
}

/// The recorders' state inside a run.
#[derive(Default)]
pub struct Recorders {
    /// The switch's packet path calls `record_packet` before this run time (ps; 0: never): to
    /// the end of the run while the trace or the per-hop latency is on, else to the monitor's
    /// last instant. Why the monitor's end: after it a queue change counts nothing (the dumps
    /// still due are written by `finish` with the same rows), and an imported HPCC config often
    /// samples a short window (the standard benchmark's, one instant), where the call and the
    /// monitor's bookkeeping on every enqueue and dequeue were 11% of `hopsim run`'s
    /// instructions (callgrind) for nothing.
    pub until: u64,
    pub qlen: Option<QlenMon>,
    pub trace: Option<Tracer>,
    /// Per-packet latency by flow class (`record.latency`, `stats::latency`): the host's receive
    /// path tests this `Option` once per data packet.
    pub latency: Option<Box<crate::stats::latency::LatencyRec>>,
    /// With `record.latency.per_hop`: by node, whether some incast-tagged flow goes to it.
    pub incast_dst: Vec<bool>,
}

impl Recorders {
    /// Whether a switch's enqueue, dequeue or drop at `now` goes to `record_packet`.
    #[inline(always)]
    pub fn wants(&self, now: Time) -> bool {
        now.0 < self.until
    }
}

/// Which packets the trace records: by flow id and by global egress port id.
pub struct Tracer {
    flows: Vec<bool>,
    ports: Vec<bool>,
}

impl Tracer {
    /// A trace of the flows and ports whose entries are set.
    pub(crate) fn new(flows: Vec<bool>, ports: Vec<bool>) -> Tracer {
        Tracer { flows, ports }
    }

    #[inline]
    pub(crate) fn wants(&self, flow: u32, port: u32) -> bool {
        self.flows.get(flow as usize).copied().unwrap_or(false) || self.ports[port as usize]
    }
}

/// One monitored port: its value since `since`, and its histogram (samples per KB bucket).
#[derive(Clone, Debug, Default)]
struct MonPort {
    value: u64,
    /// Grid instants before this are counted.
    since: u64,
    hist: Vec<u64>,
}

/// The sample instants: `first + k * step` for `k < count` (`u64::MAX`: no end).
#[derive(Clone, Copy, Debug)]
struct Grid {
    first: u64,
    step: u64,
    count: u64,
}

impl Grid {
    /// Time of instant `k`, or `u64::MAX` if there is none.
    fn instant(self, k: u64) -> u64 {
        if k >= self.count {
            return u64::MAX;
        }
        (self.first as u128 + k as u128 * self.step as u128).try_into().unwrap_or(u64::MAX)
    }

    /// Instants before `x`.
    #[inline]
    fn before(self, x: u64) -> u64 {
        if x <= self.first {
            0
        } else {
            (x - self.first).div_ceil(self.step).min(self.count)
        }
    }
}

/// The lazy queue-length sampler (see the module doc). Times are run times in picoseconds.
pub struct QlenMon {
    grid: Grid,
    offset: u64,
    /// Next dump instant not yet written (`u64::MAX`: none left), and the grid steps between dump
    /// instants.
    next_dump: u64,
    dump_steps: u64,
    /// Instants before this are in a written dump.
    dumped: u64,
    /// Slots by caller's index (a global port id); `order` lists (slot, node, local port) in
    /// dump order.
    ports: Vec<MonPort>,
    order: Vec<(u32, u32, u16)>,
    /// Time of the last grid instant (`u64::MAX`: no end). A change after it can count nothing:
    /// the port's old value stays to be counted up to that instant (by a dump or `finish`), so
    /// `set` returns at once. Why: an imported HPCC config often samples a short window
    /// (QLEN_MON_END = QLEN_MON_START in the standard benchmark's), and the bookkeeping after it
    /// cost two divisions and a cache line per queue change for nothing.
    last_instant: u64,
}

impl QlenMon {
    pub fn new(cfg: &QlenMonitorConfig, slots: usize, order: Vec<(u32, u32, u16)>) -> QlenMon {
        let (first, step) = (cfg.start.0, cfg.interval.0.max(1));
        // the sampler goes on while a sample is before `end`: the last instant is the first at or
        // after it
        let count = match cfg.end {
            None => u64::MAX,
            Some(e) if e.0 <= first => 1,
            Some(e) => (e.0 - first).div_ceil(step) + 1,
        };
        let mut m = QlenMon {
            grid: Grid { first, step, count },
            offset: cfg.time_offset.0,
            next_dump: u64::MAX,
            dump_steps: 0,
            dumped: 0,
            ports: vec![MonPort::default(); slots],
            order,
            last_instant: u64::MAX,
        };
        m.last_instant = m.last();
        if let Some((k, period)) = dump_grid(first as u128 + m.offset as u128, step, cfg.dump_interval.0.max(1)) {
            m.dump_steps = period;
            m.next_dump = m.grid.instant(k);
        }
        m
    }

    /// The last grid instant (`u64::MAX` when sampling has no end).
    pub fn last(&self) -> u64 {
        let g = self.grid;
        if g.count == u64::MAX {
            u64::MAX
        } else {
            g.instant(g.count - 1)
        }
    }

    /// Slot `i`'s value becomes `v` at time `t` (times never go back).
    #[inline]
    pub fn set(&mut self, t: u64, i: usize, v: u64, out: &mut QlenHist) {
        if t > self.next_dump {
            self.dumps_before(t, out);
        }
        if t > self.last_instant {
            return;
        }
        let g = self.grid;
        let p = &mut self.ports[i];
        let c = g.before(t) - g.before(p.since);
        if c > 0 {
            add(&mut p.hist, p.value, c);
        }
        p.value = v;
        p.since = t;
    }

    /// Write every dump whose instant is before `t`.
    #[inline(never)]
    fn dumps_before(&mut self, t: u64, out: &mut QlenHist) {
        while self.next_dump < t {
            let d = self.next_dump;
            self.flush(d + 1);
            self.write(d, out);
            self.dumped = self.grid.before(d + 1);
            self.next_dump = self.grid.instant(self.dumped - 1 + self.dump_steps);
        }
    }

    /// Count every slot's instants before `x`.
    fn flush(&mut self, x: u64) {
        let g = self.grid;
        let n = g.before(x);
        for &(i, _, _) in &self.order {
            let p = &mut self.ports[i as usize];
            if p.since < x {
                let c = n - g.before(p.since);
                if c > 0 {
                    add(&mut p.hist, p.value, c);
                }
                p.since = x;
            }
        }
    }

    fn write(&self, d: u64, out: &mut QlenHist) {
        let time = d.saturating_add(self.offset);
        for &(i, node, local) in &self.order {
            for (kb, &c) in self.ports[i as usize].hist.iter().enumerate() {
                if c > 0 {
                    out.dump_time_ps.push(time);
                    out.node.push(node);
                    out.port.push(local);
                    out.kb.push(kb as u32);
                    out.count.push(c);
                }
            }
        }
    }

    /// The run ended: count the instants up to `horizon` (inclusive) with every slot's last
    /// value, write the dumps up to it, and then, if samples were taken after the last dump, a
    /// last dump at the last sample's time.
    pub fn finish(&mut self, horizon: u64, out: &mut QlenHist) {
        let x = horizon.saturating_add(1);
        self.dumps_before(x, out);
        self.flush(x);
        let n = self.grid.before(x);
        if n > self.dumped {
            self.write(self.grid.instant(n - 1), out);
            self.dumped = n;
        }
    }
}

#[inline]
fn add(hist: &mut Vec<u64>, value: u64, c: u64) {
    let kb = (value / 1000) as usize;
    if hist.len() <= kb {
        hist.resize(kb + 1, 0);
    }
    hist[kb] += c;
}

/// The grid instants `a + k * step` (k >= 0) that are multiples of `d`: the first k and the
/// period in k, or `None` if there are none (solving `k * step = -a (mod d)`).
fn dump_grid(a: u128, step: u64, d: u64) -> Option<(u64, u64)> {
    let (s, d) = (step as u128 % d as u128, d as u128);
    let b = (d - a % d) % d;
    let g = gcd(s, d);
    if !b.is_multiple_of(g) {
        return None;
    }
    let m = d / g;
    let k = if m == 1 { 0 } else { (b / g) % m * inverse(s / g % m, m) % m };
    Some((k.try_into().ok()?, m.try_into().unwrap_or(u64::MAX)))
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Inverse of `a` modulo `m` (they are coprime, m > 1).
fn inverse(a: u128, m: u128) -> u128 {
    let (mut r0, mut r1) = (m as i128, a as i128);
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    t0.rem_euclid(m as i128) as u128
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn cfg(start: u64, end: Option<u64>, interval: u64, dump: u64, offset: u64) -> QlenMonitorConfig {
        QlenMonitorConfig { start: Time(start), end: end.map(Time), interval: Time(interval), dump_interval: Time(dump), time_offset: Time(offset) }
    }

    /// The HPCC simulator's `monitor_buffer`, literally: a sample at every grid instant up to
    /// `horizon`, seeing the value after every change at or before it; a dump at instants whose
    /// absolute time is a multiple of the dump interval; a last partial dump as `finish` writes.
    fn brute(c: &QlenMonitorConfig, nports: usize, changes: &[(u64, usize, u64)], horizon: u64) -> QlenHist {
        let mut out = QlenHist::default();
        let mut hist = vec![Vec::<u64>::new(); nports];
        let mut value = vec![0u64; nports];
        let mut next = 0;
        let mut t = c.start.0;
        let mut undumped = false;
        let write = |t: u64, hist: &Vec<Vec<u64>>, out: &mut QlenHist| {
            for (i, h) in hist.iter().enumerate() {
                for (kb, &n) in h.iter().enumerate() {
                    if n > 0 {
                        out.dump_time_ps.push(t + c.time_offset.0);
                        out.node.push(i as u32);
                        out.port.push(0);
                        out.kb.push(kb as u32);
                        out.count.push(n);
                    }
                }
            }
        };
        let mut last = None;
        while t <= horizon {
            while next < changes.len() && changes[next].0 <= t {
                value[changes[next].1] = changes[next].2;
                next += 1;
            }
            for i in 0..nports {
                add(&mut hist[i], value[i], 1);
            }
            last = Some(t);
            undumped = true;
            if (t + c.time_offset.0).is_multiple_of(c.dump_interval.0) {
                write(t, &hist, &mut out);
                undumped = false;
            }
            match c.end {
                Some(e) if t >= e.0 => break,
                _ => t += c.interval.0,
            }
        }
        if undumped {
            write(last.unwrap(), &hist, &mut out);
        }
        out
    }

    fn lazy(c: &QlenMonitorConfig, nports: usize, changes: &[(u64, usize, u64)], horizon: u64) -> QlenHist {
        let order = (0..nports).map(|i| (i as u32, i as u32, 0u16)).collect();
        let mut m = QlenMon::new(c, nports, order);
        let mut out = QlenHist::default();
        for &(t, i, v) in changes {
            m.set(t, i, v, &mut out);
        }
        m.finish(horizon, &mut out);
        out
    }

    #[test]
    fn lazy_counts_equal_a_sampler_at_every_instant_on_random_signals() {
        let mut rng = Rng::stream(7, 0, 0);
        for case in 0..400 {
            let interval = 1 + rng.below(20);
            // dump intervals that the grid meets every few samples, rarely, or never
            let dump = match case % 4 {
                0 => interval * (1 + rng.below(8)),
                1 => 1 + rng.below(60),
                2 => interval * 3 + 1,
                _ => 7 * (1 + rng.below(5)),
            };
            let start = rng.below(50);
            let end = if case % 5 == 0 { None } else { Some(start + rng.below(400)) };
            let offset = rng.below(3) * 13;
            let c = cfg(start, end, interval, dump, offset);
            let nports = 1 + rng.below(3) as usize;
            let mut changes = vec![];
            let mut t = 0;
            for _ in 0..rng.below(60) {
                // often on a grid instant, often several at one time
                t += match rng.below(4) {
                    0 => 0,
                    1 => interval - (t + interval - start % interval) % interval,
                    _ => rng.below(3 * interval),
                };
                changes.push((t, rng.below(nports as u64) as usize, rng.below(5000)));
            }
            let horizon = t + rng.below(300);
            let (b, l) = (brute(&c, nports, &changes, horizon), lazy(&c, nports, &changes, horizon));
            assert_eq!(l, b, "case {case}: {c:?} changes {changes:?} horizon {horizon}");
        }
    }

    #[test]
    fn hpcc_defaults_sample_every_100ns_and_dump_at_multiples_of_the_dump_interval() {
        // one port at 1500 B from 0.5 us to 1.2 us; samples from 0 to 10 ms with a 2 s offset and
        // a 5 ms dump interval
        let c = cfg(0, Some(10_000_000_000), 100_000, 5_000_000_000, 2_000_000_000_000);
        let mut m = QlenMon::new(&c, 1, vec![(0, 9, 2)]);
        assert_eq!(m.last(), 10_000_000_000);
        let mut out = QlenHist::default();
        m.set(500_000, 0, 1500, &mut out);
        m.set(1_200_000, 0, 0, &mut out);
        m.finish(10_000_000_000, &mut out);
        let rows = |t: u64| -> Vec<(u32, u64)> {
            (0..out.kb.len()).filter(|&i| out.dump_time_ps[i] == t).map(|i| (out.kb[i], out.count[i])).collect()
        };
        assert_eq!(rows(2_000_000_000_000), vec![(0, 1)], "a dump at the first sample (2 s absolute)");
        // samples at 0.5, 0.6, ..., 1.1 us see 1500 B
        assert_eq!(rows(2_005_000_000_000), vec![(0, 50_001 - 7), (1, 7)]);
        assert_eq!(rows(2_010_000_000_000), vec![(0, 100_001 - 7), (1, 7)]);
        assert_eq!(out.dump_time_ps.len(), 5, "no partial dump: the last sample was a dump instant");
        assert!(out.node.iter().all(|&n| n == 9) && out.port.iter().all(|&p| p == 2));
    }

    #[test]
    fn dump_grid_finds_every_multiple() {
        for a in 0..40u128 {
            for step in 1..15u64 {
                for d in 1..30u64 {
                    let hits: Vec<u64> = (0..200u64).filter(|k| (a + (*k as u128) * step as u128).is_multiple_of(d as u128)).collect();
                    match dump_grid(a, step, d) {
                        None => assert!(hits.is_empty(), "{a} {step} {d}"),
                        Some((k, p)) => {
                            let want: Vec<u64> = (0..200u64).filter(|x| *x >= k && (x - k) % p == 0).collect();
                            assert_eq!(hits, want, "{a} {step} {d}");
                        }
                    }
                }
            }
        }
    }
}
