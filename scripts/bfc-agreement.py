"""How far hopsim agrees with the BFC paper's simulator (BFC_NS3_NSDI2022) on its reference runs.

    python scripts/bfc-agreement.py REF_ROOT [--keep DIR] [--only NAME ...] [--threads N] [--seeds N]

(`bash scripts/bfc-agreement.sh` runs this with the repository's .venv.) REF_ROOT holds one
folder per run of that simulator (built and run outside this repository), each with the
configuration it ran (`config.txt`) and its standard output (`stdout.txt`: the flows it drew, its
per-flow lines and its buffer lines; time.txt too, optionally: its wall time).

For each run, with the `hopsim` CLI (as a user would): import-bfc its config with the flows it
drew, run it, export-bfc the run, and compare-fct its output against the reference's with its
slowdown basis (`--basis ref`: fct / (4 or 8 us + serialization), same ToR or not), for the
background flows in its packet-count buckets and for its incast flows. Then one table per run:
per bucket the mean and p99 slowdown, the incast flows' mean and p99 FCT, and the switches'
buffer occupancy (its `T:` lines and hopsim's samples, every 10 us: p99 and peak by hop class,
ToR and spine), reference against hopsim with the relative difference. The targets: within 10 %
for means and buffer peaks, within 20 % for p99s; a bucket with fewer than 100 flows in the
reference is shown but not judged (its p99 is one or two flows). A slowdown p99 is judged as
compare-fct judges it: the reference's 95% bootstrap interval (its one run) against the range
over hopsim's seeds 1..N (`--seeds N`, each run exported), the gap between the two ranges; the
table shows both ranges.

Exit code: 0 when every judged number of every run is within its target, 1 when one is not, 2
when REF_ROOT holds no run.
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
_spec.loader.exec_module(base)  # (its Row, runner and CLI helpers: one agreement tool for every simulator)

RUN_FILES = ("config.txt", "stdout.txt")
TARGETS = {"mean": 0.10, "p99": 0.20, "peak": 0.10}
MIN_FLOWS = 100
"""Fewer reference flows in a bucket than this: shown, not judged."""
LABELS = ("<=3", "<=12", "<=48", "<=192", "<=768", "<=3072", "<=12288", "<=49152", ">49152")


def metrics(ref: Path, run: Path, work: Path, timeout: float, extra: list[Path] = ()) -> tuple[list[tuple], str]:
    """(metric, reference, hopsim, target kind or None, reference count[, (reference range, hopsim
    range, their gap)]) rows; a problem or ''. `extra`: hopsim's other seeds, exported."""
    from hopsim.interop.bfc.compare import buffer_stats
    from hopsim.interop.bfc.exporter import buffer_samples
    from hopsim.interop.bfc.files import parse_stdout
    from hopsim.interop.hpcc.exporter import _time_offset_ps

    out: list[tuple] = []
    exported = work / "stdout-bfc.txt"
    seeds = [x for e in extra for x in ("--cand-seed", e)]
    for flows in ("background", "incast"):
        cmp_json = work / f"compare-{flows}.json"
        p = base.hopsim("compare-fct", ref / "stdout.txt", exported, "--basis", "ref", "--flows", flows, "--json", cmp_json,
                        *seeds, timeout=timeout)
        if p.returncode not in (0, 1):
            if flows == "incast" and "no flow" in base.last_error(p):
                continue
            return out, f"compare-fct --flows {flows}: {base.last_error(p)}"
        c = json.loads(cmp_json.read_text())
        if flows == "background":
            for b in c["buckets"]:
                if b["n"]:
                    label = f"slowdown {LABELS[b['bucket'] - 1]} pkts"
                    out.append((f"{label} mean", b["ref_mean"], b["cand_mean"], "mean", b["n"]))
                    out.append((f"{label} p99", b["ref_p99"], b["cand_p99"], "p99", b["n"],
                                (b["ref_p99_range"], b["cand_p99_range"], b["p99_range_gap"])))
        else:
            o = c["overall"]
            out.append(("slowdown incast mean", o["mean"]["ref"], o["mean"]["cand"], "mean", c["matched"]))
            out.append(("slowdown incast p99", o["p99"]["ref"], o["p99"]["cand"], "p99", c["matched"],
                        (o["p99"]["ref_range"], o["p99"]["cand_range"], o["p99"]["range_gap"])))
    # the incast flows' FCT (us), from the two stdout files
    ref_run = parse_stdout((ref / "stdout.txt").read_text(), str(ref / "stdout.txt"))
    cand_run = parse_stdout(exported.read_text(), str(exported))
    if ref_run.incast_packets:
        for name, r in (("ref", ref_run), ("cand", cand_run)):
            fcts = sorted(f.fct_ns / 1000 for f in r.flows if f.packets == ref_run.incast_packets)
            setattr(r, "incast_fct", (sum(fcts) / len(fcts), fcts[min(int(0.99 * len(fcts)), len(fcts) - 1)]) if fcts else None)
        rf, cf = ref_run.incast_fct, cand_run.incast_fct  # type: ignore[attr-defined]
        n = sum(f.packets == ref_run.incast_packets for f in ref_run.flows)
        out.append(("incast FCT mean (us)", rf and rf[0], cf and cf[0], "mean", n))
        out.append(("incast FCT p99 (us)", rf and rf[1], cf and cf[1], "p99", n))
    # buffers: its samples run to its last `T:` line; hopsim's over the same span
    last = max((t for t, _, _ in ref_run.buffer), default=None)
    rb = buffer_stats(ref_run.buffer)
    off = _time_offset_ps(run) // 1000
    cb = buffer_stats([(t // 1000 + off, n, b) for t, n, b in buffer_samples(run)], last)
    for hop in ("tor", "spine"):
        out.append((f"buffer {hop} p99 (KB)", _kb(rb.p99.get(hop)), _kb(cb.p99.get(hop)), "p99", rb.samples.get(hop, 0)))
        out.append((f"buffer {hop} peak (KB)", _kb(rb.peak.get(hop)), _kb(cb.peak.get(hop)), "peak", rb.samples.get(hop, 0)))
    return out, ""


def within(ref: float, cand: float | None, kind: str, ranges: tuple | None = None) -> bool:
    """Within its target: a p99 of the slowdowns by its ranges' gap (compare-fct's), the rest by
    the two values' relative difference."""
    if ranges is not None and ranges[2] is not None:
        return ranges[2] <= TARGETS[kind]
    return cand is not None and abs(cand - ref) / ref <= TARGETS[kind]


def _kb(v: float | None) -> float | None:
    return None if v is None else v / 1000


def one_run(ref: Path, work: Path, timeout: float, threads: int | None, seeds: int = 1) -> base.Row:
    row = base.Row(ref.name, ns3_wall=base.ns3_wall(ref))
    sc, run = work / "scenario.toml", work / "run"
    p = base.hopsim("import-bfc", ref / "config.txt", "--out", sc, "--flows", ref / "stdout.txt", timeout=timeout)
    if p.returncode != 0:
        row.result, row.problem = "import failed", base.last_error(p)
        return row
    t0 = time.perf_counter()
    p = base.hopsim("run", sc, "--out", run, *(["--threads", threads] if threads else []), timeout=timeout)
    row.wall_s = time.perf_counter() - t0
    if p.returncode != 0:
        row.result, row.problem = "run failed", base.last_error(p)
        return row
    ref_text = (ref / "stdout.txt").read_text()
    from hopsim.interop.bfc.files import parse_stdout

    inc = parse_stdout(ref_text, str(ref)).incast_packets
    extra = []
    for k, r in enumerate([run, *base.more_seeds(sc, work, seeds, timeout, *(["--threads", threads] if threads else []))], 1):
        exported = work / ("stdout-bfc.txt" if k == 1 else f"stdout-bfc-seed{k}.txt")
        p = base.hopsim("export-bfc", r, "--out", exported, *(["--incast-packets", inc] if inc else []), timeout=timeout)
        if p.returncode != 0:
            row.result, row.problem = "export failed", base.last_error(p)
            return row
        if k > 1:
            extra.append(exported)
    rows, problem = metrics(ref, run, work, timeout, extra)
    row.metrics = rows  # type: ignore[attr-defined]
    if problem:
        row.result, row.problem = "compare failed", problem
        return row
    judged = [m for m in rows if m[3] and m[4] >= MIN_FLOWS and m[1]]
    bad = [m[0] for m in judged if not within(*m[1:4], *m[5:])]
    row.result = "pass" if not bad else "FAIL"
    row.notes.append(f"{len(judged) - len(bad)} of {len(judged)} judged numbers within target; hopsim run {row.wall_s:.0f} s")
    return row


def table(rows: list[base.Row]):
    from rich.console import Group
    from rich.table import Table

    def num(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"

    out = []
    for r in rows:
        t = Table(title=f"{r.name}: hopsim vs the BFC simulator ({r.result})", title_justify="left")
        for c in ("metric", "n ref", "reference", "hopsim", "rel. diff", "ranges (ref; hopsim)", "target"):
            t.add_column(c, justify="left" if c == "metric" else "right")
        for name, ref, cand, kind, n, *rg in getattr(r, "metrics", []):
            diff = None if ref in (None, 0) or cand is None else (cand - ref) / ref
            judged = kind is not None and n >= MIN_FLOWS
            target = f"{100 * TARGETS[kind]:.0f}%" if judged else "-"
            d = "-" if diff is None else f"{100 * diff:+.1f}%"
            if judged and ref and not within(ref, cand, kind, *rg):
                d = f"[red]{d}[/]"
            span = (lambda x: "-" if x is None else f"{x[0]:.3f}-{x[1]:.3f}")
            ranges = f"{span(rg[0][0])}; {span(rg[0][1])}" if rg and rg[0][0] is not None else "-"
            t.add_row(name, str(n), num(ref), num(cand), d, ranges, target)
        out.append(t)
    return Group(*out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref_root", type=Path, help="folder of BFC simulator run folders")
    ap.add_argument("--threads", type=int, help="hopsim run's --threads")
    base.add_common(ap)
    a = ap.parse_args(argv)
    return base.run_all(a, a.ref_root, RUN_FILES, lambda d, work: one_run(d, work, a.timeout, a.threads, a.seeds),
                        "import, run, export, compare", table)


if __name__ == "__main__":
    sys.exit(main())
