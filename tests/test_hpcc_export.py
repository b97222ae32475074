"""export-hpcc (fct.txt, pfc.txt, qlen.txt) on synthetic run folders whose tables are written here,
so the files' formats are pinned down independently of what the core simulates."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hopsim.interop.hpcc.exporter import node_ip

OFFSET_PS = 2_000_000_000_000  # the flow file's 2 s
U64 = pa.uint64()


def make_run(d, flows: dict, pfc: dict | None = None, qlen: dict | None = None, offset_ps: int = OFFSET_PS):
    """A run folder as store.write_run leaves it, as far as export-hpcc looks: summary.json
    (what makes it complete), scenario.json (the workload's time offset) and the tables given."""
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"flows": len(flows["flow_id"])}))
    (d / "scenario.json").write_text(json.dumps({"workload": {"kind": "hpcc_flows", "text": "", "time_offset": offset_ps}}))
    pq.write_table(pa.table(flows), d / "flows.parquet")
    if pfc is not None:
        pq.write_table(pa.table(pfc), d / "pfc_received.parquet")
    if qlen is not None:
        pq.write_table(pa.table(qlen), d / "qlen.parquet")
    return d


def base_flows():
    """Three flows: 0->2 and 0->2 again (same pair) and 3->0; the second never finishes."""
    return {
        "flow_id": pa.array([0, 1, 2], pa.uint32()),
        "src": pa.array([0, 0, 3], pa.uint32()),
        "dst": pa.array([2, 2, 0], pa.uint32()),
        "size_bytes": pa.array([200_000, 5_000, 1_000], U64),
        "start_ps": pa.array([1_000_000, 1_500_000, 1_500_000], U64),
        # receiver-side completion: flow 2 before flow 0
        "finish_ps": pa.array([30_000_500, None, 9_000_000], U64),
        "fct_ps": pa.array([29_000_500, None, 7_500_000], U64),
        "ideal_fct_ps": pa.array([18_000_000, 2_000_000, 1_000_000], U64),
        "finished": [True, False, True],
    }


def new_core_flows():
    f = base_flows()
    f.update({
        # the sender's last ACK: flow 0 now completes first
        "ack_finish_ps": pa.array([8_000_000, None, 12_000_000], U64),
        "ack_fct_ps": pa.array([7_000_999, None, 10_500_000], U64),
        "hpcc_standalone_fct_ps": pa.array([6_900_000, 3_000_000, 2_100_000], U64),
        "sport": pa.array([10000, 10001, 10000], pa.uint32()),
        "dport": pa.array([100, 100, 100], pa.uint32()),
    })
    return f


def test_fct_on_the_simulators_basis(tmp_path, cli):
    run = make_run(tmp_path / "run", new_core_flows())
    code, msg = cli("export-hpcc", run)
    assert code == 0, msg
    assert (run / "fct.txt").read_text().splitlines() == [
        f"{node_ip(0):08x} {node_ip(2):08x} 10000 100 200000 2000001000 7000 6900",
        f"{node_ip(3):08x} {node_ip(0):08x} 10000 100 1000 2000001500 10500 2100",
    ]
    assert "pfc.txt skipped" in msg and "qlen.txt skipped" in msg and "record.qlen_monitor" in msg
    assert not (run / "pfc.txt").exists() and not (run / "qlen.txt").exists()


def test_fct_falls_back_to_the_older_columns(tmp_path, cli):
    f = base_flows()
    f["finish_ps"] = pa.array([30_000_500, 40_000_000, 9_000_000], U64)
    f["fct_ps"] = pa.array([29_000_500, 38_500_000, 7_500_000], U64)
    run = make_run(tmp_path / "run", f)
    code, msg = cli("export-fct", run, "--out", tmp_path / "f.txt")
    assert code == 0, msg
    rows = [l.split() for l in (tmp_path / "f.txt").read_text().splitlines()]
    # completion order; sport numbered per (src, dst) pair from 10000, as third.cc's portNumder
    assert [r[4] for r in rows] == ["1000", "200000", "5000"]
    assert [r[2] for r in rows] == ["10000", "10000", "10001"]
    assert rows[1][5:] == ["2000001000", "29000", "18000"]


