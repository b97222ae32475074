//! Per-hop flow control: the engine's contract with the schemes that live on switches (and the
//! host half of a scheme that lives on NICs).
//!
//! # The contract
//!
//! The unit of control is a **queue**, not a priority. Every egress port has any number of data
//! queues (up to [`crate::queues::port::MAX_QUEUES`]), each mapped to a priority by configuration and
//! each with a **gate** a module opens and closes (closed until a time, or until opened). PFC is
//! "close every queue of priority p", BFC pauses one queue, Floodgate keeps a VOQ's gate shut while
//! its destination has no window, FlowSail closes a flow's original queue while it drains.
//!
//! A module never reaches into the simulator. The engine calls its hooks with `now`, a read-only
//! [`SwitchView`] (the MMU; per port its rate, propagation delay, HRTT, the tier of the node at the
//! far end, ECN thresholds; per queue its bytes, packets and gate; the number of active queues) and
//! an action buffer, and then carries the actions out. Actions ([`FcAction`]): send a control frame
//! of any kind ([`CtrlMsg`]) out of a local port; open or close a local queue's gate; kick a
//! port (look for something to send); insert a pair of zero-length order markers.
//!
//! # Order of hooks along a data packet's path through a switch
//!
//! 1. `classify` chooses the egress queue (static priority by default; BFC's flow table,
//!    FlowSail's rsvQ, Floodgate's VOQ). The packet's tags written by the previous hop
//!    ([`PktMeta::tags`], [`PktMeta::flags`]) are readable here.
//! 2. MMU admission. A refused packet is dropped and counted, and `on_drop` lets the module undo
//!    what `classify` did (BFC's flow-table size).
//! 3. `on_enqueue` after the packet is in its queue (PFC's XOFF check, BFC's pause counter); it
//!    may mark the packet (BFC's counterIncr), read back at `on_dequeue`.
//! 4. The port's scheduler (DRR, strict + DRR, or rank) picks among open, non-empty queues.
//! 5. `on_dequeue` after the packet left its queue and the buffer (PFC's XON check).
//! 6. `stamp` may write the tags the next hop reads (BFC's upstreamQ, a per-hop PSN); then ECN
//!    and the AQM of the port (EIN, INT), then the wire.
//!
//! Control frames arriving on a port go to `on_control` with the local port they came in by; a
//! PFC or queue-pause frame has already closed (or opened) the port's gates by then, since that is
//! what the link layer does. `on_timer` fires at the module's `next_timer` (one timer per switch).
//!
//! On a host, [`nic::AnyNic`] is the host half: which NIC queue (gate) a flow uses, which pause
//! kinds the NIC obeys (PFC, queue pause, destination pause, flow pause) and the tags it stamps on
//! the packets it sends.
//!
//! # A worked example: pause one upstream queue per congested egress queue
//!
//! [`tqp`] (threshold queue pause) is that scheme, in one file: in `stamp` it writes
//! `pkt.tags.upstream_q = pkt.queue` so the next hop knows which upstream queue sent the packet;
//! at the next hop, in `on_enqueue`, once the packet's egress queue holds more than `K` it pushes
//! `FcAction::Send { port: pkt.ingress, msg: CtrlMsg::QueuePause { queue: pkt.tags.upstream_q,
//! pause: true }, by: Origin::Scheme }`; in `on_dequeue`, below `K/2`, the same frame with
//! `pause: false`. The upstream port closes and reopens exactly that queue; its other queues keep
//! sending. Its unit tests run it on [`crate::testing::Sw`], and `tests/test_new_schemes.py` runs
//! it end to end from `hopsim run`; docs/writing-a-scheme.md walks through it.
//!
//! # The registry
//!
//! Every scheme declares itself in its own file ([`Scheme`], [`registry::Declared`]) and takes one
//! line in the list below; [`FcConfig`], [`AnyFc`] and every list of allowed values come from that
//! list (`crate::registry`). Schemes from outside the crate register at run time ([`plugin`]).

