//! The BFC simulator's flow table (`flow_control.bfc.flow_index = "ns3_header"`): which entry a
//! packet's flow takes, and the queue an entry lands in when a port has no empty queue, as
//! BFC_NS3_NSDI2022 computes them, so that hopsim, given that simulator's flows, puts the same
//! flows in one entry and sends a colliding flow to the same queue.
//!
//! `QbbNetDevice::GethqCnt` (qbb-net-device.cc:1271-1289) reads the packet's headers: its entry is
//! `((source address x 1235 + source port + 13 x EndSeq) mod 7200) x 64 + outDev`, where EndSeq is
//! the flow's packet count (`SeqTsHeader::SetEndSeq(m_allowed)`, udp-client.cc:158, 218), 7200 is
//! `hqCnt / pCnt` (qbb-net-device.h:50-53) and outDev the egress device's index, the port's place
//! in the switch's device list counted from 1 (device 0 is the loopback). The sum wraps at 32 bits.
//! `Assign_hqCnt_qCnt` (1305-1308), with no queue empty, takes `srand(entry); 3 + rand() % 31`:
//! glibc's `rand` right after `srand`, which `first_rand` reproduces (glibc's TYPE_3 additive
//! generator, stdlib/random_r.c: 31 words seeded by `16807 x` mod 2^31 - 1, 310 outputs discarded).
//! Its queues 3..33 are hopsim's data queues 0..30.
//!
//! Checked against a trace of its run (60% load with 100-to-1 incasts): all 37 traced collisions of
//! flows of 4-48 packets took the queue this gives, and the source ports of all 3,941 traced flows
//! are the ones the importer numbers (per sending host from 49153, in start order).

use crate::topo::ecmp_ns3::bfc_host_ip;

/// Device indices per switch in its entry numbering (`pCnt`, qbb-net-device.h:51).
pub const PORTS_PER_ENTRY: u32 = 64;

/// The part of `GethqCnt` a sender knows: the flow of host `src` with source port `sport` and
/// `packets` packets, before the table's modulo. Senders write it into their packets' tags.
#[inline]
pub fn flow_key(src: u32, sport: u16, packets: u64) -> u32 {
    bfc_host_ip(src).wrapping_mul(1235).wrapping_add(sport as u32).wrapping_add((packets as u32).wrapping_mul(13))
}

/// The entry number `srand` is given: table index `index` at local port `port` (outDev = port + 1).
#[inline]
pub fn entry(index: u32, port: u16) -> u32 {
    index.wrapping_mul(PORTS_PER_ENTRY).wrapping_add(port as u32 + 1)
}

/// glibc's first `rand()` after `srand(seed)`.
pub fn first_rand(seed: u32) -> u32 {
    const DEG: usize = 31;
    const SEP: usize = 3;
    let mut r = [0u32; DEG];
    let seed = if seed == 0 { 1 } else { seed };
    r[0] = seed;
    // (its `word` is an int32_t: a seed past 2^31 starts negative)
    let mut word = seed as i32 as i64;
    for v in r.iter_mut().skip(1) {
        // state[i] = 16807 x state[i - 1] mod (2^31 - 1), without overflowing 31 bits
        let (hi, lo) = (word / 127_773, word % 127_773);
        word = 16_807 * lo - 2_836 * hi;
        if word < 0 {
            word += 2_147_483_647;
        }
        *v = word as u32;
    }
    let (mut f, mut b) = (SEP, 0);
    let mut next = || {
        r[f] = r[f].wrapping_add(r[b]);
        let out = r[f] >> 1;
        f = (f + 1) % DEG;
        b = (b + 1) % DEG;
        out
    };
    for _ in 0..10 * DEG {
        next();
    }
    next()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of this machine's glibc (`srand(s); rand()`).
    #[test]
    fn first_rand_is_glibcs() {
        for (seed, want) in [
            (0, 1_804_289_383),
            (1, 1_804_289_383),
            (2, 1_505_335_290),
            (5, 590_011_675),
            (1000, 766_020_790),
            (460_806, 1_073_381_563),
            (2_147_483_647, 1_065_668_062),
            (4_294_967_295, 254_925_627),
        ] {
            assert_eq!(first_rand(seed), want, "srand({seed})");
        }
    }

    /// Collisions in its trace: (switch port's device index, queue it took, source address,
    /// source port, packets); the queue is `3 + rand() % 31` after `srand` of the flow's entry.
    #[test]
    fn a_colliding_flow_takes_the_queue_its_trace_shows() {
        let seen: [(u16, u32, u32, u16, u64); 6] = [
            (1, 24, 167_855_618, 49_189, 42),
            (1, 28, 167_845_378, 49_194, 39),
            (12, 23, 167_853_314, 49_212, 7),
            (12, 28, 167_839_234, 49_205, 42),
            (15, 11, 167_867_906, 49_211, 38),
            (12, 24, 167_850_498, 49_245, 41),
        ];
        for (dev, q, ip, sport, packets) in seen {
            let src = (0..128).find(|&h| bfc_host_ip(h) == ip).expect("a host of its network");
            let index = flow_key(src, sport, packets) % 7200;
            assert_eq!(3 + first_rand(entry(index, dev - 1)) % 31, q, "{ip} {sport} {packets}");
        }
    }
}
