//! ICTCP (Wu, Feng, Guo, Zhang, "ICTCP: Incast Congestion Control for TCP in Data-Center
//! Networks", IEEE/ACM ToN 21(2), 2013; CoNEXT 2010): the receiver limits incast by adjusting the
//! receive window it advertises on each connection; the senders run ordinary TCP and obey it.
//! The paper's design section has four parts, cited below by name: "control trigger: available
//! bandwidth", "per connection control interval: 2*RTT", "window adjustment on single
//! connection" and "fairness controller for multiple connections".
//!
//! **Receiver, per interface** ("control trigger: available bandwidth"). Time is divided
//! into slots of two sub-slots of length `T`, where `T` is the average RTT of the interface's
//! connections weighted by their traffic (we weight by the bytes each brought in the last slot).
//! The first sub-slot measures the received traffic `BW_T`; at the start of the second,
//! `BW_A = max(0, alpha x C - BW_T)` (C the interface rate, `alpha = 0.9`) becomes the quota for
//! window increases in that sub-slot: only there may a window grow, and each increase of `d` bytes
//! on a connection with RTT `rtt` consumes `d / rtt` of it. Decreases may happen in either
//! sub-slot.
//!
//! **Receiver, per connection** ("per connection control interval", "window adjustment on single
//! connection"). Every RTT the connection samples its throughput
//! `b_s` (bytes received in the last RTT / RTT) and smooths it as
//! `b_m = max(b_s, beta x b_m + (1 - beta) x b_s)`; the expected throughput is
//! `b_e = max(b_m, rwnd / RTT)` and the difference ratio `d_b = (b_e - b_m) / b_e`. Then:
//! - `d_b <= gamma1` or `d_b <= MSS / rwnd`: increase `rwnd` if it is the second sub-slot and the
//!   quota allows (taking the increase from the quota);
//! - `d_b > gamma2` for three RTTs in a row: decrease `rwnd` by one MSS, never below 2 MSS;
//! - otherwise keep it.
//!   A connection's window changes at most once per `2 x RTT` (the effect of a change shows one
//!   RTT later and is measured over the next).
//!
//! **Fairness** ("fairness controller for multiple connections"): when `BW_A < 0.2 x C` (little room left), a connection whose window is
//! above the average of the interface's connections gives back one MSS, in the first sub-slot.
//!
//! **Choices where the paper leaves room**, all configurable:
//! - the increase step. The paper grows the window "like TCP"; we double it until the connection's
//!   first decrease (a receive-window slow start, `slow_start = true`) and add one MSS per step
//!   after, always capped by the quota. With `slow_start = false` every step is one MSS, which at
//!   10-100 Gb/s takes hundreds of RTTs to fill a path;
//! - the initial advertised window: `initial_rwnd = 2 MSS`, the paper's minimum;
//! - `beta = 0.75` for the throughput EWMA;
//! - the receiver's RTT: TCP timestamps give the receiver the connection's RTT. Each ACK leaves
//!   with the receiver's clock, the sender echoes the newest on its data, and the first segment
//!   echoing a new stamp is one sample (`net::timestamps`), smoothed with RFC 6298's gain 1/8;
//!   the flow's unloaded RTT until the first sample. The receiver reads nothing of the sender's
//!   state, so a flow's two ends may run on different threads (`crate::engine`).
//!
//! **Sender**: TCP (slow start from 10 packets, congestion avoidance, halving on loss, one MSS on a
//! timeout; `cc::window`), ignoring ECN; its window is `min(cwnd, advertised rwnd)`. The window
//! travels in each ACK (`packet::Tags::rwnd`), so the sender learns it one path delay later.
//!
//! Defaults: `alpha = 0.9` (control trigger), `gamma1 = 0.1`, `gamma2 = 0.5` (the values of the
//! paper's experiments), minimum window 2 MSS and three RTTs before a decrease (single-connection
//! adjustment), fairness threshold 0.2 (fairness controller). These are the paper's as we recall
//! and summarise them (no copy of the paper is in `papers/`); `beta`, the initial window and the
//! receive-window slow start are ours, as said above.

