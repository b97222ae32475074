//! Reader for the HPCC ns-3 simulator's topology files (alibaba-edu/High-Precision-Congestion-
//! Control, `simulation/mix/*.txt`).
//!
//! Why: it lets hopsim run the very networks the HPCC paper and its followers simulate, so
//! results can be compared with ns-3's. Format: a header line `N S L` (node, switch and link
//! counts), a line of the S switch ids, then L lines `a b rate delay error_rate`. Ids not listed
//! as switches are hosts. The file has no switch tiers, so we infer them: tier = (hops to the
//! nearest host) - 1, which makes ToRs 0, aggregation 1 and core 2 in a fat-tree.

use super::units::{parse_rate, parse_time};
use super::{NodeKind, Topology};
use std::collections::VecDeque;

/// Parses an HPCC topology file. Errors name the line (1-based) and what was expected.
///
/// Blank lines are skipped. A link line may omit the error rate; a non-zero error rate is
/// rejected because hopsim's links are lossless. Lines after the L-th link are an error, so a
/// wrong `L` does not go unnoticed. The result passes `Topology::validate`.
pub fn parse_hpcc_topology(text: &str) -> Result<Topology, String> {
    let mut lines =
        text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty());
    let mut last = 0;
    let mut next = |what: &str| -> Result<(usize, &str), String> {
        match lines.next() {
            Some((n, l)) => {
                last = n;
                Ok((n, l))
            }
            None => Err(format!("line {}: expected {what}, found end of input", last + 1)),
        }
    };

    let header = "a header `N S L` (node, switch and link counts)";
    let (ln, l) = next(header)?;
    let counts: Vec<usize> = l
        .split_whitespace()
        .map(|f| f.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("line {ln}: expected {header}, found {l:?}"))?;
    let [n, s, nl] = counts[..] else {
        return Err(format!("line {ln}: expected {header}, found {l:?}"));
    };
    if n == 0 || n > (u32::MAX / 2) as usize {
        return Err(format!("line {ln}: node count {n} must be between 1 and {}", u32::MAX / 2));
    }
    if s > n {
        return Err(format!("line {ln}: switch count {s} exceeds node count {n}"));
    }

    let mut switches: Vec<u32> = Vec::with_capacity(s);
    if s > 0 {
        let what = format!("{s} switch ids");
        let (ln, l) = next(&what)?;
        for f in l.split_whitespace() {
            match f.parse::<u32>() {
                Ok(id) if (id as usize) < n => switches.push(id),
                _ => return Err(format!("line {ln}: expected a switch id below {n}, found {f:?}")),
            }
        }
        if switches.len() != s {
            return Err(format!("line {ln}: expected {what}, found {}", switches.len()));
        }
        let mut sorted = switches.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("line {ln}: switch id {} is listed twice", w[0]));
        }
    }

    let mut links = Vec::with_capacity(nl.min(1 << 16));
    for i in 0..nl {
        let what = format!("link {} of {nl} `a b rate delay error_rate`", i + 1);
        let (ln, l) = next(&what)?;
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 4 && f.len() != 5 {
            return Err(format!("line {ln}: expected {what}, found {l:?}"));
        }
        let node = |x: &str| match x.parse::<u32>() {
            Ok(id) if (id as usize) < n => Ok(id),
            _ => Err(format!("line {ln}: expected a node id below {n}, found {x:?}")),
        };
        let (a, b) = (node(f[0])?, node(f[1])?);
        if a == b {
            return Err(format!("line {ln}: link joins node {a} to itself"));
        }
        let rate = parse_rate(f[2]).map_err(|e| format!("line {ln}: bad link rate: {e}"))?;
        if rate.0 == 0 {
            return Err(format!("line {ln}: link rate must be positive, found {:?}", f[2]));
        }
        let delay = parse_time(f[3]).map_err(|e| format!("line {ln}: bad link delay: {e}"))?;
        if let Some(e) = f.get(4) {
            match e.parse::<f64>() {
                Ok(0.0) => {}
                Ok(v) if (0.0..=1.0).contains(&v) => {
                    return Err(format!(
                    "line {ln}: error rate {e} is not supported (links are lossless); expected 0"
                ))
                }
                _ => {
                    return Err(format!(
                        "line {ln}: expected an error rate (a number, 0), found {e:?}"
                    ))
                }
            }
        }
        links.push(super::LinkSpec { a, b, rate, delay });
    }
    if let Some((ln, l)) = lines.next() {
        return Err(format!("line {ln}: expected end of input after {nl} links, found {l:?}"));
    }
    if n > nl + 1 {
        return Err(format!(
            "{n} nodes need at least {} links to be connected, but the file has {nl}",
            n - 1
        ));
    }

    let mut nodes = vec![NodeKind::Host; n];
    for &id in &switches {
        nodes[id as usize] = NodeKind::Switch { tier: 0 };
    }
    let mut topo = Topology { nodes, links };
    topo.validate()?;
    infer_tiers(&mut topo)?;
    Ok(topo)
}

