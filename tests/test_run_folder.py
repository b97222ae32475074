"""A run folder: its files, their columns, the resolved scenario, determinism, the API."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import hopsim
from hopsim.scenario.model import load_scenario

FILES = {
    "scenario.toml", "scenario.json", "scenario.sha256", "params.json", "summary.json", ".hopsim.json",
    "flows.parquet", "pauses.parquet", "control.parquet", "buffer.parquet", "queues.parquet", "ports.parquet",
    "pfc_received.parquet", "qlen.parquet", "trace.parquet", "module_samples.parquet", "latency.parquet", "cwnd.parquet",
}
COLUMNS = {
    "flows": ["flow_id", "src", "dst", "size_bytes", "start_ns", "finish_ns", "fct_ns", "ideal_fct_ns", "slowdown",
              "incast", "finished", "retx_bytes", "dropped_bytes", "start_ps", "finish_ps", "fct_ps", "ideal_fct_ps"],
    "pauses": ["time_ns", "node", "port", "peer_node", "hop_class", "prio", "kind", "quanta", "duration_ns",
               "mechanism"],
    "control": ["time_ns", "node", "port", "peer_node", "hop_class", "kind", "target", "value"],
    "buffer": ["time_ns", "scope", "node", "port", "peer_node", "hop_class", "bytes"],
    "queues": ["time_ns", "node", "port", "peer_node", "hop_class", "bytes"],
    "ports": ["node", "port", "peer_node", "hop_class", "rate_bps", "tx_bytes", "ctrl_bytes", "utilisation",
              "paused_ns", "peak_queue_bytes", "gate_closed_ns", "pause_frames", "resume_frames", "other_ctrl_frames",
              "markers_inserted", "markers_matched", "ein_marks"],
    "pfc_received": ["time_ns", "node", "is_switch", "port", "peer_node", "hop_class", "prio", "pause"],
    "qlen": ["dump_time_ns", "node", "port", "kb", "count"],
    "trace": ["time_ns", "node", "port", "queue", "event", "flow", "seq", "size", "qlen_bytes"],
    "module_samples": ["time_ns", "node", "port", "peer_node", "hop_class", "metric", "value"],
    "latency": ["class", "count", "min_ns", "p50_ns", "p95_ns", "p99_ns", "max_ns", "mean_ns"],
    "cwnd": ["time_ns", "flow", "cwnd_bytes", "delivered_bytes"],
}


@pytest.fixture
def run_dir(tiny, cli, tmp_path):
    out = tmp_path / "run"
    code, msg = cli("run", tiny, "--out", out)
    assert code == 0, msg
    assert "run folder" in msg
    return out


def test_contents_and_columns(run_dir):
    assert {p.name for p in run_dir.iterdir()} == FILES
    for table, cols in COLUMNS.items():
        t = pq.read_table(run_dir / f"{table}.parquet")
        missing = [c for c in cols if c not in t.column_names]
        assert not missing, f"{table}: missing {missing}"
    flows = pq.read_table(run_dir / "flows.parquet").to_pandas()
    assert len(flows) == 4 and flows["finished"].all() and flows["incast"].all()
    assert (flows["dst"] == 0).all()
    # ns columns agree with the exact ps columns
    assert np.allclose(flows["fct_ns"], flows["fct_ps"].astype(float) / 1000)
    assert (flows["fct_ns"] >= flows["ideal_fct_ns"]).all()
    assert np.allclose(flows["slowdown"], flows["fct_ns"] / flows["ideal_fct_ns"])
    pauses = pq.read_table(run_dir / "pauses.parquet").to_pandas()
    assert len(pauses) > 0 and set(pauses["kind"]) <= {"pause", "resume"}
    assert set(pauses["hop_class"]) == {"tor-down"}  # the star switch pauses its host ports
    assert set(pauses["mechanism"]) == {"pfc"}
    control = pq.read_table(run_dir / "control.parquet").to_pandas()
    assert len(control) == len(pauses) and set(control["kind"]) == {"pfc"}
    ports = pq.read_table(run_dir / "ports.parquet").to_pandas()
    assert ports["pause_frames"].sum() == (pauses["kind"] == "pause").sum()
    buf = pq.read_table(run_dir / "buffer.parquet").to_pandas()
    assert set(buf["scope"]) == {"switch", "port"}
    assert buf.loc[buf["scope"] == "switch", "port"].isna().all()
    q = pq.read_table(run_dir / "queues.parquet").to_pandas()
    assert len(q) > 10 and (q["node"] == 5).all() and (q["port"] == 0).all() and q["bytes"].max() > 0


def test_summary(run_dir):
    s = json.loads((run_dir / "summary.json").read_text())
    for k in ("flows", "flows_finished", "drops", "pause_frames", "pause_time_ns", "events", "wall_time_s",
              "events_per_s", "scenario_hash", "counters"):
        assert k in s, k
    assert s["flows"] == s["flows_finished"] == 4
    assert s["drops"] == 0 and s["pause_frames"] > 0 and s["pause_time_ns"] > 0
    assert s["events"] > 1000 and s["wall_time_s"] > 0
    assert s["scenario_hash"] == (run_dir / "scenario.sha256").read_text().strip()


def test_the_engines_peaks_are_diagnostics_not_counters(run_dir):
    """They change with how a run is split over threads, where every table and counter does not."""
    s = json.loads((run_dir / "summary.json").read_text())
    peaks = ("peak_packets_alive", "peak_live_flows", "peak_pending_events")
    assert not set(peaks) & set(s["counters"])
    assert s["diagnostics"]["depends_on_split"] is True
    assert all(s["diagnostics"][k] > 0 for k in peaks), s["diagnostics"]


def test_resolved_scenario_reloads_to_the_same_hash(run_dir):
    sc = load_scenario(run_dir / "scenario.toml")
    assert sc.hash == (run_dir / "scenario.sha256").read_text().strip()
    assert json.loads((run_dir / "scenario.json").read_text()) == sc.core
    # every default is written out
    text = (run_dir / "scenario.toml").read_text()
    for key in ("[congestion_control.dcqcn]", "[flow_control.ppfc]", "alpha = 0.125", 'headroom = "auto"'):
        assert key in text


def test_python_api_matches_cli_and_is_deterministic(run_dir, tiny):
    sc = hopsim.load_scenario(tiny)
    a, b = hopsim.run(sc), hopsim.run(sc)
    assert a.flows.equals(b.flows)
    cli_flows = pq.read_table(run_dir / "flows.parquet").to_pandas()
    assert a.flows.equals(cli_flows)
    assert a.summary["events"] == json.loads((run_dir / "summary.json").read_text())["events"]
    other = hopsim.run(sc.with_overrides({"flow_control.scheme": "none", "buffer.size": "100KB"}))
    assert other.summary["pause_frames"] == 0 and other.summary["drops"] > 0


def test_force_replaces(run_dir, tiny, cli):
    code, msg = cli("run", tiny, "--out", run_dir, "--force", "--set", "seed=7")
    assert code == 0, msg
    assert json.loads((run_dir / "scenario.json").read_text())["net"]["seed"] == 7
    assert not [p for p in run_dir.parent.iterdir() if p.name.startswith(".")]


def test_every_shipped_scenario_validates(repo, cli):
    paths = sorted((repo / "scenarios").glob("*.toml"))
    assert {p.stem for p in paths} >= {"small-incast-star", "ppfc-16to1", "leaf-spine-incastmix", "benchmark-hpcc-320"}
    for p in paths:
        code, msg = cli("validate", p)
        assert code == 0, msg
    from hopsim.sweep import plan_sweep

    for p in sorted((repo / "scenarios" / "sweeps").glob("*.toml")):
        _, points = plan_sweep(p)
        assert points


def test_shipped_small_scenarios_run(repo):
    for name in ("small-incast-star", "ppfc-16to1", "leaf-spine-incastmix"):
        res = hopsim.run(repo / "scenarios" / f"{name}.toml")
        assert res.summary["flows_finished"] == res.summary["flows"] > 0, name
