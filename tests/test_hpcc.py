"""Migration from the HPCC ns-3 simulator: import-hpcc and export-fct."""

from __future__ import annotations

import re
import shutil
import tomllib

import pytest

from hopsim.interop.hpcc.exporter import node_ip
from hopsim.scenario.model import load_scenario


@pytest.fixture
def hpcc_dir(repo, tmp_path):
    d = tmp_path / "hpcc"
    shutil.copytree(repo / "tests" / "data" / "hpcc", d)
    return d


def test_import_maps_the_keys(hpcc_dir, tmp_path, cli):
    out = tmp_path / "sc" / "imported.toml"
    code, msg = cli("import-hpcc", hpcc_dir / "config.txt", "--out", out)
    assert code == 0, msg
    assert "TRACE_FILE: ignored" in msg
    text = out.read_text()
    # keys read only by other CC modes are named, not reported as honoured
    assert "Keys of other CC modes, no effect under CC_MODE 1" in text and "U_TARGET" in text
    raw = tomllib.loads(text)
    assert raw["topology"]["kind"] == "hpcc" and raw["workload"]["kind"] == "hpcc_flows"
    assert raw["workload"]["time_offset"] == "2s"
    assert raw["duration"] == "2000000000000ps"  # SIMULATOR_STOP_TIME 4.00 less the 2 s offset
    assert raw["buffer"]["size"] == "32MiB"
    # the simulator's MMU, pauses and ECMP, by name
    assert raw["buffer"]["headroom"] == "hpcc" and raw["buffer"]["alpha_by_rate"] is True
    assert raw["flow_control"]["pfc"]["until_resume"] is True and raw["routing"]["ecmp"] == "hpcc"
    ecn = raw["ecn"]
    assert ecn["enabled"] is True and ecn["kmin"] == "1600000B" and ecn["kmax"] == "6400000B"
    assert ecn["ref_rate"] == "400Gbps" and ecn["pmax"] == 0.2
    d = raw["congestion_control"]["dcqcn"]
    assert raw["congestion_control"]["algorithm"] == "dcqcn"
    assert d["model"] == "mlx" and d["rai"] == "50Mbps" and d["rhai"] == "100Mbps"  # unscaled, as there
    assert d["rate_increase_timer"] == "900000000ps" and d["alpha_timer"] == "1000000ps"
    assert d["g"] == 0.00390625 and d["fast_recovery_stages"] == 1 and d["byte_counter"] == 0
    assert d["clamp_target_rate"] is False and d["min_rate"] == "100Mbps"
    tr = raw["transport"]
    assert tr["mtu"] == 1000 and tr["header"] == 36 and tr["ack"] == 34 and tr["ack_min"] == 48
    assert raw["tx_time"] == "whole_ns"
    assert tr["cnp"] == "ack_flag" and tr["rto"] == "off"
    assert tr["ack_priority"] == "data"  # ACK_HIGH_PRIO 0
    assert tr["window_by_rate"] is True  # VAR_WIN 1
    # GLOBAL_T 1: the largest BDP; longest path 0-4-5-2: rtt = 2 x 3 us + 1000 B at 100+400+100 Gb/s
    rtt_ns = 6000 + 80 + 20 + 80
    assert tr["window"] == f"{rtt_ns * 100 // 8}B"
    sc = load_scenario(out, validate=True)
    assert sc.model.flow_control.pfc.threshold == "dynamic"


@pytest.mark.parametrize("mode,algo,check", [
    ("3", "hpcc", lambda c, t: c["eta"] == 0.95 and c["max_stage"] == 0 and c["rai"] == "50Mbps"
     and c["base_rtt"] == "6180ns" and t["repace_on_rate_change"] is True),
    ("7", "timely", lambda c, t: c["rai"] == "50Mbps" and c["rhai"] == "100Mbps" and t["header"] == 44),
    ("8", "dctcp_rate", lambda c, t: c["rai"] == "1Gbps" and c["g"] == 0.00390625),
])
def test_import_every_cc_mode(hpcc_dir, tmp_path, cli, mode, algo, check):
    cfg = hpcc_dir / "config.txt"
    cfg.write_text(cfg.read_text().replace("CC_MODE 1", f"CC_MODE {mode}"))
    out = tmp_path / f"cc{mode}.toml"
    code, msg = cli("import-hpcc", cfg, "--out", out)
    assert code == 0, msg
    raw = tomllib.loads(out.read_text())
    assert raw["congestion_control"]["algorithm"] == algo
    assert check(raw["congestion_control"][algo], raw["transport"])
    run = tmp_path / f"run{mode}"
    code, msg = cli("run", out, "--out", run)
    assert code == 0, msg
    assert (run / "flows.parquet").exists()


