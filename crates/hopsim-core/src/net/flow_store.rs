//! Per-flow storage whose size follows the flows in flight, not the workload's length (issue 14:
//! "peak memory bounded by packets in flight").
//!
//! A flow's data comes in three parts with three lifetimes:
//! - [`FlowFixed`]: what assembly computes once (the spec, ideal and standalone FCTs, base RTT,
//!   line rate, NIC binding), compact; what is a cheap pure function of these and the settings
//!   (the ECMP hash, the window cap) is computed where it is needed instead. Made for every flow
//!   at assembly, or, where flows are made as they arrive (`Simulation::from_stream`,
//!   `net::arrivals`), when the flow starts; kept in chunks of `CHUNK` consecutive ids, and in a
//!   run whose rows leave as flows are freed, a chunk is dropped once all its flows were freed,
//!   so that a streamed run holds the fixed data of its flows in flight and of a few chunks
//!   around them, whatever its length;
//! - [`Flow`]: the live state (congestion control, sequence state, timers, TCP box, NIC slot),
//!   made from the fixed part when the flow starts (`Simulation::start_flow`) in a slab slot,
//!   and freed (the slot reused) once nothing can touch it any more;
//! - [`FlowResult`]: what the end-of-run flows table needs (finish times, retransmitted,
//!   dropped and delivered bytes), written when the live state is freed.
//!
//! In a run with a sink (`progress::Sink`: `hopsim run` spools to disk) a freed flow's row of the
//! flows table is written at once, into `RunStats::flows`, which the sink empties in chunks as it
//! does the time-growing tables; its `FlowResult` is not kept, and the end of the run adds the
//! rows of the flows still live or never started. The sink's owner puts the rows back in flow-id
//! order. Without a sink every result is kept and the table is built in flow-id order at the end.
//!
//! "Nothing can touch it any more" is exact, so results do not change: a flow is released when
//! its sender is done, its receiver holds every byte and none of its packets (data, ACK, NACK,
//! CNP) is alive in the network (`Flow::in_net`). Until then a late CNP still reaches the
//! controller, a duplicate retransmission still reaches the receiver (which answers it) and a
//! drop still charges `dropped_bytes`; after it, timers are dead (`sender_done`) and no packet
//! can arrive. The route memo (`topo::route_memo`) is the model: a slot per running flow.
//!
//! Flows are addressed by flow id everywhere (packets, `Event::FlowTimer`); a chunk's `slot` maps
//! the id to its live state, so a reused slot is never reached through a freed flow's id. The
//! look-up of the per-packet path is two loads (the chunk, then the slot) where a flat array was
//! one: with the route memo's, 2.3% more instructions on the standard benchmark (callgrind,
//! plain build; no measurable wall time profile-guided), for memory that does not grow with
//! the run.

use crate::cc::{AnyCc, CongestionControl};
use crate::net::host::Flow;
use crate::params::{HostConfig, WindowConfig};
use crate::stats::FlowTable;
use crate::time::{Rate, Time};
use crate::workload::FlowSpec;

/// `slot` of a flow that has not started.
const NOT_STARTED: u32 = u32::MAX;
/// `slot` of a flow whose live state was freed.
const FREED: u32 = u32::MAX - 1;

/// What assembly computes once for a flow and the run needs from its start to the end. Its
/// ideal FCTs, base RTT and line rate come from the flow's path at assembly (a link failure may
/// change the path before it starts), so they are kept; its hash and window cap are not.
#[derive(Clone, Copy, Debug)]
pub struct FlowFixed {
    pub spec: FlowSpec,
    pub ideal_fct: Time,
    pub base_rtt: Time,
    /// The HPCC simulator's standalone FCT of this flow (`third.cc` `qp_finish`), for its FCT files.
    pub hpcc_standalone_fct: Time,
    /// Line rate of the sender's NIC.
    pub line_rate: Rate,
    /// The sender's NIC and the receiver's NIC its replies leave by (`net::nic_choice`): the
    /// binding at assembly until the flow starts, its last binding once it is freed.
    pub src_nic: u32,
    pub ack_nic: u32,
}

