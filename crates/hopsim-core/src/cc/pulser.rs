//! Pulser's sender (Almasi et al., "Pulser: Fast Congestion Response Using Explicit Incast
//! Notifications for Datacenter Networks", §III-B, Equations 1-2): DCTCP plus a reaction to
//! Explicit Incast Notification.
//!
//! Switches set EIN on packets when they detect an incast at an egress port (`aqm::ein`,
//! Algorithm 1); the receiver echoes it in the ACK like ECN-Echo ("another bit in the TCP header
//! of ACKs"). The sender:
//! - on an EIN-echo ACK, when not already braking: `cwnd_prev <- cwnd` (Eq. 1) and
//!   `cwnd <- cwnd_safe` (Eq. 2), with `cwnd_safe = 4 x MSS` (§III-B: "optimal performance");
//!   a window already below `cwnd_safe` is left as it is (the reaction "drastically backs off",
//!   it never raises a window);
//! - while braking, the window stays at `cwnd_safe`; every EIN-echo ACK restarts the clean batch:
//!   the batch ends at the byte that was next to send when that ACK arrived;
//! - "If the sender does not observe any EIN marked packets for the current batch of packets,
//!   then the sender restores the window to its previous saved value": once the cumulative ACK
//!   reaches the end of the batch with no EIN echo since, `cwnd <- cwnd_prev` (the second Eq. 2);
//! - everything else is DCTCP (`cc::dctcp`): alpha keeps tracking ECN marks while braking, ECN cuts
//!   and growth act on the window outside braking. A loss while braking halves the saved window (a
//!   loss says the pre-incast window was too large); a timeout ends braking (TCP restarts from one
//!   MSS).
//!
//! A property of the restore worth knowing: the restored window is sent at once (the host paces
//! window-based flows at line rate), so a sender whose NIC is faster than its bottleneck, or one
//! restoring beside other busy senders, can grow that queue fast enough to trip Algorithm 1 again
//! and brake in pulses. With equal link rates and no other traffic (Pulser §IV's long flow after an
//! incast) the restore is clean.
//!
//! Switch-side defaults (`EinConfig`, Pulser §III-A and §IV): `N = 50`, `EIN_threshold = 0.25 x
//! LineRate`, `HighWaterMark` = the ECN threshold. Sender defaults: `cwnd_safe = 4 MSS` (§III-B),
//! DCTCP's defaults otherwise.

use super::dctcp::{Dctcp, DctcpConfig};
use super::{AckInfo, CongestionControl, FlowInfo};
use crate::aqm::ein::EinConfig;
use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PulserConfig {
    /// The DCTCP underneath.
    pub dctcp: DctcpConfig,
    /// `cwnd_safe` in packets (MSS).
    pub cwnd_safe: u32,
    /// The switches' incast detector (Algorithm 1).
    pub ein: EinConfig,
}

impl Default for PulserConfig {
    fn default() -> Self {
        PulserConfig { dctcp: DctcpConfig::default(), cwnd_safe: 4, ein: EinConfig::default() }
    }
}

impl PulserConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.cwnd_safe == 0 {
            return Err("pulser: cwnd_safe must be at least 1 packet".into());
        }
        self.dctcp.validate()?;
        self.ein.validate()
    }
}

/// Pulser sender state of one flow.
#[derive(Clone, Debug)]
pub struct Pulser {
    pub dctcp: Dctcp,
    cwnd_safe: u64,
    /// `cwnd_prev` while braking.
    saved: Option<u64>,
    /// End of the batch that must come back without EIN.
    batch_end: u64,
    /// Times the window was cut to `cwnd_safe`, and restored.
    pub cuts: u32,
    pub restores: u32,
    /// The last window restored, and the first episode: when it began, the window it saved and
    /// cut from, and when it ended (for tests and statistics).
    pub last_restored: Option<u64>,
    pub first_cut_at: Option<Time>,
    pub first_saved: Option<u64>,
    pub first_restore_at: Option<Time>,
    pub first_restored: Option<u64>,
}

