//! One partition's side of a window: its events before the window's end, the messages it hands
//! over and takes in, and what it reports. One thread runs the same steps with one partition.

use crate::engine::Msg;
use crate::packet::int::IntStack;
use crate::event::Event;
use crate::sim::Simulation;
use crate::time::Time;

/// What a partition tells the others at a window's end (`parallel`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Report {
    /// Its earliest pending event, after taking in the window's messages.
    pub next: Option<Time>,
    pub flows_done: usize,
    pub packets_alive: usize,
    pub delivered: u64,
    /// The time of the last event it handled.
    pub last: Time,
    /// Events it handled so far.
    pub popped: u64,
    /// The outside watch asked to stop (partition 0, which holds the watch).
    pub stop: bool,
    /// Rows its time-growing tables hold (`RunStats::spill_rows`).
    pub rows: usize,
}

impl Simulation {
    /// Handle every event before `end`.
    pub(crate) fn run_window(&mut self, end: Time) {
        while let Some((t, ev)) = self.sched.pop_before(end) {
            debug_assert!(t >= self.now);
            self.now = t;
            // a packet reaching the far end of a wire is the one touch that misses the cache
            // most: ask for the next event's packet while this event is handled, and for the
            // port line that event reads first (the receiving port's owner; the serving port's
            // state and queues). The ports are what outgrows the cache as the network grows:
            // on the 1,024-host fat-tree the port lines cut wall time by about 5%, on the
            // 320-host benchmark they change nothing measurable.
            match self.sched.next_hint() {
                Some(Event::Wire { port, pkt }) => {
                    self.slab.prefetch(pkt);
                    crate::queues::port::prefetch_line(&self.ports, port ^ 1, 0);
                }
                Some(Event::PortTx { port, .. }) => {
                    crate::queues::port::prefetch_line(&self.ports, port, 0);
                    crate::queues::port::prefetch_line(&self.ports, port, 2);
                }
                _ => {}
            }
            match ev {
                Event::PortTx { port, gen } => self.on_port_tx(port, gen),
                Event::Wire { port, .. } => self.on_wire(port),
                Event::FlowArrival => {
                    self.singles += 1;
                    self.on_flow_arrival()
                }
                Event::FlowTimer { flow, gen } => self.on_flow_timer(flow, gen),
                Event::AckTimer { flow, gen } => self.tcp_on_ack_timer(flow, gen),
                Event::FcTimer { sw, gen } => self.on_fc_timer(sw, gen),
                Event::Sample => {
                    self.singles += 1;
                    self.on_sample()
                }
                Event::Fault => {
                    self.singles += 1;
                    self.on_fault()
                }
            }
            if self.sched.popped & (crate::progress::CHECK_EVERY - 1) == 0 && self.stop_mid_window() {
                return;
            }
        }
    }

    /// Every `CHECK_EVERY` events inside a window: whether to stop now (a window may hold any
    /// number of events: a run that loops at one instant must still obey Ctrl-C). Every
    /// partition reads the outside stop flag; partition 0 (or the one thread) asks the hook too
    /// and tells the others through the shared flag, which every partition reads.
    #[cold]
    #[inline(never)]
    fn stop_mid_window(&mut self) -> bool {
        let me = self.part.as_deref().map_or(0, |p| p.me);
        if me != 0 {
            self.aborted |= self.watch.stop_requested();
        } else if !self.aborted {
            self.aborted = self.watch_says_stop(|s| s.progress());
            if let Some(part) = self.part.as_deref() {
                if self.aborted {
                    part.abort.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        if let Some(part) = self.part.as_deref() {
            self.aborted |= part.abort.load(std::sync::atomic::Ordering::Relaxed);
        }
        self.aborted
    }

    /// Whether the outside watch asks to stop: its stop flag, else its progress hook when due,
    /// shown `progress(self)`. Partition 0 asks it (inside a window and at window ends), on the
    /// calling thread, where the hook may look at signals.
    pub(crate) fn watch_says_stop(&mut self, progress: impl FnOnce(&Self) -> crate::progress::Progress) -> bool {
        self.watch.stop_requested() || self.watch.due() && {
            let p = progress(self);
            !self.watch.report(&p)
        }
    }

    /// A packet put on port `p`'s wire whose far end another partition owns: it leaves this
    /// slab as a message.
    #[cold]
    #[inline(never)]
    pub(crate) fn send_across(&mut self, p: u32, at: Time, id: crate::packet::PacketId) {
        let carried = self.slab.export(id);
        let int = self.slab.int_of(id);
        self.slab.free(id);
        let peer = self.ports[(p ^ 1) as usize].node;
        let part = self.part.as_deref_mut().expect("a cut port belongs to a partition");
        let to = part.dest[peer as usize];
        part.out[to as usize].push(at, p, carried, int);
    }

    /// Take in a message: the packet goes on the wire's ring at this side, in send order.
    pub(crate) fn take_in(&mut self, m: &Msg, int: Option<&IntStack>) {
        let id = self.slab.import(&m.carried, int.copied());
        if m.doomed {
            self.doomed_across(m.port);
        }
        let port = &mut self.ports[m.port as usize];
        if port.wire.is_empty() {
            self.sched.push(m.at, Event::Wire { port: m.port, pkt: id });
        }
        debug_assert!(port.wire.back().is_none_or(|&(t, _)| t <= m.at), "a wire's messages arrive in send order");
        port.wire.push_back((m.at, id));
    }

    /// This partition's report after a window (and after taking in its messages).
    pub(crate) fn report(&mut self) -> Report {
        Report {
            next: self.sched.peek_time(),
            flows_done: self.flows_done,
            packets_alive: self.slab.live(),
            delivered: self.stats.counters.data_bytes_delivered,
            last: self.now,
            popped: self.sched.popped,
            stop: false,
            rows: self.stats.spill_rows() + self.part.as_deref().map_or(0, |p| p.releases.rows.len()),
        }
    }
}
