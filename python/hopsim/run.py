"""Running one scenario: `hopsim.run(scenario) -> Results`.

The core hands back columns as raw little-endian buffers (see ``crates/hopsim-py/src/lib.rs``);
here they become tables of NumPy columns (`hopsim.results.columns`; Arrow tables on first access) with the
units users read: times in nanoseconds as floats
(``start_ns``, ``fct_ns``; exact to the picosecond up to about 100 days), with the integer
picosecond columns kept beside them (``start_ps``) for exact arithmetic.
"""

from __future__ import annotations

import itertools
from collections import Counter
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .results.columns import Masked, Strings, Table, strings
from .errors import RunInterrupted, ScenarioError
from .results.spool import FLOWS, RAW, Spool, Tables, _np, column
from .results.tables import TABLES, Results

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from .scenario.model import Scenario

__all__ = ["Results", "run", "execute", "results_from_native", "TABLES"]

FRAME_KINDS = ("pfc", "queue_pause", "credit", "dst_pause", "flow_pause", "other")
"""Kinds of control frame (the core's `packet::ctrl::CtrlKind`), as the summary counts them."""

_U64_MAX = np.uint64(2**64 - 1)
_SWITCH_WIDE = np.uint16(0xFFFF)  # a module sample of the whole switch (crate::fc::SWITCH_WIDE)


def execute(
    core_json: str,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    on_spill: Callable[[dict[str, Any]], None] | None = None,
    max_memory: Any = "auto",
    threads: int = 1,
) -> dict[str, Any]:
    """Run the core on one scenario JSON; the raw columnar result plus wall time.

    `threads`: the core splits the network into that many partitions run side by side
    (``hopsim_core::engine``), with tables identical to one thread's; ``out["engine"]`` says how
    many it used and, where it used one, why.

    This is the unit of work of sweeps, on a local process pool and on Dask workers alike:
    plain bytes in, plain bytes out, so both give identical results. `on_progress` gets the
    core's progress dict (see ``crates/hopsim-py/src/lib.rs``) about every half second;
    `on_spill` (a `Spool.add`) takes the time-growing tables and the flows table (its rows in the
    order flows are freed) in chunks while the core runs, and the returned tables then hold only
    the rows after its last call.

    Raises `RunInterrupted` (a KeyboardInterrupt) carrying the partial output when a signal
    handler raised while the core ran (Ctrl-C; SIGTERM where the program makes it raise), and
    ValueError, before anything is built, when the scenario's memory estimate exceeds
    `max_memory` (a size, ``"off"``, or ``"auto"``: ``HOPSIM_MAX_MEMORY``, else the memory
    available on the machine that runs it; see `hopsim.scenario.resources`).
    """
    from . import _native
    from .scenario.resources import native_limit

    limit = native_limit(max_memory)
    t0 = time.perf_counter()
    out = _native.run(core_json, on_progress, on_spill=on_spill, threads=max(1, int(threads)), **limit)
    out["wall_time_s"] = time.perf_counter() - t0
    stop = out.get("stop", {})
    if stop.get("reason") == "interrupted":
        raise RunInterrupted(stop.get("message", "interrupted"), out)
    return out


def _empty(cols: dict[str, Any]) -> dict[str, np.ndarray]:
    """The core's columns `cols` with no rows (their dtypes kept)."""
    return {k: np.zeros(0, np.dtype(v[0])) for k, v in cols.items()}


def _ns(ps: np.ndarray) -> np.ndarray:
    return ps.astype(np.float64) / 1000.0


