"""Run folders: one folder per run, complete or absent.

Contents::

    scenario.toml      the resolved scenario (every default written out), re-loadable
    scenario.json      exactly what the core ran (file contents inlined)
    scenario.sha256    SHA-256 of scenario.json in canonical form
    params.json        the swept parameters of this run ({} for a lone run)
    flows.parquet  pauses.parquet  control.parquet  buffer.parquet  queues.parquet  ports.parquet
    pfc_received.parquet  every PFC frame where it arrived (the HPCC simulator's pfc.txt)
    qlen.parquet       queue-length histograms of record.qlen_monitor (its qlen.txt); empty when off
    cwnd.parquet       congestion windows and delivered bytes of record.cwnd_flows over time (Pulser Fig. 6); empty when off
    trace.parquet      switch events of record.trace's flows and ports (its mix.tr); empty when off
    module_samples.parquet  what the flow-control scheme reports over time at each buffer sample
                       (time, node, port, metric, value: VOQs in use, flows paused, ...)
    latency.parquet    per-packet one-way latency by flow class (record.latency); empty when off
    summary.json       counts, drops, pause time, events, wall time, events/s
    .hopsim.json       what made the folder ({"kind": "run"}): `--force` replaces only such a folder

Atomicity: everything is written into a hidden temporary folder beside the target
(``.NAME.tmp-XXXX``) and renamed into place last; a crash leaves only a temporary folder, which
``clean_stale`` removes. A folder with a ``summary.json`` is complete.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError
from .columns import write as write_columns
from ..scenario.outputs import mark
from ..scenario.paths import check_replaceable, is_file, read_bounded, resolve
from .tables import IDENTIFYING, TABLES, Results

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from ..scenario.model import Scenario

__all__ = ["check_writable", "write_run", "load_run", "partial_note", "read_table", "read_columns", "read_frame", "read_summary", "is_complete",
           "find_runs", "clean_stale", "RunExists"]

SUMMARY = "summary.json"
TMP_MARK = ".tmp-"


class RunExists(FileExistsError):
    pass


def check_writable(out: Path | str, what: str = "output folder") -> None:
    """Refuse, before a run starts, an output folder that could not be written: the nearest
    existing folder above it must take a new entry (tried, not guessed from permission bits, so
    read-only mounts and full disks count too). Raises ScenarioError naming `what`."""
    out = resolve(out)
    try:
        anc = out if out.is_dir() else out.parent
        while not anc.exists():
            anc = anc.parent
    except OSError as e:  # a name longer than the system allows
        raise ScenarioError(f"{what} {out}: not a usable path ({e.strerror or e})") from None
    if not anc.is_dir():
        raise ScenarioError(f"{what} {out}: {anc} is a file, not a folder")
    try:
        probe = Path(tempfile.mkdtemp(prefix=f".write-check{TMP_MARK}", dir=anc))
        probe.rmdir()
    except OSError as e:
        raise ScenarioError(f"{what} {out}: cannot write into {anc} ({e.strerror or e})") from None


def is_complete(d: Path | str) -> bool:
    return is_file(Path(d) / SUMMARY)


def _json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_run(
    results: Results,
    scenario: "Scenario",
    out: Path | str,
    params: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write a run folder atomically; returns its path."""
    out = resolve(out)
    if out.exists() and not overwrite:
        raise RunExists(f"{out} already exists")
    check_replaceable(out, folder=True)  # --force replaces a run folder, nothing else
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}{TMP_MARK}", dir=out.parent))
    try:
        (tmp / "scenario.toml").write_text(scenario.resolved_toml())
        (tmp / "scenario.json").write_text(scenario.core_json + "\n")
        (tmp / "scenario.sha256").write_text(scenario.hash + "\n")
        _json(tmp / "params.json", params or {})
        for name in TABLES:
            spooled = getattr(results.tables, "path", lambda _: None)(name)
            cols = getattr(results.tables, "columns_of", lambda _: None)(name)
            if spooled is not None:  # already written, a chunk at a time (`hopsim.results.spool`)
                shutil.copyfile(spooled, tmp / f"{name}.parquet")
            elif cols is not None:  # a run's tables: written without loading pyarrow (`hopsim.results.columns`)
                write_columns(tmp / f"{name}.parquet", [cols])
            else:  # Arrow tables (a run folder read back)
                import pyarrow.parquet as pq

                pq.write_table(results.tables[name], tmp / f"{name}.parquet", compression="zstd")
        summary = dict(results.summary)
        summary["scenario_hash"] = scenario.hash
        summary["name"] = scenario.name
        summary["params"] = params or {}
        _json(tmp / SUMMARY, summary)
        mark(tmp, "run")
        os.chmod(tmp, 0o755)
        if out.exists():  # overwrite: move the old one aside first, then swap
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old{TMP_MARK}", dir=out.parent))
            os.rename(out, old / "run")
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


_REDO = "re-create it with `hopsim run` (or the sweep)"


def read_table(path: Path | str, columns: list[str] | None = None) -> pa.Table:
    """A table of a run folder. A file that is not, or no longer, Parquet (truncated by a full
    disk or a copy cut short, corrupted, replaced by something else) is a ScenarioError naming
    the file, not an Arrow traceback from whichever command read it."""
    import pyarrow.parquet as pq

    check_regular(path)
    try:
        return pq.read_table(path, columns=columns)
    except _parquet_errors() as e:
        raise _unreadable(path, e) from None


