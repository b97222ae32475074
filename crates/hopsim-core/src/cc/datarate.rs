//! Rate arithmetic of the HPCC ns-3 simulator's `DataRate`, on whole bit/s.
//!
//! The simulator (alibaba-edu/High-Precision-Congestion-Control) keeps every rate as a
//! `DataRate`, a `uint64_t` of bit/s, and adds its own operators in
//! `simulation/src/network/utils/data-rate.cc`: `DataRate * double` and `DataRate / double` compute
//! in `double` and store the result back into the `uint64_t`, which truncates towards zero;
//! `DataRate + DataRate` and `+=` add the integers. `rdma-hw.cc` writes `m_rate / 2` with an `int`,
//! which C++ converts to `double`, so a halving is a truncating `double` division too.
//!
//! The congestion controls that follow `rdma-hw.cc` to the bit (DCQCN's `mlx` model, `dctcp_rate`)
//! use these two functions so that every rate they compute is the integer the simulator computes.
//! Rust's `as u64` truncates towards zero like the C++ conversion. They differ only where C++ is
//! undefined (a result out of `u64`'s range, infinity or NaN): Rust saturates and maps NaN to 0.

/// `DataRate * c` (`operator*(const DataRate&, const double&)`): `uint64_t(bps * c)`.
#[inline]
pub fn mul(bps: u64, c: f64) -> u64 {
    (bps as f64 * c) as u64
}

/// `DataRate / c` (`operator/(const DataRate&, const double&)`): `uint64_t(bps / c)`.
#[inline]
pub fn div(bps: u64, c: f64) -> u64 {
    (bps as f64 / c) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_like_the_simulator() {
        // halving an odd rate drops the half bit/s, so (a/2) + (b/2) can be 1 below (a+b)/2
        assert_eq!(div(7, 2.0), 3);
        assert_eq!(div(7, 2.0) + div(9, 2.0), 7);
        assert_eq!(mul(100_000_000_000, 1.0 - 0.3 / 2.0), 85_000_000_000);
        assert_eq!(mul(3, 0.5), 1);
        assert_eq!(div(10, 0.0), u64::MAX);
    }
}
