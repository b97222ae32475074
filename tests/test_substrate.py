"""The queue-level substrate through the front: queue limits agree with the core, wide ports run,
the new settings (queue priorities, schedulers, lossless, AQM, control-frame sizes) reach the core,
and module counters reach summary.json, ports.parquet and the pause table."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from hopsim import _native
from hopsim.scenario import schema as S
from hopsim.scenario.model import load_scenario

from conftest import TINY


def test_schema_and_core_agree_on_the_queue_limit():
    assert S.MAX_QUEUES == _native.MAX_QUEUES == 1024


def test_a_1024_queue_port_runs_and_1025_is_refused(write, cli, tmp_path):
    wide = write("wide.toml", TINY + "[queues]\ncount = 1024\n")
    code, msg = cli("run", wide, "--out", tmp_path / "wide")
    assert code == 0, msg
    summary = json.loads((tmp_path / "wide" / "summary.json").read_text())
    assert summary["flows_finished"] == 4
    too_many = write("too_many.toml", TINY + "[queues]\ncount = 1025\n")
    code, msg = cli("run", too_many, "--out", tmp_path / "too_many")
    assert code == 2
    assert "queues.count" in msg and "1024" in msg
    assert not (tmp_path / "too_many").exists()


def test_queue_settings_are_checked_and_written_out(write, cli, tmp_path):
    bad = write("bad.toml", TINY + "[queues]\ncount = 4\npriority = [0, 1, 2]\n")
    code, msg = cli("validate", bad)
    assert code == 2 and "queues" in msg and "priority has 3 entries for 4 queues" in msg
    bad = write("bad2.toml", TINY + "[queues]\ncount = 4\nscheduler = \"strict\"\nstrict = [7]\n")
    code, msg = cli("validate", bad)
    assert code == 2 and "strict names queue 7" in msg
    bad = write("bad3.toml", TINY + "[queues]\nscheduler = \"fifo\"\n")
    code, msg = cli("validate", bad)
    assert code == 2 and "queues.scheduler" in msg and "'drr'" in msg and "'rank'" in msg
    ok = write("ok.toml", TINY + "[queues]\ncount = 4\nscheduler = \"strict\"\nstrict = [3]\npriority = [3, 3, 3, 3]\n")
    net = load_scenario(ok).core["net"]
    assert net["switch"]["priority"] == [3, 3, 3, 3]
    assert net["switch"]["scheduler"] == {"kind": "strict", "queues": [3]}
    assert load_scenario(write("d.toml", TINY)).core["net"]["switch"]["priority"] == list(range(8))


def test_lossless_is_its_own_setting(tiny):
    def lossless(**over) -> bool:
        return load_scenario(tiny, overrides=over).core["net"]["switch"]["lossless"]

    assert lossless() is True  # auto: PFC pauses, so the fabric is lossless
    assert lossless(**{"flow_control.scheme": "none"}) is False
    assert lossless(**{"flow_control.scheme": "none", "buffer.lossless": True}) is True
    assert lossless(**{"buffer.lossless": False}) is False


def test_aqm_is_its_own_setting(write):
    def aqm(extra: str) -> dict:
        return load_scenario(write("a.toml", TINY + extra)).core["net"]["aqm"]

    assert aqm("") == {"ein": None, "int_max_hops": 0}
    assert aqm('[congestion_control]\nalgorithm = "pulser"\n')["ein"]["n"] == 50
    assert aqm('[congestion_control]\nalgorithm = "hpcc"\n')["int_max_hops"] == 5
    assert aqm('[congestion_control]\nalgorithm = "dctcp"\n[aqm]\nein = "on"\n')["ein"] is not None
    assert aqm('[congestion_control]\nalgorithm = "pulser"\n[aqm]\nein = "off"\n')["ein"] is None


def test_control_frame_sizes_reach_the_core_and_the_counters(write, cli, tmp_path):
    sc = write("c.toml", TINY + "[control]\npfc = 128\n")
    assert load_scenario(sc).core["net"]["control"]["pfc"] == 128
    code, msg = cli("run", sc, "--out", tmp_path / "c")
    assert code == 0, msg
    s = json.loads((tmp_path / "c" / "summary.json").read_text())
    frames = s["pause_frames"] + s["resume_frames"]
    assert frames > 0 and s["counters"]["pfc_bytes"] == 128 * frames


def test_ppfc_counters_and_mechanisms_reach_the_outputs(repo, cli, tmp_path):
    out = tmp_path / "ppfc"
    code, msg = cli("run", repo / "scenarios" / "ppfc-16to1.toml", "--out", out)
    assert code == 0, msg
    s = json.loads((out / "summary.json").read_text())
    predictive = s["modules"]["ppfc_predictive_pauses"]
    assert predictive > 0
    pauses = pq.read_table(out / "pauses.parquet").to_pandas()
    assert (pauses["mechanism"] == "ppfc").sum() >= predictive
    ports = pq.read_table(out / "ports.parquet").to_pandas()
    assert ports["pause_frames"].sum() == (pauses["kind"] == "pause").sum()


def test_pulser_counters_reach_the_outputs(repo, cli, tmp_path):
    out = tmp_path / "pulser"
    code, msg = cli("run", repo / "scenarios" / "pulser-24to1.toml", "--out", out, "--set", "duration=4ms")
    assert code == 0, msg
    m = json.loads((out / "summary.json").read_text())["modules"]
    assert m["ein_marks"] > 0 and m["pulser_cuts"] > 0
    ports = pq.read_table(out / "ports.parquet").to_pandas()
    assert ports["ein_marks"].sum() == m["ein_marks"]