def results_from_native(raw: dict[str, Any], scenario_hash: str = "", name: str = "", spool: Spool | None = None) -> "Results":
    """The tables and the summary from `execute`'s output; with `spool` (the one that took the
    run's chunks), the time-growing tables are made a row group at a time into files there.
    The tables are NumPy columns (`hopsim.results.columns`) until one is read as Arrow (`Tables`).""" 
    t = raw["tables"]
    counters = dict(raw["counters"])

    # ports first: other tables take their hop class from it
    p = {k: (v if k == "hop_class" else _np(v)) for k, v in t["ports"].items()}
    ports = {
        "node": p["node"], "port": p["port"], "peer_node": p["peer_node"],
        "hop_class": strings(p["hop_class"]),
        "rate_bps": p["rate_bps"], "tx_bytes": p["tx_bytes"], "ctrl_bytes": p["ctrl_bytes"],
        "utilisation": p["utilisation"], "paused_ns": _ns(p["paused_ps"]), "paused_ps": p["paused_ps"],
        "peak_queue_bytes": p["peak_queue_bytes"],
        "gate_closed_ns": _ns(p["gate_closed_ps"]), "gate_closed_ps": p["gate_closed_ps"],
        "pause_frames": p["pause_frames"], "resume_frames": p["resume_frames"],
        "other_ctrl_frames": p["other_ctrl_frames"],
        "markers_inserted": p["markers_inserted"], "markers_matched": p["markers_matched"],
        "ein_marks": p["ein_marks"],
        # packets dropped by faults ([faults]): lost on this port's wire, dropped when its link
        # went down, dropped on arrival here for a destination no route led to any more
        "drops_loss": p["drops_loss"], "drops_link_down": p["drops_link_down"],
        "drops_unreachable": p["drops_unreachable"],
    }
    hop_names = list(p["hop_class"]) + ["other"]  # "other": a row naming no known port
    pkey = p["node"].astype(np.int64) * 65536 + p["port"]
    order = np.argsort(pkey, kind="stable")
    sorted_keys = pkey[order]

    def port_rows(nodes: np.ndarray, portnos: np.ndarray) -> np.ndarray:
        """Row of `ports` for each (node, local port); len(ports) where there is none."""
        if len(sorted_keys) == 0:
            return np.full(len(nodes), 0, dtype=np.int64)
        k = nodes.astype(np.int64) * 65536 + portnos
        i = np.clip(np.searchsorted(sorted_keys, k), 0, len(sorted_keys) - 1)
        return np.where(sorted_keys[i] == k, order[i], len(pkey))

    def hop_cols(rows: np.ndarray) -> tuple[Strings, Masked]:
        found = rows < len(pkey)
        peers = np.append(p["peer_node"], np.uint32(0))[rows]
        return Strings(hop_names, rows.astype(np.int32)), Masked(peers, ~found)

    fsum = _FlowSummary()  # what the summary needs of the flows table, as `flows_part` sees it

    def flows_part(f: dict[str, np.ndarray]) -> Table:
        done = f["finish_ps"] != _U64_MAX
        acked = f["ack_finish_ps"] != _U64_MAX
        fsum.add(f, done)
        return {
            "flow_id": f["flow_id"], "src": f["src"], "dst": f["dst"], "size_bytes": f["size_bytes"],
            "start_ns": _ns(f["start_ps"]),
            "finish_ns": np.where(done, _ns(f["finish_ps"]), np.nan),
            "fct_ns": np.where(done, _ns(f["fct_ps"]), np.nan),
            "ideal_fct_ns": _ns(f["ideal_fct_ps"]),
            "slowdown": f["slowdown"],
            "incast": f["incast"],
            "finished": done,
            "retx_bytes": f["retx_bytes"], "dropped_bytes": f["dropped_bytes"],
            "delivered_bytes": f["delivered_bytes"],
            "start_ps": f["start_ps"], "finish_ps": Masked(f["finish_ps"], ~done), "fct_ps": Masked(f["fct_ps"], ~done),
            "ideal_fct_ps": f["ideal_fct_ps"],
            # the HPCC simulator's basis: completion when the sender holds the last ACK, its
            # standalone_fct, and its port numbers (see `hopsim export-hpcc`)
            "ack_fct_ns": np.where(acked, _ns(f["ack_fct_ps"]), np.nan),
            "ack_finish_ps": Masked(f["ack_finish_ps"], ~acked),
            "ack_fct_ps": Masked(f["ack_fct_ps"], ~acked),
            "hpcc_standalone_fct_ps": f["hpcc_standalone_fct_ps"],
            "sport": f["sport"], "dport": f["dport"],
        }

    pause_counts = [0, 0]  # pause and resume frames, over every part of the pauses table

    def pauses_part(pz: dict[str, Any]) -> Table:
        ph, ppeer = hop_cols(port_rows(pz["node"], pz["port"]))
        resume = pz["quanta"] == 0
        pause_counts[0] += int((~resume).sum())
        pause_counts[1] += int(resume.sum())
        return {
            "time_ns": _ns(pz["time_ps"]), "node": pz["node"], "port": pz["port"], "peer_node": ppeer, "hop_class": ph,
            "prio": pz["prio"], "kind": Strings(["pause", "resume"], resume.astype(np.int32)),
            "quanta": pz["quanta"], "duration_ns": _ns(pz["duration_ps"]),
            "time_ps": pz["time_ps"], "duration_ps": pz["duration_ps"],
            "mechanism": pz["mechanism"],
        }

    frame_counts = dict.fromkeys(FRAME_KINDS, 0)  # control frames by kind, over every part of the control table

    def control_part(cz: dict[str, Any]) -> Table:
        kinds = cz["kind"]
        if isinstance(kinds, Strings):  # a dictionary-coded column: count the codes
            counted = Counter({kinds.values[i]: int(n) for i, n in enumerate(np.bincount(kinds.idx, minlength=len(kinds.values))) if n})
        else:
            counted = Counter(kinds)
        for kind, n in counted.items():
            # a pause bitmap is BFC's refresh of its queue pauses: counted as queue pause
            k = "queue_pause" if kind == "queue_bitmap" else kind
            frame_counts[k] = frame_counts.get(k, 0) + n
        ch, _ = hop_cols(port_rows(cz["node"], cz["port"]))
        return {
            "time_ns": _ns(cz["time_ps"]), "node": cz["node"], "port": cz["port"], "peer_node": cz["peer_node"],
            "hop_class": ch, "kind": cz["kind"], "target": cz["target"], "value": cz["value"],
            "time_ps": cz["time_ps"],
        }

    def buffer_part(bs: dict[str, np.ndarray], bp: dict[str, np.ndarray]) -> Table:
        rows = bp["port_row"].astype(np.int64)
        ns_, np_ = len(bs["switch_time_ps"]), len(rows)
        is_switch = np.arange(ns_ + np_) < ns_
        return {
            "time_ns": np.concatenate([_ns(bs["switch_time_ps"]), _ns(bp["port_time_ps"])]),
            "scope": Strings(["switch", "port"], (~is_switch).astype(np.int32)),
            "node": np.concatenate([bs["switch_node"], p["node"][rows]]).astype(np.uint32),
            "port": Masked(np.concatenate([np.zeros(ns_, np.uint16), p["port"][rows]]), is_switch),
            "peer_node": Masked(np.concatenate([np.zeros(ns_, np.uint32), p["peer_node"][rows]]), is_switch),
            "hop_class": Strings(hop_names[:-1] + ["switch"], np.concatenate([np.full(ns_, len(pkey)), rows]).astype(np.int32)),
            "bytes": np.concatenate([bs["switch_bytes"], bp["port_bytes"]]),
            "tx_bytes": Masked(np.concatenate([np.zeros(ns_, np.uint64), bp["port_tx_bytes"]]), is_switch),
            "active_queues": Masked(np.concatenate([np.zeros(ns_, np.uint32), bp["port_active"]]), is_switch),
            "time_ps": np.concatenate([bs["switch_time_ps"], bp["port_time_ps"]]),
        }

    def queues_part(qz: dict[str, np.ndarray]) -> Table:
        qh, qpeer = hop_cols(port_rows(qz["node"], qz["port"]))
        return {
            "time_ns": _ns(qz["time_ps"]), "node": qz["node"], "port": qz["port"], "peer_node": qpeer, "hop_class": qh,
            "bytes": qz["bytes"], "time_ps": qz["time_ps"],
        }

    # the HPCC simulator's recorders (crates/hopsim-core/src/stats/record.rs)
    def pfc_received_part(rz: dict[str, np.ndarray]) -> Table:
        rh, rpeer = hop_cols(port_rows(rz["node"], rz["port"]))
        return {
            "time_ns": _ns(rz["time_ps"]), "node": rz["node"], "is_switch": rz["is_switch"], "port": rz["port"],
            "peer_node": rpeer, "hop_class": rh, "prio": rz["prio"], "pause": rz["pause"], "time_ps": rz["time_ps"],
        }

    hz = {k: _np(v) for k, v in t["qlen"].items()}
    qlen = {
        "dump_time_ns": _ns(hz["dump_time_ps"]), "node": hz["node"], "port": hz["port"], "kb": hz["kb"],
        "count": hz["count"], "dump_time_ps": hz["dump_time_ps"],
    }
    # per-packet one-way latency by flow class (record.latency; crates/hopsim-core/src/stats/latency.rs);
    # no rows when off. Quantiles are within 1/256 of the exact sample's value.
    lz = {k: (v if k == "class" else _np(v)) for k, v in t["latency"].items()}
    latency = {
        "class": strings(lz["class"]), "count": lz["count"],
        **{f"{q}_ns": _ns(lz[f"{q}_ps"]) for q in ("min", "p50", "p95", "p99", "max")},
        "mean_ns": lz["mean_ps"] / 1000.0,
        **{f"{q}_ps": lz[f"{q}_ps"] for q in ("min", "p50", "p95", "p99", "max")},
    }

    def trace_part(tz: dict[str, np.ndarray]) -> Table:
        return {
            "time_ns": _ns(tz["time_ps"]), "node": tz["node"], "port": tz["port"], "queue": tz["queue"],
            "event": Strings(list(_trace_events()), tz["event"].astype(np.int32)), "flow": tz["flow"], "seq": tz["seq"],
            "size": tz["size"], "qlen_bytes": tz["qlen_bytes"], "time_ps": tz["time_ps"],
        }

    # congestion windows of record.cwnd_flows (Pulser's Fig. 6; crates/hopsim-core/src/stats/mod.rs)
    wz = {k: _np(v) for k, v in t["cwnd"].items()}
    # and the bytes each has delivered in order, whose rise over a sample interval is its throughput
    cwnd = {"time_ns": _ns(wz["time_ps"]), "flow": wz["flow"], "cwnd_bytes": wz["cwnd_bytes"],
            "delivered_bytes": wz["delivered_bytes"], "time_ps": wz["time_ps"]}

    # what the flow-control modules report over time (FlowControl::sample): one long table
    metric_names = list(raw.get("module_metrics", []))

    def module_part(mz: dict[str, np.ndarray]) -> Table:
        wide = mz["port"] == _SWITCH_WIDE
        mh, mpeer = hop_cols(port_rows(mz["node"], mz["port"]))
        return {
            "time_ns": _ns(mz["time_ps"]), "node": mz["node"],
            "port": Masked(mz["port"], wide), "peer_node": mpeer, "hop_class": mh,
            "metric": Strings(metric_names, mz["metric"].astype(np.int32)), "value": mz["value"],
            "time_ps": mz["time_ps"],
        }

    mem: dict[str, Table] = {}
    files: dict[str, Path] = {}
    if spool is None:
        mem["flows"] = flows_part({c: _np(v) for c, v in t[FLOWS].items()})
    else:
        spool.add(t)  # the rows after the last chunk
        # in flow-id order, a batch at a time (the rows came as flows were freed)
        files["flows"] = spool.write("flows", map(flows_part, spool.read_by_id(FLOWS, "flow_id", t[FLOWS])))
    mem |= {"ports": ports, "qlen": qlen, "latency": latency, "cwnd": cwnd}
    if spool is None:
        cols = {k: {c: column(v) for c, v in t[k].items()} for k in RAW}
        mem["pauses"] = pauses_part(cols["pauses"])
        mem["control"] = control_part(cols["control"])
        mem["pfc_received"] = pfc_received_part(cols["pfc_received"])
        mem["buffer"] = buffer_part(cols["buffer_switch"], cols["buffer_port"])
        mem["queues"] = queues_part(cols["queues"])
        mem["trace"] = trace_part(cols["trace"])
        mem["module_samples"] = module_part(cols["module_samples"])
    else:
        no_sw, no_port = _empty(t["buffer_switch"]), _empty(t["buffer_port"])
        files["buffer"] = spool.write("buffer", itertools.chain(
            (buffer_part(bs, no_port) for bs in spool.read("buffer_switch", t["buffer_switch"])),
            (buffer_part(no_sw, bp) for bp in spool.read("buffer_port", t["buffer_port"])),
        ))
        files["queues"] = spool.write("queues", map(queues_part, spool.read("queues", t["queues"])))
        files["trace"] = spool.write("trace", map(trace_part, spool.read("trace", t["trace"])))
        files["module_samples"] = spool.write("module_samples", map(module_part, spool.read("module_samples", t["module_samples"])))
        files["pauses"] = spool.write("pauses", map(pauses_part, spool.read("pauses", t["pauses"])))
        files["control"] = spool.write("control", map(control_part, spool.read("control", t["control"])))
        files["pfc_received"] = spool.write("pfc_received", map(pfc_received_part, spool.read("pfc_received", t["pfc_received"])))

    wall = float(raw.get("wall_time_s", 0.0))
    events = int(counters.get("events", 0))
    sd = fsum.slowdowns()
    summary: dict[str, Any] = {
        "name": name,
        "scenario_hash": scenario_hash,
        "flows": fsum.flows,
        "flows_finished": fsum.finished,
        "incast_flows": fsum.incast,
        "drops": int(counters.get("drops", 0)),
        # packets lost to [faults] (lost on a wire, on a link that went down, with no route left),
        # apart from `drops`, the buffer's
        "fault_drops": sum(int(counters.get(k, 0)) for k in ("drops_loss", "drops_link_down", "drops_unreachable")),
        "dropped_bytes": int(counters.get("data_bytes_dropped", 0)),
        # PFC pause frames (resumes apart); every kind of control frame is in `control_frames`
        "pause_frames": pause_counts[0],
        "resume_frames": pause_counts[1],
        "pause_time_ns": float(p["paused_ps"].sum()) / 1000.0,
        # control frames sent, by kind (the `control` table's): pfc counts pauses and resumes
        "control_frames": frame_counts,
        "max_switch_buffer_bytes": int(counters.get("max_switch_buffer_bytes", 0)),
        "end_time_ns": int(counters.get("end_time_ps", 0)) / 1000.0,
        "events": events,
        "wall_time_s": wall,
        # partitions the core ran side by side (`hopsim_core::engine`: the tables do not
        # depend on it), and why one where more were asked
        "threads": int(raw.get("engine", {}).get("threads", 1)),
        "threads_note": raw.get("engine", {}).get("note"),
        "events_per_s": events / wall if wall > 0 else None,
        "slowdown_mean": float(sd.mean()) if sd.size else None,
        "slowdown_p99": float(np.percentile(sd, 99)) if sd.size else None,
        "fct_ns_p99": float(np.percentile(_ns(fsum.fcts()), 99)) if sd.size else None,
        "stopped": raw.get("stop", {}).get("reason", "done"),
        "counters": counters,
        "modules": {k: int(v) for k, v in raw.get("modules", {}).items()},
        # the engine's own peaks: per partition, so they change with `threads` where no table
        # or counter does; not results
        "diagnostics": {"depends_on_split": True, **{k: int(v) for k, v in raw.get("diagnostics", {}).items()}},
    }
    stop = raw.get("stop", {})
    if stop.get("message"):
        summary["stop_message"] = stop["message"]
    if stop.get("cycle"):
        summary["deadlock_cycle"] = [[int(n), int(p)] for n, p in stop["cycle"]]
    for k in ("slowdown_mean", "slowdown_p99", "fct_ns_p99"):
        if summary[k] is not None and not math.isfinite(summary[k]):
            summary[k] = None
    return Results(tables=Tables(mem, files, spool), summary=summary)


