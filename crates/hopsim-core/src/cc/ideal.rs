//! Pulser's "Ideal" congestion control (Almasi et al., §IV: "an *Ideal* congestion control scheme
//! where senders have *oracular* global knowledge and send at optimal (safe) sending rate";
//! §V-A: "*Ideal* has perfect knowledge of future flow arrivals, and therefore, holds back packets
//! without injecting them into the network if they would end up being queued. In other words,
//! *Ideal* does not incur queuing in the network, at all loads").
//!
//! **How.** One oracle for the whole network keeps a calendar of every link direction's busy
//! time. When a sender may send its next packet (at the flow's start, and after each packet), the
//! oracle finds the earliest time at or after then at which that packet, sent at once, would find
//! every link of its path free when it gets there (store and forward: hop `i` starts when the
//! packet has fully arrived over hop `i-1`), and so would the ACK the receiver returns on its
//! arrival over the reverse path; it books those intervals and the sender holds the packet until
//! that time (the host's pacing time, `next_avail`). Booked intervals never overlap, so no packet
//! waits in a switch queue for another booked packet: the network carries the traffic with
//! empty queues, and whatever waiting there is happens at the sources.
//!
//! Interpretation choices:
//! - "Optimal (safe) rate" read as: as early as possible without queuing anywhere, first come first
//!   served in the order senders ask (a packet never displaces a booking; it takes the first gap
//!   on every hop that fits it, earlier gaps included).
//! - ACKs are booked as one per data packet (hopsim's ACK per packet); control frames of flow
//!   control schemes are not booked (run Ideal with `flow_control.scheme = "none"`).
//! - The paper's FCTs "capture only network queuing delays (not source queuing delays)", so its
//!   Ideal FCT is by construction the unloaded FCT. Here a flow's FCT runs from its arrival, so an
//!   Ideal flow's FCT includes the time its packets were held at the source; the ideal FCT column
//!   is the paper's Ideal line.
//! - The congestion control itself is line rate with no window: the oracle paces. The host's
//!   in-flight cap should be `off` (with no queuing a flow never has more than one BDP in flight,
//!   so a BDP cap binds only by rounding).
//!
//! **Why it runs on one thread** (`crate::engine::single_reason`). A booking is decided at the
//! moment the sender asks, against every link of the packet's path and of its ACK's path, and
//! takes the first gap on each in the order senders ask: a later request never displaces an
//! earlier one. Split over partitions, two senders in different partitions asking at the same
//! instant (or within one window) for the same core link would each need the other's bookings
//! to find their gap, and the first-come order between them would be the order the threads got
//! there. No per-link booking can be made partition-independent without changing what the
//! oracle is: keeping it exact needs a request to see every booking made before it anywhere in
//! the network, which is one calendar, so the run keeps one thread. (A per-link booking made
//! only when the packet reaches the link would let it wait at that link, which is the queuing
//! Ideal exists to rule out.)

use std::collections::BTreeMap;

/// Busy intervals `[start, end)` of every link direction (global port id), in picoseconds.
#[derive(Default)]
pub struct Oracle {
    busy: Vec<BTreeMap<u64, u64>>,
    /// Per flow: its data path and its ACKs' path, as (port, wire delay, clock) for each hop.
    pub(crate) paths: Vec<Option<Box<(Vec<u32>, Vec<u32>)>>>,
    /// Packets booked, and how long they were held at their sender in all (statistics).
    pub booked: u64,
    pub held_ps: u128,
}

/// One hop of a booking: the port, when the packet starts on it (relative to the send time) and
/// how long it occupies it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hop {
    pub port: u32,
    pub offset: u64,
    pub dur: u64,
}

impl Oracle {
    pub fn new(nports: usize, nflows: usize) -> Oracle {
        Oracle { busy: vec![BTreeMap::new(); nports], paths: (0..nflows).map(|_| None).collect(), booked: 0, held_ps: 0 }
    }

    /// The earliest start at or after `s` of a free gap of `dur` on `port`.
    fn first_fit(&self, port: u32, s: u64, dur: u64) -> u64 {
        let m = &self.busy[port as usize];
        let mut g = s;
        if let Some((_, &e)) = m.range(..=s).next_back() {
            g = g.max(e);
        }
        for (&a, &e) in m.range(s + 1..) {
            if a >= g + dur {
                break;
            }
            g = g.max(e);
        }
        g
    }

    /// Book `hops` for the earliest send time at or after `ready` at which every hop is free when
    /// the packet reaches it; returns that time. Intervals ending before `now` are forgotten.
    pub fn book(&mut self, now: u64, ready: u64, hops: &[Hop]) -> u64 {
        let mut t = ready;
        'search: loop {
            for h in hops {
                let s = t + h.offset;
                let g = self.first_fit(h.port, s, h.dur);
                if g > s {
                    t += g - s;
                    continue 'search;
                }
            }
            break;
        }
        for h in hops {
            let m = &mut self.busy[h.port as usize];
            while let Some((&a, &e)) = m.first_key_value() {
                if e > now {
                    break;
                }
                m.remove(&a);
            }
            if h.dur > 0 {
                m.insert(t + h.offset, t + h.offset + h.dur);
            }
        }
        self.booked += 1;
        self.held_ps += (t - ready) as u128;
        t
    }
}

/// `congestion_control.algorithm = "ideal"`: no parameters.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdealAlgorithm {}

impl crate::registry::Declared for IdealAlgorithm {
    const NAME: &'static str = "ideal";
    const ABOUT: &'static str = "Pulser §IV's Ideal: an oracle books every packet a queue-free path";
}

impl super::registry::Algorithm for IdealAlgorithm {
    /// Line rate, paced by the oracle's bookings.
    fn build(&self, info: &super::FlowInfo) -> super::AnyCc {
        super::AnyCc::None(super::none::LineRate { rate: info.line_rate })
    }
    fn runs_over_tcp(&self) -> bool {
        true
    }
    fn oracle(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(port: u32, offset: u64, dur: u64) -> Hop {
        Hop { port, offset, dur }
    }

    #[test]
    fn a_packet_takes_the_first_time_every_hop_is_free_on_its_arrival() {
        let mut o = Oracle::new(3, 1);
        // first packet: port 0 at 0..10, port 1 at 15..25
        assert_eq!(o.book(0, 0, &[hop(0, 0, 10), hop(1, 15, 10)]), 0);
        // a second on the same path waits for port 0 (both hops then line up)
        assert_eq!(o.book(0, 0, &[hop(0, 0, 10), hop(1, 15, 10)]), 10);
        // one on port 2 then port 1 (offset 5): port 1's gap before 15 fits it, earlier bookings
        // there or not
        assert_eq!(o.book(0, 0, &[hop(2, 0, 10), hop(1, 5, 10)]), 0);
        assert_eq!(o.book(0, 0, &[hop(1, 0, 5)]), 0);
        // port 1 is now busy 0..35 without a gap: the next waits for its end
        assert_eq!(o.book(0, 0, &[hop(1, 0, 1)]), 35);
        // no overlap anywhere
        for m in &o.busy {
            let v: Vec<_> = m.iter().collect();
            for w in v.windows(2) {
                assert!(w[0].1 <= w[1].0, "{v:?}");
            }
        }
        assert_eq!(o.booked, 5);
        assert_eq!(o.held_ps, 45);
        // intervals that ended are forgotten when a port is booked again
        o.book(100, 100, &[hop(0, 0, 1)]);
        assert_eq!(o.busy[0].len(), 1);
    }
}
