"""What Floodgate-NS3's output files say about a run's switches, by hopsim's hop classes, and the
same from a hopsim run folder: the per-metric side of `scripts/floodgate-agreement.sh`.

Floodgate-NS3 (its ``scratch/third.cc``) writes, besides the fct file:

- ``P-buffer<k>.log`` for switch node ``hosts + k``, every BUFFER_INTERVAL: ``time queue_id
  port_bytes_all port_bytes_data egress_data voq_group0 voq_all switch_bytes`` per port (third.cc
  lines 243-249, switch-node.cc lines 768-790): the port's egress queue, and the whole switch
  with its VOQs (`switch_bytes`, the same on every port's line). Its VOQs are the switch's, not a
  port's: a packet joins a port's queue only once its window lets it out, so with Floodgate a
  port's bytes leave out what waits in VOQs (hopsim's VOQs are queues of the port they leave by,
  and its port bytes count them): per-port peaks compare only without VOQs, switch totals always.
  ``queue_id`` numbers the two devices of each topology link in link order: link ``j`` (0-based,
  as the topology file lists it) makes ``2j`` at its first node and ``2j + 1`` at its second (the
  queue counter of its QbbHelper).
- the PFC file: ``time_ns node node_type if_index type`` per frame received (type 1 pause, 0
  resume), logged by the device being paused (third.cc line 830). Device ``if_index`` of a node is
  its ``if_index``-th link in topology-file order, from 1 (device 0 is the node's loopback).
- ``QLEN_MON_FILE``: every 1 ms, the histogram so far of each switch port's egress bytes sampled
  every 100 ns between QLEN_MON_START and QLEN_MON_END, in 1 KB bins (third.cc lines 834-893:
  ``time: T``, then ``switch device 0th: c0 1th: c1 ...`` per port, ``device`` counted as the
  PFC file's ``if_index``, then whole-switch lines ``switch-total ...``). Its highest bin with a
  count is the port's peak to the KB, where a 10 us buffer sample can miss a short peak.
- its standard output: ``incast_time: N`` (third.cc line 1867); the incast of round ``i`` goes to
  host ``(i % racks) * hosts_per_rack`` and no other flow goes to or from those hosts (third.cc
  lines 1868-1893), so flows to them are exactly the incast.

Hop classes are hopsim's (`buffer` and `ports` tables): ``tor-down`` (a ToR's port to a host),
``tor-up`` (a ToR's port to a core), ``agg-down`` (a core's port to a ToR), ``host-up``; whole
switches are ``tor`` or ``core``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import Any

from ...errors import ScenarioError
from .files import Topology

__all__ = ["hop_classes", "buffer_peaks", "qlen_peaks", "paired", "paused_count", "paused_ns", "incast_dsts", "run_buffer_peaks",
           "run_qlen_peaks", "run_paused_ns"]


def paired(events: Iterable[tuple[Any, Hashable, bool]], end: Any = None) -> tuple[dict[Hashable, Any], dict[Hashable, Any]]:
    """Time paused per key from `(time, key, pause)` events in time order: from a pause to the
    key's next resume (a received pause sets a paused flag that only a resume clears, so a
    repeated pause extends nothing, and a resume without a pause counts nothing); a pause still
    open at the end runs to `end` (default: the last event's time). Returns the totals and, of
    them, the part still open at the end."""
    since: dict[Hashable, Any] = {}
    total: dict[Hashable, Any] = defaultdict(int)
    last = 0
    for t, key, pause in events:
        last = max(last, t)
        if pause:
            since.setdefault(key, t)
        elif key in since:
            total[key] += t - since.pop(key)
    end = last if end is None else end
    still_open = {key: max(0, end - t0) for key, t0 in since.items()}
    for key, t in still_open.items():
        total[key] += t
    return dict(total), still_open


def paused_count(events: Iterable[tuple[Any, Hashable, bool]], end: Any = None) -> dict[Hashable, Any]:
    """Time paused per key from `(time, key, pause)` events in time order, by Floodgate-NS3's own
    rule for a device paused per destination: its device keeps one paused flag per PFC class
    (`m_paused[qIndex]`, qbb-net-device.cc lines 360-370), and dstPause's class is the destination
    (switch-node.cc line 277: `pfc_fine = hostIp2IdMap[ch.dip]`), so a host's device is paused
    once for each destination paused. The file names the device, not the class, but the ToR sends
    a class's pause only while it is not paused and its resume only while it is (switch-mmu.cc
    lines 110-118), so a pause adds one paused class and a resume removes one: the time paused is
    the integral of that count, the sum over destinations of each one's pause to resume (with one
    class, as PFC between switches, just pause to resume). A count still open at the end runs to
    `end` (default: the last event's time)."""
    count: dict[Hashable, int] = defaultdict(int)
    since: dict[Hashable, Any] = {}
    total: dict[Hashable, Any] = defaultdict(int)
    last = 0
    for t, key, pause in events:
        last = max(last, t)
        if key in since:
            total[key] += count[key] * (t - since[key])
        since[key] = t
        count[key] = count[key] + 1 if pause else max(0, count[key] - 1)
    end = last if end is None else end
    for key, t0 in since.items():
        total[key] += count[key] * max(0, end - t0)
    return {k: v for k, v in total.items() if v}


def _tors(topo: Topology) -> set[int]:
    switches = set(topo.switches)
    return {n for a, b, *_ in topo.links for n, m in ((a, b), (b, a)) if n in switches and m not in switches}


def hop_classes(topo: Topology) -> tuple[dict[int, str], dict[tuple[int, int], str]]:
    """The hop class of every device: by queue id (buffer logs) and by (node, if_index) (PFC file)."""
    switches, tors = set(topo.switches), _tors(topo)

    def cls(node: int, peer: int) -> str:
        if node not in switches:
            return "host-up"
        if node in tors:
            return "tor-up" if peer in switches else "tor-down"
        return "agg-down"

    by_queue: dict[int, str] = {}
    by_if: dict[tuple[int, int], str] = {}
    count: dict[int, int] = defaultdict(int)
    for j, (a, b, *_) in enumerate(topo.links):
        for side, (node, peer) in enumerate(((a, b), (b, a))):
            by_queue[2 * j + side] = cls(node, peer)
            count[node] += 1
            by_if[(node, count[node])] = cls(node, peer)
    return by_queue, by_if


def buffer_peaks(topo: Topology, logs: dict[int, Path]) -> tuple[dict[str, int], dict[str, int]]:
    """The largest occupancy (bytes) any sample of the buffer logs (by switch node) shows: per hop
    class of port (its egress queue, all priorities) and per class of switch (with its VOQs)."""
    by_queue, _ = hop_classes(topo)
    tors = _tors(topo)
    port: dict[str, int] = defaultdict(int)
    switch: dict[str, int] = defaultdict(int)
    for node, log in sorted(logs.items()):
        sc = "tor" if node in tors else "core"
        with log.open() as f:
            for no, line in enumerate(f, 1):
                parts = line.split()
                if len(parts) < 3:
                    continue
                try:
                    q, b, sw = int(parts[1]), int(parts[2]), int(parts[7]) if len(parts) > 7 else 0
                except ValueError:
                    raise ScenarioError(f"{log} line {no}: expected `time queue_id port_bytes ... switch_bytes`, "
                                        f"got {line.strip()!r}") from None
                c = by_queue.get(q)
                if c is None:
                    raise ScenarioError(f"{log} line {no}: queue_id {q} is no device of the topology "
                                        f"(allowed: 0 to {2 * len(topo.links) - 1})")
                port[c] = max(port[c], b)
                switch[sc] = max(switch[sc], sw)
    return dict(port), dict(switch)


def buffer_logs(folder: Path, topo: Topology) -> dict[int, Path]:
    """The buffer log of each switch node in a run folder (`*-buffer<k>.log` is node hosts + k)."""
    hosts = topo.nodes - len(topo.switches)
    out = {}
    for p in folder.glob("*-buffer*.log"):
        m = re.search(r"-buffer(\d+)\.log$", p.name)
        if m:
            out[hosts + int(m.group(1))] = p
    return out


def qlen_peaks(topo: Topology, path: Path) -> dict[str, int] | None:
    """The highest 1 KB bin its queue-length monitor filled, per hop class of port (KB); None when
    the file holds no dump after the monitor's first: it samples every 100 ns but writes its
    histograms only when the time is a whole millisecond (`monitor_buffer`, third.cc lines 91 and
    870), so a run that ends within 1 ms of the monitor's start leaves one sample, taken then."""
    _, by_if = hop_classes(topo)
    out: dict[str, int] = {}
    dumps = 0
    with path.open() as f:
        for no, line in enumerate(f, 1):
            parts = line.split()
            dumps += line.startswith("time:")
            if len(parts) < 3 or not parts[0].isdigit():
                continue  # `time:`, `N-total` and `maxPortLength` lines
            try:
                node, dev = int(parts[0]), int(parts[1])
                counts = [int(c) for c in parts[3::2]]
            except ValueError:
                raise ScenarioError(f"{path} line {no}: expected `switch device 0th: count 1th: count ...`, "
                                    f"got {line.strip()[:80]!r}") from None
            c = by_if.get((node, dev))
            if c is None:
                raise ScenarioError(f"{path} line {no}: node {node} has no device {dev} in the topology")
            top = max((kb for kb, n in enumerate(counts) if n > 0), default=0)
            out[c] = max(out.get(c, 0), top)
    return out if dumps > 1 else None


def pfc_events(path: Path | str, text: str) -> list[tuple[int, tuple[int, int], bool]]:
    """Its PFC file as `paired` events: (time, (node, if_index), pause) per frame received."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            t, node, _kind, dev, typ = (int(x) for x in parts[:5])
        except ValueError:
            raise ScenarioError(f"{path} line {no}: expected `time node node_type if_index type`, got {line.strip()!r}") from None
        out.append((t, (node, dev), typ == 1))
    return out


def paused_ns(topo: Topology, pfc: Path, end_ns: int | None = None) -> dict[str, float]:
    """Time paused per hop class, summed over devices (`paused_count` over its PFC file's frames)."""
    _, by_if = hop_classes(topo)
    events = pfc_events(pfc, pfc.read_text())
    for t, (node, dev), _ in events:
        if (node, dev) not in by_if:
            raise ScenarioError(f"{pfc}: node {node} has no device {dev} in the topology (a frame at {t} ns)")
    total: dict[str, float] = defaultdict(float)
    for key, t in paused_count(events, end_ns).items():
        total[by_if[key]] += t
    return dict(total)


def incast_dsts(topo: Topology, stdout: str) -> list[int]:
    """The hosts its incasts went to (empty when it printed no `incast_time:`, no incast)."""
    m = re.search(r"^incast_time: (\d+)", stdout, re.M)
    if not m:
        return []
    return sorted({(i % topo.racks) * topo.hosts_per_rack for i in range(int(m.group(1)))})


def run_buffer_peaks(run: Path, topo: Topology) -> tuple[dict[str, int], dict[str, int]]:
    """`buffer_peaks` of a hopsim run folder, from its buffer table's samples."""
    import duckdb

    table = f"read_parquet('{run / 'buffer.parquet'}')"
    port = duckdb.sql(f"select hop_class, max(bytes) from {table} where scope = 'port' group by 1").fetchall()
    nodes = duckdb.sql(f"select node, max(bytes) from {table} where scope = 'switch' group by 1").fetchall()
    tors = _tors(topo)
    switch: dict[str, int] = defaultdict(int)
    for node, b in nodes:
        sc = "tor" if node in tors else "core"
        switch[sc] = max(switch[sc], int(b))
    return {c: int(b) for c, b in port}, dict(switch)


def run_qlen_peaks(run: Path) -> dict[str, int]:
    """`qlen_peaks` of a hopsim run folder: its queue-length monitor's highest 1 KB bin per hop class
    (`record.qlen_monitor`, the same sampling and bins; ports named by its buffer table)."""
    import duckdb

    q, b = f"read_parquet('{run / 'qlen.parquet'}')", f"read_parquet('{run / 'buffer.parquet'}')"
    rows = duckdb.sql(f"select c.hop_class, max(q.kb) from {q} q join (select distinct node, port, hop_class from {b} "
                      f"where scope = 'port') c using (node, port) where q.count > 0 group by 1").fetchall()
    return {c: int(kb) for c, kb in rows}


def run_paused_ns(run: Path) -> dict[str, float]:
    """Time paused per hop class of a hopsim run folder: its ports table's paused time (PFC, one
    class: pause to resume), and hosts' time under destination pauses by the same rule as its PFC
    file's (`paused_count` over the frames each host port received, whatever the destination:
    the sum over destinations of each one's pause to resume)."""
    import duckdb

    rows = duckdb.sql(f"select hop_class, sum(paused_ns) from read_parquet('{run / 'ports.parquet'}') group by 1").fetchall()
    out = {c: float(t) for c, t in rows if t}
    ctrl = duckdb.sql(f"select node, port, target, value, time_ns from read_parquet('{run / 'control.parquet'}') "
                      "where kind = 'dst_pause' order by time_ns").fetchall()
    total = sum(paused_count((t, (node, port), bool(value)) for node, port, _target, value, t in ctrl).values())
    if total:
        out["host-up"] = out.get("host-up", 0.0) + total
    return out
