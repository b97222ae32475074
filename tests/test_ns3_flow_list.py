"""scripts/ns3_flow_list.py: a Floodgate-NS3 run's printed flows become an HPCC flow file that
hopsim runs as the same flows, in the simulator's installation order (hand-made output)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "ns3_flow_list.py"
_spec = importlib.util.spec_from_file_location("ns3_flow_list", SCRIPT)
flow_list = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(flow_list)

# the shape of third.cc's output: settings, thresholds, the incast installed first (ids from
# 50000, started at 2 s + ~100 ns), then a Poisson flow, then a progress line
STDOUT = """FLOW_NUM\t\t\t\t50000
PFC th 4:1-1-4742400, 2-1-4742400,
maxRtt=5090 maxBdp=63625 freetoken=44
incast_time: 1 incast_interval: 5886720
50000 1 0 56940 2.000000185 50000 0
50001 3 0 45260 2.000000175 50001 0
0 2 1 3557 2.00003 0 0
qp finished 1 +2000032626.0ns 2 1 3557 7 0 2.441 1.005
"""
# hosts 0-3 on one switch (4), in the HPCC simulator's topology format
TOPO = "5 1 4\n4\n" + "".join(f"{h} 4 100Gbps 600ns 0\n" for h in range(4))
SCENARIO = (
    'name = "ns3-flow-list"\n'
    'topology = { kind = "hpcc", file = "topo.txt" }\n'
    'workload = { kind = "hpcc_flows", file = "flows.txt", time_offset = "2s" }\n'
)


def test_flows_in_installation_order():
    assert flow_list.flows(STDOUT) == [(1, 0, 56940, "2.000000185"), (3, 0, 45260, "2.000000175"), (2, 1, 3557, "2.00003")]


def test_hopsim_runs_the_listed_flows(tmp_path, cli):
    (tmp_path / "topo.txt").write_text(TOPO)
    (tmp_path / "flows.txt").write_text(flow_list.flow_file(flow_list.flows(STDOUT)))
    (tmp_path / "sc.toml").write_text(SCENARIO)
    code, msg = cli("run", tmp_path / "sc.toml", "--out", tmp_path / "run")
    assert code == 0 and "3/3 flows finished" in msg, msg
    got = duckdb.sql(f"SELECT src, dst, size_bytes, start_ps, sport FROM '{tmp_path / 'run' / 'flows.parquet'}' ORDER BY start_ps").fetchall()
    assert got == [(3, 0, 45260, 175_000, 10000), (1, 0, 56940, 185_000, 10000), (2, 1, 3557, 30_000_000, 10000)]


def test_ports_follow_the_installation_order():
    # host 1 installs a flow starting at 2.00003 s before one starting at 2.000000185 s
    text = "50000 1 0 56940 2.00003 50000 0\n50001 1 2 45260 2.000000185 50001 0\n"
    assert flow_list.flow_file(flow_list.flows(text)) == "2\n1 0 3 100 56940 2.00003 0 10000\n1 2 3 100 45260 2.000000185 0 10001\n"
