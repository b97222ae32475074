//! Measurement: columnar buffers the engine writes into and the front writes out.
//!
//! A sink, not a participant: nothing here reads the simulation. The engine (`crate::sim`'s
//! `sample` and `record`, `crate::net`) pushes numbers into these vectors; models keep counters
//! that the engine reads out. So `stats` sits under the engine and above the models, and depends
//! on neither. Columns (one
//! `Vec` per field) make the hand-over to Arrow/Parquet a copy, not a transformation.

pub mod flow_rows;
pub mod ideal;
pub mod latency;
pub mod order;
pub mod record;

use serde::{Deserialize, Serialize};

/// Per-flow results, one row per flow: in flow-id order, or in the order flows are released
/// when a run hands its rows to a sink (`progress::Sink`; the sink's owner sorts them by `flow_id`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowTable {
    pub flow_id: Vec<u32>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub start_ps: Vec<u64>,
    /// Time the receiver held the last byte; `u64::MAX` if the flow did not finish. hopsim's FCT
    /// (`fct_ps`, `slowdown`) ends here, as the papers' FCTs do.
    pub finish_ps: Vec<u64>,
    pub fct_ps: Vec<u64>,
    pub ideal_fct_ps: Vec<u64>,
    /// Time the sender got the last ACK (`u64::MAX` if it did not): the HPCC simulator's
    /// completion, later than `finish_ps` by the ACK's trip back. `ack_fct_ps` is from the start.
    pub ack_finish_ps: Vec<u64>,
    pub ack_fct_ps: Vec<u64>,
    /// The HPCC simulator's `standalone_fct` for this flow (`stats::ideal::hpcc_standalone_fct`):
    /// its slowdown is `ack_fct_ps / hpcc_standalone_fct_ps`.
    pub hpcc_standalone_fct_ps: Vec<u64>,
    /// UDP ports as the HPCC simulator numbers them (`workload::number_sports`, the flow file's dport).
    pub sport: Vec<u32>,
    pub dport: Vec<u32>,
    pub slowdown: Vec<f64>,
    pub incast: Vec<bool>,
    pub retx_bytes: Vec<u64>,
    pub dropped_bytes: Vec<u64>,
    /// Bytes the receiver holds in order at the end of the run (the size, for finished flows).
    pub delivered_bytes: Vec<u64>,
}

/// Every PFC frame sent: time, sending switch, its local port, priority, quanta, the pause
/// duration it asks for in picoseconds (0 = resume), and the mechanism that sent it (standard
/// PFC's threshold, P-PFC's prediction, CaPFC; `packet::ctrl::Origin`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PauseLog {
    pub time_ps: Vec<u64>,
    pub node: Vec<u32>,
    pub port: Vec<u16>,
    pub prio: Vec<u8>,
    pub quanta: Vec<u16>,
    pub duration_ps: Vec<u64>,
    pub mechanism: Vec<String>,
}

/// Every control frame sent, of any kind: time, sending node, its local port, the node at the
/// other end, the kind (`packet::ctrl::CtrlKind::name`), what it is about (priority, queue,
/// destination or flow) and its value (quanta, pause on/off, credits).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ControlLog {
    pub time_ps: Vec<u64>,
    pub node: Vec<u32>,
    pub port: Vec<u16>,
    pub peer_node: Vec<u32>,
    pub kind: Vec<String>,
    pub target: Vec<u32>,
    pub value: Vec<u64>,
}

/// Buffer occupancy samples: whole switches, and every switch port's egress bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct BufferSamples {
    pub switch_time_ps: Vec<u64>,
    pub switch_node: Vec<u32>,
    pub switch_bytes: Vec<u64>,
    pub port_time_ps: Vec<u64>,
    /// Index into `RunStats::ports`.
    pub port_row: Vec<u32>,
    pub port_bytes: Vec<u64>,
    /// Data bytes the port had sent by the sample time (cumulative; a packet counts when its
    /// serialisation starts): throughput over time is its difference between samples.
    pub port_tx_bytes: Vec<u64>,
    /// Non-empty data queues of the port at the sample time (BFC Fig. 10c's active flows when
    /// flows have queues of their own).
    pub port_active: Vec<u32>,
}

