"""Resource guards: the memory limit a run is checked against before it is built.

The core estimates a scenario's memory from its size (``hopsim._native.estimate``; see
``crates/hopsim-core/src/footprint.rs``) and refuses, before building anything, a scenario whose
estimate exceeds the limit, with a message naming the largest part and the field to change.

The limit, in order:

1. an explicit value: ``--max-memory`` on ``hopsim run``, ``validate`` and ``sweep``, or the
   ``max_memory`` argument of `hopsim.run`, `run_sweep` and `Scenario.validate`;
2. the environment variable ``HOPSIM_MAX_MEMORY`` (what a Dask worker or a batch job sets);
3. the memory available on this machine now: ``MemAvailable`` in ``/proc/meminfo`` (else, off
   Linux, the physical memory), read when the check runs.

A size such as ``4GiB`` or ``500MB``, or ``off`` for no limit. A spooled run (`hopsim run`)
holds a chunk of its buffer and queue samples in memory and writes the rest to disk; `check_disk`
refuses one whose samples would not fit on disk. Why not a scenario field: a limit
describes the machine that runs a scenario, not the network it simulates; in the scenario it
would change the scenario's hash (and so a sweep's run folders) whenever the machine changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from .units import UnitError, parse_size
from .paths import resolve

__all__ = ["AUTO", "memory_limit", "available_memory", "estimate_memory", "check_disk", "fmt_bytes", "ENV", "SPILL_ROWS"]

ENV = "HOPSIM_MAX_MEMORY"
AUTO = "auto"
"""The default: ``HOPSIM_MAX_MEMORY`` if set, else the memory available now."""

_OFF = ("off", "none", "no", "unlimited")


def available_memory() -> int | None:
    """Bytes of memory available to a new run: ``MemAvailable`` of ``/proc/meminfo``, else the
    physical memory (``sysconf``), else None (unknown: no limit)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def memory_limit(value: Any = AUTO, option: str = "--max-memory") -> tuple[int | None, str]:
    """``(bytes or None, where it comes from)`` for a limit given as `value`: a size (``"4GiB"``,
    an int of bytes), ``"off"``, or `AUTO` (``HOPSIM_MAX_MEMORY``, else the memory available).
    Raises ScenarioError naming `option` for a value that is not a size."""
    source = option
    if value is None or (isinstance(value, str) and value.strip().lower() == AUTO):
        env = os.environ.get(ENV, "").strip()
        if not env:
            avail = available_memory()
            return avail, "the memory available on this machine; --max-memory or HOPSIM_MAX_MEMORY sets another limit"
        value, source = env, ENV
    if isinstance(value, str) and value.strip().lower() in _OFF:
        return None, source
    try:
        b = parse_size(value.strip() if isinstance(value, str) else value)
    except UnitError as e:
        raise ScenarioError(f"{source}: {e}; or 'off' for no limit") from None
    return b, source


SPILL_ROWS = 65536
"""Rows of the time-growing tables at which a spooled run hands them over (``_native.run``'s
default ``spill_rows``): what a spooled run holds of them in memory."""


def estimate_memory(core_json: str, spooled: bool = False, threads: int = 1) -> dict[str, Any]:
    """The core's estimate of a scenario's memory (``hopsim._native.estimate``); `spooled`: for
    a run that spools its buffer and queue samples (`hopsim.run`'s default), whose bytes on disk
    are then under ``"disk"``; `threads`: for a run split over that many partitions (each holds
    a copy of the network's state and keeps its tables to the end)."""
    from .. import _native

    return _native.estimate(core_json, SPILL_ROWS if spooled else None, threads)


def with_process(est: dict[str, Any]) -> dict[str, Any]:
    """`est` (`estimate_memory`) with the memory of the process that runs the core added as a
    part: the interpreter and the libraries a run loads (Arrow, NumPy; about 50 MB), measured as
    this process's resident memory once they are loaded. Why: the figure a user compares with
    what the system shows for `hopsim run` is the whole process, not the core alone. (Writing
    the run folder at the end adds a few MB more, which only a tiny run notices.)"""
    import importlib

    # what `hopsim run` loads before its core starts (by name: they stand above this module, and
    # only their memory is wanted here, not their code)
    for name in ("results.store", "results.spool", "run", "progress"):
        importlib.import_module(f"..{name}", __package__)
    rss = resident_memory()
    if rss is None:
        return est
    part = {"name": "process", "bytes": rss, "detail": "the interpreter and the libraries a run loads (measured here; the run folder's writer adds a few MB)"}
    return {**est, "total": est["total"] + rss, "parts": [*est["parts"], part]}


def resident_memory() -> int | None:
    """This process's resident memory in bytes (``/proc/self/statm``), None where unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def check_disk(core_json: str, places: list[tuple[Path, str]], source: str | None = None) -> None:
    """Refuse (ScenarioError) a spooled run whose samples would not fit on disk: each of
    `places` (a folder, and what it is: "the spool", "--out") receives them once; folders on the
    same file system add up. The size is the samples' uncompressed bytes, which Parquet's
    compression only makes smaller."""
    import shutil

    try:
        disk = estimate_memory(core_json, spooled=True)["disk"]
    except ValueError:
        return  # a scenario the core cannot read: building it says why
    if disk == 0:
        return
    need: dict[int, list[Any]] = {}
    for folder, what in places:
        existing = resolve(folder)
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        try:
            dev, free = existing.stat().st_dev, shutil.disk_usage(existing).free
        except OSError:
            continue
        entry = need.setdefault(dev, [0, free, []])
        entry[0] += disk
        entry[2].append(f"{what} ({folder})")
    for total, free, whats in need.values():
        if total > free:
            raise ScenarioError(
                f"disk: this run writes about {fmt_bytes(total)} of buffer and queue samples to {' and '.join(whats)}, "
                f"but only {fmt_bytes(free)} is free there: sample less often (record.buffer_interval, "
                f"record.queue_interval) or stop sooner (duration)", source=source)


def fmt_bytes(b: int) -> str:
    """``6.2 PB``, ``1.3 GB``, ``12.0 MB``: the core's style (powers of 1000)."""
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9)):
        if b >= scale:
            return f"{b / scale:,.1f} {unit}"
    return f"{b / 1e6:,.1f} MB"


def native_limit(value: Any = AUTO, option: str = "--max-memory") -> dict[str, Any]:
    """Keyword arguments for ``_native.run`` / ``_native.validate``: ``max_memory`` and
    ``limit_note``."""
    limit, note = memory_limit(value, option)
    return {"max_memory": limit, "limit_note": note}


def default_threads(jobs: int = 1) -> int:
    """Threads for each run when `jobs` runs go side by side: the machine's cores shared among
    them (at least one each), so that jobs x threads does not exceed the cores."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, jobs))
