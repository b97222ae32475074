//! Hand-written flow lists for scenario files (micro-benchmarks such as "two flows share a
//! link", or the P-PFC §5.4 16:1 incast with per-host rates).
//!
//! Why a separate type: scenario files state times in whole nanoseconds, which reads better
//! than picoseconds and cannot carry float rounding; `prio` and `incast` may be left out.

use super::{sort_flows, FlowSpec, DEFAULT_PRIO};
use crate::time::{Time, PS_PER_NS};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExplicitFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start_ns: u64,
    #[serde(default = "default_prio")]
    pub prio: u8,
    /// Tag the flow as part of an incast for the metrics (default false).
    #[serde(default)]
    pub incast: bool,
    /// Pace the flow at no more than this rate (left out of the JSON when unset, so scenarios
    /// without caps keep their hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_cap: Option<crate::time::Rate>,
}

fn default_prio() -> u8 {
    DEFAULT_PRIO
}

impl ExplicitFlow {
    /// Checks and converts one flow; `index` (0-based) names it in errors.
    pub fn to_flow(&self, index: usize) -> Result<FlowSpec, String> {
        if self.src == self.dst {
            return Err(format!("flow {index}: src and dst are both {}", self.src));
        }
        if self.size == 0 {
            return Err(format!("flow {index}: size must be at least 1 byte"));
        }
        if self.rate_cap == Some(crate::time::Rate(0)) {
            return Err(format!("flow {index}: rate_cap must be above 0 bps"));
        }
        let ps = self
            .start_ns
            .checked_mul(PS_PER_NS)
            .ok_or_else(|| format!("flow {index}: start_ns {} is too large", self.start_ns))?;
        Ok(FlowSpec {
            src: self.src,
            dst: self.dst,
            size: self.size,
            start: Time(ps),
            prio: self.prio,
            incast: self.incast,
            dport: super::DEFAULT_DPORT,
            sport: 0,
            pg: 0,
            rate_cap: self.rate_cap,
        })
    }
}

/// Converts a list, sorted by start time (then src, dst).
pub fn explicit_flows(list: &[ExplicitFlow]) -> Result<Vec<FlowSpec>, String> {
    let mut v = list.iter().enumerate().map(|(i, f)| f.to_flow(i)).collect::<Result<Vec<_>, _>>()?;
    sort_flows(&mut v);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ef(src: u32, dst: u32, size: u64, start_ns: u64) -> ExplicitFlow {
        ExplicitFlow { src, dst, size, start_ns, prio: DEFAULT_PRIO, incast: false, rate_cap: None }
    }

    #[test]
    fn converts_and_sorts() {
        let v = explicit_flows(&[ef(1, 2, 1000, 50), ef(3, 4, 10, 0)]).unwrap();
        assert_eq!(v[0].start, Time::ZERO);
        assert_eq!(v[1].start, Time::from_ns(50));
        assert_eq!((v[1].src, v[1].dst, v[1].size, v[1].prio), (1, 2, 1000, 3));
    }

    #[test]
    fn rejects_bad_flows_by_index() {
        assert!(explicit_flows(&[ef(1, 2, 1, 0), ef(5, 5, 1, 0)]).unwrap_err().contains("flow 1"));
        assert!(explicit_flows(&[ef(1, 2, 0, 0)]).unwrap_err().contains("flow 0"));
        assert!(explicit_flows(&[ef(1, 2, 1, u64::MAX)]).unwrap_err().contains("too large"));
    }
}
