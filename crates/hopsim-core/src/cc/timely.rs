//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015, §4, Algorithm 1): rate-based control from the gradient of the RTT.
//!
//! On each update, with `new_rtt` the RTT sample of the ACK (`now` minus the echoed send time):
//! ```text
//! new_rtt_diff = new_rtt - prev_rtt;  prev_rtt = new_rtt
//! rtt_diff = (1 - alpha) x rtt_diff + alpha x new_rtt_diff
//! normalized_gradient = rtt_diff / minRTT
//! if new_rtt < T_low:        rate += delta                              (additive increase)
//! elif new_rtt > T_high:     rate *= 1 - beta x (1 - T_high / new_rtt)  (multiplicative decrease)
//! elif gradient <= 0:        rate += N x delta                          (N = 5 in hyperactive increase)
//! else:                      rate *= 1 - beta x normalized_gradient
//! ```
//! How the HPCC ns-3 simulator runs it (alibaba-edu/High-Precision-Congestion-Control,
//! `rdma-hw.cc` `HandleAckTimely`/`UpdateRateTimely`), which we follow:
//! - one update per RTT: only the first ACK that passes the byte that was next to send at the
//!   previous update (`m_lastUpdateSeq`) updates; ACKs in between do nothing (its fast-react hook
//!   is empty). The first ACK only records `prev_rtt`. `m_lastUpdateSeq` starts at 0, which also
//!   marks the first RTT, so an ACK of byte 0 is no first ACK;
//! - `prev_rtt` and `m_lastUpdateSeq` move only when `snd_nxt` is past `m_lastUpdateSeq`;
//! - a NACK runs the same update (`ReceiveAck` calls `HandleAckTimely` for both), with `snd_nxt`
//!   rewound to the NACKed byte, because `RecoverQueue` runs first. The RTT sample is that of the
//!   out-of-order packet the NACK answers. Before this was checked against the simulator, NACKs
//!   were ignored;
//! - hyperactive increase (HAI) once 5 updates in a row increased the rate (`m_incStage >= 5`,
//!   counting the `T_low` branch too), with a step of `R_HAI = 5 x delta`; the paper counts 5
//!   completion events of negative gradient;
//! - the decrease factor is floored at 0 and the rate at `min_rate`; the rate never exceeds the
//!   line rate. TIMELY has no window (the simulator's `HAS_WIN 0` for TIMELY); the host's in-flight
//!   cap still applies.
//!
//! Defaults (HPCC simulator, `RdmaHw` attributes and `run.py` for `timely`):
//!
//! | field | default | source |
//! |---|---|---|
//! | `alpha` | 0.875 | `TimelyAlpha` |
//! | `beta` | 0.8 | `TimelyBeta` (TIMELY paper: 0.8) |
//! | `t_low` | 50 us | `TimelyTLow` 50000 ns (TIMELY paper: 50 us) |
//! | `t_high` | 500 us | `TimelyTHigh` 500000 ns (TIMELY paper: 500 us) |
//! | `min_rtt` | 20 us | `TimelyMinRtt` 20000 ns |
//! | `delta_at_10g` | 10 Mb/s | `run.py` `ai = 10 * bw / 10` Mb/s (TIMELY paper: delta = 10 Mb/s at 10 Gb/s), scaled with line rate |
//! | `hai_at_10g` | 50 Mb/s | `run.py` `hai = 50 * bw / 10` Mb/s (5 x delta), scaled with line rate |
//! | `hai_after` | 5 | `UpdateRateTimely` `m_incStage < 5` (TIMELY paper: N = 5) |
//! | `min_rate` | 100 Mb/s | `RdmaHw` `MinRate` default (as our DCQCN; `run.py`'s config writes 1000 Mb/s) |
//! | `rai`, `rhai` | none (scale `delta_at_10g`, `hai_at_10g`) | `RATE_AI`, `RATE_HAI`: the simulator adds them unscaled (`m_rai`, `m_rhai`) |
//!
//! Rates follow `DataRate`'s arithmetic: the cut `m_curRate * c` truncates to whole bit/s, and the
//! steps add integers. We compute RTTs in picoseconds where the simulator has nanoseconds, so the
//! gradient's last bits may differ.

