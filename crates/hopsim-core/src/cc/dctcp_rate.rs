//! Rate-based DCTCP for RDMA, as the HPCC ns-3 simulator runs it (alibaba-edu/High-Precision-
//! Congestion-Control, `rdma-hw.cc` `HandleAckDctcp`, `CC_MODE 8`). DCTCP's estimator and cut
//! (Alizadeh et al., SIGCOMM 2010, §3.1) act on a NIC pacing rate instead of a window. That is how
//! the HPCC paper (§5) compares DCTCP with its rate-based schemes. `cc::dctcp` is the
//! window-based TCP version.
//!
//! On every ACK (and NACK), with `cnp` the ECN echo the ACK carries (the simulator's `FLAG_CNP`:
//! the acknowledged packet was CE-marked), in this order:
//! 1. **Alpha, once per window of data.** Marked ACKs are counted. An ACK beyond `lastUpdateSeq`
//!    starts a new batch. On the flow's first ACK, `lastUpdateSeq = snd_nxt` and the batch size is
//!    `snd_nxt / mtu + 1` packets, with no alpha update, and the mark count is *not* reset, so
//!    the first estimate counts the first ACK's marks too. After that,
//!    `alpha = (1-g) alpha + g min(1, marks / batch)`, `lastUpdateSeq = snd_nxt`, the count
//!    restarts, and the next batch is `(snd_nxt - ack) / mtu + 1` packets. The fraction counts
//!    ACKs, not bytes, against the packets that were in flight, as the simulator does.
//! 2. **CWR exit**: an ACK beyond `highSeq` ends the CWR state.
//! 3. **Cut**, on a marked ACK outside CWR: `Rc = max(min_rate, Rc (1 - alpha/2))`, enter CWR
//!    with `highSeq = snd_nxt`. So a stream of marks gives one cut per window of data.
//! 4. **Additive increase**, on an ACK that started a new batch, outside CWR: `Rc += rai`, capped
//!    at line rate. An ACK that cuts enters CWR and so does not also increase.
//!
//! Alpha starts at 1 (`RdmaQueuePair`'s `dctcp.m_alpha = 1`), the rate at line rate. Rates use
//! `DataRate`'s truncating arithmetic (`cc::datarate`). The simulator keeps `lastUpdateSeq` and
//! `highSeq` in 32 bits; we keep 64 (they differ only past 4 GB of data). There is no window:
//! the host's in-flight cap bounds the flow, as the simulator's `HAS_WIN`/`VAR_WIN` window would.
//!
//! A NACK runs the same handler (`ReceiveAck` calls `HandleAckDctcp` for both). The simulator
//! rewinds `snd_nxt` to the acknowledged byte (`RecoverQueue`) before it does, so `on_nack` takes
//! `snd_nxt = ack_seq` (`AckInfo::after_go_back_n`).
//!
//! Defaults (`RdmaHw` attributes):
//!
//! | field | default | source |
//! |---|---|---|
//! | `g` | 1/16 | `EwmaGain` default; `run.py` for dctcp `g=0.0625` (DCTCP §3.4) |
//! | `rai` | 1000 Mb/s | `DctcpRateAI` default, `config.txt` `DCTCP_RATE_AI 1000Mb/s` (`run.py` uses 615 Mb/s, one MTU per 13 us RTT) |
//! | `min_rate` | 100 Mb/s | `MinRate` default (`run.py` writes 1000 Mb/s) |

use super::datarate;
use super::{AckInfo, CongestionControl, FlowInfo};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpRateConfig {
    /// EWMA gain `g` of alpha (`EWMA_GAIN`), in [0, 1].
    pub g: f64,
    /// Additive step per window of data (`DCTCP_RATE_AI`), absolute.
    pub rai: Rate,
    /// Floor of the rate (`MIN_RATE`), capped at the line rate.
    pub min_rate: Rate,
}

impl Default for DctcpRateConfig {
    fn default() -> Self {
        DctcpRateConfig { g: 1.0 / 16.0, rai: Rate::mbps(1000), min_rate: Rate::mbps(100) }
    }
}

impl DctcpRateConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g.is_finite() && (0.0..=1.0).contains(&self.g)) {
            return Err(format!("dctcp_rate: g must be in [0, 1], got {}", self.g));
        }
        Ok(())
    }
}

