"""Sweeps: a base scenario, a grid (or list) of overrides, times seeds.

Sweep file::

    base = "../ppfc-16to1.toml"        # relative to the sweep file
    seeds = [1, 2]                     # default: the base scenario's seed
    [grid]                             # every combination
    "flow_control.scheme" = ["pfc", "ppfc"]
    [[runs]]                           # and/or a list of override sets (each crossed with the grid)
    "workload.incast.degree" = 8

Every point is validated (schema and core) before anything runs, so a bad value stops the sweep
with exit code 2 and no output. Each run gets a folder ``<params>-<hash>`` under the output
folder, named by its swept values and the hash of its resolved scenario; a folder that exists is
complete (see `store`), so starting an interrupted sweep again skips what is done and loses
nothing. The folder's ``sweep.json`` names the sweep it belongs to; another sweep is refused there
(`check_out`).

Where runs execute: ``jobs`` worker processes on this machine (default: one per core), or, with
``cluster``, the Dask distributed scheduler at that address. Both send the same scenario JSON to
`run.execute` and write the returned columns here, so they give identical result files.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import Field, ValidationError

from .errors import RunInterrupted, ScenarioError
from .papers.claims import PaperModel
from .scenario.resources import AUTO, memory_limit
from .run import execute, results_from_native
from .scenario.model import Scenario, apply_overrides, format_validation_error, read_toml, scenario_from_dict
from .scenario.schema import Int, Strict
from .results.store import SUMMARY, clean_stale, is_complete, read_summary, write_run
from .scenario.outputs import mark
from .scenario.paths import read_bounded, resolve, why_unwritable

__all__ = ["SweepModel", "RunPoint", "plan_sweep", "run_sweep", "check_out", "SweepReport", "MANIFEST"]

MANIFEST = "sweep.json"
"""The sweep's manifest in its output folder: the sweep file, its SHA-256, and the runs planned."""


class SweepModel(Strict):
    name: str = ""
    base: str
    seeds: list[Int] = Field(default_factory=list)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    runs: list[dict[str, Any]] = Field(default_factory=list)
    # the figures of a paper these runs reproduce (`hopsim reproduce`; see `hopsim.papers.claims`)
    paper: PaperModel | None = None


@dataclass
class RunPoint:
    params: dict[str, Any]
    scenario: Scenario

    @property
    def run_id(self) -> str:
        return run_id(self.params, self.scenario.hash)


@dataclass
class SweepReport:
    out: Path
    planned: list[RunPoint]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _slug(v: Any) -> str:
    s = json.dumps(v, sort_keys=True) if not isinstance(v, str) else v
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", s).strip("_")[:40]


def run_id(params: dict[str, Any], h: str) -> str:
    parts = [f"{k.split('.')[-1]}={_slug(v)}" for k, v in params.items()]
    stem = ",".join(parts)[:120] or "run"
    return f"{stem}-{h[:10]}"


def _points(m: SweepModel) -> Iterator[dict[str, Any]]:
    keys = list(m.grid)
    for k, vals in m.grid.items():
        if not vals:
            raise ScenarioError(f"grid.{k}: an empty list gives no runs")
    combos = list(itertools.product(*(m.grid[k] for k in keys))) if keys else [()]
    for extra in m.runs or [{}]:
        for combo in combos:
            yield {**extra, **dict(zip(keys, combo))}


def read_sweep(path: Path | str) -> SweepModel:
    """A sweep file, checked against the schema."""
    p = resolve(path)
    raw = read_toml(p, "SWEEP")
    try:
        return SweepModel.model_validate(raw)
    except ValidationError as e:
        raise ScenarioError(format_validation_error(e), source=str(p)) from None


