"""`hopsim import-floodgate`: Floodgate-NS3's config, topology, Floodgate and flow files (hand-made
in its formats) become a scenario whose options say what it does, which runs; bad input is one
line naming the file, line and field, exit 2, and nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import import_config

from hopsim.interop.floodgate.importer import credit_frame

# 2 ToRs (4, 5) of 2 hosts, one core (6): its header `nodes switches hosts_per_rack racks cores links`
TOPO = "7 3 2 2 1 6\n4\n5\n6\n0 4 100 600\n1 4 100 600\n2 5 100 600\n3 5 100 600\n4 6 400 600\n5 6 400 600\n"
FG_CFG = "3{switches} 0{rule switches} 100{voqs} 1{dynamic hash}\n4\n5\n6\n"
COMMON = """ENABLE_QCN 1
PACKET_PAYLOAD_SIZE 1460
USE_FLOODGATE 1
SWITCH_WIN_M 1.5
SWITCH_ACK_TH_M 1.5
RESET_ONLY_TOR_SWITCH_WIN 0
SWITCH_ABSOLUTE_PSN 0
SWITCH_SYN_TIMEOUT_US 0
FLOODGATE_CONFIG_FILE mix/fg.cfg
ROUTING_MODE 0
SYMMETRIC_ROUTING_MODE 0
FLOW_FROM_FILE 0
FLOW_CDF 4
TOPOLOGY_FILE mix/topo.topo
FCT_OUTPUT_FILE mix/fct.txt
SIMULATOR_STOP_TIME 4.00
CC_MODE 1
RATE_AI 50Mb/s
RATE_HAI 100Mb/s
ACK_HIGH_PRIO 0
KMAX_MAP 2 100000000000 1600 400000000000 6400
KMIN_MAP 2 100000000000 400 400000000000 1600
PMAX_MAP 2 100000000000 0.2 400000000000 0.2
BUFFER_SIZE 20
"""
IDEAL = COMMON + """USE_DYNAMIC_PFC_THRESHOLD 0
SRCTOR_DST_PFC 1
SWTICH_ACK_MODE 1
SWTICH_BYTE_COUNTER 1
SWTICH_CREDIT_INTERVAL 0
"""
PRACTICAL = COMMON + """USE_DYNAMIC_PFC_THRESHOLD 1
SRCTOR_DST_PFC 0
SWTICH_ACK_MODE 2
SWTICH_BYTE_COUNTER 10240
SWTICH_CREDIT_INTERVAL 10
"""
# its standard output: two flows to host 0 from the other rack (the incast), one to host 1, one other
STDOUT = """FLOW_NUM 4
0 2 0 51100 2.000000100 0 0
1 3 0 43800 2.000000120 1 0
2 2 1 58400 2.000000110 2 0
3 1 3 20000 2.000005000 3 0
"""


@pytest.fixture
def ns3(tmp_path):
    d = tmp_path / "fg"
    (d / "mix").mkdir(parents=True)
    (d / "mix" / "topo.topo").write_text(TOPO)
    (d / "mix" / "fg.cfg").write_text(FG_CFG)
    (d / "stdout.txt").write_text(STDOUT)
    return d


def _import(cli, d, text, tmp_path, *extra):
    return import_config(cli, "import-floodgate", d / "config.ini", text, tmp_path, *extra)


def test_the_ideal_config_becomes_the_ideal_design_with_its_per_source_host_dst_pause(ns3, tmp_path, cli):
    code, msg, out = _import(cli, ns3, IDEAL, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 0, msg
    sc = tomllib.loads(out.read_text())
    fg = sc["flow_control"]["floodgate"]
    assert sc["flow_control"]["scheme"] == "floodgate"
    assert fg["ideal"] is True and fg["m"] == 1.5
    # SWITCH_ACK_TH_M 1.5: its ideal design delays credits too
    assert fg["ideal_delay_credit"] is True and fg["thre_credit_bdp"] > 0
    # SRCTOR_DST_PFC 1: dstPause per (source host, destination), no PFC between switches
    assert fg["dst_pause"] and fg["dst_pause_on"] == "source_host" and fg["pfc"] is False
    # 1.5 x 2 x 100 Gb/s x 600 ns = 22,500 B + 4 KiB reserve over the host link's BDP (15,000 + 1,532 B)
    assert fg["thre_off_bdp"] == pytest.approx((22_500 + 4096) / 16_532, rel=1e-5)
    assert fg["thre_on_bdp"] == pytest.approx((22_500 + 1024) / 16_532, rel=1e-5)
    # its VOQs, in the ideal design too: FIFOs from one switch-wide group of the config file's size
    assert (fg["voq_pool"], fg["max_voq"], sc["queues"]["count"]) == ("shared", 100, 101)
    t = sc["transport"]
    assert (t["header"], t["ack"], t["ack_min"], t["ack_priority"]) == (72, 70, 84, "data")
    assert sc["control"] == {"pfc": 70, "credit": 58}
    assert (sc["buffer"]["alpha"], sc["buffer"]["headroom"]) == (0.25, "floodgate")
    assert "SRCTOR_DST_PFC" in out.read_text().split("# Keys honoured:")[1].splitlines()[0]
    assert (out.parent / "sc.topology.txt").read_text().splitlines()[:3] == ["7 3 6", "4 5 6", "0 4 100Gbps 600ns 0"]
    code, msg = cli("run", out, "--out", tmp_path / "run")
    assert code == 0, msg
    assert "4/4 flows finished" in msg


def test_the_practical_config_sets_its_window_multiplier_byte_counter_credit_frame_and_voq_pool(ns3, tmp_path, cli):
    code, msg, out = _import(cli, ns3, PRACTICAL, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 0, msg
    sc = tomllib.loads(out.read_text())
    fg = sc["flow_control"]["floodgate"]
    assert "ideal" not in fg
    assert (fg["T"], fg["win_m"], fg["byte_counter"]) == ("10us", 1.5, 10240)
    assert (fg["voq_pool"], fg["max_voq"], fg["pfc"]) == ("shared", 100, True)
    assert sc["queues"]["count"] == 101
    # its ECN reads a port's bytes from admission, VOQ packets included
    assert fg["ecn_counts_voq"] is True
    # a packet goes while its own size fits, and a credit moves VOQ packets into the egress FIFO
    assert (fg["window_fit"], fg["voq_service"]) == ("own_size", "egress_fifo")
    head = out.read_text().split("\n[")[0]
    assert "Not expressible" not in head and "voq_service" in head and "window_fit" in head
    # m_th_ack = 400 Gb/s x 600 ns x 2 x 1.5 = 90,000 B over the 400 Gb/s hop's BDP (60,000 + 1,532 B)
    assert fg["thre_credit_bdp"] == pytest.approx(90_000 / 61_532, rel=1e-5)
    # IPv4 20 + PPP 38, and per destination entry bits(min(ceil(50 GB/s x 10 us / 1460) x 1460, 10240)) = 14
    # and bits(4 hosts) = 3
    assert sc["control"]["credit"] == 58 + 14 + 3 == credit_frame(2, 10240, 10, 400, 4)
    code, msg = cli("run", out, "--out", tmp_path / "run")
    assert code == 0, msg


def test_its_dcqcn_config_routes_acks_back_along_their_data_and_numbers_ports_per_source_host(ns3, tmp_path, cli):
    text = COMMON.replace("USE_FLOODGATE 1", "USE_FLOODGATE 0").replace("SYMMETRIC_ROUTING_MODE 0", "SYMMETRIC_ROUTING_MODE 1")
    code, msg, out = _import(cli, ns3, text + "SWTICH_ACK_MODE 2\n", tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 0, msg
    sc = tomllib.loads(out.read_text())
    assert sc["flow_control"]["scheme"] == "pfc"
    assert sc["routing"] == {"ecmp": "hpcc", "ack_path": "reverse", "neighbour_order": "descending"}
    # no Floodgate in this run: its header says nothing of Floodgate's options
    head = out.read_text().split("\n[")[0]
    assert "Not expressible" not in head and "flow_control.floodgate" not in head and "VOQ" not in head, head
    assert sc["workload"]["source_ports"] == "per_source_host"
    assert sc["tx_time"] == "whole_ns"
    code, msg = cli("run", out, "--out", tmp_path / "run")
    assert code == 0, msg
    assert "4/4 flows finished" in msg
    # the ports as its third.cc numbers them: host 2 sends two flows (10000, 10001), host 3 and 1 one each
    import pyarrow.parquet as pq
    f = pq.read_table(tmp_path / "run" / "flows.parquet", columns=["src", "sport"]).to_pydict()
    assert sorted(zip(f["src"], f["sport"])) == [(1, 10000), (2, 10000), (2, 10001), (3, 10000)]


def test_a_flow_file_in_its_own_format_is_read_with_flow_from_file_1(ns3, tmp_path, cli):
    (ns3 / "mix" / "flow.txt").write_text("2 1\n2 0 51100 2.0000001 0 0\n3 0 43800 2.0000001 1 0\n")
    text = IDEAL.replace("FLOW_FROM_FILE 0", "FLOW_FROM_FILE 1\nFLOW_FILE mix/flow.txt")
    code, msg, out = _import(cli, ns3, text, tmp_path)
    assert code == 0, msg
    # each flow's source port as its eighth field (after a priority group of 0)
    assert (out.parent / "sc.flows.txt").read_text() == "2\n2 0 3 100 51100 2.0000001 0 10000\n3 0 3 100 43800 2.0000001 0 10000\n"


def test_source_ports_count_in_its_flow_lists_order_not_in_start_order(ns3, tmp_path, cli):
    """third.cc numbers a host's ports as it installs its flows, in its list's order, where its
    incast generator puts a later incast's flows before Poisson flows that start earlier."""
    (ns3 / "later.txt").write_text("0 2 0 51100 2.000300000 0 0\n1 2 1 20000 2.000000100 1 0\n2 2 0 43800 2.000600000 2 0\n")
    text = COMMON.replace("USE_FLOODGATE 1", "USE_FLOODGATE 0")
    code, msg, out = _import(cli, ns3, text + "SWTICH_ACK_MODE 2\n", tmp_path, "--flows", ns3 / "later.txt")
    assert code == 0, msg
    code, msg = cli("run", out, "--out", tmp_path / "run")
    assert code == 0, msg
    import pyarrow.parquet as pq
    f = pq.read_table(tmp_path / "run" / "flows.parquet", columns=["dst", "start_ns", "sport"]).to_pydict()
    # listed first though it starts second: 10000; the earliest, listed second: 10001
    assert sorted(zip(f["start_ns"], f["dst"], f["sport"])) == [(100.0, 1, 10001), (300000.0, 0, 10000), (600000.0, 0, 10002)]


