"""compare-fct: matching, size buckets, gaps and exit codes, on small synthetic fct.txt files."""

from __future__ import annotations

import json

import pytest

from hopsim.interop.compare import FctRow, compare, match_flows, parse_fct, quantile, size_edges
from hopsim.errors import ScenarioError
from hopsim.interop.hpcc.exporter import node_ip


def line(src, dst, size, start, fct, standalone=1000, sport=10000):
    return f"{node_ip(src):08x} {node_ip(dst):08x} {sport} 100 {size} {start} {fct} {standalone}"


def flows(n=40, slow=1.0, start_shift=0):
    """n flows of sizes 100, 200, ... (one size each), slowdown 1 + i/n scaled by `slow`."""
    out = []
    for i in range(n):
        sd = (1 + i / n) * slow
        out.append(line(i % 7, 7 + i % 5, 100 * (i + 1), 2_000_000_000 + 1000 * i + start_shift, round(1000 * sd)))
    return "\n".join(out) + "\n"


def rows(text):
    return parse_fct(text, "t")


def test_parse_reads_node_ids_from_addresses():
    (r,) = rows(line(300, 5, 1234, 2_000_000_067, 4098, 4199, sport=10003))
    assert (r.src, r.dst, r.sport, r.dport, r.size, r.start_ns, r.fct_ns, r.standalone_ns) == (
        300, 5, 10003, 100, 1234, 2_000_000_067, 4098, 4199)
    assert r.slowdown == pytest.approx(4098 / 4199)
    # the reference's own first line
    (r,) = rows("0b000d01 0b000601 10000 100 443 2000000067 4098 4199")
    assert (r.src, r.dst) == (13, 6)


@pytest.mark.parametrize("text,needle", [
    ("0b000d01 0b000601 10000 100 443 2000000067 4098", "t line 2: expected 8 fields"),
    ("zz000d01 0b000601 10000 100 443 2000000067 4098 4199", "t line 2: sip 'zz000d01' is not a hex address"),
    ("0b000d01 0b000601 10000 100 443 2.5 4098 4199", "t line 2: start_time '2.5' is not a whole number"),
    ("0b000d01 0b000601 10000 100 443 2000000067 4098 0", "t line 2: standalone_fct is 0"),
])
def test_parse_errors_name_line_and_field(text, needle):
    with pytest.raises(ScenarioError, match=needle):
        parse_fct("0b000d01 0b000601 10000 100 443 2000000067 4098 4199\n" + text, "t")


def test_match_by_src_dst_size_start_within_a_nanosecond():
    ref = rows(line(1, 2, 500, 100, 900) + "\n" + line(1, 2, 500, 200, 900) + "\n" + line(3, 4, 10, 50, 9))
    # ns-3 truncates the flow file's seconds: its start may read 1 ns earlier than hopsim's
    cand = rows(line(1, 2, 500, 101, 800) + "\n" + line(1, 2, 500, 199, 800) + "\n"
                + line(3, 4, 11, 50, 9) + "\n" + line(3, 4, 10, 52, 9))
    pairs, ur, uc = match_flows(ref, cand)
    assert [(a.start_ns, b.start_ns) for a, b in pairs] == [(100, 101), (200, 199)]
    assert (ur, uc) == (1, 2)  # size 11 and start 52 (2 ns off) do not match


def test_quantile_is_the_readmes_index_convention():
    v = list(range(1, 101))  # 1..100
    assert quantile(v, 0.99) == 100  # sorted[int(0.99 * 100)] = sorted[99]
    assert quantile(v, 0.5) == 51  # sorted[50]: the upper middle value
    assert quantile([3.0], 0.99) == 3.0


def test_size_edges_keep_ties_in_one_bucket():
    # 20 flows: 12 of size 1 then 2..9: size 1 fills buckets 1 to 6 by rank but lands whole in one
    sizes = [1] * 12 + list(range(2, 10))
    assert size_edges(sizes) == [1, 1, 1, 1, 1, 2, 4, 6, 8]
    text = "\n".join(line(1, 2, s, 1000 * i, 1000) for i, s in enumerate(sizes))
    c = compare(rows(text), rows(text))
    ns = [b["n"] for b in c.buckets]
    assert ns == [0, 0, 0, 0, 0, 12, 2, 2, 2, 2]
    assert c.buckets[5]["size_min"] == c.buckets[5]["size_max"] == 1
    assert c.buckets[0]["ref_median"] is None and c.buckets[0]["median_gap"] is None
    assert c.passed and c.worst["gap"] == 0