/// A flow's ECMP hash (packets carry it; `routing.ecmp`, the NIC choice of multi-NIC hosts).
pub(crate) fn flow_hash(f: &FlowSpec, id: u32, seed: u64) -> u32 {
    crate::rng::mix(&[f.src as u64, f.dst as u64, id as u64, seed]) as u32
}

impl FlowFixed {
    /// Flow `id`'s ECMP hash in a run seeded `seed` (`flow_hash`).
    #[inline]
    pub fn hash(&self, id: u32, seed: u64) -> u32 {
        flow_hash(&self.spec, id, seed)
    }

    /// The host's cap on the flow's bytes in flight (`transport.window`): a BDP of its line rate
    /// and base RTT, a size, or none (`u64::MAX`); at least a packet.
    pub fn win_cap(&self, h: &HostConfig) -> u64 {
        match h.window {
            WindowConfig::Bdp => self.line_rate.bytes_in(self.base_rtt).max(h.mtu as u64),
            WindowConfig::Bytes(b) => b.max(h.mtu as u64),
            WindowConfig::Off => u64::MAX,
        }
    }

    /// The congestion controller the flow starts with (a pure function of the run's settings and
    /// the flow's path: built when the flow starts, not kept for every flow of the run).
    pub fn new_cc(&self, cfg: &crate::cc::CcConfig, mtu: u32) -> AnyCc {
        AnyCc::build(cfg, &crate::cc::FlowInfo { line_rate: self.line_rate, base_rtt: self.base_rtt, mtu })
    }
}

/// What the end-of-run flows table needs of a flow (`sim::sample::finish`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowResult {
    /// The receiver holds the last byte (`u64::MAX`: not yet), in picoseconds.
    pub finish_ps: u64,
    /// The sender holds the last ACK (`u64::MAX`: not yet).
    pub ack_finish_ps: u64,
    pub retx_bytes: u64,
    pub dropped_bytes: u64,
    /// Bytes the receiver holds in order (`rcv_nxt`).
    pub delivered_bytes: u64,
}

impl FlowResult {
    /// A flow that never started.
    pub const NONE: FlowResult = FlowResult { finish_ps: u64::MAX, ack_finish_ps: u64::MAX, retx_bytes: 0, dropped_bytes: 0, delivered_bytes: 0 };

    fn of(f: &Flow) -> FlowResult {
        FlowResult {
            finish_ps: f.finish.map_or(u64::MAX, |t| t.0),
            ack_finish_ps: f.ack_finish.map_or(u64::MAX, |t| t.0),
            retx_bytes: f.retx_bytes,
            dropped_bytes: f.dropped_bytes,
            delivered_bytes: f.rcv_nxt,
        }
    }
}

/// What a split run's other partitions hold of a flow freed in the partition of its sender
/// (`FlowStore::release_split`): its receiver's finish and bytes held, if the receiver is
/// elsewhere, and the payload bytes dropped elsewhere.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Elsewhere {
    pub receiver: Option<(u64, u64)>,
    pub dropped: u64,
}

/// log2 of the flows in a chunk of per-flow storage (1,024: 90 KB of fixed data). A chunk goes
/// when all its flows were freed, so a flow that runs long keeps at most one chunk of its
/// neighbours' data alive, and the storage follows the flows in flight, not the run's length.
const CHUNK_BITS: u32 = 10;
const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNK_MASK: usize = CHUNK - 1;

/// The fixed data and live-state slots of `CHUNK` consecutive flow ids (fewer fixed in the
/// last).
struct Chunk {
    /// Live-state slot of each flow, or NOT_STARTED / FREED (NOT_STARTED beyond `fixed`). A
    /// whole array at the chunk's start: the look-up on the per-packet path loads the chunk's
    /// pointer, masks the id and needs no bound check.
    slot: [u32; CHUNK],
    fixed: Vec<FlowFixed>,
    /// Flows of the chunk freed so far: at `CHUNK`, nothing reads the chunk any more.
    freed: u32,
}