impl Pulser {
    pub fn new(cfg: &PulserConfig, info: &FlowInfo) -> Pulser {
        Pulser {
            dctcp: Dctcp::new(&cfg.dctcp, info),
            cwnd_safe: cfg.cwnd_safe as u64 * info.mtu.max(1) as u64,
            saved: None,
            batch_end: 0,
            cuts: 0,
            restores: 0,
            last_restored: None,
            first_cut_at: None,
            first_saved: None,
            first_restore_at: None,
            first_restored: None,
        }
    }

    pub fn braking(&self) -> bool {
        self.saved.is_some()
    }

    pub fn cwnd(&self) -> u64 {
        self.dctcp.cwnd()
    }

    /// The window saved at the last cut (while braking).
    pub fn saved_cwnd(&self) -> Option<u64> {
        self.saved
    }
}

impl CongestionControl for Pulser {
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("pulser_cuts", self.cuts as u64));
        out.push(("pulser_restores", self.restores as u64));
    }

    fn on_ack(&mut self, now: Time, ack: &AckInfo) {
        if ack.ein_echo {
            self.dctcp.observe(ack);
            if self.saved.is_none() {
                let w = self.dctcp.cwnd();
                self.saved = Some(w);
                self.cuts += 1;
                if self.first_cut_at.is_none() {
                    self.first_cut_at = Some(now);
                    self.first_saved = Some(w);
                }
                if w > self.cwnd_safe {
                    self.dctcp.tcp.set_cwnd(self.cwnd_safe);
                }
            }
            self.batch_end = ack.snd_nxt;
            return;
        }
        match self.saved {
            Some(w) => {
                self.dctcp.observe(ack);
                if ack.ack_seq >= self.batch_end {
                    self.dctcp.tcp.set_cwnd(w);
                    self.saved = None;
                    self.restores += 1;
                    self.last_restored = Some(w);
                    if self.first_restore_at.is_none() {
                        self.first_restore_at = Some(now);
                        self.first_restored = Some(w);
                    }
                }
            }
            None => {
                self.dctcp.observe(ack);
                self.dctcp.react(ack);
            }
        }
    }
    fn on_nack(&mut self, now: Time, ack: &AckInfo) {
        match self.saved {
            Some(w) => self.saved = Some((w / 2).max(self.cwnd_safe)),
            None => self.dctcp.on_nack(now, ack),
        }
    }
    fn on_timeout(&mut self, now: Time) {
        self.saved = None;
        self.dctcp.on_timeout(now);
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        self.dctcp.window()
    }
    #[inline]
    fn rate(&self) -> Rate {
        self.dctcp.rate()
    }
}

impl crate::registry::Declared for PulserConfig {
    const NAME: &'static str = "pulser";
    const ABOUT: &'static str = "Pulser (Almasi et al., §III-B, Equations 1-2) with EIN at the switches";
    const COUNTERS: &'static [&'static str] = &["pulser_cuts", "pulser_restores"];
}

