//! Row operations on the column tables, and the canonical order of the logs.
//!
//! Why a canonical order: a log row is written by the event that made it, and one thread
//! handles the events of one instant in key order across the whole network, while a partition
//! sees only its own (`crate::engine`). Ordering every log by (time, node), stably, gives the
//! same table either way: the rows of one node at one instant all come from the partition that
//! owns it, in the order its events made them, which is the one-thread order among them.

use crate::stats::record::{PacketTrace, PfcRxLog, QlenHist};
use crate::stats::{BufferSamples, ControlLog, CwndSeries, ModuleSamples, PauseLog, PortTable, QueueSeries, RunStats};

/// The stable order of `key` as a permutation of row indices, or `None` when the rows are in
/// order already (the usual case of one partition's log, which a run writes almost sorted).
pub(crate) fn order_of<K: Ord + Copy>(key: &[K]) -> Option<Vec<u32>> {
    if key.windows(2).all(|w| w[0] <= w[1]) {
        return None;
    }
    let mut perm: Vec<u32> = (0..key.len() as u32).collect();
    perm.sort_by_key(|&i| key[i as usize]);
    Some(perm)
}

/// Take `v`'s rows in the order `perm` gives.
pub(crate) fn permute<T: Clone>(v: &mut Vec<T>, perm: &[u32]) {
    *v = perm.iter().map(|&i| v[i as usize].clone()).collect();
}

/// Row operations of a table made of `Vec` columns of equal length.
macro_rules! rows {
    ($t:ty { $($f:ident),* $(,)? }) => {
        impl $t {
            /// Add `o`'s rows after these.
            #[allow(dead_code)]
            pub fn append_rows(&mut self, o: &Self) {
                $( self.$f.extend_from_slice(&o.$f); )*
            }
            /// Reorder the rows by a permutation of their indices.
            #[allow(dead_code)]
            pub(crate) fn permute(&mut self, perm: &[u32]) {
                $( permute(&mut self.$f, perm); )*
            }
            /// Reorder the rows stably by `key` (one per row).
            #[allow(dead_code)]
            pub(crate) fn sort_rows_by<K: Ord + Copy>(&mut self, key: &[K]) {
                if let Some(perm) = order_of(key) {
                    self.permute(&perm);
                }
            }
            /// Reorder the rows from `from` on stably by `key` (one per row from `from` on).
            #[allow(dead_code)]
            pub(crate) fn sort_tail_by<K: Ord + Copy>(&mut self, from: usize, key: &[K]) {
                if let Some(perm) = order_of(key) {
                    $( let mut tail = self.$f.split_off(from); permute(&mut tail, &perm); self.$f.append(&mut tail); )*
                }
            }
            /// Row `i` becomes `o`'s row `i`.
            #[allow(dead_code)]
            pub(crate) fn copy_row_from(&mut self, i: usize, o: &Self) {
                $( self.$f[i] = o.$f[i].clone(); )*
            }
            /// Add `o`'s row `i` after these.
            #[allow(dead_code)]
            pub(crate) fn push_row_from(&mut self, o: &Self, i: usize) {
                $( self.$f.push(o.$f[i].clone()); )*
            }
        }
    };
}

rows!(PauseLog { time_ps, node, port, prio, quanta, duration_ps, mechanism });
rows!(ControlLog { time_ps, node, port, peer_node, kind, target, value });
rows!(PfcRxLog { time_ps, node, is_switch, port, prio, pause });
rows!(PacketTrace { time_ps, node, port, queue, event, flow, seq, size, qlen_bytes });
rows!(QueueSeries { time_ps, node, port, bytes });
rows!(CwndSeries { time_ps, flow, cwnd_bytes, delivered_bytes });
rows!(ModuleSamples { time_ps, node, port, metric, value });
rows!(PortTable {
    node, port, peer_node, hop_class, rate_bps, tx_bytes, ctrl_bytes, utilisation, paused_ps, gate_closed_ps,
    peak_queue_bytes, pause_frames, resume_frames, other_ctrl_frames, markers_inserted, markers_matched, ein_marks,
    drops_loss, drops_link_down, drops_unreachable,
});
rows!(QlenHist { dump_time_ps, node, port, kb, count });

