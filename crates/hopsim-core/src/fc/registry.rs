//! What a flow-control scheme declares (`Scheme`), what it is checked against (`CheckAt`) and
//! what it is told when its switch half is built (`BuildAt`). The list of schemes is `fc/mod.rs`'s `registry!`; `crate::registry` says
//! why it is a list and a macro.

use super::nic::AnyNic;
use super::pfc::PfcConfig;
use crate::params::{HostConfig, SwitchConfig};
use super::AnyFc;
pub use crate::registry::{Declared, Unit};

/// What a scheme's parameters are checked against ([`Scheme::validate`]): the plain settings of
/// the run. Not the assembled `crate::config::NetConfig`: that names every scheme, so it sits
/// above them, and a scheme reading it would make the two depend on each other.
#[derive(Clone, Copy)]
pub struct CheckAt<'a> {
    pub switch: &'a SwitchConfig,
    pub host: &'a HostConfig,
    /// The run's standard-PFC settings, for schemes that run PFC underneath.
    pub pfc: &'a PfcConfig,
}

/// Where a switch's module is being built: what [`Scheme::build`] is told.
#[derive(Clone, Copy)]
pub struct BuildAt<'a> {
    /// The switch's node id (schemes seed their own random streams with it).
    pub node: u32,
    /// Ports of the switch.
    pub nports: usize,
    /// Priorities (PFC classes) per port.
    pub nprio: usize,
    /// The most queues an upstream neighbour has (switch queues or NIC gates): the size of a
    /// per-upstream-queue table.
    pub upq: usize,
    /// The run's master seed.
    pub seed: u64,
    /// The run's standard-PFC settings, for schemes that run PFC underneath.
    pub pfc: &'a PfcConfig,
}

/// `Ok` if the switches have at least two data queues per port, which schemes that keep one queue
/// apart (FlowSail's rsvQ, Floodgate's non-incast queue) need; else an error naming
/// `queues.count`, the scheme (`title`) and what the queues are for (`why`).
pub fn at_least_two_queues(net: &CheckAt, title: &str, why: &str) -> Result<(), String> {
    let n = net.switch.nqueues;
    if n < 2 {
        return Err(format!("queues.count: {title} needs at least 2 queues per port ({why}); got {n}"));
    }
    Ok(())
}

/// The run's refusal of a scheme whose declaration does not match its halves: a switch half that
/// reads the upstreamQ tag with a NIC half that never writes it, or counters reported that are not
/// declared ([`Declared::COUNTERS`], what the summary and the front list) or declared and never
/// reported. `module` is a fresh switch half, `declared` the counters its entry declares. Why
/// at run time as well as in the registry's test: a plugin's scheme is compiled after the core's
/// tests ran, and each of these mistakes otherwise ends in a run that exits 0 with wrong results.
pub fn check_declaration(name: &str, reads_upstream_q: bool, nic: &AnyNic, module: &AnyFc, declared: &[&str]) -> Result<(), String> {
    use super::nic::NicFc;
    use super::FlowControl;
    if reads_upstream_q && !nic.writes_upstream_q() {
        return Err(format!(
            "flow_control.scheme: `{name}` reads the upstreamQ tag, but its NIC half does not write it (every first-hop pause would name NIC queue 0); \
             give the scheme a NIC half that stamps each packet's NIC queue (`TaggingNic`) and says so in `writes_upstream_q`"
        ));
    }
    let mut reported = vec![];
    module.counters(&mut reported);
    let reported: std::collections::BTreeSet<&str> = reported.iter().map(|(k, _)| *k).collect();
    let declared_set: std::collections::BTreeSet<&str> = declared.iter().copied().collect();
    let undeclared: Vec<&str> = reported.difference(&declared_set).copied().collect();
    let unreported: Vec<&str> = declared_set.difference(&reported).copied().collect();
    if !undeclared.is_empty() || !unreported.is_empty() {
        let list = |v: &[&str]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
        return Err(format!(
            "flow_control.scheme: `{name}` reports counters it does not declare ({}) and declares counters it does not report ({}); \
             its `COUNTERS` must list exactly the names its `counters` hook pushes",
            list(&undeclared),
            list(&unreported)
        ));
    }
    Ok(())
}

/// What a flow-control scheme declares beyond its name and table ([`Declared`]), implemented by
/// its configuration type in its own file.
pub trait Scheme {
    /// Whether it pauses senders before the buffer overflows, so that a fabric running it can be
    /// lossless: the front's default for `buffer.lossless`, which stays its own setting.
    fn pauses(&self) -> bool;
    /// Whether it spreads one traffic class over many queues: then every queue carries priority
    /// 3 by default, so that PFC underneath closes all of them.
    fn one_class(&self) -> bool {
        false
    }
    /// Gates of a host's port, given the configured NIC queues (a NIC that keeps a queue per
    /// flow wants as many as a port may have).
    fn nic_gates(&self, configured: usize) -> usize {
        configured
    }
    /// Checks its parameters against the run; errors name the field and what is allowed.
    fn validate(&self, _net: &CheckAt) -> Result<(), String> {
        Ok(())
    }
    /// The configuration a run uses, told whether control frames can be lost (faults); `None`:
    /// this one.
    fn for_run(&self, _frames_lossy: bool) -> Option<super::FcConfig> {
        None
    }
    /// Its switch half.
    fn build(&self, at: &BuildAt) -> AnyFc;
    /// Its NIC half (the standard NIC unless it has one).
    fn nic(&self) -> AnyNic {
        AnyNic::default()
    }
    /// Whether its switch half reads the upstreamQ tag (`Tags::upstream_q`, BFC §3.3) of the
    /// packets it receives. Then its NIC half must write the tag (`NicFc::writes_upstream_q`):
    /// without it every packet leaves its host tagged queue 0, and a first-hop pause closes NIC
    /// queue 0 while the data sit in another. `FcConfig::validate` refuses that pair.
    fn reads_upstream_q(&self) -> bool {
        false
    }
    /// Bytes of state its module keeps per switch port (`crate::footprint`), given the data
    /// queues per port and the size of a per-upstream-queue table.
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64;
    /// Whether it keys queues by priority alone, so that ACKs may travel in the data queues
    /// (`transport.ack_priority = "data"`).
    fn queues_by_priority(&self) -> bool {
        false
    }
    /// Whether ACKs may travel in its data queues (`transport.ack_priority = "data"`): where it
    /// keys queues by priority alone, or where it says where they go.
    fn acks_in_data_queues(&self) -> bool {
        self.queues_by_priority()
    }
    /// Whether queue 0 of every port is served strictly before the others (the front sets
    /// `queues.scheduler` so): Floodgate's non-incast queue (§4.2).
    fn strict_first_queue(&self) -> bool {
        false
    }
    /// Whether the front gives every switch a buffer that never fills (Ideal-FQ's "infinite
    /// buffering", BFC §6.2.1).
    fn unlimited_buffer(&self) -> bool {
        false
    }
    /// Whether its control frames name flows that the sender must find after a fault moved them
    /// (the flow store then keeps every flow).
    fn names_flows(&self) -> bool {
        false
    }
    /// Whether ECN marking reads the bytes of every data queue of the packet's port rather than
    /// its own queue's (one-class schemes whose extra queues the seed simulator counts as one).
    fn ecn_on_port(&self) -> bool {
        false
    }
    /// Whether senders write each data packet's flow-table key (`Tags::key`, from the flow's
    /// source, source port and packet count: `bfc_ns3::flow_key`).
    fn flow_keys(&self) -> bool {
        false
    }
}
