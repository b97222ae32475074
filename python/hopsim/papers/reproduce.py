"""`hopsim reproduce PAPER`: run a paper's sweeps and write one HTML page that redraws each of its
figures from hopsim's runs beside the numbers the paper reports.

A paper is a folder, ``scenarios/papers/PAPER/``: base scenarios and sweep files; every sweep file
with a ``[paper]`` table (`hopsim.papers.claims`) is part of the reproduction. The output folder holds one
sweep folder per sweep file (named by the file), ``paper.json`` (what ran, quick or full, and
how long it took) and ``PAPER.html``. Sweeps resume as `hopsim sweep` does, so a reproduction
that was interrupted picks up where it stopped; quick and full runs never share a folder.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import ScenarioError
from .claims import MANIFEST
from .page import CLAIMS, build_paper_page
from ..sweep import SweepModel, read_sweep, run_sweep, worker_count
from ..scenario.outputs import mark
from ..scenario.paths import resolve

__all__ = ["paper_dir", "paper_sweeps", "reproduce", "build_paper_page", "is_reproduction",
           "all_papers", "expected_wall", "wall_text", "MANIFEST", "PAPERS_DIR"]

PAPERS_DIR = Path("scenarios") / "papers"


def _papers_roots() -> list[Path]:
    """Where paper folders are looked for: the working directory's scenarios/papers, then the
    package's own (`packaged`: every installation carries them)."""
    from ..scenario.packaged import papers_dir

    here = papers_dir()
    roots = [Path.cwd() / PAPERS_DIR]
    return roots + ([here] if resolve(here) != resolve(roots[0]) else [])


def paper_dir(paper: str) -> Path:
    """The folder of `paper`: a path to a folder, or a name under scenarios/papers/."""
    p = Path(paper)
    if p.is_dir():
        return resolve(p)
    known: set[str] = set()
    for root in _papers_roots():
        if (root / paper).is_dir():
            return resolve(root / paper)
        if root.is_dir():
            known |= {d.name for d in root.iterdir() if d.is_dir() and paper_sweeps(d, quiet=True)}
    raise ScenarioError(f"PAPER: no paper {paper!r}; allowed: {', '.join(sorted(known)) or 'none found'} "
                        f"(folders of {PAPERS_DIR} with sweep files that have a [paper] table), or a path to such a folder")


def all_papers() -> list[str]:
    """The papers `hopsim reproduce all` runs: the folders of scenarios/papers with [paper] sweeps."""
    for root in _papers_roots():
        if root.is_dir():
            names = sorted(d.name for d in root.iterdir() if d.is_dir() and paper_sweeps(d, quiet=True))
            if names:
                return names
    return []


def paper_sweeps(d: Path, quiet: bool = False) -> list[tuple[Path, SweepModel]]:
    """The sweep files of paper folder `d` that have a [paper] table, by file name."""
    from ..scenario.model import read_toml

    found = []
    for f in sorted(d.glob("*.toml")):
        try:
            raw = read_toml(f)
        except ScenarioError:
            if quiet:
                continue
            raise
        if "paper" in raw and "base" in raw:
            found.append((f, read_sweep(f)))
    if not found and not quiet:
        raise ScenarioError(f"PAPER: {d} has no sweep file with a [paper] table")
    return found


@dataclass
class Reproduction:
    out: Path
    page: Path
    sweeps: list[str] = field(default_factory=list)
    ran: int = 0
    skipped: int = 0


def _traffic_time(f: Path, quick: bool) -> tuple[float, int]:
    """Simulated traffic time summed over a sweep's runs (workload.duration, else duration), ns:
    what a run's wall time grows with; and the number of runs."""
    from ..scenario.units import parse_time
    from ..sweep import plan_sweep

    _, points = plan_sweep(f, quick=quick, max_memory="off")
    total = 0.0
    for p in points:
        d = p.scenario.resolved_dict()
        t = (d.get("workload") or {}).get("duration") or d.get("duration")
        total += parse_time(t) if t is not None else 0.0
    return total, len(points)