@pytest.mark.parametrize("edit,needle", [
    (("CC_MODE 1", "CC_MODE 10"), "CC_MODE: 10 (HPCC-PINT) needs PINT's log-encoded utilisation field"),
    (("CC_MODE 1", "CC_MODE 5"), "CC_MODE: 5 is not a mode of that simulator; allowed: 1 (DCQCN), 3 (HPCC)"),
    (("ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 1.5"), "ERROR_RATE_PER_LINK: 1.5 is not a probability"),
    (("LINK_DOWN 0 0 0", "LINK_DOWN 100 4"), "LINK_DOWN: expected `time_us node_a node_b`"),
    (("LINK_DOWN 0 0 0", "LINK_DOWN 100 0 1"), "faults.link_events[0].link: no link joins nodes 0 and 1"),
    (("L2_BACK_TO_ZERO 0", "L2_BACK_TO_ZERO 1"), "L2_BACK_TO_ZERO: hopsim goes back to the first unacknowledged byte"),
    (("KMAX_MAP 3 25000000000 400 100000000000 1600", "KMAX_MAP 3 25000000000 400 100000000000 1000"),
     "KMAX_MAP: 1000 KB at 100Gbps is not linear in rate"),
    (("TOPOLOGY_FILE mix/topology.txt", "TOPOLOGY_FILE mix/nothere.txt"), "'mix/nothere.txt' not found"),
    # issue 9: a stop time before the flows' 2 s offset used to be dropped (the run went on to the end)
    (("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME 1.5"),
     "line 13: SIMULATOR_STOP_TIME: 1.5 s is not after the flows' time offset of 2 s"),
    (("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME 2"), "SIMULATOR_STOP_TIME: 2 s is not after"),
    (("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME 1e400"), "SIMULATOR_STOP_TIME: 1e400 s is too large"),
    (("FLOW_FILE mix/flow.txt", "FLOW_FILE"), "line 7: FLOW_FILE: expected one value, got none"),
    (("TOPOLOGY_FILE mix/topology.txt", "TOPOLOGY_FILE"), "line 6: TOPOLOGY_FILE: expected one value, got none"),
    (("U_TARGET 0.95", "U_TARGET 1.5\nCC_MODE 3"),
     "U_TARGET (the scenario's congestion_control.hpcc.eta): Input should be less than or equal to 1; got 1.5"),
    (("BUFFER_SIZE 32", "BUFFER_SIZE 0"), "BUFFER_SIZE (the scenario's buffer.size): Input should be greater than 0"),
    (("PACKET_PAYLOAD_SIZE 1000", "PACKET_PAYLOAD_SIZE 10"), "PACKET_PAYLOAD_SIZE: 10 bytes; allowed: 64 to 65536"),
    (("KMIN_MAP 3 25000000000 100", "KMIN_MAP 3 25000000000 nan"), "KMIN_MAP: expected `n rate1 value1"),
])
def test_import_refuses_what_it_cannot_honour(hpcc_dir, tmp_path, cli, edit, needle):
    cfg = hpcc_dir / "config.txt"
    cfg.write_text(cfg.read_text().replace(*edit))
    out = tmp_path / "imported.toml"
    code, msg = cli("import-hpcc", cfg, "--out", out)
    assert code == 2
    assert needle in msg, msg
    assert str(cfg) in msg  # the config is named
    assert not out.exists()


TOPO = "6 2 5\n4 5\n0 4 100Gbps 1000ns 0\n1 4 100Gbps 1000ns 0\n2 5 100Gbps 1000ns 0\n3 5 100Gbps 1000ns 0\n4 5 400Gbps 1000ns 0\n"


