"""Hosts with several links in the HPCC simulator's inputs (issue 8, item 5): a topology in the
shape of its `mix/ali_32host_10rack.txt` (every host dual-homed to the two ToRs of its rack)
imports with `hopsim import-hpcc` and runs, each host with one NIC per link (the core's
`net::nic_choice`): both NICs of the hosts carry data and ACKs, every flow finishes, and
`export-hpcc` writes the simulator's fct.txt for it."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest

RACKS, PER_RACK, SPINES = 2, 4, 2


def ali_topology() -> str:
    """RACKS racks of PER_RACK hosts, each host linked to both ToRs of its rack at 25 Gb/s, every
    ToR to every spine at 100 Gb/s: ali_32host_10rack.txt's shape, cut down."""
    hosts = RACKS * PER_RACK
    tors = [hosts + i for i in range(2 * RACKS)]
    spines = [hosts + 2 * RACKS + i for i in range(SPINES)]
    links = [(h, tors[2 * (h // PER_RACK) + k], "25Gbps") for h in range(hosts) for k in (0, 1)]
    links += [(t, s, "100Gbps") for t in tors for s in spines]
    head = f"{hosts + len(tors) + len(spines)} {len(tors) + len(spines)} {len(links)}\n"
    head += " ".join(str(s) for s in tors + spines) + "\n"
    return head + "".join(f"{a} {b} {r} 1000ns 0.000000\n" for a, b, r in links)


def flow_file() -> str:
    """Every host sends to the host PER_RACK + 1 further on (in the other rack) and to its rack
    neighbour: 16 flows of 20 to 200 KB, a microsecond apart."""
    hosts = RACKS * PER_RACK
    lines = []
    for h in range(hosts):
        for dst in ((h + PER_RACK + 1) % hosts, h ^ 1):
            k = len(lines)
            lines.append(f"{h} {dst} 3 100 {20_000 + 12_000 * k} {2 + 1e-6 * (k + 1):.6f}\n")
    return f"{len(lines)}\n" + "".join(lines)


@pytest.fixture
def hpcc_dir(repo, tmp_path):
    d = tmp_path / "hpcc"
    shutil.copytree(repo / "tests" / "data" / "hpcc", d)
    (d / "mix" / "topology.txt").write_text(ali_topology())
    (d / "mix" / "flow.txt").write_text(flow_file())
    return d


def test_a_dual_homed_topology_imports_and_runs_with_a_nic_per_link(hpcc_dir, tmp_path, cli):
    sc = tmp_path / "ali.toml"
    code, msg = cli("import-hpcc", hpcc_dir / "config.txt", "--out", sc)
    assert code == 0, msg
    run = tmp_path / "run"
    code, msg = cli("run", sc, "--out", run)
    assert code == 0, msg
    assert "16/16 flows finished" in msg, msg

    flows = pq.read_table(run / "flows.parquet").to_pandas()
    assert len(flows) == 16 and flows["finish_ps"].notna().all()
    # every flow is at least as slow as its ideal (on its NIC's 25 Gb/s), none absurdly slower
    assert (flows["slowdown"] >= 1.0 - 1e-9).all() and (flows["slowdown"] < 20).all()

    ports = pq.read_table(run / "ports.parquet").to_pandas()
    hosts = ports[ports["node"] < RACKS * PER_RACK]
    assert sorted(set(hosts["port"])) == [0, 1], "two NIC ports per host"
    by_nic = hosts.assign(data=hosts["tx_bytes"] - hosts["ctrl_bytes"]).groupby("port")[["data", "ctrl_bytes"]].sum()
    # the hosts' flows and their ACKs spread over both NICs
    assert (by_nic["data"] > 0).all() and (by_nic["ctrl_bytes"] > 0).all(), by_nic
    assert (hosts["rate_bps"] == 25_000_000_000).all()

    code, msg = cli("export-hpcc", run)
    assert code == 0, msg
    fct = (run / "fct.txt").read_text().splitlines()
    assert len(fct) == 16


def test_a_rack_local_flow_uses_only_the_nics_to_its_racks_tors(hpcc_dir, tmp_path, cli):
    # host 0 -> host 1 (same rack): both NICs of host 0 reach host 1 in two hops (through
    # either ToR), so both may carry such flows; host 0 -> host 4 (other rack) too, in four.
    # What no flow may do is leave by a port that is not host 0's: the ports table has exactly
    # host 0's two NIC rows with data.
    lines = [f"0 1 3 100 30000 {2 + 1e-6 * (k + 1):.6f}\n" for k in range(24)]
    (hpcc_dir / "mix" / "flow.txt").write_text(f"{len(lines)}\n" + "".join(lines))
    sc = tmp_path / "local.toml"
    assert cli("import-hpcc", hpcc_dir / "config.txt", "--out", sc)[0] == 0
    run = tmp_path / "run"
    code, msg = cli("run", sc, "--out", run)
    assert code == 0 and "24/24 flows finished" in msg, msg
    ports = pq.read_table(run / "ports.parquet").to_pandas()
    data = ports.assign(data=ports["tx_bytes"] - ports["ctrl_bytes"])
    senders = data[(data["node"] < RACKS * PER_RACK) & (data["data"] > 0)]
    assert list(zip(senders["node"], senders["port"])) == [(0, 0), (0, 1)]
    # the ACKs leave host 1 by both of its NICs as well (the simulator's GetNicIdxOfRxQp)
    h1 = ports[ports["node"] == 1]
    assert (h1["ctrl_bytes"] > 0).all() and len(h1) == 2
