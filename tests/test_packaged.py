"""The data the package carries (`hopsim.scenario.packaged`), used from a folder that is not the
repository: a bare CDF name, the papers' folders and the example scenarios (`hopsim examples`,
`hopsim init`); and the note for a table of a scheme the scenario does not select."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hopsim.papers.reproduce import paper_dir
from hopsim.scenario.model import load_scenario
from hopsim.scenario.packaged import data_dir, examples



@pytest.fixture
def elsewhere(tmp_path: Path):
    """An empty working folder outside the repository."""
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def test_the_data_lives_in_the_package_and_the_repository_links_to_it(repo: Path):
    assert data_dir() == Path(__file__).resolve().parents[1] / "python" / "hopsim" / "data"
    for name in ("workloads", "scenarios"):
        assert (repo / name).resolve() == data_dir() / name
    assert (data_dir() / "workloads" / "WebSearch_HPCC.txt").is_file()


def test_a_bare_cdf_name_is_found_from_any_folder(elsewhere: Path, bare_cdf: str, monkeypatch: pytest.MonkeyPatch):
    # as installed from a wheel: no repository above the package to fall back on
    monkeypatch.setattr("hopsim.scenario.paths._PACKAGE_REPO", elsewhere)
    (elsewhere / "s.toml").write_text(bare_cdf)
    sc = load_scenario(elsewhere / "s.toml")
    assert sc.model.workload.cdf == str(data_dir() / "workloads" / "WebSearch_HPCC.txt")


def test_a_paper_is_found_from_any_folder(elsewhere: Path):
    assert paper_dir("ppfc") == data_dir() / "scenarios" / "papers" / "ppfc"


def test_examples_are_listed_and_each_validates_from_any_folder(elsewhere: Path, cli):
    code, out = cli("examples")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert names == list(examples()) and "small-incast-star" in names
    # the benchmark reads the repository's topology and flow files: not an example that runs anywhere
    assert "benchmark-hpcc-320" not in names
    for name in names:
        assert cli("init", name)[0] == 0
        load_scenario(elsewhere / f"{name}.toml", validate=True)


def test_init_copies_an_example_and_never_replaces_a_file(elsewhere: Path, cli):
    code, out = cli("init", "small-incast-star")
    assert code == 0 and "wrote small-incast-star.toml" in out
    assert (elsewhere / "small-incast-star.toml").read_text() == examples()["small-incast-star"].read_text()
    (elsewhere / "mine.toml").write_text("keep")
    code, out = cli("init", "small-incast-star", "--out", "mine.toml")
    assert code == 2 and "--out mine.toml: already exists" in out
    assert (elsewhere / "mine.toml").read_text() == "keep"
    code, out = cli("init", "no-such")
    assert code == 2 and "no example 'no-such'; allowed: " in out


def test_a_table_for_an_unselected_scheme_is_named_in_a_note(write, cli, bare_cdf: str):
    s = write("s.toml", bare_cdf + """
[flow_control]
scheme = "pfc"

[flow_control.pfc]
xoff = "100KB"

[flow_control.bfc]
pfc = true

[congestion_control]
algorithm = "dcqcn"

[congestion_control.dcqcn]
g = 0.01

[congestion_control.timely]
beta = 0.5
""")
    code, out = cli("validate", s)
    assert code == 0, out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: flow_control.bfc: ignored: a table for scheme 'bfc', but flow_control.scheme is 'pfc'",
        "note: congestion_control.timely: ignored: a table for algorithm 'timely', but congestion_control.algorithm is 'dcqcn'",
    ]
