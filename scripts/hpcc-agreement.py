"""How far hopsim agrees with the HPCC ns-3 simulator on its reference runs.

    python scripts/hpcc-agreement.py [REF_ROOT] [--tol 0.10] [--keep DIR] [--only NAME ...] [--seeds N]

(`bash scripts/hpcc-agreement.sh` runs this with the repository's .venv.) REF_ROOT holds one
folder per reference run, each with the simulator's config.txt, fct.txt and pfc.txt (time.txt
too, optionally: its wall time), and the topology and flow files those configs name, by bare
name, beside the folders (import-hpcc looks in the config's folder and its parent). Default:
the first of <repo>/shared/reference/ns3-hpcc, <repo>/../shared/reference/ns3-hpcc and
/work/shared/reference/ns3-hpcc that exists.

For each run, with the `hopsim` CLI (as a user would): import-hpcc its config, run it,
export-hpcc, compare-fct against the reference's fct.txt at --tol, and count both pfc.txt's
lines. p99s are judged as compare-fct judges them: the reference's (one run) as its 95%
bootstrap interval, hopsim's as the range over its seeds 1..N (`--seeds N`, each run with
`--set seed=k`; default one run). Then one table: run, reference and hopsim mean / p99 slowdown (over the matched flows;
over all lines of each fct.txt where the comparison did not run), matched flows (of the
reference's), the worst size-bucket gap, pass / FAIL, pfc.txt lines of both and their
ratio, hopsim's wall time (the `hopsim run` command) and the simulator's (time.txt). A run whose
step fails is reported as such with the step's message, and the others still run.

Exit code: 0 when every run passes, 1 when one does not, 2 when REF_ROOT holds no run.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOTS = [REPO / "shared/reference/ns3-hpcc", REPO.parent / "shared/reference/ns3-hpcc",
                 Path("/work/shared/reference/ns3-hpcc")]
RUN_FILES = ("config.txt", "fct.txt", "pfc.txt")


@dataclass
class Row:
    name: str
    ref_mean: float | None = None
    ref_p99: float | None = None
    mean: float | None = None
    p99: float | None = None
    matched: str = "-"
    worst: float | None = None
    result: str = "-"
    pfc_ref: int | None = None
    pfc: int | None = None
    wall_s: float | None = None
    ns3_wall: str = "-"
    problem: str = ""
    notes: list[str] = field(default_factory=list)


def hopsim(*args: object, timeout: float, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The hopsim CLI of this interpreter, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "hopsim.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def last_error(p: subprocess.CompletedProcess) -> str:
    lines = [l.strip() for l in (p.stderr + p.stdout).splitlines() if l.strip()]
    errs = [l for l in lines if l.startswith("error:")]
    return (errs[-1] if errs else lines[-1] if lines else f"exit code {p.returncode}")[:300]


def line_count(path: Path) -> int | None:
    if not path.is_file():
        return None
    with path.open("rb") as f:
        return sum(1 for l in f if l.strip())


def mean_p99(fct: Path) -> tuple[float, float] | tuple[None, None]:
    from hopsim.interop.compare import quantile, read_fct

    rows, _ = read_fct(fct)
    if not rows:
        return None, None
    sd = [r.slowdown for r in rows]
    return sum(sd) / len(sd), quantile(sd, 0.99)


def ns3_wall(d: Path) -> str:
    t = d / "time.txt"
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t.read_text()) if t.is_file() else None
    if not m:
        return "-"
    secs = 0.0
    for part in m.group(1).split(":"):
        secs = secs * 60 + float(part)
    return f"{secs:.1f} s"


def one_run(ref: Path, work: Path, tol: float, timeout: float, seeds: int = 1) -> Row:
    row = Row(ref.name, ns3_wall=ns3_wall(ref))
    row.ref_mean, row.ref_p99 = mean_p99(ref / "fct.txt")
    row.pfc_ref = line_count(ref / "pfc.txt")
    sc, run, cmp_json = work / "scenario.toml", work / "run", work / "compare.json"

    p = hopsim("import-hpcc", ref / "config.txt", "--out", sc, timeout=timeout)
    if p.returncode != 0:
        row.result, row.problem = "import failed", last_error(p)
        return row
    t0 = time.perf_counter()
    try:
        p = hopsim("run", sc, "--out", run, timeout=timeout)
    except subprocess.TimeoutExpired:
        row.result, row.problem = "run timed out", f"hopsim run took more than {timeout:g} s"
        return row
    row.wall_s = time.perf_counter() - t0
    if p.returncode != 0:
        row.result, row.problem = "run failed", last_error(p)
        return row
    extra = more_seeds(sc, work, seeds, timeout)
    p = hopsim("export-hpcc", run, timeout=timeout)
    if p.returncode != 0:
        row.result, row.problem = "export failed", last_error(p)
        return row
    row.notes += [l.removeprefix("note: ").replace(str(run), "its run folder")
                  for l in p.stderr.splitlines() if l.startswith("note:")]
    row.mean, row.p99 = mean_p99(run / "fct.txt")
    row.pfc = line_count(run / "pfc.txt")
    p = hopsim("compare-fct", ref / "fct.txt", run / "fct.txt", "--tol", tol, "--json", cmp_json, *seed_args(extra),
               timeout=timeout)
    if p.returncode not in (0, 1):
        row.result, row.problem = "compare failed", last_error(p)
        return row
    fill_from_compare(row, cmp_json, p.returncode)
    return row


def fill_from_compare(row: Row, cmp_json: Path, code: int) -> None:
    """`row`'s slowdowns, matched flows, worst gap and result from compare-fct's JSON and exit code."""
    c = json.loads(cmp_json.read_text())
    o = c["overall"]
    row.ref_mean, row.ref_p99, row.mean, row.p99 = o["mean"]["ref"], o["p99"]["ref"], o["mean"]["cand"], o["p99"]["cand"]
    row.matched = f"{c['matched']}/{c['ref_flows']}"
    row.worst = c["worst"]["gap"]
    w = c["worst"]
    row.notes.append(f"worst gap at bucket {w['bucket']} {w['stat']}: ref {w['ref']:.3f}, hopsim {w['cand']:.3f}")
    row.result = "pass" if code == 0 else "FAIL"


def find_root(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    for r in DEFAULT_ROOTS:
        if r.is_dir():
            return r
    return DEFAULT_ROOTS[-1]


def table(rows: list[Row], title: str = "hopsim vs the HPCC simulator (slowdown = fct / standalone_fct)",
          frames: tuple[str, str] = ("pfc ref", "pfc hopsim")):
    from rich.table import Table

    def num(v: float | None, fmt: str = "{:.3f}") -> str:
        return "-" if v is None else fmt.format(v)

    t = Table(title=title, title_justify="left")
    for c in ("run", "ref mean", "ref p99", "hopsim mean", "hopsim p99", "matched", "worst gap", "result",
              *frames, "ratio", "hopsim wall", "ns-3 wall"):
        t.add_column(c, justify="left" if c in ("run", "result") else "right")
    for r in rows:
        ratio = "-" if r.pfc is None or not r.pfc_ref else f"{r.pfc / r.pfc_ref:.2f}"
        style = {"pass": "green", "FAIL": "red"}.get(r.result, "yellow")
        t.add_row(r.name, num(r.ref_mean), num(r.ref_p99), num(r.mean), num(r.p99), r.matched,
                  num(None if r.worst is None else 100 * r.worst, "{:.1f}%"), f"[{style}]{r.result}[/]",
                  num(r.pfc_ref, "{:d}"), num(r.pfc, "{:d}"), ratio, num(r.wall_s, "{:.1f} s"), r.ns3_wall)
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref_root", nargs="?", help="folder of reference runs (default: see the module doc)")
    add_common(ap)
    a = ap.parse_args(argv)
    return run_all(a, find_root(a.ref_root), RUN_FILES, lambda d, work: one_run(d, work, a.tol, a.timeout, a.seeds),
                   "import, run, export, compare", table)


def add_common(ap: argparse.ArgumentParser) -> None:
    """The options every agreement command takes."""
    ap.add_argument("--tol", type=float, default=0.10, help="compare-fct's --tol (default 0.10)")
    ap.add_argument("--keep", type=Path, help="keep each run's scenario, run folder and comparison in KEEP/RUN")
    ap.add_argument("--only", action="append", default=[], help="only the run(s) of this name (repeatable)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one hopsim step may take (default 3600)")
    ap.add_argument("--seeds", type=int, default=1, help="run hopsim with seeds 1..SEEDS and judge p99s over them "
                    "(compare-fct --cand-seed; default 1: the reference's bootstrap interval alone)")


def more_seeds(sc: Path, work: Path, seeds: int, timeout: float, *run_args: object) -> list[Path]:
    """hopsim's runs of `sc` with seeds 2..`seeds` (`--set seed=k`), in `work`/run-seed<k>."""
    out = []
    for k in range(2, seeds + 1):
        run = work / f"run-seed{k}"
        p = hopsim("run", sc, "--out", run, "--set", f"seed={k}", *run_args, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"hopsim run with seed {k}: {last_error(p)}")
        out.append(run)
    return out


