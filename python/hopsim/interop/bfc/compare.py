"""The BFC paper's simulator's output on `hopsim compare-fct`'s terms: its finished flows as
`fct.FctRow`s with its own slowdown basis, its size buckets, and its switch-buffer lines
beside a hopsim run's buffer samples.

Slowdown basis (its ``calculate_fct_slowdown.py``, lines 79-92): with R the rate in Gb/s, N a
flow's packets and S its "Received" size (998 for full packets, else the one packet's size less
2; see `files`), the FCT is over

    same ToR:      4000 ns + (N + 1) x 8000/R ns (S = 998),  4000 ns + (N + 1) x S x 8/R ns (else)
    another ToR:   8000 ns + (N + 3) x 8000/R ns,            8000 ns + (N + 3) x S x 8/R ns

A flow whose "Received" line is missing is left out, as its script leaves it out. Its incast
flows are those of exactly the ``Incast info`` line's packets (the script's bucket 10); the
others go by packets into <= 3, <= 12, <= 48, <= 192, <= 768, <= 3072, <= 12288, <= 49152 and
more (`PACKET_EDGES`; W3's set when its WORKLOAD line says W3).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .files import HOSTS_PER_TOR, BfcRun, parse_stdout
from ..fct import FctRow
from ...errors import ScenarioError

__all__ = ["PACKET_EDGES", "W3_PACKET_EDGES", "base_ns", "rows", "read_stdout_rows", "size_edges", "BufferStats",
           "buffer_stats", "hop_class_of_switch"]

PACKET_EDGES = (3, 12, 48, 192, 768, 3072, 12288, 49152)
"""calculate_fct_slowdown.py:122-137: its buckets' upper sizes in packets (not W3)."""
W3_PACKET_EDGES = (1, 2, 4, 8, 16, 64, 256, 1024)
"""calculate_fct_slowdown.py:140-157 (W3)."""
PAYLOAD = 1000
TORS = range(128, 136)
"""nsdifinal.cc: switches 128-135 are the ToRs, 136-143 the spines."""


def base_ns(packets: int, size: int, intra: bool, gbps: int) -> float:
    """Its standalone time of a flow (see the module doc)."""
    per = 8000.0 / gbps if size == 998 else size * 8.0 / gbps
    return 4000 + per * (packets + 1) if intra else 8000 + per * (packets + 3)


def rows(run: BfcRun, name: str) -> list[FctRow]:
    """Its finished flows with a "Received" line, as FctRows (size in bytes as its flow list
    gives it, start from "Starting flow", incast by packets)."""
    if run.data_rate_gbps is None:
        raise ScenarioError(f"{name}: no `DATA_RATE ... Gbps` line, which its slowdown basis needs (the simulator "
                            "prints it first; give its whole standard output)")
    out = []
    for f in run.flows:
        if f.dst is None or f.packet_size is None:
            continue
        size = f.packets * PAYLOAD if f.packet_size == 998 else f.packet_size + 2
        intra = f.src // HOSTS_PER_TOR == f.dst // HOSTS_PER_TOR
        start = f.start_ns if f.start_ns is not None else f.finish_ns - f.fct_ns
        base = base_ns(f.packets, f.packet_size, intra, run.data_rate_gbps)
        incast = run.incast_packets is not None and f.packets == run.incast_packets
        out.append(FctRow(f.src, f.dst, f.port, 0, size, start, f.fct_ns, base, incast))  # type: ignore[arg-type]
    if not out:
        raise ScenarioError(f"{name}: no finished flow with its `Received the last packet` line")
    return out


def read_stdout_rows(path: Path, text: str) -> tuple[list[FctRow], BfcRun]:
    run = parse_stdout(text, str(path))
    return rows(run, str(path)), run


def size_edges(w3: bool = False) -> list[int]:
    """`compare`'s bucket edges in bytes for its packet buckets: a flow of at most E packets has at
    most E x 1000 B (one-packet flows are smaller), so the bucket edge is E x 1000 + 1."""
    return [e * PAYLOAD + 1 for e in (W3_PACKET_EDGES if w3 else PACKET_EDGES)]


def hop_class_of_switch(node: int) -> str:
    return "tor" if node in TORS else "spine"


@dataclass
class BufferStats:
    """Per hop class (tor, spine): the p99 and the peak of the switches' buffer samples."""

    p99: dict[str, float]
    peak: dict[str, float]
    samples: dict[str, int]


def buffer_stats(samples: Sequence[tuple[int, int, int]], until_ns: int | None = None) -> BufferStats:
    """Of (time ns, switch, bytes) samples, up to `until_ns`; p99 as its script's quantiles
    (sorted[int(0.99 n)])."""
    by: dict[str, list[int]] = {}
    for t, node, b in samples:
        if until_ns is None or t <= until_ns:
            by.setdefault(hop_class_of_switch(node), []).append(b)
    p99, peak, n = {}, {}, {}
    for k, v in sorted(by.items()):
        s = np.sort(np.asarray(v))
        p99[k], peak[k], n[k] = float(s[min(int(0.99 * len(s)), len(s) - 1)]), float(s[-1]), len(s)
    return BufferStats(p99, peak, n)
