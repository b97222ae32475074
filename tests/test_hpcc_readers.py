"""The HPCC topology and flow-file readers, through the CLI: text after the declared counts is a
note (the simulator ignores it), a malformed line within them an error naming file, line and
field (exit 2, nothing written), and hosts with several links run with one NIC per link."""

from __future__ import annotations

import pytest

TOPO = """\
6 2 5
4 5
0 4 100Gbps 1000ns 0.000000
1 4 100Gbps 1000ns 0.000000
2 5 100Gbps 1000ns 0.000000
3 5 100Gbps 1000ns 0.000000
4 5 400Gbps 1000ns 0.000000
"""
FLOWS = """\
3
0 2 3 100 20000 2.000001
1 2 3 100 15000 2.000001
3 0 3 100 5000 2.0000015
"""
SCENARIO = """\
name = "hpcc-files"
[topology]
kind = "hpcc"
file = "topo.txt"
[workload]
kind = "hpcc_flows"
file = "flows.txt"
time_offset = "2s"
"""


@pytest.fixture
def files(tmp_path):
    """files(topo=..., flows=...) -> the scenario's path, with those files beside it."""

    def make(topo: str = TOPO, flows: str = FLOWS):
        (tmp_path / "topo.txt").write_text(topo)
        (tmp_path / "flows.txt").write_text(flows)
        sc = tmp_path / "sc.toml"
        sc.write_text(SCENARIO)
        return sc

    return make


def test_the_files_as_written_run(files, tmp_path, cli):
    code, msg = cli("run", files(), "--out", tmp_path / "run")
    assert code == 0, msg
    assert "3/3 flows finished" in msg and "note:" not in msg


def test_text_after_the_declared_counts_is_a_note(files, tmp_path, cli):
    # as the HPCC repository's own mix/flow.txt and mix/topology.txt end
    sc = files(topo=TOPO + "src0 dst0 rate delay error_rate\n...\n",
               flows=FLOWS + "4 1 3 100 150000000 2\n...\n\nPlease order the flows in ascending start_time!\n")
    code, msg = cli("validate", sc)
    assert code == 0, msg
    topo, flows = tmp_path / "topo.txt", tmp_path / "flows.txt"
    assert (f"note: topology.file {topo}: lines 8 to 9: 2 lines after the 5 links that line 1 declares are "
            "ignored (as the HPCC simulator does), the first: \"src0 dst0 rate delay error_rate\"") in msg
    assert (f"note: workload.file {flows}: lines 5 to 8: 3 lines after the 3 flows that line 1 declares are "
            "ignored") in msg
    code, msg = cli("run", sc, "--out", tmp_path / "run")
    assert code == 0 and "3/3 flows finished" in msg and "lines after the 3 flows" in msg


@pytest.mark.parametrize("which,edit,needle", [
    ("flows", ("2.0000015", "x"), "workload.file {flows}: line 4: start time 'x' is not a number"),
    ("flows", ("1 2 3 100 15000", "1 2 3 100 15k"), "workload.file {flows}: line 3: size '15k' is not a whole number of bytes"),
    ("flows", ("3\n", "three\n"), "workload.file {flows}: line 1: flow count 'three' is not a whole number"),
    ("flows", ("3\n", "5\n"), "workload.file {flows}: line 1: the flow count is 5, but the file has only 3 flow lines"),
    ("flows", ("0 2 3 100 20000 2.000001", "0 2 3 20000 2.000001"), "line 2: expected 6 to 8 fields"),
    ("topo", ("6 2 5", "6 2 6"), "topology.file {topo}: line 1: the header declares 6 links, but the file has only 5"),
    ("topo", ("1 4 100Gbps", "1 4 100Gbit"), "topology.file {topo}: line 4: rate '100Gbit' is not a link rate"),
    ("topo", ("3 5 100Gbps 1000ns", "3 5 100Gbps 1000"), "topology.file {topo}: line 6: delay '1000' is not a link delay"),
    ("topo", ("2 5 100Gbps", "2 9 100Gbps"), "topology.file {topo}: line 5: link end b '9' is not a node id below 6"),
    # the core numbers flows in start-time order; the message names the file's line all the same
    ("flows", ("3 0 3 100 5000", "3 7 3 100 5000"), "workload.file {flows}: line 4: flow 2: src 3 and dst 7 must be host node ids"),
    ("flows", ("1 2 3 100 15000 2.000001", "1 4 3 100 15000 2.0000001"),
     "workload.file {flows}: line 3: flow 0: src 1 and dst 4 must be host node ids"),
])
def test_a_malformed_line_names_file_line_and_field(files, tmp_path, cli, which, edit, needle):
    topo, flows = TOPO, FLOWS
    if which == "flows":
        flows = flows.replace(*edit)
    else:
        topo = topo.replace(*edit)
    sc = files(topo=topo, flows=flows)
    for args in (("validate", sc), ("run", sc, "--out", tmp_path / "run")):
        code, msg = cli(*args)
        assert code == 2, msg
        assert needle.format(flows=tmp_path / "flows.txt", topo=tmp_path / "topo.txt") in msg, msg
    assert not (tmp_path / "run").exists()


def test_hosts_with_two_links_run_with_a_nic_per_link(files, tmp_path, cli):
    # every host dual-homed to both switches, as the HPCC repository's ali_32host_10rack.txt
    # (these used to be refused; the core now gives each host one NIC per link)
    topo = "6 2 9\n4 5\n" + "".join(f"{h} {s} 25Gbps 1000ns 0.000000\n" for h in range(4) for s in (4, 5))
    topo += "4 5 100Gbps 1000ns 0.000000\n"
    code, msg = cli("run", files(topo=topo), "--out", tmp_path / "run")
    assert code == 0, msg
    assert "3/3 flows finished" in msg
