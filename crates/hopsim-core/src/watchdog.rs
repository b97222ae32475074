//! Runs that cannot finish: no-progress detection and PFC deadlock diagnosis.
//!
//! Why: without a stop time, a run whose flows can never finish (a PFC deadlock, a buffer that
//! drops every packet, ...) still produces events for ever (samples, pause refreshes,
//! retransmission timeouts), so it must notice by itself. The sign is simulated, not wall, time:
//! no data byte delivered anywhere for `stall_after` while some flow has started and not
//! finished. Then the watchdog looks for a cycle of ports that wait on each other and names it
//! (a PFC deadlock); without one it reports a stall.
//!
//! The check runs at the end of every window of the engine (`crate::engine`) on the whole
//! network's delivered bytes, so a stall is seen at the end of the first window after
//! `stall_after` has passed: a deterministic point of the run, the same on any number of threads.
//! A run that is making progress is never touched.

use crate::ids::NodeRef;
use crate::packet::PktKind;
use crate::queues::port::NPRIO;
use crate::sim::Simulation;
use crate::stats::{StopInfo, StopReason};
use crate::time::Time;

/// State of the no-progress detector.
#[derive(Clone, Debug, Default)]
pub(crate) struct Watchdog {
    /// Simulated time without delivery after which a run with unfinished flows stops
    /// (`Time::MAX`: never).
    pub limit: Time,
    /// Delivered bytes at the last checkpoint, and when they last changed.
    last_bytes: u64,
    last_progress: Time,
}

/// The default `stall_after`: ten retransmission timeouts (a flow that lost everything has
/// retried many times) plus a hundred of the largest base RTT (the slowest path has had ample
/// time to deliver a packet even behind a long queue).
pub fn default_stall_after(rto: Time, max_base_rtt: Time) -> Time {
    Time(rto.0.saturating_mul(10).saturating_add(max_base_rtt.0.saturating_mul(100)))
}

impl Simulation {
    pub(crate) fn start_watchdog(&mut self) {
        let max_rtt = self.flow_facts.max_base_rtt;
        let limit = self.cfg.stall_timeout.unwrap_or_else(|| default_stall_after(self.cfg.host.first_rto(), max_rtt));
        self.watchdog = Watchdog { limit, last_bytes: self.stats.counters.data_bytes_delivered, last_progress: self.now };
    }

    /// At a window's end: has the run stalled? Then for how long nothing was delivered.
    /// `delivered` and `unfinished` are the whole network's (every partition's, `engine`).
    pub(crate) fn watchdog_check(&mut self, delivered: u64, unfinished: bool) -> Option<Time> {
        let now = self.now;
        let wd = &mut self.watchdog;
        if delivered != wd.last_bytes || !unfinished {
            wd.last_bytes = delivered;
            wd.last_progress = now;
            return None;
        }
        let idle = now - wd.last_progress;
        (idle >= wd.limit).then_some(idle)
    }

    /// No flow waits to finish up to `t`: the watchdog counts idle time from there.
    pub(crate) fn watchdog_idle_until(&mut self, t: Time) {
        self.watchdog.last_progress = self.watchdog.last_progress.max(t);
    }

    /// Whether each port is stuck (paused for a priority it holds data of): the truth for the
    /// ports this simulation handles, false for the others.
    fn stuck_ports(&self) -> Vec<bool> {
        let now = self.now;
        (0..self.ports.len())
            .map(|p| {
                let port = &self.ports[p];
                (0..port.nqueues()).any(|q| {
                    let prio = port.prio_of(q);
                    prio < NPRIO && port.is_paused(prio, now) && port.queues[q].iter().any(|&id| self.slab.get(id).kind == PktKind::Data)
                })
            })
            .collect()
    }

    /// The wait-for graph of paused ports (see `pause_cycle`), given every port's stuck state.
    fn pause_edges(&self, is_stuck: &[bool], next: &mut [Vec<u32>]) {
        let now = self.now;
        for p in (0..self.ports.len()).filter(|&p| is_stuck[p]) {
            let port = &self.ports[p];
            let peer = self.ports[p ^ 1].node;
            if !matches!(self.node_ref[peer as usize], NodeRef::Switch(_)) {
                continue;
            }
            for q in 0..port.nqueues() {
                let prio = port.prio_of(q);
                if prio >= NPRIO || !port.is_paused(prio, now) {
                    continue;
                }
                for &id in port.queues[q].iter() {
                    let pkt = self.slab.get(id);
                    if pkt.kind != PktKind::Data {
                        continue;
                    }
                    let out = self.route(peer, pkt);
                    if out == crate::topo::routes::NO_ROUTE {
                        continue; // cut off by a link failure: dropped when it gets there
                    }
                    if is_stuck[out as usize] && !next[p].contains(&out) {
                        next[p].push(out);
                    }
                }
            }
        }
    }

