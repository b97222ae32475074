//! Flow arrivals: the next flow of the workload starts, from a list added at assembly or from a
//! stream that makes each flow as it arrives (`Simulation::from_stream`).
//!
//! Why a stream: a generated workload of 10 ms on 1,024 hosts is 1.2 million flows, and holding
//! each one's spec and fixed facts from the start made memory grow with the run's length
//! (issue 14: "peak memory bounded by packets in flight"). Made as they arrive, a flow's fixed
//! data lives from its start to the moment its row left, in a chunk of the flow store that goes
//! once all its flows are done (`net::flow_store`).
//!
//! Why the results are the same: a stream yields the flows in the order of the sorted list, so
//! a flow's id is its place in it, as at assembly; its fixed data is computed from the same
//! routes (runs with link faults, which change routes, assemble the whole list instead); and
//! the `FlowArrival` events are pushed at the same instants, in the same order.

use crate::event::Event;
use crate::net::flow_store::FlowFixed;
use crate::sim::Simulation;
use crate::time::Time;
use crate::workload::FlowSpec;
use crate::workload::stream::{BoxedStream, MakeStream};

/// What the run needs to know of all its flows before they arrive.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlowFacts {
    /// The largest base RTT of any flow (the watchdog's default limit, `watchdog.rs`).
    pub max_base_rtt: Time,
    /// The latest start (progress reports).
    pub last_start: Time,
    /// Nodes some incast-tagged flow goes to (the per-hop latency classes, `stats::record`).
    pub incast_dst: Vec<bool>,
}

impl FlowFacts {
    /// Nothing known yet, in a network of `nodes` nodes.
    pub(crate) fn new(nodes: usize) -> FlowFacts {
        FlowFacts { incast_dst: vec![false; nodes], ..Default::default() }
    }

    pub(crate) fn add(&mut self, f: &FlowFixed) {
        self.max_base_rtt = self.max_base_rtt.max(f.base_rtt);
        self.last_start = self.last_start.max(f.spec.start);
        if f.spec.incast {
            self.incast_dst[f.spec.dst as usize] = true;
        }
    }
}

/// The flows still to arrive: the stream, and its next flow read ahead (its start is when the
/// next `FlowArrival` is due).
pub(crate) struct LazyFlows {
    stream: BoxedStream,
    next: Option<FlowSpec>,
    /// Flows taken so far: the id of `next`.
    taken: usize,
}

impl LazyFlows {
    /// Take the next flow, and read the one after it.
    fn take(&mut self) -> Option<FlowSpec> {
        let f = self.next.take()?;
        self.taken += 1;
        self.next = self.stream.next().map(|r| r.expect("the stream gave this flow without error when it was counted"));
        Some(f)
    }
}

impl Simulation {
    /// Assembly of a stream (`from_stream`): check every flow as assembly checks a list's (the
    /// first error names its flow), find the facts of all flows, then keep the stream, read
    /// again from the first flow, for the run.
    pub(crate) fn check_stream(&mut self, make: &MakeStream) -> Result<(), String> {
        let mut facts = FlowFacts::new(self.node_ref.len());
        for (id, f) in make()?.enumerate() {
            facts.add(&self.flow_fixed(id as u32, &f?)?);
        }
        self.flow_facts = facts;
        let mut stream = make()?;
        let next = stream.next().transpose()?;
        self.lazy = Some(Box::new(LazyFlows { stream, next, taken: 0 }));
        Ok(())
    }

    /// When the next flow starts (`None`: every flow has started).
    pub(crate) fn next_start(&self) -> Option<Time> {
        match &self.lazy {
            Some(l) => l.next.map(|f| f.start),
            None => self.arrival_order.get(self.next_flow).map(|&f| self.flows.fixed(f).spec.start),
        }
    }

    /// Start every flow due now, and wake again at the next start.
    pub(crate) fn on_flow_arrival(&mut self) {
        while let Some(t) = self.next_start() {
            if t > self.now {
                self.sched.push(t, Event::FlowArrival);
                return;
            }
            let f = match &mut self.lazy {
                Some(l) => {
                    let id = l.taken as u32;
                    let spec = l.take().expect("a next start has its flow");
                    self.add_flow(id, &spec).expect("every flow was checked at assembly");
                    id
                }
                None => self.arrival_order[self.next_flow],
            };
            self.next_flow += 1;
            self.start_flow(f);
        }
    }

    /// At the end of a run cut short, the rows of the flows that never arrived (made now, one at
    /// a time, each forgotten once its row is written), until the table holds `max` rows; false
    /// once every row is written.
    pub(crate) fn write_unarrived_rows(&mut self, max: usize) -> bool {
        let Some(mut l) = self.lazy.take() else { return false };
        let mut more = true;
        while more && self.stats.flows.len() < max {
            let id = l.taken as u32;
            match l.take() {
                Some(spec) => {
                    let fx = self.flow_fixed(id, &spec).expect("every flow was checked at assembly");
                    self.flows.write_unstarted_row(&mut self.stats.flows, id, &fx);
                }
                None => more = false,
            }
        }
        self.lazy = Some(l);
        more
    }

    /// A flow that never arrived, made now (module counters of flows never started).
    pub(crate) fn an_unarrived_flow(&self) -> Option<FlowFixed> {
        let l = self.lazy.as_ref()?;
        Some(self.flow_fixed(l.taken as u32, l.next.as_ref()?).expect("every flow was checked at assembly"))
    }
}
