"""Floodgate-NS3's input files (NASA-NJU/Floodgate-NS3, read by its ``scratch/third.cc``), turned
into the HPCC simulator's formats that hopsim reads (`topology.kind = "hpcc"`, `workload.kind =
"hpcc_flows"`), for `hopsim import-floodgate`.

- Topology (``TOPOLOGY_FILE``, e.g. ``mix/leafspine-10ToR-4Core.topo``): a first line ``nodes
  switches hosts_per_rack racks cores links``, then the switch ids one per line, then ``a b
  rate_gbps delay_ns`` per link (third.cc reads rates in Gb/s and delays in ns, no error rate).
- Flow file (``FLOW_FILE`` with ``FLOW_FROM_FILE 1``): ``flow_num qp_flow``, then ``src dst size
  start_seconds`` per flow, with ``qp_id msg_seq`` after them when ``qp_flow`` is 1.
- The flows it drew (``FLOW_FROM_FILE 0``): its standard output, whose flow lines
  `scripts/ns3_flow_list.py` reads, or the HPCC flow file that script writes from them.
- ``FLOODGATE_CONFIG_FILE``: ``switches rule_switches voqs_per_group dynamic_hash``, the ids of
  the switches running Floodgate, then per rule switch its VOQ groups and destination rules.

Each reader names the file, line and field of what it cannot read (a `ScenarioError`, exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import ScenarioError
from ..ports import nth_of_source

__all__ = ["Topology", "drawn_flows", "read_topology", "read_flow_file", "read_drawn_flows", "read_fg_config", "hpcc_topology", "hpcc_flows", "source_ports"]

FLOW_LINE = re.compile(r"^(\d+) (\d+) (\d+) (\d+) (\d+\.\d+) (\d+) (\d+)$")
"""A flow as third.cc prints it when it installs it: `flow_id src dst size start qp_id msg_seq`
(the pattern `scripts/ns3_flow_list.py` reads)."""

Flow = tuple[int, int, int, str]
"""(src, dst, size in bytes, start in seconds as written)."""


@dataclass
class Topology:
    nodes: int
    switches: list[int]
    hosts_per_rack: int
    racks: int
    cores: int
    links: list[tuple[int, int, int, int]]
    """(a, b, rate in Gb/s, delay in ns), in file order."""


def _rows(text: str) -> list[tuple[int, list[str]]]:
    return [(no, line.split()) for no, line in enumerate(text.splitlines(), 1) if line.strip()]


def _int(path: Path, no: int, field: str, s: str, low: int = 0) -> int:
    try:
        v = int(s)
    except ValueError:
        raise ScenarioError(f"{path} line {no}: {field}: {s!r} is not a whole number") from None
    if v < low:
        raise ScenarioError(f"{path} line {no}: {field}: {v}; allowed: {low} or more")
    return v


def read_topology(path: Path, text: str) -> Topology:
    """Floodgate-NS3's topology file, read by the counts its first line declares."""
    rows = _rows(text)
    if not rows or len(rows[0][1]) < 6:
        no = rows[0][0] if rows else 1
        raise ScenarioError(f"{path} line {no}: expected `nodes switches hosts_per_rack racks cores links` "
                            "(Floodgate-NS3's topology header)")
    no, head = rows[0]
    names = ("nodes", "switches", "hosts_per_rack", "racks", "cores", "links")
    n, s, hpr, racks, cores, nl = (_int(path, no, f, v) for f, v in zip(names, head))
    if len(rows) < 1 + s + nl:
        raise ScenarioError(f"{path}: declares {s} switches and {nl} links but has {len(rows) - 1} lines after its header")
    switches = []
    for no, f in rows[1 : 1 + s]:
        sw = _int(path, no, "switch id", f[0])
        if sw >= n:
            raise ScenarioError(f"{path} line {no}: switch id: {sw} is not a node (nodes 0 to {n - 1})")
        switches.append(sw)
    links = []
    for no, f in rows[1 + s : 1 + s + nl]:
        if len(f) < 4:
            raise ScenarioError(f"{path} line {no}: expected `a b rate_gbps delay_ns`, got {' '.join(f)!r}")
        a, b = _int(path, no, "a", f[0]), _int(path, no, "b", f[1])
        rate, delay = _int(path, no, "rate_gbps", f[2], 1), _int(path, no, "delay_ns", f[3])
        for field, v in (("a", a), ("b", b)):
            if v >= n:
                raise ScenarioError(f"{path} line {no}: {field}: {v} is not a node (nodes 0 to {n - 1})")
        links.append((a, b, rate, delay))
    return Topology(n, switches, hpr, racks, cores, links)


def hpcc_topology(t: Topology) -> str:
    """The same network in the HPCC simulator's topology format (error rate 0 on every link)."""
    lines = [f"{t.nodes} {len(t.switches)} {len(t.links)}", " ".join(str(s) for s in t.switches)]
    lines += [f"{a} {b} {r}Gbps {d}ns 0" for a, b, r, d in t.links]
    return "\n".join(lines) + "\n"


