//! Reader for the HPCC ns-3 simulator's topology files (alibaba-edu/High-Precision-Congestion-
//! Control, `simulation/mix/*.txt`).
//!
//! Why: it lets hopsim run the very networks the HPCC paper and its followers simulate, so
//! results can be compared with ns-3's. Format: a header line `N S L` (node, switch and link
//! counts), a line of the S switch ids, then L lines `a b rate delay error_rate`. Ids not listed
//! as switches are hosts. The file has no switch tiers, so we infer them: tier = (hops to the
//! nearest host) - 1, which makes ToRs 0, aggregation 1 and core 2 in a fat-tree.
//!
//! Port numbering: a node's local port k is its (k+1)-th link in file order (`topo`'s ports
//! follow link order, and `assemble` numbers each node's ports in that order). The simulator
//! creates one device per link end in the same order after the loopback device 0, so local port
//! k is ns-3's interface index k + 1 (what its pfc.txt and qlen.txt print).

use super::units::{parse_rate, parse_time};
use super::{NodeKind, Topology};
use std::collections::VecDeque;

/// Parses an HPCC topology file, dropping the warnings of [`read_hpcc_topology`].
pub fn parse_hpcc_topology(text: &str) -> Result<Topology, String> {
    read_hpcc_topology(text).map(|(t, _)| t)
}

/// Parses an HPCC topology file, dropping the links' error rates (see [`read_hpcc_file`]).
pub fn read_hpcc_topology(text: &str) -> Result<(Topology, Vec<String>), String> {
    read_hpcc_file(text).map(|f| (f.topo, f.warnings))
}

/// What an HPCC topology file says: the network, the warnings of its reading, and the links
/// with a non-zero error rate.
#[derive(Clone, Debug, PartialEq)]
pub struct HpccFile {
    pub topo: Topology,
    pub warnings: Vec<String>,
    /// `(a, b, error rate)` of each link line whose error rate is above 0: the probability that
    /// a packet crossing it is lost (the simulator's `RateErrorModel` per packet on both ends,
    /// in place of ERROR_RATE_PER_LINK's). Runs apply them as `faults.link_loss` (`faults.rs`).
    pub loss: Vec<(u32, u32, f64)>,
}

