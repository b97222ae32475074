"""`hopsim reproduce`: a paper folder's [paper] sweeps run (quick or full, never mixed), the page
redraws each figure and checks each reported number; claims are judged by direction and a factor
of 2; bad [paper] tables are refused naming the field."""

from __future__ import annotations

import json
import math

import pytest

from hopsim.papers.claims import Reported, check

from conftest import TINY

SWEEP = """# A tiny paper, §2.1: PFC against a lossy fabric
# PFC's flows cannot number 100: the run has 4 flows (the cause of fig1's first claim).
name = "tiny-paper"
base = "tiny.toml"
seeds = [1, 2]
[[runs]]
name = "pfc"
"flow_control.scheme" = "pfc"
[[runs]]
name = "none"
"flow_control.scheme" = "none"
"buffer.lossless" = false

[paper.quick]
"workload.incast.flow_size" = "20KB"

[[paper.figures]]
id = "fig1"
title = "Fig. 1: drops with and without PFC"
page = 3
claim = "PFC never drops"
plot = "bars"
metric = "drops"
[[paper.figures.reported]]
label = "pfc"
metric = "flows_finished"
value = 100.0
note = "a claim that cannot hold: the run has 4 flows"
cause = "fig.toml:2"
[[paper.figures.reported]]
label = "pfc"
value = 1.0
note = "PFC has no drop: hopsim has no number to compare"

[[paper.figures]]
id = "fig2"
title = "Fig. 2: slowdown by size"
plot = "slowdown_by_size"
metric = "slowdown_p99"
[[paper.figures.reported]]
ratio = ["none", "pfc"]
range = [0.5, 3.0]

[[paper.figures]]
id = "fig3"
title = "Fig. 3: queue over time"
plot = "series"
sql = "SELECT label, time_ns / 1000 AS x, avg(bytes) AS y FROM queues GROUP BY ALL ORDER BY x"
y = "queue"
unit = "B"
x_label = "time (us)"
"""


LINES = """
base = "tiny.toml"
[grid]
"workload.incast.degree" = [2, 3]
[[runs]]
name = "pfc"
[[runs]]
name = "none"
"flow_control.scheme" = "none"
[[paper.figures]]
id = "fig4"
title = "Fig. 4: p99 slowdown vs incast degree"
plot = "lines"
x = "degree"
metric = "slowdown_p99"
[[paper.figures.reported]]
ratio = ["pfc, degree=3", "pfc, degree=2"]
value = 1.0
[[paper.figures]]
id = "fig5"
title = "Fig. 5: flows finished vs incast degree, one value per label from SQL"
plot = "lines"
x = "degree"
sql = "SELECT label, count(*) AS value FROM flows GROUP BY label"
y = "flows"
unit = "count"
"""


@pytest.fixture
def paper(tmp_path):
    d = tmp_path / "papers" / "tiny"
    d.mkdir(parents=True)
    (d / "tiny.toml").write_text(TINY)
    (d / "fig.toml").write_text(SWEEP)
    (d / "lines.toml").write_text(LINES)
    return d


