"""Output paths that cannot be written (a folder where the file should go, a file where a folder
should be): one line naming the option and the path, exit 2, nothing left behind (issue 9)."""

from __future__ import annotations

import shutil

import pytest

from conftest import REPO, TINY


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A scenario, a run folder of it and the HPCC test config, in one folder."""
    d = tmp_path_factory.mktemp("in")
    (d / "tiny.toml").write_text(TINY)
    shutil.copytree(REPO / "tests" / "data" / "hpcc", d / "hpcc")
    from typer.testing import CliRunner

    from hopsim.cli import app

    r = CliRunner().invoke(app, ["run", str(d / "tiny.toml"), "--out", str(d / "run")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return d


COMMANDS = {
    "validate": ("--core-json", lambda d: ["validate", d / "tiny.toml"]),
    "import-hpcc": ("--out", lambda d: ["import-hpcc", d / "hpcc" / "config.txt"]),
    "report": ("--out", lambda d: ["report", d / "run"]),
    "export-fct": ("--out", lambda d: ["export-fct", d / "run"]),
    "compare-fct": ("--json", lambda d: ["compare-fct", d / "run", d / "run"]),
}


@pytest.mark.parametrize("cmd", list(COMMANDS))
@pytest.mark.parametrize("where", ["a folder", "under a file"])
def test_an_output_that_cannot_be_written(inputs, tmp_path, cli, cmd, where):
    opt, args = COMMANDS[cmd]
    if where == "a folder":
        target = tmp_path / "taken"
        target.mkdir()
        why = "Is a directory"
    else:
        (tmp_path / "file").write_text("")
        target = tmp_path / "file" / "out.txt"
        why = f"{tmp_path / 'file'} is a file, not a folder"
    code, msg = cli(*args(inputs), opt, target)
    assert code == 2, msg
    assert f"{opt} " in msg and why in msg and len(msg.strip().splitlines()) == 1, msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file" if where != "a folder" else "taken"]
    if where == "a folder":
        assert list(target.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["run", "{d}/tiny.toml", "--out", "{long}"],
    ["export-fct", "{long}"],
    ["export-hpcc", "{long}"],
    ["report", "{long}"],
    ["compare-fct", "{long}", "{d}/run"],
    ["sweep", "{d}/tiny.toml", "--out", "{long}"],
])
def test_a_name_longer_than_the_system_allows(inputs, tmp_path, monkeypatch, capsys, args):
    """Through `main`, as the `hopsim` command runs: an OSError about a path given on the
    command line that no command expected (here ENAMETOOLONG) is exit 2 and one line."""
    import sys

    from hopsim.cli import main

    long = tmp_path / ("x" * 300)
    monkeypatch.setattr(sys, "argv", ["hopsim", *[a.format(d=inputs, long=long) for a in args]])
    with pytest.raises(SystemExit) as e:
        main()
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