def read_flow_file(path: Path, text: str) -> list[Flow]:
    """Floodgate-NS3's FLOW_FILE (`flow_num qp_flow`, then one flow a line)."""
    rows = _rows(text)
    if not rows or len(rows[0][1]) < 2:
        raise ScenarioError(f"{path} line {rows[0][0] if rows else 1}: expected `flow_num qp_flow` (Floodgate-NS3's flow file header)")
    no, head = rows[0]
    count, qp = _int(path, no, "flow_num", head[0]), _int(path, no, "qp_flow", head[1])
    if qp not in (0, 1):
        raise ScenarioError(f"{path} line {no}: qp_flow: {qp}; allowed: 0 or 1")
    want = 6 if qp else 4
    if len(rows) - 1 < count:
        raise ScenarioError(f"{path}: declares {count} flows but has {len(rows) - 1}")
    out = []
    for no, f in rows[1 : 1 + count]:
        if len(f) < want:
            raise ScenarioError(f"{path} line {no}: expected `src dst size start_seconds{' qp_id msg_seq' if qp else ''}`, "
                                f"got {' '.join(f)!r}")
        src, dst, size = _int(path, no, "src", f[0]), _int(path, no, "dst", f[1]), _int(path, no, "size", f[2], 1)
        try:
            if not float(f[3]) >= 0:
                raise ValueError
        except ValueError:
            raise ScenarioError(f"{path} line {no}: start_seconds: {f[3]!r} is not a time in seconds, 0 or more") from None
        out.append((src, dst, size, f[3]))
    return out


def drawn_flows(stdout: str) -> list[Flow]:
    """(src, dst, size, start as printed) of every flow its standard output shows installed, in
    installation order. Other lines (settings, thresholds, progress) never have seven fields of
    this shape."""
    out = []
    for line in stdout.splitlines():
        m = FLOW_LINE.match(line.strip())
        if m:
            out.append((int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)))
    return out


def read_drawn_flows(path: Path, text: str) -> list[Flow] | None:
    """The flows of a run that drew its own (FLOW_FROM_FILE 0), from its standard output; `None`
    when the text is an HPCC flow file already (a first line that is a single count)."""
    first = next((line.split() for line in text.splitlines() if line.strip()), [])
    if len(first) == 1 and first[0].isdigit():
        return None
    out = drawn_flows(text)
    if not out:
        raise ScenarioError(f"{path}: no flow line (`flow_id src dst size start qp_id msg_seq`, as third.cc prints each "
                            "flow it installs) and not an HPCC flow file either; give the simulator's standard output "
                            "or `scripts/ns3_flow_list.py`'s output")
    return out


FIRST_PORT = 10000
"""Its first source port of every host (third.cc line 3223)."""


def source_ports(flows: list[Flow]) -> list[int]:
    """Each flow's source port as third.cc gives it: one counter per source host from 10000,
    taken as it installs the flows in its list's order (`port = portNumder[src]++`, lines
    3220-3224; the flow file's order at line 3261, the order it prints the flows it drew at line
    3358), not in start order. Its incast generator lists every incast's flows before the Poisson
    flows, so a host's flow in a later incast has a lower port than its Poisson flows that start
    earlier, and the ECMP hash (which reads the port) sends it by another core than a count in
    start order would."""
    return [(FIRST_PORT + k) % 65536 for k in nth_of_source(f[0] for f in flows)]


def hpcc_flows(flows: list[Flow], dports: list[int] | None = None, pgs: list[int] | None = None,
               sports: list[int] | None = None) -> str:
    """An HPCC flow file of these flows, priority 3 and dport 100 as third.cc sets them; or each
    flow's own dport, and hopsim's seventh and eighth fields, its priority group and source port
    (the BFC simulator's)."""
    dp = dports or [100] * len(flows)
    if sports:
        tail = [f" {g} {p}" for g, p in zip(pgs or [0] * len(flows), sports)]
    else:
        tail = [f" {g}" for g in pgs] if pgs else [""] * len(flows)
    return f"{len(flows)}\n" + "".join(f"{s} {d} 3 {p} {size} {start}{t}\n"
                                      for (s, d, size, start), p, t in zip(flows, dp, tail))


@dataclass
class FgConfig:
    switches: list[int]
    voqs: int
    dynamic_hash: bool
    rules: int


def read_fg_config(path: Path, text: str) -> FgConfig:
    """FLOODGATE_CONFIG_FILE (`{...}` comments dropped, as in its floodgate_config_doc.txt)."""
    clean = re.sub(r"\{[^}]*\}", " ", text)
    rows = _rows(clean)
    if not rows or len(rows[0][1]) < 4:
        raise ScenarioError(f"{path} line {rows[0][0] if rows else 1}: expected `switches rule_switches voqs_per_group "
                            "dynamic_hash` (floodgate_config_doc.txt)")
    no, head = rows[0]
    n, rules, voqs, dyn = (_int(path, no, f, v) for f, v in zip(("switches", "rule_switches", "voqs_per_group", "dynamic_hash"), head))
    if len(rows) < 1 + n:
        raise ScenarioError(f"{path}: declares {n} Floodgate switches but lists {len(rows) - 1}")
    switches = [_int(path, r, "switch id", f[0]) for r, f in rows[1 : 1 + n]]
    return FgConfig(switches, voqs, dyn != 0, rules)