class _FlowSummary:
    """What the summary takes from the flows table, gathered from its parts in flow-id order (the
    whole table in one part, or a spooled table's batches): counts, and the finished flows'
    slowdowns and FCTs (their mean and percentiles need all of them, in that order, for a mean
    equal to the bit to that of the whole column)."""

    def __init__(self) -> None:
        self.flows = self.finished = self.incast = 0
        self._sd: list[np.ndarray] = []
        self._fct: list[np.ndarray] = []

    def add(self, f: dict[str, np.ndarray], done: np.ndarray) -> None:
        self.flows += int(len(f["flow_id"]))
        self.finished += int(done.sum())
        self.incast += int(f["incast"].sum())
        self._sd.append(f["slowdown"][done])
        self._fct.append(f["fct_ps"][done])

    def slowdowns(self) -> np.ndarray:
        return np.concatenate(self._sd) if self._sd else np.zeros(0)

    def fcts(self) -> np.ndarray:
        return np.concatenate(self._fct) if self._fct else np.zeros(0, np.uint64)


def _trace_events() -> tuple[str, ...]:
    """Names of the packet trace's event codes, the core's (``stats::record::TRACE_EVENTS``)."""
    from . import _native

    return tuple(_native.TRACE_EVENTS)


def run(
    scenario: "Scenario | str",
    overrides: dict[str, Any] | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    spool: bool = True,
    max_memory: Any = "auto",
    threads: int | None = None,
) -> Results:
    """Run a scenario (a `Scenario` or a path to a TOML file) and return its results.

    A scenario whose memory estimate exceeds `max_memory` (see `hopsim.scenario.resources`; default: the
    memory available) raises ScenarioError before anything is built.

    ``summary["stopped"]`` says why it ended: ``done``, ``duration``, ``no_progress`` or
    ``deadlock`` (with ``stop_message`` and, for a deadlock, ``deadlock_cycle``). Ctrl-C raises
    `RunInterrupted` whose ``partial`` is the `Results` measured so far.

    With `spool` (the default), the tables that grow with simulated time (buffer, queues, trace)
    and the flows table go to a temporary folder in chunks while the core runs, so memory stays
    bounded however long the run and however many its flows (`hopsim.results.spool`); the results read
    them back on access.

    `threads` (default: the machine's cores, `hopsim.scenario.resources.default_threads`): the network is
    split into that many partitions run side by side, with the same tables as on one thread."""
    from .scenario.resources import default_threads
    from .scenario.model import Scenario, load_scenario

    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    if overrides:
        sc = sc.with_overrides(overrides)
    if spool:
        import tempfile

        from .scenario.resources import check_disk

        check_disk(sc.core_json, [(Path(tempfile.gettempdir()), "the spool")],
                   source=str(sc.source) if sc.source else None)
    sp = Spool() if spool else None
    try:
        raw = execute(sc.core_json, on_progress, sp.add if sp else None, max_memory,
                      threads=default_threads() if threads is None else threads)
    except RunInterrupted as e:
        if isinstance(e.partial, dict):
            e.convert_with(lambda raw: results_from_native(raw, sc.hash, sc.name, sp))
        raise
    except ScenarioError:
        raise  # a bad max_memory
    except ValueError as e:
        from .scenario.model import core_error_lines

        raise ScenarioError(core_error_lines(str(e), sc.model), source=str(sc.source) if sc.source else None) from None
    return results_from_native(raw, sc.hash, sc.name, sp)