def plan_sweep(path: Path | str, max_memory: Any = AUTO, quick: bool = False) -> tuple[SweepModel, list[RunPoint]]:
    """Read a sweep file and validate every run point (schema and core, the memory estimate
    against `max_memory` included: see `hopsim.scenario.resources`). `quick`: the reduced version its
    ``[paper.quick]`` table gives (those overrides on every point, the first seed only)."""
    p = resolve(path)
    m = read_sweep(p)
    if m.seeds:
        both = [f"grid.seed" for k in m.grid if k == "seed"] + [f"runs[{i}].seed" for i, r in enumerate(m.runs) if "seed" in r]
        if both:
            raise ScenarioError(f"{both[0]}: the seed is set by `seeds` too ({m.seeds}); give the seeds in one "
                                "place: `seeds`, or a `seed` in the grid or the runs", source=str(p))
    base_path = resolve(p.parent / m.base)
    base_raw = read_toml(base_path)
    seeds = m.seeds or [None]
    shrink: dict[str, Any] = {}
    if quick:
        seeds = seeds[:1]
        shrink = dict(m.paper.quick) if m.paper else {}
    points: list[RunPoint] = []
    problems: list[str] = []
    seen: set[str] = set()
    for ov in _points(m):
        for seed in seeds:
            params = dict(ov)
            if seed is not None:
                params["seed"] = seed
            # the quick values shape the scenario (and so its hash and folder) but are not swept
            # values: labels stay the paper's names; a point's own values win over them
            applied = {**shrink, **params}
            try:
                sc = scenario_from_dict(apply_overrides(base_raw, applied), base_path.parent, base_path, applied)
                sc.validate(max_memory, spooled=False)  # a sweep's runs hand their samples back whole
            except ScenarioError as e:
                label = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "base"
                problems += [f"[{label}] {line}" for line in e.problems]
                continue
            rp = RunPoint(params=params, scenario=sc)
            if rp.run_id in seen:
                continue
            seen.add(rp.run_id)
            points.append(rp)
    if problems:
        raise ScenarioError(problems, source=str(p))
    return m, points


def _sweep_hash(sweep_path: Path) -> str:
    return hashlib.sha256(read_bounded(sweep_path)).hexdigest()