    /// The wait-for graph of paused ports: a port that PFC pauses for a priority and that holds
    /// data of that priority waits for the egress port its queued packets need at the next
    /// switch, when that one is paused and holds data too. Returns a cycle as (node, local port)
    /// pairs, starting from its smallest port id, if there is one.
    pub fn pause_cycle(&self) -> Option<Vec<(u32, u16)>> {
        pause_cycle_of(&[self])
    }
}

/// `pause_cycle` over every partition of a run (each knows its own ports' queues and pauses).
fn pause_cycle_of(sims: &[&Simulation]) -> Option<Vec<(u32, u16)>> {
    let s0 = sims[0];
    let n = s0.ports.len();
    let mut is_stuck = vec![false; n];
    for s in sims {
        for (p, st) in s.stuck_ports().into_iter().enumerate() {
            is_stuck[p] |= st;
        }
    }
    let mut next: Vec<Vec<u32>> = vec![vec![]; n];
    for s in sims {
        s.pause_edges(&is_stuck, &mut next);
    }
    find_cycle(&next).map(|c| c.into_iter().map(|p| (s0.ports[p as usize].node, s0.ports[p as usize].local)).collect())
}

/// Why nothing moves, from every partition of the run: a cycle of paused ports, or a plain
/// stall; `waiting` flows have started and not finished.
pub(crate) fn diagnose(sims: &[&Simulation], idle: Time, waiting: usize) -> StopInfo {
    let now = sims[0].now;
    match pause_cycle_of(sims) {
        Some(cycle) => {
            let names: Vec<String> = cycle.iter().map(|&(n, p)| format!("(node {n}, port {p})")).collect();
            let first = names[0].clone();
            StopInfo {
                reason: StopReason::Deadlock,
                message: format!(
                    "PFC deadlock at {now}: no data delivered for {idle} with {waiting} flows unfinished; these paused ports wait on each other: {} -> {first}",
                    names.join(" -> ")
                ),
                cycle,
            }
        }
        None => {
            let buffered: u64 = sims.iter().flat_map(|s| s.ports.iter()).map(|p| p.queued_bytes()).sum();
            StopInfo {
                reason: StopReason::NoProgress,
                message: format!(
                    "no progress at {now}: no data delivered for {idle} with {waiting} flows unfinished ({buffered} bytes queued in the network); set `stall_timeout` to wait longer"
                ),
                cycle: vec![],
            }
        }
    }
}
/// A cycle of a directed graph given as adjacency lists (iterative depth-first search, so a
/// graph of a million ports does not overflow the stack), rotated to start at its smallest vertex.
fn find_cycle(next: &[Vec<u32>]) -> Option<Vec<u32>> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; next.len()];
    for root in 0..next.len() {
        if state[root] != NEW || next[root].is_empty() {
            continue;
        }
        // stack of (vertex, index of the next edge to follow)
        let mut stack: Vec<(u32, usize)> = vec![(root as u32, 0)];
        state[root] = OPEN;
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&w) = next[v as usize].get(*i) {
                *i += 1;
                match state[w as usize] {
                    NEW => {
                        state[w as usize] = OPEN;
                        stack.push((w, 0));
                    }
                    OPEN => {
                        let from = stack.iter().position(|&(x, _)| x == w).expect("open vertex on the stack");
                        let mut cycle: Vec<u32> = stack[from..].iter().map(|&(x, _)| x).collect();
                        let k = cycle.iter().enumerate().min_by_key(|&(_, &x)| x).map(|(k, _)| k).unwrap_or(0);
                        cycle.rotate_left(k);
                        return Some(cycle);
                    }
                    _ => {}
                }
            } else {
                state[v as usize] = DONE;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_cycle_and_only_a_cycle() {
        // 0 -> 1 -> 2 -> 3 -> 1, and 4 -> 0
        let g = vec![vec![1], vec![2], vec![3], vec![1], vec![0]];
        assert_eq!(find_cycle(&g), Some(vec![1, 2, 3]));
        // a chain and a diamond: no cycle
        let g = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert_eq!(find_cycle(&g), None);
        assert_eq!(find_cycle(&[]), None);
    }

    #[test]
    fn default_stall_is_generous() {
        let t = default_stall_after(Time::from_ms(1), Time::from_us(10));
        assert_eq!(t, Time::from_ms(11));
    }
}
