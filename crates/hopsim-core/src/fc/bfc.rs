//! BFC, Backpressure Flow Control (Goyal et al., "Backpressure Flow Control", NSDI 2022): per-hop,
//! per-flow flow control with few queues per port, by dynamic assignment of flows to queues and
//! per-queue pause of the upstream queue a congested flow came from.
//!
//! Why: end-to-end congestion control needs an RTT to react, during which a burst builds an
//! end-to-end BDP of buffering per flow at the bottleneck (§2.1). BFC reacts within one hop RTT by
//! pausing only the congested flows at the upstream, so buffers stay at about one hop BDP while
//! the other flows keep the link busy (§2.3, §3.3).
//!
//! The mechanism, as the paper gives it:
//! - Queue assignment (§3.3.1, "On Enqueue" pseudo-code, lines 1-9): a flow table indexed by
//!   `<egress port, hash(FID)>` with entries `{qAssignment, size, timestamp}`; a flow gets a queue
//!   anew only when its entry is empty (`size == 0`) *and* older than the sticky threshold
//!   (§3.3.2, "Sticky queue assignment": 2 HRTT); then an empty queue of the egress if there is
//!   one (the bitmap of empty queues, searched from a rotating start as SwitchX does, §4), else a
//!   random one. "On Dequeue" (line 1): `size -= 1`. The table has 100x the port's queues (§3.3.1;
//!   App. E.5 varies it).
//! - Backpressure (§3.3.2, pseudo-code "On Enqueue" lines 1-6 and "On Dequeue" lines 1-5): every
//!   upstream switch and the sending NIC stamp the queue the packet left from (`upstreamQ`); the
//!   downstream keeps a pause counter per `<ingress port, upstreamQ>`; a packet that finds its
//!   queue longer than `Th` increments it (and is marked `counterIncr`), its departure decrements
//!   it; a pause frame goes upstream when the counter leaves 0 and a resume when it returns to 0.
//!   A bitmap of the upstream queues that should be paused is re-sent periodically (§3.3.2, for
//!   lost frames).
//! - Pause threshold (§3.3.2): `Th = HRTT x mu / N_active` per egress, with `HRTT` the largest hop
//!   RTT over the switch's ingresses, `mu` the egress rate and `N_active` its active queues (with
//!   data and not paused).
//! - Deadlock prevention (App. B): backpressure is skipped for packets that come down from a higher
//!   tier and go back up (the only up-down violations in a Clos).
//! - Variants: stochastic (hash) and single-queue assignment (App. E.4, §6.1's ablation), sampling
//!   (App. E.1), IncastLabel (App. E.6), NICs that ignore backpressure (App. E.1, in `fc::nic`),
//!   and no backpressure at all with an unlimited buffer: Ideal-FQ (§6.2.1).
//!
//! Outputs (the list): per port over time through `FlowControl::sample` into the
//! `module_samples` table, at every buffer sample: `active_flows` (Fig. 10c's CDF),
//! `collisions` (cumulative, per egress; Fig. 21b), `paused_upstream_queues` (per ingress) and
//! `longest_queue_bytes` (the port's total is the buffer table's `bytes`). Pause frames per
//! queue come from the control table: rows of kind `queue_pause` are exactly the per-queue
//! pauses (value 1) and resumes (value 0), `target` the upstream queue, `node`/`port` the sender
//! and the port that leads to the upstream; refresh bitmaps are rows of kind `queue_bitmap`
//! (target = first queue, value = the bits). Counters: `bfc_pauses`, `bfc_resumes`,
//! `bfc_refreshes`, `bfc_assignments`, `bfc_collisions`.
//!
//! Interpretation choices (the paper leaves them open):
//! - The flow table is per egress port, `table_factor x data queues` entries each (the paper's
//!   76 K entries for a 24-port ToR with 32 queues is the same total). `hash(FID)` mixes the flow
//!   id; the table index is that hash modulo the entries of the port.
//! - `qLength` of the enqueue test is the assigned queue's bytes before this packet (the ingress
//!   pipeline sees the queue before the packet joins it).
//! - One queue per port is left to the control class (§3.3.2: "This reduces the number of queues
//!   available for dynamic queue assignment by 1"): flows are assigned among `nqueues - 1` queues.
//!   With IncastLabel, the last of those is the incast queue.
//! - The sticky threshold and `Th` use the largest HRTT over the switch's ports, computed once.
//! - The refresh bitmap is sent only to upstreams with at least one paused queue (an upstream
//!   with nothing paused has nothing to refresh), and by default only in runs that can lose
//!   frames (a scenario with `[faults]`; `refresh_when = "always"` is the paper's switch). Where
//!   no frame is lost, pauses and resumes reach the upstream in order on one FIFO control queue,
//!   so the bitmap would always equal the upstream's gates and change nothing but the 64 B it
//!   takes on the wire: on the Fig. 9 run it was ~250 k frames in 3 ms.
//! - "BFC + sampling" (App. E.1) leaves unsampled packets out of the pause counter and `size`
//!   only: their arrival still refreshes the entry's timestamp (the ingress pipeline sees every
//!   packet), so the sticky threshold holds a flow on its queue while unsampled packets of it
//!   wait there. Refreshing on sampled packets only reordered 5.6% of the bytes of the quick
//!   Fig. 18 run into go-back-N retransmissions (the paper: < 0.04% of packets).
//! - "BFC + stochastic" hashes the FID with a salt drawn from the run's seed: the same hash at
//!   every switch (§3.2), a different one per seed, so Fig. 8's runs differ in collisions as the
//!   testbed's did. Dynamic assignment's flow-table index keeps its fixed hash.
//! - `lone_packet_pauses` (default true, §3.3.2's pseudo-code): false is the rule of the paper's
//!   simulator (BFC_NS3_NSDI2022 only runs the pause test when the flow-table entry holds more
//!   than this packet), which the §6.2 scenario files use. Under Fig. 9's incasts it decides the
//!   short flows' tail: two concurrent 100-to-1 incasts to one ToR fill every data queue of a
//!   spine's port towards it with paused incast flows (31 of them at spine 136 in seed 1), so a
//!   one-packet background flow through that port lands in a paused queue; by the pseudo-code
//!   it then pauses its upstream queue at the source ToR, which stays closed until that packet
//!   leaves (hundreds of us), and every new flow the ToR gives that empty queue waits behind the
//!   pause: ToR uplinks reached 391 active flows, and the short flows' p99 slowdown is 136 /
//!   84 / 120 (seeds 1-3, every other option at its default). Without lone-packet pauses it is
//!   60 / 49 / 77 and collisions fall from 34.4 k to 19.2 k (seed 1); HPCC's is 228 (seed 1).
//! - `assign_paused_queues` (default true, §3.3.1: the bitmap of empty queues, reset "when the
//!   last packet in a queue is scheduled"): false is the paper's simulator again
//!   (`Assign_hqCnt_qCnt` takes a queue only if it is empty and not paused, else a random one),
//!   which the §6.2 files also use. With true, an empty queue that its downstream holds paused
//!   is handed to new flows, which then wait behind a pause they did not cause: in the Fig. 9
//!   run (seed 1) 715 of the ~2,800 short flows above the p99 waited a median 325 us in such a
//!   queue at their source ToR's uplink (paused 99.9% of the wait, nothing ahead of them); with
//!   false, 332 wait there, behind 5 KB. The p99 goes from 60 / 49 / 77 to 50 / 41
//!   / 53 (seeds 1-3); most of the tail is the next point.
//! - `queue_search` (default "rotating", §4's rotating start of the empty-queue bitmap) and
//!   `collision_queue` (default "random", §3.3.1's randomQ): "random" and "per_entry" are the
//!   paper's simulator again (`Assign_hqCnt_qCnt` starts its search at `rand()` and, with no
//!   queue empty, takes the queue `srand` of the flow-table entry gives), which its importer
//!   uses. From a random start a new flow is as likely to get a queue just emptied, whose flow
//!   may come back within the sticky threshold and share it, as any other; from the rotating
//!   start that queue is handed out last, so flows spread over more queues and a port runs out
//!   of empty ones sooner. On the simulator's run with 100-to-1 incasts the two options take
//!   hopsim's switch buffers from 11-17 % above its to 7-13 % and the short flows' p99 from
//!   +65 % to -2 % (docs/validation.md). The §6.2 files use them too: Fig. 9's short-flow p99
//!   goes from 50 / 41 / 53 to 37 / 38 / 55 (seeds 1-3).
//! - What is left of Fig. 9's short-flow tail is §3.3.1's own collisions, at the spines' ports to
//!   a ToR that two incasts target at once (seed 1: hosts 106 and 111 of ToR 6 from 0 to 2.5 ms,
//!   52 and 49 of ToR 3 from 1 to 3.3 ms; 200 incast flows over 8 spines is 25 per port, plus
//!   background, against 31 data queues). Traced at those ports, a slow flow to such a ToR (to
//!   the incast's host or to another of its hosts) finds all 31 queues busy (median), 25 incast
//!   flows at the port, and 93% of the time lands behind an incast flow's packets (median 24
//!   incast and 9 background packets ahead). The ToR holds that spine queue paused (98.6% of the
//!   wait) because the incast flow's packets go on to its congested downlink; they leave at the
//!   incast flow's share of the incast host's link (100 Gb/s over 200 flows, 0.5 Gb/s), so the
//!   24 KB ahead take ~380 us (measured median wait 320 us). Th sets how much is ahead: with most
//!   of the port's queues paused, `N_active` counts few queues and Th is near one hop BDP. The
//!   pseudo-code does the same (a random queue when none is empty), and so does the paper's
//!   simulator (its 31 assignable queues are 3 to 33 of 36). The paper (§6.2.3) names only
//!   the small requests "that happen to go to the same destination as the incast"; by its
//!   mechanism the collisions are at the spine's port, which every flow to that ToR shares.
//! - A packet the MMU refuses undoes what `classify` did (the flow-table entry's queue, the
//!   rotating start, the assignment and collision counts) in `on_drop`; the random pick's draw
//!   is not given back.
//! - A collision is counted when a flow that needs a queue finds none empty (Fig. 10c's cause),
//!   and when a flow kept on its queue by the sticky threshold finds another flow's packets there
//!   (a new flow took the queue while it was empty): both leave two flows in one queue.

use super::{Actions, CtrlMsg, FcAction, FlowControl, Origin, PktMeta, Samples, SwitchView};
use crate::packet::tag;
use crate::rng::{mix, stream, Rng};
use crate::time::Time;
use serde::{Deserialize, Serialize};

/// How flows are mapped to queues.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Assignment {
    /// BFC's dynamic assignment to an empty queue (§3.3.1).
    #[default]
    Dynamic,
    /// A hash of the FID picks the queue (stochastic fair queuing; "BFC + Stochastic", App. E.4).
    Stochastic,
    /// Every flow in one queue ("BFC + single", §6.1's ablation).
    Single,
}

