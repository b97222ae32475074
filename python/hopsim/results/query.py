"""SQL over run folders with DuckDB.

``connect(DIR)`` opens an in-memory DuckDB database with one view per table across every
complete run under DIR — ``flows``, ``pauses``, ``control``, ``buffer``, ``queues``, ``ports``,
``module_samples`` (what the flow-control scheme reports over time), ``cwnd``, ... — each with the
columns ``run`` (the run folder's path below DIR), ``label`` (its swept values other than the seed) and one
column per swept parameter (named by the last part of its key, ``scheme`` for
``flow_control.scheme``, unless two keys share it), plus a ``runs`` table with each run's
parameters and summary numbers (``partial``: true for a run stopped before its end and kept with
``--keep-partial``, whose tables hold only what it had measured), its control frames by kind (``frames_pfc``, ``frames_queue_pause``,
``frames_credit``, ``frames_dst_pause``, ``frames_flow_pause``, ``frames_other``) and its modules'
counters (``bfc_pauses``, ``tqp_pauses``, ...; absent from a run whose modules lack it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .tables import TABLES
from ..errors import ScenarioError
from .store import TMP_MARK, check_table, find_runs, read_summary, read_table
from ..scenario.paths import resolve

if TYPE_CHECKING:  # pandas loads on first use: `hopsim run` never needs it (60 MB, 0.3 s)
    import pandas as pd

__all__ = ["connect", "query", "runs_frame", "param_columns", "label_of"]

_SUMMARY_COLS = (
    "flows", "flows_finished", "incast_flows", "drops", "dropped_bytes", "pause_frames", "resume_frames",
    "pause_time_ns", "max_switch_buffer_bytes", "end_time_ns", "events", "wall_time_s", "events_per_s",
    "slowdown_mean", "slowdown_p99", "fct_ns_p99", "scenario_hash", "name", "partial",
)


def param_columns(keys: list[str]) -> dict[str, str]:
    """Column name of each swept key: its last dotted part when that is unique."""
    last = [k.split(".")[-1] for k in keys]
    return {k: (l if last.count(l) == 1 else k.replace(".", "_")) for k, l in zip(keys, last)}


def label_of(params: dict[str, Any], cols: dict[str, str] | None = None, fallback: str = "",
             varying: set[str] | None = None) -> str:
    """A run's label: its swept values other than the seed (what one line of a plot stands for).
    A swept ``name`` (a paper sweep's run names, `hopsim.papers.claims`) stands for the run's other
    values: the label is the name, followed only by the values in `varying` (those that differ
    between runs of the same name, such as a grid's load)."""
    cols = cols or param_columns(list(params))
    if "name" in params:
        rest = [f"{cols[k]}={v}" for k, v in params.items() if k not in ("seed", "name") and k in (varying or set())]
        return ", ".join([str(params["name"]), *rest])
    parts = [f"{cols[k]}={v}" for k, v in params.items() if k != "seed"]
    return ", ".join(parts) or fallback or "run"


def _varying_within_names(params_all: list[dict[str, Any]]) -> set[str]:
    """Keys whose values differ between runs that share a ``name``."""
    seen: dict[tuple[str, str], set[str]] = {}
    for p in params_all:
        if "name" not in p:
            continue
        for k, v in p.items():
            seen.setdefault((str(p["name"]), k), set()).add(json.dumps(v, sort_keys=True, default=str))
    return {k for (_, k), vals in seen.items() if len(vals) > 1 and k not in ("seed", "name")}


def runs_frame(root: Path | str) -> pd.DataFrame:
    """One row per complete run under `root`: run, path, label, params (one column each), summary."""
    root = Path(root)
    runs = find_runs(root)
    params_all: list[dict[str, Any]] = []
    summaries = []
    for r in runs:
        s = read_summary(r)
        params_all.append(s.get("params") or {})
        summaries.append(s)
    keys: list[str] = []
    for p in params_all:
        for k in p:
            if k not in keys:
                keys.append(k)
    cols = param_columns(keys)
    varying = _varying_within_names(params_all)
    rows = []
    extra_cols: list[str] = []
    for r, p, s in zip(runs, params_all, summaries):
        name = r.name if r == root else r.relative_to(root).as_posix()
        row: dict[str, Any] = {"run": name, "path": str(resolve(r))}
        row["label"] = label_of(p, cols, fallback=r.name if len(runs) > 1 else (s.get("name") or r.name), varying=varying)
        for k in keys:
            v = p.get(k)
            row[cols[k]] = json.dumps(v) if isinstance(v, (list, dict)) else v
        for c in _SUMMARY_COLS:
            row[c] = s.get(c)
        row["partial"] = bool(s.get("partial", False))  # (--keep-partial: stopped before its end)
        # control frames by kind, then the flow-control and congestion-control modules' counters
        # (`FlowControl::counters`): columns named as the summary names them
        extra = {**{f"frames_{k}": n for k, n in (s.get("control_frames") or {}).items()}, **(s.get("modules") or {})}
        for c, v in extra.items():
            if c not in row:
                row[c] = v
                if c not in extra_cols:
                    extra_cols.append(c)
        rows.append(row)
    import pandas as pd

    df = pd.DataFrame(rows, columns=["run", "path", "label", *[cols[k] for k in keys], *_SUMMARY_COLS, *extra_cols])
    df.attrs["param_columns"] = [cols[k] for k in keys]
    return df


def connect(root: Path | str):
    """A DuckDB connection with the views described in the module doc."""
    import duckdb

    from ..interrupts import native_ctrl_c

    runs = runs_frame(root)
    if runs.empty:
        raise ScenarioError(f"{root}: no complete run folders under it (a run folder holds summary.json); give a "
                            "folder that `hopsim run` or `hopsim sweep` wrote")
    con = duckdb.connect()
    try:
        with native_ctrl_c():  # (short statements, on this thread: a Ctrl-C here ends the command too)
            _views(con, runs)
    except BaseException:
        con.close()
        raise
    return con


def _views(con: Any, runs: pd.DataFrame) -> None:
    import duckdb

    con.register("_runs_df", runs)
    con.execute("CREATE TABLE runs AS SELECT * FROM _runs_df")
    con.unregister("_runs_df")
    pcols = runs.attrs["param_columns"]
    sel = ", ".join(["r.run", "r.label", *[f'r."{c}"' for c in pcols]])
    for t in TABLES:
        # run folders written before a table existed lack its file: the view covers those that have it
        # (lexists: a loop of links in a table's place is a damaged folder, not a missing table)
        have = [(str(Path(p) / f"{t}.parquet"), r) for p, r in zip(runs["path"], runs["run"])
                if os.path.lexists(Path(p) / f"{t}.parquet")]
        if not have:
            continue
        files = [f for f, _ in have]
        for f in files:
            check_table(f, t)  # a pipe in a table's place would block DuckDB for ever
        con.execute(f"CREATE TABLE _files_{t} AS SELECT unnest(?) AS file, unnest(?) AS run", [files, [r for _, r in have]])
        try:
            con.execute(
                f"""CREATE VIEW {t} AS
                    SELECT {sel}, x.* EXCLUDE (filename)
                    FROM read_parquet({_sql_list(files)}, filename = true, union_by_name = true) x
                    JOIN _files_{t} fl ON x.filename = fl.file
                    JOIN runs r ON r.run = fl.run"""
            )
        except duckdb.Error as e:
            # a damaged file (DuckDB reads every footer here); the SQL in DuckDB's message is ours
            raise damaged(files, e) from None


def damaged(files: list[str], e: Exception) -> ScenarioError:
    """The error for DuckDB failing to read Parquet files: the first of `files` that pyarrow
    cannot read either, named (DuckDB's message does not always say which file it was), or else
    DuckDB's first line."""
    for f in files:
        read_table(f)  # raises ScenarioError naming f
    return ScenarioError(f"cannot read the run tables: {(str(e).splitlines() or [type(e).__name__])[0]}")


def _data_error(e: Exception) -> bool:
    """Whether a DuckDB error is about reading the files rather than about the SQL."""
    import duckdb

    sql_errors = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException)
    return not isinstance(e, sql_errors) and ("parquet" in str(e).lower() or type(e) in (
        duckdb.Error, duckdb.IOException, duckdb.InvalidInputException))


def _sql_list(items: list[str]) -> str:
    return "[" + ", ".join("'" + s.replace("'", "''") + "'" for s in items) + "]"


def _rows(con: Any, sql: str) -> pd.DataFrame:
    """The rows the last statement of `sql` returns; none returned (``;`` alone, a comment) is bad input."""
    con.execute(sql)
    if con.description is None:
        raise ScenarioError(f"SQL {sql.strip()[:40]!r}: no statement that returns rows (only ';' or comments); give a "
                            "query, e.g. SELECT * FROM runs")
    return con.df()


def query(root: Path | str, sql: str) -> pd.DataFrame:
    """Run `sql` over the views of `connect(root)` and return a DataFrame. Ctrl-C stops a query
    that runs long (or never ends, as a recursive one can): DuckDB runs it on a helper thread
    while this one waits for signals (`interrupts.call`), and an interrupt asks DuckDB to stop."""
    import duckdb

    from ..interrupts import call

    if not sql.strip():
        raise ScenarioError("SQL: empty; give a query over the views " + ", ".join(("runs", *TABLES))
                            + ", e.g. SELECT * FROM runs")
    con = connect(root)
    try:
        return call(lambda: _rows(con, sql), stop=con.interrupt)
    except duckdb.Error as e:
        if not _data_error(e):
            raise
        files = sorted(str(f) for f in Path(root).rglob("*.parquet") if TMP_MARK not in str(f))
        raise damaged(files, e) from None
    finally:
        con.close()
