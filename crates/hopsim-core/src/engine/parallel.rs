//! Partitions on threads: each runs its windows, hands its messages over, reports, and every
//! thread takes the same decisions from the same reports (see the module docs of `engine`).
//!
//! Two barriers a window: after the window's messages are posted (then each takes in its own),
//! and after the reports are posted (then each decides). Mailboxes are one per (receiver,
//! sender) pair, taken in sender order, so a partition's slab ids do not depend on which thread
//! posted first.

use crate::engine::release::Post;
use crate::engine::window::Report;
use crate::engine::{window_end, window_width, Batch, Part, Plan};
use crate::progress::CHECK_EVERY;
use crate::sim::Simulation;
use crate::stats::{FlowTable, RunStats, StopInfo, StopReason};
use crate::time::Time;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};

/// How a run ended, as every thread decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Done,
    Drained,
    Duration,
    /// No data delivered for this long with flows unfinished (`watchdog`).
    Stalled(Time),
    Interrupted,
}

/// A barrier that spins briefly, then yields: windows are short, and a thread that sleeps in the
/// kernel at every one would cost more than the window's work on a small network.
struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(n: usize) -> SpinBarrier {
        SpinBarrier { n, count: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    fn wait(&self) {
        self.wait_polling(&mut || {});
    }

    /// `wait`, calling `poll` now and then while it waits past its spins. Why: the thread that
    /// holds the outside watch (Ctrl-C, a stop flag) must look at it while the others work, or a
    /// run waits for the slowest partition's window to end before it hears a stop.
    fn wait_polling(&self, poll: &mut dyn FnMut()) {
        let gen = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            if spins < 200 {
                std::hint::spin_loop();
            } else {
                if spins % 64 == 0 {
                    poll();
                }
                std::thread::yield_now();
            }
            spins = spins.wrapping_add(1);
        }
    }
}

struct Shared {
    barrier: SpinBarrier,
    /// `mail[to][from]`.
    mail: Vec<Vec<Mutex<Batch>>>,
    reports: Vec<Mutex<Report>>,
    /// Each partition's posts about flows to free (`release`), beside its report: written before
    /// the report barrier, read by every partition after it, side by side.
    posts: Vec<RwLock<Vec<Post>>>,
    /// Rows of time-growing tables, over every partition, at which the sink takes them
    /// (`usize::MAX`: no sink).
    chunk_rows: usize,
    /// Each partition's time-growing tables, handed to partition 0 for the sink.
    growing: Vec<Mutex<RunStats>>,
}

