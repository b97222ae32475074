"""The spool (`hopsim.results.spool`): a run whose time-growing tables leave the core in many small
chunks and wait on disk gives the same tables, row for row, as one kept whole in memory, and
leaves no raw file behind once they are made."""

from __future__ import annotations

import importlib
import json

import pytest

from hopsim import _native
from hopsim.scenario.model import load_scenario
from hopsim.results.spool import RAW, Spool

run_mod = importlib.import_module("hopsim.run")

OVERRIDES = {
    "flow_control.scheme": "bfc",  # a module with samples of its own (module_samples)
    "record.trace": {"flows": [1, 2]},
    "record.buffer_interval": "500ns",
    "record.queue_interval": "200ns",
}


def test_spooled_tables_equal_unspooled(repo, monkeypatch):
    monkeypatch.setattr("hopsim.results.spool.READ_ROWS", 97)  # batches that cut the core's chunks
    sc = load_scenario(repo / "scenarios" / "small-incast-star.toml").with_overrides(OVERRIDES)
    whole = run_mod.results_from_native(_native.run(sc.core_json))
    sp = Spool()
    raw = _native.run(sc.core_json, on_spill=sp.add, spill_rows=500)
    assert sp.chunks > 3, "the run should have spilled several chunks"
    spooled = run_mod.results_from_native(raw, spool=sp)
    for name in ("buffer", "queues", "trace", "module_samples", "pauses", "control", "pfc_received"):
        a, b = whole.tables[name], spooled.tables[name]
        if name not in ("pauses", "control", "pfc_received"):  # (BFC sends no pauses; its control frames are few)
            assert a.num_rows > 500, f"{name}: too few rows to cross a chunk ({a.num_rows})"
        assert a.equals(b), name
    assert not list(sp.dir.glob("raw-*")), "raw files are removed once their table is made"
    assert set(RAW) == {"buffer_switch", "buffer_port", "queues", "trace", "module_samples", "pauses", "control", "pfc_received"}


def test_hopsim_run_spooled_flows_equal_unspooled(repo, cli, tmp_path, monkeypatch):
    """`hopsim run`'s flows table leaves the core in chunks as flows are freed (in that order, not
    by flow id) and is put back in flow-id order on disk: its flows.parquet and summary are those
    of a run that keeps the table whole, cut mid-run so that flows are live, finished, and never
    started at the end."""
    import pyarrow.parquet as pq

    from hopsim.results.store import write_run

    scenario = repo / "scenarios" / "leaf-spine-incastmix.toml"
    sc = load_scenario(scenario).with_overrides({"duration": "300us"})
    whole = write_run(run_mod.run(sc, spool=False, threads=1), sc, tmp_path / "whole")

    chunks: list[int] = []
    native_run = _native.run

    def small_chunks(core_json, *args, on_spill=None, **kw):
        def spill(tables):
            chunks.append(len(tables["flows"]["flow_id"][1]) // 4)
            on_spill(tables)

        return native_run(core_json, *args, on_spill=spill if on_spill else None, **{**kw, "spill_rows": 7})

    monkeypatch.setattr(_native, "run", small_chunks)
    monkeypatch.setattr("hopsim.results.spool.READ_ROWS", 97)  # batches that cut the core's chunks
    # (one thread: a run split over threads keeps its tables whole to merge them, and does not spool)
    code, out = cli("run", scenario, "--set", "duration=300us", "--threads", "1", "--out", tmp_path / "spooled")
    assert code == 0, out
    assert sum(c > 0 for c in chunks) > 3, f"flow rows should leave in several chunks: {chunks}"

    a, b = pq.read_table(whole / "flows.parquet"), pq.read_table(tmp_path / "spooled" / "flows.parquet")
    assert a.num_rows > 100 and a.schema.equals(b.schema)
    fa, fb = a.to_pandas(), b.to_pandas()
    assert (~fa["finished"]).any() and fa["finished"].any(), "finished and unfinished flows"
    assert fa.equals(fb)  # value for value, NaN where NaN
    assert (fb["flow_id"].diff().dropna() == 1).all()
    drop = {"wall_time_s", "events_per_s", "params", "threads", "threads_note"}  # how it ran, not what it measured
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (whole, tmp_path / "spooled"))
    assert {k: v for k, v in sa.items() if k not in drop} == {k: v for k, v in sb.items() if k not in drop}


