//! The window-based transport mode shared by the TCP-style algorithms (DCTCP, Pulser, ICTCP's
//! sender): a congestion window in payload bytes, ACK clocking, optional slow start and TCP's
//! reactions to loss.
//!
//! **How it runs in the host.** The algorithm's `window()` is `Some(cwnd)` and its `rate()` is the
//! line rate, so the NIC sends whenever the bytes in flight are under the window and every ACK
//! that frees window room clocks out more data (`net::host`). The host's own in-flight cap
//! (`transport.window`, one BDP by default, which the RDMA papers add) still applies on top; set it
//! to `off` for an unbounded TCP window.
//!
//! **Growth** (RFC 5681 §3.1): below `ssthresh`, slow start adds the newly acknowledged bytes, at
//! most 2 MSS per ACK (RFC 3465's limit `L = 2 MSS`, which matters when a cumulative ACK after a
//! go-back-N repair covers many packets); at or above it, congestion avoidance adds one MSS per
//! window of acknowledged bytes.
//!
//! **Start.** Either slow start from an initial window of 10 packets (RFC 6928; the "DCTCP + SS"
//! variant of BFC Appendix D), or "line rate": the window starts at one bandwidth-delay product of
//! the path and grows by congestion avoidance (the BFC paper's DCTCP, §6: "Flows start at line rate
//! to avoid degradation in FCTs from slow-start"; Appendix D: "initial window of the BDP").
//!
//! **Loss.** Under RoCE (the default transport) the host repairs losses go-back-N (a NACK from the
//! receiver, or the retransmission timeout); under `transport.mode = "tcp"` (`net::tcp`) by fast
//! retransmit on three duplicate ACKs, which calls `on_nack` here, and NewReno recovery. On a NACK the window halves (`ssthresh = cwnd/2`, `cwnd = ssthresh`, RFC 5681 §3.2
//! with the window standing in for the flight size), at most once per window of data: further
//! NACKs are ignored until the cumulative ACK passes the highest byte sent when the loss was
//! detected (NewReno's `recover`, RFC 6582). On a timeout, `ssthresh = max(cwnd/2, 2 MSS)` and
//! `cwnd` = one MSS (RFC 5681 §3.1, the loss window), and slow start follows.

use super::AckInfo;
use serde::{Deserialize, Serialize};

/// How a flow's window starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StartMode {
    /// `cwnd` = one BDP of the path, congestion avoidance from there (BFC §6).
    #[default]
    LineRate,
    /// Slow start from `initial_window` packets (RFC 6928: 10).
    SlowStart,
}

/// A TCP congestion window.
#[derive(Clone, Debug)]
pub struct TcpWindow {
    /// Payload bytes per packet (the MSS).
    pub mss: u64,
    /// Congestion window, payload bytes; never below one MSS.
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Acknowledged bytes not yet turned into congestion-avoidance growth.
    ca_acc: u64,
    /// Loss recovery: no further halving until the cumulative ACK passes this byte.
    recover: Option<u64>,
    /// Losses reacted to (NACK halvings) and timeouts taken, for tests and statistics.
    pub losses: u32,
    pub timeouts: u32,
}

impl TcpWindow {
    /// A window for a flow of MSS `mss` on a path whose BDP is `bdp` bytes.
    pub fn new(mss: u32, start: StartMode, initial_window: u32, bdp: u64) -> TcpWindow {
        let mss = mss.max(1) as u64;
        let (cwnd, ssthresh) = match start {
            StartMode::LineRate => {
                let w = bdp.max(mss);
                (w, w)
            }
            StartMode::SlowStart => ((initial_window.max(1) as u64) * mss, u64::MAX),
        };
        TcpWindow { mss, cwnd, ssthresh, ca_acc: 0, recover: None, losses: 0, timeouts: 0 }
    }

    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// In loss recovery (between a halving and the ACK that passes `recover`).
    #[inline]
    pub fn in_recovery(&self) -> bool {
        self.recover.is_some()
    }

    /// Leave loss recovery once the cumulative ACK passes its point; call on every ACK.
    #[inline]
    pub fn update_recovery(&mut self, ack: &AckInfo) {
        if let Some(r) = self.recover {
            if ack.ack_seq > r {
                self.recover = None;
            }
        }
    }

