"""`hopsim export-bfc RUN_DIR`: a hopsim run's per-flow and buffer results as the BFC paper's
simulator prints them (the lines `files` describes), so that its own
``calculate_fct_slowdown.py`` runs on hopsim's output; `hopsim compare-fct` reads them back.

Written, in time order (a flow's "Received" before its "Flow finished", as there):

- ``DATA_RATE\\t\\t\\t<G>Gbps`` (the hosts' rate), ``WORKLOAD\\t\\t\\tW3`` only for the W3 CDF (its
  script's other bucket set), ``Incast info- Packet size <N>Num of sources <M>`` when the run's
  incast flows are known (``incast_packets``: its script's incast bucket is flows of exactly N
  packets);
- per finished flow (the sender got its last ACK): ``Starting flow`` at its start, ``Received the
  last packet`` at the receiver's last byte, ``Flow finished`` with the sender's FCT;
- ``T: +<t>ns At <switch> used = <bytes>`` per switch at every buffer sample.

Times have the flows' time offset added back (its runs start traffic at 1 s). Hosts appear as
there: NIC ``qbbid 2h + 2``, address ``1.(h + 1)``; source ports the run's own where they all
lie in ns-3's ephemeral range (49152-65535: the flows came with its ports, as ``import-bfc
--flows`` writes them), else per sender from 49153 in start order; ``qindex`` is the flow id. A
packet's ``size`` is min(flow size, MTU) - 2 (its "Received" line prints the UDP payload and
headers of a packet: 998 for 1000 B).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .files import EPHEMERAL_FIRST, FIRST_PORT, qbbid_of_host
from ...errors import ScenarioError
from ..hpcc.exporter import _U64_MAX, _check_run, _read, _time_offset_ps, _write_all
from ...scenario.paths import why_unwritable

__all__ = ["stdout_lines", "export_bfc", "incast_packets_of"]


def _ns(ps: int) -> str:
    return f"+{ps // 1000}.0ns"


def _net(run_dir: Path) -> tuple[int, str | None, int | None]:
    """(MTU, the workload's CDF file when it draws flows, the run's duration in ps) from
    scenario.json."""
    core = json.loads((run_dir / "scenario.json").read_text())
    w = core.get("workload", {})
    cdf = w.get("cdf") if isinstance(w, dict) else None
    net = core.get("net", {})
    d = net.get("duration")
    return int(net.get("transport", {}).get("mtu", 1000)), cdf, None if d is None else int(d)


def incast_packets_of(run_dir: Path) -> tuple[int, int] | None:
    """(packets per incast flow, incast degree) from the run's incast-tagged flows, when it has
    some of one size; None otherwise."""
    f = _read(run_dir, "flows", ["size_bytes", "incast", "dst", "start_ps"])
    mtu = _net(run_dir)[0]
    tagged = np.flatnonzero(f["incast"].astype(bool))
    if not len(tagged):
        return None
    sizes = set(int(s) for s in f["size_bytes"][tagged])
    if len(sizes) != 1:
        return None
    groups: dict[tuple[int, int], int] = {}
    for i in tagged:
        k = (int(f["dst"][i]), int(f["start_ps"][i]))
        groups[k] = groups.get(k, 0) + 1
    return -(-sizes.pop() // mtu), max(groups.values())


def stdout_lines(run_dir: Path | str, incast: tuple[int, int] | None = None) -> list[str]:
    """The lines (see the module doc). `incast`: (packets per incast flow, sources) for the
    ``Incast info`` line; by default from the run's incast-tagged flows."""
    run_dir = Path(run_dir)
    f = _read(run_dir, "flows", ["flow_id", "src", "dst", "size_bytes", "start_ps", "finish_ps", "ack_finish_ps", "ack_fct_ps",
                                 "sport"])
    # its ports where the flows came with them: a sender's flows that start at one instant keep
    # its order (its creation order), which start and flow id cannot tell
    own_ports = len(f["sport"]) > 0 and bool((f["sport"] >= EPHEMERAL_FIRST).all())
    offset = _time_offset_ps(run_dir)
    mtu, cdf, duration = _net(run_dir)
    ports = _read(run_dir, "ports", ["node", "peer_node", "hop_class", "rate_bps"])
    host_rates = [int(r) for r, h in zip(ports["rate_bps"], ports["hop_class"]) if h == "host-up"]
    gbps = (max(host_rates) if host_rates else 100 * 10**9) // 10**9
    head = [f"DATA_RATE\t\t\t{gbps}Gbps"]
    if cdf and "W3" in str(cdf):
        head.append("WORKLOAD\t\t\tW3")
    if incast is None:
        incast = incast_packets_of(run_dir)
    if incast is not None:
        head.append(f"Incast info- Packet size {incast[0]}Num of sources {incast[1]}")
    timed: list[tuple[int, int, str]] = []
    order = np.lexsort((f["flow_id"], f["start_ps"]))
    nxt: dict[int, int] = {}
    fin = f["ack_finish_ps"].astype(np.uint64)
    done = f.get("ack_finish_ps?", np.ones(len(fin), bool)) & (fin != np.uint64(_U64_MAX))
    rdone = f.get("finish_ps?", np.ones(len(fin), bool))
    for i in order:
        s, d, size, fid = int(f["src"][i]), int(f["dst"][i]), int(f["size_bytes"][i]), int(f["flow_id"][i])
        if own_ports:
            port = int(f["sport"][i])
        else:
            port = nxt.get(s, FIRST_PORT)
            nxt[s] = port + 1
        start = int(f["start_ps"][i]) + offset
        q = qbbid_of_host(s)
        if duration is None or int(f["start_ps"][i]) <= duration:
            # every flow that started (its script counts them), finished or not
            timed.append((start, 0, f"Starting flow at {_ns(start)} port {port} qbbid {q} qindex {fid} IP 1.{s + 1} "))
        if not done[i]:
            continue
        packets = -(-size // mtu)
        if rdone[i]:
            timed.append((int(f["finish_ps"][i]) + offset, 1, f"Received the last packet on port {port} at "
                          f"{_ns(int(f['finish_ps'][i]) + offset)} qbbid {qbbid_of_host(d)} IP 1.{s + 1} size {min(size, mtu) - 2} "))
        t = int(f["ack_finish_ps"][i]) + offset
        timed.append((t, 2, f"Flow finished at qbbid {q} at {_ns(t)} at port{port} Num packets:{packets}, "
                      f"Time taken :+{int(f['ack_fct_ps'][i]) // 1000}.0ns qindex {fid} "))
    for t, node, b in buffer_samples(run_dir):
        timed.append((t + offset, 3, f"T: {_ns(t + offset)} At {node} used = {b}"))
    timed.sort(key=lambda x: (x[0], x[1]))
    return head + [line for *_, line in timed]


def buffer_samples(run_dir: Path) -> list[tuple[int, int, int]]:
    """(time ps, switch node, bytes) of the run's whole-switch buffer samples (none unless the
    run recorded them: `record.buffer_interval`)."""
    path = run_dir / "buffer.parquet"
    if not path.exists():
        return []
    b = _read(run_dir, "buffer", ["scope", "time_ps", "node", "bytes"])
    sw = np.flatnonzero(b["scope"] == "switch")
    return [(int(b["time_ps"][i]), int(b["node"][i]), int(b["bytes"][i])) for i in sw]


def export_bfc(run_dir: Path | str, out: Path | str | None = None,
               incast: tuple[int, int] | None = None) -> tuple[Path, int, list[str]]:
    """Write the lines (default RUN_DIR/stdout-bfc.txt); its path, flow count and notes."""
    run_dir = Path(run_dir)
    _check_run(run_dir)
    out = Path(out) if out else run_dir / "stdout-bfc.txt"
    lines = stdout_lines(run_dir, incast)
    notes = []
    if not any(l.startswith("T: ") for l in lines):
        notes.append(f"{run_dir}: no buffer samples (record.buffer_interval), so no `T:` lines")
    try:
        _write_all({out: "".join(l + "\n" for l in lines)})
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot write the BFC simulator's lines of {run_dir} ({why_unwritable(out, e)})") from None
    return out, sum(l.startswith("Flow finished") for l in lines), notes
