//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3.2-3.3,
//! Algorithm 1): window and rate from in-band telemetry.
//!
//! Switches stamp an INT record per hop at dequeue (`packet::int`); the receiver echoes the records
//! in its ACK; on each ACK the sender runs Algorithm 1:
//! ```text
//! MeasureInflight(ack):                                     (lines 1-12)
//!   for each link i:  txRate = (ack.L[i].txBytes - L[i].txBytes) / (ack.L[i].ts - L[i].ts)
//!                     u' = min(ack.L[i].qlen, L[i].qlen) / (ack.L[i].B x T) + txRate / ack.L[i].B
//!                     keep the largest u' and its tau = ack.L[i].ts - L[i].ts
//!   tau = min(tau, T);  U = (1 - tau/T) x U + tau/T x u'
//! ComputeWind(U, updateWc):                                 (lines 13-24)
//!   if U >= eta or incStage >= maxStage:  W = Wc / (U/eta) + W_AI;  if updateWc: incStage = 0, Wc = W
//!   else:                                 W = Wc + W_AI;            if updateWc: incStage++,  Wc = W
//! NewAck(ack):                                              (lines 25-34)
//!   if ack.seq > lastUpdateSeq:  W = ComputeWind(MeasureInflight(ack), True); lastUpdateSeq = snd_nxt
//!   else:                        W = ComputeWind(MeasureInflight(ack), False)
//!   R = W / T;  L = ack.L
//! ```
//! `T` is the base RTT and `W_init = B_nic x T`. We keep the window as a rate, `R = W/T`, the way
//! the HPCC ns-3 simulator does (alibaba-edu/High-Precision-Congestion-Control, `rdma-hw.cc`
//! `UpdateRateHp`, single-rate mode `MULTI_RATE 0`), and give the host both: pacing at `R` and a
//! window `W = R x T` (the simulator's `VAR_WIN 1`: `win = m_win x rate / max_rate`).
//!
//! Corner cases as in that simulator:
//! - the first ACK only stores the records and `lastUpdateSeq = snd_nxt`; `U` starts at 1;
//! - `W_AI` is a rate step: `W_AI = R_AI x T` with `R_AI = 10 Mb/s x B_nic / 25 Gb/s` (`run.py`:
//!   `ai = 10 * bw / 25`), or `rai` as it stands (the simulator's `RATE_AI`, unscaled);
//! - the rate is clamped to `[min_rate, B_nic]`;
//! - fast reaction (the `else` branch, `FAST_REACT 1`) changes the rate but not `Wc`/`incStage`;
//!   both branches update `U` and the stored records;
//! - a full update (an ACK past `lastUpdateSeq`) moves `lastUpdateSeq` to `snd_nxt` even when the
//!   records could not be used;
//! - a NACK runs the same update with `snd_nxt` rewound to the NACKed byte (`ReceiveAck` calls
//!   `RecoverQueue` before `HandleAckHp`); it needs the echoed records, so a NACK without INT
//!   changes nothing.
//!
//! Where we differ from the simulator, on purpose: a hop whose two records have the same timestamp
//! is skipped (the simulator would divide by zero), and records of a path whose hop count changed
//! are stored and not used. Our `U` and `R` are computed in a different floating-point order from
//! the simulator's (`(1 - tau/T) U + tau/T u'` and `floor(Wc/c + W_AI)`, where the simulator writes
//! `(U (T - tau) + u' tau) / T` and `DataRate(Wc/c) + W_AI`). That changes the last bits of `U`,
//! and very rarely the rate by 1 bit/s. INT timestamps are picoseconds here, nanoseconds there.
//!
//! **The simulator's other options**, each off by default (the behaviour above):
//! - `multi_rate` (`MULTI_RATE 1`, the `RdmaHw` default, though its configs set 0): every hop keeps
//!   its own `U`, reference rate and `incStage`, updated from that hop's record alone (`tau` capped
//!   at `T`). The flow sends at the smallest of the hops' new rates. A hop left out by
//!   `sample_feedback` offers its reference rate instead;
//! - `sample_feedback` (`SAMPLE_FEEDBACK 1`): on a fast-reaction ACK, a hop reporting an empty
//!   queue is left out: its record is neither used nor stored. An ACK with every hop left out
//!   changes nothing;
//! - `int_multi` (`INT_MULTI`): the simulator's switches write `qLen` in units of `80 x int_multi`
//!   bytes and `txBytes` in units of `128 x int_multi` bytes, rounding down (`IntHop::Set`). We
//!   round the echoed records down the same way when we read them (0: full precision). We do not
//!   model the 17-, 20- and 24-bit wrap of those fields;
//! - `window` (`HAS_WIN 1`: the flow's `m_win`, with `GLOBAL_T 1` the network's largest BDP). The
//!   simulator writes the queue term as `qLen x B_nic / (B x m_win)` instead of
//!   `qLen / (B x T)`, and its window is `m_win x R / B_nic`. The two agree when
//!   `m_win = B_nic x T`. The simulator computes `maxBdp` with integer floors and takes
//!   `maxRtt` for `T` (`third.cc`). Setting `base_rtt` to `maxRtt` and `window` to `maxBdp`
//!   gives its numbers. Unset, the window is `R x T` and the queue term divides by `B x T`.
//!
//! INT header bytes count on the wire (`IntConfig`, 42 B per data packet and per ACK by default).
//!
//! Defaults:
//!
//! | field | default | source |
//! |---|---|---|
//! | `eta` | 0.95 | HPCC §3.3 (`U_TARGET 0.95`, `TargetUtil`) |
//! | `max_stage` | 5 | HPCC §3.3 (maxStage = 5); BFC §6 uses the same |
//! | `rai_at_25g` | 10 Mb/s | simulator `run.py` `ai = 10 * bw / 25`, scaled with line rate |
//! | `rai` | none (scale `rai_at_25g`) | simulator `RATE_AI`, absolute |
//! | `fast_react` | true | simulator `FAST_REACT 1` for HPCC |
//! | `min_rate` | 100 Mb/s | simulator `RdmaHw` `MinRate` default (as our DCQCN) |
//! | `base_rtt` | the flow's unloaded RTT | HPCC §3.2 `T`; the simulator's `GLOBAL_T 1` uses the network's largest instead, which `base_rtt` can set |
//! | `window` | none (`B_nic x T`) | simulator `HAS_WIN 1` with `GLOBAL_T 1`: `maxBdp` |
//! | `multi_rate` | false | simulator configs `MULTI_RATE 0` |
//! | `sample_feedback` | false | simulator `SAMPLE_FEEDBACK 0` |
//! | `int_multi` | 0 (full precision) | simulator `INT_MULTI` (`run.py`: `bw / 25`) |
//! | `int` | 8 B/hop, 2 B base, 5 hops | simulator `int-header.h` |