use super::window::{StartMode, TcpWindow};
use super::{AckInfo, CongestionControl, FlowInfo};
use crate::time::{Rate, Time, PS_PER_S};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IctcpConfig {
    /// `alpha`: share of the interface rate ICTCP fills, in (0, 1].
    pub alpha: f64,
    /// Weight of the old measured throughput in its EWMA, in [0, 1].
    pub beta: f64,
    /// Increase below this throughput-difference ratio.
    pub gamma1: f64,
    /// Decrease above this one (for `decrease_after` RTTs in a row).
    pub gamma2: f64,
    /// RTTs in a row above `gamma2` before a decrease.
    pub decrease_after: u32,
    /// Window advertised before the first adjustment, packets (MSS).
    pub initial_rwnd: u32,
    /// Smallest window advertised, packets.
    pub min_rwnd: u32,
    /// Double the window per increase until the connection's first decrease.
    pub slow_start: bool,
    /// The fairness controller's rule.
    pub fairness: bool,
    /// `BW_A` below this share of the interface rate triggers it.
    pub fairness_threshold: f64,
    /// The sender TCP's initial window, packets.
    pub initial_window: u32,
}

impl Default for IctcpConfig {
    fn default() -> Self {
        IctcpConfig {
            alpha: 0.9,
            beta: 0.75,
            gamma1: 0.1,
            gamma2: 0.5,
            decrease_after: 3,
            initial_rwnd: 2,
            min_rwnd: 2,
            slow_start: true,
            fairness: true,
            fairness_threshold: 0.2,
            initial_window: 10,
        }
    }
}

impl IctcpConfig {
    pub fn validate(&self) -> Result<(), String> {
        for (n, v) in [("alpha", self.alpha), ("beta", self.beta), ("gamma1", self.gamma1), ("gamma2", self.gamma2), ("fairness_threshold", self.fairness_threshold)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(format!("ictcp: {n} must be in [0, 1], got {v}"));
            }
        }
        if self.gamma1 > self.gamma2 {
            return Err(format!("ictcp: gamma1 ({}) is above gamma2 ({})", self.gamma1, self.gamma2));
        }
        if self.min_rwnd == 0 || self.initial_rwnd < self.min_rwnd {
            return Err("ictcp: need 1 <= min_rwnd <= initial_rwnd".into());
        }
        if self.initial_window == 0 {
            return Err("ictcp: initial_window must be at least 1 packet".into());
        }
        Ok(())
    }
}

fn secs(t: Time) -> f64 {
    t.0 as f64 / PS_PER_S as f64
}

/// ICTCP's per-interface state at a receiving host (the control trigger).
#[derive(Clone, Debug, Default)]
pub struct IctcpHost {
    started: bool,
    /// Interface rate `C`, bit/s.
    capacity: f64,
    slot_start: Time,
    /// Sub-slot length `T`.
    sub: Time,
    /// Bytes received in the current first sub-slot.
    first_bytes: u64,
    measured: bool,
    /// Traffic-weighted RTT sum (bytes x ps) and bytes, for the next `T`.
    w_rtt: f64,
    w_bytes: u64,
    /// Remaining increase quota of this second sub-slot, bit/s.
    quota: f64,
    /// `BW_A` of the current slot, bit/s.
    pub bw_a: f64,
    n_conn: u64,
    sum_rwnd: u64,
    /// Largest sum of advertised windows seen at once.
    pub peak_sum_rwnd: u64,
    /// Slots run.
    pub slots: u64,
}