use super::datarate;
use super::{AckInfo, CongestionControl, FlowInfo};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// The line rate at which `delta_at_10g` and `hai_at_10g` apply.
pub const REFERENCE_LINE_RATE: Rate = Rate::gbps(10);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimelyConfig {
    /// EWMA weight of the newest RTT difference, in [0, 1].
    pub alpha: f64,
    /// Multiplicative-decrease factor, in [0, 1].
    pub beta: f64,
    /// Below this RTT, always increase.
    pub t_low: Time,
    /// Above this RTT, always decrease.
    pub t_high: Time,
    /// Normalises the RTT gradient.
    pub min_rtt: Time,
    /// Additive step `delta` at 10 Gb/s, scaled in proportion to the line rate.
    pub delta_at_10g: Rate,
    /// Hyperactive step at 10 Gb/s, scaled likewise.
    pub hai_at_10g: Rate,
    /// Absolute additive step (`RATE_AI`); replaces the scaled `delta_at_10g` when set.
    pub rai: Option<Rate>,
    /// Absolute hyperactive step (`RATE_HAI`); replaces the scaled `hai_at_10g` when set.
    pub rhai: Option<Rate>,
    /// Consecutive increases before the hyperactive step.
    pub hai_after: u32,
    /// Floor of the rate (capped at the line rate).
    pub min_rate: Rate,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low: Time::from_us(50),
            t_high: Time::from_us(500),
            min_rtt: Time::from_us(20),
            delta_at_10g: Rate::mbps(10),
            hai_at_10g: Rate::mbps(50),
            rai: None,
            rhai: None,
            hai_after: 5,
            min_rate: Rate::mbps(100),
        }
    }
}

impl TimelyConfig {
    pub fn validate(&self) -> Result<(), String> {
        for (n, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(format!("timely: {n} must be in [0, 1], got {v}"));
            }
        }
        if self.min_rtt == Time::ZERO {
            return Err("timely: min_rtt must be positive".into());
        }
        if self.t_low > self.t_high {
            return Err(format!("timely: t_low ({}) is above t_high ({})", self.t_low, self.t_high));
        }
        Ok(())
    }
}

fn scale(r: Rate, line: Rate) -> u64 {
    (r.0 as u128 * line.0 as u128 / REFERENCE_LINE_RATE.0 as u128).min(u64::MAX as u128) as u64
}

/// TIMELY sender state of one flow.
#[derive(Clone, Debug)]
pub struct Timely {
    line_rate: u64,
    min_rate: u64,
    delta: u64,
    hai: u64,
    hai_after: u32,
    alpha: f64,
    beta: f64,
    t_low: Time,
    t_high: Time,
    min_rtt: Time,
    /// Current rate (bit/s).
    rate: u64,
    inc_stage: u32,
    /// 0 before the first ACK (the simulator's first-RTT test).
    last_update_seq: u64,
    prev_rtt: Time,
    /// EWMA of RTT differences, picoseconds.
    rtt_diff: f64,
    /// Updates made (for tests).
    pub updates: u32,
}

impl Timely {
    pub fn new(cfg: &TimelyConfig, info: &FlowInfo) -> Timely {
        let line = info.line_rate;
        Timely {
            line_rate: line.0,
            min_rate: cfg.min_rate.0.min(line.0),
            delta: cfg.rai.map_or_else(|| scale(cfg.delta_at_10g, line), |r| r.0),
            hai: cfg.rhai.map_or_else(|| scale(cfg.hai_at_10g, line), |r| r.0),
            hai_after: cfg.hai_after,
            alpha: cfg.alpha,
            beta: cfg.beta,
            t_low: cfg.t_low,
            t_high: cfg.t_high,
            min_rtt: cfg.min_rtt,
            rate: line.0,
            inc_stage: 0,
            last_update_seq: 0,
            prev_rtt: Time::ZERO,
            rtt_diff: 0.0,
            updates: 0,
        }
    }