impl super::registry::Algorithm for PulserConfig {
    fn validate(&self) -> Result<(), String> {
        PulserConfig::validate(self)
    }
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::Pulser(Box::new(Pulser::new(self, info)))
    }
    /// Explicit Incast Notification at every switch port (§III-A).
    fn aqm(&self) -> crate::aqm::AqmConfig {
        crate::aqm::AqmConfig { ein: Some(self.ein.clone()), int_max_hops: 0 }
    }
    fn runs_over_tcp(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn pulser() -> Pulser {
        // 10 Gb/s x 80 us: cwnd starts at 100 KB
        Pulser::new(&PulserConfig::default(), &FlowInfo { line_rate: Rate::gbps(10), base_rtt: Time::from_us(80), mtu: 1000 })
    }

    fn ack(seq: u64, snd_nxt: u64, ein: bool) -> AckInfo<'static> {
        AckInfo { ack_seq: seq, newly_acked: MSS, ein_echo: ein, snd_nxt, ..Default::default() }
    }

    #[test]
    fn defaults_follow_the_paper() {
        let c = PulserConfig::default();
        assert_eq!(c.cwnd_safe, 4);
        assert_eq!((c.ein.n, c.ein.threshold), (50, 0.25));
        assert_eq!(c.dctcp, DctcpConfig::default());
        assert!(c.validate().is_ok());
        assert!(PulserConfig { cwnd_safe: 0, ..Default::default() }.validate().is_err());
    }

    #[test]
    fn ein_cuts_to_cwnd_safe_and_a_clean_batch_restores() {
        let mut p = pulser();
        let w0 = p.cwnd();
        assert_eq!(w0, 100_000);
        // in flight: bytes up to 100 KB; first EIN echo at ack 10 KB
        p.on_ack(Time::ZERO, &ack(10_000, 100_000, true));
        assert_eq!(p.cwnd(), 4 * MSS);
        assert_eq!(p.saved_cwnd(), Some(w0));
        // more EIN echoes: no re-save, batch end moves to the current snd_nxt
        p.on_ack(Time::ZERO, &ack(11_000, 101_000, true));
        p.on_ack(Time::ZERO, &ack(60_000, 104_000, true));
        assert_eq!((p.cuts, p.cwnd()), (1, 4 * MSS));
        // clean ACKs short of the batch end keep braking
        for s in (61_000..104_000).step_by(1000) {
            p.on_ack(Time::ZERO, &ack(s, 104_000, false));
            assert!(p.braking());
            assert_eq!(p.cwnd(), 4 * MSS);
        }
        // the batch is acknowledged without EIN: restore the pre-incast window
        p.on_ack(Time::ZERO, &ack(104_000, 108_000, false));
        assert!(!p.braking());
        assert_eq!(p.cwnd(), w0);
        assert_eq!((p.restores, p.last_restored), (1, Some(w0)));
    }

    #[test]
    fn ein_during_the_clean_batch_restarts_it() {
        let mut p = pulser();
        p.on_ack(Time::ZERO, &ack(1000, 50_000, true));
        p.on_ack(Time::ZERO, &ack(2000, 50_000, false));
        p.on_ack(Time::ZERO, &ack(3000, 54_000, true)); // batch now ends at 54 KB
        p.on_ack(Time::ZERO, &ack(50_000, 54_000, false));
        assert!(p.braking());
        p.on_ack(Time::ZERO, &ack(54_000, 58_000, false));
        assert!(!p.braking());
    }

    #[test]
    fn without_ein_it_is_dctcp() {
        let mut p = pulser();
        let mut d = Dctcp::new(&DctcpConfig::default(), &FlowInfo { line_rate: Rate::gbps(10), base_rtt: Time::from_us(80), mtu: 1000 });
        for k in 1..500u64 {
            let a = AckInfo { ack_seq: k * MSS, newly_acked: MSS, ecn_echo: k % 7 == 0, snd_nxt: (k + 100) * MSS, ..Default::default() };
            p.on_ack(Time::ZERO, &a);
            d.on_ack(Time::ZERO, &a);
            assert_eq!(p.cwnd(), d.cwnd());
            assert_eq!(p.dctcp.alpha(), d.alpha());
        }
        assert_eq!(p.cuts, 0);
    }

    #[test]
    fn small_window_is_not_raised_and_loss_halves_the_saved_window() {
        let mut p = pulser();
        p.dctcp.tcp.set_cwnd(2 * MSS);
        p.on_ack(Time::ZERO, &ack(1000, 3000, true));
        assert_eq!(p.cwnd(), 2 * MSS);
        let mut p = pulser();
        p.on_ack(Time::ZERO, &ack(1000, 100_000, true));
        p.on_nack(Time::ZERO, &AckInfo { ack_seq: 1000, snd_nxt: 100_000, ..Default::default() });
        assert_eq!(p.saved_cwnd(), Some(50_000));
        p.on_timeout(Time::ZERO);
        assert!(!p.braking());
        assert_eq!(p.cwnd(), MSS);
    }
}
