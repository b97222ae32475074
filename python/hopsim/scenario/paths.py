"""Where input files named in a scenario are found.

A scenario names files (a CDF, an HPCC topology or flow file) relative to the scenario file or to
the repository. A bare CDF name such as ``WebSearch_HPCC.txt`` is looked up in ``workloads/``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Any, Iterator, Mapping

from pydantic_core import PydanticCustomError

from ..errors import ScenarioError
from .outputs import NotAFile, check_replaceable, note_read, real_path

_PACKAGE_REPO = Path(__file__).resolve().parents[3]

MAX_INPUT_BYTES = 256 * 2**20
"""The largest input file read (a scenario, sweep, CDF, HPCC config, topology or flow file): ten
times the largest real one (an HPCC flow file of a million flows is about 40 MB). A file larger
than this is refused by its size before it is read, so that a wrong path (a disk image, a log)
is named at once rather than filling the memory."""


def resolve(path: Path | str) -> Path:
    """The absolute path the kernel reaches for `path` (`outputs.real_path`: links followed in
    turn, so ``loop/../x`` is the loop's error, not ``./x``); a loop of symbolic links is the
    OSError (ELOOP, naming the path) that every other file-system refusal is: the commands turn
    OSError into one line naming the option that gave the path (`hopsim.cli`)."""
    return real_path(path)


def repo_roots(base_dir: Path) -> list[Path]:
    """Directories a relative path may be relative to: the scenario's folder and its ancestors,
    the repository this package was installed from (an editable install), the working
    directory, and last the package's data (`packaged`: a bare CDF name from any folder)."""
    from .packaged import data_dir

    out: list[Path] = []
    for d in [base_dir, *base_dir.parents, _PACKAGE_REPO, Path.cwd(), data_dir()]:
        if d not in out:
            out.append(d)
    return out


def is_file(p: Path) -> bool:
    """Path.is_file that answers no, rather than raising, for a name the system refuses (longer
    than it allows, or holding a NUL byte)."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


def resolve_input(name: str, context: Mapping[str, Any] | None, kind: str, subdir: str | None = None) -> Path:
    """The absolute path of input file `name`; a PydanticCustomError listing where it looked."""
    base = resolve((context or {}).get("base_dir") or Path.cwd())
    p = Path(name).expanduser()
    if p.is_absolute():
        if is_file(p):
            return p
        tried = [p]
    else:
        tried = []
        for root in repo_roots(base):
            # normpath: "out/../data/x" must not need "out" to exist yet
            cands = [Path(os.path.normpath(root / p))]
            if subdir:
                cands.append(Path(os.path.normpath(root / subdir / p)))
            for c in cands:
                tried.append(c)
                if is_file(c):
                    return resolve(c)
    shown = ", ".join(str(t) for t in tried[:4]) + (" ..." if len(tried) > 4 else "")
    hint = f"; a bare name is looked up in {subdir}/" if subdir else ""
    raise PydanticCustomError(
        "file_not_found",
        "{msg}",
        {"msg": f"{kind} {name!r} not found (give a path relative to the scenario file or the repository{hint}); looked at {shown}"},
    )


def read_text(path: Path | str, what: str = "") -> str:
    """The text of an input file (a scenario, CDF, HPCC config, topology or flow file). A file
    that cannot be read, or is not UTF-8 text (a binary file, a file saved as Latin-1), is a
    ScenarioError naming `what` (a field such as ``topology.file``), the file and the line of the
    first bad byte, instead of a traceback from deep inside the reader."""
    p = Path(path)
    head = f"{what} {p}" if what else str(p)
    try:
        data = read_bounded(p)
    except OSError as e:
        raise ScenarioError(f"{head}: cannot read it ({e.strerror or e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ScenarioError(f"{head}: line {line}: not UTF-8 text (byte 0x{data[e.start]:02x}); "
                            "save it as UTF-8 (or ASCII)") from None


def read_bounded(p: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of regular file `p`, refusing what is not one (a FIFO, which would block, a
    device such as /dev/zero, which never ends, a folder) and a file larger than `limit`, before
    reading (and, for a file that grows meanwhile, after `limit` bytes)."""
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block here
    note_read(p)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a pipe" if stat.S_ISFIFO(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a special file")
            raise NotAFile(p, f"{kind}, not a regular file")
        if st.st_size > limit:
            raise NotAFile(p, f"{st.st_size / 1e6:,.0f} MB, larger than any input hopsim reads "
                           f"({limit / 1e6:,.0f} MB at most); is it the right file?")
        # read from the descriptor itself, which only the `finally` below closes: handing it to
        # a file object and marking it handed over are two steps, and a Ctrl-C between them
        # would close it twice and end as "Bad file descriptor" (bad input) instead of interrupted
        data = bytearray()
        step = max(st.st_size + 1, 1 << 16)
        while len(data) <= limit:
            chunk = os.read(fd, min(step, limit + 1 - len(data)))
            if not chunk:
                break
            data += chunk
        if len(data) > limit:
            raise NotAFile(p, f"grew past {limit / 1e6:,.0f} MB while it was read, more than any input hopsim reads")
        return bytes(data)
    finally:
        os.close(fd)


def write_text_atomic(path: Path | str, text: str, what: str) -> Path:
    """Write a whole output file (a scenario, a report, the core's JSON) under a temporary name
    beside it, then rename it into place, so a failed write leaves the old file or nothing. A
    path that cannot be written (a folder, a file where a folder should be, no permission, a full
    disk) is a ScenarioError naming the option `what` and the path."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        check_replaceable(p, what=what)
        with created_folder(p.parent):
            try:
                tmp.write_text(text)
                os.replace(tmp, p)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise ScenarioError(f"{what} {p}: cannot write it ({why_unwritable(p, e)})") from None
    return p


@contextlib.contextmanager
def created_folder(path: Path | str) -> Iterator[Path]:
    """Make folder `path` and its missing parents for the block; when the block fails (a full
    disk, Ctrl-C), remove the folders it made, so that a failed command leaves no empty folder
    behind."""
    p = Path(path)
    missing: list[Path] = []
    q = p
    while not q.exists() and q != q.parent:
        missing.append(q)
        q = q.parent
    p.mkdir(parents=True, exist_ok=True)
    try:
        yield p
    except BaseException:
        for d in missing:  # the deepest first
            shutil.rmtree(d, ignore_errors=True)
        raise


def why_unwritable(path: Path, e: OSError) -> str:
    """What an OSError from writing `path` means: "File exists" from making its folder means a
    file stands where a folder of the path should be, so say which."""
    for anc in Path(path).parents:
        if anc.exists():
            if not anc.is_dir():
                return f"{anc} is a file, not a folder"
            break
    return e.strerror or str(e)