def test_pfc_lines(tmp_path, cli):
    pfc = {
        "time_ps": pa.array([8_560_000, 8_560_000, 9_000_123, 8_000_000], U64),
        "node": pa.array([2, 32, 3, 33], pa.uint32()),
        "is_switch": [False, True, False, True],
        "port": pa.array([0, 4, 0, 0], pa.uint16()),
        "pause": [True, True, False, True],
    }
    run = make_run(tmp_path / "run", new_core_flows(), pfc=pfc)
    code, msg = cli("export-hpcc", run)
    assert code == 0, msg
    # time order (ties as written), times in ns with the 2 s offset, device index = port + 1
    assert (run / "pfc.txt").read_text() == (
        "2000008000 33 1 1 1\n"
        "2000008560 2 0 1 1\n"
        "2000008560 32 1 5 1\n"
        "2000009000 3 0 1 0\n"
    )
    assert "pfc.txt: 4 lines" in msg


def test_qlen_lines_as_monitor_buffer_prints_them(tmp_path, cli):
    t1, t2 = 2_000_000_000_000, 2_001_000_000_000
    rows = [  # (dump_time_ps, node, port, kb, count), in no particular order
        (t1, 37, 1, 3, 2), (t1, 37, 1, 0, 10), (t1, 36, 0, 0, 12),
        (t2, 36, 0, 0, 20), (t2, 36, 0, 1, 4), (t2, 37, 1, 0, 10), (t2, 37, 1, 3, 14), (t2, 36, 2, 0, 24),
    ]
    qlen = {k: pa.array([r[i] for r in rows], t) for i, (k, t) in enumerate(
        [("dump_time_ps", U64), ("node", pa.uint32()), ("port", pa.uint16()), ("kb", pa.uint32()), ("count", U64)])}
    out = tmp_path / "exported"
    run = make_run(tmp_path / "run", new_core_flows(), qlen=qlen)
    code, msg = cli("export-hpcc", run, "--out", out)
    assert code == 0, msg
    assert (out / "qlen.txt").read_text() == (
        "time: 2000000000\n"
        "36 1 12\n"
        "37 2 10 0 0 2\n"
        "time: 2001000000\n"
        "36 1 20 4\n"
        "36 3 24\n"
        "37 2 10 0 0 14\n"
    )
    assert (out / "fct.txt").is_file() and not (run / "fct.txt").exists()


def test_a_broken_table_writes_nothing(tmp_path, cli):
    pfc = {"time_ps": pa.array([1], U64), "node": pa.array([1], pa.uint32())}  # no port, is_switch, pause
    run = make_run(tmp_path / "run", new_core_flows(), pfc=pfc)
    code, msg = cli("export-hpcc", run)
    assert code == 2
    assert f"{run}: pfc_received.parquet has no column is_switch, port, pause" in msg
    assert sorted(p.name for p in run.iterdir()) == ["flows.parquet", "pfc_received.parquet", "scenario.json",
                                                     "summary.json"]


def test_export_needs_a_complete_run_folder(tmp_path, cli):
    code, msg = cli("export-hpcc", tmp_path)
    assert code == 2 and f"{tmp_path}: not a complete run folder" in msg
    run = make_run(tmp_path / "run", new_core_flows())
    (run / "flows.parquet").write_text("not parquet")
    code, msg = cli("export-hpcc", run)
    assert code == 2 and f"{run / 'flows.parquet'}: cannot read it as Parquet" in msg and not (run / "fct.txt").exists()


def test_out_that_cannot_be_written(tmp_path, cli):
    run = make_run(tmp_path / "run", new_core_flows())
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, msg = cli("export-hpcc", run, "--out", blocker)
    assert code == 2 and "--out" in msg and str(run) in msg


@pytest.mark.parametrize("offset", [0, OFFSET_PS])
def test_time_offset_only_for_hpcc_flow_files(tmp_path, cli, offset):
    run = make_run(tmp_path / "run", new_core_flows(), offset_ps=offset)
    assert cli("export-fct", run)[0] == 0
    assert (run / "fct.txt").read_text().split()[5] == str((offset + 1_000_000) // 1000)