/// Rate-based DCTCP sender state of one flow (`RdmaQueuePair::dctcp` and `m_rate`).
#[derive(Clone, Debug)]
pub struct DctcpRate {
    line_rate: u64,
    min_rate: u64,
    rai: u64,
    g: f64,
    mtu: u64,
    rate: u64,
    alpha: f64,
    /// 0 until the first ACK (the simulator's "first RTT" test).
    last_update_seq: u64,
    ecn_cnt: u64,
    batch: u64,
    /// In CWR (`m_caState == 1`) until an ACK passes `high_seq`.
    cwr: bool,
    high_seq: u64,
    /// Alpha updates and cuts made, for tests and the run summary.
    pub updates: (u32, u32),
}

impl DctcpRate {
    pub fn new(cfg: &DctcpRateConfig, info: &FlowInfo) -> DctcpRate {
        let line = info.line_rate.0;
        DctcpRate {
            line_rate: line,
            min_rate: cfg.min_rate.0.min(line),
            rai: cfg.rai.0,
            g: cfg.g,
            mtu: info.mtu.max(1) as u64,
            rate: line,
            alpha: 1.0,
            last_update_seq: 0,
            ecn_cnt: 0,
            batch: 0,
            cwr: false,
            high_seq: 0,
            updates: (0, 0),
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// `HandleAckDctcp`.
    fn handle(&mut self, ack: &AckInfo) {
        let cnp = ack.ecn_echo;
        self.ecn_cnt += cnp as u64;
        let new_batch = ack.ack_seq > self.last_update_seq;
        if new_batch {
            if self.last_update_seq == 0 {
                self.batch = ack.snd_nxt / self.mtu + 1;
            } else {
                let frac = (self.ecn_cnt as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * frac;
                self.ecn_cnt = 0;
                self.batch = ack.snd_nxt.saturating_sub(ack.ack_seq) / self.mtu + 1;
                self.updates.0 += 1;
            }
            self.last_update_seq = ack.snd_nxt;
        }
        if self.cwr && ack.ack_seq > self.high_seq {
            self.cwr = false;
        }
        if cnp && !self.cwr {
            self.rate = datarate::mul(self.rate, 1.0 - self.alpha / 2.0).max(self.min_rate);
            self.cwr = true;
            self.high_seq = ack.snd_nxt;
            self.updates.1 += 1;
        }
        if !self.cwr && new_batch {
            self.rate = self.rate.saturating_add(self.rai).min(self.line_rate);
        }
    }
}

impl CongestionControl for DctcpRate {
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
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("dctcp_rate_cuts", self.updates.1 as u64));
    }
}

impl crate::registry::Declared for DctcpRateConfig {
    const NAME: &'static str = "dctcp_rate";
    const ABOUT: &'static str = "rate-based DCTCP as the HPCC simulator runs it (CC_MODE 8)";
    const COUNTERS: &'static [&'static str] = &["dctcp_rate_cuts"];
}

