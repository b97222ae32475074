"""Command lines made from the CLI's own option table: for every command, each required
parameter left out, each one-value option given twice, each typed option given a value of the
wrong type or out of its range, an option without its value, a flag given a value, and unknown
options. Every one is a usage error: one line, exit code 2, no traceback. The table is read from
the command tree Typer builds, so a command or option added later is covered without being
listed here.

Run in-process through `hopsim.cli._main` (the command's own exit path, without the signal
handling of `main`, which would leave SIGINT ignored in the test process); a few cases run as
the installed command, end to end; and the lowest Typer and click the package allows are tried
in a subprocess.
"""

from __future__ import annotations

import enum
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, Iterator

import pytest
import typer.main

from hopsim import cli

COMMANDS = typer.main.get_command(cli.app).commands


def _kind(p: Any) -> str:
    """int, float, choice or text: from click's parameter type (older Typer) or from the
    annotation Typer keeps (recent Typer's own parameters)."""
    t = getattr(p, "type", None)
    if t is not None:
        name = type(t).__name__
        return "choice" if getattr(t, "choices", None) else "int" if "Int" in name else "float" if "Float" in name else "text"
    ann = p.type_descriptor.annotation
    args = [a for a in typing.get_args(ann) if a is not type(None)]
    ann = args[0] if args and typing.get_origin(ann) is not list else ann
    return "int" if ann is int else "float" if ann is float else "choice" if isinstance(ann, type) and issubclass(ann, enum.Enum) else "text"


def _bound(p: Any, which: str) -> Any:
    v = getattr(p, which, None)
    return v if v is not None else getattr(getattr(p, "type", None), which, None)


def _good_value(p: Any) -> str:
    """A value the parser takes for `p` (the command itself may refuse it later: parsing is
    what is tried here, and every case below fails before the command runs)."""
    kind = _kind(p)
    if kind == "choice":
        t = getattr(p, "type", None)
        return str(list(t.choices)[0]) if t is not None else str(list(p.type_descriptor.annotation)[0].value)
    if kind == "int":
        return str(max(_bound(p, "min") or 1, 1))
    if kind == "float":
        return "0.5"
    return "x"


def _required(cmd: Any) -> list[str]:
    """The shortest command line the parser takes: each required parameter with a good value."""
    out: list[str] = []
    for p in cmd.params:
        if p.param_type_name == "argument":
            out.append(_good_value(p))
        elif p.required:
            out += [p.opts[0], _good_value(p)]
    return out


def _bad_values(p: Any) -> list[str]:
    kind = _kind(p)
    if kind == "choice":
        return ["no-such-choice"]
    bad = []
    if kind == "int":
        bad += ["abc", "", "1.5", "99999999999999999999999"]
    if kind == "float":
        bad += ["abc", "", "nan"]
    for bound, step in (("min", -1), ("max", 1)):
        v = _bound(p, bound)
        if v is not None:
            bad.append(str(v + step))
    return bad


def cases() -> Iterator[tuple[str, list[str]]]:
    for name, cmd in sorted(COMMANDS.items()):
        base = [name, *_required(cmd)]
        params = [p for p in cmd.params if p.param_type_name in ("argument", "option")]
        for p in params:
            if p.required or p.param_type_name == "argument":
                rest = _required(cmd)
                if p.param_type_name == "argument":
                    args = [a for a in cmd.params if a.param_type_name == "argument"]
                    rest = [v for a in args if a is not p for v in [_good_value(a)]] + \
                           [v for o in cmd.params if o.param_type_name == "option" and o.required
                            for v in (o.opts[0], _good_value(o))]
                    yield f"{name}: no {p.name}", [name, *rest]
                else:
                    i = rest.index(p.opts[0])
                    yield f"{name}: no {p.opts[0]}", [name, *rest[:i], *rest[i + 2:]]
            if p.param_type_name != "option":
                continue
            opt = p.opts[0]
            extra = [] if p.required else ([opt] if p.is_flag else [opt, _good_value(p)])
            if not p.multiple:
                once = [opt] if p.is_flag else [opt, _good_value(p)]
                yield f"{name}: {opt} twice", [*base, *extra, *once]
                if len(p.opts) > 1:  # the long and the short name of one option
                    yield f"{name}: {opt} and {p.opts[1]}", [*base, *extra, p.opts[1], *once[1:]]
            if p.is_flag:
                yield f"{name}: {opt}=value", [*base, f"{opt}=yes"]
            else:
                yield f"{name}: {opt} without a value", [*base, opt]
                for v in _bad_values(p):
                    yield f"{name}: {opt} {v!r}", [*base, opt, v]
            if opt.startswith("--") and len(opt) > 4:
                yield f"{name}: {opt[:-1]} (misspelt)", [*base, opt[:-1], "1"]
        yield f"{name}: unknown option", [*base, "--no-such-option"]
        yield f"{name}: unknown short option", [*base, "-Z"]
    yield "unknown command", ["nosuchcmd"]
    yield "unknown top-level option", ["--no-such-option"]


