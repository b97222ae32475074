//! Ideal flow completion time: the flow alone on the idle network, over its own path.
//!
//! Computed exactly as the simulator would move the flow with nothing else present: packets of
//! `mtu` payload (the last one shorter) leave the sender back to back at its line rate, each hop
//! stores and forwards, and the FCT ends when the last byte reaches the receiver. Packet `j` ends
//! its serialisation at hop `i` at `D(j,i) = max(D(j,i-1) + d(i-1), D(j-1,i)) + s_j / r_i`; for
//! the equal-sized packets `1..n-1` this has the closed form
//! `D(j,i) = D(1,i) + (j-1) x s / min(r_1..r_i)` (paced by the slowest hop so far), so the cost is O(hops), not O(packets x hops).
//! The serialisation times use the same integer function as the ports, cut as the run cuts them
//! (`tx_time`), so a lone flow's simulated FCT equals this to the picosecond (a test checks it on
//! star, leaf-spine and fat-tree paths, and with ns-3's whole-nanosecond times).

use crate::time::{Rate, Time, TxTimes};

/// One hop of a path: the egress port's rate and its link's propagation delay.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub rate: Rate,
    pub delay: Time,
}

/// Ideal FCT of `size` payload bytes in packets of `mtu` payload plus `header` bytes, each
/// serialised in the time `times` gives it.
pub fn ideal_fct(size: u64, mtu: u32, header: u32, hops: &[Hop], times: TxTimes) -> Time {
    assert!(!hops.is_empty());
    let size = size.max(1);
    let mtu = mtu as u64;
    let n = size.div_ceil(mtu);
    let full = (mtu + header as u64) as u32;
    let last = ((size - (n - 1) * mtu) + header as u64) as u32;
    // d_prev(i): end of serialisation of packet n-1 at hop i (None when n == 1)
    let mut d1 = 0u64; // D(1, i) for the full-size first packet
    let mut max_ser = 0u64; // per-packet serialisation at the slowest hop so far
    let mut arrive_last = 0u64; // arrival of the last packet at hop i's node
    for (i, h) in hops.iter().enumerate() {
        let s_full = times.of(h.rate, full as u64).0;
        let s_last = times.of(h.rate, last as u64).0;
        // saturating: a flow too long for the clock (years at its rate) gets Time::MAX
        let d_prev = if n >= 2 {
            // D(1,i) then (n-2) more full packets paced by the slowest hop so far
            let arrive1 = if i == 0 { 0 } else { d1.saturating_add(hops[i - 1].delay.0) };
            d1 = arrive1.saturating_add(s_full);
            max_ser = max_ser.max(s_full);
            Some(d1.saturating_add((n - 2).saturating_mul(max_ser)))
        } else {
            None
        };
        let start = match d_prev {
            Some(p) => arrive_last.max(p),
            None => arrive_last,
        };
        arrive_last = start.saturating_add(s_last).saturating_add(h.delay.0);
    }
    Time(arrive_last)
}

/// Header bytes per packet in the HPCC simulator's standalone FCT: `CustomHeader::
/// GetStaticWholeHeaderSize() - IntHeader::GetStaticSize()` = 14 (it counts an Ethernet header,
/// though its wire carries a 2-byte PPP one) + 20 (IPv4) + 8 (UDP) + 6 (SeqTs).
pub const HPCC_STANDALONE_HEADER: u64 = 48;

/// The HPCC simulator's `standalone_fct` (`third.cc` `qp_finish`), the denominator of the
/// slowdowns its users compute: the path's base RTT as `CalculateRoute` sums it (twice the
/// propagation delays plus one `mtu`-byte payload's serialisation per hop, each in whole ns) plus
/// the flow's bytes with a 48-byte header per packet over the path's narrowest rate. Not the
/// flow's time alone on the network (that is `ideal_fct`): a different basis, kept so exported
/// FCT files read as that simulator's do.
pub fn hpcc_standalone_fct(size: u64, mtu: u32, hops: &[Hop]) -> Time {
    let mtu = mtu.max(1) as u64;
    let bw = hops.iter().map(|h| h.rate.0).min().unwrap_or(1).max(1) as u128;
    let mut base_ns: u128 = 0;
    for h in hops {
        base_ns += 2 * (h.delay.0 / 1000) as u128 + mtu as u128 * 8_000_000_000 / h.rate.0.max(1) as u128;
    }
    let total = size as u128 + size.max(1).div_ceil(mtu) as u128 * HPCC_STANDALONE_HEADER as u128;
    let ns = base_ns + total * 8_000_000_000 / bw;
    Time(ns.min(u64::MAX as u128 / 1000) as u64 * 1000)
}

