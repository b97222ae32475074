"""`hopsim import-bfc`, `export-bfc` and `compare-fct` on the BFC paper's simulator's files
(BFC_NS3_NSDI2022; hand-made here in its formats): its config and the flows its standard output
shows become a scenario whose options say what it does, which runs; the run's results come back
in its stdout format, which compare-fct reads with its slowdown basis and buckets; bad input is
one line naming the key, exit 2, and nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import import_config

from hopsim.interop.bfc.compare import base_ns, buffer_stats, size_edges
from hopsim.interop.bfc.files import parse_stdout

CONFIG = """
POISSON_DISTRIBUTION 0

CREATE_INCAST 1
NUMBER_OF_INCAST_SOURCES 3
FLOW_SIZE_IN_INCAST 20

DATA_RATE 100Gbps
LINK_DELAY 0.001ms
UTILIZATION_FACTOR 0.65

APP_START_TIME 1.0
APP_STOP_TIME 1.0002
SIMULATOR_STOP_TIME 1.0004

WORKLOAD W4

QCOUNT 36

ENABLE_BUFFER_STATS 1
"""
# its standard output: a one-packet flow inside ToR 0, a 2-packet flow across ToRs, a 50-packet
# one, and an incast of 3 x 20 packets to host 40 opened with a background flow
STDOUT = """DATA_RATE\t\t\t100Gbps
WORKLOAD\t\t\tW4
Incast info- Packet size 20Num of sources 3
New Flow Created Src 0 Dst 14 Size 352 Time 1
New Flow Created Src 17 Dst 106 Size 2000 Time 1.000000008
New Flow Created Src 70 Dst 24 Size 50000 Time 1.00000025
New Flow Created Src 127 Dst 123 Size 21000 Time 1.00001
New Flow Created Src 1 Dst 40 Size 20000 Time 1.00001
New Flow Created Src 90 Dst 40 Size 20000 Time 1.00001
New Flow Created Src 33 Dst 40 Size 20000 Time 1.00001
Number of flows 4
"""


@pytest.fixture
def ref(tmp_path):
    d = tmp_path / "bfc"
    d.mkdir()
    (d / "config.txt").write_text(CONFIG)
    (d / "stdout.txt").write_text(STDOUT)
    return d


def _import(cli, d, text, tmp_path, *extra):
    return import_config(cli, "import-bfc", d / "config.txt", text, tmp_path, *extra)


def test_its_config_and_drawn_flows_become_its_model_flow_for_flow(ref, tmp_path, cli):
    code, msg, out = _import(cli, ref, CONFIG, tmp_path, "--flows", ref / "stdout.txt")
    assert code == 0, msg
    text = out.read_text()
    sc = tomllib.loads(text)
    assert sc["topology"] == {"kind": "leaf_spine", "hosts_per_tor": 16, "tors": 8, "spines": 8, "host_rate": "100Gbps",
                              "fabric_rate": "100Gbps", "host_delay": "1000ns", "fabric_delay": "1000ns"}
    assert sc["duration"] == "400000ns"
    assert sc["workload"] == {"kind": "hpcc_flows", "file": "sc.flows.txt", "time_offset": "1000000000ns"}
    flows = (out.parent / "sc.flows.txt").read_text().splitlines()
    # each flow's server port (dst + 40000) and priority group, which its ECMP hashes: the k-th flow's
    # is 5 x QCOUNT + the k-th draw of mt19937(5489) in [0, 1e9), its first two outputs 3499211612 and
    # 581869302 making the first flow's (180 + 135477004) mod 65536; then its source port, each
    # host's first from 49153
    assert flows[0] == "7" and flows[1] == "0 14 3 40014 352 1 14272 49153"
    assert flows[5] == "1 40 3 40040 20000 1.00001 16958 49153"
    assert sc["routing"] == {"ecmp": "ns3_global"}
    b = sc["flow_control"]["bfc"]
    assert sc["flow_control"]["scheme"] == "bfc"
    assert (b["hrtt"], b["th_hrtt"], b["sticky_hrtt"]) == ("2us", 1.5, 3.0)
    assert (b["pause_counts_arrival"], b["pause_delivery"], b["unlimited_buffer"]) == (True, "next_refresh", True)
    assert (b["lone_packet_pauses"], b["assign_paused_queues"], b["updown_only"]) == (False, False, False)
    assert (b["nic_queues"], b["queue_search"], b["collision_queue"]) == ("free_list", "random", "per_entry")
    assert (b["bitmap_frame"], sc["tx_time"]) == ("whole", "whole_ns")
    assert (b["flow_index"], b["table_entries"]) == ("ns3_header", 7200) and "table_factor" not in b
    assert sc["queues"] == {"count": 32, "scheduler": "rr"}
    t = sc["transport"]
    assert (t["mtu"], t["header"], t["ack"], t["ack_every"], t["window"], t["rto"]) == (1000, 20, 30, 256, "off", "off")
    assert sc["control"] == {"queue_pause": 156}
    # every option says where it comes from; the generator's keys are named as replaced
    assert 'flow_control.bfc.pause_delivery = "next_refresh"' in text and "broadcom-node.cc:165-173" in text
    assert "UTILIZATION_FACTOR: the flows it drew (--flows) replace its generator" in msg
    assert "QCOUNT: ignored" not in msg and "QCOUNT" in text.split("Keys honoured:")[1].splitlines()[0]
    code, msg = cli("run", out, "--out", tmp_path / "run")
    assert code == 0, msg
    assert "7/7 flows finished" in msg


def test_without_its_flows_hopsim_draws_its_traffic_at_its_load(ref, tmp_path, cli):
    code, msg, out = _import(cli, ref, CONFIG, tmp_path)
    assert code == 0, msg
    w = tomllib.loads(out.read_text())["workload"]
    # 65 % with incasts: 60 % background on the 64 core links, 5 % in incasts of 3 x 20 packets:
    # 0.2 ms x 64 x 100 Gb/s x 5 % / (20 x 1000 B x 3 x 8) = 133 incasts, one every 200 us / 133
    assert (w["kind"], w["cdf"], w["load_on"], w["arrival"], w["sigma"]) == ("incast_mix", "BFC_W4_FacebookHadoop.txt",
                                                                            "core_links", "lognormal", 2.0)
    assert w["load"] == pytest.approx(0.6)
    assert w["incast"] == {"degree": 3, "flow_size": 20000, "period": "1504ns"}
    assert cli("validate", out)[0] == 0
    code, _, out = _import(cli, ref, CONFIG.replace("CREATE_INCAST 1", "CREATE_INCAST 0"), tmp_path)
    w = tomllib.loads(out.read_text())["workload"]
    assert w["kind"] == "background" and w["load"] == pytest.approx(0.65)


@pytest.mark.parametrize("edit,needle", [
    (("QCOUNT 36", "QCOUNTS 36"), "QCOUNTS: not a key nsdifinal.cc reads; allowed: APP_START_TIME"),
    (("DATA_RATE 100Gbps", "DATA_RATE 100Mbps"), "DATA_RATE: '100Mbps'; allowed: whole Gb/s above 0"),
    (("LINK_DELAY 0.001ms", "LINK_DELAY soon"), "LINK_DELAY: 'soon' is not a time; allowed: a number with s, ms, us or ns"),
    (("CREATE_INCAST 1", "CREATE_INCAST 2"), "CREATE_INCAST: 2; allowed: 0 or 1"),
    (("SIMULATOR_STOP_TIME 1.0004", "SIMULATOR_STOP_TIME 0.5"), "SIMULATOR_STOP_TIME: 0.5 s; allowed: after APP_START_TIME"),
])
def test_what_it_cannot_read_is_refused_naming_the_key_and_what_is_allowed(ref, tmp_path, cli, edit, needle):
    code, msg, out = _import(cli, ref, CONFIG.replace(*edit), tmp_path, "--flows", ref / "stdout.txt")
    assert code == 2, msg
    assert needle in msg, msg
    assert "Traceback" not in msg
    assert not out.parent.exists() or not any(out.parent.iterdir())


def test_bad_flows_or_an_unknown_workload_are_refused_and_nothing_is_written(ref, tmp_path, cli):
    (ref / "bad.txt").write_text("New Flow Created Src 3 Dst 200 Size 1000 Time 1.1\n")
    code, msg, out = _import(cli, ref, CONFIG, tmp_path, "--flows", ref / "bad.txt")
    assert code == 2 and "from host 3 to 200; allowed: two different hosts 0 to 127" in msg, msg
    assert not out.parent.exists() or not any(out.parent.iterdir())
    (ref / "bad.txt").write_text("nothing\n")
    code, msg, _ = _import(cli, ref, CONFIG, tmp_path, "--flows", ref / "bad.txt")
    assert code == 2 and "no `New Flow Created" in msg, msg
    code, msg, _ = _import(cli, ref, CONFIG.replace("W4", "W5"), tmp_path)
    assert code == 2 and "WORKLOAD: W5" in msg and "allowed without --flows: W4 or W3" in msg, msg


def test_its_slowdown_basis_and_buckets_by_hand():
    # calculate_fct_slowdown.py:79-92 at 100 Gb/s: 80 ns per full packet, size x 0.08 ns otherwise
    assert base_ns(2, 998, True, 100) == 4000 + 80 * 3
    assert base_ns(2, 998, False, 100) == 8000 + 80 * 5
    assert base_ns(1, 350, True, 100) == pytest.approx(4000 + 350 * 0.08 * 2)
    assert size_edges()[:2] == [3001, 12001]  # <= 3 and <= 12 packets
    s = buffer_stats([(10, 128, 5), (10, 136, 7), (20, 128, 9), (30, 129, 1)], until_ns=20)
    assert (s.peak, s.samples) == ({"spine": 7.0, "tor": 9.0}, {"spine": 1, "tor": 2})


def test_export_in_its_stdout_format_and_compare_with_its_basis_and_incast_split(ref, tmp_path, cli):
    code, msg, out = _import(cli, ref, CONFIG, tmp_path, "--flows", ref / "stdout.txt")
    assert code == 0, msg
    run = tmp_path / "run"
    assert cli("run", out, "--out", run)[0] == 0
    code, msg = cli("export-bfc", run, "--out", tmp_path / "stdout-bfc.txt", "--incast-packets", "20", "--incast-sources", "3")
    assert code == 0, msg
    text = (tmp_path / "stdout-bfc.txt").read_text()
    lines = text.splitlines()
    assert lines[:2] == ["DATA_RATE\t\t\t100Gbps", "Incast info- Packet size 20Num of sources 3"]
    # host 0's one-packet flow: its NIC is qbbid 2, its address 1.1, the receiver (host 14) qbbid 30
    start = next(l for l in lines if l.startswith("Starting flow") and "qbbid 2 " in l)
    assert start.startswith("Starting flow at +1000000000.0ns port 49153 qbbid 2 qindex 0 IP 1.1"), start
    recv = next(l for l in lines if l.startswith("Received") and "IP 1.1 " in l)
    assert recv.endswith("qbbid 30 IP 1.1 size 350 "), recv
    assert any(l.startswith("T: +1000010000.0ns At 128 used = ") for l in lines)
    run_back = parse_stdout(text, "x")
    assert len(run_back.flows) == 7 and run_back.incast_packets == 20
    f = next(f for f in run_back.flows if f.src == 17)
    assert (f.dst, f.packets, f.packet_size, f.port) == (106, 2, 998, 49153)
    # an unloaded 2-packet flow across ToRs takes about its basis: 4 hops of 1 us and 1,020 B
    # packets, and the ACK back (8,000 + 5 x 80 ns)
    assert 1.0 <= f.fct_ns / base_ns(2, 998, False, 100) < 1.1
    # the file against the run it came from, on its basis: the same FCTs
    code, msg = cli("compare-fct", tmp_path / "stdout-bfc.txt", run, "--basis", "ref", "--tol", "0.001",
                    "--json", tmp_path / "all.json")
    assert code == 0, msg
    c = json.loads((tmp_path / "all.json").read_text())
    assert c["matched"] == 7 and len(c["buckets"]) == 9
    # <= 3 packets (352 B, 2 packets), <= 12, <= 48 (21 packets, the incast's 20), <= 192 (50)
    assert [b["n"] for b in c["buckets"]][:4] == [2, 0, 4, 1]
    code, msg = cli("compare-fct", tmp_path / "stdout-bfc.txt", run, "--flows", "incast", "--json", tmp_path / "i.json")
    assert code == 0, msg
    assert json.loads((tmp_path / "i.json").read_text())["matched"] == 3
    (tmp_path / "bad.txt").write_text(text.replace("Num packets:2,", "Num packets:two,"))
    code, msg = cli("compare-fct", tmp_path / "bad.txt", run)
    assert code == 2 and "bad.txt line" in msg and "expected `Flow finished at qbbid" in msg, msg


def test_the_agreement_script_agrees_with_a_run_exported_in_its_format(ref, tmp_path, cli):
    """`scripts/bfc-agreement.sh` on a folder holding one "reference run" that is hopsim's own run
    exported in its format (and the flows it drew): every number equal, a pass; a folder with no
    run in it is exit 2."""
    code, msg, out = _import(cli, ref, CONFIG, tmp_path, "--flows", ref / "stdout.txt")
    assert code == 0, msg
    run = tmp_path / "run"
    assert cli("run", out, "--out", run)[0] == 0
    refs = tmp_path / "refs" / "tiny"
    refs.mkdir(parents=True)
    (refs / "config.txt").write_text(CONFIG)
    assert cli("export-bfc", run, "--out", refs / "its.txt", "--incast-packets", "20", "--incast-sources", "3")[0] == 0
    created = [l for l in STDOUT.splitlines() if l.startswith("New Flow")]
    (refs / "stdout.txt").write_text("\n".join(created) + "\n" + (refs / "its.txt").read_text())
    (refs / "its.txt").unlink()
    script = Path(__file__).resolve().parents[1] / "scripts" / "bfc-agreement.py"
    p = subprocess.run([sys.executable, script, tmp_path / "refs"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "tiny: hopsim vs the BFC simulator (pass)" in p.stdout, p.stdout
    assert "buffer tor peak (KB)" in p.stdout and "+0.0%" in p.stdout, p.stdout
    # over two hopsim seeds: its p99s against the reference's bootstrap interval, both ranges shown
    p = subprocess.run([sys.executable, script, tmp_path / "refs", "--seeds", "2", "--keep", tmp_path / "kept"],
                       capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert (tmp_path / "kept" / "tiny" / "stdout-bfc-seed2.txt").exists()
    assert "ranges (ref; hopsim)" in p.stdout and "slowdown incast p99" in p.stdout, p.stdout
    p = subprocess.run([sys.executable, script, tmp_path / "run"], capture_output=True, text=True)
    assert p.returncode == 2 and "no reference run folders" in p.stderr, p.stderr


def test_its_source_ports_count_per_sending_host_in_start_order():
    """ns-3's ephemeral ports: a host's k-th flow binds 49153 + k, whatever its destination; past
    65535 the range starts again at 49152 (Ipv4EndPointDemux::AllocateEphemeralPort)."""
    from hopsim.interop.bfc.files import source_ports

    flows = [(0, 5, 1000, "1"), (3, 5, 1000, "1"), (0, 9, 1000, "1.1"), (0, 5, 1000, "1.2")]
    assert source_ports(flows) == [49153, 49153, 49154, 49155]
    many = source_ports([(7, 1, 1000, "1")] * 16385)
    assert many[16382:] == [65535, 49152, 49153]


def test_export_keeps_its_source_ports_where_one_sender_starts_two_flows_at_once(ref, tmp_path, cli):
    """Host 5 starts a flow to host 50 and then, at the same instant, one to host 40: ns-3 binds
    them ports 49153 and 49154 in that (creation) order, which the flow file carries; hopsim
    orders flows of one start by destination, so numbering by start and flow id would swap them.
    export-bfc writes the run's own ports, and compare-fct pairs each flow with its twin."""
    both = STDOUT.replace("Number of flows 4\n", "New Flow Created Src 5 Dst 50 Size 3000 Time 1.00002\n"
                          "New Flow Created Src 5 Dst 40 Size 9000 Time 1.00002\nNumber of flows 4\n")
    (ref / "stdout.txt").write_text(both)
    code, msg, out = _import(cli, ref, CONFIG, tmp_path, "--flows", ref / "stdout.txt")
    assert code == 0, msg
    last = (out.parent / "sc.flows.txt").read_text().splitlines()[-2:]
    assert last[0].startswith("5 50 ") and last[0].endswith(" 49153") and last[1].startswith("5 40 ") and last[1].endswith(" 49154")
    run = tmp_path / "run"
    assert cli("run", out, "--out", run)[0] == 0
    assert cli("export-bfc", run, "--out", tmp_path / "x.txt")[0] == 0
    got = {(f.dst, f.port) for f in parse_stdout((tmp_path / "x.txt").read_text(), "x").flows if f.src == 5}
    assert got == {(50, 49153), (40, 49154)}, got
