//! The engine: runs a `Simulation` in windows of simulated time, on one thread or split into
//! partitions (logical processes) that run side by side, with tables identical either way.
//!
//! # Where it sits
//! In the engine layer (`crate`'s module doc has the table), the top but one: under it the
//! settings (`config`), the sinks it writes results into (`stats`, `progress`), the models it
//! calls (`aqm`, `cc`, `fc`, each told `now`), the inputs (`topo`, `workload`, `params`), the
//! queues packets wait in (`queues`) and the base (`packet`, `ids`, `time`). Over it only
//! the front (`scenario`, which runs it). Within the layer it is one type: `Simulation` (`sim`)
//! owns the state, `net` moves packets through it, and this module cuts its time into windows.
//!
//! # Windows
//! Simulated time is cut into windows on a fixed grid of width `W` (`partition::window_width`):
//! the shortest delay of any link a partitioning may cut, at most 1 us; no plan cuts a link
//! shorter than 100 ns (`partition::MIN_CUT_DELAY`), so no window is narrower. A window starts at the
//! grid line at or before the earliest pending event anywhere (empty stretches are skipped) and
//! ends at the next grid line. Inside a window each partition handles its own events with no
//! look at the others: whatever one partition sends another crosses a cut link, takes at least
//! `W` to arrive, and so lands in a later window (conservative lookahead).
//!
//! # Messages
//! A packet or control frame put on a cut wire leaves its partition's slab as a message (the
//! packet and what it carries beside the slab, `packet::Carried`, its INT records apart in the
//! message's `Batch`) with its arrival time. At the window's end every partition hands its
//! messages over; the receiver puts each on the wire's ring at its side in send order and
//! schedules the wire's arrival event as a one-thread run would have. A wire's far end is thus
//! where its ring lives: the sender owns the port, the receiver owns the ring.
//!
//! # The tie-break
//! Events of the same time pop in the order of their key (`event::order_key`): kind, then the
//! entity (port, flow, switch), then that entity's generation, never the order they were pushed.
//! Two events of one instant in different partitions cannot affect each other (nothing crosses a
//! cut link in zero time), and within a partition the key orders them as it does in one thread:
//! so every partition handles its events in the order the one-thread run does, and each event
//! sees the same state.
//!
//! # What is global
//! The end of the run, the watchdog, the sampler's idle rule and the outside watch (stop flag,
//! progress) are decided at window ends from every partition's report, the same way on one
//! thread (every partition reads the stop flag, mid-window too, and partition 0 asks the
//! progress hook, which may look at signals, while it waits for the others): a run ends at the end of the window in which its last flow finished, or in which
//! the stop time falls. A flow's sender half (NIC queue, timers, congestion control) runs where
//! its source is, its receiver half where its destination is; every partition keeps the flow's
//! fixed data, and only those two its state, which they free together once no packet of the flow
//! is left anywhere (`release`: a decision every partition takes alike from the counts each
//! posts at a window's end). At the end, `merge` builds each table from the partitions as one thread writes it;
//! the tables that grow with simulated time (samples, logs) leave before, at a window's end,
//! whenever the partitions together hold the sink's chunk of them (`parallel::spill_across`).
//!
//! # A worked example
//! A 2-pod fat-tree on two threads, link delay 1 us, so `W` = 1 us. Pod 0 with two cores is
//! partition 0, pod 1 with the other two cores partition 1. A host in pod 0 starts a flow to a
//! host in pod 1 at 0. In window [0, 1 us) partition 0 serialises the first packet at the host,
//! partition 1 has nothing to do. The packet reaches the ToR at 1.08 us (window [1, 2 us)), its
//! aggregation switch at 2.16 us, a core in partition 0 at 3.24 us; the core's port to pod 1's
//! aggregation switch sends it at 3.24 us to arrive at 4.32 us: it leaves as a message at the end
//! of window [3, 4 us), and partition 1 puts it on that wire's ring and schedules its arrival at
//! 4.32 us, in window [4, 5 us). Had a PFC pause of pod 1's switch and the packet's arrival both
//! been due at 4.32 us, each partition orders them by key, as one thread would.
//!
//! # What runs on one thread
//! A feature whose state is global by nature runs the whole network in one partition whatever the
//! threads asked (`single_reason` names it): Pulser's Ideal (its oracle books every packet's path)
//! only. The TCP transport splits: the sender's timer (RTO, congestion control) runs where the
//! source is, the receiver's delayed ACK on a timer of its own where the destination is
//! (`net::tcp`), and ICTCP's receiver computes its window from what it receives and measures its
//! RTT by timestamps (`net::timestamps`), telling the sender only in ACKs. Links going down or up
//! split: every partition applies each event at its time and computes the routes again from the
//! topology it holds whole; the partitions that own the link's ends empty its queues and tell their
//! modules; its wire's packets in flight are dropped where they arrive, those already on the far
//! side's ring by count and those still messages marked by the sender (`Msg::doomed`). Random loss
//! on links splits: a wire's losses are drawn where its far end is, from the sending port's own
//! stream, in the order its packets arrive. Per-packet latency histograms split: each partition
//! counts the packets its hosts receive and its switches queue, and `merge` adds the bucket counts
//! before taking percentiles.