/// Queue-length time series of the ports the scenario asked for.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueSeries {
    pub time_ps: Vec<u64>,
    pub node: Vec<u32>,
    pub port: Vec<u16>,
    pub bytes: Vec<u64>,
}

/// Congestion window over time of the flows `record.cwnd_flows` names (Pulser's Fig. 6): the
/// window the flow's congestion control sets (`CongestionControl::window`; for a control without
/// one, the host's in-flight cap), sampled every `record.buffer_interval` from the flow's start
/// until its sender holds the last ACK. `delivered_bytes` is what the receiver holds in order at
/// that time (`rcv_nxt`): the flow's throughput over time is its rise between two samples over
/// their interval (FlowSail Fig. 9, issue 12's "per-flow throughput of chosen flows over time").
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CwndSeries {
    pub time_ps: Vec<u64>,
    pub flow: Vec<u32>,
    pub cwnd_bytes: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
}

/// What the flow-control modules report over time ([`crate::fc::FlowControl::sample`]), one
/// row per (sample time, switch, port, metric). `metric` indexes `RunStats::module_metrics`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModuleSamples {
    pub time_ps: Vec<u64>,
    pub node: Vec<u32>,
    /// Local port; [`crate::fc::SWITCH_WIDE`] for a value of the whole switch.
    pub port: Vec<u16>,
    pub metric: Vec<u16>,
    pub value: Vec<f64>,
}

/// Hop class of a port, for the papers' "buffer by hop" figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HopClass {
    HostUp,
    TorDown,
    TorUp,
    AggDown,
    AggUp,
    CoreDown,
    Other,
}

impl HopClass {
    /// Every class, in declaration order (`class as usize` indexes it).
    pub const ALL: [HopClass; 7] =
        [HopClass::HostUp, HopClass::TorDown, HopClass::TorUp, HopClass::AggDown, HopClass::AggUp, HopClass::CoreDown, HopClass::Other];

    pub fn name(self) -> &'static str {
        match self {
            HopClass::HostUp => "host-up",
            HopClass::TorDown => "tor-down",
            HopClass::TorUp => "tor-up",
            HopClass::AggDown => "agg-down",
            HopClass::AggUp => "agg-up",
            HopClass::CoreDown => "core-down",
            HopClass::Other => "other",
        }
    }

    /// Class of a port at a node of tier `me` (None = host) facing a node of tier `peer`.
    pub fn of(me: Option<u8>, peer: Option<u8>) -> HopClass {
        match (me, peer) {
            (None, _) => HopClass::HostUp,
            (Some(0), None) => HopClass::TorDown,
            (Some(0), Some(p)) if p > 0 => HopClass::TorUp,
            (Some(1), Some(p)) if p < 1 => HopClass::AggDown,
            (Some(1), Some(p)) if p > 1 => HopClass::AggUp,
            (Some(2), Some(p)) if p < 2 => HopClass::CoreDown,
            _ => HopClass::Other,
        }
    }
}

/// One row per port (both directions of every link), with its totals over the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PortTable {
    pub node: Vec<u32>,
    pub port: Vec<u16>,
    pub peer_node: Vec<u32>,
    pub hop_class: Vec<String>,
    pub rate_bps: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub ctrl_bytes: Vec<u64>,
    /// `tx_bytes` over the run's duration at the port's rate.
    pub utilisation: Vec<f64>,
    /// Time this port was held by PFC pauses (all priorities, summed).
    pub paused_ps: Vec<u64>,
    /// Time the gates of this port's queues were closed by modules (all queues, summed).
    pub gate_closed_ps: Vec<u64>,
    pub peak_queue_bytes: Vec<u64>,
    /// Control frames this port sent, by kind (PFC frames: pauses and resumes).
    pub pause_frames: Vec<u64>,
    pub resume_frames: Vec<u64>,
    pub other_ctrl_frames: Vec<u64>,
    /// Order-marker pairs inserted at this port and matched.
    pub markers_inserted: Vec<u64>,
    pub markers_matched: Vec<u64>,
    /// Packets Pulser's EIN marked at this port.
    pub ein_marks: Vec<u64>,
    /// Packets of any kind dropped by faults (`faults.rs`): lost on this port's wire, dropped
    /// from its queues or wire when its link went down (and frames sent to it while down), and
    /// dropped on arrival by this port for a destination no route led to any more.
    pub drops_loss: Vec<u64>,
    pub drops_link_down: Vec<u64>,
    pub drops_unreachable: Vec<u64>,
}

