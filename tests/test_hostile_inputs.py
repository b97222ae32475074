"""Hostile inputs, made by generation rather than listed by hand (issue 29): every kind of bad
path in every place a command takes one, signals at random moments of start-up and shut-down,
damaged run folders, and a full disk. The rule each must keep: bad input ends with one line
naming what is wrong, exit code 2, no traceback and nothing left behind; a signal ends with exit
code 130 (or the run complete) and nothing half-written.

How a full disk is made: a tmpfs cannot be mounted without privileges, so the command runs in a
subprocess whose RLIMIT_FSIZE is small (SIGXFSZ ignored, so a write past it fails with EFBIG as
a write to a full disk fails with ENOSPC), and in-process with the writes monkeypatched to raise
ENOSPC itself.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TINY
from test_run_ends import LONG, handles, wait_for

SMALL_SWEEP = 'base = "tiny.toml"\nseeds = [1, 2]\n'
HPCC_CONFIG = Path(__file__).parent / "data" / "hpcc" / "config.txt"


def hopsim(*args: object, cwd: Path | None = None, env: dict | None = None, preexec=None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **(env or {})}, preexec_fn=preexec, timeout=timeout)


def listing(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")} if d.is_dir() else set()


def assert_clean_error(r: subprocess.CompletedProcess, what: str = "") -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert what in lines[0], (what, lines[0])


# ------------------------------------------------------------------------------- bad paths

def _bad_paths(d: Path) -> dict[str, Path]:
    """Every kind of path the file system can refuse or that is not what it should be."""
    (d / "loop-a").symlink_to(d / "loop-b")
    (d / "loop-b").symlink_to(d / "loop-a")
    (d / "dangling").symlink_to(d / "nowhere")
    os.mkfifo(d / "fifo")
    (d / "folder").mkdir()
    (d / "afile").write_text("x\n")
    with open(d / "huge.toml", "wb") as f:  # sparse: costs no disk
        f.truncate(300 * 2**20)
    return {
        "loop": d / "loop-a", "inside a loop": d / "loop-a" / "x", "fifo": d / "fifo", "device": Path("/dev/zero"),
        "folder": d / "folder", "huge": d / "huge.toml", "dangling": d / "dangling", "under a file": d / "afile" / "x",
        "too long": d / ("n" * 300),
    }


INPUTS = {  # commands and where they read a path: {P} is the bad path
    "validate": ["validate", "{P}"],
    "run": ["run", "{P}", "--out", "{D}/r"],
    "sweep": ["sweep", "{P}", "--out", "{D}/s"],
    "import-hpcc": ["import-hpcc", "{P}", "--out", "{D}/i.toml"],
    "import-floodgate": ["import-floodgate", "{P}", "--out", "{D}/f.toml"],
    "export-floodgate": ["export-floodgate", "{P}", "--out", "{D}/fct.txt"],
    "import-bfc": ["import-bfc", "{P}", "--out", "{D}/b.toml"],
    "import-bfc-flows": ["import-bfc", "{B}", "--out", "{D}/b.toml", "--flows", "{P}"],
    "export-bfc": ["export-bfc", "{P}", "--out", "{D}/stdout.txt"],
    "query": ["query", "{P}", "select 1"],
    "report": ["report", "{P}", "--out", "{D}/rep.html"],
    "export-hpcc": ["export-hpcc", "{P}", "--out", "{D}/e"],
    "compare-fct": ["compare-fct", "{P}", "{P}"],
}
OUTPUTS = {  # commands and where they write a path
    "run": ["run", "{S}", "--out", "{P}"],
    "sweep": ["sweep", "{W}", "--out", "{P}"],
    "import-hpcc": ["import-hpcc", "{H}", "--out", "{P}"],
    "validate": ["validate", "{S}", "--core-json", "{P}"],
}
# (a FIFO stands for every special file here: a test run as root must never aim a write at a
# real device, which a rename would replace)
OUT_KINDS = ("loop", "inside a loop", "under a file", "too long", "fifo")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("hostile")
    paths = _bad_paths(d)
    (d / "tiny.toml").write_text(TINY.lstrip())
    (d / "sweep.toml").write_text(SMALL_SWEEP)
    (d / "bfc.txt").write_text("DATA_RATE 100Gbps\nLINK_DELAY 0.001ms\nAPP_STOP_TIME 1.001\nSIMULATOR_STOP_TIME 1.001\n")
    return {"dir": d, "paths": paths, "S": d / "tiny.toml", "W": d / "sweep.toml", "H": HPCC_CONFIG, "B": d / "bfc.txt"}


def _cases():
    kinds = ("loop", "inside a loop", "fifo", "device", "folder", "huge", "dangling", "under a file", "too long")
    for (cmd, argv), kind in itertools.product(INPUTS.items(), kinds):
        yield pytest.param("in", argv, kind, id=f"{cmd}-reads-{kind}")
    for (cmd, argv), kind in itertools.product(OUTPUTS.items(), OUT_KINDS):
        yield pytest.param("out", argv, kind, id=f"{cmd}-writes-{kind}")


@pytest.mark.parametrize("where, argv, kind", list(_cases()))
def test_every_bad_path_in_every_place_is_one_line_and_exit_2(hostile, tmp_path, where, argv, kind):
    bad = hostile["paths"][kind]
    subst = {"{P}": str(bad), "{D}": str(tmp_path), "{S}": str(hostile["S"]), "{W}": str(hostile["W"]),
             "{H}": str(hostile["H"]), "{B}": str(hostile["B"])}
    args = [subst.get(a, a) for a in argv]
    args = [a.replace("{D}", str(tmp_path)) for a in args]
    before = listing(hostile["dir"])
    r = hopsim(*args, cwd=tmp_path, env={"TMPDIR": str(tmp_path)}, timeout=120)
    assert_clean_error(r)
    assert listing(tmp_path) == set(), listing(tmp_path)  # nothing written, no spool left
    assert listing(hostile["dir"]) == before


# ------------------------------------------------------------------------------- signals

def _signal_at(args: list[str], delay: float, sig: int, tmp: Path) -> subprocess.CompletedProcess:
    """Start the command, send `sig` `delay` seconds after it began to handle signals (from its
    package's first line; before that the kernel's default ends it, which writes nothing)."""
    p = subprocess.Popen([sys.executable, "-m", "hopsim", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp, env={**os.environ, "TMPDIR": str(tmp / "tmp")},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_for(lambda: p.poll() is not None or handles(p.pid, signal.SIGTERM), "the command to start")
    except AssertionError:
        pass
    if p.poll() is None:
        if delay:
            import time

            time.sleep(delay)
        p.send_signal(sig)
    out, err = p.communicate(timeout=120)
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@pytest.mark.parametrize("trial", range(6))
def test_a_signal_at_a_random_moment_of_start_up_ends_cleanly(write, tmp_path, trial):
    rnd = random.Random(trial)
    sig = rnd.choice([signal.SIGINT, signal.SIGTERM])
    sc = write("long.toml", LONG)
    (tmp_path / "tmp").mkdir()
    r = _signal_at(["run", str(sc), "--out", str(tmp_path / "r")], rnd.uniform(0.0, 1.5), sig, tmp_path)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0] and "nothing written" in lines[0], r.stderr
    assert not (tmp_path / "r").exists()
    assert listing(tmp_path / "tmp") == set()  # the spool went with it


@pytest.mark.parametrize("where", ["hopsim.scenario.model.load_scenario", "hopsim.results.store.write_run"])
def test_an_interrupt_leaving_a_command_ends_with_its_line(write, tmp_path, monkeypatch, capfd, where):
    """A KeyboardInterrupt that no command catches (Typer turns one into a silent exit code 130)
    still ends as the one line and exit code 130, with nothing written: the window a signal at
    the end of a run falls into, made certain."""
    import importlib

    from hopsim import cli

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    module, name = where.rsplit(".", 1)
    monkeypatch.setattr(importlib.import_module(module), name, interrupted)
    monkeypatch.setattr(cli, "_said", False)
    monkeypatch.setattr(sys, "argv", ["hopsim", "run", str(write("tiny.toml", TINY)), "--out", str(tmp_path / "r"),
                                      "--threads", "1"])
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as e:
            cli.main()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    assert e.value.code == 130
    assert capfd.readouterr().err.strip().splitlines()[-1] == "interrupted; nothing written"
    assert not (tmp_path / "r").exists()


def test_an_interrupt_leaving_source_text_still_ends_with_exit_code_130(write, tmp_path):
    """A signal landing while code made from source text runs (a dataclass's generated methods,
    pydantic evaluating an annotation as a module loads): CPython notes the KeyboardInterrupt
    leaving it and, unless told otherwise, ends the process by SIGINT after the command has
    caught it, printed its line and chosen exit code 130. Made certain here by raising the
    interrupt from `exec`."""
    prog = (
        "import sys\n"
        "from hopsim import cli\n"
        "from hopsim.scenario import model as scenario\n"
        "def interrupted(*a, **k):\n"
        "    exec('raise KeyboardInterrupt')\n"
        "scenario.load_scenario = interrupted\n"
        f"sys.argv = ['hopsim', 'run', {str(write('tiny.toml', TINY))!r}, '--out', {str(tmp_path / 'r')!r}]\n"
        "cli.main()\n"
    )
    # as a module (`python -m`, as `python -m hopsim` runs): a program run from a file or `-c`
    # exits from inside its SystemExit and never consults that note
    (tmp_path / "interrupted_cli.py").write_text(prog)
    r = subprocess.run([sys.executable, "-m", "interrupted_cli"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert r.stderr.strip().splitlines() == ["interrupted; nothing written"], r.stderr
    assert not (tmp_path / "r").exists()


def test_an_interrupt_while_an_input_is_read_stays_an_interrupt_and_closes_the_file(tmp_path, monkeypatch):
    """A Ctrl-C landing while a scenario file is read is an interrupt, not "cannot read it" (bad
    input, exit code 2), and the file's descriptor is closed once."""
    from hopsim.scenario import paths

    f = tmp_path / "s.toml"
    f.write_text(TINY)
    fds = set(os.listdir("/proc/self/fd"))
    real_read, real_close, closed = os.read, os.close, []

    def interrupted(fd, n):
        raise KeyboardInterrupt

    def close(fd):
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(paths.os, "read", interrupted)
    monkeypatch.setattr(paths.os, "close", close)
    with pytest.raises(KeyboardInterrupt):
        paths.read_text(f, "scenario")
    monkeypatch.setattr(paths.os, "read", real_read)
    assert len(closed) == 1 and set(os.listdir("/proc/self/fd")) == fds
    assert paths.read_text(f, "scenario") == TINY


