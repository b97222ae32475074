"""How far hopsim agrees with Floodgate-NS3 on its reference runs.

    python scripts/floodgate-agreement.py REF_ROOT --tree TREE [--tol 0.10] [--keep DIR] [--only NAME ...]

(`bash scripts/floodgate-agreement.sh` runs this with the repository's .venv.) REF_ROOT holds one
folder per run of Floodgate-NS3 (built outside this repository), each with the config it ran
(`config.ini`), its standard output (`stdout.txt`: the flows it drew), its fct file
(`*-fct.txt`) and its PFC file (`*-pfc.txt`; time.txt too, optionally: its wall time). TREE is
the Floodgate-NS3 source tree the configs' relative paths (`mix/`, `distribution/`) start from.

For each run, with the `hopsim` CLI (as a user would): import-floodgate its config with the
flows it drew, run it, and compare-fct against its fct file at --tol, both sides' FCTs over its
oracle FCT (`--basis ref`: hopsim's run folder reads as an HPCC fct file, whose standalone FCT is
the HPCC simulator's formula, not Floodgate-NS3's `Get_Oracle_Fct`; one denominator leaves only
the FCTs' difference). Frames: the lines of its PFC file (in its ideal design dstPause travels as
PFC frames to the hosts) beside hopsim's PFC and destination-pause frames (`summary.json`'s
`control_frames`). The first table is that of `scripts/hpcc-agreement.py`.

A second table compares metric by metric, each with its limit: mean slowdown of all flows and of
the incast's (compare-fct --flows incast, the incast hosts read from its standard output) within
10%, their p99s within 20%; the largest sampled port occupancy per hop class (its buffer logs,
`*-buffer<k>.log`, against hopsim's buffer table, both sampled every 10 us) and per switch class,
and without Floodgate the ports' peaks in both queue monitors (sampled every 100 ns, 1 KB bins:
its QLEN_MON_FILE against hopsim's qlen table), the pause frames and the time paused per hop
class (its PFC file against hopsim's ports table) within 10%. What each
file holds and how its devices map to hop classes: `hopsim.interop.floodgate.outputs`.

Exit code: 0 when every run passes, 1 when one does not, 2 when REF_ROOT holds no run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

_spec = importlib.util.spec_from_file_location("hpcc_agreement", Path(__file__).with_name("hpcc-agreement.py"))
base = sys.modules["hpcc_agreement"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)  # (its Row, runner and table: one agreement table for every simulator)

RUN_FILES = ("config.ini", "stdout.txt", "*-fct.txt", "*-pfc.txt")
MEAN_TOL, P99_TOL = 0.10, 0.20
METRICS: dict[str, list[tuple[str, float | None, float | None, float]]] = {}
"""Per run: (metric, reference, hopsim, limit) for the second table."""


def one_run(ref: Path, tree: Path, work: Path, tol: float, timeout: float) -> base.Row:
    row = base.Row(ref.name, ns3_wall=base.ns3_wall(ref))
    fct, pfc = next(ref.glob("*-fct.txt")), next(ref.glob("*-pfc.txt"))
    row.pfc_ref = base.line_count(pfc)
    sc, run, cmp_json = work / "scenario.toml", work / "run", work / "compare.json"
    p = base.hopsim("import-floodgate", (ref / "config.ini").resolve(), "--out", sc.resolve(), "--flows",
                    (ref / "stdout.txt").resolve(), timeout=timeout, cwd=tree)
    if p.returncode != 0:
        row.result, row.problem = "import failed", base.last_error(p)
        return row
    t0 = time.perf_counter()
    p = base.hopsim("run", sc, "--out", run, timeout=timeout)
    row.wall_s = time.perf_counter() - t0
    if p.returncode != 0:
        row.result, row.problem = "run failed", base.last_error(p)
        return row
    frames = json.loads((run / "summary.json").read_text()).get("control_frames", {})
    row.pfc = frames.get("pfc", 0) + frames.get("dst_pause", 0)
    p = base.hopsim("compare-fct", fct, run, "--tol", tol, "--basis", "ref", "--json", cmp_json, timeout=timeout)
    if p.returncode not in (0, 1):
        row.result, row.problem = "compare failed", base.last_error(p)
        return row
    base.fill_from_compare(row, cmp_json, p.returncode)
    METRICS[ref.name] = metrics(ref, tree, work, run, cmp_json, row, timeout)
    return row


def metrics(ref: Path, tree: Path, work: Path, run: Path, cmp_json: Path, row: base.Row, timeout: float):
    """The second table's rows of one run (module doc)."""
    from hopsim.interop.floodgate import outputs as O
    from hopsim.interop import ns3_config as C
    from hopsim.interop.floodgate.files import read_topology

    cfg = C.parse_config((ref / "config.ini").read_text())
    topo_path = C._file(cfg, "TOPOLOGY_FILE", tree)
    topo = read_topology(topo_path, topo_path.read_text())
    o = json.loads(cmp_json.read_text())["overall"]
    out = [("slowdown mean", o["mean"]["ref"], o["mean"]["cand"], MEAN_TOL),
           ("slowdown p99", o["p99"]["ref"], o["p99"]["cand"], P99_TOL)]
    dsts = O.incast_dsts(topo, (ref / "stdout.txt").read_text())
    if dsts:
        inc_json = work / "compare-incast.json"
        p = base.hopsim("compare-fct", next(ref.glob("*-fct.txt")), run, "--flows", "incast", "--incast-dsts",
                        ",".join(map(str, dsts)), "--basis", "ref", "--json", inc_json, timeout=timeout)
        if p.returncode in (0, 1):
            o = json.loads(inc_json.read_text())["overall"]
            out += [("incast slowdown mean", o["mean"]["ref"], o["mean"]["cand"], MEAN_TOL),
                    ("incast slowdown p99", o["p99"]["ref"], o["p99"]["cand"], P99_TOL)]
    (ref_port, ref_sw), (run_port, run_sw) = O.buffer_peaks(topo, O.buffer_logs(ref, topo)), O.run_buffer_peaks(run, topo)
    for c in sorted(set(ref_sw) | set(run_sw)):
        out.append((f"peak buffer {c} switch (KB)", ref_sw.get(c, 0) / 1e3, run_sw.get(c, 0) / 1e3, MEAN_TOL))
    if C._one(cfg, "USE_FLOODGATE", int, 0) != 1:  # its ports leave VOQ bytes out (interop.floodgate.outputs)
        for c in sorted(set(ref_port) | set(run_port)):
            out.append((f"peak buffer {c} port (KB)", ref_port.get(c, 0) / 1e3, run_port.get(c, 0) / 1e3, MEAN_TOL))
        # its queue-length monitor, in the run folder under the name its config gives
        qlen = ref / Path(C._one(cfg, "QLEN_MON_FILE")).name if "QLEN_MON_FILE" in cfg else None
        if qlen is not None and qlen.exists() and (run / "qlen.parquet").exists():
            ref_q, run_q = O.qlen_peaks(topo, qlen), O.run_qlen_peaks(run)
            for c in sorted(set(ref_q) | set(run_q)):
                out.append((f"peak qlen {c} port (KB, 100 ns)", ref_q.get(c, 0), run_q.get(c, 0), MEAN_TOL))
    out.append(("pause frames", row.pfc_ref, row.pfc, MEAN_TOL))
    pfc = next(ref.glob("*-pfc.txt"))
    ref_paused = O.paused_ns(topo, pfc)
    run_paused = O.run_paused_ns(run)
    for c in sorted(set(ref_paused) | set(run_paused)):
        out.append((f"paused time {c} (us)", ref_paused.get(c, 0) / 1e3, run_paused.get(c, 0) / 1e3, MEAN_TOL))
    return out


