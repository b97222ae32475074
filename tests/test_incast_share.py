"""`workload.incast.background_share`: an incast mix whose incast bytes are a share of the
background's, so a load sweep moves both (FlowSail §VI-B: X% background and (0.1 X)% incast)."""

from __future__ import annotations

import pytest

import hopsim

MIX = """
name = "share"
seed = 3
duration = "1ns"
[topology]
kind = "leaf_spine"
hosts_per_tor = 8
tors = 4
spines = 2
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[workload]
kind = "incast_mix"
cdf = "FacebookWebServer_IntraCluster_HomaSim.txt"
load = {load}
load_on = "{on}"
duration = "20ms"
[workload.incast]
degree = 8
flow_size_min = "50KB"
flow_size_max = "200KB"
background_share = 0.1
"""


@pytest.mark.parametrize("on", ["host_links", "core_links"])
def test_the_incast_stays_a_tenth_of_the_background_as_the_load_moves(write, on):
    ratios, incast = [], []
    for load in (0.3, 0.6):
        # the run stops at 1 ns: the flows table lists every flow generated
        f = hopsim.run(hopsim.load_scenario(write(f"s{load}.toml", MIX.format(load=load, on=on)))).df("flows")
        inc = f[f["incast"]]["size_bytes"].sum()
        ratios.append(inc / f[~f["incast"]]["size_bytes"].sum())
        incast.append(inc)
    assert all(abs(r - 0.1) < 0.02 for r in ratios), ratios
    assert 1.6 < incast[1] / incast[0] < 2.4, f"twice the load, about twice the incast: {incast}"
