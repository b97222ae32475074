"""The TCP transport (``transport.mode = "tcp"``), DCTCP's marking on arrival (``ecn.mark_at``),
Pulser's Ideal (``congestion_control.algorithm = "ideal"``) and the congestion-window record
(``record.cwnd_flows``) from a scenario file: bad values are refused naming the field and what
is allowed, RoCE scenarios keep their hash, a TCP incast repairs its losses and counts how, the
windows of the chosen flows land in ``cwnd.parquet``, and Ideal keeps the switch queues empty."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from hopsim.scenario.model import load_scenario

INCAST = """
name = "tcp-incast"
[topology]
kind = "star"
hosts = 9
rate = "10Gbps"
delay = "10us"
[workload]
kind = "incast"
bursts = 1
[workload.incast]
degree = 8
flow_size = "64KB"
at = "1us"
[buffer]
size = "60KB"
lossless = false
[flow_control]
scheme = "none"
[ecn]
kmin = "65KB"
kmax = "65KB"
pmax = 1.0
ref_rate = "none"
[congestion_control]
algorithm = "dctcp"
"""


def test_bad_transport_mode_and_mark_at_are_refused_with_the_allowed_values(cli, write):
    code, out = cli("validate", write("a.toml", INCAST + '[transport]\nmode = "udp"\n'))
    assert code == 2 and "transport.mode" in out and "'roce' or 'tcp'" in out, out
    code, out = cli("validate", write("b.toml", INCAST.replace("pmax = 1.0", 'pmax = 1.0\nmark_at = "arrival"')))
    assert code == 2 and "ecn.mark_at" in out and "'dequeue' or 'enqueue'" in out, out
    # TCP carries window-based algorithms only
    text = INCAST.replace('algorithm = "dctcp"', 'algorithm = "dcqcn"') + '[transport]\nmode = "tcp"\n'
    code, out = cli("validate", write("c.toml", text))
    assert code == 2 and out.count("transport.mode: 'tcp'") == 1 and "dctcp, pulser, ictcp" in out and "'dcqcn'" in out, out
    code, out = cli("validate", write("d.toml", INCAST + '[transport]\nmode = "tcp"\ntcp = { max_rto = "1ms", min_rto = "2ms" }\n'))
    assert code == 2 and "transport.tcp" in out and "max_rto" in out, out
    code, out = cli("validate", write("e.toml", INCAST + "[record]\ncwnd_flows = [99]\n"))
    assert code == 2 and "record.cwnd_flows" in out and "flow 99" in out, out


def test_roce_scenarios_keep_their_hash_and_send_no_tcp_settings(write):
    plain = load_scenario(write("p.toml", INCAST))
    spelled = load_scenario(write("q.toml", INCAST + '[transport]\nmode = "roce"\n[record]\ncwnd_flows = []\n'))
    assert plain.hash == spelled.hash
    assert "tcp" not in plain.core["net"]["transport"] and "ecn_mark_at" not in plain.core["net"]["switch"]
    tcp = load_scenario(write("t.toml", INCAST + '[transport]\nmode = "tcp"\n'))
    assert tcp.hash != plain.hash
    # ns-3's TcpSocketBase defaults, in picoseconds
    assert tcp.core["net"]["transport"]["tcp"]["min_rto"] == 10**12
    assert tcp.core["net"]["transport"]["tcp"]["dupack_threshold"] == 3


def test_a_tcp_incast_repairs_its_losses_and_records_the_chosen_windows(cli, write, tmp_path):
    text = INCAST + ('[transport]\nmode = "tcp"\nwindow = "off"\ntcp = { min_rto = "1ms", initial_rto = "1ms" }\n'
                     '[record]\ncwnd_flows = [0, 3]\nbuffer_interval = "10us"\n')
    out_dir = tmp_path / "run"
    code, out = cli("run", write("s.toml", text), "--out", out_dir)
    assert code == 0, out
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["flows_finished"] == 8 and summary["drops"] > 0
    m = summary["modules"]
    # losses repaired by TCP: by the timer and/or fast retransmit, never by NACKs
    assert m["tcp_timeouts"] + m["tcp_fast_retransmits"] > 0, m
    assert summary["counters"]["nacks"] == 0
    assert m["tcp_timeouts"] == summary["counters"]["timeouts"]
    cw = pq.read_table(out_dir / "cwnd.parquet").to_pydict()
    assert set(cw["flow"]) == {0, 3}
    assert all(b >= 1000 for b in cw["cwnd_bytes"])
    times = [t for f, t in zip(cw["flow"], cw["time_ns"]) if f == 0]
    assert times == sorted(times) and all(t % 10_000 == 0 for t in times)
    # a timeout takes a window to one MSS (RFC 5681), which the record shows
    if m["tcp_timeouts"]:
        assert min(cw["cwnd_bytes"]) == 1000


def test_ideal_keeps_every_switch_queue_empty(cli, write, tmp_path):
    text = INCAST.replace('algorithm = "dctcp"', 'algorithm = "ideal"').replace('size = "60KB"', 'size = "12MB"')
    text += '[transport]\nwindow = "off"\n'
    out_dir = tmp_path / "ideal"
    code, out = cli("run", write("i.toml", text), "--out", out_dir)
    assert code == 0, out
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["flows_finished"] == 8 and summary["drops"] == 0
    # the oracle books ACKs too: at most one packet waits behind another at any port
    assert summary["max_switch_buffer_bytes"] <= 2 * 1048, summary["max_switch_buffer_bytes"]
    # the incast is served back to back: the last flow ends when 8 x 64 KB have crossed the 10G link
    fct = pq.read_table(out_dir / "flows.parquet").column("fct_ns").to_pylist()
    wire = 8 * 64 * (1000 + 48) * 8 / 10  # ns
    assert max(fct) < wire * 1.05 + 50_000, max(fct)
