//! Plain settings of the network under simulation: its switches, its hosts' transport, its
//! routing and its faults. Schemes' own tables are not here: each scheme declares its table in its
//! own file (`crate::registry`), and `crate::config::NetConfig` puts the two together above the
//! models. Why the split: the models read these parameters (a scheme checks the queue count, an
//! AQM the ECN thresholds), so they must sit below the models, and the assembled settings, which
//! name every scheme, above them.
//!
//! Every field has a default from the papers or the HPCC ns-3 simulator they build on, named in
//! its doc comment. Units inside: bytes, bits/s (`Rate`), picoseconds (`Time`); the Python front
//! turns human units (`100Gbps`, `1us`, `12MB`) into these and validates ranges. Every field is
//! (de)serialised under the name a scenario file gives it (the `serde(rename)`s), so the Python
//! front hands each scenario table over whole.

mod faults;
mod transport;

pub use faults::{FaultsConfig, LinkEvent, LinkLoss, LinkState};
pub use transport::{AckPriority, CnpMode, CnpTiming, HostConfig, HostRateCap, TcpConfig, WindowConfig};

use crate::time::{Rate, Time};
use serde::{Deserialize, Serialize};

/// RED-style ECN marking on egress queues, applied at dequeue as the HPCC simulator does.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EcnConfig {
    pub enabled: bool,
    /// Below `kmin` bytes never mark; above `kmax` always; linear up to `pmax` between.
    #[serde(rename = "kmin")]
    pub kmin_bytes: u64,
    #[serde(rename = "kmax")]
    pub kmax_bytes: u64,
    pub pmax: f64,
    /// If set, `kmin`/`kmax` are for this rate and scale linearly with each port's rate (the HPCC
    /// simulator's KMIN_MAP/KMAX_MAP are linear in rate: 100/400 KB at 25G, 400/1600 KB at 100G).
    pub ref_rate: Option<Rate>,
}

/// When the switch decides a packet's ECN mark.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// At dequeue, against the queue the packet leaves behind (the HPCC simulator's
    /// `ShouldSendCN` in `SwitchNode::SwitchNotifyDequeue`).
    #[default]
    Dequeue,
    /// On arrival, against the queue the packet finds (DCTCP §3.1: "an arriving packet is marked
    /// with the CE codepoint if the queue occupancy is greater than K upon its arrival"; ns-3's
    /// RED queue disc marks at enqueue too).
    Enqueue,
}

impl MarkAt {
    pub fn is_dequeue(&self) -> bool {
        *self == MarkAt::Dequeue
    }
}

impl Default for EcnConfig {
    /// HPCC simulator's DCQCN setting at 100 Gb/s: Kmin 400 KB, Kmax 1600 KB, Pmax 0.2.
    fn default() -> Self {
        EcnConfig { enabled: true, kmin_bytes: 400_000, kmax_bytes: 1_600_000, pmax: 0.2, ref_rate: Some(Rate::gbps(100)) }
    }
}

impl EcnConfig {
    /// (kmin, kmax) at a port of rate `r`.
    pub fn thresholds(&self, r: Rate) -> (u64, u64) {
        match self.ref_rate {
            Some(rr) => {
                let s = |k: u64| (k as u128 * r.0 as u128 / rr.0 as u128) as u64;
                (s(self.kmin_bytes), s(self.kmax_bytes))
            }
            None => (self.kmin_bytes, self.kmax_bytes),
        }
    }
}

/// Per-port headroom of a lossless switch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Headroom {
    /// `3 x rate x delay + 3 KB`: the HPCC simulator's 3 x one-way BDP, plus one MTU on each end
    /// for the packet being serialised when the pause is sent and when it arrives, so that even
    /// 1 us links at 40G lose nothing.
    Auto,
    /// `3 x rate x delay` exactly: the HPCC simulator's `third.cc` (`headroom = rate * delay / 8 /
    /// 1e9 * 3`, integer arithmetic, delay in ns), with no allowance for the packets being
    /// serialised, so fast ports with short links may overflow it as they do there.
    Hpcc,
    /// `8 x rate x delay` exactly: Floodgate-NS3's `third.cc` (`bdp = rate * delay / 8 / 1e9 * 2`,
    /// `ConfigHdrm(j, bdp * 4)`, integer arithmetic, delay in ns): 60 KB at 100 Gb/s and 240 KB at
    /// 400 Gb/s over 600 ns links, against 22.5 / 90 KB with `hpcc`. Why it matters: headroom is
    /// taken out of the shared pool before the dynamic threshold divides it, so it sets where
    /// PFC pauses in a Floodgate run (the Web Server incastmix's PFC storm, Table 2).
    Floodgate,
    /// A plain number of bytes, as a scenario writes it (`headroom = "290KB"`).
    #[serde(untagged)]
    Bytes(u64),
}