impl IctcpHost {
    fn advance(&mut self, now: Time, alpha: f64) {
        loop {
            if !self.measured && now >= self.slot_start + self.sub {
                let bw_t = self.first_bytes as f64 * 8.0 / secs(self.sub).max(1e-12);
                self.bw_a = (alpha * self.capacity - bw_t).max(0.0);
                self.quota = self.bw_a;
                self.measured = true;
            }
            let end = self.slot_start + Time(2 * self.sub.0);
            if now < end {
                return;
            }
            // next slot: T from the traffic-weighted RTT of the slot that ended
            if self.w_bytes > 0 {
                self.sub = Time((self.w_rtt / self.w_bytes as f64) as u64).max(Time(1));
            }
            self.w_rtt = 0.0;
            self.w_bytes = 0;
            self.slot_start = if now >= end + Time(2 * self.sub.0) { now } else { end };
            self.first_bytes = 0;
            self.measured = false;
            self.quota = 0.0;
            self.slots += 1;
        }
    }

    #[inline]
    fn in_second(&self, now: Time) -> bool {
        now >= self.slot_start + self.sub
    }

    fn avg_rwnd(&self) -> f64 {
        if self.n_conn == 0 {
            0.0
        } else {
            self.sum_rwnd as f64 / self.n_conn as f64
        }
    }

    fn set_rwnd(&mut self, old: u64, new: u64) {
        self.sum_rwnd = self.sum_rwnd - old + new;
        self.peak_sum_rwnd = self.peak_sum_rwnd.max(self.sum_rwnd);
    }
}

/// ICTCP's per-connection state at the receiver (control interval, window adjustment).
#[derive(Clone, Debug)]
pub struct IctcpConn {
    mss: u64,
    /// The advertised receive window, bytes.
    pub rwnd: u64,
    /// Largest window advertised.
    pub max_rwnd: u64,
    /// Measured throughput `b_m`, bit/s (`None` before the first sample).
    bm: Option<f64>,
    sample_start: Time,
    sample_bytes: u64,
    last_adjust: Time,
    dec_count: u32,
    slow_start: bool,
    registered: bool,
    done: bool,
    /// RTT the receiver works with (see the module docs), and whether a sample set it yet.
    pub srtt: Time,
    rtt_seen: bool,
    pub increases: u32,
    pub decreases: u32,
}

/// ICTCP at one flow: the sender's TCP and the window it last heard (`tcp`, `adv`), and the
/// receiver's connection state (`rx`). One struct serves both ends, but each end touches only its
/// own half: the receiver's hooks (`on_data_received`) read and write `rx`, the sender's the
/// rest, and what one tells the other travels in packets (the window in ACKs, RTT samples by
/// timestamps), so a flow's two ends may each run on a copy of their own.
#[derive(Clone, Debug)]
pub struct Ictcp {
    cfg: IctcpConfig,
    pub tcp: TcpWindow,
    pub rx: IctcpConn,
    /// The receive window the sender obeys (from the latest ACK).
    pub adv: u64,
    /// ACKs that arrived with no window: the sender kept one the receiver may have moved on
    /// from. Every ACK of an ICTCP flow advertises one, the delayed-ACK timer's included, so this
    /// stays 0; it is what a test reads to see that none is left out.
    pub acks_without_window: u64,
    line_rate: Rate,
}

impl Ictcp {
    pub fn new(cfg: &IctcpConfig, info: &FlowInfo) -> Ictcp {
        let mss = info.mtu.max(1) as u64;
        let rwnd = cfg.initial_rwnd.max(cfg.min_rwnd).max(1) as u64 * mss;
        Ictcp {
            cfg: cfg.clone(),
            tcp: TcpWindow::new(info.mtu, StartMode::SlowStart, cfg.initial_window, 0),
            rx: IctcpConn {
                mss,
                rwnd,
                max_rwnd: rwnd,
                bm: None,
                sample_start: Time::ZERO,
                sample_bytes: 0,
                last_adjust: Time::ZERO,
                dec_count: 0,
                slow_start: cfg.slow_start,
                registered: false,
                done: false,
                srtt: info.base_rtt.max(Time(1)),
                rtt_seen: false,
                increases: 0,
                decreases: 0,
            },
            adv: rwnd,
            acks_without_window: 0,
            line_rate: info.line_rate,
        }
    }

