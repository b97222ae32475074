"""Ctrl-C and SIGTERM: one path from the signal to a clean end.

Every way a signal can reach hopsim ends the same way: a KeyboardInterrupt (`RunInterrupted`
when a run was going on) that the command catches once (`hopsim.cli.main`), prints as one line
and turns into exit code 130, with nothing half-written.

- From the first line of the package (`at_start`, called by ``hopsim/__init__.py`` when the
  process is the ``hopsim`` command) until the command begins, a signal prints the same line and
  ends the process at once: nothing has been written yet, and a KeyboardInterrupt raised inside
  an import would end in a traceback.
- While a command runs (`install`), SIGINT and SIGTERM raise KeyboardInterrupt. The core polls
  for signals while it runs (``crates/hopsim-py/src/lib.rs``), so a run stops at its next
  checkpoint (`hopsim_core::progress::CHECK_EVERY` events) and hands back what it measured; an
  exception raised inside a callback the core calls (progress, spooling) stops it the same way.
- Inside `deferred` (the spooling of a chunk, which must not stop half-appended) a signal is
  noted and raised when the block ends.
- After the command's output is complete (`ignore`), signals are ignored: the work is done.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

__all__ = ["SIGNALS", "at_start", "is_cli", "install", "deferred", "ignore", "call", "native_ctrl_c", "STARTING_MESSAGE"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)
INTERRUPTED = 130
STARTING_MESSAGE = "interrupted while starting; nothing written\n"

T = TypeVar("T")


def is_cli() -> bool:
    """Whether this process is the ``hopsim`` command (its script, or ``python -m hopsim[.cli]``)."""
    argv = list(getattr(sys, "orig_argv", sys.argv))
    for i, a in enumerate(argv[:-1]):
        if a == "-m":
            return argv[i + 1] in ("hopsim", "hopsim.cli")
    return len(argv) > 1 and os.path.basename(argv[1]) == "hopsim" or os.path.basename(sys.argv[0] or "") == "hopsim"


def _exit_starting(signum: int, frame: Any) -> None:
    os.write(2, STARTING_MESSAGE.encode())
    os._exit(INTERRUPTED)


def at_start() -> None:
    """Until `install`: a signal ends the process with one line (see the module doc)."""
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, _exit_starting)


def _raise(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def install() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt from now on (main thread only)."""
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, _raise)


def ignore() -> None:
    """Signals no longer change anything: the command's work is complete."""
    if threading.current_thread() is threading.main_thread():
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM during the block and deliver them to the handler that was in place
    once it ends, so the block is never left half done. Off the main thread (where no handler
    runs) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if got:
            h = old[got[0]]
            if callable(h):
                h(got[0], None)
            elif h == signal.SIG_DFL:
                signal.raise_signal(got[0])


@contextmanager
def native_ctrl_c() -> Iterator[None]:
    """Give back the KeyboardInterrupt DuckDB took during the block, so a Ctrl-C that lands while
    a statement runs on the main thread ends the command like any other. Such a statement polls
    for signals, takes the KeyboardInterrupt for itself and ends with ``RuntimeError('Query
    interrupted')`` instead (DuckDB 2.0 raises the plain RuntimeError, not one of its own
    classes); it may notice the signal only when the statement ends."""
    try:
        yield
    except RuntimeError as e:
        if type(e) is RuntimeError and str(e) == "Query interrupted":
            raise KeyboardInterrupt from None
        raise


def call(fn: Callable[[], T], stop: Callable[[], Any] | None = None, poll_s: float = 0.05) -> T:
    """`fn()` on a helper thread while this one waits, so that a signal reaches the main
    thread's handler at once even while `fn` runs native code that never polls for it (a DuckDB
    query). On an interrupt `stop()` asks `fn` to end (DuckDB's `interrupt`), and the
    KeyboardInterrupt goes on once it has."""
    box: dict[str, Any] = {}
    # (an Event, not Thread.join: a join cut short by KeyboardInterrupt can leave the thread
    # looking ended while it runs)
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    if threading.current_thread() is not threading.main_thread():
        return fn()
    threading.Thread(target=target, name="hopsim-native", daemon=True).start()
    try:
        while not done.wait(poll_s):
            pass
    except KeyboardInterrupt:
        if stop is not None:
            with deferred():
                stop()
                done.wait()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