def check_regular(path: Path | str) -> None:
    """A run folder's file must be a regular file: a pipe put in its place would block every
    reader (pyarrow, DuckDB) for ever, a folder or a device would give their errors."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read it ({e.strerror or e}); {_REDO}") from None
    if not stat.S_ISREG(mode):
        raise ScenarioError(f"{path}: not a regular file (a damaged run folder); {_REDO}")


def check_table(path: Path | str, table: str) -> None:
    """`check_regular`, and the file must be table `table` (`IDENTIFYING`'s columns): another
    table copied over it would otherwise answer for it."""
    missing = [c for c in IDENTIFYING.get(table, ()) if c not in read_columns(path)]
    if missing:
        raise ScenarioError(f"{path}: has no column {', '.join(missing)}: not the {table} table of a hopsim run "
                            f"(another file in its place?); {_REDO}")


def read_columns(path: Path | str) -> set[str]:
    """The column names of a run folder's table (its footer only); errors as `read_table`."""
    import pyarrow.parquet as pq

    check_regular(path)
    try:
        return set(pq.read_schema(path).names)
    except _parquet_errors() as e:
        raise _unreadable(path, e) from None


def read_frame(path: Path | str) -> "pd.DataFrame":
    """`read_table` as a pandas DataFrame (the conversion reads the file's pandas metadata, which
    a corrupt file can also spoil)."""
    t = read_table(path)
    try:
        return t.to_pandas()
    except _parquet_errors() as e:
        raise _unreadable(path, e) from None


def read_summary(d: Path | str) -> dict[str, Any]:
    """A run folder's summary.json; one that is not a JSON object is a ScenarioError naming it."""
    path = Path(d) / SUMMARY
    try:
        summary = json.loads(read_bounded(path))
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read it ({e.strerror or e})") from None
    except ValueError as e:  # bad JSON or bad UTF-8
        raise ScenarioError(f"{path}: not valid JSON ({_first_line(e)}); {_REDO}") from None
    if not isinstance(summary, dict):
        raise ScenarioError(f"{path}: expected a JSON object, found {type(summary).__name__}; {_REDO}")
    if not isinstance(summary.get("params") or {}, dict):  # the swept values, by dotted key
        raise ScenarioError(f"{path}: 'params' is not a JSON object; {_REDO}")
    for key, kinds, what in _SUMMARY_TYPES:
        v = summary.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, kinds)):
            raise ScenarioError(f"{path}: '{key}' is {json.dumps(v)[:40]}, expected {what}: a damaged run folder; {_REDO}")
    return summary


_NUMBER = (int, float)
_SUMMARY_TYPES = [
    *[(k, int, "a whole number") for k in ("flows", "flows_finished", "incast_flows", "drops", "fault_drops",
                                            "dropped_bytes", "pause_frames", "resume_frames", "max_switch_buffer_bytes",
                                            "events")],
    *[(k, _NUMBER, "a number") for k in ("pause_time_ns", "end_time_ns", "wall_time_s", "events_per_s",
                                         "slowdown_mean", "slowdown_p99", "fct_ns_p99")],
    *[(k, str, "text") for k in ("name", "scenario_hash", "stopped")],
]
"""What `hopsim run` writes into summary.json, by type (what `query` and `report` read)."""


def _parquet_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged Parquet file raises: Arrow's errors, OSError for a cut file,
    ValueError (UnicodeDecodeError) for spoilt metadata text. (A function: pyarrow loads only
    when a table is read.)"""
    import pyarrow as pa

    return (pa.ArrowException, OSError, ValueError)


def _unreadable(path: Path | str, e: BaseException) -> Exception:
    why = re.sub(r"^Could not open Parquet input source '[^']*': ", "", _first_line(e))  # the path is named once
    return ScenarioError(f"{path}: cannot read it as Parquet ({why}); {_REDO}")


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def load_run(d: Path | str) -> Results:
    """Read a run folder back."""
    d = Path(d)
    if not is_complete(d):
        raise FileNotFoundError(f"{d} is not a complete run folder (no {SUMMARY})")
    # folders written before a table existed lack its file: they load without it
    tables = {name: read_table(d / f"{name}.parquet") for name in TABLES if (d / f"{name}.parquet").exists()}
    return Results(tables=tables, summary=read_summary(d))


def partial_note(d: Path | str) -> str | None:
    """The line every reader of run folder `d` says when the run is partial (``--keep-partial``:
    stopped by a signal, its tables holding what it had measured), else None. Why each reader
    says it: an export or a page made from such a run otherwise reads like one of a whole run."""
    d = Path(d)
    if not is_complete(d):
        return None
    s = read_summary(d)
    if not s.get("partial"):
        return None
    return (f"{d}: a partial run (stopped before its end; {s.get('flows_finished')} of {s.get('flows')} flows "
            "finished): what is made from it holds only what it had measured")


def find_runs(d: Path | str) -> list[Path]:
    """Complete run folders: `d` itself if it is one, else those below it (any depth), sorted."""
    d = Path(d)
    if is_complete(d):
        return [d]
    out = []
    for s in sorted(d.rglob(SUMMARY)):
        run = s.parent
        if any(TMP_MARK in part for part in run.relative_to(d).parts):
            continue
        out.append(run)
    return out


def clean_stale(d: Path | str) -> int:
    """Remove temporary folders that an interrupted write left in `d`; returns how many."""
    d = Path(d)
    n = 0
    if d.is_dir():
        for c in d.iterdir():
            if c.is_dir() and c.name.startswith(".") and TMP_MARK in c.name:
                shutil.rmtree(c, ignore_errors=True)
                n += 1
    return n