@pytest.mark.parametrize("edit,needle", [
    (("SWTICH_ACK_MODE 1", "SWTICH_ACK_MODE 0"), "SWTICH_ACK_MODE: 0 (0: hosts' per-packet ACKs"),
    (("ROUTING_MODE 0", "ROUTING_MODE 1"), "ROUTING_MODE: 1 (1: DRILL"),
    (("SYMMETRIC_ROUTING_MODE 0", "SYMMETRIC_ROUTING_MODE 2"), "SYMMETRIC_ROUTING_MODE: 2; allowed: 0 or 1"),
    (("FLOW_FROM_FILE 0", "FLOW_FROM_FILE 1"), "FLOW_FILE: missing; FLOW_FROM_FILE 1 requires it"),
])
def test_what_it_cannot_honour_is_refused_naming_the_key_and_what_is_allowed(ns3, tmp_path, cli, edit, needle):
    code, msg, out = _import(cli, ns3, IDEAL.replace(*edit), tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 2, msg
    assert needle in msg, msg
    assert "Traceback" not in msg
    assert not out.parent.exists() or not any(out.parent.iterdir())


@pytest.mark.parametrize("name,data,needle", [
    ("mix/topo.topo", TOPO.replace("3 5 100 600", "3 5 fast 600"), "topo.topo line 8: rate_gbps: 'fast' is not a whole number"),
    ("mix/topo.topo", TOPO.replace("5 6 400 600", "5 9 400 600"), "topo.topo line 10: b: 9 is not a node (nodes 0 to 6)"),
    ("mix/topo.topo", "7 3 2\n", "topo.topo line 1: expected `nodes switches hosts_per_rack racks cores links`"),
    ("mix/fg.cfg", "2 0 100 1\n4\n5\n", "every switch listed"),
    ("stdout.txt", "nothing here\n", "no flow line"),
])
def test_a_bad_file_is_named_with_its_line_and_field_and_nothing_is_written(ns3, tmp_path, cli, name, data, needle):
    (ns3 / name).write_text(data)
    code, msg, out = _import(cli, ns3, IDEAL, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 2, msg
    assert needle in msg, msg
    assert not out.parent.exists() or not any(out.parent.iterdir())


def test_without_the_flows_it_drew_the_import_says_what_to_give(ns3, tmp_path, cli):
    code, msg, _ = _import(cli, ns3, IDEAL, tmp_path)
    assert code == 2
    assert "--flows" in msg and "FLOW_FROM_FILE" in msg


def test_its_oracle_fct_by_hand():
    from hopsim.interop.floodgate.exporter import oracle_ns

    # host 2 to host 0 over ToR, core, ToR: pd = 4 x 600 ns, td = 80 + 20 + 20 + 80; 35 full packets
    # of 1460 B: D(1538) + D(84) = 2.7076 + 2.4168 us, then 34 x 1538 B and 78 B at 12.5 GB/s
    want = (2.7076 + 2.4168) * 1e3 + 34 * 1538 / 12.5 + 78 / 12.5
    assert abs(oracle_ns(2400, 200, 51100, 1460, 100 * 10**9) - want) <= 1
    # under one packet: D(left) + D(84)
    assert abs(oracle_ns(2400, 200, 500, 1460, 100 * 10**9) - ((2400 + 100) + (2400 + 16.8))) <= 1


def test_export_in_its_fct_format_and_compare_on_its_oracle_with_the_incast_split(ns3, tmp_path, cli):
    code, msg, out = _import(cli, ns3, IDEAL, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 0, msg
    run = tmp_path / "run"
    assert cli("run", out, "--out", run)[0] == 0
    code, msg = cli("export-floodgate", run, "--out", tmp_path / "fct.txt")
    assert code == 0, msg
    lines = (tmp_path / "fct.txt").read_text().splitlines()
    assert len(lines) == 4
    f = {(l.split("\t")[0], l.split("\t")[2]): l.split("\t") for l in lines}
    row = f[("2", "51100")]
    assert len(row) == 9 and row[1] == "0" and row[3].startswith("2000000")  # start in ns, the 2 s offset back
    assert abs(float(row[7]) - 9.314) < 0.002  # Get_Oracle_Fct, as by hand above
    # the file against the run it came from: the same FCTs
    code, msg = cli("compare-fct", tmp_path / "fct.txt", run, "--basis", "ref", "--tol", "0.001")
    assert code == 0, msg
    # the incast split: host 0's two flows by --incast-dsts (an imported flow list has no tags)
    code, msg = cli("compare-fct", tmp_path / "fct.txt", run, "--flows", "incast", "--incast-dsts", "0", "--json", tmp_path / "i.json")
    assert code == 0, msg
    assert json.loads((tmp_path / "i.json").read_text())["matched"] == 2
    code, msg = cli("compare-fct", tmp_path / "fct.txt", tmp_path / "fct.txt", "--flows", "incast")
    assert code == 2 and "run folder" in msg, msg
    code, msg = cli("compare-fct", tmp_path / "fct.txt", run, "--basis", "theirs")
    assert code == 2 and "allowed: own, ref" in msg, msg


AGREEMENT = Path(__file__).resolve().parents[1] / "scripts" / "floodgate-agreement.py"


def _reference_of_own_run(ns3, tmp_path, cli, config: str, name: str, fct: str, pfc: str) -> Path:
    """A "reference run" folder `refs/name` that is hopsim's own run of `config`, exported in its
    fct format as `fct` with an empty PFC file `pfc`."""
    code, msg, out = _import(cli, ns3, config, tmp_path, "--flows", ns3 / "stdout.txt")
    assert code == 0, msg
    run = tmp_path / "run"
    assert cli("run", out, "--out", run)[0] == 0
    ref = tmp_path / "refs" / name
    ref.mkdir(parents=True)
    (ref / "config.ini").write_text(config)
    assert cli("export-floodgate", run, "--out", ref / fct)[0] == 0
    (ref / pfc).write_text("")
    return ref


def _agreement(*args):
    return subprocess.run([sys.executable, AGREEMENT, *args], capture_output=True, text=True)


def test_the_agreement_script_agrees_with_a_run_exported_in_its_format(ns3, tmp_path, cli):
    """`scripts/floodgate-agreement.sh` on a folder holding one "reference run" that is hopsim's
    own run exported in its formats: one row, every flow matched, a pass; and a folder with no
    run in it is exit 2."""
    ref = _reference_of_own_run(ns3, tmp_path, cli, IDEAL, "ideal", "its-fct.txt", "its-pfc.txt")
    (ref / "stdout.txt").write_text(STDOUT)
    p = _agreement(tmp_path / "refs", "--tree", ns3)
    assert p.returncode == 0, p.stdout + p.stderr
    row = next(l for l in p.stdout.splitlines() if l.startswith("│ ideal"))
    assert "4/4" in row and "pass" in row, row
    p = _agreement(tmp_path / "run", "--tree", ns3)
    assert p.returncode == 2 and "no reference run folders" in p.stderr, p.stderr


def test_the_agreement_scripts_set_reaches_every_hopsim_run(ns3, tmp_path, cli):
    """`--set KEY=VALUE` changes the imported scenario of every seed's run, and only as run: the
    kept scenario is the importer's."""
    ref = _reference_of_own_run(ns3, tmp_path, cli, IDEAL, "ideal", "its-fct.txt", "its-pfc.txt")
    (ref / "stdout.txt").write_text(STDOUT)
    kept = tmp_path / "kept"
    p = _agreement(tmp_path / "refs", "--tree", ns3, "--seeds", "2", "--keep", kept,
                   "--set", "flow_control.floodgate.voq_service=strict", "--set", "flow_control.floodgate.window_fit=mtu")
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert 'voq_service = "egress_fifo"' in (kept / "ideal" / "scenario.toml").read_text()
    for run in ("run", "run-seed2"):
        ran = tomllib.loads((kept / "ideal" / run / "scenario.toml").read_text())["flow_control"]["floodgate"]
        assert (ran["voq_service"], ran["window_fit"]) == ("strict", "mtu"), run


def test_the_agreement_script_takes_a_users_files_and_fails_on_any_metric_outside_its_limit(ns3, tmp_path, cli):
    """A folder of the files a user has (config.ini, fct.txt, pfc.txt and the flow list it
    printed, under another name) is a run; a metric whose file the folder lacks (buffer logs:
    switch peaks) reads "not available" and is not judged; a metric with a value on both sides
    outside its limit (its PFC file with 40 pause frames, hopsim's run with none) fails the run
    and the exit status, though every flow agrees."""
    ref = _reference_of_own_run(ns3, tmp_path, cli, PRACTICAL, "practical", "fct.txt", "pfc.txt")
    (ref / "printed-flows.txt").write_text("\n".join(STDOUT.splitlines()[1:]) + "\n")
    p = _agreement(tmp_path / "refs", "--tree", ns3)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "not available" in p.stdout and "inf" not in p.stdout, p.stdout
    # 40 pauses and resumes of ToR 4's port to the core: frames and paused time outside their limits
    (ref / "pfc.txt").write_text("".join(f"{2_000_000_000 + 100 * i} 4 1 3 {1 - i % 2}\n" for i in range(80)))
    p = _agreement(tmp_path / "refs", "--tree", ns3)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "outside its limit: pause frames" in p.stdout, p.stdout
