//! An egress port and the wire behind it (htsim's Queue + Pipe in one place).
//!
//! A port serialises one packet at a time at its line rate, then puts it on the wire, where it
//! spends the propagation delay. Packets on the wire sit in the port's own ring in arrival order,
//! so the port needs one pending event for its serialiser and one for the wire's head, however
//! many packets are in flight: the event heap stays as small as the number of ports.
//!
//! A packet goes onto the wire the moment its serialisation starts, stamped with its arrival time
//! (start + serialisation + propagation), and the port is busy until the serialisation ends. The
//! port schedules its own service event at that end only when something is waiting to be sent;
//! an idle port that gets a packet later simply starts at once. On a lightly loaded port that is
//! one event per packet (the wire's) instead of two.
//!
//! Queues and gates. A switch port has a strict-priority control queue and any number of data
//! queues, each mapped to a priority by explicit configuration (`prio_of`). A data queue may send
//! when it is non-empty, its own gate is open, its priority is not paused, and its head is not a
//! marker waiting for its twin. Flow-control modules open and close gates (BFC's per-queue pause,
//! Floodgate's VOQs); a received PFC frame pauses a priority, which closes the gate of every queue
//! of that priority at once without touching each. A gate is closed until a time, or until opened
//! (`Time::MAX`). Closed time is accounted per priority (PFC) and per queue (its own gate)
//! separately, each interval counted once however often it is re-closed.
//!
//! Markers. A pair of zero-length markers keeps delivery in order when a flow moves from one queue
//! to another (FlowSail's order marks, §III-D): the *release* marker goes to the tail of the old
//! queue, the *hold* marker to the tail of the new one. A hold marker at the head of its queue
//! holds that queue until its twin has left the old one, i.e. until everything queued before the
//! move has been sent. Markers take no buffer, no bytes and no serialisation time.
//!
//! Host ports use only the control queue here (their data comes from the NIC's queue pairs), but
//! have gates: the NIC queues a host-side module groups its flows into.

use super::bits::QueueBits;
use super::sched::{Sched, SchedulerConfig};
use crate::packet::{PacketId, PktKind, Slab};
use crate::time::{Time, TxClock};
use std::collections::VecDeque;

pub const NPRIO: usize = 8;

/// Most data queues a port may have; the scenario schema checks the same limit (a test says so).
pub const MAX_QUEUES: usize = 1024;