    /// The receiver took RTT sample `r` (RFC 6298's smoothing: `srtt = 7/8 srtt + 1/8 r`, the
    /// first sample taken as it is).
    pub fn rtt_sample(&mut self, r: Time) {
        let c = &mut self.rx;
        if r > Time::ZERO {
            c.srtt = if c.rtt_seen { Time((c.srtt.0 * 7 + r.0) / 8) } else { r };
            c.rtt_seen = true;
        }
    }

    /// The receiver got a data packet of `wire` bytes (`payload` of them payload) at `now` on an
    /// interface of rate `capacity`, with `finished` set when it completed the flow. Returns the
    /// window to advertise in the ACK.
    pub fn on_receive(&mut self, host: &mut IctcpHost, capacity: Rate, now: Time, wire: u32, payload: u32, finished: bool) -> u64 {
        let cfg = &self.cfg;
        let c = &mut self.rx;
        let rtt = c.srtt;
        if !host.started {
            host.started = true;
            host.capacity = capacity.0 as f64;
            host.slot_start = now;
            host.sub = rtt;
        }
        host.advance(now, cfg.alpha);
        if now < host.slot_start + host.sub {
            host.first_bytes += wire as u64;
        }
        host.w_rtt += wire as f64 * rtt.0 as f64;
        host.w_bytes += wire as u64;
        if c.done {
            return c.rwnd;
        }
        if !c.registered {
            c.registered = true;
            host.n_conn += 1;
            host.set_rwnd(0, c.rwnd);
            c.sample_start = now;
            c.last_adjust = now;
        }
        c.sample_bytes += payload as u64;
        if now >= c.sample_start + rtt {
            let elapsed = secs(now - c.sample_start);
            let bs = c.sample_bytes as f64 * 8.0 / elapsed;
            let bm = match c.bm {
                None => bs,
                Some(old) => bs.max(cfg.beta * old + (1.0 - cfg.beta) * bs),
            };
            c.bm = Some(bm);
            c.sample_start = now;
            c.sample_bytes = 0;
            let be = bm.max(c.rwnd as f64 * 8.0 / secs(rtt));
            let db = if be > 0.0 { (be - bm) / be } else { 0.0 };
            let eligible = now >= c.last_adjust + Time(2 * rtt.0);
            let old = c.rwnd;
            if db <= cfg.gamma1 || db <= c.mss as f64 / c.rwnd as f64 {
                c.dec_count = 0;
                if eligible && host.in_second(now) {
                    let want = if c.slow_start { c.rwnd } else { c.mss };
                    // the quota (bit/s) buys quota x rtt / 8 bytes of window
                    let room = (host.quota * secs(rtt) / 8.0) as u64 / c.mss * c.mss;
                    let inc = want.min(room);
                    if inc >= c.mss {
                        c.rwnd += inc;
                        host.quota -= inc as f64 * 8.0 / secs(rtt);
                        c.last_adjust = now;
                        c.increases += 1;
                    }
                }
            } else if db > cfg.gamma2 {
                c.dec_count += 1;
                if c.dec_count >= cfg.decrease_after && eligible {
                    c.dec_count = 0;
                    c.rwnd = c.rwnd.saturating_sub(c.mss).max(cfg.min_rwnd as u64 * c.mss);
                    c.slow_start = false;
                    c.last_adjust = now;
                    c.decreases += 1;
                }
            } else {
                c.dec_count = 0;
            }
            if cfg.fairness
                && c.rwnd == old
                && eligible
                && !host.in_second(now)
                && host.bw_a < cfg.fairness_threshold * host.capacity
                && c.rwnd as f64 > host.avg_rwnd()
                && c.rwnd > cfg.min_rwnd as u64 * c.mss
            {
                c.rwnd -= c.mss;
                c.slow_start = false;
                c.last_adjust = now;
                c.decreases += 1;
            }
            if c.rwnd != old {
                host.set_rwnd(old, c.rwnd);
                c.max_rwnd = c.max_rwnd.max(c.rwnd);
            }
        }
        if finished {
            c.done = true;
            host.n_conn -= 1;
            host.set_rwnd(c.rwnd, 0);
        }
        c.rwnd
    }
}