@pytest.mark.parametrize("name,data,needle", [
    # issue 9: these were tracebacks (KeyError, IndexError, UnicodeDecodeError)
    ("topology.txt", TOPO.replace("3 5 100Gbps", "3 9 100Gbps").encode(),
     "TOPOLOGY_FILE {d}/topology.txt: line 6: link end b '9' is not a node id below 6"),
    ("topology.txt", b"6 2 1\n4 5\n4 5 400Gbps 1000ns 0\n",
     "TOPOLOGY_FILE {d}/topology.txt: line 1: 6 nodes need at least 5 links to be connected"),
    ("topology.txt", TOPO.replace("1 4 100Gbps 1000ns 0", "1 4 100Gbps 1000ns \xff").encode("latin-1"),
     "TOPOLOGY_FILE {d}/topology.txt: line 4: not UTF-8 text (byte 0xff)"),
    ("flow.txt", b"1\n0 2 3 100 \xe9 2.0\n", "FLOW_FILE {d}/flow.txt: line 2: not UTF-8 text (byte 0xe9)"),
    ("flow.txt", b"2\n0 2 3 100 10 2.0\n\n3 9 3 100 10 2.0\n",
     "FLOW_FILE {d}/flow.txt: line 4: flow 1: src 3 and dst 9 must be host node ids"),
])
def test_import_names_the_file_and_line_of_a_bad_input(hpcc_dir, tmp_path, cli, name, data, needle):
    (hpcc_dir / "mix" / name).write_bytes(data)
    out = tmp_path / "imported.toml"
    code, msg = cli("import-hpcc", hpcc_dir / "config.txt", "--out", out)
    assert code == 2, msg
    assert needle.format(d=hpcc_dir / "mix") in msg, msg
    assert not out.exists()


def test_import_of_a_config_that_is_not_utf8(hpcc_dir, tmp_path, cli):
    cfg = hpcc_dir / "config.txt"
    cfg.write_bytes(cfg.read_bytes() + b"CC_MODE \xff\n")
    code, msg = cli("import-hpcc", cfg, "--out", tmp_path / "imported.toml")
    assert code == 2 and f"{cfg}: line 59: not UTF-8 text (byte 0xff)" in msg, msg


FCT_LINE = re.compile(r"^[0-9a-f]{8} [0-9a-f]{8} \d+ \d+ \d+ \d+ \d+ \d+$")


def test_export_fct_format(hpcc_dir, tmp_path, cli):
    sc = tmp_path / "imported.toml"
    assert cli("import-hpcc", hpcc_dir / "config.txt", "--out", sc)[0] == 0
    run = tmp_path / "run"
    code, msg = cli("run", sc, "--out", run)
    assert code == 0, msg
    code, msg = cli("export-fct", run)
    assert code == 0, msg
    lines = (run / "fct.txt").read_text().splitlines()
    assert len(lines) == 4
    assert all(FCT_LINE.match(l) for l in lines), lines
    rows = [l.split() for l in lines]
    by_size = {int(r[4]): r for r in rows}
    # flow "0 2 3 100 200000 2.000001": host 0 -> host 2, first flow of host 0, starts at 2.000001 s
    r = by_size[200000]
    assert r[0] == "0b000001" and r[1] == f"{node_ip(2):08x}" == "0b000201"
    assert r[2] == "10000" and r[3] == "100"
    assert int(r[5]) == 2_000_001_000
    assert int(r[6]) >= int(r[7]) > 0  # fct >= standalone fct
    assert by_size[5000][0] == "0b000301"
    # completion order
    finish = [int(r[5]) + int(r[6]) for r in rows]
    assert finish == sorted(finish)


def test_export_fct_needs_a_run(tmp_path, cli):
    code, msg = cli("export-fct", tmp_path)
    assert code == 2 and "not a complete run folder" in msg


def test_an_unknown_key_with_control_characters_is_a_note(hpcc_dir, tmp_path, cli):
    """Found by tests/test_fuzz_inputs.py: the key went into the written file's header comment,
    where TOML allows no control character, and the import's own check of the file failed."""
    cfg = hpcc_dir / "config.txt"
    cfg.write_text(cfg.read_text() + "\x1bKEY 1\n")
    out = tmp_path / "imported.toml"
    code, msg = cli("import-hpcc", cfg, "--out", out)
    assert code == 0, msg
    assert "'\\x1bKEY': unknown key, ignored" in msg
    assert "'\\x1bKEY': unknown key" in out.read_text()
