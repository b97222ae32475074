//! The read-only view of a switch that flow-control hooks get beside `now`.
//!
//! Why a view and not the switch: a module must not change the network behind the engine's back
//! (that is what actions are for), and a unit test must be able to build one from an MMU and a
//! [`SwitchInfo`] without a whole `Simulation` (`crate::testing`). The view is three
//! references (what never changes after assembly, the MMU, the ports), so building one per hook
//! call costs three stores.

use crate::queues::mmu::Mmu;
use crate::queues::port::{Port, NPRIO};
use crate::time::{Rate, Time};

/// What a module may know about the node at the far end of one of its ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Peer {
    /// Tier of the far node (0 = ToR, 1 = aggregation/spine, ...); `None` for a host.
    pub tier: Option<u8>,
}

impl Peer {
    pub fn is_host(&self) -> bool {
        self.tier.is_none()
    }
}

/// What a switch is, fixed at assembly: its tier, its ports and what is behind them.
#[derive(Clone, Debug)]
pub struct SwitchInfo {
    /// Tier of this switch (0 = ToR).
    pub tier: u8,
    /// Global id of each local port.
    pub ports: Vec<u32>,
    /// Line rate of each local port.
    pub port_rate: Vec<Rate>,
    /// The node behind each local port.
    pub peers: Vec<Peer>,
    /// (Kmin, Kmax) ECN thresholds of each local port.
    pub ecn: Vec<(u64, u64)>,
    /// Data queues per egress port.
    pub nqueues: usize,
    /// The queue each priority takes when the scheme does not classify.
    pub prio_queue: [u16; NPRIO],
    /// Bytes of one full-size data packet on the wire (for HRTT).
    pub mtu_bytes: u32,
}

impl SwitchInfo {
    /// A switch with ports of these rates and `nqueues` queues each on the default priority map
    /// (unit tests of threshold logic).
    pub fn bare(port_rate: Vec<Rate>, nqueues: usize) -> SwitchInfo {
        let n = port_rate.len();
        SwitchInfo {
            tier: 0,
            ports: vec![],
            port_rate,
            peers: vec![Peer::default(); n],
            ecn: vec![(0, 0); n],
            nqueues,
            prio_queue: prio_queues(&crate::queues::port::default_prio_map(nqueues), nqueues),
            mtu_bytes: 1048,
        }
    }
}

#[derive(Clone, Copy)]
pub struct SwitchView<'a> {
    pub info: &'a SwitchInfo,
    pub mmu: &'a Mmu,
    /// Every port of the network, addressed through `info.ports` (empty in bare test views).
    pub(crate) ports: &'a [Port],
}

impl<'a> SwitchView<'a> {
    /// A view without ports (unit tests of threshold logic): per-queue questions panic.
    pub fn bare(mmu: &'a Mmu, info: &'a SwitchInfo) -> SwitchView<'a> {
        SwitchView { info, mmu, ports: &[] }
    }

    #[inline]
    fn port(&self, p: u16) -> &Port {
        &self.ports[self.info.ports[p as usize] as usize]
    }

    /// Data queues per egress port.
    #[inline]
    pub fn nqueues(&self) -> usize {
        self.info.nqueues
    }

    /// The queue a packet of priority `prio` takes when the scheme does not classify: the first
    /// queue mapped to that priority (queue `prio` on the default map).
    #[inline]
    pub fn queue_of_prio(&self, prio: u8) -> u16 {
        self.info.prio_queue[prio as usize % NPRIO]
    }

    #[inline]
    pub fn rate(&self, p: u16) -> Rate {
        self.info.port_rate[p as usize]
    }

    /// Propagation delay of the link behind local port `p`.
    pub fn delay(&self, p: u16) -> Time {
        self.port(p).delay
    }

    /// Hop round-trip time of port `p`: twice the propagation delay plus one full packet's
    /// serialisation (BFC §3.3's HRTT; the time for a pause to reach upstream and take effect).
    pub fn hrtt(&self, p: u16) -> Time {
        let d = self.delay(p);
        d + d + self.rate(p).tx_time(self.info.mtu_bytes as u64)
    }

    /// One hop bandwidth-delay product of port `p` in bytes, `rate x HRTT` (the unit Floodgate's
    /// thresholds and windows are given in, §4).
    pub fn hop_bdp(&self, p: u16) -> u64 {
        self.rate(p).bytes_in(self.hrtt(p))
    }

    pub fn peer(&self, p: u16) -> Peer {
        self.info.peers.get(p as usize).copied().unwrap_or_default()
    }

    /// (Kmin, Kmax) ECN thresholds of port `p`.
    pub fn ecn(&self, p: u16) -> (u64, u64) {
        self.info.ecn[p as usize]
    }

    pub fn queue_bytes(&self, p: u16, q: u16) -> u64 {
        self.port(p).queues[q as usize].bytes
    }

    /// Packets (and markers) in queue `q` of port `p`.
    pub fn queue_packets(&self, p: u16, q: u16) -> usize {
        self.port(p).queues[q as usize].len()
    }

    /// Whether queue `q` of port `p` may not send at `now` (its gate or its priority is closed).
    pub fn queue_closed(&self, p: u16, q: u16, now: Time) -> bool {
        self.port(p).queue_closed(q as usize, now)
    }

    /// Whether the gate of queue `q` of port `p` is closed by a module (PFC aside).
    pub fn gate_closed(&self, p: u16, q: u16, now: Time) -> bool {
        self.port(p).gate_closed(q as usize, now)
    }

    /// Non-empty data queues of port `p` (BFC's N_active).
    pub fn active_queues(&self, p: u16) -> usize {
        self.port(p).active_queues()
    }

    /// Non-empty data queues of port `p` that may send at `now` (BFC's N_active, §3.3.2: "queues
    /// with data to transmit that are not paused").
    pub fn open_active_queues(&self, p: u16, now: Time) -> usize {
        self.port(p).open_active(now)
    }

    /// Bytes queued at port `p` over all its data queues.
    pub fn port_bytes(&self, p: u16) -> u64 {
        self.port(p).queued_bytes()
    }

    /// Number of local ports.
    pub fn nports(&self) -> usize {
        self.info.port_rate.len()
    }
}

/// For each priority, the first queue the map gives it; a priority no queue carries takes queue
/// `prio mod n`.
pub fn prio_queues(prio_of: &[u8], nqueues: usize) -> [u16; NPRIO] {
    let mut out = [0u16; NPRIO];
    for (p, o) in out.iter_mut().enumerate() {
        *o = prio_of.iter().take(nqueues).position(|&x| x as usize == p).unwrap_or(p % nqueues.max(1)) as u16;
    }
    out
}
