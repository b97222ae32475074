"""Run tables written by the Rust Parquet writer (`hopsim.results.columns`, ``_native.TableWriter``) read
back with pyarrow as the Arrow tables built in memory from the same columns — schema (names,
types, nullability) and values, nulls included — and `hopsim run` never loads pyarrow (issue 14)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hopsim import _native
from hopsim.results import columns
from hopsim.results.arrow import from_columns
from hopsim.results.columns import Masked, Strings
from hopsim.run import TABLES
from hopsim.scenario.model import load_scenario

from conftest import TINY

run_mod = importlib.import_module("hopsim.run")

ALL_RECORDS = {
    "record.trace": {"flows": [1, 2]},
    "record.qlen_monitor": {"interval": "1us", "dump_interval": "5us"},
    "record.cwnd_flows": [0, 3],
    "record.latency": True,
    "record.buffer_interval": "500ns",
}
COMMON = {"flows", "buffer", "queues", "ports", "trace", "qlen", "cwnd", "latency"}
# (scenario, overrides, the tables that must have rows): together every table, with and without nulls
SCENARIOS = [
    ("small-incast-star.toml", {**ALL_RECORDS, "flow_control.scheme": "bfc"}, COMMON | {"module_samples", "control"}),
    # cut short: unfinished flows (NaN and nulls), pauses under PFC
    ("small-incast-star.toml", {**ALL_RECORDS, "duration": "30us"}, COMMON | {"pauses", "pfc_received"}),
    ("dctcp-two-flows.toml", {**ALL_RECORDS, "record.trace": {"flows": [1]}, "record.cwnd_flows": [0, 1]}, COMMON),
]


def _values(t: pa.Table) -> dict[str, list]:
    """t's columns as lists, NaN made comparable (`equals` says NaN != NaN)."""
    return {n: ["nan" if isinstance(v, float) and v != v else v for v in c.to_pylist()] for n, c in zip(t.column_names, t.columns)}


def _assert_same(got: pa.Table, want: pa.Table, what: str) -> None:
    assert got.schema.equals(want.schema), f"{what}: {got.schema} != {want.schema}"
    assert [f.nullable for f in got.schema] == [f.nullable for f in want.schema], what
    assert [c.null_count for c in got.columns] == [c.null_count for c in want.columns], what
    assert _values(got) == _values(want), what


@pytest.mark.parametrize("name,overrides,nonempty", SCENARIOS)
def test_every_run_table_reads_back_as_built_in_memory(repo, tmp_path, name, overrides, nonempty):
    sc = load_scenario(repo / "scenarios" / name).with_overrides(overrides)
    res = run_mod.results_from_native(_native.run(sc.core_json))
    rows = {}
    for table in TABLES:
        cols = res.tables.columns_of(table)
        path = columns.write(tmp_path / f"{table}.parquet", [cols])
        _assert_same(pq.read_table(path), from_columns(cols), f"{name} {table}")
        rows[table] = res.tables[table].num_rows
    assert all(rows[t] > 0 for t in nonempty), rows
    if "duration" in overrides:
        assert res.tables["flows"]["finish_ps"].null_count > 0, "the cut-short run should leave flows unfinished"


def _every_type(n: int, rng: np.random.Generator) -> dict[str, columns.Column]:
    """A table with a column of each dtype the writer takes, plain and with nulls, at the edges
    of each type's range."""
    out: dict[str, columns.Column] = {}
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        x[: min(n, 2)] = [info.max, info.min][: min(n, 2)]
        out[np.dtype(dt).name] = x
        out[np.dtype(dt).name + "?"] = Masked(x, rng.random(n) < 0.3)
    for dt in (np.float32, np.float64):
        x = rng.normal(size=n).astype(dt)
        x[: min(n, 3)] = [np.nan, np.inf, -0.0][: min(n, 3)]
        out[np.dtype(dt).name] = x
        out[np.dtype(dt).name + "?"] = Masked(x, rng.random(n) < 0.3)
    out["bool"] = rng.random(n) < 0.5
    out["bool?"] = Masked(rng.random(n) < 0.5, rng.random(n) < 0.3)
    words = ["", "leaf-spine", "é", "host-leaf"]
    out["str"] = Strings(words, rng.integers(0, len(words), n).astype(np.int32))
    out["str?"] = Strings(words, rng.integers(0, len(words), n).astype(np.int32), rng.random(n) < 0.3)
    out["list"] = columns.strings([words[i % 4] for i in range(n)])
    return out


@pytest.mark.parametrize("sizes", [[0], [1], [7, 0, 1000], [3, 5]])
def test_every_type_with_nulls_in_row_groups(tmp_path, sizes):
    rng = np.random.default_rng(len(sizes) * 1000 + sum(sizes))
    parts = [_every_type(n, rng) for n in sizes]
    path = columns.write(tmp_path / "t.parquet", parts)
    want = pa.concat_tables([from_columns(p) for p in parts])
    got = pq.read_table(path)
    _assert_same(got, want, str(sizes))
    assert got.schema.field("uint16").type == pa.uint16() and got.schema.field("uint64").type == pa.uint64()
    assert pq.ParquetFile(path).metadata.num_row_groups == sum(1 for n in sizes if n)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD" if any(sizes) else True


def test_bad_columns_are_named(tmp_path):
    a = {"x": np.arange(3, dtype=np.uint16), "s": Strings(["a"], np.zeros(3, np.int32))}
    with pytest.raises(ValueError, match=r'column "x": dtype "<u4", the table\'s schema has "<u2"'):
        columns.write(tmp_path / "t.parquet", [a, {**a, "x": np.arange(3, dtype=np.uint32)}])
    with pytest.raises(ValueError, match=r'column "s": dictionary index 1 out of range'):
        columns.write(tmp_path / "t.parquet", [{"s": Strings(["a"], np.array([0, 1], np.int32))}])
    with pytest.raises(ValueError, match=r'column "y": 16 bytes, expected 3 rows of 4 bytes'):
        columns.write(tmp_path / "t.parquet", [{"x": np.arange(3, dtype=np.uint16).astype(np.uint32), "y": np.arange(4, dtype=np.uint32)}])
    with pytest.raises(ValueError, match=r'column "z": dtype "<c16" is not one of \|u1, <u2'):
        columns.write(tmp_path / "t.parquet", [{"z": np.zeros(2, complex)}])


def test_a_run_loads_neither_pyarrow_nor_pandas(tmp_path):
    """`hopsim run` (records on) writes its folder without loading pyarrow (about 55 MB of its
    peak) or pandas (0.7 s and about 48 MB), and the folder holds every table."""
    sc = tmp_path / "tiny.toml"
    sc.write_text(TINY + '\n[record.trace]\nflows = [1]\n[record.qlen_monitor]\ninterval = "1us"\n')
    out = tmp_path / "out"
    code = (
        "import sys\n"
        "from hopsim.cli import app\n"
        "from typer.testing import CliRunner\n"
        f"r = CliRunner().invoke(app, ['run', {str(sc)!r}, '--out', {str(out)!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'pandas')))\n"
    )
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert printed.strip().splitlines()[-1] == "[]", printed
    assert pq.read_table(out / "trace.parquet").num_rows > 0 and pq.read_table(out / "qlen.parquet").num_rows > 0
    assert {p.stem for p in out.glob("*.parquet")} == set(TABLES)
