"""`hopsim export-hpcc RUN_DIR [--out DIR]`: a run's results as the HPCC ns-3 simulator's output
files (alibaba-edu/High-Precision-Congestion-Control, ``simulation/scratch/third.cc``), so analysis
scripts written for it keep working and the two simulators can be compared line by line.
``hopsim export-fct RUN_DIR`` writes fct.txt alone.

``fct.txt``: one line per finished flow, in order of completion, as ``qp_finish`` prints them
(``"%08x %08x %u %u %lu %lu %lu %lu"``)::

    sip dip sport dport size_bytes start_time_ns fct_ns standalone_fct_ns

- ``sip``/``dip``: the simulator's host addresses, ``0x0b000001 + (id / 256) * 0x10000 +
  (id % 256) * 0x100`` (``node_id_to_ip``), in 8 hex digits;
- ``start_time``: in ns, with the flow file's time offset added back (HPCC's flows start at
  2 s), so times read as they would from the simulator;
- on the simulator's basis where the run has it: a flow completes when its sender receives the
  last ACK (flows.parquet ``ack_finish_ps`` / ``ack_fct_ps``), ``standalone_fct`` is third.cc's
  (``hpcc_standalone_fct_ps``: base RTT + bytes with per-packet headers, without INT, over the
  path's bandwidth), and ``sport``/``dport`` are the columns of the same names.
- Runs made by a core without those columns fall back to what it wrote: completion when the
  receiver has the last byte (``finish_ps`` / ``fct_ps``), hopsim's ideal FCT
  (``ideal_fct_ps``) as standalone_fct, ``sport`` numbered from 10000 per (src, dst) pair in
  start order (third.cc's ``portNumder[src][dst]++``) and ``dport`` 100 (what its traffic
  generator writes). Such an fct.txt is shorter than the simulator's by about one base RTT's
  worth of ACK path per flow.

``pfc.txt``: one line per PFC frame received (``get_pfc``, the devices' ``QbbPfc`` trace), from
``pfc_received.parquet`` in the order the core wrote it (event order)::

    time_ns node_id node_type(0 host, 1 switch) if_index type(1 pause, 0 resume)

``if_index`` is ns-3's device index of the receiving port: third.cc installs one device per link
end in topology-file link order after each node's loopback device 0, and hopsim numbers a node's
local ports in the same link order from 0 (``crates/hopsim-core/src/topo/hpcc_file.rs``), so
if_index = local port + 1.

``qlen.txt``: the switch queue-length histograms of ``monitor_buffer``, from ``qlen.parquet``
(``dump_time_ps, node, port, kb, count``; written when ``record.qlen_monitor`` is on, which
``import-hpcc`` derives from QLEN_MON_START / QLEN_MON_END). Per dump::

    time: T_ns
    node if_index c0 c1 ... cK        (one line per switch port, by node then port)

where ``ci`` counts the samples whose egress bytes were in [i KB, i+1 KB) (KB = 1000 B) and K is
the largest KB seen at that port (zeros filled in, as the simulator's growing vector has them).
``dump_time_ps`` is absolute (the flow file's clock, time offset included) and is printed in ns
as it is.

A missing pfc_received or qlen table skips that file with a note saying what writes it. Files are
written whole or not at all (temporary names, then renamed); any error leaves DIR as it was.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import ScenarioError
from ...scenario.paths import check_replaceable, created_folder, why_unwritable
from ...results.store import is_complete, read_columns, read_table

__all__ = ["export_fct", "export_hpcc", "node_ip", "fct_lines", "pfc_lines", "qlen_lines", "Exported"]

HPCC_DPORT = 100
FIRST_SPORT = 10000
_U64_MAX = 2**64 - 1


def node_ip(node: int) -> int:
    return 0x0B000001 + (node // 256) * 0x00010000 + (node % 256) * 0x00000100


def _time_offset_ps(run_dir: Path) -> int:
    try:
        core = json.loads((run_dir / "scenario.json").read_text())
        w = core.get("workload", {})
        return int(w.get("time_offset", 0)) if w.get("kind") == "hpcc_flows" else 0
    except (OSError, ValueError) as e:
        raise ScenarioError(f"{run_dir}: cannot read scenario.json ({e})") from None
    except (AttributeError, TypeError):  # valid JSON of another shape: not the core's scenario
        raise ScenarioError(f"{run_dir / 'scenario.json'}: not the scenario of a hopsim run (its workload "
                            "has no kind and time_offset); re-create the run folder with `hopsim run`") from None


def _check_run(run_dir: Path) -> None:
    if not is_complete(run_dir):
        raise ScenarioError(f"{run_dir}: not a complete run folder (no summary.json); make one with `hopsim run`")


def _columns(run_dir: Path, table: str) -> set[str]:
    return read_columns(run_dir / f"{table}.parquet")


def _read(run_dir: Path, table: str, columns: list[str]) -> dict[str, np.ndarray]:
    """`columns` of RUN/table.parquet as numpy arrays; a column with nulls (unfinished flows)
    has them as 0 and its validity beside it under ``name + "?"``. Errors name the run folder,
    the table and what is missing."""
    missing = [c for c in columns if c not in _columns(run_dir, table)]
    if missing:
        raise ScenarioError(f"{run_dir}: {table}.parquet has no column {', '.join(missing)}")
    t = read_table(run_dir / f"{table}.parquet", columns=columns)
    out = {}
    for c in columns:
        col = t.column(c)
        if col.null_count:
            out[c + "?"] = col.is_valid().to_numpy(zero_copy_only=False)
            col = pc.fill_null(col, pa.scalar(0, col.type))
        out[c] = col.to_numpy()
    return out


def _pair_ports(src: np.ndarray, dst: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Source ports as third.cc numbers them: per (src, dst) pair from 10000, in `order`."""
    sport = np.zeros(len(src), dtype=np.int64)
    nxt: dict[tuple[int, int], int] = {}
    for i in order:
        k = (int(src[i]), int(dst[i]))
        sport[i] = nxt.get(k, FIRST_SPORT)
        nxt[k] = sport[i] + 1
    return sport