impl super::registry::Algorithm for DctcpRateConfig {
    fn validate(&self) -> Result<(), String> {
        DctcpRateConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::DctcpRate(DctcpRate::new(self, info))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::gbps(100);
    const MTU: u64 = 1000;

    fn dctcp() -> DctcpRate {
        DctcpRate::new(&DctcpRateConfig::default(), &FlowInfo { line_rate: LINE, base_rtt: Time::from_us(10), mtu: 1000 })
    }

    fn ack(cc: &mut DctcpRate, seq: u64, snd_nxt: u64, ecn: bool) {
        cc.on_ack(Time::ZERO, &AckInfo { ack_seq: seq, snd_nxt, ecn_echo: ecn, ..Default::default() });
    }

    #[test]
    fn defaults_and_registration() {
        use super::super::{AnyCc, CcConfig};
        let c = DctcpRateConfig::default();
        assert_eq!((c.g, c.rai, c.min_rate), (1.0 / 16.0, Rate::mbps(1000), Rate::mbps(100)));
        assert!(c.validate().is_ok());
        assert!(DctcpRateConfig { g: 2.0, ..c }.validate().is_err());
        let cfg: CcConfig = serde_json::from_str(r#"{"algorithm":"dctcp_rate","rai":615000000}"#).unwrap();
        assert!(cfg.validate().is_ok());
        assert!(serde_json::to_string(&cfg).unwrap().contains(r#""algorithm":"dctcp_rate""#));
        assert_eq!(cfg.transport_needs(), Default::default());
        let cc = AnyCc::build(&cfg, &FlowInfo { line_rate: LINE, base_rtt: Time::from_us(10), mtu: 1000 });
        assert!(matches!(cc, AnyCc::DctcpRate(_)));
        assert_eq!((cc.rate(), cc.window()), (LINE, None));
    }

    #[test]
    fn continuous_marks_cut_once_per_window() {
        let mut cc = dctcp();
        // First ACK, marked: batch = 50 KB / 1 KB + 1 = 51 packets, cut with alpha 1 (halve),
        // CWR until 50 KB.
        ack(&mut cc, 1000, 50_000, true);
        assert_eq!(cc.rate(), Rate::gbps(50));
        assert_eq!(cc.updates, (0, 1));
        // Every ACK of that window is marked: no further cut, and no increase in CWR.
        for s in (2000..=50_000).step_by(1000) {
            ack(&mut cc, s, 50_000 + s, true);
        }
        assert_eq!(cc.rate(), Rate::gbps(50));
        assert_eq!(cc.updates.1, 1);
        // The ACK past 50 KB ends CWR, starts a new batch (alpha from 51 marks / 51 packets) and,
        // being marked, cuts once more.
        ack(&mut cc, 51_000, 101_000, true);
        assert_eq!(cc.alpha(), 1.0);
        assert_eq!(cc.updates, (1, 2));
        assert_eq!(cc.rate(), Rate::gbps(25));
    }

    #[test]
    fn alpha_is_an_ewma_per_window_of_marked_fraction() {
        let mut cc = dctcp();
        let g = 1.0 / 16.0;
        // First window: snd_nxt 10 KB -> batch 11 packets; no marks at all.
        ack(&mut cc, 1000, 10_000, false);
        for s in (2000..=10_000).step_by(1000) {
            ack(&mut cc, s, 10_000, false);
        }
        assert_eq!(cc.alpha(), 1.0);
        // New batch: F = 0 -> alpha = 1 - g; next batch (20 KB - 11 KB)/1 KB + 1 = 10 packets.
        ack(&mut cc, 11_000, 20_000, false);
        assert_eq!(cc.alpha(), 1.0 - g);
        assert_eq!(cc.batch, 10);
        // 4 marks among the ACKs up to 20 KB, then the next batch: F = 5/10 counting the 5th mark
        // on the ACK that closes the window (counted before the update).
        let mut marks = 0;
        for s in (12_000..=20_000).step_by(1000) {
            let m = marks < 4;
            marks += m as u32;
            ack(&mut cc, s, 20_000, m);
        }
        let before = cc.alpha();
        ack(&mut cc, 21_000, 30_000, true);
        assert_eq!(cc.alpha(), (1.0 - g) * before + g * 0.5);
        assert_eq!(cc.updates.0, 2);
    }

    #[test]
    fn additive_increase_once_per_batch_outside_cwr() {
        let mut cc = DctcpRate::new(
            &DctcpRateConfig { rai: Rate::mbps(615), ..Default::default() },
            &FlowInfo { line_rate: LINE, base_rtt: Time::from_us(10), mtu: 1000 },
        );
        ack(&mut cc, 1000, 20_000, true); // cut to 50 G, CWR until 20 KB
        let mut expect = 50_000_000_000u64;
        // ACKs within the CWR window: nothing
        ack(&mut cc, 10_000, 30_000, false);
        assert_eq!(cc.rate().0, expect);
        // Past 20 KB: CWR ends; a new batch adds one step
        ack(&mut cc, 21_000, 40_000, false);
        expect += 615_000_000;
        assert_eq!(cc.rate().0, expect);
        // Unmarked ACKs inside the batch (up to 40 KB): no more steps
        for s in (22_000..=40_000).step_by(MTU as usize) {
            ack(&mut cc, s, 60_000, false);
        }
        assert_eq!(cc.rate().0, expect);
        // Each later batch adds one step, up to line rate
        let mut seq = 41_000;
        let mut nxt = 80_000;
        for _ in 0..200 {
            ack(&mut cc, seq, nxt, false);
            seq = nxt + 1000;
            nxt += 20_000;
        }
        assert_eq!(cc.rate(), LINE);
    }

    #[test]
    fn rate_floor_and_nack_rewind() {
        let mut cc = dctcp();
        let mut seq = 1000;
        for _ in 0..40 {
            // every window ends marked: one cut per window, down to min_rate
            ack(&mut cc, seq, seq + 1000, true);
            seq += 2000;
        }
        assert_eq!(cc.rate(), Rate::mbps(100));
        // A NACK ends the window at the rewound snd_nxt: the next ACK past it starts a batch.
        // (The host reports its highest byte sent, 50 KB, as snd_nxt on a NACK.)
        let mut cc = dctcp();
        ack(&mut cc, 1000, 10_000, false);
        cc.on_nack(Time::ZERO, &AckInfo { ack_seq: 20_000, snd_nxt: 50_000, ..Default::default() });
        assert_eq!(cc.last_update_seq, 20_000);
        assert_eq!(cc.batch, 1);
        ack(&mut cc, 21_000, 30_000, false);
        assert_eq!(cc.updates.0, 2);
    }
}
