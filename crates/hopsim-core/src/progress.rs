//! Watching a run from outside it: a stop flag and a progress hook, both looked at from a
//! checkpoint in the event loop that comes every `CHECK_EVERY` events.
//!
//! Why a checkpoint and not a check per event: the loop pops tens of millions of events a second,
//! and a stop request or a progress line needs a reaction within a fraction of a second, not
//! within an event. Testing `events & (CHECK_EVERY - 1) == 0` on a counter the scheduler keeps
//! anyway costs one compare and a well-predicted branch per event; everything else (reading the
//! clock, the atomic flag, calling out) happens once per `CHECK_EVERY` events, out of line.
//!
//! Why a hook that may refuse to go on, besides the flag: the Python binding cannot set an
//! `AtomicBool` from a signal handler while the core holds the thread (Python runs its handlers
//! only between bytecodes of the main thread), so it polls the interpreter's pending signals from
//! the hook and answers "stop". The flag is for callers that stop a run from another thread.
//!
//! None of this touches the simulation's state: a watched run gives the same results as an
//! unwatched one, and where it stops depends only on the event count (not on wall time) for the
//! watchdog (`watchdog.rs`); only an outside stop depends on when it is asked for.

use crate::time::Time;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Events between checkpoints: a power of two. 2^14 events take about a millisecond at the
/// standard benchmark's speed, and still well under a second in runs whose events are heavy
/// (buffer samples of a thousand-port network).
pub const CHECK_EVERY: u64 = 1 << 14;

/// Where a run stands, as a hook sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    /// Simulated time now.
    pub now: Time,
    /// The stop time (`duration`), if the run has one.
    pub end: Option<Time>,
    /// Time of the last flow's start: with no stop time, the run ends some time after it.
    pub last_start: Time,
    pub events: u64,
    pub flows: u64,
    pub flows_started: u64,
    pub flows_done: u64,
    /// Wall time since the run started.
    pub wall: Duration,
}

/// Called with the run's progress at most every `Watch::every` of wall time; returns whether the
/// run may go on.
pub type Hook = Box<dyn FnMut(&Progress) -> bool + Send>;

/// Takes the rows of the tables that grow with simulated time (`RunStats::spill_rows`: buffer
/// and queue samples, the packet trace) and of the flows table (rows of flows as they are freed,
/// `net::flow_store`) while the run goes on; the core empties them after the call. Why: a run's
/// memory should be bounded by the network, its packets in flight and the chunk size, not by how
/// long it runs (the standard benchmark's 10 us buffer samples alone are 1.3 million rows) nor
/// by how many flows it has. Returns whether the run may go on.
pub type Sink = Box<dyn FnMut(&crate::stats::RunStats) -> bool + Send>;

/// What watches a run: an optional stop flag, an optional hook, an optional sink.
pub struct Watch {
    pub stop: Option<Arc<AtomicBool>>,
    pub hook: Option<Hook>,
    pub sink: Option<Sink>,
    /// Rows at which the sink is called (checked after each sample and at each checkpoint).
    pub spill_rows: usize,
    /// The sink asked to stop (seen at the next checkpoint, like the flag).
    refused: bool,
    /// Least wall time between two calls of the hook.
    pub every: Duration,
    started: Option<Instant>,
    last: Option<Instant>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch { stop: None, hook: None, sink: None, spill_rows: 1 << 16, refused: false, every: Duration::from_millis(100), started: None, last: None }
    }
}

impl Watch {
    /// A watch with a stop flag and no hook.
    pub fn with_flag(stop: Arc<AtomicBool>) -> Watch {
        Watch { stop: Some(stop), ..Default::default() }
    }

    /// A watch that calls `hook` at most every `every`.
    pub fn with_hook(hook: Hook, every: Duration) -> Watch {
        Watch { hook: Some(hook), every, ..Default::default() }
    }

    /// A watch that hands the spilled tables to `sink` every `rows` rows.
    pub fn with_sink(sink: Sink, rows: usize) -> Watch {
        Watch { sink: Some(sink), spill_rows: rows.max(1), ..Default::default() }
    }

    pub(crate) fn begin(&mut self) {
        self.started = Some(Instant::now());
        self.last = None;
    }

    pub(crate) fn wall(&self) -> Duration {
        self.started.map_or(Duration::ZERO, |t| t.elapsed())
    }

    /// Whether a hook wants to be called now (enough wall time since the last call).
    pub(crate) fn due(&self) -> bool {
        self.hook.is_some() && self.last.is_none_or(|t| t.elapsed() >= self.every)
    }

    /// Whether the stop flag is set.
    pub(crate) fn stop_requested(&self) -> bool {
        self.refused || self.stop.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Hand the time-growing tables to the sink when they hold `spill_rows` rows or more (then
    /// empty them); false: the sink asked to stop.
    pub(crate) fn spill(&mut self, stats: &mut crate::stats::RunStats) -> bool {
        if stats.spill_rows() < self.spill_rows {
            return true;
        }
        self.spill_now(stats)
    }

    /// Hand the time-growing tables to the sink, if there is one, and empty them; false: the
    /// sink asked to stop.
    pub(crate) fn spill_now(&mut self, stats: &mut crate::stats::RunStats) -> bool {
        let Some(sink) = self.sink.as_mut() else { return true };
        let go_on = sink(stats);
        stats.clear_spilled();
        self.refused |= !go_on;
        go_on
    }

    /// Rows a table may gather before the sink takes them (no limit without a sink).
    pub(crate) fn chunk_rows(&self) -> usize {
        if self.sink.is_some() {
            self.spill_rows
        } else {
            usize::MAX
        }
    }

    /// Call the hook (when `due`); false: the hook asked to stop.
    pub(crate) fn report(&mut self, p: &Progress) -> bool {
        self.last = Some(Instant::now());
        match self.hook.as_mut() {
            Some(h) => h(p),
            None => true,
        }
    }
}