def seed_args(runs: list[Path]) -> list[object]:
    """compare-fct's options for the candidate's other seeds."""
    return [x for r in runs for x in ("--cand-seed", r)]


def run_all(a: argparse.Namespace, root: Path, run_files: tuple[str, ...], one, steps: str, make_table) -> int:
    """`one(folder, work)` for each reference run folder of `root` (those holding `run_files`,
    a name may be a glob), then the table and each run's notes; the exit code of the module doc."""
    from rich.console import Console

    out = Console() if sys.stdout.isatty() else Console(width=200)
    runs = sorted(d for d in root.iterdir() if d.is_dir() and all(any(d.glob(f)) for f in run_files)) \
        if root.is_dir() else []
    if a.only:
        runs = [d for d in runs if d.name in a.only]
    if not runs:
        print(f"error: {root}: no reference run folders (subfolders with {', '.join(run_files)})"
              + (f" named {', '.join(a.only)}" if a.only else ""), file=sys.stderr)
        return 2
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="agreement-"))
    try:
        for d in runs:
            work = (a.keep / d.name) if a.keep else tmp / d.name
            if work.exists():
                shutil.rmtree(work)
            work.mkdir(parents=True)
            print(f"{d.name}: {steps} ...", file=sys.stderr, flush=True)
            try:
                rows.append(one(d, work))
            except Exception as e:  # one broken run folder must not stop the others
                rows.append(Row(d.name, result="error", problem=f"{type(e).__name__}: {e}"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out.print(make_table(rows))
    for r in rows:
        for line in ([r.problem] if r.problem else []) + r.notes:
            out.print(f"{r.name}: {line}", markup=False, highlight=False, soft_wrap=True)
    if a.keep:
        out.print(f"outputs kept in {a.keep}", markup=False)
    return 0 if all(r.result == "pass" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
