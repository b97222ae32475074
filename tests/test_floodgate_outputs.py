"""`hopsim.interop.floodgate.outputs`: Floodgate-NS3's buffer logs, PFC file and standard output read by
hopsim's hop classes (hand-made files in its formats, on a 2-ToR, 1-core topology)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopsim.interop.floodgate import outputs as O
from hopsim.errors import ScenarioError
from hopsim.interop.floodgate.files import read_topology

# hosts 0-3, ToRs 4 (hosts 0, 1) and 5 (hosts 2, 3), core 6; links in this order
TOPO = "7 3 2 2 1 6\n4\n5\n6\n0 4 100 600\n1 4 100 600\n2 5 100 600\n3 5 100 600\n4 6 400 600\n5 6 400 600\n"


@pytest.fixture
def topo(tmp_path):
    p = tmp_path / "t.topo"
    p.write_text(TOPO)
    return read_topology(p, TOPO)


def test_devices_map_to_hop_classes_by_queue_id_and_by_interface(topo):
    by_queue, by_if = O.hop_classes(topo)
    # link j makes queue 2j at its first node, 2j + 1 at its second
    assert by_queue[0] == "host-up" and by_queue[1] == "tor-down"
    assert by_queue[8] == "tor-up" and by_queue[9] == "agg-down"
    # interfaces count each node's links from 1 in file order: ToR 4 has hosts 0, 1, then the core
    assert [by_if[(4, i)] for i in (1, 2, 3)] == ["tor-down", "tor-down", "tor-up"]
    assert by_if[(6, 1)] == by_if[(6, 2)] == "agg-down" and by_if[(0, 1)] == "host-up"


def test_buffer_peaks_per_port_class_and_per_switch_class(topo, tmp_path):
    tor, core = tmp_path / "x-buffer0.log", tmp_path / "x-buffer2.log"
    # time queue port_all port_data egress voq0 voq switch
    tor.write_text("+2000000000.0ns 1 5000 0 0 0 0 9000\n+2000000000.0ns 8 3000 0 0 0 0 9000\n"
                   "+2000010000.0ns 1 7000 0 0 0 0 12000\n+2000010000.0ns 8 1000 0 0 0 0 12000\n")
    core.write_text("+2000000000.0ns 9 4000 0 0 0 0 4000\n+2000000000.0ns 11 6000 0 0 0 0 10000\n")
    logs = O.buffer_logs(tmp_path, topo)
    assert logs == {4: tor, 6: core}  # buffer<k> is node hosts + k
    port, switch = O.buffer_peaks(topo, logs)
    assert port == {"tor-down": 7000, "tor-up": 3000, "agg-down": 6000}
    assert switch == {"tor": 12000, "core": 10000}
    core.write_text("+2000000000.0ns 99 4000 0 0 0 0 4000\n")
    with pytest.raises(ScenarioError, match="queue_id 99 is no device"):
        O.buffer_peaks(topo, logs)


def test_paused_time_counts_each_paused_class_of_a_device_as_the_simulator_keeps_them(topo, tmp_path):
    pfc = tmp_path / "pfc.txt"
    # core 6 paused on its link to ToR 4 twice (100 + 50 ns), a resume without a pause counts
    # nothing; host 0 paused for one destination at 1000, a second at 1100, one resumed at 1200,
    # the other never: 100 + 2 x 100 + 300 to the end given (1500), the sum over destinations
    # (first pause to first resume would say 200)
    pfc.write_text("50 6 1 1 0\n100 6 1 1 1\n200 6 1 1 0\n300 6 1 1 1\n350 6 1 1 0\n"
                   "1000 0 0 1 1\n1100 0 0 1 1\n1200 0 0 1 0\n")
    assert O.paused_ns(topo, pfc, 1500) == {"agg-down": 150, "host-up": 600}
    pfc.write_text("100 6 1 7 1\n")
    with pytest.raises(ScenarioError, match="node 6 has no device 7"):
        O.paused_ns(topo, pfc, 0)


def test_a_runs_destination_pauses_are_counted_by_the_same_rule_as_its_pfc_file(tmp_path):
    """hopsim's side: the host port's destination pauses from the control table, summed over
    destinations exactly as `paused_ns` sums its PFC file's (one rule on both sides)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    run.mkdir()
    pq.write_table(pa.table({"hop_class": ["agg-down"], "paused_ns": [150.0]}), run / "ports.parquet")
    # host 0's port 0: destination 9 paused 1000-1200, destination 10 paused 1100-1500
    pq.write_table(pa.table({"node": [4, 4, 4, 4], "port": [0, 0, 0, 0], "target": [9, 10, 9, 10], "value": [1, 1, 0, 0],
                             "time_ns": [1000, 1100, 1200, 1500], "kind": ["dst_pause"] * 4}), run / "control.parquet")
    assert O.run_paused_ns(run) == {"agg-down": 150.0, "host-up": 600.0}


def test_the_incast_hosts_come_from_its_incast_time(topo):
    assert O.incast_dsts(topo, "x\nincast_time: 3 incast_interval: 10\n") == [0, 2]  # rounds 0, 1, 2 -> racks 0, 1, 0
    assert O.incast_dsts(topo, "no incast here\n") == []


def test_qlen_peaks_take_each_port_class_highest_filled_kilobyte_bin(topo, tmp_path):
    q = tmp_path / "qlen.txt"
    # ToR 4's devices 1, 2 face hosts, 3 the core; bins are 1 KB and the last with a count is the peak
    first = "time: 2000000000\n4 1 0th: 1\n4 3 0th: 1\n6 2 0th: 1\n"
    q.write_text(first + "time: 2001000000\n4 1 0th: 5 1th: 0 2th: 3 3th: 0\n4 3 0th: 9 1th: 1\n"
                 "6 2 0th: 2 1th: 0 2th: 0 3th: 0 4th: 7\n4-total 0th: 1\nmaxPortLength 4000 maxSwitchLength 4000\n")
    assert O.qlen_peaks(topo, q) == {"tor-down": 2, "tor-up": 1, "agg-down": 4}
    # a run over within 1 ms of the monitor's start: its one dump, of the one sample then, holds no peak
    q.write_text(first)
    assert O.qlen_peaks(topo, q) is None
    q.write_text("time: 2000000000\n4 9 0th: 5\n")
    with pytest.raises(ScenarioError, match="node 4 has no device 9"):
        O.qlen_peaks(topo, q)
