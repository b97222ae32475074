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
    /// Every part of the simulator (ports, pacing, ideal FCT) uses this one function, through
    /// [`TxTimes::of`] where the run cuts times as ns-3 does, so the ideal FCT of a lone flow
    /// equals its simulated FCT to the picosecond.
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

/// How a transmission time is put on the clock: a scenario's `tx_time`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxTimes {
    /// The exact time, rounded up to a whole picosecond ([`Rate::tx_time`]).
    #[default]
    Exact,
    /// ns-3's, at its default 1 ns resolution ([`ns3_tx_time`]): cut down to a whole nanosecond.
    /// The HPCC, Floodgate and BFC simulators all time their links and their NICs' pacing this
    /// way, so a link of theirs carries slightly more than its rate (100 Gb/s with 1,020 B
    /// packets: 81 ns each instead of 81.6, 0.7% more).
    WholeNs,
}

impl TxTimes {
    /// Time to serialise `bytes` at `rate`.
    #[inline]
    pub fn of(self, rate: Rate, bytes: u64) -> Time {
        match self {
            TxTimes::Exact => rate.tx_time(bytes),
            TxTimes::WholeNs => ns3_tx_time(rate, bytes),
        }
    }

    pub fn is_exact(&self) -> bool {
        *self == TxTimes::Exact
    }
}

/// ns-3's `Seconds(DataRate::CalculateTxTime(bytes))` at 1 ns resolution, step for step:
/// `bytes * 8 / bps` in double seconds (data-rate.cc:224-227); that double into the 64.64
/// fixed point, the fraction's bits past 2^-64 dropped (`int64x64_t(double)`,
/// int64x64-128.h:25-35); times 10^9 exactly and the integer part kept (`Time::From`,
/// nstime.h:432-446; `Time(int64x64_t)` takes `GetHigh`, nstime.h:466-467). So every time is cut
/// down to whole nanoseconds, and one whose exact value is a whole number of them comes out a
/// nanosecond short wherever the double falls just below it (25 B at 100 Gb/s: 1 ns, not 2).
///
/// Every packet's serialisation under ns-3's times passes here, so the common case (under a
/// second) keeps to 64-bit conversions: `s * 2^64` of an `s` in [0, 1) is exact and below 2^64,
/// the same fraction the 128-bit path takes, without the software float-to-u128 conversion and
/// `floor` call that path costs.
pub fn ns3_tx_time(rate: Rate, bytes: u64) -> Time {
    let s = ns3_seconds(rate, bytes);
    if s < 1.0 {
        let lo = (s * TWO_64) as u64;
        let ns = ((lo as u128 * 1_000_000_000) >> 64) as u64;
        return Time(ns * PS_PER_NS);
    }
    ns3_time_of_seconds(s)
}

/// 2^64, the 64.64 fixed point's unit of its fraction.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// ns-3's double seconds to serialise `bytes` at `rate` (data-rate.cc:224-227).
#[inline]
fn ns3_seconds(rate: Rate, bytes: u64) -> f64 {
    bytes as f64 * 8.0 / rate.0.max(1) as f64
}

/// `ns3_tx_time` of `s` seconds through 128 bits, for any `s` (`ns3_tx_time` takes it from a
/// second on).
fn ns3_time_of_seconds(s: f64) -> Time {
    let hi = s.floor();
    let lo = ((s - hi) * TWO_64) as u128;
    let ns = hi as u128 * 1_000_000_000 + ((lo * 1_000_000_000) >> 64);
    Time((ns as u64).saturating_mul(PS_PER_NS))
}

/// Serialisation timer of one port: caches picoseconds-per-byte when exact. Two words, so a
/// port's hot fields keep their cache lines (`queues::port`): how times are cut rides in
/// `ps_per_byte`.
#[derive(Clone, Copy, Debug)]
pub struct TxClock {
    pub rate: Rate,
    /// Picoseconds per byte; [`COMPUTED`]: exact, computed each time (a rate with no whole
    /// picoseconds per byte); [`WHOLE_NS`]: ns-3's times ([`ns3_tx_time`]).
    ps_per_byte: u64,
}