def fct_lines(run_dir: Path | str) -> list[str]:
    """fct.txt's lines (see the module doc for the columns used)."""
    run_dir = Path(run_dir)
    have = _columns(run_dir, "flows")
    ack = {"ack_finish_ps", "ack_fct_ps"} <= have
    finish, fct = ("ack_finish_ps", "ack_fct_ps") if ack else ("finish_ps", "fct_ps")
    standalone = "hpcc_standalone_fct_ps" if "hpcc_standalone_fct_ps" in have else "ideal_fct_ps"
    ports = {"sport", "dport"} <= have
    cols = ["flow_id", "src", "dst", "size_bytes", "start_ps", finish, fct, standalone]
    f = _read(run_dir, "flows", cols + (["sport", "dport"] if ports else []))
    if ports:
        sport, dport = f["sport"], f["dport"]
    else:
        sport = _pair_ports(f["src"], f["dst"], np.lexsort((f["flow_id"], f["start_ps"])))
        dport = np.full(len(sport), HPCC_DPORT)
    offset = _time_offset_ps(run_dir)
    fin = f[finish].astype(np.uint64)  # the core marks an unfinished flow with null or 2**64-1
    done = np.flatnonzero(f.get(finish + "?", True) & (fin != np.uint64(_U64_MAX)))
    done = done[np.lexsort((f["flow_id"][done], fin[done]))]
    return [
        f"{node_ip(int(f['src'][i])):08x} {node_ip(int(f['dst'][i])):08x} {int(sport[i])} {int(dport[i])} "
        f"{int(f['size_bytes'][i])} {(int(f['start_ps'][i]) + offset) // 1000} {int(f[fct][i]) // 1000} "
        f"{int(f[standalone][i]) // 1000}"
        for i in done
    ]


def pfc_lines(run_dir: Path | str) -> list[str]:
    """pfc.txt's lines from pfc_received.parquet (see the module doc)."""
    run_dir = Path(run_dir)
    p = _read(run_dir, "pfc_received", ["time_ps", "node", "is_switch", "port", "pause"])
    offset = _time_offset_ps(run_dir)
    order = np.argsort(p["time_ps"], kind="stable")
    return [
        f"{(int(p['time_ps'][i]) + offset) // 1000} {int(p['node'][i])} {int(bool(p['is_switch'][i]))} "
        f"{int(p['port'][i]) + 1} {int(bool(p['pause'][i]))}"
        for i in order
    ]


