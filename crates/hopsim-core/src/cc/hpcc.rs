//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3.2-3.3,
//! Algorithm 1): window and rate from in-band telemetry.
//!
//! Switches stamp an INT record per hop at dequeue (`aqm::int`); the receiver echoes the records
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
//!   `ai = 10 * bw / 25`);
//! - the rate is clamped to `[min_rate, B_nic]`;
//! - fast reaction (the `else` branch, `FAST_REACT 1`) changes the rate but not `Wc`/`incStage`;
//!   both branches update `U` and the stored records;
//! - a hop whose two records have the same timestamp is skipped (the simulator would divide by
//!   zero); records of a path whose hop count changed are stored and not used.
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
//! | `fast_react` | true | simulator `FAST_REACT 1` for HPCC |
//! | `min_rate` | 100 Mb/s | simulator `RdmaHw` `MinRate` default (as our DCQCN) |
//! | `base_rtt` | the flow's unloaded RTT | HPCC §3.2 `T`; the simulator's `GLOBAL_T 1` uses the network's largest instead, which `base_rtt` can set |
//! | `int` | 8 B/hop, 2 B base, 5 hops | simulator `int-header.h` |

use super::{AckInfo, CongestionControl, FlowInfo};
use crate::aqm::int::{IntConfig, IntHop, MAX_INT_HOPS};
use crate::time::{Rate, Time, PS_PER_S};
use serde::{Deserialize, Serialize};

/// The line rate at which `rai_at_25g` applies.
pub const REFERENCE_LINE_RATE: Rate = Rate::gbps(25);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HpccConfig {
    /// Target utilisation `eta`, in (0, 1].
    pub eta: f64,
    /// `maxStage`: additive steps before a multiplicative one.
    pub max_stage: u32,
    /// `W_AI` as a rate at 25 Gb/s (`W_AI = R_AI x T`), scaled with line rate.
    pub rai_at_25g: Rate,
    /// React on every ACK, not only once per RTT.
    pub fast_react: bool,
    /// Floor of the rate (capped at the line rate).
    pub min_rate: Rate,
    /// `T`; `None` = the flow's unloaded RTT.
    pub base_rtt: Option<Time>,
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
            fast_react: true,
            min_rate: Rate::mbps(100),
            base_rtt: None,
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
        self.int.validate()
    }
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
    /// Full (per-RTT) and fast updates made, for tests.
    pub updates: (u32, u32),
}

impl Hpcc {
    pub fn new(cfg: &HpccConfig, info: &FlowInfo) -> Hpcc {
        let line = info.line_rate.0;
        let rai = (cfg.rai_at_25g.0 as u128 * line as u128 / REFERENCE_LINE_RATE.0 as u128) as u64;
        Hpcc {
            line_rate: line,
            min_rate: cfg.min_rate.0.min(line),
            rai,
            t: cfg.base_rtt.unwrap_or(info.base_rtt).max(Time(1)),
            eta: cfg.eta,
            max_stage: cfg.max_stage,
            fast_react: cfg.fast_react,
            rate: line,
            rc: line,
            inc_stage: 0,
            last_update_seq: None,
            u: 1.0,
            prev: [IntHop::default(); MAX_INT_HOPS],
            prev_n: 0,
            updates: (0, 0),
        }
    }

    /// `U`, the normalised inflight bytes of the most loaded hop (smoothed over `T`).
    pub fn utilisation(&self) -> f64 {
        self.u
    }

    /// `W = R x T`, bytes.
    pub fn window_bytes(&self) -> u64 {
        Rate(self.rate).bytes_in(self.t).max(1)
    }

    fn store(&mut self, hops: &[IntHop]) {
        let n = hops.len().min(MAX_INT_HOPS);
        self.prev[..n].copy_from_slice(&hops[..n]);
        self.prev_n = n;
    }

    /// Algorithm 1 lines 1-12. Returns false when the records cannot be compared.
    fn measure_inflight(&mut self, hops: &[IntHop]) -> bool {
        if hops.len() != self.prev_n {
            self.store(hops);
            return false;
        }
        let t = self.t.0 as f64;
        let mut best = 0.0f64;
        let mut tau = 0u64;
        for (i, h) in hops.iter().enumerate() {
            let p = self.prev[i];
            let dt = h.ts.0.saturating_sub(p.ts.0);
            if dt == 0 || h.rate.0 == 0 {
                continue;
            }
            let b = h.rate.0 as f64;
            let tx_rate = h.tx_bytes.saturating_sub(p.tx_bytes) as f64 * 8.0 * PS_PER_S as f64 / dt as f64;
            let qlen = h.qlen.min(p.qlen) as f64;
            let u = qlen * 8.0 * PS_PER_S as f64 / (b * t) + tx_rate / b;
            if u > best {
                best = u;
                tau = dt;
            }
            self.prev[i] = *h;
        }
        let tau = tau.min(self.t.0) as f64;
        self.u = (1.0 - tau / t) * self.u + tau / t * best;
        true
    }

    /// Algorithm 1 lines 13-24, on rates (`W/T`).
    fn compute_rate(&mut self, update_wc: bool) {
        let c = self.u / self.eta;
        let (new, stage) = if c >= 1.0 || self.inc_stage >= self.max_stage {
            let r = if c > 0.0 { self.rc as f64 / c } else { f64::INFINITY };
            (r + self.rai as f64, 0)
        } else {
            (self.rc as f64 + self.rai as f64, self.inc_stage + 1)
        };
        let new = if new >= self.line_rate as f64 { self.line_rate } else { (new as u64).max(self.min_rate) };
        self.rate = new;
        if update_wc {
            self.rc = new;
            self.inc_stage = stage;
        }
    }
}

impl CongestionControl for Hpcc {
    fn on_ack(&mut self, _now: Time, ack: &AckInfo) {
        if ack.int.is_empty() {
            return;
        }
        let Some(last) = self.last_update_seq else {
            self.store(ack.int);
            self.last_update_seq = Some(ack.snd_nxt);
            return;
        };
        let full = ack.ack_seq > last;
        if !full && !self.fast_react {
            return;
        }
        if !self.measure_inflight(ack.int) {
            return;
        }
        self.compute_rate(full);
        if full {
            self.last_update_seq = Some(ack.snd_nxt.max(last));
            self.updates.0 += 1;
        } else {
            self.updates.1 += 1;
        }
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
}
