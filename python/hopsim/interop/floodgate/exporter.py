"""Floodgate-NS3's per-flow output (its FCT_OUTPUT_FILE, written by ``qp_finish`` in
``scratch/third.cc``): `hopsim export-floodgate RUN_DIR` writes it for a hopsim run, and
`hopsim compare-fct` reads it.

One line per flow whose sender received its last ACK, in order of completion
(``"%u\\t%u\\t%lu\\t%lu\\t%u\\t%u\\t%f\\t%f\\t%f \\n"``)::

    src dst size start_ns qp_id msg_seq fct_us oracle_us slowdown

Node ids as they are (no addresses); lines starting ``rcv`` (its ``rcv_finish``: the receiver's
view) are skipped when read and not written. ``start_ns`` has the flows' time offset added back
(its printed flow lists start at 2 s).

The oracle (its ideal FCT, ``Get_Oracle_Fct``, third.cc line 275): with ``D(x) = (pd + td / 1000
x x) / 1000`` us, where ``pd`` is the least sum of link delays (ns) from src to dst and ``td`` the
least sum of ``8000 / rate_gbps`` (integer division) over the links (``Floyd`` on each, line
2823), payload P = PACKET_PAYLOAD_SIZE and MTU = P + 78::

    full = size // P, left = size % P
    full >= 1: D(MTU) + D(84) (in s: / 1e6) + (full - 1) x MTU / host_Bps + (left + 78) / host_Bps
    else:      D(left) + D(84)

(host_Bps: the NIC rate in bytes/s), truncated to whole ns. hopsim's export computes it from the
run's topology where the run has the HPCC topology file that `hopsim import-floodgate` writes;
other runs get hopsim's ideal FCT there instead, with a note.
"""

from __future__ import annotations

import heapq
import json
from pathlib import Path

import numpy as np

from ...errors import ScenarioError
from ..fct import FctRow
from ..hpcc.exporter import _check_run, _read, _time_offset_ps, _U64_MAX, _write_all
from ...scenario.paths import why_unwritable

__all__ = ["oracle_ns", "fct_lines", "export_floodgate", "parse_fct_floodgate", "is_floodgate_fct"]


def oracle_ns(pd_ns: int, td: int, size: int, payload: int, host_bps: int) -> int:
    """Get_Oracle_Fct (see the module doc) in whole ns."""
    def d_us(x: int) -> float:
        return (pd_ns + td / 1000.0 * x) / 1000.0

    host_Bps = host_bps / 8
    mtu = payload + 78
    full, left = divmod(size, payload)
    if full >= 1:
        fct = (d_us(mtu) + d_us(84)) / 1e6 + (full - 1) * mtu / host_Bps + (left + 78) / host_Bps
    else:
        fct = d_us(left) / 1e6 + d_us(84) / 1e6
    return int(fct * 1e9)


