"""Every figure of every paper folder computes: its SQL (or named metric) binds to the tables a run
writes, through the code the reproduce page uses (`claims.figure_values`, `_plot`, and each
reported number's own metric), so a renamed column cannot hide a figure behind "figure failed" or a
claim behind "no number" on the page.

How: one tiny run with every record on (buffer and queue samples, the queue-length monitor, latency
with per_hop, cwnd_flows, trace, and Floodgate, whose module samples and control frames fill
``module_samples`` and ``control``), so each table the views offer exists with all its columns.
For each sweep of a folder, that run stands in for every point the sweep plans: a folder per point
whose summary carries the point's params, so the ``runs`` table and the views have the sweep's
parameter columns (``load``, ``degree``, ``T``, ...) and its labels, as a real reproduction has.
The numbers are meaningless. What is checked: each query runs and returns the columns the page
reads (a series' x and y by name: its plot draws nothing, and reads neither, when no row falls in
its time window), and the records a figure's tables need are on in its sweep's runs (those tables
are written empty when off: the SQL binds, the figure shows nothing). The points are planned quick
(one seed: labels leave seeds out).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_scenario
from test_floodgate import SMALL

PAPERS = ("ppfc", "pulser", "bfc", "flowsail", "floodgate")

# tables a run writes empty unless a record is on (`store`'s table list): a figure over one of them
# binds, yet gives no number, in a sweep whose runs leave it off
RECORDED = {
    "latency": ("record.latency", lambda r: r.latency is not None),
    "cwnd": ("record.cwnd_flows", lambda r: bool(r.cwnd_flows)),
    "trace": ("record.trace", lambda r: r.trace is not None),
    "qlen": ("record.qlen_monitor", lambda r: r.qlen_monitor is not None),
    "queues": ("record.queue_ports", lambda r: bool(r.queue_ports)),
}

# Floodgate's small incast (its module samples and control frames fill module_samples and control)
# with every other record on
ALL_RECORDS = SMALL.replace("[record]\n", "[record]\nqueue_ports = [[12, 0]]\ncwnd_flows = [0]\nqlen_monitor = {}\n") + """
[record.trace]
flows = [0]
[record.latency]
per_hop = true
"""


@pytest.fixture(scope="module")
def one_run(tmp_path_factory) -> Path:
    from hopsim.run import TABLES

    run = run_scenario(tmp_path_factory.mktemp("paper-sql"), ALL_RECORDS)
    missing = [t for t in TABLES if not (run / f"{t}.parquet").exists()]
    assert not missing, f"the run lacks tables {missing}: the figures' SQL over them would go unchecked"
    return run


def _as_sweep(run: Path, sweep: Path, out: Path) -> list:
    """One run per point `sweep` plans in `out`, each `run`'s tables under the point's params; the points."""
    from hopsim.sweep import plan_sweep

    summary = json.loads((run / "summary.json").read_text())
    _, points = plan_sweep(sweep, max_memory="off", quick=True)
    for pt in points:
        d = out / pt.run_id
        d.mkdir(parents=True)
        for t in run.glob("*.parquet"):
            (d / t.name).symlink_to(t)
        # keys sorted as `store.write_run` keeps them: a label's grid values come in that order
        (d / "summary.json").write_text(json.dumps({**summary, "params": pt.params}, sort_keys=True, default=str))
    return points


def _unrecorded(sql: str | None, points: list) -> list[str]:
    """'TABLE: KEY is off in runs ...' for each table `sql` reads that some of the points leave empty."""
    out = []
    for t in sorted(set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql or "", re.I)) & set(RECORDED)):
        key, on = RECORDED[t]
        off = sorted({str(pt.params.get("name", pt.run_id)) for pt in points if not on(pt.scenario.model.record)})
        if off:
            out.append(f"reads {t}, but {key} is off in runs {off}")
    return out


@pytest.mark.parametrize("paper", PAPERS)
def test_every_figure_of_the_paper_computes(paper, repo, one_run, tmp_path):
    import matplotlib.pyplot as plt

    from hopsim.papers.claims import by_label, figure_values, metric_by_run
    from hopsim.results.query import connect
    from hopsim.papers.plot import draw
    from hopsim.papers.reproduce import paper_sweeps

    sweeps = paper_sweeps(repo / "scenarios" / "papers" / paper)
    failed, figures = [], 0
    for path, model in sweeps:
        points = _as_sweep(one_run, path, tmp_path / path.stem)
        con = connect(tmp_path / path.stem)
        for fig in model.paper.figures:
            figures += 1
            failed += [f"{paper}/{path.name} {fig.id}: {m}" for m in _unrecorded(fig.sql, points)]
            try:
                values = figure_values(con, fig)
                if fig.plot == "series":  # the plot reads label, x, y, but draws nothing when no row came
                    cols = con.execute(fig.sql).fetchdf().columns
                    assert {"label", "x", "y"} <= set(cols), f"a series' sql must return label, x, y; it returned {list(cols)}"
                d = draw(con, fig, values)
                if d is not None:
                    plt.close(d.figure)
                for r in fig.reported:
                    if r.metric is not None or r.flows is not None:  # the page computes these apart
                        by_label(metric_by_run(con, r.metric or fig.metric, None if r.metric else fig.sql,
                                               r.flows or fig.flows))
            except Exception as e:  # noqa: BLE001 - what failed, and where, is the test's message
                failed.append(f"{paper}/{path.name} {fig.id}: {type(e).__name__}: {e}")
        con.close()
    assert figures, f"{paper}: no figures found"
    assert not failed, "\n".join(failed)
