"""The spool (`hopsim.spool`): a run whose time-growing tables leave the core in many small
chunks and wait on disk gives the same tables, row for row, as one kept whole in memory, and
leaves no raw file behind once they are made."""

from __future__ import annotations

import importlib

from hopsim import _native
from hopsim.scenario import load_scenario
from hopsim.spool import RAW, Spool

run_mod = importlib.import_module("hopsim.run")

OVERRIDES = {
    "flow_control.scheme": "bfc",  # a module with samples of its own (module_samples)
    "record.trace": {"flows": [1, 2]},
    "record.buffer_interval": "500ns",
    "record.queue_interval": "200ns",
}


def test_spooled_tables_equal_unspooled(repo, monkeypatch):
    monkeypatch.setattr("hopsim.spool.READ_ROWS", 97)  # batches that cut the core's chunks
    sc = load_scenario(repo / "scenarios" / "small-incast-star.toml").with_overrides(OVERRIDES)
    whole = run_mod.results_from_native(_native.run(sc.core_json))
    sp = Spool()
    raw = _native.run(sc.core_json, on_spill=sp.add, spill_rows=500)
    assert sp.chunks > 3, "the run should have spilled several chunks"
    spooled = run_mod.results_from_native(raw, spool=sp)
    for name in ("buffer", "queues", "trace", "module_samples"):
        a, b = whole.tables[name], spooled.tables[name]
        assert a.num_rows > 500, f"{name}: too few rows to cross a chunk ({a.num_rows})"
        assert a.equals(b), name
    assert not list(sp.dir.glob("raw-*")), "raw files are removed once their table is made"
    assert set(RAW) == {"buffer_switch", "buffer_port", "queues", "trace", "module_samples"}