def test_quick_reproduction_runs_every_label_once_and_writes_the_page(paper, cli, tmp_path):
    out = tmp_path / "rq"
    code, msg = cli("reproduce", paper, "--quick", "--out", out, "--jobs", "1")
    assert code == 0, msg
    man = json.loads((out / "paper.json").read_text())
    assert man["quick"] is True and man["sweeps"] == ["fig", "lines"]
    runs = [p for p in (out / "fig").iterdir() if (p / "summary.json").exists()]
    assert len(runs) == 2  # first seed only
    # the quick override reached the scenario but is not a label
    for r in runs:
        s = json.loads((r / "summary.json").read_text())
        assert s["params"]["name"] in ("pfc", "none") and "workload.incast.flow_size" not in s["params"]
        assert "20KB" in (r / "scenario.toml").read_text() or "20000" in (r / "scenario.toml").read_text()
    page = (out / "tiny.html").read_text()
    for fig in ("fig1", "fig2", "fig3", "fig4", "fig5"):
        assert f"id='{fig}'" in page
    assert page.count("<img") == 5
    # a grid inside named runs labels them by name and the varying value
    assert "pfc, degree=3 / pfc, degree=2" in page
    assert "differs" in page and "no number" in page
    assert "figure failed" not in page
    # a summary per section of the paper; a claim that does not hold links to its cause, or says none is known
    assert "Summary by section of the paper" in page and "§2.1" in page
    assert "fig.toml:2</a>" in page and "the run has 4 flows (the cause" in page and "cause unknown" in page
    # each figure as SVG, PDF, PNG and its data as CSV, named by its id
    for fig in ("fig1", "fig2", "fig3", "fig4", "fig5"):
        for kind in ("svg", "pdf", "png", "csv"):
            assert (out / "figures" / f"{fig}.{kind}").stat().st_size > 0, (fig, kind)
    assert "<svg" in (out / "figures" / "fig1.svg").read_text()
    assert (out / "figures" / "fig1.pdf").read_bytes().startswith(b"%PDF")
    claims = json.loads((out / "claims.json").read_text())
    assert sum(claims["counts"].values()) == 4 and "§2.1" in claims["sections"]
    # every claim, with what a diff of two versions needs
    assert len(claims["claims"]) == 4
    for c in claims["claims"]:
        assert {"id", "section", "figure", "quantity", "paper", "paper_range", "hopsim", "tier", "cause",
                "cause_class", "cause_text"} <= set(c)
        assert c["tier"] in ("matches", "same direction", "differs", None)
    # the wall time is the command's: the runs and the page
    man = json.loads((out / "paper.json").read_text())
    assert man["wall_s"] >= man["runs_wall_s"] and claims["wall_s"] == man["wall_s"]
    # a folder of reproductions (`reproduce all`) gets an index of its papers
    from hopsim.papers.index import build_index

    index = build_index(tmp_path).read_text()
    assert "rq/tiny.html" in index and f"<b>{claims['counts']['matches']} of 4</b>" in index
    assert "same direction" in index and "differs" in index
    # a full run may not reuse the quick folder
    code, msg = cli("reproduce", paper, "--out", out, "--jobs", "1")
    assert code == 2 and "quick" in msg
    # `hopsim report` on the folder redraws the paper's page
    code, msg = cli("report", out, "--out", tmp_path / "again.html")
    assert code == 0, msg
    assert "id='fig2'" in (tmp_path / "again.html").read_text()


def test_unknown_paper_and_bad_paper_tables_are_refused(paper, cli, tmp_path):
    code, msg = cli("reproduce", "no-such-paper", "--out", tmp_path / "x")
    assert code == 2 and "PAPER" in msg and "no-such-paper" in msg
    (paper / "fig.toml").write_text(SWEEP.replace('metric = "drops"', 'metric = "drop_count"'))
    code, msg = cli("reproduce", paper, "--quick", "--out", tmp_path / "y")
    assert code == 2 and "drop_count" in msg and "slowdown_p99" in msg
    assert not (tmp_path / "y").exists()
    (paper / "fig.toml").write_text(SWEEP.replace("range = [0.5, 3.0]", "range = [3.0, 0.5]"))
    code, msg = cli("reproduce", paper, "--quick", "--out", tmp_path / "z")
    assert code == 2 and "range" in msg


def test_claims_in_three_tiers():
    vals = {"a": 30.0, "b": 10.0, "c": 0.0}
    assert check(Reported(ratio=["a", "b"], value=2.0), vals).tier == "same direction"  # 3 vs 2: 50% off
    assert check(Reported(ratio=["a", "b"], value=2.5), vals).tier == "matches"  # 3 vs 2.5: 20% off
    assert check(Reported(ratio=["a", "b"], value=7.0), vals).tier == "differs"  # 3 vs 7: 2.3x off
    v = check(Reported(ratio=["b", "a"], value=2.0), vals)  # 0.33 vs 2: b wins in hopsim, a in the paper
    assert v.tier == "differs" and v.why == "opposite direction"
    assert check(Reported(ratio=["a", "b"], range=[4.0, 6.0]), vals).tier == "same direction"  # 3 is 1.33x below 4
    assert check(Reported(ratio=["a", "b"], range=[2.0, 6.0]), vals).tier == "matches"
    assert check(Reported(label="a", value=16.0), vals).tier == "same direction"
    assert check(Reported(label="a", value=14.0), vals).tier == "differs"
    assert check(Reported(label="zzz", value=1.0), vals).tier is None
    assert check(Reported(label="c", value=1.0), vals).tier is None
    assert math.isclose(check(Reported(ratio=["a", "b"], value=3.0), vals).hopsim, 3.0)
    # no difference is no direction: 1.0003 against the paper's 2x differs
    tie = {"a": 10.003, "b": 10.0}
    assert check(Reported(ratio=["a", "b"], value=2.0), tie).why == "no difference in hopsim"
    assert check(Reported(ratio=["a", "b"], value=2.0), tie).tier == "differs"
    assert check(Reported(ratio=["a", "b"], value=1.0), tie).tier == "matches"  # the paper says: no difference
