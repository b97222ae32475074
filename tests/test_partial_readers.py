"""A run folder kept with --keep-partial (summary.json says partial) reads as partial everywhere:
each export and compare-fct say so in a note, the report says so on its page, and query's runs
table has a partial column."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import TINY


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two run folders of one scenario: one whole, one marked partial as `hopsim run
    --keep-partial` marks it (the same tables, `partial: true` in its summary)."""
    from conftest import run_scenario

    d = tmp_path_factory.mktemp("partial")
    whole = run_scenario(d, TINY)
    part = d / "part"
    shutil.copytree(whole, part)
    s = json.loads((part / "summary.json").read_text())
    s["partial"] = True
    (part / "summary.json").write_text(json.dumps(s))
    return d


@pytest.mark.parametrize("cmd", ["export-fct", "export-bfc", "export-floodgate", "export-hpcc"])
def test_every_export_notes_a_partial_run(runs: Path, cli, tmp_path: Path, cmd: str) -> None:
    code, text = cli(cmd, runs / "part", "--out", tmp_path / "x")
    assert code == 0, text
    assert "note:" in text and "a partial run" in text, text
    code, text = cli(cmd, runs / "run", "--out", tmp_path / "y")
    assert code == 0 and "a partial run" not in text, text


def test_compare_fct_notes_a_partial_side(runs: Path, cli) -> None:
    code, text = cli("compare-fct", runs / "run", runs / "part")
    assert "a partial run" in text and str(runs / "part") in text, text


def test_query_runs_table_has_partial(runs: Path, cli) -> None:
    code, text = cli("query", runs, "select run, partial from runs order by run", "--format", "csv")
    assert code == 0, text
    assert text.strip().splitlines() == ["run,partial", "part,True", "run,False"]


def test_report_says_partial(runs: Path, cli, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, text = cli("report", runs, "--out", out)
    assert code == 0, text
    page = out.read_text()
    assert "partial:</b> 1 of 2 run(s)" in page
    assert "a partial run" in text