/// Whole-run counters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Counters {
    pub events: u64,
    pub packets_sent: u64,
    pub data_bytes_sent: u64,
    pub data_bytes_delivered: u64,
    /// Payload bytes of the data packets dropped, by the buffer (`drops`) or by faults.
    pub data_bytes_dropped: u64,
    /// Payload bytes of the data packets still in the network when the run ended (a run ends at
    /// the end of the engine's window, `crate::engine`, and a duplicate retransmission may be on
    /// its way): sent = delivered + dropped + in flight.
    #[serde(default)]
    pub data_bytes_in_flight: u64,
    /// Packets the switches' buffers refused.
    pub drops: u64,
    /// Packets of any kind dropped by faults (`faults.rs`): lost on a link, dropped when a link
    /// went down (queued at its ends, on its wire, or sent to it while down), or dropped at a
    /// switch left without a route to their destination.
    pub drops_loss: u64,
    pub drops_link_down: u64,
    pub drops_unreachable: u64,
    pub ack_bytes: u64,
    pub nack_bytes: u64,
    pub cnp_bytes: u64,
    /// Control-frame bytes by kind (`packet::ctrl::CtrlKind`).
    pub pfc_bytes: u64,
    pub queue_pause_bytes: u64,
    pub credit_bytes: u64,
    pub dst_pause_bytes: u64,
    pub flow_pause_bytes: u64,
    pub other_ctrl_bytes: u64,
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub timeouts: u64,
    pub nacks: u64,
    /// Data packets that reached their receiver beyond the next expected byte: reordered on the
    /// way, or following a lost packet (go-back-N receivers drop them and NACK). In a run without
    /// drops every one is a reordering (FlowSail's order marks must keep this at zero, §IV-C).
    #[serde(default)]
    pub out_of_order: u64,
    pub cnps: u64,
    pub flows: u64,
    pub flows_finished: u64,
    pub end_time_ps: u64,
    pub max_switch_buffer_bytes: u64,
}

/// The engine's own peaks: what its memory follows, not results. Each is one partition's,
/// summed over the partitions a run was split into (packets, events) or the largest of them
/// (flows), so they change with the split (`crate::engine`) where no table or counter does.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Diagnostics {
    /// Packet slots the slab used at most.
    pub peak_packets_alive: u64,
    /// The most flows holding live state at once: started, and not yet past their last packet
    /// (`net::flow_store`); the per-flow memory follows this, not `flows`.
    pub peak_live_flows: u64,
    /// The longest the event queue grew.
    pub peak_pending_events: u64,
    /// Flow states still held at the end: flows not finished, or with packets still out (summed
    /// over partitions, where a flow's two halves may be held in two).
    pub live_flows_at_end: u64,
    /// Chunks of per-flow fixed data (`net::flow_store`) held at once at most, summed over
    /// partitions: with a sink they follow the flows in flight, not the run's length.
    pub peak_flow_chunks: u64,
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every flow finished.
    #[default]
    Done,
    /// The stop time (`duration`) came first.
    Duration,
    /// Nothing was delivered for the watchdog's `stall_timeout` with flows unfinished, or the
    /// event queue ran dry with flows unfinished.
    NoProgress,
    /// As `NoProgress`, and paused ports wait on each other in a cycle.
    Deadlock,
    /// Stopped from outside (the stop flag, or the progress hook: Ctrl-C).
    Interrupted,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Done => "done",
            StopReason::Duration => "duration",
            StopReason::NoProgress => "no_progress",
            StopReason::Deadlock => "deadlock",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// Why and how a run ended: the reason, a sentence for people (empty when every flow finished),
/// and for a deadlock the cycle of (node, local port) that wait on each other.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StopInfo {
    pub reason: StopReason,
    pub message: String,
    pub cycle: Vec<(u32, u16)>,
}

