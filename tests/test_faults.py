"""Faults in the simulated network ([faults]): a scenario with loss and link events runs and
counts its drops by cause, a table naming no link is refused with its field, a scenario without
faults keeps its hash, and import-hpcc maps the HPCC simulator's ERROR_RATE_PER_LINK, LINK_DOWN
and the topology file's per-link error rates."""

from __future__ import annotations

import json
import shutil
import tomllib

import pyarrow.parquet as pq
import pytest

from hopsim.scenario.model import load_scenario

LEAF_SPINE = """
name = "faults"
[topology]
kind = "leaf_spine"
hosts_per_tor = 2
tors = 2
spines = 2
host_rate = "100Gbps"
fabric_rate = "100Gbps"
[workload]
kind = "flows"
flows = [{src = 0, dst = 2, size = "2MB"}, {src = 1, dst = 3, size = "2MB"}, {src = 0, dst = 3, size = "2MB"},
         {src = 1, dst = 2, size = "2MB"}]
"""
# hosts 0-3, ToRs 4 and 5, spines 6 and 7
FAULTS = """
[faults]
loss_rate = "0.5%"
link_loss = [{link = [5, 6], rate = "2%"}]
link_events = [{at = "20us", link = [4, 6], state = "down"}, {at = "100us", link = [6, 4], state = "up"}]
"""


def test_a_run_with_faults_counts_its_drops_by_cause(cli, write, tmp_path):
    sc = write("f.toml", LEAF_SPINE + FAULTS)
    code, text = cli("run", sc, "--out", tmp_path / "r")
    assert code == 0, text
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["stopped"] == "done" and s["flows_finished"] == 4
    c = s["counters"]
    assert c["drops_loss"] > 0 and c["drops_link_down"] > 0 and c["drops_unreachable"] == 0
    ports = pq.read_table(tmp_path / "r" / "ports.parquet").to_pandas()
    for col in ("drops_loss", "drops_link_down", "drops_unreachable"):
        assert ports[col].sum() == c[col]
    # the lossier link loses more per packet than the rest (both directions of 5-6 at 2%)
    lossy = ports[((ports.node == 5) & (ports.peer_node == 6)) | ((ports.node == 6) & (ports.peer_node == 5))]
    assert lossy.drops_loss.sum() > 0
    resolved = tomllib.loads((tmp_path / "r" / "scenario.toml").read_text())
    assert resolved["faults"]["link_events"][0] == {"at": "20us", "link": [4, 6], "state": "down"}
    core = json.loads((tmp_path / "r" / "scenario.json").read_text())
    assert core["net"]["faults"]["loss_rate"] == 0.005 and core["net"]["faults"]["link_events"][1]["at"] == 100_000_000


@pytest.mark.parametrize("table,needle", [
    ('link_events = [{at = "1us", link = [0, 1], state = "down"}]',
     "faults.link_events[0].link: no link joins nodes 0 and 1"),
    ('link_loss = [{link = [4, 99], rate = "1%"}]', "faults.link_loss[0].link: [4, 99] names a node that does not exist"),
    ('loss_rate = "150%"', "faults.loss_rate: Input should be less than or equal to 1"),
    ('link_events = [{at = "1us", link = [4, 6], state = "sideways"}]', "faults.link_events[0].state"),
    ('loss = 0.1', "faults: unknown key 'loss'"),
])
def test_bad_faults_are_refused_with_their_field(cli, write, tmp_path, table, needle):
    sc = write("bad.toml", LEAF_SPINE + "[faults]\n" + table + "\n")
    code, text = cli("run", sc, "--out", tmp_path / "r")
    assert code == 2, text
    assert needle in text, text
    assert not (tmp_path / "r").exists()


def test_without_faults_the_scenario_hash_is_unchanged(write):
    plain = load_scenario(write("a.toml", LEAF_SPINE))
    off = load_scenario(write("b.toml", LEAF_SPINE + "[faults]\nloss_rate = 0\n"))
    assert "faults" not in plain.core["net"]
    assert off.core_json == plain.core_json and off.hash == plain.hash
    assert plain.resolved_dict()["faults"] == {"loss_rate": 0.0, "link_loss": [], "link_events": []}


@pytest.fixture
def hpcc_dir(repo, tmp_path):
    d = tmp_path / "hpcc"
    shutil.copytree(repo / "tests" / "data" / "hpcc", d)
    return d


def test_import_maps_error_rate_and_link_down(hpcc_dir, tmp_path, cli):
    cfg = hpcc_dir / "config.txt"
    cfg.write_text(cfg.read_text().replace("ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.01")
                   .replace("LINK_DOWN 0 0 0", "LINK_DOWN 1500 4 5"))
    out = tmp_path / "imported.toml"
    code, msg = cli("import-hpcc", cfg, "--out", out)
    assert code == 0, msg
    assert "a lost last packet of a flow is never repaired" in msg
    raw = tomllib.loads(out.read_text())
    # 2 s + 1500 us, less the flow file's 2 s offset
    assert raw["faults"] == {"loss_rate": 0.01,
                             "link_events": [{"at": "1500000000ps", "link": [4, 5], "state": "down"}]}
    sc = load_scenario(out, validate=True)
    assert sc.model.faults.link_events[0].at == 1_500_000_000
    # "0 0 0" and 0: no faults table at all
    cfg.write_text(cfg.read_text().replace("ERROR_RATE_PER_LINK 0.01", "ERROR_RATE_PER_LINK 0")
                   .replace("LINK_DOWN 1500 4 5", "LINK_DOWN 0 0 0"))
    code, msg = cli("import-hpcc", cfg, "--out", out, "--force")
    assert code == 0, msg
    assert "faults" not in tomllib.loads(out.read_text())


def test_a_topology_files_error_rates_are_its_links_losses(hpcc_dir, tmp_path, cli):
    # the HPCC topology file's fifth column: the ToR-ToR link (4-5) loses 5% of its packets
    topo = hpcc_dir / "mix" / "topology.txt"
    topo.write_text(topo.read_text().replace("4 5 400Gbps 1000ns 0.000000", "4 5 400Gbps 1000ns 0.05"))
    out = tmp_path / "imported.toml"
    code, msg = cli("import-hpcc", hpcc_dir / "config.txt", "--out", out)
    assert code == 0, msg
    assert "never repaired" in msg
    # hopsim repairs with a retransmission timeout; the run ends with every flow done
    text = out.read_text().replace('rto = "off"', 'rto = "100us"')
    out.write_text(text)
    code, msg = cli("run", out, "--out", tmp_path / "r")
    assert code == 0, msg
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["counters"]["drops_loss"] > 0 and s["stopped"] == "done", s
    ports = pq.read_table(tmp_path / "r" / "ports.parquet").to_pandas()
    lost = ports[ports.drops_loss > 0]
    assert set(zip(lost.node, lost.peer_node)) <= {(4, 5), (5, 4)}
