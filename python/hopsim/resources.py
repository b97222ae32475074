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

A size such as ``4GiB`` or ``500MB``, or ``off`` for no limit. Why not a scenario field: a limit
describes the machine that runs a scenario, not the network it simulates; in the scenario it
would change the scenario's hash (and so a sweep's run folders) whenever the machine changed.
"""

from __future__ import annotations

import os
from typing import Any

from .errors import ScenarioError
from .units import UnitError, parse_size

__all__ = ["AUTO", "memory_limit", "available_memory", "estimate_memory", "ENV"]

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


def estimate_memory(core_json: str) -> dict[str, Any]:
    """The core's estimate of a scenario's memory (``hopsim._native.estimate``)."""
    from . import _native

    return _native.estimate(core_json)


def native_limit(value: Any = AUTO, option: str = "--max-memory") -> dict[str, Any]:
    """Keyword arguments for ``_native.run`` / ``_native.validate``: ``max_memory`` and
    ``limit_note``."""
    limit, note = memory_limit(value, option)
    return {"max_memory": limit, "limit_note": note}