/// When the pause bitmap is re-sent (§3.3.2: "For reliability against pause/resume packets being
/// dropped, we also periodically send a bitmap of the queues that should be paused").
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum RefreshWhen {
    /// Only in runs where frames can be lost (a scenario with `[faults]`): elsewhere every pause
    /// and resume arrives, in order, so the bitmap would only repeat the upstream's state.
    #[default]
    Faults,
    /// Always, as the paper's switch does.
    Always,
}

/// When a pause reaches the upstream.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PauseDelivery {
    /// A pause frame leaves as soon as the counter leaves 0 (§3.3.2's pseudo-code).
    #[default]
    AtOnce,
    /// The paper's simulator (BFC_NS3_NSDI2022): a pause only sets its bit
    /// (`QbbNetDevice::UpdatePauseQueue`, qbb-net-device.cc:1209-1221), and the bitmap goes out
    /// with the next periodic frame, every `refresh` on every port of the switch
    /// (`BroadcomNode::CheckAndSendPause`, broadcom-node.cc:165-173, every 1 us); a resume sends
    /// the port's whole bitmap at once (`UpdateResumeQueue`, qbb-net-device.cc:1224-1245).
    NextRefresh,
}

/// How a sending NIC gives its flows their queues (§3.3.2: a queue per flow at the NIC).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum NicQueues {
    /// The flow id modulo the NIC's queues: two concurrent flows of a host whose ids are a
    /// multiple of 1,024 apart share a queue, the later one behind the earlier one's packets.
    #[default]
    FlowId,
    /// A free queue at the flow's first packet, given back at its last ACK: no two flows share
    /// one while one is free (the paper's simulator's `available_sending_queues`,
    /// qbb-net-device.cc:136-160, 653, 824-827).
    FreeList,
}

/// Where the search for an empty queue starts when a flow needs one (§3.3.1's `emptyQ`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueueSearch {
    /// After the queue the port gave last: §4's bitmap of empty queues is read "with a different
    /// rotating starting point per pipeline to avoid new flows from being assigned to the same
    /// empty queue", so a queue just emptied is the last one handed out again.
    #[default]
    Rotating,
    /// At a random queue each time (the paper's simulator: `seed = rand()`, then the first empty
    /// open queue from there; `Assign_hqCnt_qCnt`, qbb-net-device.cc:1294-1303). A queue just
    /// emptied, whose flow may still be within the sticky threshold, is as likely as any other.
    Random,
}

/// Which queue a flow gets when no queue is empty (§3.3.1's `randomQ`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CollisionQueue {
    /// A random one at each such assignment.
    #[default]
    Random,
    /// One fixed per flow-table entry (the paper's simulator: `srand(p_hqCnt); 3 + rand() %
    /// (qCnt - 5)`, qbb-net-device.cc:1305-1308): an entry that finds every queue busy again
    /// lands in the same queue, and two entries meet only where their fixed queues coincide.
    PerEntry,
}

/// Which flow-table entry a packet's flow takes at an egress port (§3.3.1: "hash the FID").
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowIndex {
    /// A hash of the flow id, salted per run: flows share an entry at random.
    #[default]
    FidHash,
    /// The paper's simulator's index of the packet's headers (`GethqCnt`, qbb-net-device.cc:
    /// 1271-1289: source address x 1235 + source port + 13 x the flow's packet count, mod the
    /// table's entries), which senders write into their packets (`Tags::key`), and with
    /// `collision_queue = "per_entry"` its `srand` of the entry for the collision queue
    /// ([`super::bfc_ns3`]). Flows of one host with neighbouring ports and lengths sit in
    /// neighbouring entries, and hosts whose addresses differ by a multiple of 45 x 256 share a
    /// base, so which flows share an entry follows its traffic, not chance.
    Ns3Header,
}

/// How a port's pause bitmap goes on the wire.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum BitmapFrame {
    /// A frame of `control.queue_pause` bytes per 64 upstream queues with a paused one (and the
    /// 64 of a queue just resumed): a frame stays small whatever the number of queues.
    #[default]
    #[serde(rename = "per_64")]
    Per64,
    /// One frame for the port's whole bitmap, whatever the number of queues (the paper's
    /// simulator: `PauseHeader` holds a 1,024-bit bitmap, pause-header.cc:170, and
    /// `SendPauseFrame` sends one per port per call, broadcom-node.cc:165-173): where the
    /// upstream's queues span several 64s, as a ToR's port to a host whose NIC has a queue per
    /// flow, this is one frame where `per_64` sends several.
    Whole,
}

/// BFC parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BfcConfig {
    pub assignment: Assignment,
    /// Flow-table entries per egress port as a multiple of its data queues (§3.3.1: 100).
    pub table_factor: u32,
    /// Sticky threshold in hop RTTs (§3.3.2: 2).
    pub sticky_hrtt: f64,
    /// `Th` as a multiple of one hop BDP at the queue's drain rate (§3.3.2: 1; App. A, Fig. 7b).
    pub th_hrtt: f64,
    /// Period of the pause-bitmap refresh (§3.3.2; the default 1 us); `None`: off.
    pub refresh: Option<Time>,
    /// Whether the refresh runs in runs that cannot lose frames (`Always`: the paper's switch).
    pub refresh_when: RefreshWhen,
    /// Set by the engine, not by users: the run has faults, so control frames can be lost.
    #[serde(skip)]
    pub frames_lossy: bool,
    /// Share of packets that take part in the bookkeeping (App. E.1 "BFC + sampling": 0.5).
    pub sampling: f64,
    /// Incast-labelled flows at an egress share one queue (App. E.6, "BFC + IncastLabel").
    pub incast_label: bool,
    /// Whether sender NICs obey the pause frames (App. E.1: false is "BFC - NIC").
    pub nic_backpressure: bool,
    /// Pause upstream queues at all; false with an unlimited buffer is Ideal-FQ (§6.2.1).
    pub backpressure: bool,
    /// Skip backpressure for packets from a higher tier going back up (App. B).
    pub updown_only: bool,
    /// Standard PFC underneath as a backstop (the paper's BFC runs have it off; the issue's
    /// comparisons with HPCC and DCQCN run PFC).
    pub pfc: bool,
    /// Whether a packet that is its flow-table entry's only packet at the switch (a new flow's
    /// first packet, a one-packet flow) may pause its upstream queue. True is §3.3.2's "On
    /// Enqueue" pseudo-code (every packet that finds its queue above `Th`); false is the paper's
    /// own simulator (BFC_NS3_NSDI2022, `QbbNetDevice`: the pause test runs only when
    /// `central_entry_array[p_hqCnt].size > 1`), which produced its §6.2 results. See the module
    /// doc for what it changes in Fig. 9.
    pub lone_packet_pauses: bool,
    /// Ideal per-flow flow control (§3.3.2's "ideal (but impractical) variant that pauses flows
    /// directly using the flow ID"): the pause counter is kept per `<ingress, flow>`, frames carry
    /// the flow id, and the upstream closes the queue that flow is in (give it a queue per flow:
    /// many queues). No pause-bitmap refresh.
    pub per_flow: bool,
    /// Whether a flow that needs a queue may get an empty queue its downstream holds paused.
    /// True is §3.3.1's text (the bitmap of empty queues, whose bit is reset "when the last packet
    /// in a queue is scheduled"); false is the paper's simulator (BFC_NS3_NSDI2022,
    /// `QbbNetDevice::Assign_hqCnt_qCnt`: a queue qualifies only if `GetNBytes(qid) == 0 &&
    /// !is_queue_paused(qid)`, else a random one), which produced its §6.2 results. See the
    /// module doc for what it changes in Fig. 9.
    pub assign_paused_queues: bool,
    /// The hop RTT that `Th` and the sticky threshold are multiples of; `None`: the largest
    /// measured over the switch's ports (§3.3.2). The paper's simulator uses a fixed 2 us for both
    /// (`Th = 1.5 x rate x 2 us / N`, qbb-net-device.cc:1186-1200; sticky 6 us,
    /// qbb-net-device.cc:1351), which is `hrtt = 2us`, `th_hrtt = 1.5`, `sticky_hrtt = 3`.
    pub hrtt: Option<Time>,
    /// Whether the pause test counts the arriving packet in its queue's length. False is §3.3.1's
    /// pseudo-code (`qLength` before the packet); true is the paper's simulator, which enqueues the
    /// packet first and then compares the queue's bytes (qbb-net-device.cc:907-911, 1200).
    pub pause_counts_arrival: bool,
    /// When a pause frame leaves (see [`PauseDelivery`]).
    pub pause_delivery: PauseDelivery,
    /// An unlimited switch buffer (the paper's simulator never refuses a packet: its admission
    /// checks return true, broadcom-node.cc:142-161, 178-197).
    pub unlimited_buffer: bool,
    /// How sending NICs give flows their queues (see [`NicQueues`]).
    pub nic_queues: NicQueues,
    /// Where the search for an empty queue starts (see [`QueueSearch`]).
    pub queue_search: QueueSearch,
    /// The queue of a flow that finds none empty (see [`CollisionQueue`]).
    pub collision_queue: CollisionQueue,
    /// How the pause bitmap is framed (see [`BitmapFrame`]).
    pub bitmap_frame: BitmapFrame,
    /// How a flow finds its flow-table entry (see [`FlowIndex`]).
    pub flow_index: FlowIndex,
    /// Flow-table entries per egress port; `None`: `table_factor` x the port's data queues. The
    /// paper's simulator has 7,200 (`hqCnt / pCnt`, qbb-net-device.h:50-53).
    pub table_entries: Option<u32>,
}

impl Default for BfcConfig {
    fn default() -> Self {
        BfcConfig {
            assignment: Assignment::Dynamic,
            table_factor: 100,
            sticky_hrtt: 2.0,
            th_hrtt: 1.0,
            refresh: Some(Time::from_us(1)),
            refresh_when: RefreshWhen::Faults,
            frames_lossy: false,
            sampling: 1.0,
            incast_label: false,
            nic_backpressure: true,
            backpressure: true,
            updown_only: true,
            pfc: false,
            lone_packet_pauses: true,
            per_flow: false,
            assign_paused_queues: true,
            hrtt: None,
            pause_counts_arrival: false,
            pause_delivery: PauseDelivery::AtOnce,
            unlimited_buffer: false,
            nic_queues: NicQueues::FlowId,
            queue_search: QueueSearch::Rotating,
            collision_queue: CollisionQueue::Random,
            bitmap_frame: BitmapFrame::Per64,
            flow_index: FlowIndex::FidHash,
            table_entries: None,
        }
    }
}