/// Parses an HPCC topology file as the simulator reads it (`main` in its `scratch/third.cc`
/// reads `N S L`, S switch ids, then L links, by count). Returns the topology, warnings and the
/// links' non-zero error rates.
///
/// Lenient where the simulator is: blank lines are skipped, the switch ids may wrap over several
/// lines, a link line may omit the error rate, and text after the L-th link (the repository's
/// `mix/topology.txt` ends with a format note) is ignored with a warning. Errors name the
/// 1-based line and the field: a malformed line within the declared counts, fewer links than
/// declared, an error rate that is not a probability, or a host with no link. A host with
/// several links (its `ali_32host_10rack.txt` dual-homes every host) gets one NIC per link, as
/// in the simulator (`net::nic_choice`). The result passes `Topology::validate`.
pub fn read_hpcc_file(text: &str) -> Result<HpccFile, String> {
    let mut lines = content_lines(text);

    let header = "a header `N S L` (node, switch and link counts)";
    let Some((hl, l)) = lines.next() else {
        return Err(format!("line 1: expected {header}, found an empty file"));
    };
    let counts: Vec<usize> = l
        .split_whitespace()
        .map(|f| f.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("line {hl}: expected {header}, found {l:?}"))?;
    let [n, s, nl] = counts[..] else {
        return Err(format!("line {hl}: expected {header}, found {l:?}"));
    };
    if n == 0 || n > (u32::MAX / 2) as usize {
        return Err(format!("line {hl}: node count {n} must be between 1 and {}", u32::MAX / 2));
    }
    if s > n {
        return Err(format!("line {hl}: switch count {s} exceeds node count {n}"));
    }
    if n - 1 > nl {
        return Err(format!(
            "line {hl}: {n} nodes need at least {} links to be connected, but the header declares {nl}",
            n - 1
        ));
    }

    // the switch ids: S tokens, which may wrap over lines (the simulator reads tokens)
    let mut switches: Vec<u32> = Vec::with_capacity(s);
    let mut switch_lines = (0, 0);
    while switches.len() < s {
        let Some((ln, l)) = lines.next() else {
            return Err(format!(
                "line {hl}: the header declares {}, but the file ends after {}",
                plural(s, "switch", "switches"),
                plural(switches.len(), "switch id", "switch ids")
            ));
        };
        switch_lines = (if switch_lines.0 == 0 { ln } else { switch_lines.0 }, ln);
        for f in l.split_whitespace() {
            match f.parse::<u32>() {
                Ok(id) if (id as usize) < n => switches.push(id),
                _ => return Err(format!("line {ln}: switch id '{f}' is not a node id below {n}")),
            }
        }
        if switches.len() > s {
            return Err(format!(
                "line {ln}: the header (line {hl}) declares {}, but the switch id lines list {}",
                plural(s, "switch", "switches"),
                switches.len()
            ));
        }
    }
    let switch_where = match switch_lines {
        (0, _) => "line 2".to_string(),
        (a, b) if a == b => format!("line {a}"),
        (a, b) => format!("lines {a} to {b}"),
    };
    let mut sorted = switches.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("{switch_where}: switch id {} is listed twice", w[0]));
    }

    let mut links = Vec::with_capacity(nl.min(1 << 16));
    let mut loss = Vec::new();
    for i in 0..nl {
        let Some((ln, l)) = lines.next() else {
            return Err(format!(
                "line {hl}: the header declares {}, but the file has only {}",
                plural(nl, "link", "links"),
                plural(i, "link line", "link lines")
            ));
        };
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 4 && f.len() != 5 {
            return Err(format!(
                "line {ln}: link {} of {nl}: expected 5 fields `a b rate delay error_rate`, found {} in {l:?}",
                i + 1,
                f.len()
            ));
        }
        let node = |x: &str, end: &str| match x.parse::<u32>() {
            Ok(id) if (id as usize) < n => Ok(id),
            _ => Err(format!("line {ln}: link end {end} '{x}' is not a node id below {n}")),
        };
        let (a, b) = (node(f[0], "a")?, node(f[1], "b")?);
        if a == b {
            return Err(format!("line {ln}: link joins node {a} to itself"));
        }
        let rate = parse_rate(f[2]).map_err(|e| format!("line {ln}: rate '{}' is not a link rate: {e}", f[2]))?;
        if rate.0 == 0 {
            return Err(format!("line {ln}: rate '{}' must be positive", f[2]));
        }
        let delay =
            parse_time(f[3]).map_err(|e| format!("line {ln}: delay '{}' is not a link delay: {e}", f[3]))?;
        if let Some(e) = f.get(4) {
            match e.parse::<f64>() {
                Ok(0.0) => {}
                Ok(v) if v > 0.0 && v <= 1.0 => loss.push((a, b, v)),
                Ok(v) if v.is_finite() => {
                    return Err(format!(
                        "line {ln}: error rate {e} is not a probability; allowed: 0 (lossless) to 1"
                    ))
                }
                _ => {
                    return Err(format!(
                        "line {ln}: error rate '{e}' is not a number; allowed: 0 (lossless) to 1"
                    ))
                }
            }
        }
        links.push(super::LinkSpec { a, b, rate, delay });
    }
    let what = format!("the {nl} links that line {hl} declares");
    let warnings: Vec<String> = ignored_tail(lines, &what).into_iter().collect();

    let mut nodes = vec![NodeKind::Host; n];
    for &id in &switches {
        nodes[id as usize] = NodeKind::Switch { tier: 0 };
    }
    check_host_links(&nodes, &links, &switch_where)?;
    let mut topo = Topology { nodes, links };
    topo.validate()?;
    infer_tiers(&mut topo)?;
    Ok(HpccFile { topo, warnings, loss })
}

