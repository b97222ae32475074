"""Reliability at the edges (issue 29): one test per kind of failure found by probing as a
hostile but honest user would. The generated inputs are in `test_hostile_inputs.py`; signals
during a run in `test_run_ends.py`."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from hopsim import _native
from hopsim.results import locks
from hopsim.errors import RunInterrupted
from hopsim.scenario.model import load_scenario
from hopsim.results.spool import PREFIX, RAW, Spool, remove_abandoned

from conftest import TINY
from test_run_ends import LONG, handles, ring_toml, wait_for


def _one_line(text: str) -> str:
    lines = [l for l in text.splitlines() if l.strip() and not l.startswith("note:")]
    assert len(lines) == 1, text
    return lines[0]


# ---------------------------------------------------------------- 3. logs that grow with time

def test_pause_and_control_logs_are_spooled_in_chunks(write):
    """A PFC-deadlocked ring with the watchdog off sends pause frames for as long as it runs:
    their logs leave the core in chunks with the samples, as the samples do."""
    sc = load_scenario(write("ring.toml", ring_toml(extra='duration = "30ms"\nstall_timeout = "off"')))
    chunks = []
    out = _native.run(sc.core_json, on_spill=lambda t: chunks.append(
        (len(t["pauses"]["time_ps"][1]) // 8, len(t["control"]["time_ps"][1]) // 8)), spill_rows=1000)
    spilled = sum(p for p, _ in chunks)
    assert spilled > 0 and sum(c for _, c in chunks) >= spilled
    # the core keeps only the rows after the last chunk
    assert len(out["tables"]["pauses"]["time_ps"][1]) // 8 < 1000 + (1 << 14)


def test_a_spooled_run_has_the_pauses_of_an_unspooled_one(write):
    from hopsim.run import run

    sc = load_scenario(write("ring.toml", ring_toml(extra='duration = "20ms"\nstall_timeout = "off"')))
    a, b = run(sc, spool=True), run(sc, spool=False)
    for t in ("pauses", "control", "pfc_received"):
        assert a.tables[t].to_pandas().equals(b.tables[t].to_pandas()), t
    assert a.summary["pause_frames"] == b.summary["pause_frames"] > 0


def test_the_estimate_counts_a_chunk_of_the_logs():
    from hopsim.scenario.resources import estimate_memory

    sc = load_scenario(Path(__file__).parents[1] / "scenarios" / "small-incast-star.toml")
    parts = {p["name"]: p["bytes"] for p in estimate_memory(sc.core_json, spooled=True)["parts"]}
    assert parts["pause and control logs"] > 0


# ---------------------------------------------------------------- 4. an allocation that fails

def test_an_allocation_failure_is_one_line_and_exit_2(write, tmp_path):
    sc = write("big.toml", TINY.replace("hosts = 5", "hosts = 1000000").replace('buffer_interval = "1us"', 'buffer_interval = "off"'))

    def small_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    r = subprocess.run([sys.executable, "-m", "hopsim", "run", str(sc), "--out", str(tmp_path / "r"), "--max-memory", "off"],
                       capture_output=True, text=True, preexec_fn=small_memory, timeout=600,
                       env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    line = _one_line(r.stderr)
    assert line.startswith("error: memory:") and "nothing written" in line
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- 5, 6. one signal path

def test_an_interrupt_inside_the_spool_callback_ends_as_an_interrupted_run(write, monkeypatch):
    """Ctrl-C landing while a chunk is spooled: the run ends as interrupted with its partial
    results (not a bare KeyboardInterrupt past `except RunInterrupted`), and the chunk is whole."""
    from hopsim.run import run

    sc = load_scenario(write("long.toml", LONG.replace('buffer_interval = "off"', 'buffer_interval = "1us"')))
    add = Spool._add
    calls = []

    def add_then_interrupt(self, tables):
        add(self, tables)
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(Spool, "_add", add_then_interrupt)
    with pytest.raises(RunInterrupted) as e:
        run(sc)
    partial = e.value.partial
    assert partial.summary["stopped"] == "interrupted" and partial.summary["end_time_ns"] > 0
    assert len(partial.tables["buffer"]) > 0


def test_a_signal_during_a_chunk_is_delivered_once_the_chunk_is_whole(tmp_path):
    """`interrupts.deferred`: the handler runs after the block, never inside it."""
    sp = Spool(tmp_path)
    cols = {name: {"a": ("<u8", np.arange(10, dtype="<u8").tobytes()), "b": ("<u4", np.arange(10, dtype="<u4").tobytes())}
            for name in (*RAW, "flows")}
    old = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        orig_add = sp._add

        def add_with_signal(tables):
            signal.raise_signal(signal.SIGINT)  # arrives in the middle of the chunk
            orig_add(tables)

        sp._add = add_with_signal
        with pytest.raises(KeyboardInterrupt):
            sp.add(cols)
    finally:
        signal.signal(signal.SIGINT, old)
    for files in sp._raw.values():
        for f in files.values():
            f.flush()
    sizes = {p.stat().st_size for p in sp.dir.glob("raw-*-a.bin")}
    assert sizes == {80}, sizes  # every table's whole chunk, then the interrupt


# ---------------------------------------------------------------- 7. an endless query

def test_ctrl_c_stops_an_endless_query(tmp_path):
    code = f"""