    /// The smoothed RTT difference (ps) and normalised gradient.
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.min_rtt.0 as f64
    }

    /// `UpdateRateTimely` past the first RTT: the rate from this RTT sample.
    fn update(&mut self, rtt: Time) {
        let new_diff = rtt.0 as f64 - self.prev_rtt.0 as f64;
        self.rtt_diff = (1.0 - self.alpha) * self.rtt_diff + self.alpha * new_diff;
        let gradient = self.gradient();
        let factor = if rtt < self.t_low {
            None
        } else if rtt > self.t_high {
            Some(1.0 - self.beta * (1.0 - self.t_high.0 as f64 / rtt.0 as f64))
        } else if gradient <= 0.0 {
            None
        } else {
            Some((1.0 - self.beta * gradient).max(0.0))
        };
        match factor {
            None => {
                let step = if self.inc_stage < self.hai_after { self.delta } else { self.hai };
                self.rate = self.rate.saturating_add(step).min(self.line_rate);
                self.inc_stage += 1;
            }
            Some(c) => {
                self.rate = datarate::mul(self.rate, c).max(self.min_rate);
                self.inc_stage = 0;
            }
        }
        self.updates += 1;
    }

    /// `HandleAckTimely`: an ACK past `m_lastUpdateSeq` runs `UpdateRateTimely`, others nothing.
    fn handle(&mut self, ack: &AckInfo) {
        if ack.ack_seq <= self.last_update_seq {
            return;
        }
        if self.last_update_seq != 0 {
            self.update(ack.rtt);
        }
        if ack.snd_nxt > self.last_update_seq {
            self.last_update_seq = ack.snd_nxt;
            self.prev_rtt = ack.rtt;
        }
    }
}

impl CongestionControl for Timely {
    fn on_ack(&mut self, _now: Time, ack: &AckInfo) {
        self.handle(ack);
    }
    fn on_nack(&mut self, _now: Time, ack: &AckInfo) {
        self.handle(&ack.after_go_back_n());
    }
    #[inline]
    fn rate(&self) -> Rate {
        Rate(self.rate)
    }
}

impl crate::registry::Declared for TimelyConfig {
    const NAME: &'static str = "timely";
    const ABOUT: &'static str = "TIMELY (Mittal et al., SIGCOMM 2015, §4, Algorithm 1)";
}