impl CongestionControl for Ictcp {
    fn on_data_received(&mut self, iface: &mut super::RxIface, rx: &super::RxPacket) -> Option<u64> {
        if let Some(r) = rx.rtt {
            self.rtt_sample(r);
        }
        Some(self.on_receive(&mut iface.ictcp, rx.capacity, rx.now, rx.wire, rx.payload, rx.finishing))
    }

    fn on_ack(&mut self, _now: Time, ack: &AckInfo) {
        match ack.adv_window {
            Some(w) => self.adv = w,
            None => self.acks_without_window += 1,
        }
        self.tcp.update_recovery(ack);
        if !self.tcp.in_recovery() {
            self.tcp.grow(ack.newly_acked);
        }
    }
    fn on_nack(&mut self, _now: Time, ack: &AckInfo) {
        self.tcp.on_loss(ack.snd_nxt);
    }
    fn on_timeout(&mut self, _now: Time) {
        self.tcp.on_timeout();
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        Some(self.tcp.cwnd.min(self.adv.max(self.tcp.mss)))
    }
    #[inline]
    fn rate(&self) -> Rate {
        self.line_rate
    }
}

impl crate::registry::Declared for IctcpConfig {
    const NAME: &'static str = "ictcp";
    const ABOUT: &'static str = "ICTCP (Wu et al., ToN 2013, §4): receiver-side window control";
}

