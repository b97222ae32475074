//! The tables of a run split over partitions, built as one thread writes them.
//!
//! Each partition finished with the run's end time and wrote every table from its own state:
//! - rows of what it owns are right, rows of what it does not own are empty or absent (a port
//!   it does not own never sent anything; a switch it does not own was never sampled);
//! - a flow's row is right in two halves: the receiver's (finish time, delivered bytes) where
//!   the destination is, the sender's (ACK finish, retransmitted bytes) where the source is, and
//!   drops are charged wherever the packet was;
//! - counters add up, except the events every partition handles itself (flow arrivals, samples),
//!   counted once, and peaks, which are the largest partition's.
//!
//! Logs (pauses, control frames, PFC frames received, the packet trace) are in the canonical
//! order of `stats::order` in each partition; rows of one node at one instant come from one
//! partition in the order its events made them, so a stable sort of all of them by (time, node)
//! is the one-thread table.

use crate::engine::Plan;
use crate::sim::Simulation;
use crate::stats::{FlowTable, RunStats};

/// Build the run's tables from every partition's (`sims[k]` ran partition `k` of `plan`): what
/// is left of the time-growing tables after the chunks the sink took (`merge_growing`), and
/// the rest.
pub(crate) fn merge(sims: &mut [Simulation], plan: &Plan) -> RunStats {
    let mut parts: Vec<RunStats> = sims.iter_mut().map(|s| std::mem::take(&mut s.stats)).collect();
    let mut names = sims[0].part.as_deref_mut().map(|p| std::mem::take(&mut p.metric_names)).unwrap_or_default();
    let owner = |node: u32| plan.of[node as usize] as usize;
    // (merge_growing takes the flows tables as freed flows' rows: the rows left at the end are
    // each partition's halves, merged below)
    let ends: Vec<FlowTable> = parts.iter_mut().map(|p| std::mem::take(&mut p.flows)).collect();
    for (p, s) in parts.iter_mut().zip(sims.iter_mut()) {
        p.flows = s.part.as_deref_mut().map(|x| std::mem::take(&mut x.releases.rows)).unwrap_or_default();
    }
    let released_finished: u64 = sims.iter().filter_map(|s| s.part.as_deref()).map(|p| p.releases.finished_rows).sum();
    let s0 = &sims[0];
    let mut out = merge_growing(&parts, s0, &mut names);
    // (names reported without a row keep their place after the others)
    for s in &parts {
        for n in &s.module_metrics {
            metric_id(&mut names, n);
        }
    }
    out.module_metrics = names;
    // the rows left at the end, after the rows of flows freed since the sink last took them
    // (without a sink no row leaves as flows are freed: the end rows, in flow-id order, are all)
    let mut end_rows = merge_flows(&ends, &owner);
    add_foreign_drops(&mut end_rows, sims);
    let ends_finished = end_rows.finish_ps.iter().filter(|&&t| t != u64::MAX).count() as u64;
    out.flows.append(&end_rows);

    // per port: its owner's row; drops by faults where they happened
    out.ports = parts[0].ports.clone();
    for (p, &node) in parts[0].ports.node.iter().enumerate() {
        let k = owner(node);
        out.ports.copy_row_from(p, &parts[k].ports);
        out.ports.drops_loss[p] = parts.iter().map(|s| s.ports.drops_loss[p]).sum();
        out.ports.drops_link_down[p] = parts.iter().map(|s| s.ports.drops_link_down[p]).sum();
        out.ports.drops_unreachable[p] = parts.iter().map(|s| s.ports.drops_unreachable[p]).sum();
    }

    // a chosen flow's congestion window: by time, then its place among the chosen flows; its
    // bytes delivered are its receiver's, sampled where the receiver is
    for s in &parts {
        out.cwnd.append_rows(&s.cwnd);
    }
    let delivered: std::collections::HashMap<(u64, u32), u64> =
        sims.iter().filter_map(|s| s.part.as_deref()).flat_map(|p| p.delivered.iter().map(|&(t, f, d)| ((t, f), d))).collect();
    for (i, (&t, &f)) in out.cwnd.time_ps.iter().zip(&out.cwnd.flow).enumerate() {
        if let Some(&d) = delivered.get(&(t, f)) {
            out.cwnd.delivered_bytes[i] = d;
        }
    }
    // (maps, not a search per row: a long run samples its chosen flows millions of times)
    let flow_places: std::collections::HashMap<u32, u32> =
        s0.cfg.record.cwnd_flows.iter().enumerate().map(|(i, &f)| (f, i as u32)).rev().collect();
    let flow_place = |f: u32| flow_places.get(&f).copied().unwrap_or(u32::MAX);
    let c = &mut out.cwnd;
    let key: Vec<(u64, u32)> = c.time_ps.iter().zip(&c.flow).map(|(&t, &f)| (t, flow_place(f))).collect();
    c.sort_rows_by(&key);

    // queue-length histograms: the owner's rows, in (dump time, node, port) order
    for (k, s) in parts.iter().enumerate() {
        let q = &s.qlen;
        for i in 0..q.node.len() {
            if owner(q.node[i]) == k {
                out.qlen.push_row_from(q, i);
            }
        }
    }
    let q = &mut out.qlen;
    let key: Vec<(u64, u32, u16)> = (0..q.node.len()).map(|i| (q.dump_time_ps[i], q.node[i], q.port[i])).collect();
    q.sort_rows_by(&key);

    // per-packet latency: every partition's histograms added, quantiles taken after
    out.latency = match sims[0].rec.latency.as_deref() {
        Some(first) => {
            let mut all = first.clone();
            for l in sims[1..].iter().filter_map(|s| s.rec.latency.as_deref()) {
                all.merge(l);
            }
            all.table()
        }
        None => parts[0].latency.clone(),
    };
    for s in &parts {
        for (k, v) in &s.modules {
            *out.modules.entry(k.clone()).or_insert(0) += v;
        }
    }
    out.counters = merge_counters(&parts, sims);
    let ds: Vec<&crate::stats::Diagnostics> = parts.iter().map(|p| &p.diagnostics).collect();
    out.diagnostics = crate::stats::Diagnostics {
        peak_packets_alive: ds.iter().map(|d| d.peak_packets_alive).sum(),
        peak_live_flows: ds.iter().map(|d| d.peak_live_flows).max().unwrap_or(0),
        peak_pending_events: ds.iter().map(|d| d.peak_pending_events).sum(),
        live_flows_at_end: ds.iter().map(|d| d.live_flows_at_end).sum(),
        peak_flow_chunks: ds.iter().map(|d| d.peak_flow_chunks).sum(),
    };
    out.counters.flows_finished = ends_finished + released_finished;
    out
}

