"""`hopsim export-fct RUN_DIR`: per-flow results in the HPCC ns-3 simulator's ``fct.txt`` format,
so analysis scripts written for it keep working.

One line per finished flow, in order of completion, as ``qp_finish`` in its ``scratch/third.cc``
prints them (``"%08x %08x %u %u %lu %lu %lu %lu"``)::

    sip dip sport dport size_bytes start_time_ns fct_ns standalone_fct_ns

- ``sip``/``dip``: the simulator's host addresses, ``0x0b000001 + (id / 256) * 0x10000 +
  (id % 256) * 0x100`` (``node_id_to_ip``), in 8 hex digits;
- ``sport``: each source host numbers its flows from 10000 up, in start order; ``dport`` 100
  (what its traffic generator writes, and hopsim's HPCC flow reader assumes);
- ``start_time``: in ns, with the flow file's time offset added back (HPCC's flows start at
  2 s), so times read as they would from the simulator;
- ``standalone_fct``: hopsim's ideal FCT of the flow alone on its path (headers included).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from .store import is_complete

__all__ = ["export_fct", "node_ip", "fct_lines"]

HPCC_DPORT = 100
FIRST_SPORT = 10000


def node_ip(node: int) -> int:
    return 0x0B000001 + (node // 256) * 0x00010000 + (node % 256) * 0x00000100


def _time_offset_ps(run_dir: Path) -> int:
    core = json.loads((run_dir / "scenario.json").read_text())
    w = core.get("workload", {})
    return int(w.get("time_offset", 0)) if w.get("kind") == "hpcc_flows" else 0


def fct_lines(run_dir: Path | str) -> list[str]:
    run_dir = Path(run_dir)
    f = pq.read_table(run_dir / "flows.parquet",
                      columns=["flow_id", "src", "dst", "size_bytes", "start_ps", "fct_ps", "finish_ps",
                               "ideal_fct_ps", "finished"]).to_pylist()
    offset = _time_offset_ps(run_dir)
    # source ports in start order (flow ids are in start order; ties by id)
    next_port: dict[int, int] = {}
    sport: dict[int, int] = {}
    for r in sorted(f, key=lambda r: (r["start_ps"], r["flow_id"])):
        sport[r["flow_id"]] = next_port.get(r["src"], FIRST_SPORT)
        next_port[r["src"]] = sport[r["flow_id"]] + 1
    done = sorted((r for r in f if r["finished"]), key=lambda r: (r["finish_ps"], r["flow_id"]))
    return [
        f"{node_ip(r['src']):08x} {node_ip(r['dst']):08x} {sport[r['flow_id']]} {HPCC_DPORT} {r['size_bytes']} "
        f"{(r['start_ps'] + offset) // 1000} {r['fct_ps'] // 1000} {r['ideal_fct_ps'] // 1000}"
        for r in done
    ]


def export_fct(run_dir: Path | str, out: Path | str | None = None) -> tuple[Path, int]:
    """Write fct.txt (default: RUN_DIR/fct.txt); returns its path and the number of lines."""
    run_dir = Path(run_dir)
    if not is_complete(run_dir):
        raise FileNotFoundError(f"{run_dir} is not a complete run folder")
    lines = fct_lines(run_dir)
    out = Path(out) if out else run_dir / "fct.txt"
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("".join(l + "\n" for l in lines))
    os.replace(tmp, out)
    return out, len(lines)