/// Run `sims` side by side, one thread each (the first on the calling thread, which holds the
/// outside watch), until every thread has decided the same end; then finish each. With one
/// simulation this is the one-thread run: no partition, no messages, and the watch's sink takes
/// the time-growing tables as they fill. With several (one per partition of `plan`, each
/// assembled from the same scenario), `merge` then builds the tables.
pub(crate) fn run_parts(sims: &mut [Simulation], plan: Option<&Plan>) -> StopInfo {
    let n = sims.len();
    let abort: std::sync::Arc<std::sync::atomic::AtomicBool> = Default::default();
    // every partition reads the outside stop flag itself, mid-window too (the hook stays with
    // partition 0, on the calling thread)
    let flag = sims[0].watch.stop.clone();
    for s in sims.iter_mut().skip(1) {
        s.watch.stop = flag.clone();
    }
    // (with a sink, a split run's freed flows' rows leave as one thread's do: `release`)
    let sink = sims[0].watch.sink.is_some();
    for (k, s) in sims.iter_mut().enumerate() {
        match plan {
            Some(plan) => {
                let mut part = Part::new(s, plan, k as u16);
                part.abort = abort.clone();
                for port in s.ports.iter_mut().filter(|x| !part.owns(x.node)) {
                    port.shed();
                }
                s.part = Some(Box::new(part));
                // a flow's halves live in two partitions, freed by a decision every partition
                // takes alike (`release`); the tables take each half's results from where it
                // ran (`merge`)
                s.flows.begin(sink);
            }
            None => {
                let sink = s.watch.sink.is_some();
                s.flows.begin(sink);
            }
        }
        s.start_watchdog();
    }
    sims[0].watch.begin();
    let stop = sims[0].cfg.stop_time.unwrap_or(Time::MAX);
    let w = window_width(&sims[0]);
    let shared = Shared {
        barrier: SpinBarrier::new(n),
        mail: (0..n).map(|_| (0..n).map(|_| Mutex::new(Batch::default())).collect()).collect(),
        reports: (0..n).map(|_| Mutex::new(Report::default())).collect(),
        posts: (0..n).map(|_| RwLock::new(vec![])).collect(),
        chunk_rows: if n > 1 { sims[0].watch.chunk_rows() } else { usize::MAX },
        growing: (0..n).map(|_| Mutex::new(RunStats::default())).collect(),
    };
    let mut ends: Vec<(End, Time)> = vec![];
    std::thread::scope(|scope| {
        let (first, rest) = sims.split_first_mut().expect("a partition");
        let sh = &shared;
        let handles: Vec<_> = rest.iter_mut().enumerate().map(|(k, s)| scope.spawn(move || worker(s, k + 1, sh, stop, w))).collect();
        ends.push(worker(first, 0, sh, stop, w));
        for h in handles {
            ends.push(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
    });
    let (end, now) = ends[0];
    debug_assert!(ends.iter().all(|&e| e == (end, now)), "every partition decides the same end");
    for s in sims.iter_mut() {
        s.now = now;
    }
    let refs: Vec<&Simulation> = sims.iter().collect();
    let info = stop_info(&refs, end);
    if let (Some(plan), true) = (plan, sink) {
        end_rows_to_sink(sims, plan);
    }
    for s in sims.iter_mut() {
        if plan.is_some() {
            // a split run's tables are whole only once merged: no partition hands rows out
            s.watch.sink = None;
        }
        // (the last window's log rows in order before `finish` may hand them to the sink)
        s.stats.order_logs(&mut s.ordered);
        s.finish_recorders(info.reason);
        s.finish();
    }
    info
}

/// One partition's thread: decide, run a window, exchange messages, report; until the end.
fn worker(sim: &mut Simulation, k: usize, sh: &Shared, stop: Time, w: Time) -> (End, Time) {
    let n = sh.reports.len();
    let mut ran = false;
    let mut checked = 0u64;
    let mut windows = 0u32;
    let mut asked_stop = false;
    // the run's totals at the last window's end, for a progress line shown while waiting
    let mut seen = (0u64, 0u64, Time::ZERO);
    loop {
        let mut r = sim.report();
        // a split run: every partition reads the outside stop flag at every window's end
        asked_stop |= sim.aborted || (n > 1 && sim.watch.stop_requested());
        r.stop = asked_stop;
        *sh.reports[k].lock().expect("report") = r;
        if n > 1 {
            *sh.posts[k].write().expect("posts") = sim.release_posts();
        }
        if k == 0 && n > 1 {
            sh.barrier.wait_polling(&mut || poll_watch(sim, seen));
        } else {
            sh.barrier.wait();
        }
        let all: Vec<Report> = sh.reports.iter().map(|m| *m.lock().expect("report")).collect();
        if n > 1 {
            let posts: Vec<_> = sh.posts.iter().map(|m| m.read().expect("posts")).collect();
            sim.apply_release_posts(&posts.iter().map(|p| p.as_slice()).collect::<Vec<_>>());
        }
        let done: usize = all.iter().map(|r| r.flows_done).sum();
        let last = all.iter().map(|r| r.last).max().unwrap_or(Time::ZERO);
        if !ran && all.iter().any(|r| r.stop) {
            return (End::Interrupted, last);
        }
        if ran {
            if done == sim.flows.len() {
                return (End::Done, last);
            }
            let delivered = all.iter().map(|r| r.delivered).sum();
            sim.now = last;
            if let Some(idle) = sim.watchdog_check(delivered, sim.next_flow > done) {
                return (End::Stalled(idle), last);
            }
            if all.iter().any(|r| r.stop) {
                return (End::Interrupted, last);
            }
            if k == 0 && n == 1 {
                // one thread: the sink takes the time-growing tables as they fill, whole
                // instants at a time (a window holds every event of its instants)
                sim.stats.order_logs(&mut sim.ordered);
                let go_on = sim.watch.spill(&mut sim.stats);
                sim.ordered = crate::stats::order::Ordered::all_of(&sim.stats);
                if !go_on {
                    return (End::Interrupted, last);
                }
            }
            if n > 1 && all.iter().map(|r| r.rows).sum::<usize>() >= sh.chunk_rows && !spill_across(sim, k, sh) {
                asked_stop = true;
            }
            windows += 1;
            if k == 0 && (sim.sched.popped - checked >= CHECK_EVERY || n > 1 && windows >= WATCH_WINDOWS) {
                // the outside watch, out of line: its stop flag, and its progress hook when due
                // (partition 0 runs on the calling thread, where the hook may look at signals);
                // every so many events or windows, whichever comes first, so that a partition
                // with little to do still looks
                checked = sim.sched.popped;
                windows = 0;
                seen = (all.iter().map(|r| r.popped).sum(), done as u64, last);
                asked_stop = asked_stop || sim.watch_says_stop(|s| {
                    let mut p = s.progress();
                    p.events = all.iter().map(|r| r.popped).sum();
                    p.flows_done = done as u64;
                    p.now = last;
                    p
                });
                if asked_stop && n == 1 {
                    return (End::Interrupted, last);
                }
            }
        }
        let Some(t0) = all.iter().filter_map(|r| r.next).min() else {
            return (if done == sim.flows.len() { End::Done } else { End::Drained }, last);
        };
        if t0 > stop {
            return (End::Duration, stop);
        }
        sim.network_idle = all.iter().map(|r| r.packets_alive).sum::<usize>() == 0 && done == sim.next_flow;
        if done == sim.next_flow {
            // nothing waits to finish: a stall can only begin in this window
            sim.watchdog_idle_until(t0);
        }
        sim.run_window(window_end(t0, w, stop));
        ran = true;
        if sim.aborted {
            // stopped from outside inside the window (`Simulation::stop_mid_window`)
            asked_stop = true;
            if n == 1 {
                return (End::Interrupted, sim.now);
            }
        }
        if let Some(part) = sim.part.as_deref_mut() {
            for (to, out) in part.out.iter_mut().enumerate() {
                if !out.is_empty() {
                    sh.mail[to][k].lock().expect("mail").append(out);
                }
            }
        }
        if n > 1 {
            if k == 0 {
                sh.barrier.wait_polling(&mut || poll_watch(sim, seen));
            } else {
                sh.barrier.wait();
            }
            for from in 0..n {
                let msgs = std::mem::take(&mut *sh.mail[k][from].lock().expect("mail"));
                for (m, int) in msgs.iter() {
                    sim.take_in(m, int);
                }
            }
        }
    }
}

/// A split run with a sink, at its end: the flows table's rows of the flows not freed (live,
/// never started, never arrived), a chunk at a time, each merged from its halves as one thread
/// writes it, to the sink. Why: a run cut short can leave most of its flows unstarted, and every
/// partition writing all their rows at once held the flows table once per partition.
fn end_rows_to_sink(sims: &mut [Simulation], plan: &Plan) {
    let max = sims[0].watch.chunk_rows();
    for s in sims.iter_mut() {
        let unarrived = s.an_unarrived_flow();
        let part = s.part.as_deref_mut().expect("a split run");
        part.unarrived = unarrived;
        part.end_rows_written = true;
    }
    let owner = |node: u32| plan.of[node as usize] as usize;
    let mut finished = 0;
    // every partition freed the same flows, so each writes the same rows (its halves)
    let mut next = Some(0);
    while let Some(from) = next {
        let mut halves = Vec::with_capacity(sims.len());
        for s in sims.iter_mut() {
            let mut t = FlowTable::default();
            next = s.flows.write_rows(&mut t, from, max);
            halves.push(t);
        }
        let mut rows = crate::engine::merge::merge_flows(&halves, &owner);
        crate::engine::merge::add_foreign_drops(&mut rows, sims);
        finished += rows.finish_ps.iter().filter(|&&t| t != u64::MAX).count() as u64;
        hand_rows(&mut sims[0], rows);
    }
    // flows that never arrived never started anywhere: partition 0's rows are every partition's
    let s0 = &mut sims[0];
    while s0.lazy.is_some() {
        let more = s0.write_unarrived_rows(max);
        let rows = std::mem::take(&mut s0.stats.flows);
        hand_rows(s0, rows);
        if !more {
            break;
        }
    }
    s0.part.as_deref_mut().expect("a split run").releases.finished_rows += finished;
}

/// Rows of the flows table to the sink (partition 0's watch), with the module metrics' names
/// as numbered so far.
fn hand_rows(s0: &mut Simulation, rows: FlowTable) {
    let names = s0.part.as_deref().map(|p| p.metric_names.clone()).unwrap_or_default();
    let mut chunk = RunStats { flows: rows, module_metrics: names, ..Default::default() };
    s0.watch.spill_now(&mut chunk);
}

/// Windows between looks at the outside watch at most, on a split run (`worker`).
const WATCH_WINDOWS: u32 = 64;

/// Partition 0, waiting for the others: ask the outside watch (its progress line shows the
/// totals `seen` at the last window's end) and, when it says stop, tell the others mid-window.
fn poll_watch(sim: &mut Simulation, seen: (u64, u64, Time)) {
    if sim.aborted || !(sim.watch.stop_requested() || sim.watch.due()) {
        return;
    }
    let stop = sim.watch_says_stop(|s| {
        let mut p = s.progress();
        (p.events, p.flows_done, p.now) = seen;
        p
    });
    if stop {
        sim.aborted = true;
        if let Some(part) = sim.part.as_deref() {
            part.abort.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A split run's sink is due (every partition decided so from the same reports, at a window's
/// end, so every row before it is written): each partition hands over its time-growing tables
/// and partition 0 gives them, merged as one thread writes them, to the sink. Why: a long run
/// on many threads holds no more of its samples and logs than one thread does. False: the sink
/// asked to stop (partition 0).
fn spill_across(sim: &mut Simulation, k: usize, sh: &Shared) -> bool {
    sim.stats.order_logs(&mut sim.ordered);
    let mut growing = sim.stats.take_growing();
    growing.flows = std::mem::take(&mut sim.part.as_deref_mut().expect("a split run").releases.rows);
    *sh.growing[k].lock().expect("growing") = growing;
    sim.ordered = crate::stats::order::Ordered::all_of(&sim.stats);
    sh.barrier.wait();
    if k != 0 {
        return true;
    }
    let parts: Vec<RunStats> = sh.growing.iter().map(|m| std::mem::take(&mut *m.lock().expect("growing"))).collect();
    let mut names = std::mem::take(&mut sim.part.as_deref_mut().expect("a split run").metric_names);
    let mut chunk = crate::engine::merge::merge_growing(&parts, sim, &mut names);
    sim.part.as_deref_mut().expect("a split run").metric_names = names;
    sim.watch.spill_now(&mut chunk)
}

/// Why the run ended, in words, from every partition's state at the end.
pub(crate) fn stop_info(sims: &[&Simulation], end: End) -> StopInfo {
    let s0 = sims[0];
    let done: usize = sims.iter().map(|s| s.flows_done).sum();
    match end {
        End::Done => StopInfo::default(),
        End::Duration => StopInfo { reason: StopReason::Duration, ..Default::default() },
        End::Drained => {
            let left = s0.flows.len() - done;
            StopInfo {
                reason: StopReason::NoProgress,
                message: format!("no progress at {}: nothing left to happen with {left} flows unfinished", s0.now),
                cycle: vec![],
            }
        }
        End::Interrupted => {
            let events: u64 = sims.iter().map(|s| s.sched.popped).sum();
            StopInfo { reason: StopReason::Interrupted, message: format!("interrupted at {} after {} events", s0.now, events), cycle: vec![] }
        }
        End::Stalled(idle) => crate::watchdog::diagnose(sims, idle, s0.next_flow - done),
    }
}
