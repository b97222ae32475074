"""Who owns a folder: one rule for folders that outlive the process that made them.

A process that works in a folder (a run's spool, a sweep's output folder) holds an exclusive
lock (``flock``) on a file in it for as long as it lives, with a note of who it is. The kernel
drops the lock when the process ends, however it ends (SIGKILL, an allocation failure, a power
cut), so:

- a folder whose lock can be taken belongs to no living process: a leftover (`is_abandoned`),
  which the next process to look removes (`hopsim.results.spool` does so for spools);
- a folder whose lock is held is in use: a second process refuses it, naming the holder (`hold`).

Why ``flock`` rather than a PID file: a PID can be reused by an unrelated process after a
reboot or a long time, and a PID file of a killed process stays; the lock cannot be left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import IO, Any

__all__ = ["LOCK", "Held", "hold", "is_abandoned", "owner_text"]

LOCK = ".hopsim-lock"
"""The lock file's name in the folder it guards."""


class Held(Exception):
    """The folder's lock is held by another process (`owner`: its note, possibly empty)."""

    def __init__(self, folder: Path, owner: dict[str, Any]):
        super().__init__(f"{folder}: in use by {owner_text(owner)}")
        self.folder, self.owner = folder, owner


def _flock(f: IO[Any]) -> bool:
    """Take the exclusive lock of open file `f` without waiting; whether it was free."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover  (not POSIX: no locking, nothing is ever abandoned)
        return True
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _note() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": " ".join(sys.argv)[:300]}


def owner_text(owner: dict[str, Any]) -> str:
    if not owner.get("pid"):
        return "another process"
    return f"process {owner['pid']} on {owner.get('host', '?')} since {owner.get('started', '?')} ({owner.get('command', '')})"


def _read_note(path: Path) -> dict[str, Any]:
    try:
        note = json.loads(path.read_bytes()[:4096] or b"{}")
        return note if isinstance(note, dict) else {}
    except (OSError, ValueError):
        return {}


def hold(folder: Path | str) -> IO[Any]:
    """Take `folder`'s lock for this process (the folder must exist) and write who holds it;
    returns the open lock file, whose closing (or this process's end) releases it. Raises
    `Held` when another process holds it."""
    folder = Path(folder)
    path = folder / LOCK
    f = open(path, "a+")
    if not _flock(f):
        f.close()
        raise Held(folder, _read_note(path))
    try:
        f.seek(0)
        f.truncate()
        f.write(json.dumps(_note()) + "\n")
        f.flush()
    except BaseException:
        f.close()
        raise
    return f


MIN_AGE_S = 60.0
"""A lock file younger than this is not judged: its maker may not have locked it yet."""


def is_abandoned(folder: Path | str) -> bool:
    """Whether `folder` has a lock file that no process holds (its owner has ended). A folder
    without one, or with one made in the last `MIN_AGE_S` seconds, is not judged (it may be
    being made, its lock not taken yet)."""
    path = Path(folder) / LOCK
    try:
        f = open(path, "r")
        if time.time() - os.fstat(f.fileno()).st_mtime < MIN_AGE_S:
            f.close()
            return False
    except OSError:
        return False
    with f:
        if not _flock(f):
            return False
        with contextlib.suppress(OSError):
            import fcntl

            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return True