/// Brute-force recurrence over every packet, to check the closed form.
#[cfg(test)]
fn ideal_fct_slow(size: u64, mtu: u32, header: u32, hops: &[Hop], times: TxTimes) -> Time {
    let mut sizes = vec![];
    let mut left = size.max(1);
    while left > 0 {
        let p = left.min(mtu as u64);
        sizes.push(p + header as u64);
        left -= p;
    }
    let mut prev_end = vec![0u64; hops.len()];
    let mut arrive = 0;
    for &s in &sizes {
        let mut arr = 0u64;
        for (i, h) in hops.iter().enumerate() {
            let start = arr.max(prev_end[i]);
            let end = start + times.of(h.rate, s).0;
            prev_end[i] = end;
            arr = end + h.delay.0;
        }
        arrive = arr;
    }
    Time(arrive)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_packet_single_hop() {
        let h = [Hop { rate: Rate::gbps(100), delay: Time::from_us(1) }];
        // 1000 B payload + 48 B header at 100G = 83,840 ps, + 1 us
        assert_eq!(ideal_fct(1000, 1000, 48, &h, TxTimes::Exact), Time(83_840 + 1_000_000));
        // ns-3's times: 83 ns
        assert_eq!(ideal_fct(1000, 1000, 48, &h, TxTimes::WholeNs), Time(83_000 + 1_000_000));
    }

    #[test]
    fn hpcc_standalone_matches_third_cc_on_its_fat_tree() {
        // 6 hops of 1 us: host 100G, four 400G fabric hops, ToR->host 100G; 1000 B payload:
        // base = 2 x 6000 + 80 + 20 x 4 + 80 = 12,240 ns; 5000 B = 5 packets -> 5240 B x 8 / 100G.
        let g = |r| Hop { rate: Rate::gbps(r), delay: Time::from_us(1) };
        let hops = [g(100), g(400), g(400), g(400), g(400), g(100)];
        assert_eq!(hpcc_standalone_fct(5000, 1000, &hops), Time::from_ns(12_240 + 419));
        // a flow of one byte still pays one header
        assert_eq!(hpcc_standalone_fct(1, 1000, &hops), Time::from_ns(12_240 + 3));
    }

    #[test]
    fn closed_form_matches_recurrence() {
        let paths: Vec<Vec<Hop>> = vec![
            vec![Hop { rate: Rate::gbps(100), delay: Time::from_us(1) }, Hop { rate: Rate::gbps(100), delay: Time::from_us(1) }],
            vec![
                Hop { rate: Rate::gbps(100), delay: Time::from_us(1) },
                Hop { rate: Rate::gbps(400), delay: Time::from_us(1) },
                Hop { rate: Rate::gbps(400), delay: Time::from_ns(500) },
                Hop { rate: Rate::gbps(25), delay: Time::from_us(2) },
                Hop { rate: Rate::gbps(100), delay: Time::from_us(1) },
            ],
            vec![Hop { rate: Rate::gbps(10), delay: Time::from_us(3) }, Hop { rate: Rate::gbps(40), delay: Time::ZERO }],
        ];
        for hops in &paths {
            for size in [1u64, 999, 1000, 1001, 2000, 2500, 77_777, 1_000_000] {
                for times in [TxTimes::Exact, TxTimes::WholeNs] {
                    assert_eq!(ideal_fct(size, 1000, 48, hops, times), ideal_fct_slow(size, 1000, 48, hops, times), "size {size}");
                }
            }
        }
    }
}