impl super::registry::Algorithm for TimelyConfig {
    fn validate(&self) -> Result<(), String> {
        TimelyConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::Timely(Timely::new(self, info))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> Time {
        Time::from_us(v)
    }

    fn timely(line: Rate) -> Timely {
        Timely::new(&TimelyConfig::default(), &FlowInfo { line_rate: line, base_rtt: us(10), mtu: 1000 })
    }

    /// Drive one update per call: ACK `k` passes the byte recorded at update `k-1`.
    struct Driver {
        k: u64,
    }
    impl Driver {
        fn ack(&mut self, cc: &mut Timely, rtt: Time) {
            self.k += 1;
            cc.on_ack(Time::ZERO, &AckInfo { ack_seq: self.k * 1000 + 1, snd_nxt: self.k * 1000 + 1, rtt, ..Default::default() });
        }
    }

    #[test]
    fn defaults_follow_hpcc_simulator() {
        let c = TimelyConfig::default();
        assert_eq!((c.alpha, c.beta), (0.875, 0.8));
        assert_eq!((c.t_low, c.t_high, c.min_rtt), (us(50), us(500), us(20)));
        assert_eq!((c.delta_at_10g, c.hai_at_10g, c.hai_after), (Rate::mbps(10), Rate::mbps(50), 5));
        assert!(c.validate().is_ok());
        assert!(TimelyConfig { t_low: us(600), ..c.clone() }.validate().is_err());
        let cc = timely(Rate::gbps(100));
        assert_eq!((cc.delta, cc.hai), (100_000_000, 500_000_000));
        assert_eq!(cc.rate(), Rate::gbps(100));
        assert_eq!(cc.window(), None);
    }

    #[test]
    fn growing_rtt_cuts_rate_by_gradient() {
        let mut cc = timely(Rate::gbps(10));
        let mut d = Driver { k: 0 };
        d.ack(&mut cc, us(60)); // first: records prev_rtt only
        assert_eq!((cc.rate(), cc.updates), (Rate::gbps(10), 0));
        d.ack(&mut cc, us(70)); // +10 us: diff = 0.875 x 10 us, gradient 0.4375
        let c = 1.0 - 0.8 * (0.875 * 10.0 / 20.0);
        assert!((cc.rate().0 as f64 - 10e9 * c).abs() < 2.0, "{}", cc.rate().0);
        let before = cc.rate();
        d.ack(&mut cc, us(80));
        assert!(cc.rate() < before, "RTT still rising: rate keeps falling");
    }

    #[test]
    fn shrinking_rtt_raises_rate_then_hyperactive() {
        let mut cc = timely(Rate::gbps(10));
        let mut d = Driver { k: 0 };
        d.ack(&mut cc, us(200));
        d.ack(&mut cc, us(300)); // rising: cut (gradient 4.375 -> factor floored at 0 -> min_rate)
        assert_eq!(cc.rate(), Rate::mbps(100));
        // falling RTT (still above T_low): a 100 us drop turns the smoothed difference negative
        let mut rtt = 200;
        let mut rates = vec![];
        for _ in 0..8 {
            d.ack(&mut cc, us(rtt));
            rtt -= 10;
            rates.push(cc.rate().0);
        }
        let steps: Vec<u64> = rates.windows(2).map(|w| w[1] - w[0]).collect();
        // five additive steps of delta, then hyperactive steps of 5 x delta
        assert_eq!(rates[0], 100_000_000 + 10_000_000);
        assert_eq!(&steps[..4], &[10_000_000; 4]);
        assert_eq!(&steps[4..], &[50_000_000; 3]);
    }

    #[test]
    fn below_t_low_increases_and_above_t_high_decreases() {
        let mut cc = timely(Rate::gbps(10));
        let mut d = Driver { k: 0 };
        d.ack(&mut cc, us(5));
        cc.rate = 5_000_000_000;
        // rising but under T_low: increase anyway
        d.ack(&mut cc, us(30));
        assert_eq!(cc.rate(), Rate(5_010_000_000));
        // above T_high, even with a falling RTT: decrease by beta x (1 - T_high/rtt)
        d.ack(&mut cc, us(1000));
        d.ack(&mut cc, us(800));
        let r = 5_010_000_000f64 * (1.0 - 0.8 * (1.0 - 500.0 / 1000.0));
        let r = r * (1.0 - 0.8 * (1.0 - 500.0 / 800.0));
        assert!((cc.rate().0 as f64 - r).abs() < 2.0, "{} vs {r}", cc.rate().0);
        // never above line rate
        for _ in 0..2000 {
            d.ack(&mut cc, us(10));
        }
        assert_eq!(cc.rate(), Rate::gbps(10));
    }

    #[test]
    fn one_update_per_rtt() {
        let mut cc = timely(Rate::gbps(10));
        cc.on_ack(Time::ZERO, &AckInfo { ack_seq: 1000, snd_nxt: 50_000, rtt: us(60), ..Default::default() });
        for s in (2000..=50_000).step_by(1000) {
            cc.on_ack(Time::ZERO, &AckInfo { ack_seq: s, snd_nxt: 100_000, rtt: us(100), ..Default::default() });
        }
        assert_eq!(cc.updates, 0);
        cc.on_ack(Time::ZERO, &AckInfo { ack_seq: 51_000, snd_nxt: 100_000, rtt: us(100), ..Default::default() });
        assert_eq!(cc.updates, 1);
    }

    #[test]
    fn absolute_steps_are_used_unscaled() {
        let cfg = TimelyConfig { rai: Some(Rate::mbps(10)), rhai: Some(Rate::mbps(50)), ..Default::default() };
        let cc = Timely::new(&cfg, &FlowInfo { line_rate: Rate::gbps(100), base_rtt: us(10), mtu: 1000 });
        assert_eq!((cc.delta, cc.hai), (10_000_000, 50_000_000));
    }

    #[test]
    fn nack_updates_with_snd_nxt_rewound_and_byte_zero_is_no_first_ack() {
        let mut cc = timely(Rate::gbps(10));
        // an ACK (or NACK) of byte 0 does not count as the first ACK (m_lastUpdateSeq == 0)
        cc.on_nack(Time::ZERO, &AckInfo { ack_seq: 0, snd_nxt: 5000, rtt: us(60), ..Default::default() });
        assert_eq!(cc.last_update_seq, 0);
        cc.on_ack(Time::ZERO, &AckInfo { ack_seq: 1000, snd_nxt: 50_000, rtt: us(60), ..Default::default() });
        assert_eq!(cc.last_update_seq, 50_000);
        // A NACK past the window updates the rate, and the next window ends at the NACKed byte,
        // not at the highest byte sent.
        cc.on_nack(Time::ZERO, &AckInfo { ack_seq: 60_000, snd_nxt: 200_000, rtt: us(100), ..Default::default() });
        assert_eq!(cc.updates, 1);
        assert!(cc.rate() < Rate::gbps(10));
        assert_eq!(cc.last_update_seq, 60_000);
        cc.on_ack(Time::ZERO, &AckInfo { ack_seq: 61_000, snd_nxt: 200_000, rtt: us(100), ..Default::default() });
        assert_eq!(cc.updates, 2);
    }
}