impl Headroom {
    /// Headroom of one switch port of `rate` whose link has propagation delay `delay`.
    pub fn bytes_for(&self, rate: Rate, delay: Time) -> u64 {
        // both simulators' third.cc: rate * delay(ns) / 8 / 1e9, in integers
        let one_way = |r: Rate| r.0 * (delay.0 / 1000) / 8 / 1_000_000_000;
        match *self {
            Headroom::Auto => 3 * rate.bytes_in(delay) + 3_000,
            Headroom::Hpcc => one_way(rate) * 3,
            Headroom::Floodgate => one_way(rate) * 2 * 4,
            Headroom::Bytes(b) => b,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared buffer per switch (12 MB: the default; HPCC uses 32 MB in its fat-tree).
    /// Named as in a scenario's `[buffer]` table, like the next four fields.
    #[serde(rename = "size")]
    pub buffer_bytes: u64,
    /// Reserved bytes per ingress (port, priority) (HPCC: 4 KB).
    #[serde(rename = "reserve")]
    pub reserve_bytes: u64,
    /// Dynamic threshold factor (HPCC: 1/8).
    pub alpha: f64,
    /// Scale `alpha` per port with its rate as the HPCC simulator's `third.cc` does
    /// (`pfc_a_shift`): a port at the hosts' NIC rate gets `alpha`, and each doubling of the port
    /// rate above it doubles alpha, up to 1 (1/8 at 100G, 1/2 at 400G). Why: a faster port drains
    /// faster, so it may hold a larger share of the free buffer before pausing. Off by default:
    /// the papers give one alpha.
    pub alpha_by_rate: bool,
    /// PFC resume hysteresis (HPCC: 3 KB).
    pub resume_offset: u64,
    /// Departing bytes leave an ingress's headroom first (the HPCC simulator's MMU; see
    /// `MmuConfig::headroom_first`).
    pub headroom_first: bool,
    pub headroom: Headroom,
    /// Data queues per egress port (DESIGN.md default 8). Named as in a scenario's `[queues]`.
    #[serde(rename = "count")]
    pub nqueues: usize,
    /// DRR quantum in bytes (one MTU-sized frame: queues alternate packet by packet).
    pub quantum: u32,
    /// Priority of each data queue (what a PFC frame for that priority pauses); empty: queue q
    /// carries priority q mod 8. The front always writes the map out.
    #[serde(rename = "priority")]
    pub queue_prio: Vec<u8>,
    /// Scheduler among the data queues of every switch port.
    pub scheduler: crate::queues::sched::SchedulerConfig,
    /// Whether the fabric is lossless: the MMU gives every port headroom for what is in flight
    /// after a pause, and admits into it. Its own setting, not implied by the scheme (the front's
    /// default follows whether the scheme pauses senders).
    pub lossless: bool,
    pub ecn: EcnConfig,
    /// A scenario's `ecn.mark_at`: when a packet is marked (see `MarkAt`). Beside `ecn`, not in
    /// it, so that `EcnConfig` literals stay as they are; left out of the JSON at its default, so
    /// scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "MarkAt::is_dequeue")]
    pub ecn_mark_at: MarkAt,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 12_000_000,
            reserve_bytes: 4 * 1024,
            alpha: 1.0 / 8.0,
            alpha_by_rate: false,
            resume_offset: 3 * 1024,
            headroom_first: false,
            headroom: Headroom::Auto,
            nqueues: 8,
            quantum: 1500,
            queue_prio: vec![],
            scheduler: Default::default(),
            lossless: true,
            ecn: EcnConfig::default(),
            ecn_mark_at: MarkAt::Dequeue,
        }
    }
}

impl SwitchConfig {
    /// Errors name the field and the allowed values.
    pub fn validate(&self) -> Result<(), String> {
        let max = crate::queues::port::MAX_QUEUES;
        if self.nqueues == 0 || self.nqueues > max {
            return Err(format!("queues.count: {} is out of range; allowed: 1 to {max}", self.nqueues));
        }
        if !self.queue_prio.is_empty() && self.queue_prio.len() != self.nqueues {
            return Err(format!(
                "queues.priority: {} entries for {} queues; give one priority per queue",
                self.queue_prio.len(),
                self.nqueues
            ));
        }
        if let Some(p) = self.queue_prio.iter().find(|&&p| p as usize >= crate::queues::port::NPRIO) {
            return Err(format!("queues.priority: {p} is not a priority; allowed: 0 to 7"));
        }
        if self.ecn.ref_rate.is_some_and(|r| r.0 == 0) {
            return Err("ecn.ref_rate: 0 bits/s; allowed: a positive rate or none".into());
        }
        if !(self.ecn.pmax.is_finite() && (0.0..=1.0).contains(&self.ecn.pmax)) {
            return Err(format!("ecn.pmax: {} is not a probability; allowed: 0 to 1", self.ecn.pmax));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(format!("buffer.alpha: {} must be a positive number", self.alpha));
        }
        if let crate::queues::sched::SchedulerConfig::Strict { queues } = &self.scheduler {
            if let Some(q) = queues.iter().find(|&&q| q as usize >= self.nqueues) {
                return Err(format!("queues.strict: queue {q} does not exist; allowed: 0 to {}", self.nqueues - 1));
            }
        }
        Ok(())
    }
}