/// Ask the cache for cache line `line` (0-4, see `Port`) of port `p` ahead of its use. A hint
/// only: no effect on results, and an index past the end reads nothing.
#[inline(always)]
pub(crate) fn prefetch_line(ports: &[Port], p: u32, line: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` never faults and reads nothing; the address is computed with
    // wrapping arithmetic and need not be valid.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((ports.as_ptr().wrapping_add(p as usize) as *const i8).wrapping_add(line * 64));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ports, p, line);
}

/// A closed-until time with exact accounting of the time spent closed.
#[derive(Clone, Copy, Debug, Default)]
pub struct PauseClock {
    /// Closed while `now < until`.
    pub until: Time,
    /// Start of the interval the last close began.
    from: Time,
    /// Closed time of the intervals already ended.
    total: Time,
}

impl PauseClock {
    #[inline]
    pub fn closed(&self, now: Time) -> bool {
        self.until > now
    }

    /// Close until `until` (`now` opens), keeping the total exact even when closes overlap or
    /// lapse by themselves.
    pub fn set(&mut self, now: Time, until: Time) {
        if self.until > self.from {
            // close the previous interval where it really ended
            let end = if self.until < now { self.until } else { now };
            if end > self.from {
                self.total += end - self.from;
            }
        }
        self.from = now;
        self.until = until;
    }

    /// Closed time up to `now`.
    pub fn total(&self, now: Time) -> Time {
        let mut t = self.total;
        if self.until > self.from {
            let end = if self.until < now { self.until } else { now };
            if end > self.from {
                t += end - self.from;
            }
        }
        t
    }
}

/// Fields in the order the packet path reads them, one cache line per group (`repr(C)`, aligned
/// to a line), because at scale the engine waits on memory, not on instructions: on a 1024-host
/// fat-tree the same instructions per event run at half the events per second of a 320-host one
/// (callgrind: 726 against 706 instructions per event). Line 0 is what an arrival, a kick and a
/// service all read (owner, ids, the serialiser's state, the pause summary, the bytes queued);
/// line 1 the transmit side (wire, clock); line 2 enqueue and dequeue (queues, bytes, peak);
/// line 3 the scheduler's sets; line 4 the control queue and the rest.
#[repr(C, align(64))]
pub struct Port {
    // line 0
    /// What owns it: its switch, or for a host port its NIC (`Simulation::owner_of_port`). Kept
    /// here, beside `local` and `node`, because every arrival reads all three: a table of its
    /// own cost an L1 miss per hop on a 1024-host fat-tree (callgrind's cache simulation).
    pub(crate) owner: crate::ids::NodeRef,
    pub node: u32,
    /// Index of this port among its node's ports.
    pub local: u16,
    /// The queue-to-priority map is the default `q mod 8` (the scheduler skips the lookup).
    prio_mod8: bool,
    /// Generation of the live `PortTx` event; older ones are stale.
    pub gen: u32,
    /// Markers in the data queues (their handling is skipped while there are none).
    markers: u32,
    /// End of the current serialisation: the port is free from then on.
    pub busy_until: Time,
    /// Time of the live `PortTx` event, if any.
    pub pending: Option<Time>,
    /// The latest end of a PFC pause of any priority (`cold.prio_until`): no priority is paused
    /// from then on, so the scheduler reads the per-priority ends only before it.
    pause_end: Time,
    /// Bytes queued over all data queues.
    total: u64,
    // line 1
    /// Packets on the wire and the time each reaches the far end.
    pub wire: VecDeque<(Time, PacketId)>,
    pub clock: TxClock,
    pub delay: Time,
    pub tx_bytes: u64,
    // line 2
    /// The data queues, each with its bytes beside its packets (`DataQueue`).
    pub queues: Vec<DataQueue>,
    pub peak_qbytes: u64,
    pub tx_data_bytes: u64,
    pub ctrl_bytes: u64,
    /// Keeps the scheduler's sets on a line of their own.
    _line2_pad: [u64; 2],
    // line 3
    /// Data queues holding anything (packets or markers).
    nonempty: QueueBits,
    /// Gates that may be closed (set on close, cleared when found open).
    gated: QueueBits,
    // line 4
    pub ctrl: VecDeque<PacketId>,
    /// What the per-packet path rarely touches, out of line so a port's hot fields share fewer
    /// cache lines (a port is touched several times per packet).
    pub cold: Box<PortCold>,
}

/// A data queue: its packets' ids and their bytes side by side on a cache line of their own,
/// because enqueue and dequeue touch both (callgrind, 100 us of a 1024-host fat-tree: in two
/// arrays, 21.07 M L1 misses; together but unaligned, 21.31 M, the 40-byte entries straddling
/// lines; aligned, 20.92 M, and 0.45% fewer instructions). Reads as its `VecDeque` of ids.
#[derive(Default)]
#[repr(align(64))]
pub struct DataQueue {
    pub ids: VecDeque<PacketId>,
    /// Bytes queued.
    pub bytes: u64,
}

impl std::ops::Deref for DataQueue {
    type Target = VecDeque<PacketId>;
    fn deref(&self) -> &VecDeque<PacketId> {
        &self.ids
    }
}

impl std::ops::DerefMut for DataQueue {
    fn deref_mut(&mut self) -> &mut VecDeque<PacketId> {
        &mut self.ids
    }
}

/// The parts of a port that pauses, gates, markers, a busy scheduler and the end-of-run tables
/// touch.
pub struct PortCold {
    /// When each priority's PFC pause ends (read while `Port::pause_end` is ahead).
    prio_until: [Time; NPRIO],
    /// Per-priority pause from received PFC frames, with its accounting.
    pub prio_pause: [PauseClock; NPRIO],
    gate: Vec<PauseClock>,
    /// Priority of each data (or NIC) queue (what a PFC frame for that priority pauses).
    prio_of: Vec<u8>,
    /// Data queues whose head is a hold marker waiting for its twin.
    held: QueueBits,
    sched: Sched,
    /// Scratch: the eligible set of the pick in progress.
    elig: QueueBits,
    pub markers_inserted: u64,
    pub markers_matched: u64,
    /// Control frames sent: PFC pauses, PFC resumes, every other kind.
    pub pause_frames: u64,
    pub resume_frames: u64,
    pub other_ctrl_frames: u64,
}

impl Port {
    /// A port with `nqueues` data queues (0 for a host), `ngates` gates (at least `nqueues`: a
    /// host's NIC queues have gates but no data queues here), the queue-to-priority map and the
    /// scheduler among the data queues.
    pub fn new(node: u32, local: u16, clock: TxClock, delay: Time, nqueues: usize, quantum: u32) -> Port {
        Port::with(node, local, clock, delay, nqueues, nqueues, quantum, &default_prio_map(nqueues), &SchedulerConfig::Drr)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn with(
        node: u32,
        local: u16,
        clock: TxClock,
        delay: Time,
        nqueues: usize,
        ngates: usize,
        quantum: u32,
        prio_of: &[u8],
        sched: &SchedulerConfig,
    ) -> Port {
        assert!(nqueues <= MAX_QUEUES, "at most {MAX_QUEUES} data queues per port");
        let ngates = ngates.max(nqueues);
        let mut prio: Vec<u8> = (0..ngates).map(|q| prio_of.get(q).copied().unwrap_or((q % NPRIO) as u8)).collect();
        for p in &mut prio {
            *p = (*p).min(NPRIO as u8 - 1);
        }
        Port {
            node,
            local,
            // set by the assembly, which knows the node's kind (`Simulation::set_port_owners`)
            owner: crate::ids::NodeRef::Switch(u32::MAX),
            prio_mod8: prio.iter().enumerate().all(|(q, &p)| p as usize == q % NPRIO),
            markers: 0,
            clock,
            delay,
            ctrl: VecDeque::new(),
            queues: (0..nqueues).map(|_| DataQueue::default()).collect(),
            _line2_pad: [0; 2],
            total: 0,
            nonempty: QueueBits::with_capacity(nqueues),
            gated: QueueBits::with_capacity(ngates),
            pause_end: Time::ZERO,
            busy_until: Time::ZERO,
            gen: 0,
            pending: None,
            wire: VecDeque::new(),
            tx_bytes: 0,
            tx_data_bytes: 0,
            ctrl_bytes: 0,
            peak_qbytes: 0,
            cold: Box::new(PortCold {
                prio_until: [Time::ZERO; NPRIO],
                prio_pause: [PauseClock::default(); NPRIO],
                gate: vec![PauseClock::default(); ngates],
                prio_of: prio,
                held: QueueBits::with_capacity(nqueues),
                sched: Sched::new(sched, nqueues, quantum),
                elig: QueueBits::with_capacity(nqueues),
                markers_inserted: 0,
                markers_matched: 0,
                pause_frames: 0,
                resume_frames: 0,
                other_ctrl_frames: 0,
            }),
        }
    }

    /// Give back the queues, gates and scheduler of a port another partition of a split run owns
    /// (`engine::parallel`): here at most its wire's far end is used (messages put on its ring,
    /// `engine::window`), never what its owner queues and schedules, and every partition holding
    /// every port's queues was most of what a partition added on a large network.
    pub(crate) fn shed(&mut self) {
        debug_assert!(self.total == 0 && self.ctrl.is_empty(), "a port sheds its queues before the run");
        let quantum = self.cold.sched.quantum;
        self.queues = Vec::new();
        self.cold.gate = Vec::new();
        self.cold.prio_of = Vec::new();
        self.cold.sched = Sched::new(&SchedulerConfig::Drr, 0, quantum);
    }

    /// Priority of data (or NIC) queue `q`.
    #[inline]
    pub fn prio_of(&self, q: usize) -> usize {
        self.cold.prio_of[q] as usize
    }

    pub fn nqueues(&self) -> usize {
        self.queues.len()
    }

    pub fn ngates(&self) -> usize {
        self.cold.gate.len()
    }

    #[inline]
    pub fn is_paused(&self, prio: usize, now: Time) -> bool {
        self.pause_end > now && self.cold.prio_until[prio] > now
    }

    /// Whether any priority is paused at `now`.
    #[inline]
    pub fn any_prio_paused(&self, now: Time) -> bool {
        self.pause_end > now && self.cold.prio_until.iter().any(|&u| u > now)
    }

    /// Apply a received PFC frame for `prio`: pause until `until` (== now to resume).
    pub fn apply_pause(&mut self, prio: usize, now: Time, until: Time) {
        self.cold.prio_pause[prio].set(now, until);
        self.cold.prio_until[prio] = until;
        self.pause_end = self.cold.prio_until.iter().copied().max().unwrap_or(Time::ZERO);
    }

    /// Total paused time of `prio` up to `now`.
    pub fn paused_time(&self, prio: usize, now: Time) -> Time {
        self.cold.prio_pause[prio].total(now)
    }

    /// Close gate `q` until `until` (`Time::MAX`: until opened); `until <= now` opens it.
    pub fn set_gate(&mut self, q: usize, now: Time, until: Time) {
        self.cold.gate[q].set(now, until);
        self.gated.put(q, until > now);
    }

    /// Whether gate `q` itself is closed (its priority's pause aside).
    #[inline]
    pub fn gate_closed(&self, q: usize, now: Time) -> bool {
        self.gated.has(q) && self.cold.gate[q].closed(now)
    }

    /// When gate `q` opens by itself (`Time::MAX`: only when opened).
    pub fn gate_until(&self, q: usize) -> Time {
        self.cold.gate[q].until
    }

    /// Whether queue `q` may not send now: its gate or its priority is closed.
    #[inline]
    pub fn queue_closed(&self, q: usize, now: Time) -> bool {
        self.is_paused(self.cold.prio_of[q] as usize, now) || self.gate_closed(q, now)
    }

    /// Closed time of gate `q` up to `now` (its own gate only; PFC's is per priority).
    pub fn gate_closed_time(&self, q: usize, now: Time) -> Time {
        self.cold.gate[q].total(now)
    }

    #[inline]
    pub fn enqueue_data(&mut self, q: usize, id: PacketId, size: u32) {
        let dq = &mut self.queues[q];
        dq.ids.push_back(id);
        dq.bytes += size as u64;
        self.total += size as u64;
        self.nonempty.set(q);
        if self.total > self.peak_qbytes {
            self.peak_qbytes = self.total;
        }
    }

    /// Remove the head of data queue `q` (the one `pick_data` chose). If the port holds markers,
    /// call [`Port::settle`] on `q` next.
    #[inline]
    pub fn dequeue_data(&mut self, q: usize, size: u32) -> PacketId {
        let dq = &mut self.queues[q];
        let id = dq.ids.pop_front().expect("picked queue is non-empty");
        dq.bytes -= size as u64;
        let emptied = dq.ids.is_empty();
        self.total -= size as u64;
        if emptied {
            self.nonempty.clear(q);
        }
        id
    }

    /// Move the head packet of data queue `from` to the tail of data queue `to` (`FcAction::Join`),
    /// returning its id; `None` when `from` is empty or its head is an order marker (a marker
    /// keeps its place).
    pub fn move_head(&mut self, from: usize, to: usize, slab: &mut Slab) -> Option<PacketId> {
        let &id = self.queues[from].front()?;
        let pkt = slab.get_mut(id);
        if pkt.kind == PktKind::Marker {
            return None;
        }
        pkt.queue = to as u16;
        let size = pkt.size as u64;
        let src = &mut self.queues[from];
        src.ids.pop_front();
        src.bytes -= size;
        if src.ids.is_empty() {
            self.nonempty.clear(from);
        }
        let dst = &mut self.queues[to];
        dst.ids.push_back(id);
        dst.bytes += size;
        self.nonempty.set(to);
        Some(id)
    }

    /// Whether order markers sit in any data queue.
    #[inline]
    pub fn has_markers(&self) -> bool {
        self.markers > 0
    }

    /// Queue a marker pair: a release marker at the tail of `release`, a hold marker at the tail
    /// of `hold`; `hold` stops at that marker until the release marker has left `release`.
    pub fn insert_markers(&mut self, hold: usize, release: usize, slab: &mut Slab) {
        let h = slab.alloc(crate::packet::Packet { kind: PktKind::Marker, queue: hold as u16, ..Default::default() });
        let r = slab.alloc(crate::packet::Packet { kind: PktKind::Marker, queue: hold as u16, seq: h as u64, payload: 1, ..Default::default() });
        self.queues[release].push_back(r);
        self.queues[hold].push_back(h);
        self.nonempty.set(release);
        self.nonempty.set(hold);
        self.markers += 2;
        self.cold.markers_inserted += 1;
        self.settle(release, slab);
        self.settle(hold, slab);
    }

    /// Bring queue `q`'s head to a packet that can be sent: release markers leave at once (and
    /// free their twin), released hold markers leave, an unreleased hold marker holds the queue.
    pub fn settle(&mut self, q: usize, slab: &mut Slab) {
        loop {
            let Some(&head) = self.queues[q].front() else {
                self.nonempty.clear(q);
                self.cold.held.clear(q);
                return;
            };
            let m = *slab.get(head);
            if m.kind != PktKind::Marker {
                self.cold.held.clear(q);
                return;
            }
            if m.payload == 1 {
                // a release marker: everything queued before it has left
                self.queues[q].pop_front();
                slab.free(head);
                self.markers -= 1;
                let twin = m.seq as PacketId;
                slab.get_mut(twin).seq = 1;
                let hq = m.queue as usize;
                if hq != q && self.queues[hq].front() == Some(&twin) {
                    self.settle(hq, slab);
                }
            } else if m.seq == 1 {
                // a hold marker whose twin has left
                self.queues[q].pop_front();
                slab.free(head);
                self.markers -= 1;
                self.cold.markers_matched += 1;
            } else {
                self.cold.held.set(q);
                return;
            }
        }
    }

    /// Anything waiting in the control or data queues.
    #[inline]
    pub fn has_backlog(&self) -> bool {
        // every data packet has bytes; queues holding only markers are counted by `markers`
        !self.ctrl.is_empty() || self.total != 0 || self.markers != 0
    }

    #[inline]
    pub fn queued_bytes(&self) -> u64 {
        self.total
    }

    /// Data queues that are non-empty (packets or markers) now.
    pub fn active_queues(&self) -> usize {
        self.nonempty.count()
    }

    /// Non-empty data queues that are not closed at `now`.
    pub fn open_active(&self, now: Time) -> usize {
        self.nonempty.iter().filter(|&q| !self.queue_closed(q, now)).count()
    }

    /// Choose the next data queue to serve, by the port's scheduler, among the non-empty queues
    /// whose gate and priority are open and whose head is not a held marker.
    #[inline]
    pub fn pick_data(&mut self, now: Time, slab: &Slab) -> Option<usize> {
        if self.nonempty.is_narrow() {
            self.pick_narrow(now, slab)
        } else {
            self.pick_wide(now, slab)
        }
    }

    #[inline(never)]
    fn pick_wide(&mut self, now: Time, slab: &Slab) -> Option<usize> {
        let mut elig = std::mem::take(&mut self.cold.elig);
        elig.assign_and(&self.nonempty, &self.nonempty);
        if self.markers > 0 {
            elig.remove_all(&self.cold.held);
        }
        // drop closed queues (a priority paused by PFC, or the queue's own gate)
        let mut bits = elig.first();
        while let Some(q) = bits {
            bits = elig.next_from(q + 1);
            if self.queue_closed(q, now) {
                elig.clear(q);
            }
        }
        let queues = &self.queues;
        let r = self.cold.sched.pick(&elig, &self.nonempty, |q| slab.get(queues[q][0]).size, |q| slab.rank(queues[q][0]));
        self.cold.elig = elig;
        r
    }

    /// `pick_data` on a port of at most 64 queues: the sets are single words, so the eligible set
    /// is computed in registers and a lone eligible queue is served without the scheduler (the
    /// common case: one busy queue per port).
    #[inline]
    fn pick_narrow(&mut self, now: Time, slab: &Slab) -> Option<usize> {
        let mut m = self.nonempty.w0();
        if self.markers > 0 {
            m &= !self.cold.held.w0();
        }
        let mut bits = m;
        if self.pause_end <= now {
            // no priority paused: nothing to drop (the common case reads no more)
        } else if self.prio_mod8 {
            while bits != 0 {
                let q = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.cold.prio_until[q & (NPRIO - 1)] > now {
                    m &= !(1 << q);
                }
            }
        } else {
            while bits != 0 {
                let q = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.cold.prio_until[self.cold.prio_of[q] as usize & (NPRIO - 1)] > now {
                    m &= !(1 << q);
                }
            }
        }
        let mut bits = m & self.gated.w0();
        while bits != 0 {
            let q = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if self.cold.gate[q].until > now {
                m &= !(1 << q);
            }
        }
        if m & m.wrapping_sub(1) == 0 {
            // none, or one queue: served directly (DRR would give it every turn anyway)
            return (m != 0).then(|| m.trailing_zeros() as usize);
        }
        self.pick_among(m, slab)
    }

    #[inline(never)]
    fn pick_among(&mut self, m: u64, slab: &Slab) -> Option<usize> {
        let cold = &mut *self.cold;
        cold.elig.set_w0(m);
        let queues = &self.queues;
        cold.sched.pick(&cold.elig, &self.nonempty, |q| slab.get(queues[q][0]).size, |q| slab.rank(queues[q][0]))
    }

    /// Earliest time a closed, non-empty data queue reopens by itself (to wake the port then).
    pub fn next_unpause(&self, now: Time) -> Option<Time> {
        let mut t: Option<Time> = None;
        for q in self.nonempty.iter() {
            if self.cold.held.has(q) || !self.queue_closed(q, now) {
                continue;
            }
            let p = &self.cold.prio_pause[self.cold.prio_of[q] as usize];
            let mut u = if p.closed(now) { p.until } else { now };
            if self.gate_closed(q, now) {
                u = u.max(self.cold.gate[q].until);
            }
            if u != Time::MAX && t.is_none_or(|x| u < x) {
                t = Some(u);
            }
        }
        t
    }
}

impl Port {
    /// Empty the port's queues because its link went down (`crate::faults`): the control queue's
    /// packets (queue `None`), then each data queue's packets and markers in queue order. Byte
    /// counts go to zero; gates, pauses and the scheduler's state are left as they are (a DRR
    /// deficit left on an empty queue is reset when the scheduler next passes it).
    pub fn drain_all(&mut self) -> Vec<(Option<usize>, PacketId)> {
        let mut out: Vec<(Option<usize>, PacketId)> = self.ctrl.drain(..).map(|id| (None, id)).collect();
        for q in 0..self.queues.len() {
            out.extend(self.queues[q].drain(..).map(|id| (Some(q), id)));
            self.queues[q].bytes = 0;
            self.nonempty.clear(q);
            self.cold.held.clear(q);
        }
        self.total = 0;
        self.markers = 0;
        out
    }

    /// Lift every PFC pause and open every gate of the port at `now` (its link went down: the
    /// frames that closed them came from a neighbour that is gone), closing their accounting.
    pub fn open_all(&mut self, now: Time) {
        for prio in 0..NPRIO {
            if self.is_paused(prio, now) {
                self.apply_pause(prio, now, now);
            }
        }
        for q in 0..self.ngates() {
            if self.gate_closed(q, now) {
                self.set_gate(q, now, now);
            }
        }
    }
}

/// The queue-to-priority map of a port with `n` data queues when the scenario gives none:
/// queue q carries priority q mod 8 (one queue per priority on an 8-queue port, as on ASICs).
pub fn default_prio_map(n: usize) -> Vec<u8> {
    (0..n).map(|q| (q % NPRIO) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::time::Rate;

    #[test]
    fn hot_fields_keep_their_cache_lines() {
        use std::mem::offset_of;
        assert_eq!(std::mem::align_of::<Port>(), 64);
        assert_eq!(std::mem::size_of::<Port>(), 5 * 64);
        // line 0: what every arrival, kick and service reads
        for off in [offset_of!(Port, owner), offset_of!(Port, local), offset_of!(Port, busy_until), offset_of!(Port, pending), offset_of!(Port, pause_end), offset_of!(Port, total)] {
            assert!(off < 64, "line 0 field at {off}");
        }
        assert_eq!(offset_of!(Port, wire), 64);
        assert!(offset_of!(Port, tx_bytes) < 128);
        assert_eq!(offset_of!(Port, queues), 128);
        assert!(offset_of!(Port, tx_data_bytes) < 192);
        assert_eq!(offset_of!(Port, nonempty), 192);
        assert_eq!(offset_of!(Port, ctrl), 256);
    }

    #[test]
    fn a_pause_summary_tracks_the_latest_priority_end() {
        let mut p = Port::new(0, 0, TxClock::new(Rate::gbps(100)), Time::from_us(1), 8, 1500);
        let t = Time::from_us;
        p.apply_pause(3, t(0), t(10));
        p.apply_pause(5, t(0), t(4));
        assert!(p.is_paused(3, t(5)) && !p.is_paused(5, t(5)) && !p.is_paused(2, t(1)));
        p.apply_pause(3, t(6), t(6)); // resume 3: 5 ended already, nothing is paused
        assert!(!p.any_prio_paused(t(6)) && !p.is_paused(3, t(6)));
        p.apply_pause(1, t(7), Time::MAX);
        assert!(p.is_paused(1, t(1_000_000)) && p.any_prio_paused(t(8)));
    }

    fn port(nq: usize) -> Port {
        Port::new(0, 0, TxClock::new(Rate::gbps(100)), Time::from_us(1), nq, 1500)
    }

    fn push(p: &mut Port, slab: &mut Slab, q: usize, flow: u32) {
        let id = slab.alloc(Packet { size: 1000, flow, ..Default::default() });
        p.enqueue_data(q, id, 1000);
    }

    fn drain(p: &mut Port, slab: &mut Slab, now: Time) -> Vec<(usize, u32)> {
        let mut out = vec![];
        while let Some(q) = p.pick_data(now, slab) {
            let id = p.dequeue_data(q, 1000);
            if p.has_markers() {
                p.settle(q, slab);
            }
            out.push((q, slab.get(id).flow));
            slab.free(id);
        }
        out
    }

    #[test]
    fn drr_alternates_and_skips_paused() {
        let mut slab = Slab::default();
        let mut p = port(4);
        for q in [1usize, 1, 2, 2] {
            push(&mut p, &mut slab, q, 0);
        }
        let order: Vec<usize> = drain(&mut p, &mut slab, Time(0)).into_iter().map(|x| x.0).collect();
        // quantum 1500 with 1000 B packets: one packet per visit, alternating
        assert_eq!(order, vec![1, 2, 1, 2]);

        push(&mut p, &mut slab, 3, 0);
        p.apply_pause(3, Time(0), Time(100));
        assert_eq!(p.pick_data(Time(50), &slab), None);
        assert_eq!(p.next_unpause(Time(50)), Some(Time(100)));
        assert_eq!(p.pick_data(Time(100), &slab), Some(3));
    }

    #[test]
    fn paused_time_is_exact() {
        let mut p = port(1);
        p.apply_pause(3, Time(10), Time(110)); // pause 100
        p.apply_pause(3, Time(60), Time(60)); // resumed after 50
        assert_eq!(p.paused_time(3, Time(1000)), Time(50));
        p.apply_pause(3, Time(200), Time(300)); // lapses by itself
        assert_eq!(p.paused_time(3, Time(1000)), Time(150));
        assert_eq!(p.paused_time(3, Time(250)), Time(100));
    }

    #[test]
    fn a_port_with_1024_queues_enqueues_gates_and_serves_every_queue() {
        let mut slab = Slab::default();
        let n = MAX_QUEUES;
        let mut p = Port::with(0, 0, TxClock::new(Rate::gbps(100)), Time::ZERO, n, n, 1500, &vec![3; n], &SchedulerConfig::Drr);
        for q in 0..n {
            push(&mut p, &mut slab, q, q as u32);
        }
        assert_eq!(p.active_queues(), n);
        // close every odd queue until opened, and queue 1000 until t = 500
        for q in (1..n).step_by(2) {
            p.set_gate(q, Time(0), Time::MAX);
        }
        p.set_gate(1000, Time(0), Time(500));
        let first = drain(&mut p, &mut slab, Time(10));
        assert_eq!(first.len(), n / 2 - 1);
        assert!(first.iter().all(|&(q, f)| q % 2 == 0 && q != 1000 && f == q as u32));
        assert_eq!(p.next_unpause(Time(10)), Some(Time(500)), "gates closed until opened wake nobody");
        for q in (1..n).step_by(2) {
            p.set_gate(q, Time(20), Time(20));
        }
        let second = drain(&mut p, &mut slab, Time(20));
        assert_eq!(second.len(), n / 2);
        assert!(second.iter().all(|&(q, _)| q % 2 == 1));
        assert_eq!(drain(&mut p, &mut slab, Time(500)), vec![(1000, 1000)]);
        assert_eq!(p.gate_closed_time(1, Time(1000)), Time(20));
        assert_eq!(p.gate_closed_time(1000, Time(1000)), Time(500));
        assert!(!p.has_backlog());
    }

    #[test]
    fn a_pfc_pause_closes_every_queue_of_its_priority_only() {
        let mut slab = Slab::default();
        let prio = [0u8, 3, 3, 5];
        let mut p = Port::with(0, 0, TxClock::new(Rate::gbps(100)), Time::ZERO, 4, 4, 1500, &prio, &SchedulerConfig::Drr);
        for q in 0..4 {
            push(&mut p, &mut slab, q, q as u32);
        }
        p.apply_pause(3, Time(0), Time(1000));
        let sent: Vec<usize> = drain(&mut p, &mut slab, Time(1)).into_iter().map(|x| x.0).collect();
        assert_eq!(sent.len(), 2);
        assert!(sent.contains(&0) && sent.contains(&3));
        assert_eq!(p.next_unpause(Time(1)), Some(Time(1000)));
    }

    #[test]
    fn a_hold_marker_holds_its_queue_until_its_twin_leaves_the_other_queue() {
        let mut slab = Slab::default();
        let mut p = port(2);
        // flow 7 has two packets in queue 0, then moves to queue 1 (order marks between)
        push(&mut p, &mut slab, 0, 7);
        push(&mut p, &mut slab, 0, 7);
        p.insert_markers(1, 0, &mut slab);
        push(&mut p, &mut slab, 1, 70);
        push(&mut p, &mut slab, 0, 8);
        // queue 0 is gated: nothing of queue 1 may pass the hold marker meanwhile
        p.set_gate(0, Time(0), Time::MAX);
        assert_eq!(p.pick_data(Time(1), &slab), None);
        assert_eq!(p.next_unpause(Time(1)), None);
        p.set_gate(0, Time(2), Time(2));
        let order: Vec<u32> = drain(&mut p, &mut slab, Time(3)).into_iter().map(|x| x.1).collect();
        // flow 7's old packets leave before its packet in the new queue
        let pos = |f| order.iter().position(|&x| x == f).unwrap();
        assert!(pos(70) > 1, "{order:?}");
        assert_eq!(order.iter().filter(|&&x| x == 7).count(), 2);
        assert_eq!((p.cold.markers_inserted, p.cold.markers_matched), (1, 1));
        assert!(!p.has_backlog());
        assert_eq!(slab.live(), 0, "markers are freed");
    }
}
