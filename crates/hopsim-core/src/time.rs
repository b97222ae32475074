//! Units: integer picoseconds for time, bytes for sizes, bits per second for rates.
//!
//! Why picoseconds: at 400 Gb/s one byte takes 20 ps, so every serialisation time of the rates the
//! papers use (10/25/40/100/400 Gb/s) is an exact integer and no rounding error accumulates over a
//! long run. A `u64` of picoseconds still covers 213 days of simulated time.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Time(pub u64);

/// A span of simulated time, in picoseconds.
pub type Dur = Time;

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// The longest a configured delay or interval may be (1000 s): the engine adds such settings to
/// the clock without checks, and this leaves any run of up to 200 days of simulated time far from
/// overflowing the picosecond clock (`Time::check_setting`).
pub const MAX_SETTING: Time = Time(1000 * PS_PER_S);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    /// `Ok` if this setting is at most [`MAX_SETTING`]; else an error naming `field`.
    pub fn check_setting(self, field: &str) -> Result<(), String> {
        if self > MAX_SETTING {
            return Err(format!("{field}: {self} is longer than the {MAX_SETTING} a delay or interval may be"));
        }
        Ok(())
    }
    pub const fn ps(v: u64) -> Time {
        Time(v)
    }
    pub const fn from_ns(v: u64) -> Time {
        Time(v * PS_PER_NS)
    }
    pub const fn from_us(v: u64) -> Time {
        Time(v * PS_PER_US)
    }
    pub const fn from_ms(v: u64) -> Time {
        Time(v * PS_PER_MS)
    }
    /// Seconds as a float, rounded to the nearest picosecond (flow files give start times so).
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * PS_PER_S as f64).round() as u64)
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / PS_PER_US as f64
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    pub fn saturating_sub(self, o: Time) -> Time {
        Time(self.0.saturating_sub(o.0))
    }
}

impl Add for Time {
    type Output = Time;
    #[inline]
    fn add(self, o: Time) -> Time {
        Time(self.0 + o.0)
    }
}
impl AddAssign for Time {
    #[inline]
    fn add_assign(&mut self, o: Time) {
        self.0 += o.0
    }
}
impl Sub for Time {
    type Output = Time;
    #[inline]
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}us", self.as_us_f64())
    }
}

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(v: u64) -> Rate {
        Rate(v * 1_000_000_000)
    }
    pub const fn mbps(v: u64) -> Rate {
        Rate(v * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to serialise `bytes` at this rate, rounded up to a whole picosecond.
    ///
    /// Every part of the simulator (ports, pacing, ideal FCT) uses this one function, so the
    /// ideal FCT of a lone flow equals its simulated FCT to the picosecond.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Time {
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        let r = self.0 as u128;
        Time(((num + r - 1) / r) as u64)
    }
    /// Bytes that this rate carries in `d` (floor).
    pub fn bytes_in(self, d: Time) -> u64 {
        (self.0 as u128 * d.0 as u128 / (8 * PS_PER_S as u128)) as u64
    }
    /// Picoseconds per byte when it is a whole number (true for every common Ethernet rate), which
    /// lets the hot path replace a 128-bit division with one multiplication.
    pub fn ps_per_byte_exact(self) -> Option<u64> {
        let per = 8 * PS_PER_S;
        if self.0 > 0 && per % self.0 == 0 {
            Some(per / self.0)
        } else {
            None
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Gbps", self.as_gbps_f64())
    }
}

/// Serialisation timer of one port: caches picoseconds-per-byte when exact.
#[derive(Clone, Copy, Debug)]
pub struct TxClock {
    pub rate: Rate,
    ps_per_byte: u64,
}

impl TxClock {
    pub fn new(rate: Rate) -> TxClock {
        TxClock { rate, ps_per_byte: rate.ps_per_byte_exact().unwrap_or(0) }
    }
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            Time(bytes as u64 * self.ps_per_byte)
        } else {
            self.rate.tx_time(bytes as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_exact_at_common_rates() {
        assert_eq!(Rate::gbps(100).tx_time(1000), Time(80_000));
        assert_eq!(Rate::gbps(400).tx_time(1), Time(20));
        assert_eq!(Rate::gbps(40).tx_time(1500), Time(300_000));
        assert_eq!(TxClock::new(Rate::gbps(25)).tx_time(1000), Rate::gbps(25).tx_time(1000));
    }

    #[test]
    fn tx_time_rounds_up_for_odd_rates() {
        // 3 Gb/s: 8 bits take 2666.67 ps -> 2667
        assert_eq!(Rate::gbps(3).tx_time(1), Time(2667));
        assert_eq!(TxClock::new(Rate::gbps(3)).tx_time(1), Time(2667));
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = Rate::gbps(100);
        assert_eq!(r.bytes_in(Time::from_us(1)), 12_500);
    }
}
