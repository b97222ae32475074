"""The HPCC simulator's recorders: PFC frames where they arrive (``pfc_received``), queue-length
histograms (``record.qlen_monitor`` -> ``qlen``) and the packet trace (``record.trace`` ->
``trace``): schema, defaults, core JSON, tables and run folders."""

from __future__ import annotations

import json

import pytest

from hopsim import _native, run
from hopsim.scenario import schema as S
from hopsim.errors import ScenarioError
from hopsim.run import TABLES
from hopsim.scenario.model import _core, scenario_from_dict
from hopsim.results.store import load_run, write_run

CORE = json.loads(_native.defaults())

# 4 senders into one receiver across a dumbbell: hosts 0-3 left (switch 5), host 4 right (switch
# 6); the left switch's port 4 is the bottleneck, the 1 MB buffer makes PFC pause the senders
INCAST = {
    "topology": {"kind": "dumbbell", "left": 4, "right": 1, "host_rate": "100Gbps", "bottleneck_rate": "100Gbps",
                 "delay": "1us"},
    "workload": {"kind": "flows", "flows": [{"src": s, "dst": 4, "size": "300KB", "start": f"{1 + s}us"}
                                            for s in range(4)]},
    "buffer": {"size": "300KB"},
}


def _with(**record) -> dict:
    return {**INCAST, "record": record}


def test_defaults_are_the_cores():
    for model, name in ((S.QlenMonitor, "qlen_monitor"), (S.Trace, "trace")):
        ours, theirs = _core(model()), CORE["record"][name]
        assert ours.keys() == theirs.keys(), name
        for k in ours:
            assert ours[k] == theirs[k] and type(ours[k]) is type(theirs[k]), f"record.{name}.{k}: {ours[k]!r} vs {theirs[k]!r}"


def test_run_end_is_the_cores_none_and_stays_a_keyword_in_resolved_files():
    assert _core(S.QlenMonitor(end="run_end"))["end"] is None
    assert S.QlenMonitor().model_dump(mode="json")["end"] == "run_end"
    assert _core(S.QlenMonitor(end="2.1s", time_offset="2s")) | {} == {
        "start": 0, "end": 2_100_000_000_000, "interval": 100_000, "dump_interval": 100_000_000_000,
        "time_offset": 2_000_000_000_000}


def test_off_recorders_leave_the_core_json_and_its_hash_alone():
    plain = scenario_from_dict(INCAST)
    assert "qlen_monitor" not in plain.core["net"]["record"] and "trace" not in plain.core["net"]["record"]
    on = scenario_from_dict(_with(qlen_monitor={}, trace={"flows": [0]}))
    assert on.core["net"]["record"]["qlen_monitor"]["interval"] == 100_000
    assert on.core["net"]["record"]["trace"] == {"flows": [0], "ports": []}
    assert on.hash != plain.hash
    # the resolved scenario keeps human units and loads back to the same run
    again = scenario_from_dict(on.model.model_dump(mode="json", exclude_none=True))
    assert again.hash == on.hash


@pytest.mark.parametrize("record, needle", [
    ({"qlen_monitor": {"interval": "100"}}, "record.qlen_monitor.interval"),
    ({"qlen_monitor": {"interval": "0ns"}}, "record.qlen_monitor.interval"),
    ({"qlen_monitor": {"dump_interval": "10Mb"}}, "record.qlen_monitor.dump_interval"),
    ({"qlen_monitor": {"end": "never"}}, "'run_end'"),
    ({"qlen_monitor": {"every": "1us"}}, "allowed here: dump_interval, end, interval, start, time_offset"),
    ({"trace": {"flows": [-1]}}, "record.trace.flows"),
    ({"trace": {"port": [[5, 4]]}}, "allowed here: flows, ports"),
])
def test_bad_settings_name_the_field_and_what_is_allowed(record, needle):
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(_with(**record))
    assert needle in str(e.value), str(e.value)


@pytest.mark.parametrize("record, needle", [
    ({"trace": {"ports": [[0, 0]]}}, "record.trace.ports: [0, 0]: node 0 is a host; allowed: switch nodes"),
    ({"trace": {"ports": [[5, 9]]}}, "record.trace.ports: [5, 9]: switch 5 has no port 9; allowed: 0 to 4"),
    ({"trace": {"flows": [4]}}, "record.trace.flows: flow 4 does not exist; allowed: 0 to 3"),
])
def test_the_core_checks_traced_ports_and_flows(record, needle):
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(_with(**record)).validate()
    assert needle in str(e.value), str(e.value)


def test_tables_reach_the_run_folder(tmp_path):
    sc = scenario_from_dict(_with(qlen_monitor={"dump_interval": "10us", "time_offset": "2s"},
                                  trace={"flows": [1], "ports": [[5, 4]]}))
    r = run(sc)
    assert r.summary["flows_finished"] == 4
    # PFC frames: sent by the left switch, received by the senders (hosts)
    rx = r.pfc_received
    assert len(rx) > 0 and list(rx.columns) == ["time_ns", "node", "is_switch", "port", "peer_node", "hop_class",
                                                "prio", "pause", "time_ps"]
    assert set(rx["node"][~rx["is_switch"]]) <= {0, 1, 2, 3}
    assert len(rx) <= len(r.pauses) and rx["pause"].sum() <= (r.pauses["kind"] == "pause").sum()
    # histograms: every dump holds one sample count per instant for every switch port (7 ports)
    q = r.qlen
    assert list(q.columns) == ["dump_time_ns", "node", "port", "kb", "count", "dump_time_ps"]
    per = q.groupby(["dump_time_ps", "node", "port"])["count"].sum().reset_index()
    assert (per.groupby("dump_time_ps").size() == 7).all()
    first = per["dump_time_ps"].min()
    assert first == 2 * 10**12 and (per[per["dump_time_ps"] == first]["count"] == 1).all()
    t10 = 2 * 10**12 + 10**7
    assert (per[per["dump_time_ps"] == t10]["count"] == 101).all(), "0 to 10 us every 100 ns"
    assert q[(q["node"] == 5) & (q["port"] == 4)]["kb"].max() > 10, "the bottleneck queue built up"
    # trace: the bottleneck port's every packet and flow 1's packets at the right switch
    tr = r.trace
    assert list(tr.columns) == ["time_ns", "node", "port", "queue", "event", "flow", "seq", "size", "qlen_bytes",
                                "time_ps"]
    assert set(tr["event"]) <= {"enqueue", "dequeue", "drop", "ecn"}
    at = tr[(tr["node"] == 5) & (tr["port"] == 4)]
    assert (at["event"] == "enqueue").sum() == (at["event"] == "dequeue").sum() == 4 * 300
    right = tr[tr["node"] == 6]
    assert set(right["flow"]) == {1} and len(right) == 2 * 300
    assert tr["time_ps"].is_monotonic_increasing

    d = write_run(r, sc, tmp_path / "run")
    for name in ("pfc_received", "qlen", "trace"):
        assert (d / f"{name}.parquet").is_file()
    back = load_run(d)
    assert set(back.tables) == set(TABLES)
    assert back.tables["qlen"].equals(r.tables["qlen"]) and back.tables["trace"].equals(r.tables["trace"])


def test_off_recorders_give_empty_tables_and_older_folders_load(tmp_path):
    sc = scenario_from_dict(INCAST)
    r = run(sc)
    assert len(r.qlen) == 0 and len(r.trace) == 0 and len(r.pfc_received) > 0
    d = write_run(r, sc, tmp_path / "run")
    (d / "qlen.parquet").unlink()  # as a folder written before the table existed
    assert "qlen" not in load_run(d).tables