impl BfcConfig {
    /// Ideal-FQ (§6.2.1): per-flow fair queuing with dynamic assignment and no backpressure (the
    /// front pairs it with an unlimited buffer and 1-BDP windows).
    pub fn ideal_fq() -> BfcConfig {
        BfcConfig { backpressure: false, refresh: None, ..Default::default() }
    }

    /// The refresh period this run uses: none where it could not change anything (frames are
    /// never lost and `refresh_when` is `Faults`).
    pub fn refresh_period(&self) -> Option<Time> {
        if self.pause_delivery == PauseDelivery::NextRefresh {
            return self.refresh;
        }
        match self.refresh_when {
            RefreshWhen::Faults if !self.frames_lossy => None,
            _ => self.refresh,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.table_factor == 0 || self.table_factor > 1_000_000 {
            return Err(format!("flow_control.bfc.table_factor: {} is out of range; allowed: 1 to 1000000", self.table_factor));
        }
        if self.table_entries.is_some_and(|n| n == 0 || n > 1_000_000) {
            return Err(format!(
                "flow_control.bfc.table_entries: {} is out of range; allowed: 1 to 1000000",
                self.table_entries.unwrap_or(0)
            ));
        }
        if self.flow_index == FlowIndex::Ns3Header && self.per_flow {
            return Err("flow_control.bfc.flow_index: 'ns3_header' indexes packets, and per-flow pauses name flows; allowed: \
                        'fid_hash', or 'ns3_header' with per_flow = false"
                .into());
        }
        if !(self.sampling > 0.0 && self.sampling <= 1.0) {
            return Err(format!("flow_control.bfc.sampling: {} is out of range; allowed: above 0 up to 1", self.sampling));
        }
        if let Some(r) = self.refresh {
            r.check_setting("flow_control.bfc.refresh")?;
        }
        if let Some(h) = self.hrtt {
            h.check_setting("flow_control.bfc.hrtt")?;
        }
        if self.pause_delivery == PauseDelivery::NextRefresh && (self.refresh.is_none() || self.per_flow) {
            return Err("flow_control.bfc.pause_delivery: 'next_refresh' needs a refresh period and per-queue pauses; allowed: \
                        'at_once', or 'next_refresh' with refresh set and per_flow = false"
                .into());
        }
        if !(self.th_hrtt > 0.0) || !(self.sticky_hrtt >= 0.0) {
            return Err("flow_control.bfc: th_hrtt must be positive and sticky_hrtt not negative".into());
        }
        Ok(())
    }
}

use crate::packet::tag::SAMPLED;

/// One flow-table entry (§3.3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    q: u16,
    size: u32,
    /// Last enqueue or dequeue of the entry's flows.
    ts: Time,
}

/// What `classify` changed for the packet the MMU is about to admit, so that `on_drop` can put
/// it back (the issue: "a packet the MMU drops undoes what classify did").
#[derive(Clone, Copy, Debug, Default)]
struct Undo {
    key: usize,
    q: u16,
    rr: u16,
    egress: u16,
    assigned: bool,
    collided: bool,
}

/// BFC on one switch.
pub struct Bfc {
    pub cfg: BfcConfig,
    nports: usize,
    /// Queues of the upstream a pause counter row covers (the largest of switch and NIC queues).
    upq: usize,
    /// Flow-table entries per egress port.
    tsize: usize,
    table: Vec<Entry>,
    /// Pause counter per `<ingress port, upstreamQ>`.
    counter: Vec<u32>,
    /// Non-zero counters per ingress port (who gets a refresh).
    paused: Vec<u32>,
    /// Rotating start of the empty-queue search, per egress (§4).
    rr: Vec<u16>,
    /// Flow-table entries with packets in the switch, per egress: its active flows (§3.3.1,
    /// Fig. 10c), flows whose FIDs share an entry counted once.
    active_entries: Vec<u32>,
    /// Collisions (a flow needing a queue found none empty), per egress.
    port_collisions: Vec<u64>,
    rng: Rng,
    /// The run's salt of the stochastic hash: one hash function at every switch (§3.2's
    /// strawman), a different one per seed, so seeds sample different collision patterns (§6.1,
    /// Fig. 8: "In some runs, group 1 and 2 flows don't share a queue").
    salt: u64,
    /// Per-flow variant: pause counters per `<ingress, flow>`.
    flow_counter: std::collections::HashMap<(u16, u32), u32>,
    /// Per-flow variant, upstream side: flows paused by the downstream on a port, with the queue
    /// each was in, and how many paused flows hold each `<port, queue>` closed.
    flow_paused: std::collections::HashMap<(u16, u32), u16>,
    queue_holds: std::collections::HashMap<(u16, u16), u32>,
    /// The largest hop RTT over the switch's ports (computed on first use).
    hrtt: Option<Time>,
    timer: Option<Time>,
    /// The last `classify`'s changes (`None` where it changed nothing).
    undo: Option<Undo>,
    // counters for the outputs
    pub pauses: u64,
    pub resumes: u64,
    pub refreshes: u64,
    pub assignments: u64,
    pub collisions: u64,
}

impl Bfc {
    /// BFC on switch `node` with `nports` ports whose upstreams have at most `upq` queues.
    pub fn new(cfg: BfcConfig, node: u32, nports: usize, upq: usize, seed: u64) -> Bfc {
        Bfc {
            cfg,
            nports,
            upq: upq.max(1),
            tsize: 0,
            table: Vec::new(),
            counter: vec![0; nports * upq.max(1)],
            paused: vec![0; nports],
            rr: vec![0; nports],
            active_entries: vec![0; nports],
            port_collisions: vec![0; nports],
            rng: Rng::stream(seed, stream::BFC, node as u64),
            salt: mix(&[seed, 0x5F0]),
            flow_counter: Default::default(),
            flow_paused: Default::default(),
            queue_holds: Default::default(),
            hrtt: None,
            timer: None,
            undo: None,
            pauses: 0,
            resumes: 0,
            refreshes: 0,
            assignments: 0,
            collisions: 0,
        }
    }

    /// Queues flows may be assigned to at a port of `nqueues` (one is left to the control class).
    fn data_queues(nqueues: usize) -> usize {
        if nqueues > 1 {
            nqueues - 1
        } else {
            1
        }
    }

    fn fid_hash(flow: u32) -> u64 {
        mix(&[flow as u64, 0xBFC])
    }

    fn hrtt(&mut self, view: &SwitchView) -> Time {
        if let Some(h) = self.cfg.hrtt {
            return h;
        }
        *self.hrtt.get_or_insert_with(|| (0..view.nports() as u16).map(|p| view.hrtt(p)).max().unwrap_or(Time::ZERO))
    }

    fn key(&mut self, view: &SwitchView, egress: u16, flow: u32) -> usize {
        self.size_table(view);
        egress as usize * self.tsize + (Self::fid_hash(flow) % self.tsize as u64) as usize
    }

    /// The flow-table entry of packet `pkt` at its egress (`flow_index`).
    fn key_of(&mut self, view: &SwitchView, pkt: &PktMeta) -> usize {
        if self.cfg.flow_index == FlowIndex::FidHash {
            return self.key(view, pkt.egress, pkt.flow);
        }
        self.size_table(view);
        pkt.egress as usize * self.tsize + (pkt.tags.key % self.tsize as u32) as usize
    }

    fn size_table(&mut self, view: &SwitchView) {
        if self.table.is_empty() {
            self.tsize = match self.cfg.table_entries {
                Some(n) => n as usize,
                None => Self::data_queues(view.nqueues()) * self.cfg.table_factor as usize,
            };
            self.table = vec![Entry::default(); self.nports * self.tsize];
        }
    }

    /// The hash of entry `key` that `collision_queue = "per_entry"` takes its queue from.
    fn entry_hash(&self, key: usize) -> u64 {
        match self.cfg.flow_index {
            FlowIndex::FidHash => mix(&[key as u64, self.salt, 0xC0]),
            FlowIndex::Ns3Header => {
                let (port, index) = (key / self.tsize.max(1), key % self.tsize.max(1));
                super::bfc_ns3::first_rand(super::bfc_ns3::entry(index as u32, port as u16)) as u64
            }
        }
    }

    /// The pause counter of `<ingress, upstreamQ>`.
    pub fn counter(&self, ingress: u16, upstream_q: u16) -> u32 {
        self.counter[ingress as usize * self.upq + upstream_q as usize]
    }

    /// `Th` at egress `p` now (§3.3.2): one hop BDP at the queue's fair drain rate.
    pub fn threshold(&mut self, now: Time, view: &SwitchView, p: u16) -> u64 {
        let hrtt = self.hrtt(view);
        let n_active = view.open_active_queues(p, now).max(1);
        (view.rate(p).bytes_in(hrtt) as f64 * self.cfg.th_hrtt / n_active as f64) as u64
    }

    /// App. B: no backpressure for a packet that came down from a higher tier and goes back up.
    fn allowed(&self, view: &SwitchView, ingress: u16, egress: u16) -> bool {
        if !self.cfg.updown_only {
            return true;
        }
        let me = view.info.tier as i16;
        let tier = |p: u16| view.peer(p).tier.map_or(-1, |t| t as i16);
        !(tier(ingress) > me && tier(egress) > me)
    }

    /// A queue for the flows of flow-table entry `key` at egress `p` (§3.3.1): an empty one, else
    /// a random one.
    fn pick_queue(&mut self, now: Time, view: &SwitchView, p: u16, nd: usize, skip: Option<u16>, key: usize) -> u16 {
        self.assignments += 1;
        let rule = PickRule {
            skip,
            open_at: (!self.cfg.assign_paused_queues).then_some(now),
            search: self.cfg.queue_search,
            when_full: (self.cfg.collision_queue == CollisionQueue::PerEntry).then(|| self.entry_hash(key)),
        };
        let (q, collided) = pick_empty_queue(view, p, nd, &rule, &mut self.rr[p as usize], &mut self.rng);
        self.collisions += collided as u64;
        self.port_collisions[p as usize] += collided as u64;
        q
    }

    fn send(&mut self, port: u16, queue: u16, pause: bool, out: &mut Actions) {
        if pause {
            self.pauses += 1;
        } else {
            self.resumes += 1;
        }
        if self.cfg.pause_delivery == PauseDelivery::NextRefresh {
            // the paper's simulator: a pause waits for the next periodic frame; a resume sends
            // the port's whole bitmap now (with the pauses set since the last frame)
            if !pause {
                self.send_bitmap(port as usize, Some(queue), out);
            }
            return;
        }
        out.push(FcAction::Send { port, msg: CtrlMsg::QueuePause { queue, pause }, by: Origin::Scheme });
    }