/// Sets each switch's tier to (hops from the nearest host) - 1 by one multi-source BFS.
fn infer_tiers(topo: &mut Topology) -> Result<(), String> {
    let adj = super::routes::adjacency(topo);
    let mut dist = vec![u32::MAX; topo.nodes.len()];
    let mut q: VecDeque<u32> = topo.hosts().collect();
    if q.is_empty() {
        return Err(
            "the file lists every node as a switch; switch tiers need at least one host".into()
        );
    }
    for &h in &q {
        dist[h as usize] = 0;
    }
    while let Some(u) = q.pop_front() {
        for &(_, v) in &adj[u as usize] {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                q.push_back(v);
            }
        }
    }
    for (i, node) in topo.nodes.iter_mut().enumerate() {
        if let NodeKind::Switch { tier } = node {
            *tier = u8::try_from(dist[i] - 1).map_err(|_| {
                format!("switch {i} is {} hops from any host; tiers stop at 255", dist[i])
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::time::{Rate, Time};

    pub(crate) const HPCC_320: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../benchmarks/hpcc-fat-tree-320.topo.txt");

    pub(crate) fn hpcc_320() -> Topology {
        let text = std::fs::read_to_string(HPCC_320)
            .unwrap_or_else(|e| panic!("benchmark file {HPCC_320} is needed by this test: {e}"));
        parse_hpcc_topology(&text).unwrap()
    }

    #[test]
    fn real_fat_tree_320() {
        let t = hpcc_320();
        assert_eq!(t.nodes.len(), 376);
        assert_eq!(t.links.len(), 480);
        assert_eq!(t.host_ids(), (0..320).collect::<Vec<u32>>());
        assert_eq!(t.switch_ids(), (320..376).collect::<Vec<u32>>());
        let host_links = t.links.iter().filter(|l| t.is_host(l.a) || t.is_host(l.b));
        assert!(host_links.clone().all(|l| l.rate == Rate::gbps(100)));
        assert_eq!(host_links.count(), 320);
        let fabric = t.links.iter().filter(|l| !t.is_host(l.a) && !t.is_host(l.b));
        assert!(fabric.clone().all(|l| l.rate == Rate::gbps(400)));
        assert_eq!(fabric.count(), 160);
        assert!(t.links.iter().all(|l| l.delay == Time::from_us(1)));
        let tier = |x| t.nodes.iter().filter(|n| **n == NodeKind::Switch { tier: x }).count();
        assert_eq!((tier(0), tier(1), tier(2)), (20, 20, 16));
        // ids 320..340 are ToRs, 340..360 aggregation, 360..376 core.
        assert_eq!(
            (t.tier(320), t.tier(339), t.tier(340), t.tier(359), t.tier(360), t.tier(375)),
            (Some(0), Some(0), Some(1), Some(1), Some(2), Some(2))
        );
    }

    #[test]
    fn small_file() {
        let t = parse_hpcc_topology("3 1 2\n2\n0 2 25Gbps 0.001ms 0\n1 2 10Gbps 1us\n\n").unwrap();
        assert_eq!(t.host_ids(), vec![0, 1]);
        assert_eq!(t.tier(2), Some(0));
        assert_eq!(t.links[0].rate, Rate::gbps(25));
        assert_eq!(t.links[1].delay, Time::from_us(1));
        // no switches: two hosts wired together.
        let t = parse_hpcc_topology("2 0 1\n0 1 1Mbps 1000ns 0.000000\n").unwrap();
        assert_eq!(t.n_hosts(), 2);
    }

    fn err(text: &str) -> String {
        parse_hpcc_topology(text).unwrap_err()
    }

    #[test]
    fn errors_name_line_and_expectation() {
        assert!(err("").starts_with("line 1: expected a header"));
        assert!(err("3 1\n").contains("line 1: expected a header"));
        assert!(err("3 x 2\n").contains("line 1"));
        assert!(err("3 4 2\n").contains("exceeds node count"));
        assert!(err("3 1 2\n").contains("line 2: expected 1 switch ids, found end"));
        assert!(err("3 1 2\n2 1\n").contains("line 2: expected 1 switch ids, found 2"));
        assert!(err("3 1 2\n7\n").contains("line 2: expected a switch id below 3"));
        assert!(err("3 2 2\n2 2\n").contains("listed twice"));
        let e = err("3 1 2\n2\n0 2 25Gbps 1us 0\n");
        assert!(e.contains("line 4: expected link 2 of 2"), "{e}");
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n1 2 10Gbps\n")
            .contains("line 4: expected link 2 of 2"));
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n1 5 10Gbps 1us 0\n")
            .contains("line 4: expected a node id below 3"));
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n2 2 10Gbps 1us 0\n")
            .contains("line 4: link joins node 2 to itself"));
        assert!(
            err("3 1 2\n2\n0 2 25Gbit 1us 0\n1 2 10Gbps 1us 0\n").contains("line 3: bad link rate")
        );
        assert!(err("3 1 2\n2\n0 2 0Gbps 1us 0\n1 2 10Gbps 1us 0\n")
            .contains("line 3: link rate must be positive"));
        assert!(
            err("3 1 2\n2\n0 2 25Gbps 1 0\n1 2 10Gbps 1us 0\n").contains("line 3: bad link delay")
        );
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us 0.1\n1 2 10Gbps 1us 0\n")
            .contains("line 3: error rate 0.1 is not supported"));
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us x\n1 2 10Gbps 1us 0\n")
            .contains("line 3: expected an error rate"));
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n1 2 10Gbps 1us 0\n\n9 9\n")
            .contains("line 6: expected end of input"));
        assert!(err("4000000000 1 0\n0\n").contains("node count"));
        assert!(err("1000000 1 1\n0\n0 1 1Gbps 1us\n").contains("at least 999999 links"));
        assert!(err("4 1 3\n3\n0 3 1Gbps 1us\n1 3 1Gbps 1us\n0 1 1Gbps 1us\n")
            .contains("host 2 is unreachable"));
        assert!(err("2 2 1\n0 1\n0 1 1Gbps 1us\n").contains("at least one host"));
    }
}