import os, signal, threading, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from hopsim.results.query import query
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    query({str(tmp_path / 'runs')!r}, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT max(n) FROM t")
except KeyboardInterrupt:
    print("stopped")
"""
    _stopped_over_a_run(tmp_path, code)


def test_ctrl_c_while_the_views_are_made_ends_as_an_interrupt(tmp_path):
    # DuckDB run on the main thread takes a Ctrl-C for itself and raises RuntimeError('Query
    # interrupted'): connect gives the KeyboardInterrupt back. A long statement on one DuckDB
    # thread (seconds) stands in for the footers of many files, so the signal lands inside DuckDB;
    # it has an end, as connect's statements do: DuckDB on the main thread notices a signal at
    # times only when the statement ends (then raising the same error), and an endless one could
    # wait for ever
    code = f"""
import os, signal, threading, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import hopsim.results.query as q
orig = q._views
def views(con, runs):
    con.execute("SET threads = 1")
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    con.execute("SELECT sum(hash(i)) FROM range(1000000000) t(i)")
    orig(con, runs)
q._views = views
try:
    q.connect({str(tmp_path / 'runs')!r})
except KeyboardInterrupt:
    print("stopped")
"""
    _stopped_over_a_run(tmp_path, code)


def _stopped_over_a_run(tmp_path: Path, code: str) -> None:
    """Run `code` (which prints "stopped" on a KeyboardInterrupt) in a fresh process over one
    tiny run folder in tmp_path/runs."""
    r0 = subprocess.run([sys.executable, "-m", "hopsim", "run", str(_tiny(tmp_path)), "--out", str(tmp_path / "runs" / "r")],
                        capture_output=True, text=True)
    assert r0.returncode == 0, r0.stderr
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert "stopped" in r.stdout, r.stderr


def _tiny(d: Path) -> Path:
    p = d / "tiny.toml"
    p.write_text(TINY.lstrip())
    return p


# ---------------------------------------------------------------- 8. what SIGKILL leaves

def test_abandoned_spools_are_removed_and_live_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(locks, "MIN_AGE_S", 0.0)
    dead = tmp_path / f"{PREFIX}dead"
    dead.mkdir()
    (dead / locks.LOCK).write_text("{}")  # a lock file nobody holds: its process ended
    (dead / "raw-x.bin").write_bytes(b"x" * 100)
    alive = Spool(tmp_path)  # held by this process
    other = tmp_path / f"{PREFIX}being-made"  # no lock file yet: not judged
    other.mkdir()
    assert not dead.exists()  # removed by the new spool
    assert remove_abandoned(tmp_path) == 0
    assert alive.dir.exists() and other.exists()


def test_a_killed_run_leaves_a_spool_the_next_run_removes(tmp_path, monkeypatch):
    spool_parent = tmp_path / "tmp"
    spool_parent.mkdir()
    p = subprocess.Popen([sys.executable, "-m", "hopsim", "run", str(_long(tmp_path)), "--out", str(tmp_path / "r")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(spool_parent)})
    wait_for(lambda: any(spool_parent.glob(PREFIX + "*/" + locks.LOCK)), "the run's spool", p=p)
    p.kill()
    p.wait()
    left = list(spool_parent.glob(PREFIX + "*"))
    assert left
    monkeypatch.setattr(locks, "MIN_AGE_S", 0.0)
    Spool(spool_parent)  # the next run's spool
    assert not any(d.exists() for d in left)


def _long(d: Path) -> Path:
    p = d / "long.toml"
    p.write_text(LONG)
    return p


def test_killing_a_sweep_ends_its_workers(tmp_path):
    (tmp_path / "long.toml").write_text(LONG)
    (tmp_path / "sweep.toml").write_text('base = "long.toml"\nseeds = [1, 2, 3]\n')
    p = subprocess.Popen([sys.executable, "-m", "hopsim", "sweep", str(tmp_path / "sweep.toml"), "--out", str(tmp_path / "s"),
                          "--jobs", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc = psutil.Process(p.pid)
    wait_for(lambda: len(proc.children()) >= 2, "the sweep's workers", p=p)
    workers = proc.children()
    p.kill()
    p.wait()
    _, alive = psutil.wait_procs(workers, timeout=120)
    for w in alive:  # (a failing test leaves no orphan behind)
        w.kill()
    assert not alive, alive


# ---------------------------------------------------------------- 10, 11, 14, 15. validation

@pytest.mark.parametrize("extra, words", [
    ('stall_timeout = "off"', ["stall_timeout", "duration"]),
    ('stall_timeout = "0us"', ["stall_timeout", "'auto'", "'off'"]),
])
def test_a_run_that_could_never_end_is_refused(cli, write, extra, words):
    code, text = cli("validate", write("ring.toml", ring_toml(extra=extra)))
    assert code == 2, text
    line = _one_line(text)
    assert all(w in line for w in words), line


@pytest.mark.parametrize("rate", ["1bps", "1Kbps"])
def test_a_link_slower_than_the_rto_is_refused(cli, write, rate):
    code, text = cli("validate", write("slow.toml", TINY.replace('rate = "100Gbps"', f'rate = "{rate}"')
                                       .replace('buffer_interval = "1us"', 'buffer_interval = "off"')))
    assert code == 2, text
    line = _one_line(text)
    assert "topology" in line and "transport.rto" in line and "for ever" in line


def test_a_seed_in_the_grid_and_seeds_is_refused(cli, write, tmp_path):
    write("tiny.toml", TINY)
    sw = write("sweep.toml", 'base = "tiny.toml"\nseeds = [1, 2]\n[grid]\n"seed" = [3]\n')
    code, text = cli("sweep", sw, "--out", tmp_path / "s")
    assert code == 2 and "grid.seed" in text and "seeds" in text, text
    assert not (tmp_path / "s").exists()


def test_a_zero_window_and_a_switch_listed_twice_are_refused(cli, write):
    code, text = cli("validate", write("w.toml", TINY.replace('window = "off"', "window = 0")))
    assert code == 2 and "transport.window" in text and "'bdp'" in text, text
    explicit = """
name = "x"
[topology]
kind = "explicit"
nodes = 4
switches = [2, 2]
tiers = [0, 2]
links = [{a = 0, b = 2, rate = "100Gbps"}, {a = 1, b = 2, rate = "100Gbps"}, {a = 3, b = 2, rate = "100Gbps"}]
[workload]
kind = "flows"
flows = [{src = 0, dst = 1, size = "10KB"}]
"""
    code, text = cli("validate", write("e.toml", explicit))
    assert code == 2 and "switches" in text and "twice" in text, text


# ---------------------------------------------------------------- 13, 17. a sweep folder

def test_a_sweep_folder_holds_only_its_current_runs(cli, write, tmp_path):
    base = write("tiny.toml", TINY)
    sw = write("sweep.toml", 'base = "tiny.toml"\n[grid]\n"workload.incast.degree" = [2, 3]\n')
    code, text = cli("sweep", sw, "--out", tmp_path / "s", "--jobs", "1")
    assert code == 0, text
    base.write_text(base.read_text().replace('flow_size = "100KB"', 'flow_size = "50KB"'))
    code, text = cli("sweep", sw, "--out", tmp_path / "s", "--jobs", "1")
    assert code == 2, text
    line = _one_line(text)
    assert "2 run(s)" in line and "degree=2" in line and "--prune" in line
    assert len(list((tmp_path / "s").glob("*/summary.json"))) == 2  # nothing added beside them
    code, text = cli("sweep", sw, "--out", tmp_path / "s", "--jobs", "1", "--prune")
    assert code == 0, text
    runs = sorted(d.name for d in (tmp_path / "s").glob("*/summary.json"))
    manifest = json.loads((tmp_path / "s" / "sweep.json").read_text())
    assert len(runs) == 2 and sorted(r["run"] for r in manifest["runs"]) == sorted(Path(r).parent.name for r in
                                                                                      (tmp_path / "s").glob("*/summary.json"))


def test_a_sweep_folder_in_use_is_refused_naming_its_holder(cli, write, tmp_path):
    write("tiny.toml", TINY)
    sw = write("sweep.toml", 'base = "tiny.toml"\n')
    out = tmp_path / "s"
    out.mkdir()
    held = locks.hold(out)  # another sweep's lock (a flock per open file: it excludes this process too)
    try:
        code, text = cli("sweep", sw, "--out", out, "--jobs", "1")
    finally:
        held.close()
    assert code == 2, text
    assert "in use by another sweep" in text and f"process {os.getpid()}" in text
    assert not list(out.glob("*/summary.json"))
    code, text = cli("sweep", sw, "--out", out, "--jobs", "1")
    assert code == 0, text


# ---------------------------------------------------------------- 16. damaged summaries

def test_a_summary_with_wrong_types_is_a_damaged_run_folder(cli, tiny, tmp_path):
    code, text = cli("run", tiny, "--out", tmp_path / "runs" / "r")
    assert code == 0, text
    s = json.loads((tmp_path / "runs" / "r" / "summary.json").read_text())
    s["flows"] = "many"
    (tmp_path / "runs" / "r" / "summary.json").write_text(json.dumps(s))
    code, text = cli("query", tmp_path / "runs", "select * from runs")
    assert code == 2, text
    assert "'flows' is \"many\"" in text and "damaged" in text


def test_a_sweep_runs_a_damaged_point_again(cli, write, tmp_path):
    write("tiny.toml", TINY)
    sw = write("sweep.toml", 'base = "tiny.toml"\n')
    assert cli("sweep", sw, "--out", tmp_path / "s", "--jobs", "1")[0] == 0
    (summary,) = (tmp_path / "s").glob("*/summary.json")
    summary.write_text('{"flows": "many"}')
    code, text = cli("sweep", sw, "--out", tmp_path / "s", "--jobs", "1")
    assert code == 0 and "1 ran" in text, text
    assert isinstance(json.loads(summary.read_text())["flows"], int)


# ---------------------------------------------------------------- 19. what the CLI says

def test_the_summary_line_counts_packets_lost_to_faults(cli, write, tmp_path):
    sc = write("lossy.toml", TINY + '\n[faults]\nloss_rate = 0.01\n')
    code, text = cli("run", sc, "--out", tmp_path / "r")
    assert code == 0, text
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["fault_drops"] > 0
    # the line may wrap at the terminal's width
    assert f"{s['fault_drops']:,} packets lost to [faults]" in " ".join(text.split())


def test_an_empty_query_is_one_line(cli, tiny, tmp_path):
    assert cli("run", tiny, "--out", tmp_path / "r")[0] == 0
    code, text = cli("query", tmp_path / "r", "  ")
    assert code == 2 and _one_line(text).startswith("error: SQL: empty"), text


def test_the_docs_say_what_import_hpcc_does_with_faults():
    page = (Path(__file__).parents[1] / "docs" / "seed-simulators.md").read_text()
    assert "`ERROR_RATE_PER_LINK` and `LINK_DOWN` become `[faults]`" in page
