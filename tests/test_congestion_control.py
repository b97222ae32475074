"""The congestion-control suite from the scenario file: every algorithm is selectable, its
parameters take units and are range-checked, the core JSON carries them, and the shipped scenario
of each runs and shows its defining behaviour in the results."""

from __future__ import annotations

import numpy as np
import pytest

import hopsim
from hopsim.errors import ScenarioError
from hopsim.scenario.model import scenario_from_dict

STAR = {"topology": {"kind": "star", "hosts": 3, "rate": "10Gbps", "delay": "10us"},
        "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 2, "size": "200KB"}, {"src": 1, "dst": 2, "size": "200KB"}]}}


def with_cc(cc: dict, **more) -> dict:
    return {**STAR, "congestion_control": cc, **more}


def core_cc(cc: dict) -> dict:
    return scenario_from_dict(with_cc(cc)).core["net"]["congestion_control"]


def test_each_algorithm_writes_its_defaults_into_core_json():
    d = core_cc({"algorithm": "dctcp"})
    assert d == {"algorithm": "dctcp", "g": 0.0625, "initial_alpha": 1.0, "start": "line_rate", "initial_window": 10}
    t = core_cc({"algorithm": "timely"})
    assert (t["t_low"], t["t_high"], t["min_rtt"]) == (50_000_000, 500_000_000, 20_000_000)  # ps
    assert (t["delta_at_10g"], t["hai_at_10g"], t["beta"]) == (10_000_000, 50_000_000, 0.8)
    h = core_cc({"algorithm": "hpcc"})
    assert (h["eta"], h["max_stage"], h["base_rtt"]) == (0.95, 5, None)
    assert h["int_header"] == {"hop_bytes": 8, "base_bytes": 2, "max_hops": 5}
    p = core_cc({"algorithm": "pulser"})
    assert p["cwnd_safe"] == 4 and p["ein"] == {"n": 50, "threshold": 0.25, "high_water_mark": None}
    i = core_cc({"algorithm": "ictcp"})
    assert (i["alpha"], i["gamma1"], i["gamma2"], i["min_rwnd"]) == (0.9, 0.1, 0.5, 2)


def test_parameters_take_units():
    h = core_cc({"algorithm": "hpcc", "hpcc": {"base_rtt": "9us", "rai_at_25g": "20Mbps", "int_header": {"max_hops": 6}}})
    assert (h["base_rtt"], h["rai_at_25g"], h["int_header"]["max_hops"]) == (9_000_000, 20_000_000, 6)
    p = core_cc({"algorithm": "pulser", "pulser": {"ein": {"threshold": "30%", "high_water_mark": "20KB"}}})
    assert p["ein"]["threshold"] == pytest.approx(0.3) and p["ein"]["high_water_mark"] == 20_000
    t = core_cc({"algorithm": "timely", "timely": {"t_low": "10us"}})
    assert t["t_low"] == 10_000_000


@pytest.mark.parametrize("cc, needles", [
    ({"algorithm": "hpcc", "hpcc": {"eta": 1.5}}, ["congestion_control.hpcc.eta", "less than or equal to 1"]),
    ({"algorithm": "timely", "timely": {"t_low": "1ms"}}, ["t_low (1ms) is above t_high"]),
    ({"algorithm": "pulser", "pulser": {"ein": {"N": 10}}}, ["unknown key 'N'", "allowed here: high_water_mark, n, threshold"]),
    ({"algorithm": "ictcp", "ictcp": {"gamma1": 0.7}}, ["gamma1 (0.7) is above gamma2 (0.5)"]),
    ({"algorithm": "dctcp", "dctcp": {"start": "fast"}}, ["congestion_control.dctcp.start", "'line_rate' or 'slow_start'"]),
    ({"algorithm": "bbr"}, ["congestion_control.algorithm", "'dctcp'", "'ictcp'"]),
])
def test_bad_parameters_name_the_field(cc, needles):
    with pytest.raises(ScenarioError) as e:
        scenario_from_dict(with_cc(cc))
    msg = str(e.value)
    for n in needles:
        assert n in msg, msg


@pytest.mark.parametrize("algorithm", ["dctcp", "timely", "hpcc", "pulser", "ictcp"])
def test_every_algorithm_completes_a_small_run(algorithm):
    sc = scenario_from_dict(with_cc({"algorithm": algorithm}, flow_control={"scheme": "none"}))
    res = hopsim.run(sc)
    assert res.summary["flows_finished"] == 2, algorithm


def test_shipped_scenarios_show_each_algorithm(repo):
    runs = {n: hopsim.run(repo / "scenarios" / f"{n}.toml")
            for n in ("dctcp-two-flows", "timely-burst", "hpcc-4to1", "pulser-24to1", "ictcp-24to1")}
    for n, r in runs.items():
        assert r.summary["drops"] == 0, n
    # DCTCP: the bottleneck queue hovers around K = 68 KB, never far above it
    q = runs["dctcp-two-flows"].queues
    late = q[q.time_ps > 5e9].bytes
    assert 0.3 * 68_120 < late.mean() < 1.3 * 68_120 and late.max() < 2 * 68_120
    # HPCC: a near-empty bottleneck queue
    q = runs["hpcc-4to1"].queues
    assert q[q.time_ps > 5e8].bytes.mean() < 5_000
    # Pulser and ICTCP: the incast completes without loss; ICTCP's queue stays small
    assert runs["pulser-24to1"].summary["flows_finished"] == 24
    assert runs["ictcp-24to1"].summary["flows_finished"] == 24
    assert runs["ictcp-24to1"].summary["max_switch_buffer_bytes"] < 100_000
    # TIMELY: the burst finishes and the long flow is still running
    assert runs["timely-burst"].summary["flows_finished"] == 8
    assert np.isnan(runs["timely-burst"].flows.slowdown[0])