use super::{AckInfo, CongestionControl, FlowInfo};
use crate::packet::int::{IntConfig, IntHop, MAX_INT_HOPS};
use crate::time::{Rate, Time, PS_PER_S};
use serde::{Deserialize, Serialize};

/// The line rate at which `rai_at_25g` applies.
pub const REFERENCE_LINE_RATE: Rate = Rate::gbps(25);

/// Units of the simulator's INT fields for `int_multi = 1` (`IntHop::qlenUnit`, `byteUnit`).
pub const INT_QLEN_UNIT: u64 = 80;
pub const INT_BYTES_UNIT: u64 = 128;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilisation `eta`, in (0, 1].
    pub eta: f64,
    /// `maxStage`: additive steps before a multiplicative one.
    pub max_stage: u32,
    /// `W_AI` as a rate at 25 Gb/s (`W_AI = R_AI x T`), scaled with line rate.
    pub rai_at_25g: Rate,
    /// `W_AI` as an absolute rate (`RATE_AI`); replaces the scaled `rai_at_25g` when set.
    pub rai: Option<Rate>,
    /// React on every ACK, not only once per RTT.
    pub fast_react: bool,
    /// Floor of the rate (capped at the line rate).
    pub min_rate: Rate,
    /// `T`; `None` = the flow's unloaded RTT.
    pub base_rtt: Option<Time>,
    /// The simulator's `m_win`, bytes: the queue term's and the window's reference. `None` =
    /// `B_nic x T`.
    pub window: Option<u64>,
    /// A rate, `U` and stage per hop; the flow takes the smallest rate (`MULTI_RATE`).
    pub multi_rate: bool,
    /// Fast reaction ignores hops that report an empty queue (`SAMPLE_FEEDBACK`).
    pub sample_feedback: bool,
    /// Round `qLen` down to units of `80 x int_multi` bytes and `txBytes` to `128 x int_multi`
    /// (`INT_MULTI`); 0 = full precision.
    pub int_multi: u32,
    /// INT header size and hop count (a scenario's `int_header` table).
    #[serde(rename = "int_header")]
    pub int: IntConfig,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: 0.95,
            max_stage: 5,
            rai_at_25g: Rate::mbps(10),
            rai: None,
            fast_react: true,
            min_rate: Rate::mbps(100),
            base_rtt: None,
            window: None,
            multi_rate: false,
            sample_feedback: false,
            int_multi: 0,
            int: IntConfig::default(),
        }
    }
}

