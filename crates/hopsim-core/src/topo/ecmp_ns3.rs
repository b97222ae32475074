//! ns-3 global routing's per-flow ECMP as the BFC simulator runs it (`routing.ecmp =
//! "ns3_global"`): which of a node's equal-cost next hops a packet takes, so that hopsim, given
//! that simulator's flows, puts every flow on the same path and the same flows meet at the same
//! spines.
//!
//! `Ipv4GlobalRouting::LookupGlobal` (its `FlowEcmpRouting`, set by `nsdifinal.cc:327`) takes the
//! route `GetTupleValue(header) % n` (ipv4-global-routing.cc:159-200, 297-300), the routes in the
//! order its route computation lists them, which at a ToR is the spines' order (checked against
//! a trace of it: every one of 3,468 traced flows crossed the spine this gives). The value is a
//! plain XOR, wrapping at 32 bits: `source * 59 ^ destination ^ protocol`, and for its UDP data
//! `^ sport << 16 ^ dport ^ PG`, PG being the priority-group field its fork adds to the packet
//! header (`SeqTsHeader`, a per-flow 16-bit draw: `FlowSpec::pg`). Its ACKs (protocol 0xFC,
//! qbb-net-device.cc:486) carry no ports, so only their addresses pick their path.

/// The address `nsdifinal.cc` gives host `h` (lines 482-522): host `h`'s link is the `h`-th,
/// subnet `10.(h / 254 + 1).(h % 254 + 1).0/24`, the host its second address (the ToR's device
/// is installed first).
#[inline]
pub fn bfc_host_ip(h: u32) -> u32 {
    (10 << 24) | ((h / 254 + 1) << 16) | ((h % 254 + 1) << 8) | 2
}

/// UDP's protocol number, in its data packets' IPv4 header.
const UDP: u32 = 17;
/// Its ACKs' protocol number (`head.SetProtocol(0xFC)`, qbb-net-device.cc:486).
const ACK: u32 = 0xFC;

/// `GetTupleValue` of a packet from host `from` to host `to`: a data packet of a flow with ports
/// `(sport, dport)` and priority group `pg`, or with `reply` one of its ACKs.
#[inline]
pub fn ns3_tuple_hash(from: u32, to: u32, sport: u16, dport: u16, pg: u16, reply: bool) -> u32 {
    let addrs = bfc_host_ip(from).wrapping_mul(59) ^ bfc_host_ip(to);
    if reply {
        addrs ^ ACK
    } else {
        addrs ^ UDP ^ (sport as u32) << 16 ^ dport as u32 ^ pg as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_nsdifinals() {
        // its traces print host 127 as 10.1.128.2 (167870466)
        assert_eq!(bfc_host_ip(127), 167_870_466);
        assert_eq!(bfc_host_ip(0), u32::from_be_bytes([10, 1, 1, 2]));
        assert_eq!(bfc_host_ip(254), u32::from_be_bytes([10, 2, 1, 2]));
    }

    /// Spines its run took, from a trace of it (the spine a flow's packets were queued at),
    /// against the tuple of the flow's addresses, server port (`dst + 40000`, nsdifinal.cc:612)
    /// and priority group; 8 spines, so the last three bits.
    #[test]
    fn a_flow_takes_the_spine_its_tuple_gives() {
        // (src, dst, sport, pg, spine)
        let seen: [(u32, u32, u16, u16, u32); 5] = [
            (0, 17, 49_155, 21_607, 3),
            (0, 72, 49_156, 57_105, 4),
            (0, 61, 49_165, 53_829, 5),
            (121, 100, 49_177, 9_410, 3),
            (121, 96, 49_202, 46_751, 2),
        ];
        for (src, dst, sport, pg, spine) in seen {
            let h = ns3_tuple_hash(src, dst, sport, (dst + 40_000) as u16, pg, false);
            assert_eq!(h % 8, spine, "{src} -> {dst} pg {pg}");
        }
        // sport moves only the upper half: no choice among 8 next hops depends on it
        assert_eq!(ns3_tuple_hash(5, 14, 1, 40_014, 7, false) % 8, ns3_tuple_hash(5, 14, 2, 40_014, 7, false) % 8);
        assert_ne!(ns3_tuple_hash(5, 14, 1, 40_014, 7, false), ns3_tuple_hash(5, 14, 2, 40_014, 7, false));
        // an ACK: addresses and its protocol only
        assert_eq!(ns3_tuple_hash(14, 5, 9, 9, 9, true), bfc_host_ip(14).wrapping_mul(59) ^ bfc_host_ip(5) ^ 0xFC);
    }
}