pub mod merge;
pub mod parallel;
pub mod partition;
pub mod release;
pub mod window;

pub use partition::{window_width, Plan};

use crate::packet::int::IntStack;
use crate::packet::Carried;
use crate::time::Time;

/// A packet that crosses a cut link: it reaches the far end of port `port`'s wire at `at`.
/// `doomed`: the link went down while the packet was on its wire (set by the sending partition
/// before the window's messages leave, `faults.rs`), so it is dropped where it arrives. `int`:
/// its INT records are the next of its batch's `ints`.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    pub at: Time,
    pub port: u32,
    pub carried: Carried,
    pub doomed: bool,
    pub int: bool,
}

/// The messages one partition hands another at a window's end, in send order, and the INT
/// records of those that carry them, in the same order. Why apart: inside each message the
/// records (272 bytes, in a run that stamps none too) made every message 384 bytes, and moving
/// them from window to mailbox to slab cost a two-thread run of the standard benchmark about a
/// tenth of its wall time.
#[derive(Debug, Default)]
pub struct Batch {
    pub msgs: Vec<Msg>,
    pub ints: Vec<IntStack>,
}

impl Batch {
    pub fn push(&mut self, at: Time, port: u32, carried: Carried, int: Option<IntStack>) {
        self.msgs.push(Msg { at, port, carried, doomed: false, int: int.is_some() });
        self.ints.extend(int);
    }

    /// `other`'s messages after this batch's, `other` left empty.
    pub fn append(&mut self, other: &mut Batch) {
        self.msgs.append(&mut other.msgs);
        self.ints.append(&mut other.ints);
    }

    pub fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    /// Each message with its INT records, in send order.
    pub fn iter(&self) -> impl Iterator<Item = (&Msg, Option<&IntStack>)> {
        let mut ints = self.ints.iter();
        self.msgs.iter().map(move |m| (m, if m.int { ints.next() } else { None }))
    }
}

/// What a partition knows of the split it is part of.
pub(crate) struct Part {
    pub me: u16,
    /// By port: its wire leads into another partition.
    pub cut: Vec<bool>,
    /// By node: the partition that owns it.
    pub dest: Vec<u16>,
    /// Messages to each partition from the window being run.
    pub out: Vec<Batch>,
    /// (time, flow, bytes its receiver holds) at each congestion-window sample of a chosen flow
    /// whose destination this partition owns (`sim::sample`; the sender's partition writes
    /// the row, `merge` puts these bytes in it).
    pub delivered: Vec<(u64, u32, u64)>,
    /// Set by partition 0 when the outside watch asks to stop mid-window (`window`).
    pub abort: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The module metrics' names as the run's tables number them, so far (partition 0, which
    /// hands the merged time-growing tables to the sink: `merge::merge_growing`).
    pub metric_names: Vec<String>,
    /// Payload bytes dropped here of flows neither of whose ends this partition owns (it holds
    /// no state of them: `Simulation::start_flow`), by flow; `merge` adds them to the flows table.
    pub dropped: std::collections::HashMap<u32, u64>,
    /// Posts and decisions that free flows' halves (`release`).
    pub releases: release::Releases,
    /// The flows table's rows left at the end went to the sink already, a chunk at a time
    /// (`parallel::end_rows_to_sink`), and `unarrived` is what `finish` needs of a flow that
    /// never arrived, found before those rows used them up.
    pub end_rows_written: bool,
    pub unarrived: Option<crate::net::flow_store::FlowFixed>,
}

impl Part {
    pub(crate) fn new(sim: &crate::Simulation, plan: &Plan, me: u16) -> Part {
        let cut = (0..sim.ports.len() as u32).map(|p| plan.port_part(sim, p) == me && plan.port_part(sim, p ^ 1) != me).collect();
        Part { me, cut, dest: plan.of.clone(), out: (0..plan.parts).map(|_| Batch::default()).collect(), delivered: vec![], abort: Default::default(),
               metric_names: vec![], dropped: Default::default(), releases: Default::default(),
               end_rows_written: false, unarrived: None }
    }

    /// Whether this partition owns node `n`.
    #[inline]
    pub fn owns(&self, n: u32) -> bool {
        self.dest[n as usize] == self.me
    }
}

/// Why a scenario must run in one partition, if it must (see the module docs).
pub fn single_reason(sim: &crate::Simulation) -> Option<&'static str> {
    single_reason_of(&sim.cfg)
}

