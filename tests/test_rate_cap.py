"""Sending-rate caps through the front (issue 13 item 2): a flow's `rate_cap` in an explicit list,
every host's `transport.rate_cap` and per-host `transport.host_rate_caps` reach the core, pace the
flow, and are left out of the core's JSON while unset (scenarios without caps keep their hash);
bad values are errors naming the field."""

from __future__ import annotations

import pyarrow.parquet as pq

from hopsim.scenario.model import load_scenario

LONE = """
name = "lone"
seed = 1
[topology]
kind = "star"
hosts = 4
rate = "100Gbps"
delay = "1us"
[workload]
kind = "flows"
flows = [{src = 0, dst = 3, size = "1MB", start = "3us"RATE}]
[congestion_control]
algorithm = "none"
"""


def test_a_capped_flow_runs_at_its_cap(write, cli, tmp_path):
    sc = write("cap.toml", LONE.replace("RATE", ', rate_cap = "20Gbps"'))
    code, msg = cli("run", sc, "--out", tmp_path / "cap")
    assert code == 0, msg
    fct = pq.read_table(tmp_path / "cap" / "flows.parquet").column("fct_ps").to_pylist()[0]
    # 1,000 packets of 1,048 B: 999 gaps of 419.2 ns at 20 Gb/s, then two 100 Gb/s hops of 1 us
    assert fct == 999 * 419_200 + 2 * (83_840 + 1_000_000)
    flows = load_scenario(sc).core["workload"]["flows"]
    assert flows[0]["rate_cap"] == 20_000_000_000


def test_unset_caps_stay_out_of_the_core_json(write):
    plain = load_scenario(write("p.toml", LONE.replace("RATE", ""))).core
    assert "rate_cap" not in plain["workload"]["flows"][0]
    assert "rate_cap" not in plain["net"]["transport"] and "host_rate_caps" not in plain["net"]["transport"]


def test_host_caps_reach_the_core(write):
    text = LONE.replace("RATE", "") + '[transport]\nrate_cap = "40Gbps"\nhost_rate_caps = [{host = 0, rate = "10Gbps"}]\n'
    t = load_scenario(write("h.toml", text)).core["net"]["transport"]
    assert t["rate_cap"] == 40_000_000_000
    assert t["host_rate_caps"] == [{"host": 0, "rate": 10_000_000_000}]


def test_bad_caps_name_the_field(write, cli):
    code, msg = cli("validate", write("z.toml", LONE.replace("RATE", ', rate_cap = "0Gbps"')))
    assert code == 2 and "rate_cap" in msg and "above 0" in msg
    code, msg = cli("validate", write("u.toml", LONE.replace("RATE", ', rate_cap = "20GB"')))
    assert code == 2 and "rate_cap" in msg and "Gbps" in msg
    code, msg = cli("validate", write("s.toml", LONE.replace("RATE", "") + "[transport]\nhost_rate_caps = [{host = 4, rate = \"1Gbps\"}]\n"))
    assert code == 2 and "transport.host_rate_caps" in msg and "node 4 is not a host" in msg

