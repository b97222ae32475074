//! Workloads: flow-size distributions, arrival processes, incast and flow lists, all producing a
//! list of `FlowSpec`s sorted by start time, or the same flows streamed as the run asks for them
//! (`stream::FlowStream`).

use crate::time::Time;
use serde::{Deserialize, Serialize};

/// One flow to simulate. `src` and `dst` are node ids of hosts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Time,
    /// Traffic class (PFC priority); HPCC's flow files carry it, 3 by default.
    pub prio: u8,
    /// Part of an incast burst (the metrics split FCTs by this tag).
    pub incast: bool,
    /// Destination port as the HPCC simulator's flow files give it (`dport`; its traffic
    /// generator writes 100, incast tools tag flows by it). It is carried to the FCT export and,
    /// with `sport`, hashed by `routing.ecmp = "hpcc"`.
    #[serde(default = "default_dport")]
    pub dport: u16,
    /// Source port: 0 until the run is assembled, then numbered as the HPCC simulator's `third.cc`
    /// does (each (src, dst) host pair counts from 10000 in flow order; `number_sports`), unless a
    /// flow file gave it (its eighth field: a seed simulator's own ports, which its hashes read).
    #[serde(default)]
    pub sport: u16,
    /// The priority-group field of the BFC simulator's packets (its `SeqTsHeader`'s PG, a per-flow
    /// draw), which its ECMP hashes with the addresses and ports (`routing.ecmp = "ns3_global"`);
    /// a flow file's optional seventh field. 0 elsewhere, and left out of the JSON then.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pg: u16,
    /// The sender's NIC paces this flow at no more than this rate (issue 13: P-PFC Fig. 9a's
    /// per-host rates, FlowSail Fig. 8's 60/20/20 Gb/s flows): min(congestion control's rate,
    /// cap). `None`: the congestion control's rate alone. Assembly folds the host caps of
    /// `transport.rate_cap` / `host_rate_caps` into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_cap: Option<crate::time::Rate>,
}

/// The dport of HPCC traffic_gen's flow lines, and of flows that do not name one.
pub const DEFAULT_DPORT: u16 = 100;
fn is_zero(v: &u16) -> bool {
    *v == 0
}
fn default_dport() -> u16 {
    DEFAULT_DPORT
}

/// First source port of every host pair in the HPCC simulator (`portNumder[i][j] = 10000`).
pub const FIRST_SPORT: u16 = 10000;

/// Number source ports as `third.cc` does: per (src, dst) pair from 10000, in the order of
/// `flows` (by start time, as its flow file is read), wrapping at 65535 as its uint16 does; a
/// flow that has one keeps it and takes none of its pair's.
pub fn number_sports(flows: &mut [FlowSpec]) {
    let mut next: std::collections::HashMap<(u32, u32), u16> = std::collections::HashMap::new();
    for f in flows.iter_mut().filter(|f| f.sport == 0) {
        let n = next.entry((f.src, f.dst)).or_insert(FIRST_SPORT);
        f.sport = *n;
        *n = n.wrapping_add(1);
    }
}

pub mod arrivals;
pub mod background;
pub mod cdf;
pub mod explicit;
pub mod flow_file;
pub mod incast;
pub mod incast_presets;
pub mod mix;
pub mod stream;
#[cfg(test)]
mod stream_tests;

/// Traffic class of flows that do not name one: HPCC's flow files and traffic_gen use 3.
pub const DEFAULT_PRIO: u8 = 3;

/// Sorts flows by start time, ties by (src, dst). Stable: flows with equal keys keep the order
/// their generator gave them, so the list (hence the run) depends only on the generators.
pub fn sort_flows(v: &mut [FlowSpec]) {
    v.sort_by_key(arrival_key);
}

/// The order of a run's flows: start time, then (src, dst). One definition for `sort_flows` and
/// the stream's merge (`stream::Merge`), whose equality with the sorted list depends on it.
#[inline]
pub(crate) fn arrival_key(f: &FlowSpec) -> (Time, u32, u32) {
    (f.start, f.src, f.dst)
}

/// Checks a host list: at least `min` hosts, no id twice (a duplicate would bias the uniform
/// draws and could pair a host with itself).
pub(crate) fn check_hosts(hosts: &[u32], min: usize) -> Result<(), String> {
    if hosts.len() < min {
        return Err(format!("need at least {min} hosts, got {}", hosts.len()));
    }
    let mut seen = hosts.to_vec();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("host {} is listed more than once", w[0]));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A flow of the default class and port (shared by the workload tests).
    pub(crate) fn f(src: u32, dst: u32, start: u64, size: u64) -> FlowSpec {
        FlowSpec { src, dst, size, start: Time(start), prio: DEFAULT_PRIO, incast: false, dport: DEFAULT_DPORT, sport: 0, pg: 0, rate_cap: None }
    }

    #[test]
    fn sort_is_by_start_then_src_dst_and_stable() {
        let mut v = vec![f(2, 1, 5, 1), f(1, 3, 5, 2), f(1, 2, 5, 3), f(9, 9, 1, 4), f(1, 2, 5, 5)];
        sort_flows(&mut v);
        let sizes: Vec<u64> = v.iter().map(|x| x.size).collect();
        assert_eq!(sizes, vec![4, 3, 5, 2, 1]);
    }

    #[test]
    fn host_checks() {
        assert!(check_hosts(&[1, 2], 2).is_ok());
        assert!(check_hosts(&[1], 2).is_err());
        assert!(check_hosts(&[3, 1, 3], 1).unwrap_err().contains("host 3"));
    }
}
