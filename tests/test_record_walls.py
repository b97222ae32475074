"""scripts/record_walls.py: a reproduction's measured times into its sweep files' [paper] tables."""

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("record_walls", Path(__file__).parents[1] / "scripts" / "record_walls.py")
rw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rw)

SWEEP = """name = "x"
[[runs]]
name = "a"

[paper]
wall_full_s = 600               # old
[[paper.figures]]
id = "f"
"""


def test_set_key_replaces_within_the_paper_table_and_inserts_when_absent():
    t = rw.set_key(SWEEP, "wall_full_s", 13, "measured")
    assert "wall_full_s = 13" in t and "600" not in t
    t = rw.set_key(t, "wall_quick_s", 2, "measured")
    lines = t.splitlines()
    assert lines[lines.index("[paper]") + 1].startswith("wall_quick_s = 2")
    assert t.count("[[paper.figures]]") == 1


def _repro(tmp_path: Path, runs: dict) -> Path:
    paper = tmp_path / "paper"
    paper.mkdir()
    for stem in runs:
        (paper / f"{stem}.toml").write_text(SWEEP)
    out = tmp_path / "out"
    out.mkdir()
    (out / "paper.json").write_text(json.dumps({
        "paper": str(paper), "quick": False, "sweep_wall_s": {s: 12.2 for s in runs},
        "sweep_runs": runs, "jobs": 2, "cores": 2, "load": [0.5, 1.25]}))
    return out


def test_records_fresh_sweeps_only_and_only_when_asked(tmp_path):
    out = _repro(tmp_path, {"fresh": [3, 0], "resumed": [1, 2]})
    assert rw.main([str(out)]) == 0
    assert "600" in (tmp_path / "paper" / "fresh.toml").read_text()  # printed, not written
    assert rw.main([str(out), "--write"]) == 0
    fresh = (tmp_path / "paper" / "fresh.toml").read_text()
    assert "wall_full_s = 13" in fresh and "2 worker(s) on 2 cores, load 0.5-1.25" in fresh
    assert "wall_full_s = 600" in (tmp_path / "paper" / "resumed.toml").read_text()


def test_not_a_reproduction_is_refused(tmp_path, capsys):
    assert rw.main([str(tmp_path)]) == 2
    assert "not a `hopsim reproduce` folder" in capsys.readouterr().err


@pytest.mark.parametrize("note", [None, "measured on a quiet machine"])
def test_older_manifest_needs_a_note(tmp_path, note):
    out = _repro(tmp_path, {"s": [1, 0]})
    m = json.loads((out / "paper.json").read_text())
    del m["sweep_runs"]
    (out / "paper.json").write_text(json.dumps(m))
    args = [str(out), "--write"] + (["--note", note] if note else [])
    assert rw.main(args) == (0 if note else 2)
