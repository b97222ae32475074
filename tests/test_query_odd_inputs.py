"""query and report on odd input: statements that return no rows, a table file that is a loop of
links or another table copied into its place, and a folder with no run in it. Each is one line
naming what is wrong, exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import TINY


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import run_scenario

    return run_scenario(tmp_path_factory.mktemp("q"), TINY)


def one_line(code: int, text: str, *expect: str) -> None:
    lines = [l for l in text.splitlines() if l.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), text
    for e in expect:
        assert e in lines[0], (e, text)


@pytest.mark.parametrize("sql", [";", "/* */", "-- nothing", " ; ; "])
def test_a_statement_without_rows_is_bad_input(run: Path, cli, sql: str) -> None:
    one_line(*cli("query", run, "--", sql), "no statement that returns rows")


def test_another_table_in_flows_place_is_refused(run: Path, cli, tmp_path: Path) -> None:
    """pauses.parquet copied over flows.parquet: query once answered count(*) from flows with the
    pause count; report and the exports refused it already."""
    r = tmp_path / "r"
    shutil.copytree(run, r)
    shutil.copyfile(r / "pauses.parquet", r / "flows.parquet")
    one_line(*cli("query", r, "select count(*) from flows"), "flows.parquet", "not the flows table")


def test_a_loop_of_links_in_a_tables_place_is_named(run: Path, cli, tmp_path: Path) -> None:
    r = tmp_path / "r"
    shutil.copytree(run, r)
    (r / "flows.parquet").unlink()
    (r / "flows.parquet").symlink_to("flows.parquet")
    one_line(*cli("query", r, "select count(*) from flows"), "flows.parquet", "symbolic links")


@pytest.mark.parametrize("cmd", [["query", "select 1"], ["report"]])
def test_a_folder_without_runs(cli, tmp_path: Path, cmd: list[str]) -> None:
    (tmp_path / "empty").mkdir()
    one_line(*cli(cmd[0], tmp_path / "empty", *cmd[1:], *(["--out", tmp_path / "r.html"] if cmd[0] == "report" else [])),
             "no complete run folders")
    assert not (tmp_path / "r.html").exists()