/// The time-growing tables (logs, buffer, queue and module samples) of every partition up to
/// one moment, as one thread writes them: every row before that moment, from every partition,
/// is in `parts` (a window's end: `parallel::worker` hands them over when the sink is due, and
/// `merge` the rest). `s0` is any partition (each knows the whole network); `names` are the
/// module metrics' names as numbered so far, extended here.
pub(crate) fn merge_growing(parts: &[RunStats], s0: &Simulation, names: &mut Vec<String>) -> RunStats {
    let mut out = RunStats::default();
    // rows of flows freed (in release order, as a one-thread run hands them: the sink's owner
    // sorts them by flow id)
    for s in parts {
        out.flows.append(&s.flows);
    }
    // logs: every partition's rows, in (time, node) order
    for s in parts {
        out.pauses.append_rows(&s.pauses);
        out.control.append_rows(&s.control);
        out.pfc_received.append_rows(&s.pfc_received);
        out.trace.append_rows(&s.trace);
    }
    out.canonical_order();

    // samples: by time, then the switch's (or chosen port's) place in the one-thread order
    let sw_index = |node: u32| s0.switch_index(node);
    let port_sw = |p: u32| sw_index(s0.ports[p as usize].node);
    for s in parts {
        out.buffer.append_rows(&s.buffer);
        out.queues.append_rows(&s.queues);
    }
    let b = &mut out.buffer;
    let key: Vec<(u64, u32)> = b.switch_time_ps.iter().zip(&b.switch_node).map(|(&t, &n)| (t, sw_index(n))).collect();
    b.sort_switch_rows_by(&key);
    let key: Vec<(u64, u32)> = b.port_time_ps.iter().zip(&b.port_row).map(|(&t, &p)| (t, port_sw(p))).collect();
    b.sort_port_rows_by(&key);
    let places: std::collections::HashMap<(u32, u16), u32> =
        s0.cfg.record.queue_ports.iter().enumerate().map(|(i, &q)| (q, i as u32)).rev().collect();
    let place = |node: u32, local: u16| places.get(&(node, local)).copied().unwrap_or(u32::MAX);
    let q = &mut out.queues;
    let key: Vec<(u64, u32)> = q.time_ps.iter().zip(q.node.iter().zip(&q.port)).map(|(&t, (&n, &l))| (t, place(n, l))).collect();
    q.sort_rows_by(&key);

    // module samples in one-thread order, their metric ids numbered in order of first
    // appearance, as one thread numbers them
    let mut local: Vec<String> = vec![];
    for s in parts {
        let start = out.module_samples.time_ps.len();
        out.module_samples.append_rows(&s.module_samples);
        for m in &mut out.module_samples.metric[start..] {
            *m = metric_id(&mut local, &s.module_metrics[*m as usize]);
        }
    }
    let ms = &mut out.module_samples;
    let key: Vec<(u64, u32)> = ms.time_ps.iter().zip(&ms.node).map(|(&t, &n)| (t, sw_index(n))).collect();
    ms.sort_rows_by(&key);
    for m in &mut ms.metric {
        *m = metric_id(names, &local[*m as usize]);
    }
    out.module_metrics = names.clone();
    out
}