def test_a_signal_inside_a_serializer_is_an_interrupt_not_bad_input():
    """pydantic-core turns a KeyboardInterrupt raised inside a serializer function into a
    PydanticSerializationError, a ValueError that would read as bad input (exit code 2);
    `schema.dump` holds the signal until the dump is done and raises it then."""
    from typing import Annotated

    from pydantic import BaseModel, PlainSerializer
    from pydantic_core import PydanticSerializationError

    from hopsim import interrupts
    from hopsim.scenario.schema import dump

    def fmt(v: int) -> str:
        signal.raise_signal(signal.SIGTERM)  # a signal while the formatter runs
        return f"{v}B"

    class M(BaseModel):
        size: Annotated[int, PlainSerializer(fmt)] = 0

    old = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
    try:
        interrupts.install()
        with pytest.raises(PydanticSerializationError, match="KeyboardInterrupt"):
            M(size=1).model_dump()  # what happens without it
        with pytest.raises(KeyboardInterrupt):
            dump(M(size=1))
        interrupts.ignore()
        assert dump(M(size=2)) == {"size": "2B"}
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@pytest.mark.parametrize("trial", range(4))
def test_a_signal_around_the_end_of_a_run_leaves_it_whole_or_absent(write, tmp_path, trial):
    rnd = random.Random(100 + trial)
    sc = write("tiny.toml", TINY)
    (tmp_path / "tmp").mkdir()
    r = _signal_at(["run", str(sc), "--out", str(tmp_path / "r")], rnd.uniform(0.0, 3.0),
                   rnd.choice([signal.SIGINT, signal.SIGTERM]), tmp_path)
    assert "Traceback" not in r.stderr
    assert r.returncode in (0, 130), (r.returncode, r.stderr)
    if r.returncode == 0:
        assert (tmp_path / "r" / "summary.json").is_file()
    elif (tmp_path / "r").exists():  # the signal landed as the folder was put in place
        assert (tmp_path / "r" / "summary.json").is_file() and "the run folder was written" in r.stderr, r.stderr
    else:
        assert "nothing written" in r.stderr, r.stderr
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    assert listing(tmp_path / "tmp") == set()