    /// Grow by `newly_acked` bytes (slow start or congestion avoidance).
    #[inline]
    pub fn grow(&mut self, newly_acked: u64) {
        if newly_acked == 0 {
            return;
        }
        if self.in_slow_start() {
            // may overshoot ssthresh by less than one step, as in Linux
            self.cwnd += newly_acked.min(2 * self.mss);
        } else {
            self.ca_acc += newly_acked;
            while self.ca_acc >= self.cwnd {
                self.ca_acc -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }

    /// Set the window (a multiplicative cut, Pulser's jumps), never below one MSS; `ssthresh`
    /// follows so that growth continues in congestion avoidance.
    #[inline]
    pub fn set_cwnd(&mut self, w: u64) {
        self.cwnd = w.max(self.mss);
        self.ssthresh = self.cwnd;
        self.ca_acc = 0;
    }

    /// A NACK reported a loss while `snd_max` bytes had been sent: halve, once per window.
    pub fn on_loss(&mut self, snd_max: u64) -> bool {
        if self.recover.is_some() {
            return false;
        }
        self.losses += 1;
        self.set_cwnd(self.cwnd / 2);
        self.ssthresh = self.cwnd.max(2 * self.mss);
        self.recover = Some(snd_max);
        true
    }

    /// The retransmission timer expired: one MSS, and slow start at once (any loss recovery in
    /// progress is over: go-back-N resends everything from the first lost byte).
    pub fn on_timeout(&mut self) {
        self.timeouts += 1;
        self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        self.cwnd = self.mss;
        self.ca_acc = 0;
        self.recover = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u64) -> AckInfo<'static> {
        AckInfo { ack_seq: seq, ..Default::default() }
    }

    #[test]
    fn slow_start_from_ten_packets_doubles_per_window() {
        let mut w = TcpWindow::new(1000, StartMode::SlowStart, 10, 0);
        assert_eq!(w.cwnd, 10_000);
        assert!(w.in_slow_start());
        // one window of per-packet ACKs doubles it
        for _ in 0..10 {
            w.grow(1000);
        }
        assert_eq!(w.cwnd, 20_000);
        // a big cumulative ACK adds at most 2 MSS
        w.grow(50_000);
        assert_eq!(w.cwnd, 22_000);
    }

    #[test]
    fn line_rate_start_is_one_bdp_in_congestion_avoidance() {
        let mut w = TcpWindow::new(1000, StartMode::LineRate, 10, 100_000);
        assert_eq!((w.cwnd, w.ssthresh), (100_000, 100_000));
        assert!(!w.in_slow_start());
        // one MSS per window of acknowledged bytes
        for _ in 0..100 {
            w.grow(1000);
        }
        assert_eq!(w.cwnd, 101_000);
        for _ in 0..50 {
            w.grow(1000);
        }
        assert_eq!(w.cwnd, 101_000);
        // a BDP below one packet still allows one packet
        assert_eq!(TcpWindow::new(1000, StartMode::LineRate, 10, 10).cwnd, 1000);
    }

    #[test]
    fn loss_halves_once_per_window_and_timeout_resets() {
        let mut w = TcpWindow::new(1000, StartMode::LineRate, 10, 64_000);
        assert!(w.on_loss(200_000));
        assert_eq!(w.cwnd, 32_000);
        // a second NACK from the same window changes nothing
        assert!(!w.on_loss(210_000));
        assert_eq!(w.cwnd, 32_000);
        w.update_recovery(&ack(200_000));
        assert!(w.in_recovery());
        w.update_recovery(&ack(200_001));
        assert!(!w.in_recovery());
        assert!(w.on_loss(300_000));
        assert_eq!(w.cwnd, 16_000);
        w.on_timeout();
        assert_eq!((w.cwnd, w.ssthresh), (1000, 8000));
        assert!(w.in_slow_start() && !w.in_recovery());
        assert_eq!((w.losses, w.timeouts), (2, 1));
        // never below one MSS
        w.set_cwnd(10);
        assert_eq!(w.cwnd, 1000);
    }
}