/// Every flow of a run: fixed data and results for all, live state for the running ones.
#[derive(Default)]
pub struct FlowStore {
    /// Chunks by `id >> CHUNK_BITS`; `None` once every flow of the chunk was freed (`retire`).
    chunks: Vec<Option<Box<Chunk>>>,
    /// Flows added so far (their ids are 0..created).
    created: usize,
    /// Chunks held now and at the most.
    held: usize,
    peak_held: usize,
    /// Flows of the run: all added at assembly, or (flows made as they arrive,
    /// `Simulation::from_stream`) counted before the run.
    total: usize,
    live: Vec<Flow>,
    free: Vec<u32>,
    /// Results of each flow whose state was freed (`FlowResult::NONE` for the others); empty
    /// when rows leave as flows are freed (`rows_out`).
    results: Vec<FlowResult>,
    /// A freed flow's row goes to the flows table at once (`begin`).
    rows_out: bool,
    /// Drop a chunk once all its flows were freed (`begin`): nothing reads a freed flow's data
    /// in a run whose rows leave as flows are freed, unless the store is `pinned`.
    retire: bool,
    /// No chunk may be dropped (FlowSail with link faults: its flow pauses may need a freed flow's NIC).
    pinned: bool,
    /// Rows written with a finish time (the run's `flows_finished`).
    finished_rows: u64,
    /// Keep every flow's state to the end (`Simulation::keep_finished_flows`).
    keep: bool,
    /// Flows started and not yet released, now and at the most (the same with `keep` or not).
    in_use: usize,
    peak: usize,
    /// Flows released after the instant their sender finished: packets of theirs (a CNP, a
    /// duplicate retransmission and its ACK) were still in the network then.
    late: usize,
    /// Module counters (`CongestionControl::counters`, TCP's) of the flows freed so far, summed.
    counters: Vec<(&'static str, u64)>,
}

impl FlowStore {
    /// The run has `n` flows, added at assembly or as they arrive (`push`).
    pub(crate) fn set_total(&mut self, n: usize) {
        self.total = n;
    }

    /// Add a flow; its id is the number of flows before it.
    pub(crate) fn push(&mut self, f: FlowFixed) {
        let c = self.created >> CHUNK_BITS;
        if c == self.chunks.len() {
            self.chunks.push(Some(Box::new(Chunk { slot: [NOT_STARTED; CHUNK], fixed: Vec::new(), freed: 0 })));
            self.held += 1;
            self.peak_held = self.peak_held.max(self.held);
        }
        let chunk = self.chunks[c].as_mut().expect("the newest chunk is kept");
        chunk.fixed.push(f);
        self.created += 1;
        self.total = self.total.max(self.created);
    }

    /// Before the run: with `rows_out` a freed flow's row is written to the flows table when its
    /// state is freed (a run with a sink), else its results are kept to the end. A chunk whose
    /// flows were all freed is dropped only then, and only while nothing pins the store.
    pub(crate) fn begin(&mut self, rows_out: bool) {
        self.rows_out = rows_out;
        self.retire = rows_out && !self.pinned && !self.keep;
        if !rows_out {
            self.results.resize(self.total, FlowResult::NONE);
        }
    }

    /// Keep every flow's fixed data to the end (FlowSail with link faults: a flow pause may reach
    /// a host after the flow it names was freed, and the host looks up the NIC a fault may have
    /// moved the flow to).
    pub(crate) fn pin(&mut self) {
        self.pinned = true;
    }

    /// Flows of the run.
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Flows added so far: all of them once assembled, or those that arrived so far when flows
    /// are made as they arrive.
    pub fn created(&self) -> usize {
        self.created
    }

    /// Chunks of per-flow data (`chunk_flows` flows each) held now and at the most.
    pub fn chunks_held(&self) -> (usize, usize) {
        (self.held, self.peak_held)
    }

