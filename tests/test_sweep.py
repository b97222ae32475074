"""Sweeps: planning, resume after an interruption, local pool vs Dask, queries across runs."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

import hopsim
from hopsim import sweep
from hopsim.results import store
from conftest import TINY

SWEEP = """
base = "base.toml"
seeds = [1, 2]
[grid]
"flow_control.scheme" = ["pfc", "capfc"]
"workload.incast.degree" = [3, 4]
"""


@pytest.fixture
def sweep_file(write):
    write("base.toml", TINY)
    return write("sweep.toml", SWEEP)


def _mtimes(out):
    return {p.name: (p / "summary.json").stat().st_mtime_ns for p in out.iterdir() if store.is_complete(p)}


def test_plan(sweep_file):
    _, points = sweep.plan_sweep(sweep_file)
    assert len(points) == 8
    assert {tuple(sorted(p.params)) for p in points} == {("flow_control.scheme", "seed", "workload.incast.degree")}
    assert len({p.run_id for p in points}) == 8


def test_plan_with_a_list_of_runs(write):
    write("base.toml", TINY)
    f = write("list.toml", """
        base = "base.toml"
        [[runs]]
        "flow_control.scheme" = "pfc"
        [[runs]]
        "flow_control.scheme" = "ppfc"
        "flow_control.ppfc.T" = "20us"
        [grid]
        "buffer.size" = ["200KB", "400KB"]
        """)
    _, points = sweep.plan_sweep(f)
    assert len(points) == 4
    ppfc = [p for p in points if p.params["flow_control.scheme"] == "ppfc"]
    assert {p.scenario.model.flow_control.ppfc.T for p in ppfc} == {20_000_000}
    assert {p.scenario.model.buffer.size for p in points} == {200_000, 400_000}


def test_resume_after_interruption(sweep_file, tmp_path, monkeypatch, cli):
    out = tmp_path / "out"
    # a crash in the middle: the third run's write dies
    real_write = store.write_run
    calls = {"n": 0}

    def crashing_write(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated crash")
        return real_write(*a, **k)

    monkeypatch.setattr(sweep, "write_run", crashing_write)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(sweep_file, out, jobs=1)
    done = [p for p in out.iterdir() if p.is_dir() and store.is_complete(p)]
    assert len(done) == 2
    assert not [p for p in out.iterdir() if p.name.startswith(".") and p.is_dir()]  # no partial folder
    monkeypatch.setattr(sweep, "write_run", real_write)

    # a stale temporary folder, as a killed process would leave
    (out / ".scheme=pfc-0123456789.tmp-abc").mkdir()
    before = _mtimes(out)
    rep = sweep.run_sweep(sweep_file, out, jobs=1)
    assert len(rep.skipped) == 2 and len(rep.ran) == 6
    assert set(rep.skipped) == set(before)
    assert {k: v for k, v in _mtimes(out).items() if k in before} == before  # untouched
    assert not (out / ".scheme=pfc-0123456789.tmp-abc").exists()

    # delete one finished run: only it runs again (through the CLI this time)
    victim = sorted(p for p in out.iterdir() if p.is_dir())[5]
    shutil.rmtree(victim)
    code, msg = cli("sweep", sweep_file, "--out", out, "--jobs", "1")
    assert code == 0, msg
    assert "1 ran locally, 7 already complete" in msg
    assert store.is_complete(victim)
    manifest = json.loads((out / "sweep.json").read_text())
    assert len(manifest["runs"]) == 8


def _tables(out):
    res = {}
    for run in sorted(p for p in out.iterdir() if p.is_dir()):
        res[run.name] = {t: pq.read_table(run / f"{t}.parquet") for t in ("flows", "pauses", "buffer", "queues", "ports")}
        res[run.name]["summary"] = {k: v for k, v in json.loads((run / "summary.json").read_text()).items()
                                    if k not in ("wall_time_s", "events_per_s")}
    return res


def test_local_pool_and_dask_give_identical_results(write, tmp_path):
    write("base.toml", TINY)
    sweep_file = write("sweep.toml", 'base = "base.toml"\nseeds = [1, 2]\n[grid]\n"flow_control.scheme" = ["pfc", "ppfc"]\n')
    local = tmp_path / "local"
    rep = sweep.run_sweep(sweep_file, local, jobs=2)
    assert len(rep.ran) == 4

    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dask_out = tmp_path / "dask"
        rep = sweep.run_sweep(sweep_file, dask_out, cluster=cluster.scheduler_address)
        assert len(rep.ran) == 4
    a, b = _tables(local), _tables(dask_out)
    assert a.keys() == b.keys()
    for run in a:
        for t in a[run]:
            assert a[run][t] == b[run][t], (run, t)


def test_query_across_runs(sweep_file, tmp_path, cli):
    out = tmp_path / "out"
    sweep.run_sweep(sweep_file, out, jobs=1)
    df = hopsim.query(out, "SELECT scheme, degree, seed, count(*) AS n FROM flows GROUP BY ALL ORDER BY ALL")
    assert len(df) == 8
    assert list(df.columns) == ["scheme", "degree", "seed", "n"]
    assert (df["n"] == df["degree"]).all()
    runs = hopsim.query(out, "SELECT label, pause_frames FROM runs ORDER BY label")
    assert set(runs["label"]) == {f"scheme={s}, degree={d}" for s in ("pfc", "capfc") for d in (3, 4)}
    code, text = cli("query", out, "SELECT scheme, sum(paused_ns) AS p FROM ports GROUP BY scheme ORDER BY scheme",
                     "--format", "csv")
    assert code == 0 and text.splitlines()[0] == "scheme,p" and len(text.splitlines()) == 3
    code, text = cli("query", out, "SELECT nonsense FROM flows")
    assert code == 2 and "error" in text


def test_another_sweeps_folder_is_refused(write, tmp_path, cli):
    """Issue 9: a sweep's folder takes only that sweep's runs; the same sweep file, edited or
    copied elsewhere, still resumes into it."""
    write("base.toml", TINY)
    first = write("a.toml", 'base = "base.toml"\n[grid]\n"flow_control.scheme" = ["pfc"]\n')
    out = tmp_path / "out"
    assert cli("sweep", first, "--out", out, "--jobs", "1")[0] == 0
    manifest = (out / "sweep.json").read_text()
    other = write("b.toml", 'base = "base.toml"\n[grid]\n"flow_control.scheme" = ["capfc"]\n')
    code, msg = cli("sweep", other, "--out", out, "--jobs", "1")
    assert code == 2, msg
    assert f"--out {out}: holds the runs of another sweep ({first})" in msg
    assert (out / "sweep.json").read_text() == manifest and len([p for p in out.iterdir() if p.is_dir()]) == 1
    # the same text under another name: the same sweep
    copy = write("copy.toml", first.read_text())
    code, msg = cli("sweep", copy, "--out", out, "--jobs", "1")
    assert code == 0 and "1 already complete" in msg, msg
    # the first file, edited to give seeds: its run without a seed is no longer one of its runs
    # (issue 29: a folder holds its sweep's current runs only), so it is named, and --prune
    # removes it
    first.write_text(first.read_text().replace("[grid]", "seeds = [1, 2]\n[grid]"))
    code, msg = cli("sweep", first, "--out", out, "--jobs", "1")
    assert code == 2 and "no longer plans" in msg and "--prune" in msg, msg
    code, msg = cli("sweep", first, "--out", out, "--jobs", "1", "--prune")
    assert code == 0, msg
    # and once more with a seed added: resumes (only the new run runs)
    first.write_text(first.read_text().replace("seeds = [1, 2]", "seeds = [1, 2, 3]"))
    code, msg = cli("sweep", first, "--out", out, "--jobs", "1")
    assert code == 0 and "1 ran" in msg, msg


def test_a_run_folder_is_no_sweep_folder(write, tiny, tmp_path, cli):
    run = tmp_path / "run"
    assert cli("run", tiny, "--out", run)[0] == 0
    sweep_file = write("s.toml", 'base = "tiny.toml"\n[grid]\n"flow_control.scheme" = ["pfc"]\n')
    code, msg = cli("sweep", sweep_file, "--out", run, "--jobs", "1")
    assert code == 2 and f"--out {run}: is a run folder" in msg, msg
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == []


@pytest.mark.parametrize("how", ["a file at --out", "no scheduler at --cluster"])
def test_a_sweep_that_cannot_start_leaves_nothing(sweep_file, tmp_path, cli, how):
    out = tmp_path / "out"
    args = ["--jobs", "1"]
    if how == "a file at --out":
        out.write_text("")
        needle = f"--out {out}: is a file, not a folder"
    else:
        args = ["--cluster", "not-an-address"]
        needle = "--cluster not-an-address: cannot connect to a Dask scheduler there"
    code, msg = cli("sweep", sweep_file, "--out", out, *args)
    assert code == 2 and needle in msg, msg
    assert out.is_file() if how == "a file at --out" else not out.exists()
