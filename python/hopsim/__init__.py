"""hopsim: a fast packet-level datacenter network simulator (Rust core, thin Python front).

    import hopsim
    sc = hopsim.load_scenario("scenarios/small-incast-star.toml")
    res = hopsim.run(sc)             # Results: .flows, .pauses, .buffer, .queues, .ports (pandas)
    res.summary["pause_frames"]

Also: `run_sweep`, `write_run`, `load_run`, `query`, `connect`, `build_report`, `import_hpcc`,
`export_fct`, and the figures in `hopsim.plots` (`hopsim.papers.plots`). Most names are imported
on first use, so that `import hopsim` (and every sweep worker) stays cheap. `run` and `query` are
bound eagerly: `run` shares its name with its module, and importing a submodule rebinds the package
attribute of its name to the module unless the function was bound after it.

The modules stand in layers, each importing only from its own layer and those below (tests/test_layering.py
keeps them): errors, progress and interrupts; `scenario`; `results`; `interop` (the seed
simulators); the claims of a sweep file's ``[paper]`` table (`papers.claims`, `papers.figstyle`);
`run` and `sweep`; `papers`; the CLI.
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
# (`hopsim.results.spool`); with jemalloc `hopsim run` on the standard benchmark peaks about 45 MB lower.
# Arrow's C++ side (the Parquet reader and writer) takes the choice from the environment when
# pyarrow first loads, so it is made here, before that; `pyarrow.set_memory_pool` would reach only
# the Python side. A program that loaded pyarrow first, or set the variable, keeps its pool.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")

# The core: the extension `hopsim plugin build` installed, with a user's scheme crates, where
# there is one; registered under the built-in one's name before anything loads that.
from .plugins import load_engine as _load_engine  # noqa: E402

_engine = _load_engine()
if _engine is not None:
    import sys as _sys

    _sys.modules[f"{__name__}._native"] = _engine
    _native = _engine

from .results.query import query  # noqa: F401  (re-exported; see __all__)
from .run import Results, run  # noqa: F401

__version__ = "0.1.0"

_EXPORTS = {
    "Scenario": "scenario.model",
    "load_scenario": "scenario.model",
    "ScenarioError": "errors",
    "run_sweep": "sweep",
    "plan_sweep": "sweep",
    "write_run": "results.store",
    "load_run": "results.store",
    "find_runs": "results.store",
    "connect": "results.query",
    "runs_frame": "results.query",
    "build_report": "papers.report",
    "import_hpcc": "interop.hpcc.importer",
    "export_fct": "interop.hpcc.exporter",
}

__all__ = sorted([*_EXPORTS, "Results", "run", "query", "plots"])


def __getattr__(name: str) -> Any:
    if name == "plots":
        return importlib.import_module(".papers.plots", __name__)
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'hopsim' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