def expected_wall(sweeps: list[tuple[Path, SweepModel]], quick: bool) -> tuple[float, list[str]]:
    """The wall time the sweeps' [paper] tables record (measured on 2 cores), summed, and the
    sweeps that record none (the sum is then a lower bound). A full run's time not recorded is
    estimated from the quick one's, scaled by the simulated traffic time of the full runs over
    the quick runs' (by the number of runs where they set no duration)."""
    total, missing = 0.0, []
    for f, m in sweeps:
        assert m.paper is not None
        w = m.paper.wall_quick_s if quick else m.paper.wall_full_s
        if w is None and not quick and m.paper.wall_quick_s is not None:
            (qt, qn), (ft, fn) = _traffic_time(f, True), _traffic_time(f, False)
            w = m.paper.wall_quick_s * (ft / qt if qt > 0 else fn / max(qn, 1))  # no duration: by runs
        if w is None:
            missing.append(f.stem)
        else:
            total += w
    return total, missing


def wall_text(sweeps: list[tuple[Path, SweepModel]], quick: bool) -> str:
    """The expected wall time in words: ``about 3 min on 2 cores`` (a full run's partly estimated from
    the quick run's, `expected_wall`) or, where sweeps record none,
    ``at least 3 min on 2 cores (2 of 11 sweeps not recorded: fig7, fig8)``."""
    total, missing = expected_wall(sweeps, quick)
    t = f"{total / 60:.0f} min" if total >= 60 else f"{total:.0f} s"
    if not missing:
        return f"about {t} on 2 cores"
    return (f"at least {t} on 2 cores ({len(missing)} of {len(sweeps)} sweeps not recorded: {', '.join(missing)})"
            if len(missing) < len(sweeps) else "not recorded for any sweep")


def reproduce(paper: str, out: Path | str, quick: bool = False, jobs: int | None = None,
              on_sweep: Callable[[int, int, str], None] | None = None,
              on_plan: Callable[[int, int], None] | None = None,
              on_done: Callable[[str], None] | None = None) -> Reproduction:
    """Run every [paper] sweep of `paper` into `out` (resuming), then write its page."""
    d = paper_dir(paper)
    sweeps = paper_sweeps(d)
    out = resolve(out)
    man_path = out / MANIFEST
    if man_path.exists():
        old = json.loads(man_path.read_text())
        if bool(old.get("quick")) != quick or old.get("paper") != d.name:
            raise ScenarioError(f"--out {out}: holds the {'quick' if old.get('quick') else 'full'} reproduction of "
                                f"{old.get('paper')!r}; give another folder")
    out.mkdir(parents=True, exist_ok=True)
    mark(out, "reproduction")  # first: a reproduction stopped halfway is still known as one, to resume
    rep = Reproduction(out=out, page=out / f"{d.name}.html")
    t0 = time.perf_counter()
    walls: dict[str, float] = {}
    counts: dict[str, list[int]] = {}
    load0 = _load()
    for i, (f, _) in enumerate(sweeps):
        if on_sweep:
            on_sweep(i + 1, len(sweeps), f.stem)
        s0 = time.perf_counter()
        r = run_sweep(f, out / f.stem, jobs=jobs, on_plan=on_plan, on_done=on_done, quick=quick)
        walls[f.stem] = time.perf_counter() - s0
        counts[f.stem] = [len(r.ran), len(r.skipped)]
        rep.sweeps.append(f.stem)
        rep.ran += len(r.ran)
        rep.skipped += len(r.skipped)
    runs_wall = time.perf_counter() - t0
    manifest = {"paper": d.name, "folder": str(d), "quick": quick, "sweeps": rep.sweeps,
                "wall_s": runs_wall, "runs_wall_s": runs_wall, "sweep_wall_s": walls,
                # what a recorded wall time means: the runs made (a resumed sweep's skipped ones
                # cost nothing), the worker processes and cores, and how busy the machine was
                "sweep_runs": counts, "jobs": worker_count(jobs), "cores": os.cpu_count(),
                "load": [load0, _load()], "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    out.mkdir(parents=True, exist_ok=True)
    man_path.write_text(json.dumps(manifest, indent=2) + "\n")
    build_paper_page(out, rep.page)
    # the wall time is the command's: the runs and the page (drawing every figure takes minutes)
    manifest["wall_s"] = time.perf_counter() - t0
    man_path.write_text(json.dumps(manifest, indent=2) + "\n")
    claims_path = out / CLAIMS
    claims = json.loads(claims_path.read_text())
    claims["wall_s"] = manifest["wall_s"]
    claims_path.write_text(json.dumps(claims, indent=2) + "\n")
    return rep


def _load() -> float | None:
    """The machine's one-minute load average (None where the system gives none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def is_reproduction(d: Path | str) -> bool:
    return (Path(d) / MANIFEST).exists()
