"""Commands that read a run folder (export-fct, export-hpcc, report, compare-fct, query) on a
folder whose Parquet or summary.json is truncated or corrupt: one line naming the file, exit 2,
no traceback and nothing written (issue 9)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import TINY, run_scenario

READERS = {
    # command -> (the tables it reads, its arguments after the run folder)
    "export-fct": (["flows"], []),
    "export-hpcc": (["flows", "pfc_received", "qlen"], ["-o", "{tmp}/export"]),
    "report": (["flows", "buffer", "queues", "ports"], ["-o", "{tmp}/export/report.html"]),
    "compare-fct": (["flows"], ["{run}"]),
    "query": (["flows", "buffer", "pauses", "ports"], ["select count(*) from {table}"]),
}


@pytest.fixture(scope="module")
def good_run(tmp_path_factory) -> Path:
    return run_scenario(tmp_path_factory.mktemp("good"), TINY)


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    else:  # the footer's metadata overwritten: Arrow cannot decode the file's description
        path.write_bytes(data[:-40] + b"\xff" * 32 + data[-8:])


CASES = [(cmd, table, how) for cmd, (tables, _) in READERS.items() for table in tables
         for how in ("truncated", "empty", "garbled")]


@pytest.mark.parametrize("cmd,table,how", CASES)
def test_a_damaged_table_is_named(good_run, tmp_path, cli, cmd, table, how):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    _damage(run / f"{table}.parquet", how)
    args = [a.format(tmp=tmp_path, run=good_run, table=table) for a in READERS[cmd][1]]
    code, msg = cli(cmd, run, *args)
    assert code == 2, msg
    assert f"{table}.parquet" in msg and "Traceback" not in msg, msg
    assert len(msg.strip().splitlines()) == 1, msg
    assert not (tmp_path / "export").exists() and not (run / "fct.txt").exists()


@pytest.mark.parametrize("cmd", ["report", "query"])
@pytest.mark.parametrize("text", ['{"flows": ', "[1, 2]", "\xff"])
def test_a_damaged_summary_is_named(good_run, tmp_path, cli, cmd, text):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    (run / "summary.json").write_bytes(text.encode("latin-1"))
    args = {"report": ["-o", str(tmp_path / "export" / "r.html")], "query": ["select count(*) from runs"]}[cmd]
    code, msg = cli(cmd, run, *args)
    assert code == 2, msg
    assert f"{run / 'summary.json'}:" in msg and len(msg.strip().splitlines()) == 1, msg
    assert not (tmp_path / "export").exists()


def test_the_python_api_says_which_file(good_run, tmp_path):
    import hopsim
    from hopsim.errors import ScenarioError

    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    _damage(run / "buffer.parquet", "truncated")
    with pytest.raises(ScenarioError, match="buffer.parquet: cannot read it as Parquet"):
        hopsim.load_run(run)


@pytest.mark.parametrize("table", ["flows", "buffer", "queues", "ports"])
def test_another_table_in_its_place_is_named(good_run, tmp_path, cli, table):
    """A readable Parquet file that is not the table (another run's pauses copied over it):
    the report said KeyError."""
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    shutil.copy(good_run / "pauses.parquet", run / f"{table}.parquet")
    code, msg = cli("report", run, "-o", tmp_path / "export" / "r.html")
    assert code == 2, msg
    assert f"{run / f'{table}.parquet'}: has no column" in msg and f"not the {table} table" in msg
    assert not (tmp_path / "export").exists()


@pytest.mark.parametrize("text", ["[1]", '{"workload": []}', '{"workload": {"kind": "hpcc_flows", "time_offset": "x"}}'])
def test_a_scenario_json_of_another_shape_is_named(good_run, tmp_path, cli, text):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    (run / "scenario.json").write_text(text)
    code, msg = cli("export-hpcc", run, "-o", tmp_path / "export")
    assert code == 2 and "scenario.json" in msg and len(msg.strip().splitlines()) == 1, msg
    assert not (tmp_path / "export").exists()


def test_params_of_another_shape_are_named(good_run, tmp_path, cli):
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    (run / "summary.json").write_text('{"params": [1, 2]}')
    code, msg = cli("query", run, "select count(*) from runs")
    assert code == 2 and f"{run / 'summary.json'}: 'params' is not a JSON object" in msg, msg
