//! RED-style ECN marking at dequeue, as the HPCC ns-3 simulator does it (`switch-mmu.cc`
//! `ShouldSendCN`): below `kmin` bytes never mark, above `kmax` always, and in between with a
//! probability rising linearly to `pmax`. DCTCP's step marking at `K` (Alizadeh et al. 2010, §3.1)
//! is the case `kmin = kmax = K`, `pmax = 1`.
//!
//! The switch calls [`red_mark`] with the egress queue's bytes left after the packet departed
//! (settings in `params::EcnConfig`); one uniform draw from the switch's own stream is spent only
//! in the linear band, so runs stay identical to the marking the switch did inline before.

use crate::rng::Rng;

/// Whether a departing packet that leaves `qlen` bytes behind gets Congestion Experienced.
#[inline]
pub fn red_mark(qlen: u64, kmin: u64, kmax: u64, pmax: f64, rng: &mut Rng) -> bool {
    if qlen > kmax {
        true
    } else if qlen > kmin {
        let prob = pmax * (qlen - kmin) as f64 / (kmax - kmin) as f64;
        rng.uniform() < prob
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_and_linear_band() {
        let mut rng = Rng::stream(1, 0, 0);
        // DCTCP: K = 30 KB, step
        assert!(!red_mark(30_000, 30_000, 30_000, 1.0, &mut rng));
        assert!(red_mark(30_001, 30_000, 30_000, 1.0, &mut rng));
        // linear band: about half marked at the midpoint with pmax 1
        let n = 20_000;
        let m = (0..n).filter(|_| red_mark(150, 100, 200, 1.0, &mut rng)).count();
        assert!((m as f64 / n as f64 - 0.5).abs() < 0.02, "{m}");
        assert!(!red_mark(100, 100, 200, 1.0, &mut rng));
    }
}