impl BufferSamples {
    /// Add `o`'s switch and port rows after these.
    pub fn append_rows(&mut self, o: &Self) {
        self.switch_time_ps.extend_from_slice(&o.switch_time_ps);
        self.switch_node.extend_from_slice(&o.switch_node);
        self.switch_bytes.extend_from_slice(&o.switch_bytes);
        self.port_time_ps.extend_from_slice(&o.port_time_ps);
        self.port_row.extend_from_slice(&o.port_row);
        self.port_bytes.extend_from_slice(&o.port_bytes);
        self.port_tx_bytes.extend_from_slice(&o.port_tx_bytes);
        self.port_active.extend_from_slice(&o.port_active);
    }

    /// Reorder the switch rows stably by `key`.
    pub(crate) fn sort_switch_rows_by<K: Ord + Copy>(&mut self, key: &[K]) {
        if let Some(perm) = order_of(key) {
            permute(&mut self.switch_time_ps, &perm);
            permute(&mut self.switch_node, &perm);
            permute(&mut self.switch_bytes, &perm);
        }
    }

    /// Reorder the port rows stably by `key`.
    pub(crate) fn sort_port_rows_by<K: Ord + Copy>(&mut self, key: &[K]) {
        if let Some(perm) = order_of(key) {
            permute(&mut self.port_time_ps, &perm);
            permute(&mut self.port_row, &perm);
            permute(&mut self.port_bytes, &perm);
            permute(&mut self.port_tx_bytes, &perm);
            permute(&mut self.port_active, &perm);
        }
    }
}

fn time_node(t: &[u64], n: &[u32]) -> Vec<(u64, u32)> {
    t.iter().copied().zip(n.iter().copied()).collect()
}

/// How far each log is in canonical order already (rows before these were ordered at an
/// earlier window's end and come before every later row, whose times are later).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ordered {
    pauses: usize,
    control: usize,
    pfc_received: usize,
    trace: usize,
}

impl Ordered {
    /// Every row of `s`'s logs is in order (right after `order_logs`, whether or not a sink then
    /// took the rows away).
    pub(crate) fn all_of(s: &RunStats) -> Ordered {
        Ordered { pauses: s.pauses.time_ps.len(), control: s.control.time_ps.len(), pfc_received: s.pfc_received.time_ps.len(), trace: s.trace.time_ps.len() }
    }
}

/// Order a log's rows from `*mark` on by (time, node) and move the mark to its end.
macro_rules! order_log {
    ($log:expr, $mark:expr) => {{
        let from = $mark;
        let k = time_node(&$log.time_ps[from..], &$log.node[from..]);
        $log.sort_tail_by(from, &k);
        $mark = $log.time_ps.len();
    }};
}

impl RunStats {
    /// Put the logs in their canonical order (see the module docs): after every window that may
    /// hand rows to a sink, and at the end; `done` says how far they are ordered already.
    pub(crate) fn order_logs(&mut self, done: &mut Ordered) {
        order_log!(self.pauses, done.pauses);
        order_log!(self.control, done.control);
        order_log!(self.pfc_received, done.pfc_received);
        order_log!(self.trace, done.trace);
    }

    /// Put the whole logs in their canonical order.
    pub(crate) fn canonical_order(&mut self) {
        self.order_logs(&mut Ordered::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_and_leaves_sorted_rows_alone() {
        assert_eq!(order_of(&[1, 2, 2, 3]), None);
        // equal keys keep their order: rows 1 and 3 (key 1) stay 1 then 3
        assert_eq!(order_of(&[2, 1, 0, 1]), Some(vec![2, 1, 3, 0]));
        let mut log = PauseLog::default();
        for (t, n) in [(5u64, 2u32), (5, 1), (3, 9), (5, 1)] {
            log.time_ps.push(t);
            log.node.push(n);
            log.port.push(0);
            log.prio.push(0);
            log.quanta.push(n as u16 * 10 + t as u16);
            log.duration_ps.push(0);
            log.mechanism.push(format!("{t}-{n}"));
        }
        log.quanta[3] = 99;
        let k = time_node(&log.time_ps, &log.node);
        log.sort_rows_by(&k);
        assert_eq!(log.node, vec![9, 1, 1, 2]);
        assert_eq!(log.quanta[1..3], [15, 99]);
        assert_eq!(log.mechanism, vec!["3-9", "5-1", "5-1", "5-2"]);
    }
}
