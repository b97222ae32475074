"""How far hopsim agrees with Floodgate-NS3 on its reference runs.

    python scripts/floodgate-agreement.py REF_ROOT --tree TREE [--tol 0.10] [--keep DIR] [--only NAME ...] [--seeds N]
                                          [--set KEY=VALUE ...]

(`bash scripts/floodgate-agreement.sh` runs this with the repository's .venv.) REF_ROOT holds one
folder per run of Floodgate-NS3 (built outside this repository), each with the config it ran
(`config.ini`), its fct file (`fct.txt` or `*-fct.txt`), its PFC file (`pfc.txt` or `*-pfc.txt`)
and the flows it drew as it printed them (its standard output as `stdout.txt`, or any other
`.txt` there holding its flow lines, such as `scripts/ns3_flow_list.py`'s output); its buffer
logs, queue monitor and time.txt (its wall time) when it has them. TREE is the Floodgate-NS3
source tree the configs' relative paths (`mix/`, `distribution/`) start from.

For each run, with the `hopsim` CLI (as a user would): import-floodgate its config with the
flows it drew, run it, and compare-fct against its fct file at --tol, both sides' FCTs over its
oracle FCT (`--basis ref`: hopsim's run folder reads as an HPCC fct file, whose standalone FCT is
the HPCC simulator's formula, not Floodgate-NS3's `Get_Oracle_Fct`; one denominator leaves only
the FCTs' difference). Frames: the lines of its PFC file (in its ideal design dstPause travels as
PFC frames to the hosts) beside hopsim's PFC and destination-pause frames (`summary.json`'s
`control_frames`). The first table is that of `scripts/hpcc-agreement.py`.

A second table compares metric by metric, each with its limit: mean slowdown of all flows and of
the incast's (compare-fct --flows incast, the incast hosts read from its standard output) within
10%, their p99s within 20% (as compare-fct judges them: its 95% bootstrap interval against the
range over hopsim's seeds 1..N, `--seeds N`); the largest sampled port occupancy per hop class (its buffer logs,
`*-buffer<k>.log`, against hopsim's buffer table, both sampled every 10 us) and per switch class,
and without Floodgate the ports' peaks in both queue monitors (sampled every 100 ns, 1 KB bins:
its QLEN_MON_FILE against hopsim's qlen table; not available where its file holds no dump after
the first, which it writes every millisecond), the pause frames and the time paused per hop
class within 10%. Time paused is counted by its own rule on both sides (`paused_count`: a device
is paused once per paused class, the destination under dstPause, so a host's time is the sum over
destinations of each one's pause to resume), from its PFC file and from hopsim's ports and
control tables. A metric the reference folder has no file for (no buffer logs, no queue monitor,
no incast in its flows) reads "not available" and is not judged. What each file holds and how
its devices map to hop classes: `hopsim.interop.floodgate.outputs`.

`--set KEY=VALUE` (repeatable) is passed to every `hopsim run` of the imported scenarios, to
measure what one of the importer's options does against the same reference runs (e.g. `--set
flow_control.floodgate.voq_service=strict --set flow_control.floodgate.window_fit=mtu`: hopsim's
own VOQ service and window test in place of Floodgate-NS3's).

Exit code: 0 when every run passes (compare-fct within --tol and every metric with a value on
both sides within its limit), 1 when one does not, 2 when REF_ROOT holds no run.
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

RUN_FILES = ("config.ini", "*fct.txt", "*pfc.txt")
NOT_FLOW_LISTS = ("fct.txt", "pfc.txt", "time.txt")
MEAN_TOL, P99_TOL = 0.10, 0.20
METRICS: dict[str, list[tuple[str, float | None, float | None, float]]] = {}
"""Per run: (metric, reference, hopsim, limit) for the second table."""


def run_file(ref: Path, name: str) -> Path:
    """Its `name` file (`fct.txt`, `pfc.txt`): by that name, else the one `*-name` its config names."""
    return ref / name if (ref / name).is_file() else next(ref.glob(f"*-{name}"))


def flow_list(ref: Path) -> Path | None:
    """The flows the run drew as it printed them: `stdout.txt`, else the other `.txt` holding flow lines."""
    from hopsim.interop.floodgate.files import drawn_flows

    if (ref / "stdout.txt").is_file():
        return ref / "stdout.txt"
    for f in sorted(ref.glob("*.txt")):
        if not f.name.endswith(NOT_FLOW_LISTS) and drawn_flows(f.read_text(errors="replace")):
            return f
    return None


def one_run(ref: Path, tree: Path, work: Path, tol: float, timeout: float, seeds: int = 1,
            sets: list[str] = ()) -> base.Row:
    row = base.Row(ref.name, ns3_wall=base.ns3_wall(ref))
    fct, pfc, flows = run_file(ref, "fct.txt"), run_file(ref, "pfc.txt"), flow_list(ref)
    if flows is None:
        row.result, row.problem = "no flow list", (f"{ref}: no flow list (stdout.txt, or a .txt with the flow lines "
                                                   "`flow_id src dst size start qp_id msg_seq` it printed)")
        return row
    row.pfc_ref = base.line_count(pfc)
    sc, run, cmp_json = work / "scenario.toml", work / "run", work / "compare.json"
    p = base.hopsim("import-floodgate", (ref / "config.ini").resolve(), "--out", sc.resolve(), "--flows",
                    flows.resolve(), timeout=timeout, cwd=tree)
    if p.returncode != 0:
        row.result, row.problem = "import failed", base.last_error(p)
        return row
    t0 = time.perf_counter()
    run_args = [x for kv in sets for x in ("--set", kv)]
    p = base.hopsim("run", sc, "--out", run, *run_args, timeout=timeout)
    row.wall_s = time.perf_counter() - t0
    if p.returncode != 0:
        row.result, row.problem = "run failed", base.last_error(p)
        return row
    frames = json.loads((run / "summary.json").read_text()).get("control_frames", {})
    row.pfc = frames.get("pfc", 0) + frames.get("dst_pause", 0)
    extra = base.seed_args(base.more_seeds(sc, work, seeds, timeout, *run_args))
    p = base.hopsim("compare-fct", fct, run, "--tol", tol, "--basis", "ref", "--json", cmp_json, *extra, timeout=timeout)
    if p.returncode not in (0, 1):
        row.result, row.problem = "compare failed", base.last_error(p)
        return row
    base.fill_from_compare(row, cmp_json, p.returncode)
    METRICS[ref.name] = metrics(ref, tree, work, run, cmp_json, row, timeout, extra)
    outside = [m[0] for m in METRICS[ref.name] if verdict(*m[1:]) is False]
    if outside:
        row.result = "FAIL"
        row.notes.append("outside its limit: " + ", ".join(outside))
    return row


def gap(a: float | None, b: float | None) -> float | None:
    """|hopsim - ref| / ref; None when either has no value or the reference is 0 (no ratio)."""
    return None if a is None or b is None or a == 0 else abs(b - a) / a


def verdict(a: float | None, b: float | None, limit: float, range_gap: float | None = None) -> bool | None:
    """Within `limit`, outside it, or None (not available: a side without a value). A reference
    of 0 holds only against 0. A p99 carries compare-fct's `range_gap` (its bootstrap interval
    against hopsim's seeds), which is judged in place of the two values' gap."""
    if a is None or b is None:
        return None
    if range_gap is not None:
        return range_gap <= limit
    return b == 0 if a == 0 else abs(b - a) / a <= limit


def metrics(ref: Path, tree: Path, work: Path, run: Path, cmp_json: Path, row: base.Row, timeout: float,
            extra: list[object] = ()):
    """The second table's rows of one run (module doc)."""
    from hopsim.interop.floodgate import outputs as O
    from hopsim.interop import ns3_config as C
    from hopsim.interop.floodgate.files import read_topology

    cfg = C.parse_config((ref / "config.ini").read_text())
    topo_path = C._file(cfg, "TOPOLOGY_FILE", tree)
    topo = read_topology(topo_path, topo_path.read_text())
    o = json.loads(cmp_json.read_text())["overall"]
    out = [("slowdown mean", o["mean"]["ref"], o["mean"]["cand"], MEAN_TOL),
           ("slowdown p99", o["p99"]["ref"], o["p99"]["cand"], P99_TOL, o["p99"].get("range_gap"))]
    dsts = O.incast_dsts(topo, flow_list(ref).read_text(errors="replace"))
    inc: dict[str, tuple[float | None, ...]] = {"mean": (None, None), "p99": (None, None, None)}
    if dsts:
        inc_json = work / "compare-incast.json"
        p = base.hopsim("compare-fct", run_file(ref, "fct.txt"), run, "--flows", "incast", "--incast-dsts",
                        ",".join(map(str, dsts)), "--basis", "ref", "--json", inc_json, *extra, timeout=timeout)
        if p.returncode in (0, 1):
            o = json.loads(inc_json.read_text())["overall"]
            inc = {"mean": (o["mean"]["ref"], o["mean"]["cand"]), "p99": (o["p99"]["ref"], o["p99"]["cand"], o["p99"].get("range_gap"))}
    out += [("incast slowdown mean", *inc["mean"], MEAN_TOL), ("incast slowdown p99", *inc["p99"][:2], P99_TOL, inc["p99"][2])]
    logs = O.buffer_logs(ref, topo)
    (ref_port, ref_sw), (run_port, run_sw) = O.buffer_peaks(topo, logs), O.run_buffer_peaks(run, topo)
    kb = (lambda d, c: d[c] / 1e3 if c in d else (0.0 if logs else None))  # no logs: not available
    for c in sorted(set(ref_sw) | set(run_sw)):
        out.append((f"peak buffer {c} switch (KB)", kb(ref_sw, c), run_sw.get(c, 0) / 1e3, MEAN_TOL))
    if C._one(cfg, "USE_FLOODGATE", int, 0) != 1:  # its ports leave VOQ bytes out (interop.floodgate.outputs)
        for c in sorted(set(ref_port) | set(run_port)):
            out.append((f"peak buffer {c} port (KB)", kb(ref_port, c), run_port.get(c, 0) / 1e3, MEAN_TOL))
        # its queue-length monitor, in the run folder under the name its config gives
        qlen = ref / Path(C._one(cfg, "QLEN_MON_FILE")).name if "QLEN_MON_FILE" in cfg else None
        if (run / "qlen.parquet").exists():
            have = qlen is not None and qlen.exists()
            ref_q, run_q = O.qlen_peaks(topo, qlen) if have else None, O.run_qlen_peaks(run)
            for c in sorted(set(ref_q or ()) | set(run_q)):
                out.append((f"peak qlen {c} port (KB, 100 ns)", None if ref_q is None else ref_q.get(c, 0), run_q.get(c, 0),
                            MEAN_TOL))
    out.append(("pause frames", row.pfc_ref, row.pfc, MEAN_TOL))
    pfc = run_file(ref, "pfc.txt")
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
        for name, a, b, lim, *rg in METRICS.get(r.name, []):
            g, ok = gap(a, b), verdict(a, b, lim, *rg)
            fmt = (lambda v: "not available" if v is None else f"{v:.3f}" if v < 1000 else f"{v:.0f}")
            shown = f"{100 * g:.1f}%" if g is not None else "-"
            if rg and rg[0] is not None:
                shown += f" (ranges {100 * rg[0]:.1f}%)"
            t.add_row(r.name, name, fmt(a), fmt(b), shown, f"{100 * lim:.0f}%",
                      "not available" if ok is None else "[green]yes[/]" if ok else "[red]no[/]")
    return t


def tables(rows: list[base.Row]):
    from rich.console import Group

    title = "hopsim vs Floodgate-NS3 (slowdown = fct / its own ideal fct)"
    return Group(base.table(rows, title, ("pfc ref", "pfc+dstPause hopsim")), metric_table(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref_root", type=Path, help="folder of Floodgate-NS3 run folders")
    ap.add_argument("--tree", type=Path, required=True, help="the Floodgate-NS3 source tree the configs name files in")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to every hopsim run of the imported scenarios (repeatable)")
    base.add_common(ap)
    a = ap.parse_args(argv)
    return base.run_all(a, a.ref_root, RUN_FILES,
                        lambda d, work: one_run(d, a.tree, work, a.tol, a.timeout, a.seeds, a.set),
                        "import, run, compare", tables)


if __name__ == "__main__":
    sys.exit(main())
