"""The one rule every output path of a command keeps, so that no command deletes or overwrites a
file it did not write.

- An output is never one of the command's inputs (compared as the kernel resolves both: links
  followed, ``..`` taken after the link before it, a hard link found by its inode), and a folder
  to be replaced never holds one.
- Nothing is written inside a run, sweep or reproduction folder except by the command whose own
  output that folder is (`Rule.own`), or a file a command writes there by design: the exports'
  default files beside a run's tables (`Rule.in_run`).
- A file or folder that exists is replaced only with ``--force`` (`Rule.force`), and a folder
  only when hopsim wrote it, as the command's kind of output (`Rule.replaces`): known by the
  marker file it writes into each (`MARKER`), or, in folders written before the marker, by the
  file that made them what they are (a run's summary.json, a sweep's sweep.json, a
  reproduction's paper.json).
- What stands at the path must be what hopsim writes there: a regular file, or a folder (never
  a device, a pipe or a link, which a rename would replace).

Each command states its rule once (`applying`); every writer asks `check_replaceable` before it
puts an output in place. Without a rule (the package used as a library) only the last point holds.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, Optional

from ..errors import ScenarioError

MARKER = ".hopsim.json"
"""The file hopsim writes into each run, sweep and reproduction folder: ``{"kind": ...}``."""

LEGACY = {"summary.json": "run", "sweep.json": "sweep", "paper.json": "reproduction", ".hopsim-lock": "sweep"}
"""(``.hopsim-lock``: the lock a sweep takes on its folder first, before it writes anything else.)"""
LEGACY_BY_KIND = {kind: name for name, kind in LEGACY.items()}
"""What marks a folder hopsim wrote before it wrote `MARKER`, and the kind it makes it."""

KIND_NAMES = {"run": "a run folder", "sweep": "a sweep folder", "reproduction": "a reproduction folder",
              "reproductions": "a folder of reproductions"}

MAX_LINKS = 40
"""The links the kernel follows in one path before it says ELOOP (Linux's MAXSYMLINKS)."""


def real_path(path: Path | str) -> Path:
    """The path the kernel would reach: each component in turn, a link replaced by its target
    before the next component is read, so ``la/../r2`` is the parent of what `la` points at (and
    an error when `la` is a loop of links), not ``./r2`` as text would have it. A component that
    does not exist, or is not a folder, ends the walk: the rest is taken as text. OSError (ELOOP)
    as the kernel would raise it, naming the path given."""
    try:
        return _walk(os.fspath(path), Path.cwd(), [0])
    except OSError as e:
        raise OSError(e.errno, e.strerror, os.fspath(path)) from None


def _walk(text: str, cur: Path, links: list[int]) -> Path:
    if text.startswith("/"):
        cur = Path("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    for i, part in enumerate(parts):
        if part == "..":
            cur = cur.parent
            continue
        nxt = cur / part
        try:
            mode = os.lstat(nxt).st_mode
        except FileNotFoundError:
            return Path(os.path.normpath(nxt.joinpath(*parts[i + 1:])))
        if stat.S_ISLNK(mode):
            links[0] += 1
            if links[0] > MAX_LINKS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(nxt))
            cur = _walk(os.readlink(nxt), cur, links)
        elif i < len(parts) - 1 and not stat.S_ISDIR(mode):  # a file where a folder should be: the writer says so
            return Path(os.path.normpath(nxt.joinpath(*parts[i + 1:])))
        else:
            cur = nxt
    return cur


def kind_of(folder: Path | str) -> Optional[str]:
    """Which of hopsim's folders `folder` is ("run", "sweep", "reproduction"), or None."""
    d = Path(folder)
    try:
        if not d.is_dir():
            return None
        marker = d / MARKER
        if marker.is_file() and marker.stat().st_size < 4096:
            with contextlib.suppress(ValueError, OSError):
                kind = json.loads(marker.read_text()).get("kind")
                if kind in KIND_NAMES:
                    return kind
        for name, kind in LEGACY.items():
            if (d / name).is_file():
                return kind
    except OSError:
        return None
    return None


RUN_FILES = {"scenario.toml", "scenario.json", "scenario.sha256", "params.json", "summary.json", MARKER,
             "fct.txt", "pfc.txt", "qlen.txt", "fct-floodgate.txt", "stdout-bfc.txt"}
"""What hopsim writes into a run folder besides its tables (``*.parquet``): the run's own files
and the exports' default files. `--force` replaces a run folder holding nothing else."""


def _written_in_run(name: str) -> bool:
    return name in RUN_FILES or name.endswith(".parquet")


def _legacy_all(d: Path, rule: Rule) -> bool:
    """`hopsim reproduce all`'s folder written before the marker: one holding a reproduction."""
    return "reproductions" in rule.resumes and any((c / LEGACY_BY_KIND["reproduction"]).is_file() for c in d.iterdir() if c.is_dir())


def mark(folder: Path | str, kind: str) -> None:
    """Write `MARKER` into a folder hopsim is writing (before it is put in place)."""
    (Path(folder) / MARKER).write_text(json.dumps({"kind": kind}) + "\n")


@dataclass(frozen=True)
class Rule:
    """What one command may write (see the module's doc)."""

    inputs: Mapping[str, Path] = field(default_factory=dict)
    """The command's inputs, by the option or argument that names them."""
    own: tuple[Path, ...] = ()
    """Folders that are this command's own output (a sweep's folder): anything inside may be written."""
    in_run: frozenset[str] = frozenset()
    """File names this command writes by design inside a run folder it reads (its default outputs)."""
    force: bool = False
    replaces: frozenset[str] = frozenset()
    """The kinds of hopsim folder the command replaces with --force (`hopsim run`: "run")."""
    resumes: frozenset[str] = frozenset()
    """The kinds of hopsim folder the command writes on into (a sweep resumes its folder); an
    empty folder may be begun by such a command too."""
    read: list[Path] = field(default_factory=list)
    """Every file the command has read so far (`note_read`): inputs too, named or not (a
    scenario's flow file, an HPCC config's topology)."""


def note_read(path: Path | str) -> None:
    """Count `path`, just read, as an input of the running command."""
    rule = _RULE.get()
    if rule is not None:
        rule.read.append(Path(path))


_RULE: contextvars.ContextVar[Optional[Rule]] = contextvars.ContextVar("hopsim_output_rule", default=None)


@contextlib.contextmanager
def applying(rule: Rule) -> Iterator[Rule]:
    """Every output written in the block keeps `rule`."""
    token = _RULE.set(rule)
    try:
        yield rule
    finally:
        _RULE.reset(token)


def _inside(p: Path, folder: Path) -> bool:
    return p != folder and folder in p.parents


def _same(a: Path, b: Path) -> bool:
    if a == b:
        return True
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def check_output(path: Path | str, what: str = "", folder: bool = False, rule: Optional[Rule] = None) -> Path:
    """Refuse, as a ScenarioError naming `what` and the path, an output the active rule forbids
    (see the module's doc); returns the path the kernel reaches. Without a rule: nothing."""
    rule = rule or _RULE.get()
    if rule is None:
        return Path(path)
    p = real_path(path)
    head = f"{what} {path}" if what else str(path)
    inputs = {label: real_path(given) for label, given in rule.inputs.items() if given is not None}
    own = [real_path(o) for o in rule.own]
    for r in rule.read:
        with contextlib.suppress(OSError):
            rp = real_path(r)
            if not any(_inside(rp, o) for o in own):  # (what it reads back of its own output is no input)
                inputs.setdefault(f"{r} (which it reads)", rp)
    for label, ip in inputs.items():
        if _same(p, ip):
            raise ScenarioError(f"{head}: is {label}, an input of this command; give another path")
        if folder and _inside(ip, p):
            raise ScenarioError(f"{head}: holds {label} ({ip}), an input of this command; give another path")
    if any(p == o or _inside(p, o) for o in own):
        return p
    for anc in p.parents:
        kind = kind_of(anc)
        if kind is None:
            continue
        if kind == "run" and anc == p.parent and p.name in rule.in_run:
            return p  # an export's own file beside the run's tables: it wrote it, it may write it again
        raise ScenarioError(f"{head}: is inside {anc}, {KIND_NAMES[kind]} that holds only what hopsim wrote there; "
                            "give a path outside it")
    try:
        mode = os.lstat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):  # (the writer names a file where a folder should be)
        return p
    if folder and stat.S_ISDIR(mode):
        kind = kind_of(p)
        if rule.resumes and (kind in rule.resumes or (kind is None and (not any(p.iterdir()) or _legacy_all(p, rule)))):
            return p
        if kind not in rule.replaces:
            which = f"is {KIND_NAMES[kind]}" if kind else "already exists and is not a folder hopsim wrote"
            raise ScenarioError(f"{head}: {which}; give a new folder")
        if not rule.force:
            raise ScenarioError(f"{head}: already exists; choose another folder or pass --force to replace it")
        foreign = sorted(c.name for c in p.iterdir() if not _written_in_run(c.name)) if kind == "run" else []
        if foreign:
            raise ScenarioError(f"{head}: holds {', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}, which "
                                "hopsim did not write there; move it out first, or give another folder")
        return p
    if not folder and stat.S_ISREG(mode):
        if not rule.force:
            raise ScenarioError(f"{head}: already exists; choose another path or pass --force to replace it")
        return p
    if stat.S_ISDIR(mode):  # (as the system says it when a file is opened there)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    raise ScenarioError(f"{head}: is {_what_is(mode)}, not {'a folder' if folder else 'a file'}; give another path")


def _what_is(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else "a link" if stat.S_ISLNK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a file" if stat.S_ISREG(mode)
            else "a special file")


def check_replaceable(path: Path | str, folder: bool = False, what: str = "") -> None:
    """Before an output is put in place by renaming over `path`: the active rule
    (`check_output`), and what stands there must be what hopsim writes (a regular file, or with
    `folder` a folder), else OSError naming it. Why: a rename replaces whatever the name points
    at, and a command run by root with ``--out /dev/zero`` would otherwise replace the device
    itself."""
    p = Path(path)
    check_output(p, what, folder=folder)
    try:
        mode = os.lstat(p).st_mode
    except FileNotFoundError:
        return
    ok = stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)
    if not ok and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(p))
    if not ok:
        want = "a folder" if folder else "a file"
        raise NotAFile(p, f"it exists and is {_what_is(mode)}, not {want} hopsim wrote; give another path")


class NotAFile(OSError):
    """An input path that is not a regular file of a sensible size (`read_bounded`), or an output
    path holding something hopsim does not write (`check_replaceable`)."""

    def __init__(self, path: Path, why: str):
        super().__init__(errno.EINVAL, why, str(path))