def test_compare_gaps_and_worst():
    ref = rows(flows())
    cand = rows(flows(slow=1.05))
    c = compare(ref, cand, tol=0.10)
    assert c.matched == 40 and c.unmatched_ref == c.unmatched_cand == 0
    assert [b["n"] for b in c.buckets] == [4] * 10
    b = c.buckets[0]
    assert b["size_min"] == 100 and b["size_max"] == 400
    assert b["ref_median"] == pytest.approx(1.05)  # slowdowns 1, 1.025, 1.05, 1.075: sorted[2]
    assert b["cand_median"] == pytest.approx(round(1000 * 1.05 * 1.05) / 1000)
    assert c.worst["gap"] == pytest.approx(0.05, abs=0.002)
    assert c.passed
    assert not compare(ref, cand, tol=0.01).passed
    o = c.overall
    assert o["mean"]["ref"] == pytest.approx(sum(1 + i / 40 for i in range(40)) / 40, abs=1e-3)
    assert o["p99"]["ref"] == pytest.approx(1 + 39 / 40, abs=1e-3)


def test_compare_refuses_when_nothing_matches():
    with pytest.raises(ScenarioError, match="no flow of CAND"):
        compare(rows(flows()), rows(flows(start_shift=5)), cand_name="CAND")


# ----------------------------------------------------------------------------- the command


@pytest.fixture
def fct(tmp_path):
    def w(name, text):
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return p
    return w


def test_cli_within_tolerance(fct, tmp_path, cli):
    ref, cand = fct("ref/fct.txt", flows()), fct("cand.txt", flows(slow=1.05))
    out_json, out_png = tmp_path / "o" / "c.json", tmp_path / "c.png"
    (tmp_path / "o").mkdir()
    # a folder holding an fct.txt is read as that file (the reference runs' layout)
    code, msg = cli("compare-fct", ref.parent, cand, "--json", out_json, "--plot", out_png)
    assert code == 0, msg
    assert "worst gap: 5.0%" in msg and ": ok" in msg
    assert "matched 40 flows; unmatched: 0 of 40 in REF, 0 of 40 in CAND" in msg
    d = json.loads(out_json.read_text())
    assert d["passed"] is True and d["matched"] == 40 and len(d["buckets"]) == 10
    assert d["worst"]["gap"] == pytest.approx(0.05, abs=0.002)
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob(".*tmp*")) and not list((tmp_path / "o").glob(".*"))


def test_cli_beyond_tolerance_exits_1(fct, tmp_path, cli):
    ref, cand = fct("ref.txt", flows()), fct("cand.txt", flows(slow=1.2))
    code, msg = cli("compare-fct", ref, cand, "--tol", "0.1", "--plot", tmp_path / "p.svg")
    assert code == 1, msg
    assert "worst gap: 20.0%" in msg and "FAIL" in msg
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")
    assert cli("compare-fct", ref, cand, "--tol", "0.25")[0] == 0


def test_cli_reports_unmatched_flows(fct, cli):
    text = flows()
    ref = fct("ref.txt", text)
    cand = fct("cand.txt", "\n".join(text.splitlines()[5:]) + "\n" + line(99, 98, 7, 5, 5000) + "\n")
    code, msg = cli("compare-fct", ref, cand)
    assert code == 0, msg
    assert "matched 35 flows; unmatched: 5 of 40 in REF, 1 of 36 in CAND" in msg