def _paths(run_dir: Path) -> tuple[dict[int, list[tuple[int, int, int]]], int, int] | None:
    """(adjacency: node -> (peer, rate_gbps, delay_ns)), the NIC rate (b/s) and the payload of
    a run on an HPCC topology file; None for other topologies."""
    core = json.loads((run_dir / "scenario.json").read_text())
    topo = core.get("topology", {})
    if topo.get("kind") != "hpcc":
        return None
    from ..hpcc.importer import _topology_facts

    nic, _, adj, _ = _topology_facts(topo["text"])
    gadj = {n: [(p, r // 10**9, d) for p, r, d in v] for n, v in adj.items()}
    return gadj, nic, int(core["net"]["transport"]["mtu"])


def _least(adj: dict[int, list[tuple[int, int, int]]], src: int, weight) -> dict[int, int]:
    dist = {src: 0}
    heap = [(0, src)]
    while heap:
        d, n = heapq.heappop(heap)
        if d > dist[n]:
            continue
        for p, r, dl in adj[n]:
            nd = d + weight(r, dl)
            if nd < dist.get(p, 1 << 62):
                dist[p] = nd
                heapq.heappush(heap, (nd, p))
    return dist


def fct_lines(run_dir: Path | str, notes: list[str] | None = None) -> list[str]:
    """Its fct file's lines for a run folder (see the module doc)."""
    run_dir = Path(run_dir)
    f = _read(run_dir, "flows", ["flow_id", "src", "dst", "size_bytes", "start_ps", "ack_finish_ps", "ack_fct_ps", "ideal_fct_ps"])
    offset = _time_offset_ps(run_dir)
    fin = f["ack_finish_ps"].astype(np.uint64)
    done = np.flatnonzero(f.get("ack_finish_ps?", True) & (fin != np.uint64(_U64_MAX)))
    done = done[np.lexsort((f["flow_id"][done], fin[done]))]
    net = _paths(run_dir)
    if net is None and notes is not None:
        notes.append(f"{run_dir}: not on an HPCC topology file, so oracle_us is hopsim's ideal FCT, not Get_Oracle_Fct")
    pd: dict[int, dict[int, int]] = {}
    td: dict[int, dict[int, int]] = {}
    out = []
    for i in done:
        s, d, size = int(f["src"][i]), int(f["dst"][i]), int(f["size_bytes"][i])
        if net is None:
            oracle = int(f["ideal_fct_ps"][i]) // 1000
        else:
            adj, nic, payload = net
            if s not in pd:
                pd[s] = _least(adj, s, lambda r, dl: dl)
                td[s] = _least(adj, s, lambda r, dl: 8000 // r)
            oracle = oracle_ns(pd[s][d], td[s][d], size, payload, nic)
        fct_ns = int(f["ack_fct_ps"][i]) / 1000
        out.append(f"{s}\t{d}\t{size}\t{(int(f['start_ps'][i]) + offset) // 1000}\t{int(f['flow_id'][i])}\t0\t"
                   f"{fct_ns / 1e3:f}\t{oracle / 1e3:f}\t{fct_ns / oracle:f} ")
    return out


def export_floodgate(run_dir: Path | str, out: Path | str | None = None) -> tuple[Path, int, list[str]]:
    """Write the fct file (default RUN_DIR/fct-floodgate.txt); its path, line count and notes."""
    run_dir = Path(run_dir)
    _check_run(run_dir)
    out = Path(out) if out else run_dir / "fct-floodgate.txt"
    notes: list[str] = []
    lines = fct_lines(run_dir, notes)
    try:
        _write_all({out: "".join(l + "\n" for l in lines)})
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot write the fct file of {run_dir} ({why_unwritable(out, e)})") from None
    return out, len(lines), notes


_FIELDS = ("src", "dst", "size", "start_ns", "qp_id", "msg_seq", "fct_us", "oracle_us", "slowdown")


def is_floodgate_fct(text: str) -> bool:
    """Whether an fct file is Floodgate-NS3's (9 fields, decimal node ids) rather than the HPCC
    simulator's (8 fields, hex addresses)."""
    for line in text.splitlines():
        f = line.split()
        if f and f[0] != "rcv":
            return len(f) == 9
    return False


def parse_fct_floodgate(text: str, name: str):
    """Its fct lines as `fct.FctRow`s (qp_id in sport, dport 0). Errors name `name`, the line
    and the field."""
    rows = []
    for no, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f or f[0] == "rcv":
            continue
        if len(f) != 9:
            raise ScenarioError(f"{name} line {no}: expected 9 fields `{' '.join(_FIELDS)}` (Floodgate-NS3's fct file), found {len(f)}")
        try:
            ints = [int(v) for v in f[:6]]
        except ValueError:
            bad = next(k for k, v in zip(_FIELDS, f) if not v.lstrip("-").isdigit())
            raise ScenarioError(f"{name} line {no}: {bad} is not a whole number") from None
        try:
            fct_us, oracle_us = float(f[6]), float(f[7])
        except ValueError:
            raise ScenarioError(f"{name} line {no}: fct_us and oracle_us must be numbers of us") from None
        if min(ints) < 0 or not (fct_us >= 0 and oracle_us > 0):
            raise ScenarioError(f"{name} line {no}: values must not be negative and oracle_us must be above 0")
        src, dst, size, start, qp, _ = ints
        rows.append(FctRow(src, dst, qp, 0, size, start, round(fct_us * 1000), round(oracle_us * 1000)))
    return rows