def metric_table(rows: list[base.Row]):
    from rich.table import Table

    t = Table(title="metric by metric (gap = |hopsim - ref| / ref)", title_justify="left")
    for c in ("run", "metric", "ref", "hopsim", "gap", "limit", "within"):
        t.add_column(c, justify="left" if c in ("run", "metric", "within") else "right")
    for r in rows:
        for name, a, b, lim in METRICS.get(r.name, []):
            gap = None if a is None or b is None else (abs(b - a) / a if a else (0.0 if b == 0 else float("inf")))
            ok = "-" if gap is None else "[green]yes[/]" if gap <= lim else "[red]no[/]"
            fmt = (lambda v: "-" if v is None else f"{v:.3f}" if v < 1000 else f"{v:.0f}")
            t.add_row(r.name, name, fmt(a), fmt(b), "-" if gap is None else f"{100 * gap:.1f}%", f"{100 * lim:.0f}%", ok)
    return t


def tables(rows: list[base.Row]):
    from rich.console import Group

    title = "hopsim vs Floodgate-NS3 (slowdown = fct / its own ideal fct)"
    return Group(base.table(rows, title, ("pfc ref", "pfc+dstPause hopsim")), metric_table(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref_root", type=Path, help="folder of Floodgate-NS3 run folders")
    ap.add_argument("--tree", type=Path, required=True, help="the Floodgate-NS3 source tree the configs name files in")
    base.add_common(ap)
    a = ap.parse_args(argv)
    return base.run_all(a, a.ref_root, RUN_FILES, lambda d, work: one_run(d, a.tree, work, a.tol, a.timeout),
                        "import, run, compare", tables)


if __name__ == "__main__":
    sys.exit(main())
