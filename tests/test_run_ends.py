"""Runs that always end (issue 9): a PFC deadlock is found and named, a stall is reported,
Ctrl-C and SIGTERM stop `hopsim run` and `hopsim sweep` within a second with exit code 130 and
nothing half-written, and progress is reported while a run goes on."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import psutil
import pytest
from rich.console import Console

from hopsim import _native
from hopsim.progress import RunProgress, describe, fraction
from hopsim.scenario.model import load_scenario

from conftest import TINY

RING, PER = 4, 5


def ring_toml(buffer: str = "2MB", extra: str = "") -> str:
    """Four switches in a ring, five hosts on each, and 40 flows two hops around the ring both
    ways (the core's `tests/it/watchdog.rs` builds the same network)."""
    links = [f'{{a = {i}, b = {(i + 1) % RING}, rate = "100Gbps"}}' for i in range(RING)]
    host = lambda s, k: RING + s * PER + k  # noqa: E731
    links += [f'{{a = {host(s, k)}, b = {s}, rate = "100Gbps"}}' for s in range(RING) for k in range(PER)]
    flows = [f'{{src = {host(s, k)}, dst = {host((s + 2) % RING, (k + j) % PER)}, size = "4MB"}}'
             for s in range(RING) for k in range(PER) for j in range(2)]
    return f"""name = "ring"
{extra}
[topology]
kind = "explicit"
nodes = {RING + RING * PER}
switches = [0, 1, 2, 3]
links = [{", ".join(links)}]
[workload]
kind = "flows"
flows = [{", ".join(flows)}]
[buffer]
size = "{buffer}"
"""


def test_ring_deadlock_is_reported_with_its_ports(cli, write, tmp_path):
    sc = write("ring.toml", ring_toml())
    code, text = cli("run", sc, "--out", tmp_path / "r")
    assert code == 0, text
    assert "PFC deadlock" in text and "(node " in text
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["stopped"] == "deadlock"
    assert s["flows_finished"] < s["flows"] == 40
    cycle = s["deadlock_cycle"]
    assert len(cycle) >= 2 and all(node < RING for node, _ in cycle)
    assert s["wall_time_s"] < 1.0


def test_a_ring_with_room_is_done(cli, write, tmp_path):
    code, text = cli("run", write("ring.toml", ring_toml(buffer="400MB")), "--out", tmp_path / "r")
    assert code == 0, text
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["stopped"] == "done" and s["flows_finished"] == 40
    assert "stop_message" not in s


def test_stall_timeout_off_runs_to_the_duration(cli, write, tmp_path):
    sc = write("ring.toml", ring_toml(extra='duration = "20ms"\nstall_timeout = "off"'))
    code, text = cli("run", sc, "--out", tmp_path / "r")
    assert code == 0, text
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["stopped"] == "duration"


def test_a_short_stall_timeout_is_honoured(write):
    sc = load_scenario(write("ring.toml", ring_toml(extra='stall_timeout = "200ms"')))
    assert sc.core["net"]["stall_timeout"] == 200_000_000_000
    from hopsim.run import run
    s = run(sc).summary
    assert s["stopped"] == "deadlock"
    # the default (about 10 ms) stops the same run much earlier
    assert s["end_time_ns"] >= 200e6 > 5 * run(load_scenario(write("ring2.toml", ring_toml()))).summary["end_time_ns"]


def test_default_stall_timeout_keeps_the_scenario_hash(write):
    a = load_scenario(write("a.toml", ring_toml()))
    b = load_scenario(write("b.toml", ring_toml(extra='stall_timeout = "auto"')))
    assert "stall_timeout" not in a.core["net"] and a.hash == b.hash


# long enough that no machine finishes it before the tests interrupt it (1 s of it took 2.7 s
# on a 2-core machine, so a 3-run sweep of it could end before its Ctrl-C)
LONG = """
name = "long"
duration = "30s"
[topology]
kind = "star"
hosts = 4
rate = "100Gbps"
delay = "1us"
[workload]
kind = "long_lived"
pairs = [[0, 3], [1, 3], [2, 3]]
[record]
buffer_interval = "off"
"""


def handles(pid: int, sig: int) -> bool:
    """Whether process `pid` has a handler for `sig` installed (its /proc status's SigCgt)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


def wait_for(cond, what: str, timeout: float = 120.0, p: subprocess.Popen | None = None) -> None:
    """Poll `cond()` until it holds (a generous `timeout` guards against a hang, not a slow machine)."""
    t0 = time.monotonic()
    while not cond():
        if p is not None and p.poll() is not None:
            raise AssertionError(f"ended before {what}: {p.communicate()}")
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _interrupt(args: list[str], after: float, sig: int = signal.SIGINT,
               ready: Callable[[subprocess.Popen], bool] | None = None, env: dict | None = None) -> tuple[int, float, str]:
    """Start the CLI, send `sig` once it handles signals and `ready(p)` holds, plus `after`
    seconds; (exit code, seconds it took to exit, stderr). Waiting for the handler (not for a
    fixed time) keeps the test right on a loaded machine, where start-up can take seconds.
    The CLI starts with SIGINT at its default, as from a terminal: a test runner started in the
    background (`cmd &` in a script) ignores SIGINT, its children inherit that, and Python then
    installs no KeyboardInterrupt handler, so the Ctrl-C under test would never arrive."""
    p = subprocess.Popen([sys.executable, "-m", "hopsim.cli", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_for(lambda: handles(p.pid, signal.SIGTERM) and (ready is None or ready(p)), "the CLI to start", p=p)
    time.sleep(after)
    assert p.poll() is None, p.communicate()
    t0 = time.perf_counter()
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    return p.returncode, time.perf_counter() - t0, err


@pytest.mark.parametrize("after", [0.0, 0.3, 2.0])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_a_run_and_writes_nothing(write, tmp_path, sig, after):
    """At any moment once the process runs Python (start-up, loading, running): exit 130, one
    line, nothing written. The bound on the time is generous on purpose: that the core sees the
    signal within a checkpoint is `test_the_core_stops_within_a_checkpoint_of_an_interrupt`."""
    sc = write("long.toml", LONG)
    code, took, err = _interrupt(["run", str(sc), "--out", str(tmp_path / "r")], after, sig)
    assert code == 130, err
    assert took < 30.0
    assert "nothing written" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == [sc]


def test_the_core_stops_within_a_checkpoint_of_an_interrupt(write):
    """The mechanism behind "Ctrl-C within a second", counted in events rather than timed: a
    signal handler that raises while the core runs (here from the progress callback, which runs
    where the core polls for signals) stops the run at that checkpoint, so the run ends within
    `CHECK_EVERY` events of the signal, however loaded the machine."""
    sc = load_scenario(write("long.toml", LONG))
    seen = []

    def on_progress(p):
        seen.append(p["events"])
        raise KeyboardInterrupt  # what Ctrl-C's handler raises, here where the core polls

    out = _native.run(sc.core_json, on_progress, 0.0)
    assert out["stop"]["reason"] == "interrupted"
    assert len(seen) == 1
    assert out["counters"]["events"] - seen[0] <= 1 << 14


def test_keep_partial_writes_a_folder_marked_partial(write, tmp_path):
    sc = write("long.toml", LONG)
    spool = tmp_path / "tmp"
    spool.mkdir()
    # signalled once the run's spool exists (the core is about to run), not after a fixed time
    code, _, err = _interrupt(["run", str(sc), "--out", str(tmp_path / "r"), "--keep-partial"], 2.0,
                              ready=lambda p: any(spool.glob("hopsim-spool-*")), env={"TMPDIR": str(spool)})
    assert code == 130, err
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["partial"] is True and s["stopped"] == "interrupted"
    assert 0 < s["end_time_ns"] < 30e9


def test_ctrl_c_stops_a_sweep_and_its_workers(write, tmp_path):
    write("long.toml", LONG)
    sw = write("sweep.toml", 'base = "long.toml"\nseeds = [1, 2, 3]\n')
    code, took, err = _interrupt(["sweep", str(sw), "--out", str(tmp_path / "s"), "--jobs", "2"], 0.0,
                                 ready=lambda p: len(psutil.Process(p.pid).children()) >= 2)
    assert code == 130, err
    assert took < 30.0
    assert "interrupted" in err
    # nothing complete, nothing half-written: no run completed, so not even the folder is left
    assert not (tmp_path / "s").exists()


def test_progress_reaches_python_and_is_described(write):
    sc = load_scenario(write("long.toml", LONG.replace('"30s"', '"20ms"')))
    seen = []
    out = _native.run(sc.core_json, seen.append, 0.0)
    assert out["stop"]["reason"] == "duration"
    assert seen, "no progress reported"
    p = seen[-1]
    assert set(p) == {"now_ns", "end_ns", "last_start_ns", "events", "flows", "flows_started", "flows_done", "wall_s"}
    assert p["end_ns"] == 20e6 and 0 < p["now_ns"] <= 20e6 and p["flows"] == 3
    assert [q["events"] for q in seen] == sorted(q["events"] for q in seen)
    assert 0 < fraction(p) <= 1
    line = describe(p)
    assert "sim " in line and "/ 20 ms" in line and "M events/s" in line and "left" in line


def test_an_exception_in_the_progress_callback_stops_the_run(write):
    sc = load_scenario(write("long.toml", LONG))

    def boom(p):
        raise RuntimeError("callback failed")

    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="callback failed"):
        _native.run(sc.core_json, boom, 0.0)
    assert time.perf_counter() - t0 < 1.0


def test_piped_progress_prints_plain_lines():
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=False, width=200)
    p = {"now_ns": 5e6, "end_ns": 10e6, "last_start_ns": 0.0, "events": 1_000_000, "flows": 4,
         "flows_started": 4, "flows_done": 1, "wall_s": 2.0}
    with RunProgress(con, "x", plain_every=0.0) as prog:
        assert not prog.live
        prog.update(p)
    assert "x: sim 5 ms / 10 ms, flows 1/4 finished, 0.5 M events/s, 50%, about 0:00:02 left" in buf.getvalue()


def test_progress_counts_the_earlier_of_stop_time_and_last_flow():
    # the imported standard benchmark: stop time 200 ms, flows nearly all finished at 11 ms
    p = {"now_ns": 11e6, "end_ns": 200e6, "last_start_ns": 10e6, "events": 1, "flows": 6706,
         "flows_started": 6706, "flows_done": 6639, "wall_s": 20.0}
    assert fraction(p) == pytest.approx(6639 / 6706)
    assert "about 0:00:00 left" in describe(p)
    # long-lived flows that never finish: the stop time tells
    q = dict(p, flows_done=0, flows=3, now_ns=50e6)
    assert fraction(q) == pytest.approx(0.25)


def test_an_incast_at_1e7_seconds_runs_through_the_cli(cli, write, tmp_path):
    # the sampler sleeps through the idle stretch before the flows start; the disk and memory
    # guards must count it so (they once estimated 1e12 samples and refused the run)
    late = write("late.toml", TINY.replace('at = "1us"', 'at = "10000000s"'))
    code, msg = cli("run", late, "--out", tmp_path / "late")
    assert code == 0, msg
    summary = json.loads((tmp_path / "late" / "summary.json").read_text())
    assert summary["flows_finished"] == 4 and summary["end_time_ns"] > 1e16
