"""Sweeps on a real Dask cluster: a scheduler and two workers started as separate processes with
the `dask` command line, talking TCP, the sweep given the scheduler's address as `hopsim sweep
--cluster` gives it. One worker is killed while it runs a point; the sweep still completes, with
result files identical to the local process pool's.

Bounded: every wait has a deadline (about 60 s in all on a slow machine), ports are chosen by the
scheduler itself (port 0, read back from its scheduler file), and every process started here is
killed in a `finally`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import hopsim
from hopsim import sweep
from test_sweep import _tables

distributed = pytest.importorskip("distributed")

DEADLINE_S = 45  # for the cluster sweep; startup and the local sweep come on top

# An 8-to-1 incast of 100 MB flows: about half a second of work per point, so that points are
# still running when the first one comes back.
BASE = """
name = "cluster"
seed = 1
[topology]
kind = "star"
hosts = 9
[workload]
kind = "incast"
bursts = 1
[workload.incast]
degree = 8
flow_size = "100MB"
at = "1us"
dst = 0
[buffer]
size = "2MB"
[transport]
window = "off"
[record]
buffer_interval = "50us"
"""


def _dask(*args: str, log: Path) -> subprocess.Popen:
    # the workers import the same hopsim as this test (the package under test, not an installed one)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(hopsim.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            env=env, process_group=0)


def _wait(cond, timeout: float, what: str, procs: list[subprocess.Popen]):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        dead = [p.args for p in procs if p.poll() is not None]
        if dead:
            pytest.fail(f"{what}: a dask process exited early: {dead}")
        time.sleep(0.1)
    pytest.fail(f"{what}: not within {timeout} s")


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # its own process group: the process and anything it started
            except ProcessLookupError:
                pass
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass


def test_sweep_on_a_dask_cluster_survives_a_killed_worker(write, tmp_path):
    write("base.toml", BASE)
    sweep_file = write("sweep.toml", 'base = "base.toml"\nseeds = [1, 2, 3]\n[grid]\n'
                                     '"flow_control.scheme" = ["pfc", "ppfc", "capfc"]\n')
    local = tmp_path / "local"
    assert len(sweep.run_sweep(sweep_file, local, jobs=2).ran) == 9

    logs = tmp_path / "logs"
    logs.mkdir()
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    client = None
    try:
        procs.append(_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                           "--scheduler-file", str(sched_file), log=logs / "scheduler.log"))

        def scheduler_address() -> str | None:
            try:
                return json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):  # not written yet, or half written
                return None

        address = _wait(scheduler_address, 30, "the scheduler's address", procs)
        assert address.startswith("tcp://127.0.0.1:")
        workers = {}
        for name in ("w0", "w1"):
            workers[name] = _dask("worker", address, "--name", name, "--nthreads", "1", "--no-nanny",
                                  "--no-dashboard", "--host", "127.0.0.1", log=logs / f"{name}.log")
            procs.append(workers[name])

        client = distributed.Client(address, timeout="20s")
        client.wait_for_workers(2, timeout=30)

        def names_by_address() -> dict[str, str]:
            return {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}

        killed: list[str] = []

        def kill_a_busy_worker(run_id: str) -> None:
            """At the first finished run: SIGKILL a worker that is running a point right now."""
            if killed:
                return
            busy = _wait(lambda: [a for a, keys in client.processing().items() if keys], 10, "a busy worker", [])
            name = names_by_address()[busy[0]]
            os.killpg(workers[name].pid, signal.SIGKILL)
            killed.append(name)

        out = tmp_path / "dask"
        result: dict[str, object] = {}

        def go() -> None:
            try:
                result["report"] = sweep.run_sweep(sweep_file, out, cluster=address, on_done=kill_a_busy_worker)
            except BaseException as e:  # reported below
                result["error"] = e

        t = threading.Thread(target=go, daemon=True)
        t.start()
        t.join(DEADLINE_S)
        assert not t.is_alive(), f"the sweep did not finish within {DEADLINE_S} s; logs in {logs}"
        assert "error" not in result, result.get("error")
        rep = result["report"]
        assert len(rep.ran) == 9 and not rep.skipped
        assert len(killed) == 1 and workers[killed[0]].wait(timeout=10) == -signal.SIGKILL
        assert len(client.scheduler_info()["workers"]) == 1
    finally:
        if client is not None:
            client.close()
        _stop(procs)

    a, b = _tables(local), _tables(out)
    assert a.keys() == b.keys() and len(a) == 9
    for run in a:
        for table in a[run]:
            assert a[run][table] == b[run][table], (run, table)