/// Everything a run measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunStats {
    pub flows: FlowTable,
    pub pauses: PauseLog,
    pub control: ControlLog,
    /// Counters the flow-control and AQM modules keep (P-PFC's predictive pauses, CaPFC's, EIN
    /// marks, Pulser's cuts and restores), summed over the network, by name.
    pub modules: std::collections::BTreeMap<String, u64>,
    pub buffer: BufferSamples,
    pub queues: QueueSeries,
    pub module_samples: ModuleSamples,
    /// Names of the modules' sampled metrics, in first-reported order (`ModuleSamples::metric`
    /// indexes it; names stay when the samples are spilled).
    pub module_metrics: Vec<String>,
    pub ports: PortTable,
    /// Every PFC frame received (`record`).
    pub pfc_received: record::PfcRxLog,
    /// Queue-length histograms (`record.qlen_monitor`).
    pub qlen: record::QlenHist,
    /// Switch events of chosen packets (`record.trace`).
    pub trace: record::PacketTrace,
    /// Per-packet one-way latency by flow class (`record.latency`; empty when off).
    pub latency: latency::LatencyTable,
    /// Congestion windows of chosen flows (`record.cwnd_flows`).
    pub cwnd: CwndSeries,
    pub counters: Counters,
    /// The engine's peaks, which depend on the split (not results).
    pub diagnostics: Diagnostics,
    pub stop: StopInfo,
}

impl RunStats {
    /// Rows of the tables that grow with simulated time rather than with the network (buffer
    /// samples, queue samples, the packet trace, the pause, control-frame and PFC-received logs, which a PFC
    /// storm grows by tens of MB a second) and of the flows table, whose rows come as flows
    /// are released in a run with a sink. A watch's sink takes them away in chunks while the run
    /// goes on (`progress::Sink`).
    pub fn spill_rows(&self) -> usize {
        self.buffer.switch_time_ps.len()
            + self.flows.len()
            + self.buffer.port_time_ps.len()
            + self.queues.time_ps.len()
            + self.trace.time_ps.len()
            + self.module_samples.time_ps.len()
            + self.pauses.time_ps.len()
            + self.control.time_ps.len()
            + self.pfc_received.time_ps.len()
    }

    /// The id of a module metric's name, added on first use.
    pub fn module_metric(&mut self, name: &str) -> u16 {
        match self.module_metrics.iter().position(|m| m == name) {
            Some(i) => i as u16,
            None => {
                self.module_metrics.push(name.to_string());
                (self.module_metrics.len() - 1) as u16
            }
        }
    }

    /// The time-growing tables alone (emptied here; not the flows table), with the metric names
    /// their ids refer to: what a partition of a split run hands over when the sink is due
    /// (`engine::merge::merge_growing`).
    pub fn take_growing(&mut self) -> RunStats {
        RunStats {
            buffer: std::mem::take(&mut self.buffer),
            queues: std::mem::take(&mut self.queues),
            trace: std::mem::take(&mut self.trace),
            module_samples: std::mem::take(&mut self.module_samples),
            module_metrics: self.module_metrics.clone(),
            pauses: std::mem::take(&mut self.pauses),
            control: std::mem::take(&mut self.control),
            pfc_received: std::mem::take(&mut self.pfc_received),
            ..Default::default()
        }
    }

    /// Empty those tables once a sink has taken their rows.
    pub fn clear_spilled(&mut self) {
        self.flows = FlowTable::default();
        self.buffer = BufferSamples::default();
        self.queues = QueueSeries::default();
        self.trace = record::PacketTrace::default();
        self.module_samples = ModuleSamples::default();
        self.pauses = PauseLog::default();
        self.control = ControlLog::default();
        self.pfc_received = record::PfcRxLog::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hop_classes() {
        assert_eq!(HopClass::of(None, Some(0)), HopClass::HostUp);
        assert_eq!(HopClass::of(Some(0), None), HopClass::TorDown);
        assert_eq!(HopClass::of(Some(0), Some(1)), HopClass::TorUp);
        assert_eq!(HopClass::of(Some(1), Some(0)), HopClass::AggDown);
        assert_eq!(HopClass::of(Some(1), Some(2)), HopClass::AggUp);
        assert_eq!(HopClass::of(Some(2), Some(1)), HopClass::CoreDown);
    }
}
