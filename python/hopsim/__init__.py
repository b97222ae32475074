"""hopsim: a fast packet-level datacenter network simulator (Rust core, thin Python front).

    import hopsim
    sc = hopsim.load_scenario("scenarios/small-incast-star.toml")
    res = hopsim.run(sc)             # Results: .flows, .pauses, .buffer, .queues, .ports (pandas)
    res.summary["pause_frames"]

Also: `run_sweep`, `write_run`, `load_run`, `query`, `connect`, `build_report`, `import_hpcc`,
`export_fct`, and the figures in `hopsim.plots`. Most names are imported on first use, so that
`import hopsim` (and every sweep worker) stays cheap. `run` and `query` are bound eagerly: they
share their names with their modules, and importing a submodule rebinds the package attribute of
its name to the module unless the function was bound after it.
"""

from __future__ import annotations

from . import interrupts as _interrupts

if _interrupts.is_cli():  # first: a Ctrl-C while the modules below load ends cleanly too
    _interrupts.at_start()

import importlib  # noqa: E402
import os  # noqa: E402
from typing import Any  # noqa: E402

# Arrow's memory pool: jemalloc unless the program chose one. Why: Arrow's default (mimalloc)
# keeps the memory of freed buffers, and a run hands its samples over in hundreds of chunks
# (`hopsim.spool`); with jemalloc `hopsim run` on the standard benchmark peaks about 45 MB lower.
# Arrow's C++ side (the Parquet reader and writer) takes the choice from the environment when
# pyarrow first loads, so it is made here, before that; `pyarrow.set_memory_pool` would reach only
# the Python side. A program that loaded pyarrow first, or set the variable, keeps its pool.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")

from .query import query  # noqa: F401  (re-exported; see __all__)
from .run import Results, run  # noqa: F401

__version__ = "0.1.0"

_EXPORTS = {
    "Scenario": "scenario",
    "load_scenario": "scenario",
    "ScenarioError": "errors",
    "run_sweep": "sweep",
    "plan_sweep": "sweep",
    "write_run": "store",
    "load_run": "store",
    "find_runs": "store",
    "connect": "query",
    "runs_frame": "query",
    "build_report": "report",
    "import_hpcc": "hpcc_import",
    "export_fct": "hpcc_export",
}

__all__ = sorted([*_EXPORTS, "Results", "run", "query", "plots"])


def __getattr__(name: str) -> Any:
    if name == "plots":
        return importlib.import_module(".plots", __name__)
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'hopsim' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
