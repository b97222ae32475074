//! The HPCC simulator's ECMP (`routing.ecmp = "hpcc"`): which of a switch's equal-cost next hops
//! a packet takes there, so that hopsim, given that simulator's inputs, puts every flow on the
//! same path and the same flows collide at the same ports.
//!
//! That simulator (`SwitchNode::GetOutDev`) hashes the 12 bytes (source IP, destination IP,
//! `sport | dport << 16`), each a little-endian 32-bit word, with 32-bit MurmurHash3 seeded by the
//! switch's node id, and takes the next hop `hash % n` from a list built by `third.cc`'s
//! `CalculateRoute`: a BFS from every host, visiting each node's neighbours in node-id order and
//! listing, for each node, its neighbours one hop nearer in the order the BFS reached them
//! (`Routes::build` with that order). Addresses are `node_id_to_ip`: `0x0b000001 + (id / 256) *
//! 0x10000 + (id % 256) * 0x100`. An ACK or NACK hashes its own header: addresses swapped and the
//! ports swapped within the word.
//!
//! Assumption, documented because it cannot be read from that code: its neighbour maps are keyed
//! by `Ptr<Node>` and so ordered by the nodes' heap addresses; nodes are allocated one after the
//! other in id order at start-up, so we take address order to be id order.

/// `node_id_to_ip` of `third.cc`.
#[inline]
pub fn hpcc_ip(node: u32) -> u32 {
    0x0b00_0001u32.wrapping_add((node / 256) * 0x0001_0000).wrapping_add((node % 256) * 0x0000_0100)
}

/// 32-bit MurmurHash3 (Appleby's `MurmurHash3_x86_32`) of three little-endian words, as the
/// simulator's `EcmpHash` computes it over its 12-byte key.
#[inline]
pub fn murmur3_words(words: [u32; 3], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    for w in words {
        let k = w.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h ^= 12;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The hash a packet gets at switch `node`: `from`/`to` are the packet's source and destination
/// nodes, `(sport, dport)` the data direction's ports; `reply` for ACKs and NACKs, whose header
/// carries the ports the other way round.
#[inline]
pub fn hpcc_ecmp_hash(node: u32, from: u32, to: u32, sport: u16, dport: u16, reply: bool) -> u32 {
    let (a, b) = if reply { (dport, sport) } else { (sport, dport) };
    murmur3_words([hpcc_ip(from), hpcc_ip(to), a as u32 | (b as u32) << 16], node)
}

/// ns-3's `Hash32` seed (`Murmur3::SEED`, "ate bad food"): `Hash32(buf, n)` is
/// `MurmurHash3_x86_32(buf, n, SEED)` (`hash-murmur3.cc`, a fresh hasher per call).
pub const NS3_HASH_SEED: u32 = 0x8BAD_F00D;

/// The hash by which the simulator's host picks a NIC among those on shortest paths
/// (`RdmaHw::GetNicIdxOfQp` and `GetNicIdxOfRxQp`, `net::nic_choice`): `Hash32` of the queue
/// pair's 12 bytes (sip, dip, sport, dport). `from`/`to` are the sending host and the far end
/// (for `reply`, the flow's receiver and its sender), `(sport, dport)` the data direction's
/// ports; with `reply` the receive queue pair's tuple, whose ports are the data's swapped.
#[inline]
pub fn hpcc_nic_hash(from: u32, to: u32, sport: u16, dport: u16, reply: bool) -> u32 {
    let (a, b) = if reply { (dport, sport) } else { (sport, dport) };
    murmur3_words([hpcc_ip(from), hpcc_ip(to), a as u32 | (b as u32) << 16], NS3_HASH_SEED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte-wise reference MurmurHash3_x86_32 (the published algorithm, tail handling included).
    fn murmur3_bytes(key: &[u8], seed: u32) -> u32 {
        let (c1, c2) = (0xcc9e_2d51u32, 0x1b87_3593u32);
        let mut h = seed;
        let chunks = key.chunks_exact(4);
        let tail = chunks.remainder();
        for c in chunks {
            let k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]).wrapping_mul(c1).rotate_left(15).wrapping_mul(c2);
            h ^= k;
            h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
        }
        let mut k = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k ^= (b as u32) << (8 * i);
        }
        if !tail.is_empty() {
            h ^= k.wrapping_mul(c1).rotate_left(15).wrapping_mul(c2);
        }
        h ^= key.len() as u32;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    }

    #[test]
    fn murmur3_known_vectors() {
        // published test vectors of MurmurHash3_x86_32
        assert_eq!(murmur3_bytes(b"", 0), 0);
        assert_eq!(murmur3_bytes(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_bytes(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_bytes(&[0xff, 0xff, 0xff, 0xff], 0), 0x7629_3b50);
        assert_eq!(murmur3_bytes(&[0x21, 0x43, 0x65, 0x87], 0), 0xf55b_516b);
        assert_eq!(murmur3_bytes(&[0x21, 0x43, 0x65, 0x87], 0x5082_edee), 0x2362_f9de);
        assert_eq!(murmur3_bytes(b"Hello, world!", 1234), 0xfaf6_cdb3);
    }

    #[test]
    fn word_form_equals_byte_form() {
        for (w, seed) in [([1u32, 2, 3], 7u32), ([0x0b00_0101, 0x0b00_0201, 10000 | 100 << 16], 320), ([u32::MAX; 3], 0)] {
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            assert_eq!(murmur3_words(w, seed), murmur3_bytes(&bytes, seed));
        }
    }

    #[test]
    fn nic_hash_is_ns3_hash32_of_the_queue_pairs_bytes() {
        // RdmaQueuePair::GetHash: a packed { uint32 sip, dip; uint16 sport, dport } hashed by
        // Hash32, i.e. MurmurHash3_x86_32 seeded 0x8BADF00D, on a little-endian machine
        let key = |sip: u32, dip: u32, sport: u16, dport: u16| -> Vec<u8> {
            [&hpcc_ip(sip).to_le_bytes()[..], &hpcc_ip(dip).to_le_bytes(), &sport.to_le_bytes(), &dport.to_le_bytes()].concat()
        };
        for (from, to, sp, dp) in [(0u32, 300u32, 10_000u16, 100u16), (17, 2, 10_001, 200), (319, 0, 65_535, 0)] {
            assert_eq!(hpcc_nic_hash(from, to, sp, dp, false), murmur3_bytes(&key(from, to, sp, dp), 0x8BAD_F00D));
            // the receive queue pair: sip = the data's dip, sport = the data's dport
            assert_eq!(hpcc_nic_hash(to, from, sp, dp, true), murmur3_bytes(&key(to, from, dp, sp), 0x8BAD_F00D));
        }
    }

    #[test]
    fn addresses_as_third_cc() {
        assert_eq!(hpcc_ip(0), 0x0b00_0001);
        assert_eq!(hpcc_ip(13), 0x0b00_0d01);
        assert_eq!(hpcc_ip(300), 0x0b01_2c01);
        // node id back from the address, as its ip_to_node_id
        for n in [0u32, 13, 255, 256, 300, 1000] {
            assert_eq!((hpcc_ip(n) >> 8) & 0xffff, n);
        }
    }
}