impl HpccConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.eta.is_finite() && self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("hpcc: eta must be in (0, 1], got {}", self.eta));
        }
        if self.base_rtt == Some(Time::ZERO) {
            return Err("hpcc: base_rtt must be positive".into());
        }
        if self.window == Some(0) {
            return Err("hpcc: window must be positive".into());
        }
        self.int.validate()
    }
}

/// One hop's state in `multi_rate` mode (the simulator's `hp.hopState[i]`).
#[derive(Clone, Copy, Debug)]
struct HopState {
    u: f64,
    /// Reference rate `Rc` of this hop (bit/s).
    rc: u64,
    inc_stage: u32,
}

/// HPCC sender state of one flow.
#[derive(Clone, Debug)]
pub struct Hpcc {
    line_rate: u64,
    min_rate: u64,
    rai: u64,
    t: Time,
    eta: f64,
    max_stage: u32,
    fast_react: bool,
    multi_rate: bool,
    sample_feedback: bool,
    /// INT units `(qLen, txBytes)` in bytes; `(0, 0)` = full precision.
    units: (u64, u64),
    win: Option<u64>,
    /// Current rate `R` (bit/s).
    rate: u64,
    /// Reference rate `Wc / T` (bit/s).
    rc: u64,
    inc_stage: u32,
    last_update_seq: Option<u64>,
    /// Normalised inflight bytes `U`.
    u: f64,
    prev: [IntHop; MAX_INT_HOPS],
    prev_n: usize,
    hops: [HopState; MAX_INT_HOPS],
    /// Full (per-RTT) and fast updates made, for tests.
    pub updates: (u32, u32),
}

impl Hpcc {
    pub fn new(cfg: &HpccConfig, info: &FlowInfo) -> Hpcc {
        let line = info.line_rate.0;
        let scaled = (cfg.rai_at_25g.0 as u128 * line as u128 / REFERENCE_LINE_RATE.0 as u128) as u64;
        let m = cfg.int_multi as u64;
        Hpcc {
            line_rate: line,
            min_rate: cfg.min_rate.0.min(line),
            rai: cfg.rai.map_or(scaled, |r| r.0),
            t: cfg.base_rtt.unwrap_or(info.base_rtt).max(Time(1)),
            eta: cfg.eta,
            max_stage: cfg.max_stage,
            fast_react: cfg.fast_react,
            multi_rate: cfg.multi_rate,
            sample_feedback: cfg.sample_feedback,
            units: (INT_QLEN_UNIT * m, INT_BYTES_UNIT * m),
            win: cfg.window,
            rate: line,
            rc: line,
            inc_stage: 0,
            last_update_seq: None,
            u: 1.0,
            prev: [IntHop::default(); MAX_INT_HOPS],
            prev_n: 0,
            hops: [HopState { u: 1.0, rc: line, inc_stage: 0 }; MAX_INT_HOPS],
            updates: (0, 0),
        }
    }

    /// `U`, the normalised inflight bytes of the most loaded hop (smoothed over `T`); 1 in
    /// `multi_rate` mode, which keeps one per hop.
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// The window: `W = R x T`, or `m_win x R / B_nic` when `window` is set; bytes, at least 1.
    pub fn window_bytes(&self) -> u64 {
        match self.win {
            None => Rate(self.rate).bytes_in(self.t).max(1),
            Some(w) => ((w as u128 * self.rate as u128 / self.line_rate.max(1) as u128) as u64).max(1),
        }
    }