CASES = list(cases())


def call(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, str]:
    monkeypatch.setattr(sys, "argv", ["hopsim", *args])
    capsys.readouterr()
    code = cli._main()
    return code or 0, capsys.readouterr().err


def test_the_table_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    """The generator sees every command and their typed options (so it cannot pass by seeing none)."""
    assert {"run", "sweep", "query", "report", "import-hpcc", "export-fct", "compare-fct"} <= set(COMMANDS)
    names = {c[0] for c in CASES}
    for expect in ("run: no --out", "run: --threads '0'", "run: --out twice", "sweep: --jobs '0'",
                   "compare-fct: --tol 'abc'", "query: --format without a value", "export-bfc: --incast-packets '0'"):
        assert expect in names, expect
    assert len(CASES) > 200


@pytest.mark.parametrize("args", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_usage_error_is_one_line(args: list[str], capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written; if it were, it would be here
    code, err = call(args, capsys, monkeypatch)
    lines = [l for l in err.splitlines() if l.strip()]
    assert code == 2, (args, code, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, err)
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == [], (args, list(tmp_path.iterdir()))


def hopsim(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hopsim", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


END_TO_END = [
    ["run", "s.toml"],
    ["run", "s.toml", "--out", "r", "--threads", "99999999999999999999"],
    ["run", "s.toml", "--out", "r", "--thread", "2"],
    ["query", "d", "--"],
    ["compare-fct", "a", "b", "--tol", "-1"],
    ["nosuchcmd"],
]


@pytest.mark.parametrize("args", END_TO_END, ids=[" ".join(a) for a in END_TO_END])
def test_usage_error_end_to_end(args: list[str], tmp_path: Path) -> None:
    """As a user runs it: the process's exit status and everything it printed."""
    r = subprocess.run([sys.executable, "-m", "hopsim", *args], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), (r.returncode, r.stderr)
    assert r.stdout == ""


LOWEST = {"typer": "0.12.0", "typer-slim": "0.12.0", "click": "8.1.0"}
"""The oldest versions pyproject.toml allows (typer 0.12.0 is a shell around typer-slim)."""


def test_lowest_typer_and_click(tmp_path: Path) -> None:
    """The lowest Typer and click of the range pyproject.toml pins, installed beside the package
    and put first on the path: usage errors are one line and exit 2 there too (older Typer raises
    click's own exceptions, recent Typer its own copies). The highest allowed are what the rest of
    the suite runs with."""
    import re
    import tomllib

    deps = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["dependencies"]
    for pkg in ("typer", "click"):
        spec = next(d for d in deps if re.match(rf"{pkg}\b", d))
        assert re.search(r">=\s*" + re.escape(".".join(LOWEST[pkg].split(".")[:2])), spec) and "<" in spec, spec
    target = tmp_path / "lowest"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                        *(f"{k}=={v}" for k, v in LOWEST.items())], capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        pytest.skip(f"cannot install the lowest Typer here (no package index?): {r.stderr.strip()[-200:]}")
    env = {"PYTHONPATH": os.pathsep.join([str(target), *sys.path])}
    probe = hopsim("version", env=env)
    assert probe.returncode == 0, probe.stderr
    versions = subprocess.run([sys.executable, "-c", "import typer, click; print(typer.__version__, click.__version__)"],
                              capture_output=True, text=True, env={**os.environ, **env}).stdout.split()
    assert versions == [LOWEST["typer"], LOWEST["click"]]
    for args in END_TO_END + [["run", "s.toml", "--out", "a", "--out", "b"], ["export-bfc", "r", "--incast-packets", "0"]]:
        r = hopsim(*args, env=env)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), (args, r.stderr)


# ------------------------------------------------------------------- output paths, every writer

def _digest(root: Path) -> dict[str, str]:
    """Every file and folder under `root`, with a hash of each file's bytes and each entry's kind."""
    import hashlib

    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "link " + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder (made by `hopsim run`), a sweep folder, a user's folder with a file of theirs,
    and the inputs of each writing command."""
    from conftest import TINY

    d = tmp_path_factory.mktemp("world")
    work = d / "work"
    (work / "cwd").mkdir(parents=True)
    (work / "cwd" / "s.toml").write_text(TINY)
    (work / "cwd" / "precious.txt").write_text("keep\n")
    (work / "sweep.toml").write_text('base = "cwd/s.toml"\nseeds = [1]\n')
    r = hopsim_in(work / "cwd", "run", "s.toml", "--out", "../run", "--threads", "1")
    assert r.returncode == 0, r.stderr
    sweep = work / "sweep"
    sweep.mkdir()
    (sweep / "sweep.json").write_text('{"sweep": "elsewhere.toml"}\n')  # a folder hopsim's sweep wrote
    (work / "config.txt").write_text((Path(__file__).parent / "data" / "hpcc" / "config.txt").read_text())
    return work


def hopsim_in(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hopsim", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


WRITERS: dict[str, tuple[list[str], str, str, bool]] = {
    # command: (arguments before the output option, the output option, the input it names, has --force)
    "run": (["s.toml"], "--out", "s.toml", True),
    "validate": (["s.toml"], "--core-json", "s.toml", True),
    "sweep": (["../sweep.toml"], "--out", "../sweep.toml", False),
    "reproduce": (["ppfc", "--quick"], "--out", "", False),
    "report": (["../run"], "--out", "../run", True),
    "import-hpcc": (["../config.txt"], "--out", "../config.txt", True),
    "import-floodgate": (["../config.txt", "--flows", "precious.txt"], "--out", "precious.txt", True),
    "import-bfc": (["../config.txt"], "--out", "../config.txt", True),
    "export-floodgate": (["../run"], "--out", "../run/flows.parquet", True),
    "export-bfc": (["../run"], "--out", "../run/summary.json", True),
    "export-fct": (["../run"], "--out", "../run/flows.parquet", True),
    "export-hpcc": (["../run"], "--out", "../run", True),
    "compare-fct": (["../run", "../run"], "--json", "../run/summary.json", True),
    "init": (["small-incast-star"], "--out", "", False),
}
"""Every command that writes, with how to call it. `test_every_writer_is_listed` keeps this
complete: a command with an output option that is not here fails it."""

TARGETS = {
    "its input": lambda w, inp: inp,
    "a run folder": lambda w, inp: "../run",
    "a file in a run folder": lambda w, inp: "../run/summary.json",
    "a sweep folder": lambda w, inp: "../sweep",
    "a file in a sweep folder": lambda w, inp: "../sweep/sweep.json",
    "the working folder": lambda w, inp: ".",
    "its parent": lambda w, inp: "..",
    "an existing file": lambda w, inp: "precious.txt",
    "a device": lambda w, inp: "/dev/null",
}


def test_every_writer_is_listed() -> None:
    outputs = {"--out", "--json", "--plot", "--core-json"}
    writing = {name for name, cmd in COMMANDS.items() if any(set(getattr(p, "opts", [])) & outputs for p in cmd.params)}
    assert writing == set(WRITERS), writing ^ set(WRITERS)


OUTPUT_CASES = [(cmd, target, force) for cmd in WRITERS for target in TARGETS for force in (False, True)
                if target != "its input" or WRITERS[cmd][2]
                if not force or (WRITERS[cmd][3] and target != "an existing file")
                if (cmd, target, force) != ("run", "a run folder", True)]  # the one replacement allowed (below)


@pytest.mark.parametrize("cmd,target,force", OUTPUT_CASES,
                         ids=[f"{c}-{t}{'-force' if f else ''}" for c, t, f in OUTPUT_CASES])
def test_no_command_overwrites_what_it_did_not_write(world: Path, cmd: str, target: str, force: bool,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Aimed at an input, a run or sweep folder or a file in one, the working folder or its
    parent, a file of the user's or a device, every writing command refuses (one line, exit 2)
    and every file stays as it was, with --force too (it replaces only what hopsim wrote)."""
    before = _digest(world)
    args, opt, inp, _ = WRITERS[cmd]
    out = TARGETS[target](world, inp)
    if cmd == "export-hpcc" and target in ("the working folder", "its parent"):
        pytest.skip("export-hpcc writes its files into a folder that exists: each file is checked (below)")
    monkeypatch.chdir(world / "cwd")
    code, err = call([cmd, *args, opt, out, *(["--force"] if force else [])], capsys, monkeypatch)
    after = _digest(world)
    assert {k: after.get(k) for k in before} == before  # nothing there before is changed or gone
    if cmd == "export-hpcc" and target in ("its input", "a run folder"):
        # its default: fct.txt, pfc.txt and qlen.txt beside the run's tables, nothing of the run's replaced
        assert code == 0 and set(after) - set(before) <= {"run/fct.txt", "run/pfc.txt", "run/qlen.txt"}, err
        return
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith("note:")]
    assert code == 2, (cmd, out, code, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert after == before
    assert Path("/dev/null").is_char_device()


def test_export_hpcc_into_a_folder_keeps_the_files_there(world: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """export-hpcc writes fct.txt, pfc.txt and qlen.txt into --out: a user's fct.txt there stays
    unless --force, and nothing of a run folder is replaced by them."""
    d = world / "cwd" / "exports"
    d.mkdir(exist_ok=True)
    (d / "fct.txt").write_text("mine\n")
    monkeypatch.chdir(world / "cwd")
    code, err = call(["export-hpcc", "../run", "--out", "exports"], capsys, monkeypatch)
    assert code == 2 and "already exists" in err and (d / "fct.txt").read_text() == "mine\n", err
    assert sorted(p.name for p in d.iterdir()) == ["fct.txt"]
    code, err = call(["export-hpcc", "../run", "--out", "exports", "--force"], capsys, monkeypatch)
    assert code == 0, err
    assert (d / "fct.txt").read_text() != "mine\n"


def test_run_force_replaces_a_run_folder_it_wrote_and_an_old_one(world: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """--force replaces a run folder: one with hopsim's marker, and one written before the marker
    (known by its summary.json)."""
    monkeypatch.chdir(world / "cwd")
    assert call(["run", "s.toml", "--out", "mine", "--threads", "1"], capsys, monkeypatch)[0] == 0
    assert (Path("mine") / ".hopsim.json").is_file()
    assert call(["run", "s.toml", "--out", "mine", "--threads", "1", "--force"], capsys, monkeypatch)[0] == 0
    (Path("mine") / ".hopsim.json").unlink()  # as an older hopsim left it
    code, err = call(["run", "s.toml", "--out", "mine", "--threads", "1", "--force"], capsys, monkeypatch)
    assert code == 0, err
    import shutil

    shutil.rmtree("mine")


def test_a_loop_of_links_before_dotdot_is_the_kernels_error(world: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`--out la/../r2` with `la` a loop of links: the kernel cannot walk past `la`, so neither
    does hopsim (it once wrote ./r2, taking `..` as text)."""
    monkeypatch.chdir(tmp_path)
    Path("la").symlink_to("la")
    Path("s.toml").write_text((world / "cwd" / "s.toml").read_text())
    code, err = call(["run", "s.toml", "--out", "la/../r2"], capsys, monkeypatch)
    assert code == 2 and "--out la/../r2" in err and "symbolic links" in err, err
    assert not Path("r2").exists()


def test_run_force_keeps_a_run_folder_holding_a_users_file(world: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the user put into a run folder is not hopsim's to delete: --force refuses the folder."""
    monkeypatch.chdir(world / "cwd")
    assert call(["run", "s.toml", "--out", "theirs", "--threads", "1"], capsys, monkeypatch)[0] == 0
    Path("theirs/notes.txt").write_text("mine\n")
    code, err = call(["run", "s.toml", "--out", "theirs", "--threads", "1", "--force"], capsys, monkeypatch)
    assert code == 2 and "notes.txt, which hopsim did not write" in err, err
    assert Path("theirs/notes.txt").read_text() == "mine\n"
    import shutil

    shutil.rmtree("theirs")