    /// The pause bitmap of ingress `p` to its upstream: the parts for each 64 queues with a paused
    /// one, plus the 64 holding `also` (a queue just resumed), each a frame of its own or all in
    /// the first one's (`bitmap_frame`); returns whether any went.
    fn send_bitmap(&mut self, p: usize, also: Option<u16>, out: &mut Actions) -> bool {
        let row = &self.counter[p * self.upq..(p + 1) * self.upq];
        let whole = self.cfg.bitmap_frame == BitmapFrame::Whole;
        let mut sent = false;
        for (chunk, base) in row.chunks(64).zip((0u16..).step_by(64)) {
            let bits = chunk.iter().enumerate().fold(0u64, |b, (i, &c)| if c > 0 { b | 1 << i } else { b });
            if bits != 0 || also.is_some_and(|q| q / 64 == base / 64) {
                let rides = whole && sent;
                self.refreshes += !rides as u64;
                sent = true;
                out.push(FcAction::Send { port: p as u16, msg: CtrlMsg::QueueBitmap { base, bits, rides }, by: Origin::Scheme });
            }
        }
        sent
    }

    fn arm_refresh(&mut self, now: Time) {
        if self.cfg.per_flow {
            return;
        }
        if let (Some(iv), None) = (self.cfg.refresh_period(), self.timer) {
            self.timer = Some(if self.cfg.pause_delivery == PauseDelivery::NextRefresh {
                // a clock of its own: frames at every multiple of the period (broadcom-node.cc:165-166)
                Time((now.0 / iv.0.max(1) + 1) * iv.0.max(1))
            } else {
                now + iv
            });
        }
    }
}

/// How `pick_empty_queue` chooses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PickRule {
    /// A queue no flow may get this way (an incast or isolation queue).
    pub skip: Option<u16>,
    /// An empty queue whose gate is closed at this time (paused by the downstream) does not
    /// count as empty (BFC's `assign_paused_queues = false`, the paper's simulator).
    pub open_at: Option<Time>,
    /// Where the search starts (`rr`, or a draw of the switch's stream).
    pub search: QueueSearch,
    /// With every queue busy, the queue this hash gives (`CollisionQueue::PerEntry`) instead
    /// of a random one.
    pub when_full: Option<u64>,
}

/// BFC's queue for a flow that needs one (§3.3.1), shared with FlowSail (§IV-A, Algorithm 1
/// lines 10-13): the first empty queue among `0..nd` from the rotating start `rr` (SwitchX's
/// rotating start of the empty-queue bitmap, §4) or from a random one, else a random one (a
/// collision: the second value is true).
pub(crate) fn pick_empty_queue(view: &SwitchView, p: u16, nd: usize, rule: &PickRule, rr: &mut u16, rng: &mut Rng) -> (u16, bool) {
    let start = match rule.search {
        QueueSearch::Rotating => *rr as usize % nd,
        QueueSearch::Random => rng.below(nd as u64) as usize,
    };
    let skip = rule.skip;
    for k in 0..nd {
        let q = ((start + k) % nd) as u16;
        if Some(q) != skip && view.queue_packets(p, q) == 0 && rule.open_at.map_or(true, |t| !view.gate_closed(p, q, t)) {
            *rr = (q + 1) % nd as u16;
            return (q, false);
        }
    }
    if let Some(h) = rule.when_full {
        // the hash's queue among the `nd` less the skipped one
        let n = if skip.is_some_and(|s| (s as usize) < nd) && nd > 1 { nd - 1 } else { nd };
        let q = (h % n as u64) as u16;
        return (if n < nd && skip.is_some_and(|s| q >= s) { q + 1 } else { q }, true);
    }
    loop {
        let q = rng.below(nd as u64) as u16;
        if Some(q) != skip || nd == 1 {
            return (q, true);
        }
    }
}

impl FlowControl for Bfc {
    /// §3.3.1 "On Enqueue" lines 1-9 (the `size` increment is in `on_enqueue`, once the packet
    /// is admitted, so a dropped packet leaves the table as it was).
    fn classify(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView) -> u16 {
        self.undo = None;
        let nd = Self::data_queues(view.nqueues());
        let incast_q = self.cfg.incast_label.then(|| (nd - 1) as u16);
        if let Some(q) = incast_q {
            if pkt.incast() {
                return q;
            }
        }
        match self.cfg.assignment {
            Assignment::Single => 0,
            Assignment::Stochastic => {
                let n = if incast_q.is_some() && nd > 1 { nd - 1 } else { nd };
                let q = (mix(&[pkt.flow as u64, self.salt]) % n as u64) as u16;
                // the flow table only counts here: a flow becoming active in a queue that holds
                // another flow's packets is a collision (App. E.4, Fig. 21b)
                let key = self.key_of(view, pkt);
                if self.table[key].size == 0 && view.queue_packets(pkt.egress, q) > 0 {
                    self.collisions += 1;
                    self.port_collisions[pkt.egress as usize] += 1;
                    let u = Undo { key, q: self.table[key].q, rr: self.rr[pkt.egress as usize], egress: pkt.egress, assigned: false, collided: true };
                    self.undo = Some(u);
                }
                q
            }
            Assignment::Dynamic => {
                let key = self.key_of(view, pkt);
                let sticky = Time((self.hrtt(view).0 as f64 * self.cfg.sticky_hrtt) as u64);
                let e = self.table[key];
                // a flow paused by its downstream keeps the queue that is closed for it
                let held = self.cfg.per_flow && self.flow_paused.contains_key(&(pkt.egress, pkt.flow));
                // an entry never used has ts 0 and needs a queue like a stale one
                let (before, rr) = (self.collisions, self.rr[pkt.egress as usize]);
                if !held && e.size == 0 && (e.ts == Time::ZERO || now >= e.ts + sticky) {
                    let q = self.pick_queue(now, view, pkt.egress, nd, incast_q, key);
                    self.table[key].q = q;
                    let collided = self.collisions > before;
                    self.undo = Some(Undo { key, q: e.q, rr, egress: pkt.egress, assigned: true, collided });
                } else if e.size == 0 && self.cfg.sampling >= 1.0 && view.queue_packets(pkt.egress, e.q) > 0 {
                    // sticky (§3.3.2): the flow returns to its queue, which a new flow took as
                    // empty meanwhile; the two now share it as after a collision, so count one
                    // (not with sampling, where the packets there may be the flow's own unsampled
                    // ones: 18x the collisions of BFC in the Fig. 18 run were such)
                    self.collisions += 1;
                    self.port_collisions[pkt.egress as usize] += 1;
                    self.undo = Some(Undo { key, q: e.q, rr, egress: pkt.egress, assigned: false, collided: true });
                }
                self.table[key].q
            }
        }
    }

    /// The MMU refused the packet just classified: put back the flow-table entry's queue, the
    /// rotating start of the empty-queue search and the assignment and collision counts, so a
    /// dropped packet leaves BFC as it found it (the random pick's draw is not given back).
    fn on_drop(&mut self, _now: Time, _pkt: &PktMeta, _view: &SwitchView, _out: &mut Actions) {
        let Some(u) = self.undo.take() else { return };
        self.table[u.key].q = u.q;
        self.rr[u.egress as usize] = u.rr;
        self.assignments -= u.assigned as u64;
        self.collisions -= u.collided as u64;
        self.port_collisions[u.egress as usize] -= u.collided as u64;
    }

