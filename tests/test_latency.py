"""``record.latency``: per-packet one-way latency by flow class (the core's stats/latency.rs) —
schema (true / a table / false), the core JSON and hash, the ``latency`` table and its run-folder
file and DuckDB view, and a clear error for bad edges."""

from __future__ import annotations

import pytest

from hopsim import run
from hopsim.errors import ScenarioError
from hopsim.results.query import query
from hopsim.scenario.model import scenario_from_dict
from hopsim.results.store import load_run, write_run

# one lone 40G flow across a star (2 hops of 1 us): every full packet (1000 B payload + 48 B
# header) takes 2 x (1048 B / 40 Gb/s + 1 us) = 2 x 209.6 ns + 2 us = 2419.2 ns
LONE = {
    "topology": {"kind": "star", "hosts": 3, "rate": "40Gbps", "delay": "1us"},
    "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 2, "size": "100KB"}]},
    "congestion_control": {"algorithm": "none"},
}
FULL_NS = 2419.2


def _with(latency) -> dict:
    return {**LONE, "record": {"latency": latency}}


def test_on_off_and_hash():
    plain = scenario_from_dict(LONE)
    assert "latency" not in plain.core["net"]["record"]
    assert scenario_from_dict(_with(False)).hash == plain.hash, "false is off: the hash stays"
    on = scenario_from_dict(_with(True))
    assert on.core["net"]["record"]["latency"] == {"size_edges": [], "sent_from": 0, "sent_until": None}
    assert on.hash != plain.hash
    edges = scenario_from_dict(_with({"size_edges": ["10KB", "1MB"]}))
    assert edges.core["net"]["record"]["latency"]["size_edges"] == [10_000, 1_000_000]
    again = scenario_from_dict(edges.model.model_dump(mode="json", exclude_none=True))
    assert again.hash == edges.hash, "the resolved scenario loads back to the same run"


@pytest.mark.parametrize("bad, says", [
    ({"size_edges": ["1MB", "10KB"]}, "record.latency.size_edges"),
    ({"size_edge": []}, "size_edge"),
    ("yes", "record.latency"),
    ({"sent_from": "10us", "sent_until": "5us"}, "sent_until"),
])
def test_bad_settings_name_the_field(bad, says):
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(_with(bad))
    assert says in str(e.value)


def test_lone_flow_table_file_and_view(tmp_path):
    sc = scenario_from_dict(_with({"size_edges": ["50KB"]}))
    r = run(sc)
    lat = r.latency.set_index("class")
    assert list(lat.index) == ["all", "non-incast", "non-incast, size >= 50000"]
    a = lat.loc["all"]
    assert a["count"] == 100
    assert a["max_ns"] == pytest.approx(FULL_NS, abs=1e-6)  # exact
    assert a["p50_ns"] == pytest.approx(FULL_NS, rel=1 / 256)  # within the histogram's bound
    assert a["p99_ns"] == pytest.approx(FULL_NS, rel=1 / 256)
    assert a["p50_ps"] == round(a["p50_ns"] * 1000)
    d = write_run(r, sc, tmp_path / "run")
    assert load_run(d).tables["latency"].equals(r.tables["latency"])
    q = query(tmp_path, "SELECT class, count, max_ns FROM latency WHERE class = 'all'")
    assert q["count"].tolist() == [100] and q["max_ns"].tolist() == pytest.approx([FULL_NS])


def test_a_send_time_window_counts_only_the_packets_sent_in_it():
    # the flow sends a packet every 209.6 ns from 0: 10 us to 20 us holds 48 of its 100 packets
    r = run(scenario_from_dict(_with({"sent_from": "10us", "sent_until": "20us"})))
    a = r.latency.set_index("class").loc["all"]
    assert a["count"] == 48 and a["max_ns"] == pytest.approx(FULL_NS)


def test_off_gives_an_empty_table():
    r = run(scenario_from_dict(LONE))
    assert len(r.latency) == 0 and "class" in r.latency.columns


def test_per_hop_classes_and_hash():
    on = scenario_from_dict(_with({"per_hop": True}))
    base = scenario_from_dict(_with(True))
    assert on.core["net"]["record"]["latency"]["per_hop"] is True and on.hash != base.hash
    assert scenario_from_dict(_with({"per_hop": False})).hash == base.hash, "off: the hash stays"
    lat = run(on).latency.set_index("class")
    # a star's switch faces hosts only (its ports are tor-down); the lone flow's packets find its
    # port idle, so each of the 100 waits 0
    row = lat.loc["queueing at tor-down, non-incast"]
    assert row["max_ns"] == 0 and list(lat.index) == ["all", "non-incast", "queueing at tor-down, non-incast"]
    assert lat.loc["all", "count"] == 100
