"""The options that follow the BFC paper's simulator (BFC_NS3_NSDI2022) outside BFC's own table,
end to end from a scenario: an ACK every N packets (`transport.ack_every`), per-packet round
robin among queues (`queues.scheduler = "rr"`) and an unlimited buffer
(`flow_control.bfc.unlimited_buffer`). BFC's own (hrtt, pause_counts_arrival, pause_delivery)
are unit-tested in crates/hopsim-core/src/fc/bfc.rs."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from conftest import TINY, run_scenario

ONE_FLOW = """
name = "one"
seed = 1
[topology]
kind = "star"
hosts = 2
rate = "100Gbps"
delay = "1us"
[workload]
kind = "flows"
flows = [{{src = 0, dst = 1, size = "600KB"}}]
[transport]
mtu = 1000
window = "off"
ack = 30
ack_every = {every}
"""


def _port(run, node: int) -> dict:
    t = pq.read_table(run / "ports.parquet").to_pylist()
    return next(r for r in t if r["node"] == node)


@pytest.mark.parametrize("every,acks", [(1, 600), (256, 3), (1000, 1)])
def test_an_ack_every_n_packets_from_the_n_plus_first_and_the_last(tmp_path, every, acks):
    """600 packets: with 256 the simulator's milestones (packets 257 and 513) and the last; the
    sender still finishes (its last ACK)."""
    run = run_scenario(tmp_path, ONE_FLOW.format(every=every))
    rx = _port(run, 1)  # the receiver's NIC: it sends only the ACKs
    assert rx["ctrl_bytes"] == acks * 30, rx
    f = pq.read_table(run / "flows.parquet").to_pylist()[0]
    assert f["ack_finish_ps"] is not None and f["ack_finish_ps"] >= f["finish_ps"]


# conftest's 4-to-1 incast of 100 KB flows, into a 20 KB buffer, under BFC without backpressure
INCAST = TINY.replace('size = "300KB"', 'size = "20KB"') + """
[queues]
count = 8
scheduler = "rr"
[flow_control]
scheme = "bfc"
[flow_control.bfc]
backpressure = false
unlimited_buffer = {unlimited}
"""


@pytest.mark.parametrize("unlimited", [False, True])
def test_an_unlimited_buffer_never_drops_and_round_robin_reaches_the_switches(tmp_path, unlimited):
    """A 4-to-1 incast of 100 KB flows without backpressure into a 20 KB buffer drops packets;
    with `unlimited_buffer` the BFC simulator's admission (which never refuses) holds them all."""
    import json

    run = run_scenario(tmp_path, INCAST.format(unlimited=str(unlimited).lower()))
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["drops"] == 0) == unlimited, summary["drops"]
    assert summary["flows_finished"] == 4
    if unlimited:
        assert summary["max_switch_buffer_bytes"] > 20_000
    core = json.loads((run / "scenario.json").read_text())
    assert core["net"]["switch"]["scheduler"] == {"kind": "rr"}


def test_the_header_index_and_table_size_keep_old_hashes_and_name_their_errors(repo, cli):
    """`flow_control.bfc.flow_index` and `table_entries` (fc/bfc.rs, fc/bfc_ns3.rs): left out of
    the core's JSON at their defaults, so BFC scenarios written before them keep their hash; the
    BFC simulator's values reach the core; a bad value exits 2 naming the field and what is
    allowed."""
    from hopsim.scenario.model import load_scenario

    t1 = load_scenario(repo / "scenarios" / "papers" / "bfc" / "table1-long-flow.toml")
    fc = t1.core["net"]["flow_control"]
    assert "flow_index" not in fc and "table_entries" not in fc
    assert t1.with_overrides({"flow_control.bfc.flow_index": "fid_hash"}).hash == t1.hash
    ns3 = t1.with_overrides({"flow_control.bfc.flow_index": "ns3_header", "flow_control.bfc.table_entries": 7200})
    got = ns3.core["net"]["flow_control"]
    assert (got["flow_index"], got["table_entries"]) == ("ns3_header", 7200) and ns3.hash != t1.hash
    f = repo / "scenarios" / "papers" / "bfc" / "table1-long-flow.toml"
    for sets, words in ((("flow_control.bfc.flow_index=ns3",), ("flow_control.bfc.flow_index", "fid_hash", "ns3_header")),
                        (("flow_control.bfc.table_entries=0",), ("flow_control.bfc.table_entries",)),
                        (("flow_control.bfc.flow_index=ns3_header", "flow_control.bfc.per_flow=true"),
                         ("flow_control.bfc.flow_index", "per_flow = false"))):
        code, msg = cli("validate", f, *[x for s in sets for x in ("--set", s)])
        assert code == 2 and all(w in msg for w in words), msg