/// Each host must have a link. (Several are fine: one NIC per link, `net::nic_choice`.)
fn check_host_links(nodes: &[NodeKind], links: &[super::LinkSpec], switch_where: &str) -> Result<(), String> {
    let mut linked = vec![false; nodes.len()];
    for l in links {
        linked[l.a as usize] = true;
        linked[l.b as usize] = true;
    }
    match (0..nodes.len()).find(|&h| nodes[h] == NodeKind::Host && !linked[h]) {
        Some(h) => Err(format!("node {h} is a host (not among the switch ids on {switch_where}), but no link line names it")),
        None => Ok(()),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The non-blank lines of `text`, trimmed, with their 1-based line numbers.
pub(crate) fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty())
}

/// The warning for non-blank lines left after all that a file declares (`what`): the HPCC
/// simulator reads by count and never looks at them, so neither does hopsim. `None` if there
/// are none.
pub(crate) fn ignored_tail<'a>(mut rest: impl Iterator<Item = (usize, &'a str)>, what: &str) -> Option<String> {
    let (first_no, first) = rest.next()?;
    let (n, last_no) = rest.fold((1usize, first_no), |(k, _), (no, _)| (k + 1, no));
    let head = if n == 1 {
        format!("line {first_no}: 1 line after {what} is ignored")
    } else {
        format!("lines {first_no} to {last_no}: {n} lines after {what} are ignored")
    };
    let shown = if n == 1 { "" } else { ", the first" };
    Some(format!("{head} (as the HPCC simulator does){shown}: {first:?}"))
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
    fn errors_name_line_and_field() {
        assert_eq!(err(""), "line 1: expected a header `N S L` (node, switch and link counts), found an empty file");
        assert!(err("3 1\n").contains("line 1: expected a header"));
        assert!(err("\n3 x 2\n").starts_with("line 2: expected a header"));
        assert!(err("3 4 2\n").contains("line 1: switch count 4 exceeds node count 3"));
        assert_eq!(err("3 1 2\n"), "line 1: the header declares 1 switch, but the file ends after 0 switch ids");
        let e = err("3 1 2\n2 1\n");
        assert_eq!(e, "line 2: the header (line 1) declares 1 switch, but the switch id lines list 2");
        assert_eq!(err("3 1 2\n7\n"), "line 2: switch id '7' is not a node id below 3");
        assert_eq!(err("4 2 3\n2\n2\n"), "lines 2 to 3: switch id 2 is listed twice");
        assert_eq!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n"), "line 1: the header declares 2 links, but the file has only 1 link line");
        let e = err("3 1 2\n2\n0 2 25Gbps 1us 0\n1 2 10Gbps\n");
        assert!(e.starts_with("line 4: link 2 of 2: expected 5 fields `a b rate delay error_rate`, found 3"), "{e}");
        assert_eq!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n1 5 10Gbps 1us 0\n"), "line 4: link end b '5' is not a node id below 3");
        assert_eq!(err("3 1 2\n2\n0 2 25Gbps 1us 0\nx 2 10Gbps 1us 0\n"), "line 4: link end a 'x' is not a node id below 3");
        assert_eq!(err("3 1 2\n2\n0 2 25Gbps 1us 0\n2 2 10Gbps 1us 0\n"), "line 4: link joins node 2 to itself");
        assert!(err("3 1 2\n2\n0 2 25Gbit 1us 0\n1 2 10Gbps 1us 0\n").starts_with("line 3: rate '25Gbit' is not a link rate"));
        assert!(err("3 1 2\n2\n0 2 0Gbps 1us 0\n1 2 10Gbps 1us 0\n").starts_with("line 3: rate '0Gbps' must be positive"));
        assert!(err("3 1 2\n2\n0 2 25Gbps 1 0\n1 2 10Gbps 1us 0\n").starts_with("line 3: delay '1' is not a link delay"));
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us 1.5\n1 2 10Gbps 1us 0\n")
            .starts_with("line 3: error rate 1.5 is not a probability"));
        let f = read_hpcc_file("3 1 2\n2\n0 2 25Gbps 1us 0.1\n1 2 10Gbps 1us 0\n").unwrap();
        assert_eq!(f.loss, vec![(0, 2, 0.1)], "a non-zero error rate is the link's loss");
        assert!(err("3 1 2\n2\n0 2 25Gbps 1us x\n1 2 10Gbps 1us 0\n")
            .starts_with("line 3: error rate 'x' is not a number"));
        assert!(err("4000000000 1 0\n0\n").contains("node count"));
        assert!(err("1000000 1 1\n0\n0 1 1Gbps 1us\n").contains("line 1: 1000000 nodes need at least 999999 links"));
        assert_eq!(
            err("4 1 3\n3\n0 3 1Gbps 1us\n1 3 1Gbps 1us\n0 1 1Gbps 1us\n"),
            "node 2 is a host (not among the switch ids on line 2), but no link line names it"
        );
        assert!(err("2 2 1\n0 1\n0 1 1Gbps 1us\n").contains("at least one host"));
    }

    #[test]
    fn text_after_the_links_is_a_warning() {
        // as the HPCC repository's mix/topology.txt: a format note after the declared links
        let text = "3 1 2\n2\n0 2 25Gbps 1us 0\n1 2 10Gbps 1us 0\n\nsrc0 dst0 rate delay error_rate\n\
                    src1 dst1 rate delay error_rate\n...\n";
        let (t, w) = read_hpcc_topology(text).unwrap();
        assert_eq!(t.links.len(), 2);
        assert_eq!(
            w,
            vec!["lines 6 to 8: 3 lines after the 2 links that line 1 declares are ignored (as the HPCC simulator \
                  does), the first: \"src0 dst0 rate delay error_rate\""
                .to_string()]
        );
        assert!(read_hpcc_topology("2 0 1\n0 1 1Gbps 1us\n\n").unwrap().1.is_empty());
        // switch ids may wrap, as the simulator reads tokens
        let t = parse_hpcc_topology("4 2 3\n2\n3\n0 2 1Gbps 1us\n1 3 1Gbps 1us\n2 3 1Gbps 1us\n").unwrap();
        assert_eq!(t.switch_ids(), vec![2, 3]);
    }

    #[test]
    fn hosts_with_several_links_get_one_port_per_link() {
        // hosts 0 and 1 dual-homed to switches 2 and 3, as ali_32host_10rack.txt does
        let text = "4 2 5\n2 3\n0 2 25Gbps 1us 0\n0 3 25Gbps 1us 0\n1 2 25Gbps 1us 0\n1 3 25Gbps 1us 0\n2 3 100Gbps 1us 0\n";
        let t = parse_hpcc_topology(text).unwrap();
        assert_eq!(t.host_ids(), vec![0, 1]);
        let peers: Vec<u32> = t.neighbours(0).into_iter().map(|(_, peer)| peer).collect();
        assert_eq!(peers, vec![2, 3]);
        assert_eq!((t.tier(2), t.tier(3)), (Some(0), Some(0)));
    }

    #[test]
    fn local_ports_follow_link_order() {
        // switch 3's links are lines 4, 5 and 6 of the file: its local ports 0, 1, 2 (ns-3
        // devices 1, 2, 3) lead to hosts 1, 0 and 2 in that order
        let t = parse_hpcc_topology("4 1 3\n3\n1 3 1Gbps 1us\n3 0 1Gbps 1us\n2 3 1Gbps 1us\n").unwrap();
        let peers: Vec<u32> = t.neighbours(3).into_iter().map(|(_, peer)| peer).collect();
        assert_eq!(peers, vec![1, 0, 2]);
    }
}