    /// §3.3.2 "On Enqueue": the pause counter; and the flow table's `size`.
    fn on_enqueue(&mut self, now: Time, pkt: &mut PktMeta, view: &SwitchView, out: &mut Actions) {
        if self.cfg.pause_delivery == PauseDelivery::NextRefresh {
            // the periodic frame runs from the switch's first packet on, paused queues or not
            self.arm_refresh(now);
        }
        if self.cfg.sampling < 1.0 && self.rng.uniform() >= self.cfg.sampling {
            // App. E.1: only the pause counter and `size` skip a packet that is not recirculated;
            // the ingress still sees it, so its arrival refreshes the entry's timestamp and the
            // sticky rule keeps a flow whose sampled packets have left but others have not
            if self.cfg.assignment != Assignment::Single && !(self.cfg.incast_label && pkt.incast()) {
                let key = self.key_of(view, pkt);
                self.table[key].ts = now;
            }
            return;
        }
        pkt.flags |= SAMPLED;
        // the packet is its entry's only one here (single assignment and labelled incast
        // packets keep no entry: never lone)
        let mut lone = false;
        if self.cfg.assignment != Assignment::Single && !(self.cfg.incast_label && pkt.incast()) {
            let key = self.key_of(view, pkt);
            let e = &mut self.table[key];
            e.size += 1;
            e.ts = now;
            if e.size == 1 {
                self.active_entries[pkt.egress as usize] += 1;
                lone = true;
            }
        }
        if !self.cfg.backpressure || !self.allowed(view, pkt.ingress, pkt.egress) {
            return;
        }
        if lone && !self.cfg.lone_packet_pauses {
            // BFC_NS3_NSDI2022's rule: pausing the upstream queue for a packet whose flow has
            // nothing else here cannot slow that flow's build-up, and it holds the queue closed
            // until this packet leaves a congested queue; every flow then given that (empty)
            // upstream queue waits with it
            return;
        }
        let held = view.queue_bytes(pkt.egress, pkt.queue);
        let qlen = if self.cfg.pause_counts_arrival { held } else { held.saturating_sub(pkt.size as u64) };
        if qlen > self.threshold(now, view, pkt.egress) && self.cfg.per_flow {
            let c = self.flow_counter.entry((pkt.ingress, pkt.flow)).or_insert(0);
            if *c == 0 {
                self.pauses += 1;
                out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::FlowPause { flow: pkt.flow, pause: true }, by: Origin::Scheme });
            }
            *c += 1;
            pkt.flags |= tag::COUNTER_INCR;
        } else if qlen > self.threshold(now, view, pkt.egress) {
            let uq = (pkt.tags.upstream_q as usize).min(self.upq - 1);
            let k = pkt.ingress as usize * self.upq + uq;
            if self.counter[k] == 0 {
                self.send(pkt.ingress, uq as u16, true, out);
                self.paused[pkt.ingress as usize] += 1;
                self.arm_refresh(now);
            }
            self.counter[k] += 1;
            pkt.flags |= tag::COUNTER_INCR;
        }
    }

    /// §3.3.1 "On Dequeue" and §3.3.2 "On Dequeue".
    fn on_dequeue(&mut self, now: Time, pkt: &PktMeta, view: &SwitchView, out: &mut Actions) {
        if pkt.flags & SAMPLED == 0 {
            return;
        }
        if self.cfg.assignment != Assignment::Single && !(self.cfg.incast_label && pkt.incast()) {
            let key = self.key_of(view, pkt);
            let e = &mut self.table[key];
            if e.size == 1 {
                self.active_entries[pkt.egress as usize] -= 1;
            }
            e.size = e.size.saturating_sub(1);
            e.ts = now;
        }
        if pkt.flags & tag::COUNTER_INCR != 0 && self.cfg.per_flow {
            let k = (pkt.ingress, pkt.flow);
            let c = self.flow_counter.get_mut(&k).expect("a marked packet was counted");
            *c -= 1;
            if *c == 0 {
                self.flow_counter.remove(&k);
                self.resumes += 1;
                out.push(FcAction::Send { port: pkt.ingress, msg: CtrlMsg::FlowPause { flow: pkt.flow, pause: false }, by: Origin::Scheme });
            }
        } else if pkt.flags & tag::COUNTER_INCR != 0 {
            let uq = (pkt.tags.upstream_q as usize).min(self.upq - 1);
            let k = pkt.ingress as usize * self.upq + uq;
            self.counter[k] -= 1;
            if self.counter[k] == 0 {
                self.send(pkt.ingress, uq as u16, false, out);
                self.paused[pkt.ingress as usize] -= 1;
            }
        }
    }

    /// The next hop's `upstreamQ` is the queue the packet leaves from; this switch's marks stay
    /// here.
    fn stamp(&mut self, _now: Time, pkt: &mut PktMeta, _view: &SwitchView) {
        pkt.tags.upstream_q = pkt.queue;
        pkt.flags &= !(tag::COUNTER_INCR | SAMPLED);
    }

    /// Per-flow variant, upstream side: the downstream on port `from` pauses or resumes a flow;
    /// close (or reopen) the queue that flow is in at that port.
    fn on_control(&mut self, _now: Time, from: u16, msg: &CtrlMsg, view: &SwitchView, out: &mut Actions) {
        let CtrlMsg::FlowPause { flow, pause } = *msg else { return };
        if pause {
            let key = self.key(view, from, flow);
            let q = self.table[key].q;
            if self.flow_paused.insert((from, flow), q).is_none() {
                let h = self.queue_holds.entry((from, q)).or_insert(0);
                *h += 1;
                if *h == 1 {
                    out.push(FcAction::Gate { port: from, queue: q, until: Time::MAX });
                }
            }
        } else if let Some(q) = self.flow_paused.remove(&(from, flow)) {
            let h = self.queue_holds.get_mut(&(from, q)).expect("a paused flow holds its queue");
            *h -= 1;
            if *h == 0 {
                self.queue_holds.remove(&(from, q));
                out.push(FcAction::Gate { port: from, queue: q, until: Time::ZERO });
            }
        }
    }

    /// Periodic refresh of the pause bitmap to every upstream with a paused queue (§3.3.2).
    fn on_timer(&mut self, now: Time, _view: &SwitchView, out: &mut Actions) {
        self.timer = None;
        if self.cfg.pause_delivery == PauseDelivery::NextRefresh {
            // every port, every period: its bitmap (an empty frame where nothing is paused)
            for p in 0..self.nports {
                if !self.send_bitmap(p, None, out) {
                    self.refreshes += 1;
                    out.push(FcAction::Send { port: p as u16, msg: CtrlMsg::QueueBitmap { base: 0, bits: 0, rides: false }, by: Origin::Scheme });
                }
            }
            self.arm_refresh(now);
            return;
        }
        let mut any = false;
        for p in 0..self.nports {
            if self.paused[p] == 0 {
                continue;
            }
            any = true;
            self.send_bitmap(p, None, out);
        }
        if any {
            self.arm_refresh(now);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.timer
    }

    fn counters(&self, out: &mut Vec<(&'static str, u64)>) {
        out.push(("bfc_pauses", self.pauses));
        out.push(("bfc_resumes", self.resumes));
        out.push(("bfc_refreshes", self.refreshes));
        out.push(("bfc_assignments", self.assignments));
        out.push(("bfc_collisions", self.collisions));
    }

    /// The outputs over time, per port (the `module_samples` table): `active_flows` at
    /// each egress (flow-table entries with packets here; not with single assignment: Fig. 10c's
    /// CDF), `collisions` so far at each egress (flows becoming active that share a queue:
    /// §3.3.1, Fig. 21b; stochastic assignment keeps the table for this count only), `paused_upstream_queues` (upstream queues this switch holds paused, by the
    /// ingress they feed: §3.3.2's non-zero pause counters) and `longest_queue_bytes` (the fullest
    /// data queue of the port; the port's total is in the buffer samples).
    fn sample(&self, now: Time, view: &SwitchView, out: &mut Samples) {
        let _ = now;
        let tracked = self.cfg.assignment != Assignment::Single;
        for p in 0..self.nports {
            let port = p as u16;
            if tracked {
                out.push((port, "active_flows", self.active_entries[p] as f64));
            }
            out.push((port, "collisions", self.port_collisions[p] as f64));
            out.push((port, "paused_upstream_queues", self.paused[p] as f64));
            let longest = (0..view.nqueues() as u16).map(|q| view.queue_bytes(port, q)).max().unwrap_or(0);
            out.push((port, "longest_queue_bytes", longest as f64));
        }
    }

    fn uses_tags(&self) -> bool {
        true
    }
}

impl crate::registry::Declared for BfcConfig {
    const NAME: &'static str = "bfc";
    const ABOUT: &'static str = "BFC, backpressure flow control (Goyal et al., NSDI 2022, §3)";
    const COUNTERS: &'static [&'static str] = &["bfc_pauses", "bfc_resumes", "bfc_refreshes", "bfc_assignments", "bfc_collisions"];
}

impl super::registry::Scheme for BfcConfig {
    /// BFC does not guarantee losslessness (§5) unless PFC backs it up.
    fn pauses(&self) -> bool {
        self.pfc
    }
    fn one_class(&self) -> bool {
        true
    }
    /// A queue per flow at the NIC (§3.3.2): as many gates as a port may have.
    fn nic_gates(&self, _configured: usize) -> usize {
        crate::queues::port::MAX_QUEUES
    }
    fn validate(&self, _net: &super::registry::CheckAt) -> Result<(), String> {
        BfcConfig::validate(self)
    }
    fn unlimited_buffer(&self) -> bool {
        self.unlimited_buffer
    }
    /// The pause-bitmap refresh depends on whether frames can be lost (`RefreshWhen`).
    fn for_run(&self, frames_lossy: bool) -> Option<super::FcConfig> {
        Some(super::FcConfig::Bfc(BfcConfig { frames_lossy, ..self.clone() }))
    }
    fn build(&self, at: &super::registry::BuildAt) -> super::AnyFc {
        let bfc = Bfc::new(self.clone(), at.node, at.nports, at.upq, at.seed);
        if self.pfc {
            super::AnyFc::BfcPfc(super::with_pfc::under_pfc(bfc, at))
        } else {
            super::AnyFc::Bfc(Box::new(bfc))
        }
    }
    fn nic(&self) -> super::nic::AnyNic {
        let free = (self.nic_queues == NicQueues::FreeList).then(super::nic::FreeQueues::default);
        super::nic::AnyNic::Tagging(super::nic::TaggingNic { per_flow: true, obey_queue_pause: self.nic_backpressure, free })
    }
    fn flow_keys(&self) -> bool {
        self.flow_index == FlowIndex::Ns3Header
    }
    /// The pause counter is kept per `<ingress, upstreamQ>` (§3.3.2).
    fn reads_upstream_q(&self) -> bool {
        true
    }
    fn bytes_per_port(&self, nqueues: u64, upq: u64) -> u64 {
        let entries = self.table_entries.map_or(nqueues.saturating_sub(1).max(1) * self.table_factor as u64, u64::from);
        let table = 4 * upq + 8 + 16 * entries;
        table + if self.pfc { super::pfc::BYTES_PER_PORT } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fc::view::SwitchInfo;
    use crate::queues::mmu::{Mmu, MmuConfig};
    use crate::queues::port::Port;
    use crate::packet::{Packet, Slab};
    use crate::time::{Rate, TxClock};

    const NQ: usize = 32;

    /// A 4-port 100 Gb/s switch with 1 us links and real ports, so the view answers queue questions.
    struct Rig {
        mmu: Mmu,
        info: SwitchInfo,
        ports: Vec<Port>,
        slab: Slab,
    }

    impl Rig {
        fn new() -> Rig {
            let mut info = SwitchInfo::bare(vec![Rate::gbps(100); 4], NQ);
            info.ports = (0..4).collect();
            let ports = (0..4).map(|p| Port::new(0, p as u16, TxClock::new(Rate::gbps(100)), Time::from_us(1), NQ, 1500)).collect();
            Rig { mmu: Mmu::new(MmuConfig::default(), vec![100_000; 4], 8, NQ), info, ports, slab: Slab::default() }
        }
        fn view(&self) -> SwitchView<'_> {
            SwitchView { info: &self.info, mmu: &self.mmu, ports: &self.ports }
        }
        /// Classify, queue and tell BFC about one packet of `flow` from `ingress` (upstreamQ `uq`)
        /// to egress 0; the packet's marks come back.
        fn enq(&mut self, bfc: &mut Bfc, now: Time, flow: u32, ingress: u16, uq: u16, out: &mut Actions) -> PktMeta {
            self.enq_keyed(bfc, now, flow, 0, ingress, uq, out)
        }
        /// `enq` of a packet whose sender wrote flow-table key `key` (`Tags::key`).
        #[allow(clippy::too_many_arguments)]
        fn enq_keyed(&mut self, bfc: &mut Bfc, now: Time, flow: u32, key: u32, ingress: u16, uq: u16, out: &mut Actions) -> PktMeta {
            let mut m = PktMeta { flow, ingress, egress: 0, size: 1000, prio: 3, ..Default::default() };
            m.tags.upstream_q = uq;
            m.tags.key = key;
            m.queue = bfc.classify(now, &m, &self.view());
            let id = self.slab.alloc(Packet { size: 1000, flow, ..Default::default() });
            self.ports[0].enqueue_data(m.queue as usize, id, 1000);
            bfc.on_enqueue(now, &mut m, &self.view(), out);
            m
        }
        fn deq(&mut self, bfc: &mut Bfc, now: Time, m: &PktMeta, out: &mut Actions) {
            self.ports[0].dequeue_data(m.queue as usize, 1000);
            bfc.on_dequeue(now, m, &self.view(), out);
        }
    }

    fn bfc(cfg: BfcConfig) -> Bfc {
        Bfc::new(cfg, 0, 4, NQ, 1)
    }