/// ECMP hash of every switch.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum EcmpHash {
    /// hopsim's: a mix of (src, dst, flow id, seed), independent per switch.
    #[default]
    Hopsim,
    /// The HPCC simulator's (`SwitchNode::GetOutDev`): MurmurHash3 of (source IP, destination IP,
    /// sport | dport << 16) seeded with the switch's node id, over the next hops in the order its
    /// route computation lists them; addresses and ports as `third.cc` numbers them. Same inputs,
    /// same paths as that simulator, so its runs can be matched flow by flow.
    Hpcc,
    /// ns-3 global routing's per-flow ECMP as the BFC simulator runs it
    /// (`topo::ecmp_ns3`): the next hop `tuple % n`, the tuple a XOR of the addresses its
    /// `nsdifinal.cc` gives the hosts, the ports and the flow's priority group (`pg`).
    #[serde(rename = "ns3_global")]
    Ns3Global,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub ecmp: EcmpHash,
    /// Left out of the JSON at its default, so scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "AckPath::is_hash")]
    pub ack_path: AckPath,
    /// With `ecmp = "hpcc"`: the order in which the seed simulator's route computation met a
    /// node's neighbours, which orders each switch's next hops (`topo::ecmp_hpcc`). Left out of
    /// the JSON at its default, so scenarios that do not set it keep their hash.
    #[serde(default, skip_serializing_if = "NeighbourOrder::is_ascending")]
    pub neighbour_order: NeighbourOrder,
}

/// Its route computation keys neighbours by node pointer; nodes allocated one after the other
/// give ascending ids (the HPCC simulator, as hopsim assumes for it), nodes allocated the other
/// way descending ones.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum NeighbourOrder {
    #[default]
    Ascending,
    Descending,
}

impl NeighbourOrder {
    pub fn is_ascending(&self) -> bool {
        *self == NeighbourOrder::Ascending
    }
}

impl RoutingConfig {
    /// How the route tables list next hops for this routing.
    pub fn hop_order(&self) -> crate::topo::routes::HopOrder {
        use crate::topo::routes::HopOrder;
        match (self.ecmp, self.neighbour_order) {
            (EcmpHash::Hopsim, _) => HopOrder::Ports,
            // ns-3 global routing lists a ToR's routes to a remote host in the spines' id order
            // (seen in the BFC simulator's traces), as a BFS meeting neighbours by id does
            (EcmpHash::Hpcc | EcmpHash::Ns3Global, NeighbourOrder::Ascending) => HopOrder::Ids,
            (EcmpHash::Hpcc | EcmpHash::Ns3Global, NeighbourOrder::Descending) => HopOrder::IdsDescending,
        }
    }
}

/// The path of a flow's ACKs, NACKs and CNPs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum AckPath {
    /// Their own ECMP hash, as the HPCC simulator routes them.
    #[default]
    Hash,
    /// Back along their data's path, port for port: Floodgate-NS3's `SYMMETRIC_ROUTING_MODE 1`
    /// (`net::reverse_path`).
    Reverse,
}

impl AckPath {
    pub fn is_hash(&self) -> bool {
        *self == AckPath::Hash
    }
}

#[cfg(test)]
mod tests {
    use super::Headroom;
    use crate::time::{Rate, Time};

    /// The Floodgate leaf-spine's ports (100 and 400 Gb/s, 600 ns links), as each simulator's
    /// `third.cc` sizes their headroom.
    #[test]
    fn headroom_per_port_follows_each_simulator() {
        let d = Time::from_ns(600);
        let (host, fabric) = (Rate::gbps(100), Rate::gbps(400));
        assert_eq!(Headroom::Floodgate.bytes_for(host, d), 60_000);
        assert_eq!(Headroom::Floodgate.bytes_for(fabric, d), 240_000);
        assert_eq!(Headroom::Hpcc.bytes_for(host, d), 22_500);
        assert_eq!(Headroom::Hpcc.bytes_for(fabric, d), 90_000);
        assert_eq!(Headroom::Auto.bytes_for(host, d), 25_500);
        assert_eq!(Headroom::Bytes(7).bytes_for(fabric, d), 7);
        // integer arithmetic in ns, as there: 25 Gb/s over 1,001 ns is 3,128 B one way, not 3,128.125
        assert_eq!(Headroom::Floodgate.bytes_for(Rate::gbps(25), Time::from_ns(1001)), 3_128 * 8);
    }
}
