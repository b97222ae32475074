"""import-floodgate: SIMULATOR_STOP_TIME written as the scenario's duration and read as
import-hpcc reads it; negative switch counts, multiples and timeouts refused; errors found in
the converted topology named by the user's file and line."""

from __future__ import annotations

import tomllib

import pytest

from test_floodgate_import import IDEAL, PRACTICAL, TOPO, _import, ns3  # noqa: F401 (ns3: a fixture)


def test_the_stop_time_is_the_duration(ns3, tmp_path, cli):
    """Its flows start at 2 s (the time offset, as import-hpcc takes it) and it stops at 4 s."""
    code, msg, out = _import(cli, ns3, IDEAL, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 0, msg
    sc = tomllib.loads(out.read_text())
    assert sc["duration"] == "2000000000000ps" and sc["workload"]["time_offset"] == "2s"
    assert "SIMULATOR_STOP_TIME" in out.read_text().split("# Keys honoured:")[1].splitlines()[0]


@pytest.mark.parametrize("value,why", [("0", "is not after the flows' time offset"), ("-1", "is not after"),
                                       ("nan", "cannot read 'nan'"), ("", "expected one value, got none")])
def test_a_stop_time_import_hpcc_refuses_is_refused(ns3, tmp_path, cli, value, why):
    code, msg, out = _import(cli, ns3, IDEAL.replace("SIMULATOR_STOP_TIME 4.00", f"SIMULATOR_STOP_TIME {value}"),
                             tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 2 and "SIMULATOR_STOP_TIME" in msg and why in msg, msg
    assert not out.exists()


@pytest.mark.parametrize("config,key,value", [(IDEAL, "SWITCH_ACK_TH_M 1.5", "SWITCH_ACK_TH_M -1"),
                                              (IDEAL, "SWITCH_SYN_TIMEOUT_US 0", "SWITCH_SYN_TIMEOUT_US -5"),
                                              (PRACTICAL, "SWTICH_BYTE_COUNTER 10240", "SWTICH_BYTE_COUNTER -3")])
def test_negative_switch_settings_are_refused(ns3, tmp_path, cli, config, key, value):
    code, msg, out = _import(cli, ns3, config.replace(key, value), tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 2 and f"{value.split()[0]}: {value.split()[1]}" in msg and "allowed: 0 or more" in msg, msg
    assert not out.exists()


@pytest.mark.parametrize("old,new,line", [("0 4 100 600", "4 4 100 600", 5), ("5 6 400 600", "6 6 400 600", 10)])
def test_a_topology_error_names_the_users_file_and_line(ns3, tmp_path, cli, old, new, line):
    """A link that joins a node to itself is found by the HPCC importer in the converted file
    (removed afterwards): the message names the user's topology file and its line."""
    (ns3 / "mix" / "topo.topo").write_text(TOPO.replace(old, new))
    code, msg, out = _import(cli, ns3, IDEAL, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 2, msg
    assert f"{ns3 / 'mix' / 'topo.topo'}: line {line}: link joins" in msg, msg
    assert "topology.txt" not in msg
    assert not list(out.parent.glob("*")) if out.parent.exists() else True