    /// Flows of a chunk of per-flow data.
    pub fn chunk_flows() -> usize {
        CHUNK
    }

    #[inline]
    fn chunk(&self, i: u32) -> Option<&Chunk> {
        self.chunks.get(i as usize >> CHUNK_BITS)?.as_deref()
    }

    #[inline]
    fn chunk_mut(&mut self, i: u32) -> Option<&mut Chunk> {
        self.chunks.get_mut(i as usize >> CHUNK_BITS)?.as_deref_mut()
    }

    /// The slot of flow `i` (NOT_STARTED for ids not added yet); `None` beyond every chunk or in
    /// a dropped one.
    #[inline]
    fn slot_of(&self, i: u32) -> Option<u32> {
        Some(self.chunk(i)?.slot[i as usize & CHUNK_MASK])
    }

    /// What assembly computed for flow `i`: `None` before the flow was added, or once its chunk
    /// was dropped (every flow of it freed).
    #[inline]
    pub fn fixed_get(&self, i: u32) -> Option<&FlowFixed> {
        self.chunk(i)?.fixed.get(i as usize & CHUNK_MASK)
    }

    /// What assembly computed for flow `i` (which was added and is not in a dropped chunk).
    #[inline]
    pub fn fixed(&self, i: u32) -> &FlowFixed {
        match self.fixed_get(i) {
            Some(f) => f,
            None => no_fixed(i, self.created),
        }
    }

    pub(crate) fn fixed_mut(&mut self, i: u32) -> &mut FlowFixed {
        let created = self.created;
        match self.chunk_mut(i).and_then(|c| c.fixed.get_mut(i as usize & CHUNK_MASK)) {
            Some(f) => f,
            None => no_fixed(i, created),
        }
    }

