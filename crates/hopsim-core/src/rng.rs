//! Random streams: one master seed, one independent stream per component.
//!
//! Why per-component streams: adding a switch or a flow generator must not shift the draws of any
//! other component, or two runs that differ in one knob differ everywhere. Each stream is seeded by
//! hashing (master seed, component key) with SplitMix64 and runs xoshiro256**; both are small,
//! fast and well studied, and writing them here keeps results identical across platforms and
//! library versions.

/// Keys naming the owners of streams, so two owners never share one by accident. Each key has
/// exactly one owner (a test checks the keys are distinct); within an owner, the stream index
/// tells instances apart (the switch's node id, the generator's index). Retired keys are not
/// reused, so a new owner never replays an old owner's draws.
pub mod stream {
    /// Incast generators (`workload::incast`): hosts, sizes, jitter.
    pub const INCAST: u64 = 2;
    /// RED/ECN marking at a switch's egress (`aqm::red_ecn`), one stream per switch.
    pub const RED: u64 = 3;
    /// Background flow sizes (`workload::background`, `workload::cdf`).
    pub const FLOW_SIZE: u64 = 7;
    /// Background inter-arrival gaps (`workload::arrivals`).
    pub const ARRIVAL: u64 = 8;
    /// Background source/destination pairs (`workload::background`).
    pub const PAIRS: u64 = 9;
    /// P-PFC's weighted choice of ports to pause (`fc::ppfc`, Algorithm 2), one per switch.
    pub const PPFC: u64 = 10;
    /// BFC's random queue when none is empty and its sampling (`fc::bfc`), one per switch.
    pub const BFC: u64 = 11;
    /// FlowSail's random queue when none is empty (`fc::flowsail`), one per switch.
    pub const FLOWSAIL: u64 = 12;
    /// Random loss on a link (`faults`), one stream per link direction (the index is the sending
    /// port's id), so a lossy link added or removed shifts no other link's draws.
    pub const LOSS: u64 = 13;

    /// Every key with its owner.
    pub const ALL: [(&str, u64); 9] = [
        ("incast", INCAST),
        ("red", RED),
        ("flow_size", FLOW_SIZE),
        ("arrival", ARRIVAL),
        ("pairs", PAIRS),
        ("ppfc", PPFC),
        ("bfc", BFC),
        ("flowsail", FLOWSAIL),
        ("loss", LOSS),
    ];
}

#[inline]
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A 64-bit mix of several words, used for ECMP hashes and stream derivation.
#[inline]
pub fn mix(words: &[u64]) -> u64 {
    let mut s = 0x243F_6A88_85A3_08D3u64;
    let mut h = 0;
    for &w in words {
        s ^= w;
        h = splitmix64(&mut s);
    }
    h
}

/// xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream of component `(kind, index)` under master seed `seed`.
    pub fn stream(seed: u64, kind: u64, index: u64) -> Rng {
        let mut x = mix(&[seed, kind, index]);
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n). `n` must be positive.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform integer in [lo, hi] inclusive.
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Standard normal (Box-Muller; one draw per call keeps the stream simple to reason about).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Lognormal with the given mean and shape sigma (mu chosen so the mean comes out right).
    pub fn lognormal_with_mean(&mut self, mean: f64, sigma: f64) -> f64 {
        let mu = mean.ln() - sigma * sigma / 2.0;
        (mu + sigma * self.normal()).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = Rng::stream(1, stream::RED, 3);
        let mut b = Rng::stream(1, stream::RED, 3);
        let mut c = Rng::stream(1, stream::RED, 4);
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn no_two_owners_share_a_stream_key() {
        let mut keys: Vec<u64> = stream::ALL.iter().map(|x| x.1).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), stream::ALL.len());
        // and the same switch's RED and P-PFC streams differ (they were one stream once)
        let mut red = Rng::stream(1, stream::RED, 5);
        let mut ppfc = Rng::stream(1, stream::PPFC, 5);
        assert_ne!((0..4).map(|_| red.next_u64()).collect::<Vec<_>>(), (0..4).map(|_| ppfc.next_u64()).collect::<Vec<_>>());
    }

    #[test]
    fn moments_are_right() {
        let mut r = Rng::stream(7, stream::ARRIVAL, 0);
        let n = 200_000;
        let mean_u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.01);
        let mean_e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((mean_e - 3.0).abs() < 0.05);
        let mean_l: f64 = (0..n).map(|_| r.lognormal_with_mean(2.0, 1.0)).sum::<f64>() / n as f64;
        assert!((mean_l - 2.0).abs() < 0.1, "{mean_l}");
        for _ in 0..1000 {
            assert!(r.below(5) < 5);
        }
    }
}