# ------------------------------------------------------------------------------- damaged run folders

@pytest.fixture(scope="module")
def good_run(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("good")
    (d / "tiny.toml").write_text(TINY.lstrip())
    r = hopsim("run", d / "tiny.toml", "--out", d / "run")
    assert r.returncode == 0, r.stderr
    return d / "run"


def _damages():
    for key in ["flows", "flows_finished", "events", "slowdown_p99", "name", "stopped"]:
        wrong = [5, [1], True] if key in ("name", "stopped") else ["many", [1], True]  # of another type
        for value in wrong:
            yield pytest.param("summary.json", ("value", key, value), id=f"summary-{key}-{json.dumps(value)}")
    for name in ("summary.json", "flows.parquet", "pauses.parquet"):
        for how in ("fifo", "folder", "empty", "cut", "junk"):
            yield pytest.param(name, (how,), id=f"{name}-{how}")


def _damage(run: Path, name: str, how: tuple) -> None:
    f = run / name
    if how[0] == "value":
        s = json.loads(f.read_text())
        s[how[1]] = how[2]
        f.write_text(json.dumps(s))
        return
    data = f.read_bytes()
    f.unlink()
    if how[0] == "fifo":
        os.mkfifo(f)
    elif how[0] == "folder":
        f.mkdir()
    elif how[0] == "empty":
        f.write_bytes(b"")
    elif how[0] == "cut":
        f.write_bytes(data[: len(data) // 2])
    else:
        f.write_bytes(b"\x00junk\xff" * 50)


@pytest.mark.parametrize("name, how", list(_damages()))
def test_a_damaged_run_folder_is_named_by_query_and_report(good_run, tmp_path, name, how):
    root = tmp_path / "runs"
    shutil.copytree(good_run, root / "run")
    _damage(root / "run", name, how)
    for args in (["query", root, "select count(*) from flows"], ["report", root, "--out", tmp_path / "rep.html"]):
        r = hopsim(*args, timeout=120)
        if args[0] == "report" and name == "pauses.parquet" and r.returncode == 0:
            continue  # (the report draws no figure from the pauses table: it has no need to read it)
        assert_clean_error(r, str(root / "run"))
        assert not (tmp_path / "rep.html").exists()


# ------------------------------------------------------------------------------- a full disk

def _small_fsize(limit: int):
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return pre


@pytest.mark.parametrize("cmd", ["run", "sweep", "export-hpcc", "validate", "import-hpcc"])
def test_a_full_disk_is_one_line_and_leaves_nothing(good_run, tmp_path, cmd):
    d = tmp_path / "w"
    d.mkdir()
    (d / "tiny.toml").write_text(TINY.lstrip())
    (d / "sweep.toml").write_text(SMALL_SWEEP)
    shutil.copytree(good_run, d / "run")
    hpcc = HPCC_CONFIG
    args = {
        "run": ["run", d / "tiny.toml", "--out", d / "out"],
        "sweep": ["sweep", d / "sweep.toml", "--out", d / "out"],
        "export-hpcc": ["export-hpcc", d / "run", "--out", d / "out"],
        "validate": ["validate", d / "tiny.toml", "--core-json", d / "out" / "core.json"],
        "import-hpcc": ["import-hpcc", hpcc, "--out", d / "out" / "x.toml"],
    }[cmd]
    before = listing(d)
    r = hopsim(*args, env={"TMPDIR": str(tmp_path)}, preexec=_small_fsize(200), timeout=300)
    assert_clean_error(r)
    assert "File too large" in r.stderr or "No space" in r.stderr, r.stderr
    assert listing(d) == before, listing(d) - before
    assert not [p for p in tmp_path.glob("hopsim-spool-*")]


def test_enospc_while_a_sweep_writes_names_the_folder_and_leaves_nothing(cli, write, tmp_path, monkeypatch):
    from hopsim import sweep as sweep_mod

    write("tiny.toml", TINY)
    sw = write("sweep.toml", SMALL_SWEEP)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "s" / "x" / "flows.parquet"))

    monkeypatch.setattr(sweep_mod, "write_run", full)
    code, text = cli("sweep", sw, "--out", tmp_path / "s", "--jobs", "1")
    assert code == 2, text
    assert "--out" in text and "No space left on device" in text and "Traceback" not in text
    assert not (tmp_path / "s").exists()  # no folder, no sweep.json