def check_out(out: Path, sweep_path: Path, quick: bool = False) -> Path:
    """Refuse an output folder that belongs to something else: a run folder, or the folder of
    another sweep (its sweep.json names another sweep file, and its text differs). Mixing two
    sweeps' runs in one folder would make a report or query over it compare runs that were never
    meant to go together, and the second sweep's manifest would hide the first's. The same sweep
    file (edited, to add seeds or grid points) or a copy of it may resume into its folder.
    Returns the sweep file the folder belongs to (the first that wrote into it), which the
    manifest keeps naming."""
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"--out {out}: is a file, not a folder")
    if is_complete(out):
        raise ScenarioError(f"--out {out}: is a run folder (it has {SUMMARY}); give a new folder for the sweep")
    manifest_path = out / MANIFEST
    if not manifest_path.exists():
        return sweep_path
    try:
        manifest = json.loads(read_bounded(manifest_path))
        theirs = Path(manifest["sweep"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ScenarioError(f"--out {out}: its {MANIFEST} is not a sweep manifest ({type(e).__name__}: {e}); "
                            "give a new folder for the sweep") from None
    if bool(manifest.get("quick", False)) != quick:
        theirs_is = "the quick version" if manifest.get("quick") else "the full version"
        raise ScenarioError(f"--out {out}: holds {theirs_is} of this sweep's runs; give another folder "
                            "(quick and full runs in one folder would be compared as one)")
    same_file = theirs == sweep_path
    same_text = manifest.get("sweep_sha256") == _sweep_hash(sweep_path)
    if not (same_file or same_text):
        raise ScenarioError(f"--out {out}: holds the runs of another sweep ({theirs}); give a new folder, or that "
                            "sweep file to resume it")
    return theirs


def _write_manifest(out: Path, owner: Path, sweep_path: Path, points: list[RunPoint], quick: bool = False) -> None:
    manifest = {
        "sweep": str(owner),
        "sweep_sha256": _sweep_hash(sweep_path),
        "quick": quick,
        "runs": [{"run": rp.run_id, "params": rp.params, "scenario_hash": rp.scenario.hash} for rp in points],
    }
    tmp = out / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, out / MANIFEST)


def run_sweep(
    path: Path | str,
    out: Path | str,
    jobs: int | None = None,
    cluster: str | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    on_done: Callable[[str], None] | None = None,
    max_memory: Any = AUTO,
    quick: bool = False,
    prune: bool = False,
) -> SweepReport:
    """Run every point of a sweep that is not complete in `out` yet.

    `on_plan(total, to_run)` and `on_done(run_id)` let a caller show progress. `max_memory` (a
    size, ``"off"``, or `AUTO`: ``HOPSIM_MAX_MEMORY``, else the memory available) is checked
    against every point's memory estimate while planning, here, and again by the process that
    runs the point (a worker on a cluster checks its own machine's memory). A point refused
    there stops the sweep with ScenarioError; the runs completed before stay.

    The folder holds this sweep's current runs only: runs of an earlier version of it (another
    base scenario, grid or seeds) are refused, naming them, or removed with `prune`
    (`_check_stale`). Two sweeps never write into one folder at once (`_hold`). A folder this call
    made is removed again when it ends before completing a run (bad input found late, a full
    disk, Ctrl-C).
    """
    path = resolve(path)
    memory_limit(max_memory)  # a bad value is bad input before anything is planned
    out = resolve(out)
    _, points = plan_sweep(path, max_memory, quick)
    check_out(out, path, quick)
    report = SweepReport(out=out, planned=points)
    # the cluster before anything is written: a wrong address leaves no folder behind
    client = _connect(cluster) if cluster and not all(_complete(out / rp.run_id) for rp in points) else None
    made = not out.exists()  # this call made the folder: removed again if nothing completes
    lock = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        try:
            lock = _hold(out)
        except ScenarioError:
            made = False  # another sweep's folder now
            raise
        owner = check_out(out, path, quick)  # again, under the lock: another sweep may have begun
        _check_stale(out, points, prune)
        todo = []
        for rp in points:
            if _complete(out / rp.run_id):
                report.skipped.append(rp.run_id)
            else:
                todo.append(rp)
        clean_stale(out)
        _write_manifest(out, owner, path, points, quick)
        mark(out, "sweep")
        if on_plan:
            on_plan(len(points), len(todo))
        if todo:
            _run(todo, out, report, jobs, client, on_done, max_memory)
    except _Refused as r:
        raise ScenarioError(f"[{r.rp.run_id}] {r.message}", source=str(path)) from None
    except OSError as e:
        # a full disk, a folder made read-only meanwhile: name the file and the reason
        raise ScenarioError(f"--out {out}: cannot write {e.filename or 'into it'} "
                            f"({why_unwritable(Path(e.filename or out), e)}); the runs completed so far are kept")
    finally:
        if made and not report.ran:
            # nothing of this sweep was completed: leave no folder (nor manifest) behind
            shutil.rmtree(out, ignore_errors=True)
        if lock is not None:
            lock.close()
        if client is not None:
            client.close()
    return report


def _complete(d: Path) -> bool:
    """Whether `d` is a run folder whose summary reads (a damaged one is run again)."""
    if not is_complete(d):
        return False
    try:
        read_summary(d)
        return True
    except ScenarioError:
        return False


def _hold(out: Path) -> Any:
    """This sweep's lock on its folder (`hopsim.results.locks`): a second sweep into it refuses, naming
    the first, rather than running the same points twice."""
    from .results.locks import Held, hold, owner_text

    try:
        return hold(out)
    except Held as h:
        raise ScenarioError(f"--out {out}: in use by another sweep, {owner_text(h.owner)}; wait for it to end, "
                            "or give another folder") from None


def _check_stale(out: Path, points: list[RunPoint], prune: bool) -> None:
    """A sweep folder holds its sweep's current runs only. Runs there that the sweep no longer
    plans (its base scenario, grid or seeds changed since they ran) would be read by `query` and
    `report` beside the current ones, with the same labels: refuse, naming them, or with `prune`
    remove them."""
    planned = {rp.run_id for rp in points}
    stale = sorted(d for d in out.iterdir() if d.name not in planned and is_complete(d))
    if not stale:
        return
    if prune:
        for d in stale:
            shutil.rmtree(d)
        return
    shown = ", ".join(d.name for d in stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
    raise ScenarioError(f"--out {out}: holds {len(stale)} run(s) this sweep no longer plans (its base scenario, grid "
                        f"or seeds changed since they ran): {shown}; pass --prune to remove them, or give a new folder")


def _run(todo: list[RunPoint], out: Path, report: SweepReport, jobs: int | None, client: Any,
         on_done: Callable[[str], None] | None, max_memory: Any = AUTO) -> None:
    """Run `todo` on the Dask `client`, else locally, writing each run folder as it completes."""
    def finish(rp: RunPoint, raw: dict[str, Any]) -> None:
        res = results_from_native(raw, rp.scenario.hash, rp.scenario.name)
        # overwrite: a damaged folder of this point is replaced (`_complete`; the sweep's lock
        # keeps anyone else from writing here)
        write_run(res, rp.scenario, out / rp.run_id, params=rp.params, overwrite=True)
        report.ran.append(rp.run_id)
        if on_done:
            on_done(rp.run_id)

    from .scenario.resources import default_threads

    if client is not None:
        _run_dask(client, todo, finish, max_memory)
    elif worker_count(jobs) <= 1 or len(todo) == 1:
        # one run at a time: each on the machine's cores (`hopsim_core::engine`)
        threads = default_threads(1)
        for rp in todo:
            try:
                raw = execute(rp.scenario.core_json, max_memory=max_memory, threads=threads)
            except ValueError as e:
                raise _Refused(rp, e) from None
            finish(rp, raw)
    else:
        _run_pool(worker_count(jobs), todo, finish, max_memory)



def worker_count(jobs: int | None) -> int:
    """The worker processes a sweep runs with: `jobs`, else one per core."""
    return jobs or os.cpu_count() or 1


class _Refused(Exception):
    """A point the process running it refused (its memory estimate over that machine's limit)."""

    def __init__(self, rp: RunPoint, e: BaseException):
        super().__init__(str(e))
        self.rp, self.message = rp, str(e)


def _run_pool(jobs: int, todo: list[RunPoint], finish: Callable[[RunPoint, dict[str, Any]], None],
              max_memory: Any = AUTO) -> None:
    import multiprocessing as mp

    from . import _native  # noqa: F401  (loaded before forking, so no worker imports it)

    # fork, not spawn: a spawned worker re-imports the caller's __main__, which would rerun an
    # unguarded user script (or fail for `python -`); the workers only call into the core.
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    workers = min(jobs, len(todo))
    # jobs x threads within the cores: each run gets its share of them
    from .scenario.resources import default_threads

    threads = default_threads(workers)
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_signals)
    try:
        pending: dict[Future, RunPoint] = {
            ex.submit(_worker_execute, rp.scenario.core_json, max_memory, threads): rp for rp in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                rp = pending.pop(fut)
                try:
                    raw = fut.result()
                except ValueError as e:
                    raise _Refused(rp, e) from None
                finish(rp, raw)
    except BaseException:
        # interrupted: stop the runs in progress (a terminal's Ctrl-C reaches the workers too,
        # a SIGTERM to this process does not), drop what has not started and return; completed
        # runs are on disk
        _stop_workers(ex)
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


# Signals in pool workers. A worker must stop its run on Ctrl-C (the core polls for signals, so a
# handler that raises stops it within a fraction of a second) but must not die with a traceback
# when the signal finds it idle between runs: the handler raises only while a run is going on.
# After a signal a worker starts no further run (the executor may already have handed it the
# next one, which cancelling futures cannot take back).
_RUNNING = False
_STOPPING = False


def _worker_signal(signum: int, frame: Any) -> None:
    global _STOPPING
    _STOPPING = True
    if _RUNNING:
        raise KeyboardInterrupt


def _worker_signals() -> None:
    signal.signal(signal.SIGINT, _worker_signal)
    signal.signal(signal.SIGTERM, _worker_signal)
    _die_with_parent()


def _die_with_parent() -> None:
    """End this worker when the sweep's process ends, however it ends: a SIGKILL of the sweep
    gives its workers no message, and an idle one would wait for work for ever (Linux: the
    kernel sends SIGKILL on the parent's death, PR_SET_PDEATHSIG; its results would have nowhere
    to go)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent ended before the call
        os._exit(1)


def _worker_execute(core_json: str, max_memory: Any = AUTO, threads: int = 1) -> dict[str, Any]:
    global _RUNNING
    if _STOPPING:
        raise RunInterrupted("not started: the sweep was interrupted")
    _RUNNING = True
    try:
        return execute(core_json, max_memory=max_memory, threads=threads)
    finally:
        _RUNNING = False


def _stop_workers(ex: ProcessPoolExecutor) -> None:
    """End every worker process at once. Why SIGKILL: the sweep is ending and uses nothing they
    would send back (a run writes nothing itself), and a worker caught before its initializer
    installed `_worker_signal` would otherwise finish its run first, holding the sweep's exit
    (the executor joins its workers when the program ends) for as long as that run lasts."""
    for proc in list((getattr(ex, "_processes", None) or {}).values()):  # the executor keeps no public list
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except (OSError, AttributeError):
            pass


def _connect(address: str) -> Any:
    """A Dask client of the scheduler at `address`; one that cannot be reached (a wrong address,
    a scheduler not running) is a ScenarioError naming it."""
    from distributed import Client

    try:
        return Client(address, timeout="30s")
    except (OSError, ValueError, TypeError) as e:  # TimeoutError is an OSError
        raise ScenarioError(f"--cluster {address}: cannot connect to a Dask scheduler there ({e})") from None


def _run_dask(client: Any, todo: list[RunPoint], finish: Callable[[RunPoint, dict[str, Any]], None],
              max_memory: Any = AUTO) -> None:
    from distributed import as_completed

    futs = {}
    for rp in todo:
        # the key names the run, so a resubmitted sweep on the same scheduler reuses results
        f = client.submit(execute, rp.scenario.core_json, None, None, max_memory, key=f"hopsim-{rp.run_id}",
                          pure=False)
        futs[f] = rp
    for f in as_completed(list(futs)):
        rp = futs.pop(f)
        try:
            raw = f.result()
        except ValueError as e:
            raise _Refused(rp, e) from None
        # written here: let the cluster forget it, so that losing the worker that holds it
        # does not make the scheduler compute it again
        f.release()
        finish(rp, raw)
