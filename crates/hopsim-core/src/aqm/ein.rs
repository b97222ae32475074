//! Explicit Incast Notification: Pulser's switch-side incast detector (Almasi et al., "Pulser:
//! Fast Congestion Response Using Explicit Incast Notifications for Datacenter Networks",
//! §III-A, Algorithm 1).
//!
//! Per egress port, at every dequeue (Algorithm 1 line 1), with `Qlen` the bytes the port still
//! holds after the packet left (as ECN marking measures it):
//! - line 2: `Gradient = (Qlen - Qlen_prev) / (T - T_prev)`, here in bytes per second;
//! - lines 3-6: `Qlen_prev <- Qlen`, `T_prev <- T`, `EIN_prev <- EIN`, `EIN <- 0`;
//! - line 7: the average of the last `N` gradients (a ring of `N` samples with a running sum). A
//!   port starts with `N` zero samples: before its first dequeue its queue was not moving, and an
//!   average over one or two samples would mark on a one-packet wobble;
//! - lines 8-9: `EIN <- 1` if that average exceeds `EIN_threshold`;
//! - lines 10-16: otherwise `EIN <- 1` if `EIN_prev == 1` and `Qlen > HighWaterMark` (the safety
//!   net that keeps marking while a built-up queue drains slowly).
//!
//! The packet being dequeued carries the new `EIN` bit (§III-A: "mark packets ... when packets are
//! dequeued").
//!
//! Defaults (§III-A and §IV): `N = 50` (50 MTU packets at 10 Gb/s take 60 us, the length of 80% of
//! incasts), `EIN_threshold = 0.25 x LineRate` (the port's rate), `HighWaterMark` = the ECN
//! marking threshold (§III-A: "We set HighWaterMark to be equal to ECN threshold"), which we take
//! as the port's ECN `kmin` (DCTCP's single threshold K when `kmin = kmax`).
//!
//! Gradients are integers (bytes/s, exact to the byte per second) so runs are bit-identical.
//! Two dequeues at the same instant (impossible on one serialising port, but guarded) give no
//! sample.

use crate::time::{Rate, Time, PS_PER_S};
use serde::{Deserialize, Serialize};

/// Algorithm 1's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EinConfig {
    /// `N`: dequeue samples averaged (Pulser §III-A: 50).
    pub n: u32,
    /// `EIN_threshold` as a fraction of the port's line rate (Pulser §III-A: 0.25).
    pub threshold: f64,
    /// `HighWaterMark` in bytes; `None` = the port's ECN threshold `kmin` (Pulser §III-A).
    pub high_water_mark: Option<u64>,
}

impl Default for EinConfig {
    fn default() -> Self {
        EinConfig { n: 50, threshold: 0.25, high_water_mark: None }
    }
}

impl EinConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.n == 0 || self.n > 1_000_000 {
            return Err(format!("pulser: ein.n must be 1 to 1000000, got {}", self.n));
        }
        if !(self.threshold.is_finite() && self.threshold >= 0.0) {
            return Err(format!("pulser: ein.threshold must be a non-negative fraction of line rate, got {}", self.threshold));
        }
        Ok(())
    }
}

/// Algorithm 1's state for one egress port.
#[derive(Clone, Debug)]
pub struct EinPort {
    /// `EIN_threshold` in bytes per second.
    threshold: i128,
    high_water_mark: u64,
    qlen_prev: u64,
    t_prev: Time,
    ein: bool,
    ring: Vec<i64>,
    head: usize,
    sum: i128,
    /// Packets this port has dequeued and marked, and the dequeue (1-based) that carried its
    /// first mark (for tests and statistics).
    pub dequeues: u64,
    pub marked: u64,
    pub first_mark: Option<u64>,
}

impl EinPort {
    pub fn new(cfg: &EinConfig, line_rate: Rate, ecn_kmin: u64) -> EinPort {
        let bytes_per_s = line_rate.0 as f64 / 8.0;
        EinPort {
            threshold: (cfg.threshold * bytes_per_s) as i128,
            high_water_mark: cfg.high_water_mark.unwrap_or(ecn_kmin),
            qlen_prev: 0,
            t_prev: Time::ZERO,
            ein: false,
            ring: vec![0; cfg.n.max(1) as usize],
            head: 0,
            sum: 0,
            dequeues: 0,
            marked: 0,
            first_mark: None,
        }
    }