const COMPUTED: u64 = 0;
const WHOLE_NS: u64 = u64::MAX;

impl TxClock {
    pub fn new(rate: Rate) -> TxClock {
        TxClock::with(rate, TxTimes::Exact)
    }
    pub fn with(rate: Rate, times: TxTimes) -> TxClock {
        let ps_per_byte = match times {
            TxTimes::Exact => rate.ps_per_byte_exact().unwrap_or(COMPUTED),
            TxTimes::WholeNs => WHOLE_NS,
        };
        TxClock { rate, ps_per_byte }
    }
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> Time {
        match self.ps_per_byte {
            COMPUTED => self.rate.tx_time(bytes as u64),
            WHOLE_NS => ns3_tx_time(self.rate, bytes as u64),
            ps => Time(bytes as u64 * ps),
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

    /// Values of ns-3's own `Seconds(DataRate(bps).CalculateTxTime(bytes)).GetNanoSeconds()`
    /// (ns-3.18's core library, 128-bit int64x64, 1 ns resolution), chosen where its cut is not a
    /// plain floor: whole-nanosecond times that come out one short, and ones that do not.
    #[test]
    fn whole_ns_times_are_ns3s() {
        let cases: [(u64, u64, u64); 12] = [
            (100, 25, 1), (100, 50, 3), (100, 1000, 79), (100, 12825, 1026), (40, 2565, 513), (40, 5130, 1026),
            (100, 1020, 81), (100, 156, 12), (100, 1048, 83), (25, 13675, 4376), (10, 2565, 2052), (100, 30, 2),
        ];
        for (gbps, bytes, ns) in cases {
            assert_eq!(ns3_tx_time(Rate::gbps(gbps), bytes), Time::from_ns(ns), "{bytes} B at {gbps} Gb/s");
            assert_eq!(TxClock::with(Rate::gbps(gbps), TxTimes::WholeNs).tx_time(bytes as u32), Time::from_ns(ns));
        }
        // a pacing rate of no round value, and a long time (no overflow)
        assert_eq!(ns3_tx_time(Rate(37_500_000_000), 1048).0 % PS_PER_NS, 0);
        assert_eq!(ns3_tx_time(Rate(1), 9000), Time::from_ms(72_000_000));
        assert_eq!(TxClock::with(Rate::gbps(100), TxTimes::Exact).tx_time(1020), Time(81_600));
    }

    /// The sub-second path against the 128-bit one it shortcuts, over packet sizes and rates
    /// of every kind (round, odd, pacing), up to just under a second.
    #[test]
    fn whole_ns_fast_path_equals_the_128_bit_one() {
        let wide = |rate: Rate, bytes: u64| ns3_time_of_seconds(ns3_seconds(rate, bytes));
        let mut rng = crate::rng::Rng::stream(7, 0, 0);
        let mut below_a_second = 0;
        for i in 0..200_000u64 {
            let rate = Rate(match i % 4 {
                0 => [1, 10, 25, 40, 50, 100, 200, 400][(i / 4 % 8) as usize] * 1_000_000_000,
                1 => rng.below(400_000_000_000) + 1,
                2 => rng.below(1_000_000) + 1,
                _ => rng.below(100_000_000_000) + 1_000_000,
            });
            let bytes = if i % 3 == 0 { rng.below(10_000) } else { rng.below(1 << 20) };
            below_a_second += ((bytes as f64 * 8.0 / rate.0 as f64) < 1.0) as u32;
            assert_eq!(ns3_tx_time(rate, bytes), wide(rate, bytes), "{bytes} B at {} b/s", rate.0);
        }
        assert!(below_a_second > 150_000 && below_a_second < 200_000, "{below_a_second}");
    }

    #[test]
    fn bytes_in_inverts_tx_time() {
        let r = Rate::gbps(100);
        assert_eq!(r.bytes_in(Time::from_us(1)), 12_500);
    }
}