    /// The live state of flow `i`: `None` before it starts and once it was freed.
    #[inline]
    pub fn get(&self, i: u32) -> Option<&Flow> {
        self.live.get(self.slot_of(i)? as usize)
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> Option<&mut Flow> {
        let s = self.slot_of(i)?;
        self.live.get_mut(s as usize)
    }

    /// The sender's NIC flow `i` is bound to now: its live state's while it has one (the copy
    /// the send path reads, which a link failure may move), else its fixed data's (the binding
    /// at assembly, or the last one, written back when the state was freed).
    pub(crate) fn src_nic(&self, i: u32) -> u32 {
        self.get(i).map_or(self.fixed(i).src_nic, |f| f.src_nic)
    }

    /// Bind flow `i`'s replies to NIC `nic`, wherever its binding lives now (see `src_nic`).
    pub(crate) fn set_ack_nic(&mut self, i: u32, nic: u32) {
        match self.get_mut(i) {
            Some(f) => f.ack_nic = nic,
            None => self.fixed_mut(i).ack_nic = nic,
        }
    }

    /// Whether flow `i` has started (its state may be freed since).
    pub fn started(&self, i: u32) -> bool {
        // a dropped chunk held only freed flows
        (i as usize) < self.created && self.slot_of(i) != Some(NOT_STARTED)
    }

    #[inline]
    fn slot_mut(&mut self, i: u32) -> &mut u32 {
        &mut self.chunk_mut(i).expect("a live flow's chunk is kept").slot[i as usize & CHUNK_MASK]
    }

    /// Flow `i` starts with state `flow`.
    pub(crate) fn start(&mut self, i: u32, flow: Flow) {
        debug_assert_eq!(self.slot_of(i), Some(NOT_STARTED), "flow {i} starts twice");
        let s = match self.free.pop() {
            Some(s) => {
                self.live[s as usize] = flow;
                s
            }
            None => {
                self.live.push(flow);
                self.live.len() as u32 - 1
            }
        };
        *self.slot_mut(i) = s;
        self.in_use += 1;
        self.peak = self.peak.max(self.in_use);
    }

    /// Nothing can touch flow `i` any more (at `now`): its results (or its row of `rows`, see
    /// `begin`) and module counters are kept and its slot goes back to the pool (unless `keep`).
    pub(crate) fn release(&mut self, i: u32, now: Time, rows: &mut FlowTable) {
        self.release_split(i, now, true, &Elsewhere::default(), rows);
    }

    /// `release` in a partition of a split run (`engine::release`), which holds one or both
    /// halves of flow `i`: `sender` whether the sender's is here (its module counters count
    /// here, and with rows going out it writes the row, whole, with what happened `elsewhere`).
    pub(crate) fn release_split(&mut self, i: u32, now: Time, sender: bool, elsewhere: &Elsewhere, rows: &mut FlowTable) {
        self.in_use -= 1;
        let s = *self.slot_mut(i);
        if self.live[s as usize].ack_finish.is_some_and(|t| t < now) {
            self.late += 1;
        }
        if self.keep {
            return;
        }
        let c = i as usize >> CHUNK_BITS;
        let chunk = self.chunks[c].as_mut().expect("a live flow's chunk is kept");
        chunk.slot[i as usize & CHUNK_MASK] = FREED;
        chunk.freed += 1;
        let flow = &mut self.live[s as usize];
        let mut r = FlowResult::of(flow);
        // a flow pause may still name this flow: it finds the flow's last NIC here
        let fx = &mut chunk.fixed[i as usize & CHUNK_MASK];
        fx.src_nic = flow.src_nic;
        fx.ack_nic = flow.ack_nic;
        if self.rows_out {
            if sender {
                if let Some((finish_ps, delivered)) = elsewhere.receiver {
                    (r.finish_ps, r.delivered_bytes) = (finish_ps, delivered);
                }
                r.dropped_bytes += elsewhere.dropped;
                write_row(rows, &mut self.finished_rows, i, fx, &r);
            }
        } else {
            self.results[i as usize] = r;
        }
        if self.retire && chunk.freed as usize == CHUNK {
            self.chunks[c] = None;
            self.held -= 1;
        }
        if sender {
            let mut named = Vec::new();
            module_counters(flow, &mut named);
            for (k, v) in named {
                add_counter(&mut self.counters, k, v);
            }
        }
        // drop the TCP box now rather than when the slot is reused
        flow.tcp = None;
        self.free.push(s);
    }

    /// Flow `i`, which has no state here (a partition of a split run that holds neither of its
    /// ends), was freed where it had state: its fixed data may go with its chunk's.
    pub(crate) fn forget(&mut self, i: u32) {
        if self.keep {
            return;
        }
        let c = i as usize >> CHUNK_BITS;
        let chunk = self.chunks[c].as_mut().expect("a flow not freed keeps its chunk");
        debug_assert_eq!(chunk.slot[i as usize & CHUNK_MASK], NOT_STARTED);
        chunk.slot[i as usize & CHUNK_MASK] = FREED;
        chunk.freed += 1;
        if self.retire && chunk.freed as usize == CHUNK {
            self.chunks[c] = None;
            self.held -= 1;
        }
    }

    /// A freed flow's row goes to the flows table at once (see `begin`).
    pub(crate) fn rows_out(&self) -> bool {
        self.rows_out && !self.keep
    }

    /// Keep every flow's state to the end of the run (before it starts).
    pub(crate) fn keep_all(&mut self) {
        self.keep = true;
    }

    /// The end-of-run results of flow `i`: from its live state if it has one (`NONE` for a flow
    /// freed in a run whose rows left as flows were freed).
    pub fn result(&self, i: u32) -> FlowResult {
        match self.get(i) {
            Some(f) => FlowResult::of(f),
            None => self.results.get(i as usize).copied().unwrap_or(FlowResult::NONE),
        }
    }

    /// At the end of the run, the rows not written yet, from flow `from` on, until `rows` holds
    /// `max` rows: every flow's in flow-id order, or with `rows_out` those of the flows not freed
    /// (live, or never started: in a run cut short, most of the workload). Returns the flow to go
    /// on from once `rows` was handed on, or `None` when every row is written.
    pub(crate) fn write_rows(&mut self, rows: &mut FlowTable, from: usize, max: usize) -> Option<usize> {
        let mut finished = self.finished_rows;
        let mut next = None;
        let mut i = from;
        'all: while i < self.created {
            let Some(chunk) = &self.chunks[i >> CHUNK_BITS] else {
                // every flow of a dropped chunk was freed and its row written
                i = (i | CHUNK_MASK) + 1;
                continue;
            };
            for k in i & CHUNK_MASK..chunk.fixed.len() {
                let id = (i & !CHUNK_MASK) + k;
                if self.rows_out && chunk.slot[k] == FREED {
                    continue;
                }
                if rows.len() >= max {
                    next = Some(id);
                    break 'all;
                }
                write_row(rows, &mut finished, id as u32, &chunk.fixed[k], &self.result(id as u32));
            }
            i = (i | CHUNK_MASK) + 1;
        }
        self.finished_rows = finished;
        next
    }