/// Add to `t`'s rows the bytes dropped where neither end of the flow is (`Part::dropped`).
pub(crate) fn add_foreign_drops(t: &mut FlowTable, sims: &[Simulation]) {
    if sims.iter().any(|s| s.part.as_deref().is_some_and(|p| !p.dropped.is_empty())) {
        let row: std::collections::HashMap<u32, usize> = t.flow_id.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        for s in sims.iter() {
            for (&f, &b) in s.part.as_deref().map(|p| &p.dropped).into_iter().flatten() {
                if let Some(&i) = row.get(&f) {
                    t.dropped_bytes[i] += b;
                }
            }
        }
    }
}

/// Each flow's row from its two halves (see the module docs).
pub(crate) fn merge_flows(parts: &[FlowTable], owner: &dyn Fn(u32) -> usize) -> FlowTable {
    let mut t = parts[0].clone();
    for i in 0..t.len() {
        let (src, dst) = (owner(t.src[i]), owner(t.dst[i]));
        let (s, d) = (&parts[src], &parts[dst]);
        debug_assert_eq!(s.flow_id[i], t.flow_id[i]);
        t.finish_ps[i] = d.finish_ps[i];
        t.fct_ps[i] = d.fct_ps[i];
        t.slowdown[i] = d.slowdown[i];
        t.delivered_bytes[i] = d.delivered_bytes[i];
        t.ack_finish_ps[i] = s.ack_finish_ps[i];
        t.ack_fct_ps[i] = s.ack_fct_ps[i];
        t.retx_bytes[i] = s.retx_bytes[i];
        t.dropped_bytes[i] = parts.iter().map(|p| p.dropped_bytes[i]).sum();
    }
    t
}

/// The id of metric `name` in `names`, added at the end if new.
fn metric_id(names: &mut Vec<String>, name: &str) -> u16 {
    match names.iter().position(|n| n == name) {
        Some(i) => i as u16,
        None => {
            names.push(name.to_string());
            (names.len() - 1) as u16
        }
    }
}

fn merge_counters(parts: &[RunStats], sims: &[Simulation]) -> crate::stats::Counters {
    let mut c = parts[0].counters.clone();
    let sum = |f: &dyn Fn(&crate::stats::Counters) -> u64| parts.iter().map(|p| f(&p.counters)).sum::<u64>();
    let max = |f: &dyn Fn(&crate::stats::Counters) -> u64| parts.iter().map(|p| f(&p.counters)).max().unwrap_or(0);
    // every partition handles the flow arrivals and samples itself: count them once
    let singles = sims[0].singles;
    c.events = sims.iter().map(|s| s.sched.popped - s.singles).sum::<u64>() + singles;
    c.packets_sent = sum(&|c| c.packets_sent);
    c.data_bytes_sent = sum(&|c| c.data_bytes_sent);
    c.data_bytes_delivered = sum(&|c| c.data_bytes_delivered);
    c.data_bytes_dropped = sum(&|c| c.data_bytes_dropped);
    c.data_bytes_in_flight = sum(&|c| c.data_bytes_in_flight);
    c.drops = sum(&|c| c.drops);
    c.drops_loss = sum(&|c| c.drops_loss);
    c.drops_link_down = sum(&|c| c.drops_link_down);
    c.drops_unreachable = sum(&|c| c.drops_unreachable);
    c.ack_bytes = sum(&|c| c.ack_bytes);
    c.nack_bytes = sum(&|c| c.nack_bytes);
    c.cnp_bytes = sum(&|c| c.cnp_bytes);
    c.pfc_bytes = sum(&|c| c.pfc_bytes);
    c.queue_pause_bytes = sum(&|c| c.queue_pause_bytes);
    c.credit_bytes = sum(&|c| c.credit_bytes);
    c.dst_pause_bytes = sum(&|c| c.dst_pause_bytes);
    c.flow_pause_bytes = sum(&|c| c.flow_pause_bytes);
    c.other_ctrl_bytes = sum(&|c| c.other_ctrl_bytes);
    c.pauses_sent = sum(&|c| c.pauses_sent);
    c.resumes_sent = sum(&|c| c.resumes_sent);
    c.timeouts = sum(&|c| c.timeouts);
    c.nacks = sum(&|c| c.nacks);
    c.out_of_order = sum(&|c| c.out_of_order);
    c.cnps = sum(&|c| c.cnps);
    c.max_switch_buffer_bytes = max(&|c| c.max_switch_buffer_bytes);
    c
}