    /// A record as the simulator's switch would have written it (`IntHop::Set`, `int_multi`).
    fn quantise(&self, h: &IntHop) -> IntHop {
        let (q, b) = self.units;
        IntHop { qlen: h.qlen / q * q, tx_bytes: h.tx_bytes / b * b, ..*h }
    }

    fn store(&mut self, hops: &[IntHop]) {
        let n = hops.len().min(MAX_INT_HOPS);
        self.prev[..n].copy_from_slice(&hops[..n]);
        self.prev_n = n;
    }

    /// `u'` of one hop from its record `h` and the previous one `p`, `dt` apart.
    fn hop_utilisation(&self, h: &IntHop, p: &IntHop, dt: u64) -> f64 {
        let b = h.rate.0 as f64;
        let tx_rate = h.tx_bytes.saturating_sub(p.tx_bytes) as f64 * 8.0 * PS_PER_S as f64 / dt as f64;
        let qlen = h.qlen.min(p.qlen) as f64;
        match self.win {
            None => qlen * 8.0 * PS_PER_S as f64 / (b * self.t.0 as f64) + tx_rate / b,
            // the simulator's expression, in its order
            Some(w) => tx_rate / b + qlen * self.line_rate as f64 / b / w as f64,
        }
    }

    /// `U`'s EWMA over `T` with a sample `tau` apart, `tau` capped at `T`.
    fn ewma(&self, old: f64, sample: f64, tau: u64) -> f64 {
        let t = self.t.0 as f64;
        let tau = tau.min(self.t.0) as f64;
        (1.0 - tau / t) * old + tau / t * sample
    }

    /// Algorithm 1 lines 1-12: updates `U` (or each hop's `U`) and the stored records. Returns the
    /// hops that took part as a bit set, or `None` when the records cannot be compared or every
    /// hop was left out (`sample_feedback`).
    fn measure_inflight(&mut self, hops: &[IntHop], fast: bool) -> Option<u32> {
        if hops.len() != self.prev_n {
            self.store(hops);
            return None;
        }
        let mut best = 0.0f64;
        let mut tau = 0u64;
        let mut updated = 0u32;
        for (i, h) in hops.iter().enumerate() {
            if self.sample_feedback && fast && h.qlen == 0 {
                continue;
            }
            updated |= 1 << i;
            let p = self.prev[i];
            let dt = h.ts.0.saturating_sub(p.ts.0);
            if dt == 0 || h.rate.0 == 0 {
                continue;
            }
            let u = self.hop_utilisation(h, &p, dt);
            if self.multi_rate {
                self.hops[i].u = self.ewma(self.hops[i].u, u, dt);
            } else if u > best {
                best = u;
                tau = dt;
            }
            self.prev[i] = *h;
        }
        if updated == 0 {
            return None;
        }
        if !self.multi_rate {
            self.u = self.ewma(self.u, best, tau);
        }
        Some(updated)
    }

    /// Algorithm 1 lines 13-24 on rates (`W/T`): the new rate and stage from reference rate `rc`,
    /// stage `inc_stage` and utilisation `u`.
    fn step(&self, rc: u64, inc_stage: u32, u: f64) -> (u64, u32) {
        let c = u / self.eta;
        let (new, stage) = if c >= 1.0 || inc_stage >= self.max_stage {
            let r = if c > 0.0 { rc as f64 / c } else { f64::INFINITY };
            (r + self.rai as f64, 0)
        } else {
            (rc as f64 + self.rai as f64, inc_stage + 1)
        };
        let new = if new >= self.line_rate as f64 { self.line_rate } else { (new as u64).max(self.min_rate) };
        (new, stage)
    }

    /// One rate from the flow's `U`.
    fn compute_rate(&mut self, update_wc: bool) {
        let (new, stage) = self.step(self.rc, self.inc_stage, self.u);
        self.rate = new;
        if update_wc {
            self.rc = new;
            self.inc_stage = stage;
        }
    }

