//! AIMD on ECN echoes: the smallest rate-based congestion control, and hopsim's worked example of
//! one (docs/writing-a-scheme.md). Additive increase, multiplicative decrease (Chiu & Jain,
//! "Analysis of the Increase and Decrease Algorithms for Congestion Avoidance in Computer
//! Networks", 1989, §3: `x += a_I` without congestion, `x *= b_D` with it), in the form DCQCN and
//! rate-based DCTCP share: the sender paces at a rate, the receiver echoes ECN marks on its ACKs.
//!
//! Per ACK: with an ECN echo, cut the rate to `(1 - beta) x rate` (not below `min_rate`); without,
//! add `ai` (up to line rate). Both at most once per base RTT, so one window of marks is one cut,
//! as DCTCP's "once per window of data" (Alizadeh et al., SIGCOMM 2010, §3.1).
//!
//! Interpretation choices: no byte counter or timer for the increase (an ACK stream drives it);
//! the decrease does not depend on the fraction of marks (that is DCTCP's alpha, which this
//! example leaves out).

use super::registry::{Algorithm, Declared, Unit};
use super::{AckInfo, AnyCc, CongestionControl, FlowInfo};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// `[congestion_control.aimd]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AimdConfig {
    /// Additive increase per base RTT without marks (a scenario writes `ai = "1Gbps"`).
    pub ai: Rate,
    /// Multiplicative decrease: a marked RTT cuts the rate by this fraction.
    pub beta: f64,
    /// The rate is never cut below this.
    pub min_rate: Rate,
}

impl Default for AimdConfig {
    /// 1 Gb/s per RTT (a 100 Gb/s flow recovers from a halving in 50 RTTs), halve on marks (Chiu &
    /// Jain's b_D = 1/2), floor 100 Mb/s.
    fn default() -> Self {
        AimdConfig { ai: Rate::gbps(1), beta: 0.5, min_rate: Rate(100_000_000) }
    }
}

impl Declared for AimdConfig {
    const NAME: &'static str = "aimd";
    const ABOUT: &'static str = "AIMD on ECN echoes, rate-based (Chiu & Jain 1989, §3): the worked example";
    const COUNTERS: &'static [&'static str] = &["aimd_cuts"];
    fn units() -> &'static [(&'static str, Unit)] {
        &[("ai", Unit::Rate), ("min_rate", Unit::Rate)]
    }
}

impl Algorithm for AimdConfig {
    fn validate(&self) -> Result<(), String> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("aimd.beta: {} is not a fraction to cut by; allowed: above 0 and below 1", self.beta));
        }
        if self.min_rate.0 == 0 {
            return Err("aimd.min_rate: 0 bits/s would stop a flow for good; allowed: a positive rate".into());
        }
        Ok(())
    }
    fn build(&self, info: &FlowInfo) -> AnyCc {
        AnyCc::Aimd(Aimd::new(self, info))
    }
}

/// One flow's sender.
pub struct Aimd {
    rate: Rate,
    line: Rate,
    ai: Rate,
    beta: f64,
    min_rate: Rate,
    rtt: Time,
    /// The last change (increase or cut); the next comes one base RTT later.
    last: Option<Time>,
    cuts: u64,
}

impl Aimd {
    pub fn new(cfg: &AimdConfig, info: &FlowInfo) -> Aimd {
        Aimd {
            rate: info.line_rate,
            line: info.line_rate,
            ai: cfg.ai,
            beta: cfg.beta,
            min_rate: cfg.min_rate.min(info.line_rate),
            rtt: info.base_rtt,
            last: None,
            cuts: 0,
        }
    }
}

impl CongestionControl for Aimd {
    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        if self.last.is_some_and(|t| now < t + self.rtt) {
            return;
        }
        self.rate = if ack.ecn_echo {
            self.cuts += 1;
            Rate(((self.rate.0 as f64) * (1.0 - self.beta)) as u64).max(self.min_rate)
        } else {
            Rate(self.rate.0.saturating_add(self.ai.0)).min(self.line)
        };
        self.last = Some(now);
    }
    fn rate(&self) -> Rate {
        self.rate
    }
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("aimd_cuts", self.cuts));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> Aimd {
        Aimd::new(&AimdConfig::default(), &FlowInfo { line_rate: Rate::gbps(100), base_rtt: Time::from_us(10), mtu: 1000 })
    }

    fn ack(ecn: bool) -> AckInfo<'static> {
        AckInfo { ecn_echo: ecn, newly_acked: 1000, ..Default::default() }
    }

    #[test]
    fn a_marked_ack_halves_the_rate_once_per_rtt() {
        let mut a = flow();
        a.on_ack(Time::from_us(1), &ack(true));
        assert_eq!(a.rate(), Rate::gbps(50));
        // more marks within the same RTT: no second cut
        a.on_ack(Time::from_us(5), &ack(true));
        assert_eq!(a.rate(), Rate::gbps(50));
        a.on_ack(Time::from_us(11), &ack(true));
        assert_eq!(a.rate(), Rate::gbps(25));
        let mut c = vec![];
        a.counters(&mut c);
        assert_eq!(c, vec![("aimd_cuts", 2)]);
    }

    #[test]
    fn unmarked_rtts_add_ai_up_to_line_rate() {
        let mut a = flow();
        a.on_ack(Time::ZERO, &ack(true));
        for i in 1..=3 {
            a.on_ack(Time::from_us(10 * i), &ack(false));
        }
        assert_eq!(a.rate(), Rate::gbps(53));
        for i in 4..=100 {
            a.on_ack(Time::from_us(10 * i), &ack(false));
        }
        assert_eq!(a.rate(), Rate::gbps(100), "capped at line rate");
    }

    #[test]
    fn cuts_stop_at_min_rate() {
        let mut a = flow();
        for i in 0..20 {
            a.on_ack(Time::from_us(10 * i), &ack(true));
        }
        assert_eq!(a.rate(), Rate(100_000_000));
    }

    #[test]
    fn reads_its_table_and_checks_beta() {
        let c = super::super::CcConfig::from_table(serde_json::json!({"algorithm": "aimd", "beta": 0.25})).unwrap();
        assert_eq!(c, super::super::CcConfig::Aimd(AimdConfig { beta: 0.25, ..Default::default() }));
        assert!(AimdConfig { beta: 1.0, ..Default::default() }.validate().is_err());
    }
}