pub mod bfc_ns3;
pub mod nic;
pub mod plugin;
pub mod registry;
pub mod view;
pub mod with_pfc;

// A frame's body travels with its packet, so it is defined in the base layer; a scheme writes
// against it here, beside its actions.
pub use crate::packet::ctrl::{CtrlKind, CtrlMsg, Origin};
pub use registry::Scheme;
pub use view::SwitchView;

use crate::packet::{tag, Tags};
use crate::time::{Rate, Time};

/// What a hook sees of a packet. Ports are the switch's local port indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PktMeta {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire.
    pub size: u32,
    /// Traffic class (PFC priority) the packet belongs to.
    pub prio: u8,
    /// Local port the packet arrived on (its upstream neighbour).
    pub ingress: u16,
    /// Local port it leaves by.
    pub egress: u16,
    /// Egress queue it sits in.
    pub queue: u16,
    /// ECMP hash of the flow's five-tuple (BFC hashes the FID into its flow table).
    pub hash: u32,
    /// One-bit tags ([`crate::packet::tag`]).
    pub flags: u8,
    /// Wide tags (zero unless the run keeps them).
    pub tags: Tags,
}

impl PktMeta {
    /// Whether the packet's flow is tagged incast.
    #[inline]
    pub fn incast(&self) -> bool {
        self.flags & tag::INCAST != 0
    }
}

/// What a module asks the engine to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FcAction {
    /// Send `msg` out of local port `port` to the neighbour on that link.
    Send { port: u16, msg: CtrlMsg, by: Origin },
    /// Close data queue `queue` of local port `port` until `until` (`Time::MAX`: until opened);
    /// `until <= now` opens it (and kicks the port).
    Gate { port: u16, queue: u16, until: Time },
    /// Let local port `port` look for something to send (after a module's own state changed).
    Kick { port: u16 },
    /// Order markers at local port `port`: a release marker at the tail of queue `release`, a hold
    /// marker at the tail of queue `hold`, which then waits at its head until the release marker
    /// has left (FlowSail's order marks, §III-D).
    Markers { port: u16, hold: u16, release: u16 },
    /// Move the head packet of data queue `from` of local port `port` to the tail of its data
    /// queue `to`, with its bytes (queue and MMU egress counts): a packet a module held back joins
    /// the queue other traffic takes, behind what is there now and ahead of what comes later
    /// (Floodgate-NS3's VOQ packets entering the egress FIFO once their window allows). Its buffer
    /// charge stays (the same egress port); an empty `from` or a marker at its head is left.
    Join { port: u16, from: u16, to: u16 },
}

pub type Actions = Vec<FcAction>;