    #[test]
    fn th_is_one_hop_bdp_shared_by_the_open_active_queues() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig::default());
        // HRTT = 2 x 1 us + 1048 B at 100 Gb/s = 2.08384 us; one hop BDP = 26,048 B
        let bdp = Rate::gbps(100).bytes_in(Time(2_083_840));
        assert_eq!(bdp, 26_048);
        assert_eq!(b.threshold(Time(1), &rig.view(), 0), bdp, "no active queue counts as one");
        let mut out = vec![];
        let a = rig.enq(&mut b, Time(1), 1, 1, 0, &mut out);
        let c = rig.enq(&mut b, Time(1), 2, 1, 0, &mut out);
        assert_ne!(a.queue, c.queue);
        assert_eq!(b.threshold(Time(1), &rig.view(), 0), bdp / 2);
        rig.enq(&mut b, Time(1), 3, 2, 0, &mut out);
        assert_eq!(b.threshold(Time(1), &rig.view(), 0), bdp / 3);
        // a paused queue is not active (§3.3.2: "data to transmit that are not paused")
        rig.ports[0].set_gate(c.queue as usize, Time(1), Time::MAX);
        assert_eq!(b.threshold(Time(2), &rig.view(), 0), bdp / 2);
    }

    /// §3.3.2: "ingress ports can have different 1-Hop RTTs ... we use the max of HRTT across
    /// all the ingresses": one 5 us link makes every egress's Th a 10.08 us hop BDP.
    #[test]
    fn th_uses_the_largest_hop_rtt_over_the_ports() {
        let mut rig = Rig::new();
        rig.ports[3] = Port::new(0, 3, TxClock::new(Rate::gbps(100)), Time::from_us(5), NQ, 1500);
        let mut b = bfc(BfcConfig::default());
        // HRTT = 2 x 5 us + 1048 B at 100 Gb/s = 10.08384 us
        assert_eq!(b.threshold(Time(1), &rig.view(), 0), Rate::gbps(100).bytes_in(Time(10_083_840)));
        assert_eq!(b.threshold(Time(1), &rig.view(), 0), 126_048);
    }

    /// App. E.1's "BFC + sampling": only sampled packets enter the pause counter and `size`
    /// (about half at 0.5), and a flow keeps its queue while its packets arrive.
    #[test]
    fn sampling_counts_only_the_sampled_packets() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig { sampling: 0.5, ..Default::default() });
        let mut out = vec![];
        let sent: Vec<PktMeta> = (0..400).map(|i| rig.enq(&mut b, Time(10 + i), 42, 1, 7, &mut out)).collect();
        let sampled: Vec<&PktMeta> = sent.iter().filter(|m| m.flags & SAMPLED != 0).collect();
        assert!((170..=230).contains(&sampled.len()), "{} of 400 sampled", sampled.len());
        let key = b.key(&rig.view(), 0, 42);
        assert_eq!(b.table[key].size as usize, sampled.len(), "size counts the sampled packets");
        assert!(sent.iter().all(|m| m.queue == sent[0].queue), "one queue for the flow");
        // Th (26,048 B) is passed at the 27th packet: only sampled packets after it are counted
        let counted = sent.iter().filter(|m| m.flags & tag::COUNTER_INCR != 0).count();
        assert!(counted > 0 && sent.iter().all(|m| m.flags & tag::COUNTER_INCR == 0 || m.flags & SAMPLED != 0));
        assert_eq!(b.counter(1, 7) as usize, counted);
        assert_eq!(out.len(), 1, "one pause frame");
    }

    #[test]
    fn a_queue_is_paused_exactly_while_its_counter_is_above_zero() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig { refresh: None, ..Default::default() });
        let mut out = vec![];
        // one flow from ingress 1, upstream queue 7: 27 packets pass Th (26,048 B) on the 28th
        let mut sent = vec![];
        for _ in 0..30 {
            sent.push(rig.enq(&mut b, Time(10), 42, 1, 7, &mut out));
        }
        assert_eq!(out, vec![FcAction::Send { port: 1, msg: CtrlMsg::QueuePause { queue: 7, pause: true }, by: Origin::Scheme }]);
        let marked: Vec<bool> = sent.iter().map(|m| m.flags & tag::COUNTER_INCR != 0).collect();
        assert_eq!(marked.iter().filter(|&&x| x).count(), 3);
        assert!(!marked[26] && marked[27]);
        assert_eq!(b.counter(1, 7), 3);
        out.clear();
        for (i, m) in sent.iter().enumerate() {
            rig.deq(&mut b, Time(20), m, &mut out);
            assert_eq!(b.counter(1, 7) > 0, i < 29, "counter after {} departures", i + 1);
        }
        assert_eq!(out, vec![FcAction::Send { port: 1, msg: CtrlMsg::QueuePause { queue: 7, pause: false }, by: Origin::Scheme }]);
        // the departing packet carries its queue as the next hop's upstreamQ, and no marks
        let mut m = sent[29];
        b.stamp(Time(20), &mut m, &rig.view());
        assert_eq!((m.tags.upstream_q, m.flags & (tag::COUNTER_INCR | SAMPLED)), (m.queue, 0));
    }

    /// A flow that finds every queue taken lands in a busy queue above `Th`. By §3.3.2's
    /// pseudo-code its first packet pauses its upstream queue; with `lone_packet_pauses = false`
    /// (the paper's simulator) a packet alone from its flow-table entry does not, and the flow's
    /// second packet here does.
    #[test]
    fn a_lone_packet_pauses_its_upstream_only_by_the_pseudo_code() {
        let first_pause = |cfg: BfcConfig| {
            let mut rig = Rig::new();
            let mut b = bfc(cfg);
            let mut out = vec![];
            // 31 one-packet flows from ingress 2 take every data queue (1000 B each)
            for f in 0..(NQ - 1) as u32 {
                rig.enq(&mut b, Time(10), 1000 + f, 2, f as u16, &mut out);
            }
            assert!(out.is_empty(), "each went to an empty queue");
            assert_eq!(b.threshold(Time(10), &rig.view(), 0), 26_048 / 31, "Th below one packet");
            // flow 42 from ingress 1, upstream queue 7: no queue is empty, so a random busy one
            let p1 = rig.enq(&mut b, Time(11), 42, 1, 7, &mut out);
            assert_eq!(b.collisions, 1);
            let after_first = (out.len(), b.counter(1, 7), p1.flags & tag::COUNTER_INCR != 0);
            let p2 = rig.enq(&mut b, Time(12), 42, 1, 7, &mut out);
            assert_eq!(p2.queue, p1.queue);
            (after_first, (out.len(), b.counter(1, 7), p2.flags & tag::COUNTER_INCR != 0))
        };
        assert_eq!(first_pause(BfcConfig::default()), ((1, 1, true), (1, 2, true)), "pseudo-code: the first packet pauses");
        assert_eq!(
            first_pause(BfcConfig { lone_packet_pauses: false, ..Default::default() }),
            ((0, 0, false), (1, 1, true)),
            "paper's simulator: the second packet pauses"
        );
    }

    /// §3.3.2's refresh re-sends the pause bitmap every `refresh` to upstreams with a paused
    /// queue; by default only where frames can be lost (`refresh_when = "faults"`).
    #[test]
    fn the_bitmap_refresh_runs_where_frames_can_be_lost_or_when_asked_always() {
        let pause_queue_7 = |cfg: BfcConfig| {
            let mut rig = Rig::new();
            let mut b = bfc(cfg);
            let mut out = vec![];
            for _ in 0..30 {
                rig.enq(&mut b, Time(10), 42, 1, 7, &mut out);
            }
            assert_eq!(out.len(), 1, "one pause frame");
            out.clear();
            let t = b.next_timer();
            if let Some(t) = t {
                b.on_timer(t, &rig.view(), &mut out);
            }
            (t, out)
        };
        let (t, out) = pause_queue_7(BfcConfig::default());
        assert_eq!((t, out.len()), (None, 0), "lossless run: no refresh");
        let bitmap = vec![FcAction::Send { port: 1, msg: CtrlMsg::QueueBitmap { base: 0, bits: 1 << 7, rides: false }, by: Origin::Scheme }];
        for cfg in [
            BfcConfig { refresh_when: RefreshWhen::Always, ..Default::default() },
            BfcConfig { frames_lossy: true, ..Default::default() },
        ] {
            let (t, out) = pause_queue_7(cfg);
            assert_eq!(t, Some(Time(10) + Time::from_us(1)));
            assert_eq!(out, bitmap);
        }
    }

    /// The paper's simulator compares the queue with the arriving packet in it
    /// (`pause_counts_arrival`) against `Th = 1.5 x rate x 2 us / N` (`hrtt = 2us`, `th_hrtt =
    /// 1.5`): 37,500 B for one flow, passed by the 37th 1,000 B packet counting itself; by
    /// §3.3.1's pseudo-code (the queue before the packet) the 38th.
    #[test]
    fn the_simulators_pause_test_counts_the_arriving_packet_against_its_fixed_hop_rtt() {
        let first_marked = |pause_counts_arrival: bool| {
            let mut rig = Rig::new();
            let cfg = BfcConfig { hrtt: Some(Time::from_us(2)), th_hrtt: 1.5, pause_counts_arrival, ..Default::default() };
            let mut b = bfc(cfg);
            assert_eq!(b.threshold(Time(1), &rig.view(), 0), 37_500);
            let mut out = vec![];
            (1..=60).find(|_| rig.enq(&mut b, Time(10), 42, 1, 7, &mut out).flags & tag::COUNTER_INCR != 0)
        };
        assert_eq!(first_marked(true), Some(38), "38 x 1000 B > 37,500 B: the 38th packet, counting itself");
        assert_eq!(first_marked(false), Some(39), "37 x 1000 B ahead of the 39th: 37,000 B is not above Th");
        // the sticky threshold is a multiple of the same fixed hop RTT: 3 x 2 us = 6 us
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig { hrtt: Some(Time::from_us(2)), sticky_hrtt: 3.0, ..Default::default() });
        let mut out = vec![];
        let m = rig.enq(&mut b, Time(10), 42, 1, 7, &mut out);
        rig.deq(&mut b, Time(20), &m, &mut out);
        let other = rig.enq(&mut b, Time(30), 43, 1, 7, &mut out);
        assert_eq!(other.queue, 1, "another flow took the next empty queue");
        assert_eq!(rig.enq(&mut b, Time(20) + Time::from_ns(5_999), 42, 1, 7, &mut out).queue, m.queue, "sticky within 6 us");
    }

    /// `pause_delivery = "next_refresh"` (the paper's simulator): the pause is not a frame of its
    /// own; it leaves with the next periodic bitmap, which goes out on every port at every
    /// multiple of `refresh`; the resume sends the port's bitmap at once.
    #[test]
    fn a_pause_waits_for_the_next_periodic_bitmap_and_a_resume_goes_at_once() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig { pause_delivery: PauseDelivery::NextRefresh, ..Default::default() });
        let mut out = vec![];
        let t0 = Time::from_ns(2_500);
        let sent: Vec<PktMeta> = (0..30).map(|_| rig.enq(&mut b, t0, 42, 1, 7, &mut out)).collect();
        assert_eq!(b.counter(1, 7), 3, "the counter runs as before");
        assert!(out.is_empty(), "no frame at the pause");
        assert_eq!(b.next_timer(), Some(Time::from_us(3)), "the next multiple of 1 us");
        b.on_timer(Time::from_us(3), &rig.view(), &mut out);
        let frames: Vec<(u16, CtrlMsg)> = out
            .iter()
            .map(|a| match a {
                FcAction::Send { port, msg, .. } => (*port, *msg),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(frames, (0..4).map(|p| (p, CtrlMsg::QueueBitmap { base: 0, bits: if p == 1 { 1 << 7 } else { 0 }, rides: false })).collect::<Vec<_>>(),
            "one frame per port, port 1's with queue 7's bit");
        assert_eq!(b.next_timer(), Some(Time::from_us(4)), "and again every period");
        out.clear();
        for m in &sent {
            rig.deq(&mut b, Time::from_us(4), m, &mut out);
        }
        assert_eq!(out, vec![FcAction::Send { port: 1, msg: CtrlMsg::QueueBitmap { base: 0, bits: 0, rides: false }, by: Origin::Scheme }],
            "the resume: port 1's bitmap, now");
    }

    /// `bitmap_frame = "whole"` (the paper's simulator's one 1,024-bit frame): the parts of a
    /// port's bitmap past its first 64 queues ride the first part's frame; `per_64` sends each
    /// part as a frame of its own.
    #[test]
    fn a_whole_bitmap_is_one_frame_however_many_queues_it_spans() {
        let refresh = |bitmap_frame| {
            let mut rig = Rig::new();
            let cfg = BfcConfig { pause_delivery: PauseDelivery::NextRefresh, bitmap_frame, ..Default::default() };
            let mut b = Bfc::new(cfg, 0, 4, 200, 1);
            let mut out = vec![];
            for _ in 0..30 {
                rig.enq(&mut b, Time::from_ns(2_500), 42, 1, 7, &mut out);
                rig.enq(&mut b, Time::from_ns(2_500), 43, 1, 130, &mut out);
            }
            assert!(b.counter(1, 7) > 0 && b.counter(1, 130) > 0);
            b.on_timer(Time::from_us(3), &rig.view(), &mut out);
            let port1: Vec<CtrlMsg> = out.iter().filter_map(|a| match a {
                FcAction::Send { port: 1, msg, .. } => Some(*msg),
                _ => None,
            }).collect();
            (port1, b.refreshes)
        };
        let part = |base, bits, rides| CtrlMsg::QueueBitmap { base, bits, rides };
        assert_eq!(refresh(BitmapFrame::Per64), (vec![part(0, 1 << 7, false), part(128, 1 << 2, false)], 5),
            "two frames to port 1, an empty one to each other port");
        assert_eq!(refresh(BitmapFrame::Whole), (vec![part(0, 1 << 7, false), part(128, 1 << 2, true)], 4),
            "one frame to port 1: its second part rides the first");
        let sizes = crate::packet::ctrl::ControlConfig { queue_pause_bytes: 156, ..Default::default() };
        assert_eq!((part(0, 1, false).wire_bytes(&sizes), part(128, 4, true).wire_bytes(&sizes)), (156, 0));
    }

    /// `unlimited_buffer` (the paper's simulator admits every packet) is the scheme's word to the
    /// front, which then gives every switch a buffer that never fills.
    #[test]
    fn an_unlimited_buffer_is_asked_of_the_front_only_when_set() {
        let facts = |unlimited_buffer| super::super::FcConfig::Bfc(BfcConfig { unlimited_buffer, ..Default::default() }).front_facts();
        assert_eq!(facts(true)["unlimited_buffer"], true);
        assert_eq!(facts(false)["unlimited_buffer"], false);
    }

    /// §3.3.1's empty-queue bitmap counts a queue its downstream holds paused as empty, so a new
    /// flow may get it and wait behind a pause it did not cause; the paper's simulator
    /// (`assign_paused_queues = false`) gives such a flow an empty queue that is open, and a
    /// random one (a collision) when every empty queue is paused.
    #[test]
    fn an_empty_paused_queue_is_given_to_new_flows_only_by_the_papers_text() {
        let first_pick = |assign_paused_queues: bool, closed: std::ops::Range<usize>| {
            let mut rig = Rig::new();
            let mut b = bfc(BfcConfig { assign_paused_queues, ..Default::default() });
            for q in closed {
                rig.ports[0].set_gate(q, Time(5), Time::MAX); // paused by the downstream, empty
            }
            let m = rig.enq(&mut b, Time(10), 77, 1, 0, &mut vec![]);
            (m.queue, b.collisions)
        };
        assert_eq!(first_pick(true, 0..1), (0, 0), "the text: queue 0 is empty, so it is taken");
        assert_eq!(first_pick(false, 0..1), (1, 0), "the simulator: the first empty open queue");
        assert_eq!(first_pick(true, 0..NQ - 1), (0, 0));
        let (q, collisions) = first_pick(false, 0..NQ - 1);
        assert_eq!(collisions, 1, "every empty queue paused: a random one, counted as a collision");
        assert!((q as usize) < NQ - 1, "never the control class's queue");
    }

    /// §4's rotating start hands out the empty queues in turn, so a queue just emptied is given
    /// again only after every other one; the paper's simulator (`queue_search = "random"`) starts
    /// each search at a random queue.
    #[test]
    fn the_empty_queue_search_starts_after_the_queue_given_last_or_at_random() {
        let nd = NQ - 1;
        let picks = |queue_search| {
            let mut rig = Rig::new();
            let mut b = bfc(BfcConfig { queue_search, ..Default::default() });
            let mut out = vec![];
            // one-packet flows 10 us apart, each gone before the next comes: every queue is empty
            (0..3 * nd as u32)
                .map(|i| {
                    let now = Time::from_us(10 * (i as u64 + 1));
                    let m = rig.enq(&mut b, now, 1000 + i, 1, 0, &mut out);
                    rig.deq(&mut b, now, &m, &mut out);
                    m.queue as usize
                })
                .collect::<Vec<_>>()
        };
        let rotating = picks(QueueSearch::Rotating);
        assert_eq!(rotating, (0..3 * nd).map(|i| i % nd).collect::<Vec<_>>(), "queues in turn");
        let random = picks(QueueSearch::Random);
        let mut seen = vec![0; nd];
        random.iter().for_each(|&q| seen[q] += 1);
        let again = random.windows(2).filter(|w| w[0] == w[1]).count();
        assert!(seen.iter().filter(|&&n| n > 0).count() >= nd / 2 && *seen.iter().max().unwrap() < 12, "{seen:?}");
        assert!(again >= 1, "a queue just emptied is given again at once now and then: {random:?}");
        assert!(random.iter().all(|&q| q < nd), "never the control class's queue");
    }

    /// With every data queue busy a flow collides (§3.3.1's randomQ); the paper's simulator
    /// (`collision_queue = "per_entry"`) sends each flow-table entry to one fixed queue then, so
    /// a flow that collides again meets the same queue, while different entries spread.
    #[test]
    fn with_every_queue_busy_a_flow_table_entry_collides_into_its_own_fixed_queue() {
        let nd = NQ - 1;
        let collide = |collision_queue, flow: u32, times: u64| {
            let mut rig = Rig::new();
            let mut b = bfc(BfcConfig { collision_queue, ..Default::default() });
            let mut out = vec![];
            for f in 0..nd as u32 {
                rig.enq(&mut b, Time::from_us(1), f, 2, 0, &mut out); // one flow per queue, staying
            }
            (0..times)
                .map(|k| {
                    // the flow's lone packet, then its entry idle past the sticky threshold
                    let now = Time::from_us(10 * (k + 1));
                    let m = rig.enq(&mut b, now, flow, 1, 0, &mut out);
                    b.on_dequeue(now, &m, &rig.view(), &mut out);
                    m.queue as usize
                })
                .collect::<Vec<_>>()
        };
        let fixed = collide(CollisionQueue::PerEntry, 5000, 6);
        assert!(fixed.iter().all(|&q| q == fixed[0] && q < nd), "one queue per entry: {fixed:?}");
        let random = collide(CollisionQueue::Random, 5000, 6);
        assert!(random.iter().any(|&q| q != random[0]), "a random queue each time: {random:?}");
        let spread: std::collections::BTreeSet<usize> = (0..40).map(|f| collide(CollisionQueue::PerEntry, 6000 + f, 1)[0]).collect();
        assert!(spread.len() >= 12, "entries spread over the queues: {spread:?}");
    }

    /// `flow_index = "ns3_header"`: the entry is the sender's key modulo the table (the paper's
    /// simulator's `GethqCnt`), so two flows whose keys differ by the table's size share an entry,
    /// and the second takes the first's queue while empty ones remain; by flow id they do not.
    #[test]
    fn under_the_header_index_flows_whose_keys_meet_share_an_entry_and_its_queue() {
        let queues = |flow_index| {
            let mut rig = Rig::new();
            let mut b = bfc(BfcConfig { flow_index, table_entries: Some(7200), ..Default::default() });
            let mut out = vec![];
            let t = Time::from_us(1);
            let a = rig.enq_keyed(&mut b, t, 1, 49_335, 2, 0, &mut out);
            let same = rig.enq_keyed(&mut b, t, 2, 49_335 + 7200, 2, 0, &mut out);
            let next = rig.enq_keyed(&mut b, t, 3, 49_336, 2, 0, &mut out);
            (a.queue, same.queue, next.queue, b.assignments)
        };
        let (a, same, next, assigned) = queues(FlowIndex::Ns3Header);
        assert_eq!((same, assigned), (a, 2), "one entry, one assignment for two flows");
        assert_ne!(next, a, "the neighbouring entry gets a queue of its own");
        let (a, other, _, assigned) = queues(FlowIndex::FidHash);
        assert_ne!(other, a, "by flow id the two flows have entries of their own");
        assert_eq!(assigned, 3);
    }

    /// With every queue busy, an entry of the header index collides into the queue the paper's
    /// simulator gives it: `srand(index x 64 + outDev); rand() % 31` (its queues 3..33 are 0..30).
    #[test]
    fn under_the_header_index_a_colliding_flow_takes_the_simulators_queue() {
        let nd = (NQ - 1) as u32;
        for key in [49_335u32, 3_100_771, 167_855_618u32.wrapping_mul(1235)] {
            let mut rig = Rig::new();
            let cfg = BfcConfig { flow_index: FlowIndex::Ns3Header, table_entries: Some(7200), collision_queue: CollisionQueue::PerEntry, ..Default::default() };
            let mut b = bfc(cfg);
            let mut out = vec![];
            for f in 0..nd {
                rig.enq_keyed(&mut b, Time::from_us(1), f, 1_000_000 + 7 * f, 2, 0, &mut out); // every queue busy
            }
            let m = rig.enq_keyed(&mut b, Time::from_us(2), 100, key, 1, 0, &mut out);
            let want = super::super::bfc_ns3::first_rand((key % 7200) * 64 + 1) % nd;
            assert_eq!(m.queue as u32, want, "key {key}");
        }
    }

    /// A packet the MMU refuses (`on_drop` right after `classify`) leaves the flow table, the
    /// empty-queue search and the counts as they were: the next flow gets the queue the dropped
    /// packet was given, and a collision of a dropped packet is not counted.
    #[test]
    fn a_dropped_packet_undoes_its_queue_assignment() {
        let mut rig = Rig::new();
        for assignment in [Assignment::Dynamic, Assignment::Stochastic] {
            let mut b = bfc(BfcConfig { assignment, ..Default::default() });
            let mut out = vec![];
            let m = PktMeta { flow: 5, ingress: 1, egress: 0, size: 1000, ..Default::default() };
            let q = b.classify(Time(10), &m, &rig.view());
            let key = b.key(&rig.view(), 0, 5);
            b.on_drop(Time(10), &PktMeta { queue: q, ..m }, &rig.view(), &mut out);
            assert_eq!((b.table[key], b.rr[0], b.collisions), (Entry::default(), 0, 0), "{assignment:?}");
            assert!(out.is_empty());
        }
        let mut b = bfc(BfcConfig::default());
        let mut out = vec![];
        let m = PktMeta { flow: 5, ingress: 1, egress: 0, size: 1000, ..Default::default() };
        let q = b.classify(Time(10), &m, &rig.view());
        b.on_drop(Time(10), &PktMeta { queue: q, ..m }, &rig.view(), &mut out);
        assert_eq!(b.assignments, 0);
        assert_eq!(rig.enq(&mut b, Time(11), 6, 1, 0, &mut out).queue, q, "the next flow gets the same queue");
        // every data queue busy: a new flow collides; dropped, the collision is not counted
        for f in 0..(NQ - 2) as u32 {
            rig.enq(&mut b, Time(12), 100 + f, 2, 0, &mut out);
        }
        assert_eq!(b.collisions, 0);
        let m = PktMeta { flow: 999, ingress: 1, egress: 0, size: 1000, ..Default::default() };
        let q = b.classify(Time(13), &m, &rig.view());
        assert_eq!(b.collisions, 1);
        b.on_drop(Time(13), &PktMeta { queue: q, ..m }, &rig.view(), &mut out);
        assert_eq!((b.collisions, b.port_collisions[0]), (0, 0));
    }

    #[test]
    fn dynamic_assignment_gives_new_flows_empty_queues_and_keeps_them_sticky() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig::default());
        let mut out = vec![];
        let first: Vec<PktMeta> = (0..5).map(|f| rig.enq(&mut b, Time(10), 100 + f, 1, 0, &mut out)).collect();
        let mut qs: Vec<u16> = first.iter().map(|m| m.queue).collect();
        qs.sort();
        qs.dedup();
        assert_eq!(qs.len(), 5, "five flows, five queues");
        assert!(qs.iter().all(|&q| (q as usize) < NQ - 1), "the last queue is the control class's");
        assert_eq!(b.collisions, 0);
        // more packets of a flow follow it into its queue
        assert_eq!(rig.enq(&mut b, Time(11), 102, 1, 0, &mut out).queue, first[2].queue);
        // drained, a flow keeps its queue for 2 HRTT (sticky), then may get another
        let m2 = rig.enq(&mut b, Time(12), 104, 1, 0, &mut out);
        rig.deq(&mut b, Time(13), &first[4], &mut out);
        rig.deq(&mut b, Time(14), &m2, &mut out);
        let other = rig.enq(&mut b, Time(15), 999, 1, 0, &mut out); // takes an empty queue meanwhile
        assert_eq!(rig.enq(&mut b, Time(1_000), 104, 1, 0, &mut out).queue, first[4].queue, "within 2 HRTT: sticky");
        assert_ne!(other.queue, first[4].queue);
    }

    /// Dynamic assignment never puts two flows in one queue while queues are free, unless their
    /// FIDs hash to the same flow-table entry (3,100 entries here: 100 x 31 queues, §3.3.1 — the
    /// paper's "less than 1%" index collisions).
    #[test]
    fn stochastic_assignment_collides_at_the_birthday_rate_and_dynamic_never() {
        // five flows at an egress with 31 data queues (32 minus the control class): the chance
        // that two share a queue is 1 - prod_{i<5}(1 - i/31) (§3.2's birthday paradox)
        let expected = 1.0 - (0..5).map(|i| 1.0 - i as f64 / 31.0).product::<f64>();
        assert!((expected - 0.2874).abs() < 1e-3);
        let trials = 4000;
        let (mut stoch, mut dynamic, mut index_clashes, mut counted) = (0, 0, 0, 0);
        let mut rng = Rng::stream(5, 0, 0);
        for t in 0..trials {
            let flows: Vec<u32> = (0..5).map(|_| rng.next_u64() as u32).collect();
            for (cfg, hits) in [(Assignment::Stochastic, &mut stoch), (Assignment::Dynamic, &mut dynamic)] {
                let mut rig = Rig::new();
                let mut b = Bfc::new(BfcConfig { assignment: cfg, ..Default::default() }, 0, 4, NQ, t);
                let mut out = vec![];
                let mut qs: Vec<u16> = flows.iter().map(|&f| rig.enq(&mut b, Time(10), f, 1, 0, &mut out).queue).collect();
                let mut keys: Vec<usize> = flows.iter().map(|&f| b.key(&rig.view(), 0, f)).collect();
                qs.sort();
                qs.dedup();
                keys.sort();
                keys.dedup();
                if cfg == Assignment::Dynamic && keys.len() < 5 {
                    index_clashes += 1;
                    continue;
                }
                *hits += (qs.len() < 5) as u32;
                if cfg == Assignment::Stochastic {
                    counted += (b.collisions > 0) as u32;
                    // two flows in one flow-table entry are one active entry, counted once
                    if keys.len() == 5 {
                        assert_eq!(b.collisions as usize, 5 - qs.len(), "a collision per flow landing on a taken queue");
                    }
                }
            }
        }
        let measured = stoch as f64 / trials as f64;
        eprintln!("5 flows on 31 queues: stochastic collides in {measured:.4} of {trials} trials (expected {expected:.4}); dynamic in {dynamic} ({index_clashes} index clashes skipped)");
        assert!((measured - expected).abs() < 0.03, "stochastic: measured {measured:.3}, expected {expected:.3}");
        assert_eq!(counted, stoch, "every stochastic run with two flows in a queue counted a collision");
        assert_eq!(dynamic, 0, "dynamic: collisions without a flow-table index clash");
        let clash = 1.0 - (0..5).map(|i| 1.0 - i as f64 / 3100.0).product::<f64>();
        assert!((index_clashes as f64 / trials as f64) < 3.0 * clash + 0.002, "{index_clashes} index clashes, expected ~{clash:.4}");
    }

    /// The per-port values over time: active flows come and go with their packets, a paused
    /// upstream queue is counted at its ingress, and the longest queue is the paused flow's.
    #[test]
    fn samples_report_active_flows_paused_upstream_queues_and_the_longest_queue() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig::default());
        let mut out = vec![];
        let a: Vec<PktMeta> = (0..30).map(|_| rig.enq(&mut b, Time(10), 42, 1, 7, &mut out)).collect();
        let c = rig.enq(&mut b, Time(10), 43, 2, 0, &mut out);
        let get = |b: &Bfc, rig: &Rig, port: u16, metric: &str| {
            let mut s = vec![];
            b.sample(Time(11), &rig.view(), &mut s);
            s.iter().find(|x| x.0 == port && x.1 == metric).map(|x| x.2)
        };
        assert_eq!(get(&b, &rig, 0, "active_flows"), Some(2.0));
        assert_eq!(get(&b, &rig, 1, "paused_upstream_queues"), Some(1.0));
        assert_eq!(get(&b, &rig, 2, "paused_upstream_queues"), Some(0.0));
        assert_eq!(get(&b, &rig, 0, "longest_queue_bytes"), Some(30_000.0));
        assert_eq!(get(&b, &rig, 0, "collisions"), Some(0.0));
        rig.deq(&mut b, Time(12), &c, &mut out);
        assert_eq!(get(&b, &rig, 0, "active_flows"), Some(1.0));
        for m in &a {
            rig.deq(&mut b, Time(13), m, &mut out);
        }
        assert_eq!(get(&b, &rig, 0, "active_flows"), Some(0.0));
        assert_eq!(get(&b, &rig, 1, "paused_upstream_queues"), Some(0.0));
    }

    #[test]
    fn no_backpressure_for_packets_that_turn_back_up() {
        let mut rig = Rig::new();
        rig.info.tier = 1;
        rig.info.peers = vec![Peer { tier: Some(2) }, Peer { tier: Some(2) }, Peer { tier: Some(0) }, Peer { tier: None }];
        let mut b = bfc(BfcConfig::default());
        let mut out = vec![];
        // egress 0 faces a tier-2 switch; ingress 1 too: down-up, no pause however long the queue
        for _ in 0..60 {
            rig.enq(&mut b, Time(10), 1, 1, 3, &mut out);
        }
        assert!(out.is_empty());
        // from a tier-0 ingress the same queue triggers backpressure
        rig.enq(&mut b, Time(10), 1, 2, 3, &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn incast_labelled_flows_share_one_queue() {
        let mut rig = Rig::new();
        let mut b = bfc(BfcConfig { incast_label: true, ..Default::default() });
        let mut out = vec![];
        let mut qs = vec![];
        for f in 0..10 {
            let mut m = PktMeta { flow: f, egress: 0, size: 1000, flags: tag::INCAST, ..Default::default() };
            m.queue = b.classify(Time(1), &m, &rig.view());
            qs.push(m.queue);
            let id = rig.slab.alloc(Packet { size: 1000, ..Default::default() });
            rig.ports[0].enqueue_data(m.queue as usize, id, 1000);
            b.on_enqueue(Time(1), &mut m, &rig.view(), &mut out);
        }
        assert!(qs.iter().all(|&q| q as usize == NQ - 2), "{qs:?}");
        let normal = rig.enq(&mut b, Time(1), 77, 1, 0, &mut out);
        assert_ne!(normal.queue as usize, NQ - 2);
    }

    use crate::fc::view::Peer;
}