    /// `multi_rate`: each hop's own step; the flow takes the smallest rate, counting a left-out
    /// hop at its reference rate.
    fn compute_rate_per_hop(&mut self, n: usize, updated: u32, update_wc: bool) {
        let mut rate = self.line_rate;
        let mut next = [(0u64, 0u32); MAX_INT_HOPS];
        for (i, h) in self.hops[..n].iter().enumerate() {
            if updated & (1 << i) != 0 {
                next[i] = self.step(h.rc, h.inc_stage, h.u);
                rate = rate.min(next[i].0);
            } else {
                rate = rate.min(h.rc);
            }
        }
        self.rate = rate;
        if update_wc {
            self.rc = rate;
            for (i, h) in self.hops[..n].iter_mut().enumerate() {
                if updated & (1 << i) != 0 {
                    (h.rc, h.inc_stage) = next[i];
                }
            }
        }
    }
}

impl CongestionControl for Hpcc {
    fn on_ack(&mut self, _now: Time, ack: &AckInfo) {
        if ack.int.is_empty() {
            return;
        }
        let mut buf = [IntHop::default(); MAX_INT_HOPS];
        let hops = if self.units.0 == 0 {
            ack.int
        } else {
            let n = ack.int.len().min(MAX_INT_HOPS);
            for (b, h) in buf.iter_mut().zip(ack.int) {
                *b = self.quantise(h);
            }
            &buf[..n]
        };
        let Some(last) = self.last_update_seq else {
            self.store(hops);
            self.last_update_seq = Some(ack.snd_nxt);
            return;
        };
        let full = ack.ack_seq > last;
        if !full && !self.fast_react {
            return;
        }
        if let Some(updated) = self.measure_inflight(hops, !full) {
            if self.multi_rate {
                self.compute_rate_per_hop(hops.len(), updated, full);
            } else {
                self.compute_rate(full);
            }
            if full {
                self.updates.0 += 1;
            } else {
                self.updates.1 += 1;
            }
        }
        if full {
            self.last_update_seq = Some(ack.snd_nxt.max(last));
        }
    }
    fn on_nack(&mut self, now: Time, ack: &AckInfo) {
        self.on_ack(now, &ack.after_go_back_n());
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        Some(self.window_bytes())
    }
    #[inline]
    fn rate(&self) -> Rate {
        Rate(self.rate)
    }
}

impl crate::registry::Declared for HpccConfig {
    const NAME: &'static str = "hpcc";
    const ABOUT: &'static str = "HPCC (Li et al., SIGCOMM 2019, §3.2-3.3, Algorithm 1)";
}

