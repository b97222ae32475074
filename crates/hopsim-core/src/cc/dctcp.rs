//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1), in the window-based
//! transport mode of `cc::window`.
//!
//! **Marking** (§3.1 "Simple Marking at the Switch"): a switch marks CE on a packet when the
//! queue exceeds `K`; here the RED marker at dequeue with `kmin = kmax = K`, `pmax = 1`
//! (`aqm::red_ecn`; §3.4 sizes `K > C x RTT / 7`, and the paper uses K = 20 packets at 1 Gb/s and
//! 65 packets at 10 Gb/s). The receiver echoes CE on the ACK of that very packet (we ACK every
//! packet, so §3.1's delayed-ACK state machine reduces to copying the bit).
//!
//! **Sender** (§3.1 "Controller at the Sender"):
//! - `alpha <- (1 - g) x alpha + g x F` once per window of data, where `F` is the fraction of bytes
//!   acknowledged in that window whose ACK carried ECN-Echo (bytes, as RFC 8257 §3.3 specifies).
//!   A window ends when the cumulative ACK reaches the byte that was next to send when it began
//!   (RFC 8257's `WindowEnd`); the first window begins with the first ACK.
//! - On an ECN-Echo, `cwnd <- cwnd x (1 - alpha/2)`, at most once per window: further marks are
//!   ignored until the ACK passes the byte that was next to send at the cut (TCP's CWR state).
//!   The window does not grow while in that state.
//! - Otherwise TCP growth, and TCP's reaction to loss (`cc::window`).
//!
//! Defaults and sources:
//!
//! | field | default | source |
//! |---|---|---|
//! | `g` | 1/16 | DCTCP §3.4 ("g = 1/16"); HPCC simulator `run.py` for dctcp `g=0.0625` |
//! | `initial_alpha` | 1 | RFC 8257 §3.3 (alpha initialised to 1; Linux `dctcp_alpha_on_init`); HPCC simulator `dctcp.m_alpha = 1` |
//! | `start` | `line_rate` (cwnd = 1 BDP) | BFC §6 and Appendix D, the variant the papers' simulators use |
//! | `initial_window` | 10 packets | RFC 6928; BFC Appendix D "DCTCP + SS" |

use super::window::{StartMode, TcpWindow};
use super::{AckInfo, CongestionControl, FlowInfo};
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpConfig {
    /// EWMA gain `g` of alpha, in (0, 1].
    pub g: f64,
    /// Alpha before the first window's estimate, in [0, 1].
    pub initial_alpha: f64,
    /// `line_rate`: cwnd starts at one BDP; `slow_start`: at `initial_window` packets.
    pub start: StartMode,
    /// Initial window of slow start, packets.
    pub initial_window: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { g: 1.0 / 16.0, initial_alpha: 1.0, start: StartMode::LineRate, initial_window: 10 }
    }
}

impl DctcpConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g.is_finite() && self.g > 0.0 && self.g <= 1.0) {
            return Err(format!("dctcp: g must be in (0, 1], got {}", self.g));
        }
        if !(self.initial_alpha.is_finite() && (0.0..=1.0).contains(&self.initial_alpha)) {
            return Err(format!("dctcp: initial_alpha must be in [0, 1], got {}", self.initial_alpha));
        }
        if self.initial_window == 0 {
            return Err("dctcp: initial_window must be at least 1 packet".into());
        }
        Ok(())
    }
}

/// DCTCP sender state of one flow.
#[derive(Clone, Debug)]
pub struct Dctcp {
    pub tcp: TcpWindow,
    line_rate: Rate,
    g: f64,
    alpha: f64,
    /// End of the current observation window (`None` until the first ACK).
    window_end: Option<u64>,
    bytes_acked: u64,
    bytes_marked: u64,
    /// CWR: no further ECN cut until the cumulative ACK passes this byte.
    cwr_end: Option<u64>,
    /// ECN cuts made (for tests and statistics).
    pub cuts: u32,
    /// Over the whole flow: bytes acknowledged, bytes whose ACK echoed ECN, and the sum and count
    /// of alpha's values after each update (statistics; alpha's mean should track the marked
    /// fraction).
    pub acked_total: u64,
    pub marked_total: u64,
    alpha_sum: f64,
    alpha_updates: u64,
}