@pytest.mark.parametrize("case,needle", [
    ("nothing", "no flow of"),
    ("badline", "line 3: fct 'x' is not a whole number"),
    ("missing", "cannot read it"),
    ("plotext", "--plot"),
    ("emptydir", "neither a complete hopsim run folder"),
    ("latin1", "line 1: not UTF-8 text (byte 0xe9)"),
])
def test_cli_bad_input_exits_2_and_writes_nothing(fct, tmp_path, cli, case, needle):
    ref = fct("ref.txt", flows())
    cand = fct("cand.txt", flows(start_shift=10))
    args = [ref, cand]
    if case == "badline":
        lines = flows().splitlines()
        lines[2] = lines[2].rsplit(" ", 2)[0] + " x 1000"
        args = [ref, fct("bad.txt", "\n".join(lines))]
    elif case == "missing":
        args = [ref, tmp_path / "nothere.txt"]
    elif case == "plotext":
        args = [ref, ref, "--plot", tmp_path / "p.bmpx"]
    elif case == "emptydir":
        (tmp_path / "empty").mkdir()
        args = [ref, tmp_path / "empty"]
    elif case == "latin1":
        (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
        args = [ref, tmp_path / "latin1.txt"]
    code, msg = cli("compare-fct", *args, "--json", tmp_path / "c.json")
    assert code == 2, msg
    assert needle in msg
    assert not (tmp_path / "c.json").exists()


def cliff(stuck, n=500, size=1000, high=5.0):
    """`n` flows of one size: `stuck` of them (spread over the run) at slowdown `high`, the rest at
    1.2: the p99 (the 5th slowest) is 1.2 with 4 stuck and `high` with 5."""
    out = []
    every = n // max(stuck, 1)
    for i in range(n):
        sd = high if stuck and i % every == 0 and i // every < stuck else 1.2
        out.append(line(i % 7, 7 + i % 5, size, 2_000_000_000 + 1000 * i, round(1000 * sd)))
    return rows("\n".join(out) + "\n")


def test_a_p99_on_a_cliff_is_judged_against_the_references_interval_not_its_one_value():
    """One stuck flow more or less moves a p99 on a cliff from 1.2 to 5 (gap 317%): the reference's
    bootstrap interval (one run) holds both, so that is no failure; a candidate whose flows are all
    stuck is outside it. With several runs a side's p99 is the range over them."""
    ref = cliff(4)
    c = compare(ref, cliff(5))
    b = next(b for b in c.buckets if b["n"])
    assert b["ref_p99"] == pytest.approx(1.2) and b["cand_p99"] == pytest.approx(5.0)
    assert b["p99_gap"] > 3 and b["ref_p99_range"] == pytest.approx([1.2, 5.0])
    assert b["p99_range_gap"] == 0.0 and c.passed
    far = compare(ref, cliff(5, high=9.0))
    assert far.worst["stat"] == "p99" and far.worst["gap"] == pytest.approx((9.0 - 5.0) / 5.0) and not far.passed
    # seeds: the reference's runs 1.2, 1.2 and the candidate's 5, 5: the ranges do not meet
    seeds = compare(ref, cliff(5), ref_more=[cliff(3)], cand_more=[cliff(7)])
    b = next(b for b in seeds.buckets if b["n"])
    assert b["ref_p99_range"] == pytest.approx([1.2, 1.2]) and b["cand_p99_range"] == pytest.approx([5.0, 5.0])
    assert b["p99_range_gap"] == pytest.approx((5.0 - 1.2) / 1.2) and not seeds.passed
    assert seeds.runs == {"ref": 2, "cand": 2}


def test_cli_takes_more_seeds_of_each_side(tmp_path, cli):
    """--ref-seed and --cand-seed: each side's p99 a range over its runs (here 1.2-5 on both)."""
    def write(name, stuck):
        text = []
        n, every = 500, 500 // stuck
        for i in range(n):
            sd = 5.0 if i % every == 0 and i // every < stuck else 1.2
            text.append(line(i % 7, 7 + i % 5, 1000, 2_000_000_000 + 1000 * i, round(1000 * sd)))
        (tmp_path / name).write_text("\n".join(text) + "\n")
    for name, stuck in (("r1.txt", 5), ("r2.txt", 6), ("c1.txt", 6), ("c2.txt", 4)):
        write(name, stuck)
    code, msg = cli("compare-fct", tmp_path / "r1.txt", tmp_path / "c1.txt", "--ref-seed", tmp_path / "r2.txt",
                    "--cand-seed", tmp_path / "c2.txt", "--json", tmp_path / "c.json")
    assert code == 0, msg
    assert "over its 2 runs" in msg
    j = json.loads((tmp_path / "c.json").read_text())
    assert j["runs"] == {"ref": 2, "cand": 2}
    code, msg = cli("compare-fct", tmp_path / "r1.txt", tmp_path / "c1.txt", "--ref-seed", tmp_path / "nope.txt")
    assert code == 2 and "nope.txt" in msg, msg