    /// The row of flow `i`, which never started and was not added (flows made as they arrive:
    /// those after the end of the run), `f` made for it now.
    pub(crate) fn write_unstarted_row(&mut self, rows: &mut FlowTable, i: u32, f: &FlowFixed) {
        write_row(rows, &mut self.finished_rows, i, f, &FlowResult::NONE);
    }

    /// Rows written so far with a finish time: at the end of the run, the flows that finished.
    pub fn finished_rows(&self) -> u64 {
        self.finished_rows
    }

    /// The most flows started and not yet released at once.
    pub fn peak_live(&self) -> usize {
        self.peak
    }

    /// Flows whose state outlived their sender's completion, released when their last packet
    /// left the network.
    pub fn late_releases(&self) -> usize {
        self.late
    }

    /// Flows started and not yet released now.
    pub fn live_now(&self) -> usize {
        self.in_use
    }

    /// Slots of live state allocated (the slab's size: the peak of states held at once).
    pub fn slots(&self) -> usize {
        self.live.len()
    }

    /// The module counters of every flow (freed, live, or not started), as the run reports them.
    /// `unstarted`: a flow of the run that was never added (flows made as they arrive), if any.
    pub(crate) fn module_counters(
        &self,
        cc: &crate::cc::CcConfig,
        mtu: u32,
        unstarted: Option<&FlowFixed>,
        sender_here: &dyn Fn(u32) -> bool,
        out: &mut Vec<(&'static str, u64)>,
    ) {
        out.extend(self.counters.iter().copied());
        let chunks = || self.chunks.iter().flatten();
        for c in chunks() {
            for &s in c.slot.iter() {
                if let Some(f) = self.live.get(s as usize) {
                    if sender_here(f.spec.src) {
                        module_counters(f, out);
                    }
                }
            }
        }
        // flows that never started report their fresh controller's counters (zeros, but the
        // names are there as in a run where every flow had state from the start)
        let added = chunks().find_map(|c| c.slot[..c.fixed.len()].iter().position(|&s| s == NOT_STARTED).map(|k| &c.fixed[k]));
        if let Some(f) = added.or(unstarted) {
            f.new_cc(cc, mtu).counters(out);
        }
    }
}

fn write_row(rows: &mut FlowTable, finished: &mut u64, i: u32, f: &FlowFixed, r: &FlowResult) {
    *finished += (r.finish_ps != u64::MAX) as u64;
    rows.push_row(i, f, r);
}

fn module_counters(f: &Flow, out: &mut Vec<(&'static str, u64)>) {
    f.cc.counters(out);
    if let Some(t) = &f.tcp {
        t.counters(out);
    }
}

fn add_counter(sums: &mut Vec<(&'static str, u64)>, k: &'static str, v: u64) {
    match sums.iter_mut().find(|(n, _)| *n == k) {
        Some((_, s)) => *s += v,
        None => sums.push((k, v)),
    }
}

/// The old index path (`sim.flows[i]`): the live state, or a panic that says why there is none.
impl std::ops::Index<usize> for FlowStore {
    type Output = Flow;
    #[inline]
    fn index(&self, i: usize) -> &Flow {
        // NOT_STARTED and FREED are beyond any slot: one check finds both (and a dropped
        // chunk's flows were all freed)
        let s = self.slot_of(i as u32).unwrap_or(FREED);
        match self.live.get(s as usize) {
            Some(f) => f,
            None => no_state(i, s),
        }
    }
}

impl std::ops::IndexMut<usize> for FlowStore {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut Flow {
        let s = self.slot_of(i as u32).unwrap_or(FREED);
        match self.live.get_mut(s as usize) {
            Some(f) => f,
            None => no_state(i, s),
        }
    }
}

#[cold]
#[inline(never)]
fn no_fixed(i: u32, created: usize) -> ! {
    if i as usize >= created {
        panic!("flow {i} has not arrived yet: flows are made as they arrive ({created} so far)")
    }
    panic!("flow {i} and every flow beside it were freed, and their fixed data with them: read its row from stats.flows")
}

#[cold]
#[inline(never)]
fn no_state(i: usize, s: u32) -> ! {
    debug_assert!(s >= FREED, "flow {i}: slot {s} out of the slab");
    if s == FREED {
        panic!(
            "flow {i}'s state was freed when it finished and nothing could touch it any more: read its results from \
             stats.flows, or call Simulation::keep_finished_flows() before run to inspect it"
        )
    }
    panic!("flow {i} has not started: it has no state yet (its fixed data: flows.fixed({i}))")
}

impl crate::sim::Simulation {
    /// Check that each flow's count of packets alive, `Flow::in_net`, is the number of its
    /// packets in the slab, and that no freed flow has one: a count off by one frees a state too
    /// early (a later packet finds none) or never (results unchanged, memory leaked, so only
    /// this check sees it). Debug builds run it at the end of every run; release-mode tests
    /// call it. Panics on a mismatch; walks the whole slab.
    pub fn check_flow_packets(&self) {
        let mut alive = vec![0u32; self.flows.len()];
        for p in self.slab.live_packets().filter(|p| p.kind.of_flow()) {
            alive[p.flow as usize] += 1;
        }
        for (f, &n) in alive.iter().enumerate() {
            let counted = self.flows.get(f as u32).map_or(0, |s| s.in_net);
            assert_eq!(counted, n, "flow {f}: {counted} packets counted alive, {n} in the slab");
        }
    }
}
impl crate::stats::FlowTable {
    /// Append flow `id`'s row: what assembly fixed and what the run measured.
    pub(crate) fn push_row(&mut self, id: u32, f: &FlowFixed, r: &FlowResult) {
        self.flow_id.push(id);
        self.src.push(f.spec.src);
        self.dst.push(f.spec.dst);
        self.size_bytes.push(f.spec.size);
        self.start_ps.push(f.spec.start.0);
        let since_start = |t: u64| if t == u64::MAX { u64::MAX } else { t - f.spec.start.0 };
        let (fin, fct) = (r.finish_ps, since_start(r.finish_ps));
        self.finish_ps.push(fin);
        self.fct_ps.push(fct);
        self.ideal_fct_ps.push(f.ideal_fct.0);
        let (afin, afct) = (r.ack_finish_ps, since_start(r.ack_finish_ps));
        self.ack_finish_ps.push(afin);
        self.ack_fct_ps.push(afct);
        self.hpcc_standalone_fct_ps.push(f.hpcc_standalone_fct.0);
        self.sport.push(f.spec.sport as u32);
        self.dport.push(f.spec.dport as u32);
        self.slowdown.push(if fin != u64::MAX { fct as f64 / f.ideal_fct.0 as f64 } else { f64::NAN });
        self.incast.push(f.spec.incast);
        self.retx_bytes.push(r.retx_bytes);
        self.dropped_bytes.push(r.dropped_bytes);
        self.delivered_bytes.push(r.delivered_bytes);
    }
}