impl super::registry::Algorithm for IctcpConfig {
    fn validate(&self) -> Result<(), String> {
        IctcpConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::Ictcp(Box::new(Ictcp::new(self, info)))
    }
    fn runs_over_tcp(&self) -> bool {
        true
    }
    fn receiver_window(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const C: Rate = Rate::gbps(10);

    fn us(v: u64) -> Time {
        Time::from_us(v)
    }

    fn ictcp(cfg: IctcpConfig) -> Ictcp {
        Ictcp::new(&cfg, &FlowInfo { line_rate: C, base_rtt: us(100), mtu: 1000 })
    }

    /// Deliver `per_rtt` packets of 1000 B to each connection, evenly, for `rtts` RTTs of 100 us.
    fn drive(conns: &mut [Ictcp], host: &mut IctcpHost, per_rtt: impl Fn(&Ictcp) -> u64, rtts: u64, t0: Time) -> Time {
        let mut t = t0;
        for _ in 0..rtts {
            let counts: Vec<u64> = conns.iter().map(&per_rtt).collect();
            let total: u64 = counts.iter().sum::<u64>().max(1);
            let step = us(100).0 / total;
            let mut left = counts.clone();
            while left.iter().any(|&l| l > 0) {
                for (i, c) in conns.iter_mut().enumerate() {
                    if left[i] > 0 {
                        left[i] -= 1;
                        t += Time(step);
                        c.on_receive(host, C, t, 1048, 1000, false);
                    }
                }
            }
        }
        t
    }

    #[test]
    fn defaults_follow_the_paper() {
        let c = IctcpConfig::default();
        assert_eq!((c.alpha, c.gamma1, c.gamma2), (0.9, 0.1, 0.5));
        assert_eq!((c.min_rwnd, c.decrease_after), (2, 3));
        assert_eq!(c.fairness_threshold, 0.2);
        assert!(c.validate().is_ok());
        assert!(IctcpConfig { gamma1: 0.6, ..c.clone() }.validate().is_err());
        assert!(IctcpConfig { min_rwnd: 0, ..c }.validate().is_err());
        let x = ictcp(IctcpConfig::default());
        assert_eq!(x.rx.rwnd, 2 * MSS);
        // the sender obeys the smaller of cwnd and the advertised window
        assert_eq!(x.window(), Some(2 * MSS));
    }

    #[test]
    fn lone_connection_grows_its_window_within_the_quota() {
        let mut host = IctcpHost::default();
        let mut conns = vec![ictcp(IctcpConfig::default())];
        // the sender fills whatever window is advertised: rwnd per RTT
        drive(&mut conns, &mut host, |c| c.rx.rwnd / MSS, 60, Time::ZERO);
        let w = conns[0].rx.rwnd;
        // 0.9 x 10 Gb/s x 100 us = 112.5 KB is all the quota ever allows
        assert!(w > 50 * MSS, "window stayed at {w}");
        assert!(w <= 113 * MSS + 2 * MSS, "window {w} beyond alpha x C x RTT");
        assert!(conns[0].rx.increases > 3);
    }

    #[test]
    fn incast_keeps_the_sum_of_windows_near_alpha_bdp() {
        let mut host = IctcpHost::default();
        let mut conns: Vec<Ictcp> = (0..24).map(|_| ictcp(IctcpConfig::default())).collect();
        // the link carries at most 10 Gb/s: 125 packets per 100 us in total, shared by window
        drive(
            &mut conns,
            &mut host,
            |c| c.rx.rwnd / MSS,
            80,
            Time::ZERO,
        );
        let sum: u64 = conns.iter().map(|c| c.rx.rwnd).sum();
        let max = conns.iter().map(|c| c.rx.rwnd).max().unwrap();
        assert!(sum <= 130 * MSS, "sum of windows {sum}");
        assert!(max <= 20 * MSS, "largest window {max}");
        assert!(host.peak_sum_rwnd <= 135 * MSS, "peak {}", host.peak_sum_rwnd);
    }

    #[test]
    fn unused_window_is_decreased_after_three_rtts() {
        let mut host = IctcpHost::default();
        let mut c = ictcp(IctcpConfig { fairness: false, ..Default::default() });
        c.rx.rwnd = 40 * MSS;
        host.n_conn = 0;
        // the sender uses only 5 of 40 packets per RTT: d_b = 1 - 5/40 > gamma2
        let mut conns = vec![c];
        drive(&mut conns, &mut host, |_| 5, 12, Time::ZERO);
        let c = &conns[0];
        assert!(c.rx.decreases >= 2, "decreases {}", c.rx.decreases);
        assert!(c.rx.rwnd < 40 * MSS && c.rx.rwnd >= 36 * MSS, "rwnd {}", c.rx.rwnd);
        assert_eq!(c.rx.increases, 0);
    }

    #[test]
    fn sender_obeys_advertised_window_and_runs_tcp() {
        let mut x = ictcp(IctcpConfig::default());
        x.on_ack(Time::ZERO, &AckInfo { ack_seq: 1000, newly_acked: 1000, adv_window: Some(7000), rtt: us(50), ..Default::default() });
        assert_eq!(x.tcp.cwnd, 11_000);
        assert_eq!(x.window(), Some(7000));
        x.on_ack(Time::ZERO, &AckInfo { ack_seq: 2000, newly_acked: 1000, adv_window: Some(50_000), rtt: us(90), ..Default::default() });
        assert_eq!(x.window(), Some(12_000));
        assert_eq!(x.rx.srtt, us(100), "the sender's RTT samples are not the receiver's");
    }

    #[test]
    fn the_receiver_smooths_its_own_rtt_samples() {
        let mut x = ictcp(IctcpConfig::default());
        let mut host = crate::cc::RxIface::default();
        let rx = |t: u64, rtt: Option<Time>| crate::cc::RxPacket { now: us(t), wire: 1048, payload: 1000, finishing: false, capacity: C, rtt };
        x.on_data_received(&mut host, &rx(1, None));
        assert_eq!(x.rx.srtt, us(100), "the unloaded RTT before a sample");
        x.on_data_received(&mut host, &rx(2, Some(us(50))));
        assert_eq!(x.rx.srtt, us(50), "the first sample as it is");
        x.on_data_received(&mut host, &rx(3, Some(us(90))));
        assert_eq!(x.rx.srtt, Time((us(50).0 * 7 + us(90).0) / 8));
    }
}