impl Dctcp {
    pub fn new(cfg: &DctcpConfig, info: &FlowInfo) -> Dctcp {
        let bdp = info.line_rate.bytes_in(info.base_rtt);
        Dctcp {
            tcp: TcpWindow::new(info.mtu, cfg.start, cfg.initial_window, bdp),
            line_rate: info.line_rate,
            g: cfg.g,
            alpha: cfg.initial_alpha,
            window_end: None,
            bytes_acked: 0,
            bytes_marked: 0,
            cwr_end: None,
            cuts: 0,
            acked_total: 0,
            marked_total: 0,
            alpha_sum: 0.0,
            alpha_updates: 0,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn cwnd(&self) -> u64 {
        self.tcp.cwnd
    }

    /// Mean of alpha over its updates so far (alpha itself before the first).
    pub fn alpha_mean(&self) -> f64 {
        if self.alpha_updates == 0 {
            self.alpha
        } else {
            self.alpha_sum / self.alpha_updates as f64
        }
    }

    /// Alpha's bookkeeping for one ACK (also used by Pulser while its window is pinned).
    pub fn observe(&mut self, ack: &AckInfo) {
        self.bytes_acked += ack.newly_acked;
        self.acked_total += ack.newly_acked;
        if ack.ecn_echo {
            self.bytes_marked += ack.newly_acked;
            self.marked_total += ack.newly_acked;
        }
        match self.window_end {
            None => self.window_end = Some(ack.snd_nxt),
            Some(end) if ack.ack_seq >= end => {
                let f = if self.bytes_acked > 0 { self.bytes_marked as f64 / self.bytes_acked as f64 } else { 0.0 };
                self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
                self.alpha_sum += self.alpha;
                self.alpha_updates += 1;
                self.bytes_acked = 0;
                self.bytes_marked = 0;
                self.window_end = Some(ack.snd_nxt.max(ack.ack_seq + 1));
            }
            Some(_) => {}
        }
        if let Some(e) = self.cwr_end {
            if ack.ack_seq > e {
                self.cwr_end = None;
            }
        }
        self.tcp.update_recovery(ack);
    }

    /// The window reaction to one ACK after `observe`.
    pub fn react(&mut self, ack: &AckInfo) {
        if ack.ecn_echo {
            if self.cwr_end.is_none() {
                let w = (self.tcp.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
                self.tcp.set_cwnd(w);
                self.cwr_end = Some(ack.snd_nxt);
                self.cuts += 1;
            }
        } else if self.cwr_end.is_none() && !self.tcp.in_recovery() {
            self.tcp.grow(ack.newly_acked);
        }
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, _now: Time, ack: &AckInfo) {
        self.observe(ack);
        self.react(ack);
    }
    fn on_nack(&mut self, _now: Time, ack: &AckInfo) {
        self.tcp.on_loss(ack.snd_nxt);
    }
    fn on_timeout(&mut self, _now: Time) {
        self.cwr_end = None;
        self.tcp.on_timeout();
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        Some(self.tcp.cwnd)
    }
    #[inline]
    fn rate(&self) -> Rate {
        self.line_rate
    }
}

impl crate::registry::Declared for DctcpConfig {
    const NAME: &'static str = "dctcp";
    const ABOUT: &'static str = "DCTCP (Alizadeh et al., SIGCOMM 2010, §3.1), window-based";
}

impl super::registry::Algorithm for DctcpConfig {
    fn validate(&self) -> Result<(), String> {
        DctcpConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::Dctcp(Box::new(Dctcp::new(self, info)))
    }
    fn runs_over_tcp(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn info() -> FlowInfo {
        // 10 Gb/s x 80 us = 100 KB BDP
        FlowInfo { line_rate: Rate::gbps(10), base_rtt: Time::from_us(80), mtu: 1000 }
    }

    fn ack(seq: u64, snd_nxt: u64, ecn: bool) -> AckInfo<'static> {
        AckInfo { ack_seq: seq, newly_acked: MSS, ecn_echo: ecn, snd_nxt, ..Default::default() }
    }

    /// Feed `windows` windows of `w` per-packet ACKs, the first `marked_per_window` of each marked,
    /// through alpha's bookkeeping only (no window reaction), so alpha's response is seen alone.
    fn run_windows(cc: &mut Dctcp, windows: usize, w: u64, marked_per_window: u64) -> u64 {
        let mut seq = 0;
        for _ in 0..windows {
            let end = seq + w * MSS;
            for k in 0..w {
                seq += MSS;
                cc.observe(&ack(seq, end + w * MSS, k < marked_per_window));
            }
        }
        seq
    }

    #[test]
    fn defaults_follow_the_paper() {
        let c = DctcpConfig::default();
        assert_eq!(c.g, 1.0 / 16.0);
        assert_eq!(c.initial_alpha, 1.0);
        assert_eq!(c.start, StartMode::LineRate);
        assert_eq!(c.initial_window, 10);
        assert!(c.validate().is_ok());
        assert!(DctcpConfig { g: 0.0, ..c.clone() }.validate().is_err());
        assert!(DctcpConfig { initial_alpha: 2.0, ..c }.validate().is_err());
        let cc = Dctcp::new(&DctcpConfig::default(), &info());
        assert_eq!(cc.window(), Some(100_000));
        assert_eq!(cc.rate(), Rate::gbps(10));
        let ss = Dctcp::new(&DctcpConfig { start: StartMode::SlowStart, ..Default::default() }, &info());
        assert_eq!(ss.window(), Some(10_000));
    }

    #[test]
    fn alpha_tracks_the_marked_fraction() {
        for (marked, expect) in [(0u64, 0.0), (5, 0.25), (10, 0.5), (20, 1.0)] {
            let mut cc = Dctcp::new(&DctcpConfig::default(), &info());
            run_windows(&mut cc, 200, 20, marked);
            assert!((cc.alpha() - expect).abs() < 1e-3, "{marked}/20 marked: alpha {} vs {expect}", cc.alpha());
        }
    }

    #[test]
    fn alpha_updates_once_per_window_with_gain_g() {
        let mut cc = Dctcp::new(&DctcpConfig { initial_alpha: 0.0, ..Default::default() }, &info());
        // first ACK opens the first window, ending at snd_nxt = 10 packets
        cc.observe(&ack(MSS, 10 * MSS, true));
        assert_eq!(cc.alpha(), 0.0);
        for k in 2..10 {
            cc.observe(&ack(k * MSS, 20 * MSS, k % 2 == 0));
            assert_eq!(cc.alpha(), 0.0, "no update inside the window");
        }
        // the ACK reaching 10 packets closes it: 5 of 10 marked (packets 1,2,4,6,8)
        cc.observe(&ack(10 * MSS, 20 * MSS, false));
        assert!((cc.alpha() - 0.5 / 16.0).abs() < 1e-12, "{}", cc.alpha());
    }

    #[test]
    fn cut_by_alpha_over_two_once_per_window() {
        let mut cc = Dctcp::new(&DctcpConfig { initial_alpha: 0.5, ..Default::default() }, &info());
        cc.on_ack(Time::ZERO, &ack(MSS, 100 * MSS, false));
        let w0 = cc.cwnd();
        cc.on_ack(Time::ZERO, &ack(2 * MSS, 100 * MSS, true));
        // alpha 0.5 (no window closed yet): cwnd x 0.75
        assert_eq!(cc.cwnd(), (w0 as f64 * 0.75) as u64);
        assert_eq!(cc.cuts, 1);
        let w1 = cc.cwnd();
        // more marks in the same window: no further cut, no growth
        for k in 3..50 {
            cc.on_ack(Time::ZERO, &ack(k * MSS, 120 * MSS, true));
            cc.on_ack(Time::ZERO, &ack(k * MSS, 120 * MSS, false));
        }
        assert_eq!(cc.cwnd(), w1);
        // past the CWR point, a mark cuts again
        cc.on_ack(Time::ZERO, &ack(101 * MSS, 200 * MSS, true));
        assert_eq!(cc.cuts, 2);
        assert!(cc.cwnd() < w1);
    }

    #[test]
    fn unmarked_acks_grow_like_tcp_and_loss_halves() {
        let mut cc = Dctcp::new(&DctcpConfig { start: StartMode::SlowStart, ..Default::default() }, &info());
        let mut seq = 0;
        for _ in 0..10 {
            seq += MSS;
            cc.on_ack(Time::ZERO, &ack(seq, seq + 10 * MSS, false));
        }
        assert_eq!(cc.cwnd(), 20 * MSS);
        cc.on_nack(Time::ZERO, &AckInfo { ack_seq: seq, snd_nxt: seq + 20 * MSS, ..Default::default() });
        assert_eq!(cc.cwnd(), 10 * MSS);
        cc.on_timeout(Time::ZERO);
        assert_eq!(cc.cwnd(), MSS);
    }
}