impl super::registry::Algorithm for HpccConfig {
    fn validate(&self) -> Result<(), String> {
        HpccConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::Hpcc(Box::new(Hpcc::new(self, info)))
    }
    /// INT headers on data and on the ACKs that echo them.
    fn transport_needs(&self) -> super::TransportNeeds {
        let b = self.int.header_bytes();
        super::TransportNeeds { data_header: b, ack_header: b, cnp: false, int: true }
    }
    /// INT stamped at every switch egress (§3.2).
    fn aqm(&self) -> crate::aqm::AqmConfig {
        crate::aqm::AqmConfig { ein: None, int_max_hops: self.int.max_hops }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Rate = Rate::gbps(100);

    fn hpcc() -> Hpcc {
        // T = 10 us: W_init = 125 KB
        Hpcc::new(&HpccConfig::default(), &FlowInfo { line_rate: B, base_rtt: Time::from_us(10), mtu: 1000 })
    }

    /// A one-hop record at time `ts_ns` for a port that has sent `tx` bytes and holds `q`.
    fn rec(ts_ns: u64, tx: u64, q: u64) -> [IntHop; 1] {
        [IntHop { ts: Time::from_ns(ts_ns), tx_bytes: tx, qlen: q, rate: B }]
    }

    fn ack<'a>(seq: u64, snd_nxt: u64, int: &'a [IntHop]) -> AckInfo<'a> {
        AckInfo { ack_seq: seq, snd_nxt, int, ..Default::default() }
    }

    #[test]
    fn defaults_follow_the_paper_and_simulator() {
        let c = HpccConfig::default();
        assert_eq!((c.eta, c.max_stage, c.fast_react), (0.95, 5, true));
        assert_eq!(c.rai_at_25g, Rate::mbps(10));
        assert_eq!(c.int.header_bytes(), 42);
        assert!(c.validate().is_ok());
        assert!(HpccConfig { eta: 0.0, ..c }.validate().is_err());
        let cc = hpcc();
        assert_eq!(cc.rai, 40_000_000);
        assert_eq!(cc.rate(), B);
        assert_eq!(cc.window(), Some(125_000));
        assert_eq!(cc.utilisation(), 1.0);
    }

    #[test]
    fn over_utilised_link_cuts_to_eta() {
        // The hop sends at line rate with a standing queue of one BDP: U -> 2, W -> Wc/(U/eta).
        let mut cc = hpcc();
        let bdp = 125_000;
        let step_ns = 10_000; // T: the EWMA takes the whole new sample
        let mut tx = 0;
        let r = rec(0, tx, bdp);
        cc.on_ack(Time::ZERO, &ack(1, 100, &r));
        tx += bdp;
        let r = rec(step_ns, tx, bdp);
        cc.on_ack(Time::ZERO, &ack(101, 200, &r));
        assert!((cc.utilisation() - 2.0).abs() < 1e-9, "U = {}", cc.utilisation());
        let expect = 100e9 / (2.0 / 0.95) + 40e6;
        assert!((cc.rate().0 as f64 - expect).abs() < 2.0, "{} vs {expect}", cc.rate().0);
        assert_eq!(cc.updates, (1, 0));
    }

    #[test]
    fn under_utilised_link_adds_w_ai_then_multiplies_after_max_stage() {
        let mut cc = hpcc();
        // start from 50 Gb/s on a link carrying 50 Gb/s with no queue: U = 0.5 < eta
        cc.rate = 50_000_000_000;
        cc.rc = cc.rate;
        let mut tx = 0;
        let mut ts = 0;
        let r = rec(ts, tx, 0);
        cc.on_ack(Time::ZERO, &ack(1, 1, &r));
        let mut rates = vec![];
        for k in 0..7u64 {
            ts += 10_000;
            tx += 62_500; // 50 Gb/s over 10 us
            let r = rec(ts, tx, 0);
            cc.on_ack(Time::ZERO, &ack(2 + k, 2 + k, &r));
            rates.push(cc.rate().0);
        }
        assert!((cc.utilisation() - 0.5).abs() < 1e-9);
        // maxStage = 5 additive steps of W_AI (40 Mb/s), then a multiplicative one
        assert_eq!(rates[0], 50_040_000_000);
        for k in 1..5 {
            assert_eq!(rates[k] - rates[k - 1], 40_000_000);
        }
        let mi = (rates[4] as f64 / (0.5 / 0.95) + 40e6) as u64;
        assert_eq!(rates[5], mi.min(100_000_000_000));
        assert_eq!(rates[6], rates[5] + 40_000_000);
    }

    #[test]
    fn fast_react_moves_rate_but_not_reference() {
        let mut cc = hpcc();
        let r = rec(0, 0, 0);
        cc.on_ack(Time::ZERO, &ack(1, 1000, &r));
        // an ACK inside the same RTT sees a queue of 2 BDP
        let r = rec(10_000, 125_000, 250_000);
        cc.on_ack(Time::ZERO, &ack(500, 2000, &r));
        assert_eq!(cc.updates, (0, 1));
        // qlen term uses min(q, q_prev) = 0 here: U = 1 (line rate), so W = Wc/(1/0.95) + W_AI
        assert!(cc.rate().0 < 100_000_000_000);
        assert_eq!(cc.rc, 100_000_000_000);
        assert_eq!(cc.inc_stage, 0);
        // window follows the rate: W = R x T
        assert_eq!(cc.window(), Some(Rate(cc.rate().0).bytes_in(Time::from_us(10))));
    }

    #[test]
    fn rate_stays_within_min_and_line_rate() {
        let mut cc = hpcc();
        let r = rec(0, 0, 10_000_000);
        cc.on_ack(Time::ZERO, &ack(1, 1, &r));
        let mut ts = 0;
        let mut tx = 0;
        for k in 0..50u64 {
            ts += 10_000;
            tx += 125_000;
            let r = rec(ts, tx, 10_000_000);
            cc.on_ack(Time::ZERO, &ack(2 + k, 2 + k, &r));
            assert!(cc.rate() >= Rate::mbps(100));
        }
        assert_eq!(cc.rate(), Rate::mbps(100));
        // ACKs without INT (another scheme's ACK) change nothing
        let before = cc.rate();
        cc.on_ack(Time::ZERO, &ack(1000, 1000, &[]));
        assert_eq!(cc.rate(), before);
    }

    fn hpcc_with(cfg: HpccConfig) -> Hpcc {
        assert!(cfg.validate().is_ok());
        Hpcc::new(&cfg, &FlowInfo { line_rate: B, base_rtt: Time::from_us(10), mtu: 1000 })
    }

    /// A record per hop at `ts_ns`: `(tx bytes, qlen)` of each hop.
    fn recs(ts_ns: u64, hops: &[(u64, u64)]) -> Vec<IntHop> {
        hops.iter().map(|&(tx, q)| IntHop { ts: Time::from_ns(ts_ns), tx_bytes: tx, qlen: q, rate: B }).collect()
    }

    /// `Wc / (U/eta) + W_AI` with the default eta and `W_AI` (40 Mb/s at 100 Gb/s).
    fn mi(rc: u64, u: f64) -> u64 {
        ((rc as f64 / (u / 0.95)) + 40e6) as u64
    }

    #[test]
    fn multi_rate_keeps_a_reference_per_hop_and_sends_at_the_slowest() {
        // Two hops, T = 10 us, records 10 us apart (tau = T: U takes each new sample whole).
        // Update 1: hop 0 at line rate with a BDP standing (u = 2), hop 1 half loaded (u = 0.5).
        // Update 2: the congestion moves to hop 1.
        let bdp = 125_000;
        let steps = [
            recs(0, &[(0, bdp), (0, 0)]),
            recs(10_000, &[(125_000, bdp), (62_500, bdp)]),
            recs(20_000, &[(187_500, 0), (187_500, bdp)]),
        ];
        let run = |multi: bool| {
            let mut cc = hpcc_with(HpccConfig { multi_rate: multi, ..Default::default() });
            let mut rates = vec![];
            for (k, r) in steps.iter().enumerate() {
                let k = k as u64;
                cc.on_ack(Time::ZERO, &ack(1 + k, 1 + k, r));
                rates.push(cc.rate().0);
            }
            (cc, rates)
        };
        let line = 100_000_000_000;
        // One rate: the most loaded hop drives it from the flow's own reference.
        let (_, single) = run(false);
        let r1 = mi(line, 2.0);
        assert_eq!(single[1..], [r1, mi(r1, 2.0)]);
        // Per hop: the first update agrees; hop 1 took an additive step of its own (capped).
        let (cc, multi) = run(true);
        assert_eq!(multi[1], r1);
        // Second update: hop 0 (now u = 0.5) adds W_AI to its own reference r1; hop 1 cuts from
        // its reference, still line rate, to r1. The flow takes the smaller.
        assert_eq!(multi[2], r1);
        assert!(single[2] < multi[2]);
        assert_eq!((cc.hops[0].rc, cc.hops[0].inc_stage), (r1 + 40_000_000, 1));
        assert_eq!((cc.hops[1].rc, cc.hops[1].inc_stage), (r1, 0));
        assert!((cc.hops[0].u - 0.5).abs() < 1e-12 && (cc.hops[1].u - 2.0).abs() < 1e-12);
        assert_eq!(cc.utilisation(), 1.0); // the flow-wide U is not used
    }

    #[test]
    fn int_multi_rounds_records_down_like_the_switches() {
        // Raw records read with int_multi = 2 give exactly what records already rounded to
        // 160-byte (qLen) and 256-byte (txBytes) units give at full precision.
        let raw: Vec<Vec<IntHop>> = (0..12u64)
            .map(|k| recs(7_000 * k, &[(k * 91_357 + k * k * 13, 40_000 + (k * 7_919) % 90_000), (k * 33_331, (k * 104_729) % 60_001)]))
            .collect();
        let floored: Vec<Vec<IntHop>> = raw
            .iter()
            .map(|r| r.iter().map(|h| IntHop { qlen: h.qlen / 160 * 160, tx_bytes: h.tx_bytes / 256 * 256, ..*h }).collect())
            .collect();
        assert_ne!(raw, floored);
        let drive = |cfg: HpccConfig, recs: &[Vec<IntHop>]| {
            let mut cc = hpcc_with(cfg);
            let mut out = vec![];
            for (k, r) in recs.iter().enumerate() {
                let k = k as u64;
                // a full update every third ACK, fast reaction between
                cc.on_ack(Time::ZERO, &ack(1 + k / 3 * 3, 1 + k, r));
                out.push((cc.rate().0, cc.utilisation().to_bits()));
            }
            out
        };
        let a = drive(HpccConfig { int_multi: 2, ..Default::default() }, &raw);
        assert_eq!(a, drive(HpccConfig::default(), &floored));
        assert_ne!(a, drive(HpccConfig::default(), &raw));
        // The units: 80 and 128 bytes per int_multi.
        let cc = hpcc_with(HpccConfig { int_multi: 1, ..Default::default() });
        let q = cc.quantise(&IntHop { qlen: 159, tx_bytes: 255, ..Default::default() });
        assert_eq!((q.qlen, q.tx_bytes), (80, 128));
    }

    #[test]
    fn sample_feedback_skips_empty_queues_on_fast_reaction() {
        let r0 = rec(0, 0, 0);
        let r1 = rec(10_000, 125_000, 0); // the hop sent at line rate and its queue is empty
        for (sample, fast_updates) in [(false, 1), (true, 0)] {
            let mut cc = hpcc_with(HpccConfig { sample_feedback: sample, ..Default::default() });
            cc.on_ack(Time::ZERO, &ack(1, 1000, &r0));
            cc.on_ack(Time::ZERO, &ack(500, 2000, &r1)); // fast reaction
            assert_eq!(cc.updates, (0, fast_updates));
            // a full update always uses the hop, and with sampling the skipped record was not
            // stored, so it measures over 20 us from the first record
            let r2 = rec(20_000, 250_000, 0);
            cc.on_ack(Time::ZERO, &ack(1001, 3000, &r2));
            assert_eq!(cc.updates.0, 1);
        }
    }

    #[test]
    fn window_and_absolute_rai_reproduce_the_simulators_numbers() {
        // GLOBAL_T: T = maxRtt = 12 us, m_win = maxBdp = 100 KB (less than B x T = 150 KB).
        let cfg = HpccConfig {
            base_rtt: Some(Time::from_us(12)),
            window: Some(100_000),
            rai: Some(Rate::mbps(50)),
            ..Default::default()
        };
        let mut cc = hpcc_with(cfg);
        assert_eq!(cc.rai, 50_000_000);
        assert_eq!(cc.window(), Some(100_000));
        // No traffic, 100 KB queued: the queue term is qLen x B_nic / (B x m_win) = 1.
        let r = rec(0, 0, 100_000);
        cc.on_ack(Time::ZERO, &ack(1, 1, &r));
        let r = rec(12_000, 0, 100_000);
        cc.on_ack(Time::ZERO, &ack(2, 2, &r));
        assert_eq!(cc.utilisation(), 1.0);
        let rate = ((100e9 / (1.0 / 0.95)) + 50e6) as u64;
        assert_eq!(cc.rate().0, rate);
        // VAR_WIN: m_win x R / B_nic
        assert_eq!(cc.window(), Some((100_000u128 * rate as u128 / 100_000_000_000) as u64));
        assert!(HpccConfig { window: Some(0), ..Default::default() }.validate().is_err());
    }

    #[test]
    fn nack_updates_with_snd_nxt_rewound() {
        let mut cc = hpcc();
        let r = rec(0, 0, 0);
        cc.on_ack(Time::ZERO, &ack(1, 100_000, &r));
        let r = rec(10_000, 62_500, 0);
        cc.on_nack(Time::ZERO, &AckInfo { ack_seq: 150_000, snd_nxt: 400_000, int: &r, ..Default::default() });
        assert_eq!(cc.updates, (1, 0));
        assert_eq!(cc.last_update_seq, Some(150_000));
        // without INT a NACK changes nothing
        cc.on_nack(Time::ZERO, &AckInfo { ack_seq: 200_000, snd_nxt: 400_000, ..Default::default() });
        assert_eq!(cc.last_update_seq, Some(150_000));
    }
}