def test_a_split_run_spools_the_same_rows(repo):
    """A run split over threads hands its time-growing tables to the spool in chunks too (merged
    as one thread writes them): the same tables as one thread keeping them whole."""
    sc = load_scenario(repo / "scenarios" / "leaf-spine-incastmix.toml").with_overrides(
        {**OVERRIDES, "duration": "200us", "record.trace": {"flows": [1, 2, 40]}})
    whole = run_mod.results_from_native(_native.run(sc.core_json))
    sp = Spool()
    raw = _native.run(sc.core_json, on_spill=sp.add, spill_rows=500, threads=2)
    assert raw["engine"]["threads"] == 2, raw["engine"]
    assert sp.chunks > 3, "the run should have spilled several chunks"
    split = run_mod.results_from_native(raw, spool=sp)
    for name in ("buffer", "queues", "trace", "module_samples", "pauses", "control", "pfc_received", "flows"):
        # (as frames: the flows of a run cut short have NaN times, which Arrow's equality never matches)
        assert whole.tables[name].to_pandas().equals(split.tables[name].to_pandas()), name
    assert whole.tables["buffer"].num_rows > 2000


@pytest.mark.parametrize("ids", [[3, 0, 2, 1], [5, 2, 9], [7], []])
def test_flows_come_back_in_id_order_whole_or_not(ids):
    """A whole run's flow ids number the rows 0..n-1 (each row goes to its place); a run stopped
    by Ctrl-C with --keep-partial may lack some flows, so an id may be past the last row: the
    rows are then sorted by id, not refused (it once ended as an IndexError, nothing written)."""
    import numpy as np

    from hopsim.results.spool import FLOWS

    sp = Spool()
    ids_a = np.array(ids, dtype="<u4")
    half = len(ids) // 2
    for part in (slice(0, half), slice(half, None)):  # two chunks, as spills come
        sp.add({**{n: {} for n in RAW},
                FLOWS: {"flow_id": ("<u4", ids_a[part].tobytes()), "size": ("<u8", (ids_a[part].astype("<u8") * 10).tobytes())}})
    empty = {"flow_id": ("<u4", b""), "size": ("<u8", b"")}
    got = list(sp.read_by_id(FLOWS, "flow_id", empty))
    flow_id = np.concatenate([np.asarray(g["flow_id"]) for g in got]) if got else np.array([])
    size = np.concatenate([np.asarray(g["size"]) for g in got]) if got else np.array([])
    assert flow_id.tolist() == sorted(ids)
    assert size.tolist() == [10 * i for i in sorted(ids)]


def test_a_flow_id_twice_is_refused():
    import numpy as np

    from hopsim.results.spool import FLOWS

    sp = Spool()
    sp.add({**{n: {} for n in RAW}, FLOWS: {"flow_id": ("<u4", np.array([4, 4, 1], dtype="<u4").tobytes())}})
    with pytest.raises(ValueError, match="twice"):
        list(sp.read_by_id(FLOWS, "flow_id", {"flow_id": ("<u4", b"")}))


def test_a_full_spool_disk_names_the_spool_folder(tmp_path):
    """A full disk under TMPDIR while a run spools: the error names the spool's folder and
    TMPDIR (a file object's write error names no file: it once read "OSError: No space left on
    device" and nothing else)."""
    import errno
    import os

    import numpy as np

    from hopsim.cli import _path_error
    from hopsim.results.spool import FLOWS

    sp = Spool(tmp_path)
    chunk = {**{n: {} for n in RAW}, FLOWS: {"flow_id": ("<u4", np.array([0], dtype="<u4").tobytes())}}
    sp.add(chunk)

    class Full:
        def write(self, b):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def close(self):
            pass

    sp._raw[FLOWS] = {c: Full() for c in sp._raw[FLOWS]}
    with pytest.raises(OSError) as e:
        sp.add(chunk)
    assert e.value.filename == str(sp.dir)
    line = _path_error(e.value, {})
    assert line.startswith(str(sp.dir)) and "No space left on device" in line and f"TMPDIR {tmp_path}" in line, line