/// `single_reason` read from the settings alone (the net's faults with a topology file's loss
/// rates in `faults.file_loss`).
pub fn single_reason_of(cfg: &crate::config::NetConfig) -> Option<&'static str> {
    if cfg.cc.oracle() {
        return Some("Pulser's Ideal books every packet's path in one oracle");
    }
    None
}

/// The partitions a run of the network `topo` with settings `net` on `threads` threads will
/// make (`run_threads`' automatic plan), without building it. Why: memory is held once a
/// partition made, not once a thread asked (`crate::footprint`).
pub fn parts_for(topo: &crate::topo::Topology, net: &crate::config::NetConfig, threads: usize) -> usize {
    if threads <= 1 || single_reason_of(net).is_some() {
        return 1;
    }
    Plan::of_graph(&partition::Graph::of_topology(topo), threads).parts as usize
}

/// The note of a run asked to split (`threads` > 1) that the plan kept on one thread because
/// its short links join the network whole.
fn short_note(plan: &Plan) -> Option<String> {
    (plan.parts <= 1 && plan.short_joins > 0)
        .then(|| format!("one thread: links shorter than {}ns are never cut (a shorter window costs more than it runs), and they join the whole network", partition::MIN_CUT_DELAY.0 / 1000))
}

/// The end of the window that starts with the grid line at or before `t`: the next grid line,
/// or just after the stop time.
#[inline]
pub(crate) fn window_end(t: Time, w: Time, stop: Time) -> Time {
    let w = w.0.max(1);
    let end = (t.0 / w).saturating_add(1).saturating_mul(w);
    Time(end.min(stop.0.saturating_add(1)))
}

/// How a run was split: the partitions it ran in, and why one where more were asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    pub threads: usize,
    /// Why the run used one thread though more were asked (a line for people), if it did.
    pub note: Option<String>,
}

/// Build a simulation with `make` once per partition and run them on `threads` threads (the
/// automatic plan, or `plan` given by hand: `plan[node]` is its partition), with tables equal
/// to a one-thread run's. `watch` goes to the first partition, on the calling thread.
pub fn run_threads(
    make: &(dyn Fn() -> Result<crate::Simulation, String> + Sync),
    threads: usize,
    plan: Option<Vec<u16>>,
    watch: crate::progress::Watch,
) -> Result<(crate::stats::RunStats, Split), String> {
    let mut first = make()?;
    let plan = match plan {
        Some(of) => Plan::explicit(&first, of)?,
        None => Plan::auto(&first, threads.max(1)),
    };
    let note = if threads <= 1 && plan.parts <= 1 {
        None
    } else if let Some(why) = single_reason(&first) {
        Some(format!("one thread: {why}"))
    } else {
        short_note(&plan)
    };
    first.set_watch(watch);
    if note.is_some() || plan.parts <= 1 {
        first.run();
        return Ok((std::mem::take(&mut first.stats), Split { threads: 1, note }));
    }
    // the other partitions' simulations, assembled side by side
    let rest: Vec<Result<crate::Simulation, String>> =
        std::thread::scope(|s| (1..plan.parts).map(|_| s.spawn(make)).collect::<Vec<_>>().into_iter().map(|h| h.join().expect("assembly")).collect());
    let mut sims = vec![first];
    for r in rest {
        sims.push(r?);
    }
    let info = parallel::run_parts(&mut sims, Some(&plan));
    let mut stats = merge::merge(&mut sims, &plan);
    stats.stop = info;
    Ok((stats, Split { threads: plan.parts as usize, note: None }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::int::IntHop;
    use crate::packet::Packet;

    /// A batch hands each message its own INT records, whichever of its messages carry some,
    /// after an append as before it.
    #[test]
    fn a_batch_keeps_each_messages_int_records_with_it() {
        let stack = |k: u64| {
            let mut s = IntStack::default();
            s.push(IntHop { ts: Time(k), tx_bytes: k, qlen: k, rate: crate::time::Rate::gbps(100) }, 5);
            s
        };
        let carried = |flow: u32| Carried { pkt: Packet { flow, ..Default::default() }, tags: Default::default(), ctrl: None };
        let mut a = Batch::default();
        let mut b = Batch::default();
        for flow in 0..40u32 {
            let int = (flow % 3 != 1).then(|| stack(flow as u64));
            if flow < 20 { &mut a } else { &mut b }.push(Time(flow as u64), flow, carried(flow), int);
        }
        a.append(&mut b);
        assert!(b.is_empty() && b.ints.is_empty());
        assert_eq!(a.iter().count(), 40);
        for (m, int) in a.iter() {
            let flow = m.carried.pkt.flow;
            assert_eq!(m.port, flow);
            match int {
                Some(s) => assert_eq!(s.hops()[0].qlen, flow as u64, "flow {flow}"),
                None => assert_eq!(flow % 3, 1, "flow {flow} lost its records"),
            }
        }
    }
}