    /// One dequeue at `now` leaving `qlen` bytes at the port: the EIN bit of the departing packet.
    #[inline]
    pub fn on_dequeue(&mut self, now: Time, qlen: u64) -> bool {
        self.dequeues += 1;
        let dt = now.0.saturating_sub(self.t_prev.0);
        if dt == 0 {
            self.qlen_prev = qlen;
            return self.ein;
        }
        // line 2 (bytes per second); |dq| < 2^64 and PS_PER_S < 2^40, so i128 cannot overflow
        let dq = qlen as i128 - self.qlen_prev as i128;
        let g = (dq * PS_PER_S as i128 / dt as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        // lines 3-6
        self.qlen_prev = qlen;
        self.t_prev = now;
        let ein_prev = self.ein;
        // line 7: running average of the last N gradients
        let n = self.ring.len();
        self.sum -= self.ring[self.head] as i128;
        self.ring[self.head] = g;
        self.sum += g as i128;
        self.head = if self.head + 1 == n { 0 } else { self.head + 1 };
        // lines 8-16: average > threshold  <=>  sum > threshold x N
        self.ein = self.sum > self.threshold * n as i128 || (ein_prev && qlen > self.high_water_mark);
        if self.ein {
            self.marked += 1;
            self.first_mark.get_or_insert(self.dequeues);
        }
        self.ein
    }

    /// Average gradient of the last `N` samples, bytes per second.
    pub fn average_gradient(&self) -> f64 {
        self.sum as f64 / self.ring.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::gbps(10);
    /// 1000 B at 10 Gb/s.
    const PKT_T: u64 = 800_000;

    fn port(n: u32, hwm: u64) -> EinPort {
        EinPort::new(&EinConfig { n, threshold: 0.25, high_water_mark: Some(hwm) }, LINE, 0)
    }

    #[test]
    fn defaults_follow_the_paper() {
        let c = EinConfig::default();
        assert_eq!(c.n, 50);
        assert_eq!(c.threshold, 0.25);
        assert_eq!(c.high_water_mark, None);
        assert!(c.validate().is_ok());
        assert!(EinConfig { n: 0, ..Default::default() }.validate().is_err());
        // HighWaterMark defaults to the ECN threshold
        let p = EinPort::new(&c, LINE, 65_000);
        assert_eq!(p.high_water_mark, 65_000);
        // 0.25 x 10 Gb/s = 312.5 MB/s
        assert_eq!(p.threshold, 312_500_000);
    }

    #[test]
    fn steady_queue_never_marks() {
        let mut p = port(50, 30_000);
        // the queue stands at 20 KB already (built slowly before the test starts)
        p.qlen_prev = 20_000;
        for k in 1..10_000u64 {
            // a queue that wobbles by one packet around 20 KB: zero average gradient
            let q = 20_000 + (k % 2) * 1000;
            assert!(!p.on_dequeue(Time(k * PKT_T), q), "k={k}");
        }
    }

    #[test]
    fn fast_growth_marks_within_n_dequeues() {
        // 24 senders into one port: the queue grows by 23 packets per packet time
        let mut p = port(50, 1_000_000);
        let mut t = 0;
        for _ in 0..200 {
            t += PKT_T;
            assert!(!p.on_dequeue(Time(t), 0));
        }
        let mut q = 0;
        let mut first = None;
        for k in 1..=50u64 {
            t += PKT_T;
            q += 23 * 1000;
            if p.on_dequeue(Time(t), q) && first.is_none() {
                first = Some(k);
            }
        }
        let k = first.expect("marks during a 24-to-1 onset");
        // avg after k samples = 23 x 10 Gb/s x k / 50 > 0.25 x 10 Gb/s from k = 1
        assert_eq!(k, 1);
    }

    #[test]
    fn gradient_just_above_threshold_needs_full_window() {
        // growth at 0.3 x line rate: marks only once the ring has forgotten the idle history
        let mut p = port(10, u64::MAX);
        let mut t = 0;
        for _ in 0..10 {
            t += PKT_T;
            p.on_dequeue(Time(t), 0);
        }
        let mut q = 0u64;
        let mut marks = vec![];
        for _ in 0..10 {
            t += PKT_T;
            q += 300; // 300 B per 1000 B of service: 0.3 x line rate
            marks.push(p.on_dequeue(Time(t), q));
        }
        // avg = 0.3 x k/10 > 0.25  <=>  k > 8.33
        assert_eq!(marks.iter().position(|&m| m), Some(8));
    }

    #[test]
    fn high_water_mark_keeps_marking_while_queue_is_high() {
        let mut p = port(5, 50_000);
        let mut t = 0;
        let mut q = 0;
        // build 100 KB fast
        for _ in 0..10 {
            t += PKT_T;
            q += 10_000;
            p.on_dequeue(Time(t), q);
        }
        assert!(p.on_dequeue(Time(t + PKT_T), q + 10_000));
        t += PKT_T;
        q += 10_000;
        // drain: gradient negative, but EIN stays on while Qlen > HighWaterMark
        let mut on = 0;
        while q > 0 {
            t += PKT_T;
            q -= 1000;
            if p.on_dequeue(Time(t), q) {
                on += 1;
            } else {
                break;
            }
        }
        assert!(q <= 50_000, "stopped marking at {q} B, above HighWaterMark");
        assert!(on > 0);
        // once off, a high queue alone does not switch it back on
        assert!(!p.on_dequeue(Time(t + PKT_T), q));
    }
}