def qlen_lines(run_dir: Path | str) -> list[str]:
    """qlen.txt's lines from qlen.parquet (see the module doc)."""
    run_dir = Path(run_dir)
    q = _read(run_dir, "qlen", ["dump_time_ps", "node", "port", "kb", "count"])
    order = np.lexsort((q["kb"], q["port"], q["node"], q["dump_time_ps"]))
    out: list[str] = []
    hist: dict[int, int] = {}
    cur: tuple[int, int, int] | None = None

    def flush() -> None:
        if cur is not None:
            counts = [hist.get(k, 0) for k in range(max(hist) + 1)]
            out.append(f"{cur[1]} {cur[2] + 1} " + " ".join(map(str, counts)))

    for i in order:
        key = (int(q["dump_time_ps"][i]), int(q["node"][i]), int(q["port"][i]))
        if key != cur:
            flush()
            if cur is None or key[0] != cur[0]:
                out.append(f"time: {key[0] // 1000}")
            cur, hist = key, {}
        kb = int(q["kb"][i])
        hist[kb] = hist.get(kb, 0) + int(q["count"][i])
    flush()
    return out


# file -> (table it needs, how to make it, what turns the table on)
_FILES: dict[str, tuple[str, Any, str]] = {
    "fct.txt": ("flows", fct_lines, "every run folder has it"),
    "pfc.txt": ("pfc_received", pfc_lines,
                "the core that made this run did not write that table; run the scenario again with this hopsim"),
    "qlen.txt": ("qlen", qlen_lines,
                 "record.qlen_monitor in the scenario turns that table on; an HPCC config's "
                 "QLEN_MON_START / QLEN_MON_END give its window"),
}


@dataclass
class Exported:
    """One file of an export: where it went and how many lines, or why it was skipped."""

    name: str
    path: Path | None
    lines: int = 0
    skipped: str = ""


def _write_all(texts: dict[Path, str]) -> None:
    """Write every file under a temporary name, then rename them all into place; on error
    remove the temporary files and leave the targets as they were."""
    tmps: list[tuple[Path, Path]] = []
    try:
        for path, text in texts.items():
            check_replaceable(path)
            tmp = path.with_name(f".{path.name}.tmp")
            tmps.append((tmp, path))
            tmp.write_text(text)
        for tmp, path in tmps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
        raise


HPCC_FILES = ("fct.txt", "pfc.txt", "qlen.txt")
"""The HPCC simulator's output files that `export_hpcc` writes."""


def export_hpcc(run_dir: Path | str, out: Path | str | None = None,
                names: tuple[str, ...] = HPCC_FILES) -> list[Exported]:
    """Write the simulator's files (`names`) for a run folder into `out` (default: the run
    folder); returns one `Exported` per file. Raises ScenarioError (naming the run folder) when
    the run folder or a table cannot be read or `out` cannot be written; nothing is written then."""
    run_dir = Path(run_dir)
    _check_run(run_dir)
    out_dir = Path(out) if out else run_dir
    texts: dict[Path, str] = {}
    report: list[Exported] = []
    for name in names:
        table, make, how = _FILES[name]
        if not (run_dir / f"{table}.parquet").is_file():
            if name == "fct.txt":
                raise ScenarioError(f"{run_dir}: no flows.parquet; is it a hopsim run folder?")
            report.append(Exported(name, None, skipped=f"{run_dir} has no {table}.parquet ({how})"))
            continue
        lines = make(run_dir)
        texts[out_dir / name] = "".join(l + "\n" for l in lines)
        report.append(Exported(name, out_dir / name, len(lines)))
    try:
        with created_folder(out_dir):
            _write_all(texts)
    except OSError as e:
        raise ScenarioError(f"--out {out_dir}: cannot write the export of {run_dir} ({why_unwritable(out_dir / 'fct.txt', e)})") from None
    return report


def export_fct(run_dir: Path | str, out: Path | str | None = None) -> tuple[Path, int]:
    """Write fct.txt alone (default: RUN_DIR/fct.txt); returns its path and the number of lines."""
    run_dir = Path(run_dir)
    _check_run(run_dir)
    out = Path(out) if out else run_dir / "fct.txt"
    lines = fct_lines(run_dir)
    try:
        _write_all({out: "".join(l + "\n" for l in lines)})
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot write the fct.txt of {run_dir} ({why_unwritable(out, e)})") from None
    return out, len(lines)