/// What [`FlowControl::sample`] reports: `(local port, metric, value)`.
pub type Samples = Vec<(u16, &'static str, f64)>;

/// The port of a sample that is about the whole switch.
pub const SWITCH_WIDE: u16 = u16::MAX;

/// The hooks of a per-hop flow-control module; every hook has a no-op default.
pub trait FlowControl {
    /// Choose the egress queue of a packet (by priority unless the scheme classifies, as BFC,
    /// FlowSail and Floodgate do).
    fn classify(&mut self, _now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        view.queue_of_prio(pkt.prio)
    }
    /// A packet has been admitted into the buffer and queued. The hook may write the packet's
    /// tags (BFC's counterIncr); they stay with it at this switch and, unless `stamp` rewrites
    /// them, beyond.
    fn on_enqueue(&mut self, _now: Time, _pkt: &mut PktMeta, _view: &SwitchView, _out: &mut Actions) {}
    /// A packet left its queue to be transmitted.
    fn on_dequeue(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _out: &mut Actions) {}
    /// Write the tags the next hop reads into a departing packet. Called only in runs that keep
    /// tags: a module that stamps says so in `uses_tags`.
    fn stamp(&mut self, _now: Time, _pkt: &mut PktMeta, _view: &SwitchView) {}
    /// A packet was dropped at admission (undo what `classify` counted).
    fn on_drop(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _out: &mut Actions) {}
    /// A control frame from the neighbour on local port `from`.
    fn on_control(&mut self, _now: Time, _from: u16, _msg: &CtrlMsg, _view: &SwitchView, _out: &mut Actions) {}
    /// The module's timer fired.
    fn on_timer(&mut self, _now: Time, _view: &SwitchView, _out: &mut Actions) {}
    /// When the module next wants `on_timer` (the engine keeps one pending timer per switch).
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// The link of local port `port` went down (`crate::faults`). The engine has already emptied
    /// the port's queues, calling `on_dequeue` for every data packet in them, and lifted the
    /// pauses and gates on both ends of the link; the neighbour is gone, so state kept about it
    /// (pauses sent to it, credits owed to it or expected from it) should be forgotten. Frames
    /// the module sends out of `port` are dropped while the link is down.
    fn on_link_down(&mut self, _now: Time, _port: u16, _view: &SwitchView, _out: &mut Actions) {}
    /// Counters the module keeps, by name, for the run summary.
    fn counters(&self, _out: &mut Vec<(&'static str, u64)>) {}
    /// Values the module reports over time (VOQs in use, flows paused, CFT occupancy), taken at
    /// every buffer sample (`record.buffer_interval`) into the `module_samples` table: push
    /// `(local port, metric, value)`, with port [`SWITCH_WIDE`] for a value of the whole switch.
    /// Why a hook and not a table per scheme: every scheme has its own "X per port over time"
    /// figure, and one long table (time, node, port, metric, value) carries them all through the
    /// same spill, spool, Parquet and DuckDB path.
    fn sample(&self, _now: Time, _view: &SwitchView, _out: &mut Samples) {}
    /// Whether the module reads or writes wide tags ([`Tags`]), so the run keeps the tag store.
    fn uses_tags(&self) -> bool {
        false
    }
}

/// The earlier of two optional deadlines (modules that stack timers, e.g. P-PFC over PFC).
pub fn earliest(a: Option<Time>, b: Option<Time>) -> Option<Time> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// PFC pause quanta for a duration at a rate: one quantum is 512 bit times (IEEE 802.1Qbb),
/// rounded up and capped at the 16-bit field.
pub fn quanta_for(d: Time, rate: Rate) -> u16 {
    let q512 = Rate::tx_time(rate, 64); // 512 bits
    let q = d.0.div_ceil(q512.0.max(1));
    q.min(u16::MAX as u64) as u16
}

/// Duration of `quanta` at `rate`.
pub fn quanta_duration(quanta: u16, rate: Rate) -> Time {
    Time(rate.tx_time(64).0 * quanta as u64)
}

/// How long a pause that a frame asks for lasts from `now`: PFC's quanta at the link's rate, or
/// until resumed for the on/off kinds.
pub fn pause_end(now: Time, msg: &CtrlMsg, rate: Rate) -> Time {
    match *msg {
        CtrlMsg::Pfc { quanta, .. } => now + quanta_duration(quanta, rate),
        CtrlMsg::QueuePause { pause, .. } | CtrlMsg::DstPause { pause, .. } | CtrlMsg::FlowPause { pause, .. } => {
            if pause {
                Time::MAX
            } else {
                now
            }
        }
        _ => now,
    }
}

/// The traffic class flows use unless a scenario says otherwise.
pub const DATA_PRIO: u8 = 3;

// The schemes, each declared in its own file (`Scheme`); this list is the only place that
// names them all. A new scheme is one file and one line here.
crate::registry::registry! {
    config FcConfig, any AnyFc, tag scheme, table "flow_control", tagged SchemeTagged, default Pfc;
    custom FlowControl;
    dynamic Plugin(plugin::PluginTable), lookup plugin::lookup, entries plugin::entries, defaults plugin::all_defaults;
    unit {
        none::None(NoScheme) => [None(none::NoFc)],
        pfc::Pfc(PfcScheme) => [Pfc(pfc::Pfc)],
        ideal_fq::IdealFq(IdealFqScheme) => [],
    }
    configured {
        ppfc::Ppfc(PpfcConfig) => [Ppfc(with_pfc::WithPfc<ppfc::Ppfc>)],
        capfc::Capfc(CapfcConfig) => [Capfc(with_pfc::WithPfc<capfc::Capfc>)],
        bfc::Bfc(BfcConfig) => [Bfc(Box<bfc::Bfc>), BfcPfc(Box<with_pfc::WithPfc<with_pfc::Plain<bfc::Bfc>>>)],
        flowsail::Flowsail(FlowsailConfig) => [Flowsail(Box<flowsail::Flowsail>), FlowsailPfc(Box<with_pfc::WithPfc<with_pfc::Plain<flowsail::Flowsail>>>)],
        floodgate::Floodgate(FloodgateConfig) => [Floodgate(Box<floodgate::Floodgate>), FloodgatePfc(Box<with_pfc::WithPfc<with_pfc::Plain<floodgate::Floodgate>>>)],
        pfc_tag::PfcTag(PfcTagConfig) => [PfcTag(Box<pfc_tag::PfcTag>)],
        tqp::Tqp(TqpConfig) => [Tqp(tqp::Tqp)],
    }
}

pub use none::NoFc;

impl FcConfig {
    /// Whether the scheme pauses senders, so that a fabric running it can be lossless. What the
    /// fabric is (lossless or lossy) is its own setting (`SwitchConfig::lossless`); this is only
    /// the front's default for it.
    pub fn pauses(&self) -> bool {
        with_entry!(self, |c| Scheme::pauses(c))
    }

    /// The queue-to-priority map when the scenario gives none. Schemes that spread one traffic
    /// class over many queues (BFC, Ideal-FQ, FlowSail, Floodgate) put every queue in that class,
    /// priority 3 (the class flows use unless told otherwise), so that a PFC pause for it — PFC
    /// as their backstop — closes all of them; the others map queue q to priority q mod 8.
    pub fn default_prio_map(&self, nqueues: usize) -> Vec<u8> {
        if with_entry!(self, |c| Scheme::one_class(c)) {
            vec![DATA_PRIO; nqueues]
        } else {
            crate::queues::port::default_prio_map(nqueues)
        }
    }

    /// Gates of a host's port, given the configured NIC queues.
    pub fn nic_gates(&self, configured: usize) -> usize {
        with_entry!(self, |c| Scheme::nic_gates(c, configured))
    }

    /// Checks the scheme's parameters against the run, then its declaration against its halves
    /// ([`registry::check_declaration`]); errors name the field or the scheme.
    pub fn validate(&self, net: &registry::CheckAt) -> Result<(), String> {
        with_entry!(self, |c| Scheme::validate(c, net))?;
        self.check_declaration(net.pfc)
    }

    /// Whether the scheme's switch half reads the upstreamQ tag (`Scheme::reads_upstream_q`).
    pub fn reads_upstream_q(&self) -> bool {
        with_entry!(self, |c| Scheme::reads_upstream_q(c))
    }

    /// The scheme's declaration checked against its halves: a fresh switch half of a two-port
    /// switch reports the counters, the NIC half says whether it writes upstreamQ.
    pub fn check_declaration(&self, pfc: &pfc::PfcConfig) -> Result<(), String> {
        let module = AnyFc::build(self, 0, 2, 8, 1, 0, pfc);
        let declared = Self::registry().into_iter().find(|e| e.name == self.name()).map_or(&[][..], |e| e.counters);
        registry::check_declaration(self.name(), self.reads_upstream_q(), &self.nic(), &module, declared)
    }

    /// The configuration a run uses, told whether its control frames can be lost (the scenario
    /// has faults): BFC's pause-bitmap refresh depends on it (`bfc::RefreshWhen`).
    pub fn for_run(&self, frames_lossy: bool) -> FcConfig {
        with_entry!(self, |c| Scheme::for_run(c, frames_lossy)).unwrap_or_else(|| self.clone())
    }

    /// Bytes of flow-control state per switch port (`crate::footprint`).
    pub fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64 {
        with_entry!(self, |c| Scheme::bytes_per_port(c, nqueues, upq))
    }

    /// Whether ACKs may travel in the data queues under this scheme.
    pub fn acks_in_data_queues(&self) -> bool {
        with_entry!(self, |c| Scheme::acks_in_data_queues(c))
    }

    /// The names of the schemes under which ACKs may travel in the data queues (for error
    /// messages).
    pub fn acks_in_data_names() -> Vec<&'static str> {
        Self::all_defaults().iter().filter(|c| c.acks_in_data_queues()).map(|c| c.name()).collect()
    }

    /// Whether the scheme's frames name flows (the flow store keeps every flow under faults).
    pub fn names_flows(&self) -> bool {
        with_entry!(self, |c| Scheme::names_flows(c))
    }

    /// Whether ECN marking reads a port's data queues together (`Scheme::ecn_on_port`).
    pub fn ecn_on_port(&self) -> bool {
        with_entry!(self, |c| Scheme::ecn_on_port(c))
    }

    /// Whether senders write each data packet's flow-table key (`Scheme::flow_keys`).
    pub fn flow_keys(&self) -> bool {
        with_entry!(self, |c| Scheme::flow_keys(c))
    }

    /// What the front resolves from the scheme (its keywords `auto` and `modulo`, and the
    /// settings a scheme implies): `pauses` (`buffer.lossless = "auto"`), `one_class` (`queues.
    /// priority = "modulo"`), `strict_first_queue` (`queues.scheduler`), `unlimited_buffer`
    /// (`buffer.size`).
    pub fn front_facts(&self) -> serde_json::Value {
        with_entry!(self, |c| serde_json::json!({
            "pauses": Scheme::pauses(c),
            "one_class": Scheme::one_class(c),
            "strict_first_queue": Scheme::strict_first_queue(c),
            "unlimited_buffer": Scheme::unlimited_buffer(c),
        }))
    }

    /// The NIC half of the scheme, for every host.
    pub fn nic(&self) -> nic::AnyNic {
        with_entry!(self, |c| Scheme::nic(c))
    }
}

impl FlowControl for AnyFc {
    #[inline]
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        dispatch!(self, classify(now, pkt, view))
    }
    #[inline]
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_enqueue(now, pkt, view, out))
    }
    // always: a second caller (a link going down, `faults.rs`) must not make the compiler keep
    // it out of line on the dequeue path
    #[inline(always)]
    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_dequeue(now, pkt, view, out))
    }
    #[inline]
    fn stamp(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView) {
        dispatch!(self, stamp(now, pkt, view))
    }
    fn on_drop(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_drop(now, pkt, view, out))
    }
    fn on_control(&mut self, now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_control(now, from, msg, view, out))
    }
    fn on_timer(&mut self, now: Time, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_timer(now, view, out))
    }
    fn on_link_down(&mut self, now: Time, port: u16, view: &SwitchView, out: &mut Actions) {
        dispatch!(self, on_link_down(now, port, view, out))
    }
    #[inline(always)]
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, next_timer())
    }
    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        dispatch!(self, counters(out))
    }
    fn sample(&self, now: Time, view: &SwitchView, out: &mut Samples) {
        dispatch!(self, sample(now, view, out))
    }
    fn uses_tags(&self) -> bool {
        dispatch!(self, uses_tags())
    }
}

impl AnyFc {
    /// Whether the module uses wide tags (the trait's answer, callable without the trait).
    pub fn uses_tags_any(&self) -> bool {
        FlowControl::uses_tags(self)
    }

    /// Build the module of switch `node` with `nports` ports, whose upstream neighbours have at
    /// most `upq` queues each (switch queues or NIC gates).
    pub fn build(cfg: &FcConfig, node: u32, nports: usize, nprio: usize, upq: usize, seed: u64, pfc: &pfc::PfcConfig) -> AnyFc {
        let at = registry::BuildAt { node, nports, nprio, upq, seed, pfc };
        with_entry!(cfg, |c| Scheme::build(c, &at))
    }
}
