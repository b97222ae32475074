"""Every figure of every paper page, drawn from stand-in values (no simulation: the labels the
sweeps' runs will carry, each with a positive value): each axis names its unit (or is an axis of
schemes or settings), each number the paper reports is drawn on the figure, a swept numeric
parameter is a sorted numeric axis, and no text overlaps another or a legend the data."""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from hopsim.papers.figstyle import SCHEMES, colours, has_unit, scheme_name, sort_key
from hopsim.papers.claims import Figure, check, claim_values, figure_values
from hopsim.papers.page import cause_excerpt
from hopsim.papers.plot import _label_part, _legend_name, _parse, bar_groups, draw, text_overlaps
from hopsim.papers.reproduce import all_papers, paper_dir, paper_sweeps

from paper_claims import planned_labels

CATEGORY_AXES = ("scheme", "setting", "hop class")


def _value(label: str) -> float:
    return 1.0 + zlib.crc32(label.encode()) % 997


class _Result:
    def __init__(self, df: pd.DataFrame):
        self.df = df

    def fetchdf(self) -> pd.DataFrame:
        return self.df


class StandIn:
    """A connection that answers the queries `reproduce` makes with stand-in values for the
    labels of one sweep (and those its claims name, such as a figure's own SQL labels)."""

    def __init__(self, labels: dict[str, dict], fig: Figure):
        extra = [lab for r in fig.reported for lab in (r.ratio or [r.label]) if lab not in labels]
        # in the order of text, as a runs table gives them ("fixed 100us" before "fixed 20us"): the
        # figure must sort them itself
        self.labels, self.fig = {lab: v for lab, v in sorted({**labels, **{lab: {} for lab in extra}}.items())}, fig

    def execute(self, sql: str) -> _Result:
        labs = list(self.labels)
        if sql.startswith("SELECT DISTINCT"):  # a lines figure's x per run (or label)
            key = sql.split()[2].rstrip(",")
            return _Result(pd.DataFrame({key: labs, "x": [self.labels[lab].get(self.fig.x) for lab in labs]}))
        if "size_bytes, slowdown, finished, incast" in sql:
            n = 50
            return _Result(pd.DataFrame({"label": np.repeat(labs, n), "size_bytes": np.tile(np.geomspace(1e3, 1e7, n), len(labs)),
                                         "slowdown": np.tile(np.linspace(1, 20, n), len(labs)), "finished": True,
                                         "incast": False}))
        if "FROM buffer WHERE scope = 'switch'" in sql and sql.startswith("SELECT label, scope"):
            return _Result(pd.DataFrame({"label": np.repeat(labs, 20), "scope": "switch",
                                         "bytes": np.tile(np.linspace(0, 2e6, 20), len(labs))}))
        if self.fig.plot == "series" and sql == self.fig.sql:
            # points across every window its claims judge, each label's at its own height
            top = max([4.0, *(w[1] for r in self.fig.reported for w in (r.x_range, r.relative_to) if w)])
            x = np.linspace(0.0, top * 1.2, 25)
            return _Result(pd.DataFrame({"label": np.repeat(labs, len(x)), "x": np.tile(x, len(labs)),
                                         "y": np.concatenate([_value(lab) + np.arange(len(x)) for lab in labs])}))
        return _Result(pd.DataFrame({"run": labs, "label": labs, "value": [_value(lab) for lab in labs]}))


def _figures():
    root = Path(__file__).resolve().parents[1] / "scenarios" / "papers"
    for paper in all_papers():
        for path, model in paper_sweeps(paper_dir(str(root / paper))):
            for fig in model.paper.figures:
                if fig.plot != "table":
                    yield pytest.param(path, fig, id=f"{paper}/{fig.id}")


def assert_paper_figure(path: Path, fig: Figure) -> None:
    """The checks of one figure: units on every axis, every reported number drawn."""
    con = StandIn(planned_labels(path, quick=True), fig)
    values = figure_values(con, fig)
    d = draw(con, fig, values)
    assert d is not None
    try:
        for ax in d.figure.axes:
            y, x = ax.get_ylabel(), ax.get_xlabel()
            assert has_unit(y), f"{fig.id}: y axis {y!r} names no unit"
            assert has_unit(x) or x.startswith(CATEGORY_AXES), f"{fig.id}: x axis {x!r} names no unit"
        gids = {a.get_gid() for a in d.figure.findobj()}
        for i, r in enumerate(fig.reported):
            own = values if r.metric is None and r.flows is None else {lab: _value(lab) for lab in con.labels}
            has_number = check(r, claim_values(con, fig, r, own) if r.stat else own).holds is not None
            if has_number and r.direction is None:
                assert f"paper-claim-{i}" in gids and i in d.drawn, f"{fig.id}: reported number {i} ({r.note}) not drawn"
        assert not d.data.empty and {"label", "value", "unit"} <= set(d.data.columns)
        assert_swept_axis_sorted(fig, list(con.labels), d.figure)
        overlaps = text_overlaps(d.figure)
        assert not overlaps, f"{fig.id}: {overlaps}"
        gap = title_gap(d.figure)
        assert gap <= MAX_TITLE_GAP, f"{fig.id}: {gap:.2f} in of empty band between the title and the charts"
    finally:
        plt.close(d.figure)


MAX_TITLE_GAP = 0.3
"""Inches between a figure's title and its charts: the layout's padding (0.2 in), no empty band."""


def title_gap(mpl) -> float:
    """Inches from the bottom of a figure's title down to the top of its highest chart (with the
    chart's own title, legend and labels)."""
    r = mpl.canvas.get_renderer()
    top = max(ax.get_tightbbox(r).y1 for ax in mpl.axes)
    return (mpl._suptitle.get_window_extent(r).y0 - top) / mpl.dpi


def swept_parameters(labels: list[str]) -> set[str]:
    """The parameters every label carries a number for (``degree=24``, ``loss 5%``), with two or more values."""
    keys = {m for lab in labels for m in __import__("re").findall(r"([A-Za-z_]\w*)=[0-9.]", lab)}
    out = set()
    for k in keys:
        vals = [_label_part(lab, k) for lab in labels]
        if all(v is not None and np.isfinite(_parse(v)[0]) for v in vals) and len(set(vals)) > 1:
            out.add(k)
    return out


def assert_swept_axis_sorted(fig: Figure, labels: list[str], mpl) -> None:
    """A figure of runs that sweep a numeric parameter puts it on its x axis (or draws one chart per
    value), numeric and sorted: the lines' x rise, the tick labels read as rising numbers."""
    swept = swept_parameters([lab for lab in labels if lab not in fig.reference])
    if fig.plot in ("bars", "lines") and swept:
        assert fig.x is not None, f"{fig.id}: runs sweep {sorted(swept)} but the figure has no x axis of them"
    if fig.x is None or fig.plot not in ("bars", "lines"):
        return
    main = mpl.axes[0]
    for ln in main.lines:
        xs = np.asarray(ln.get_xdata(), dtype=float)
        if len(xs) > 1 and ln.get_linestyle() != "--" and not ln.get_label().startswith("paper"):
            assert np.all(np.diff(xs) > 0), f"{fig.id}: line {ln.get_label()!r} x not rising: {xs}"
    ticks = [t.get_text().replace(",", "") for t in main.get_xticklabels() if t.get_text()]
    nums = [float(t) for t in ticks]
    assert nums == sorted(nums) and len(set(nums)) == len(nums), f"{fig.id}: x ticks {ticks} not rising numbers"
    if fig.logx:
        assert main.get_xscale() == "log", f"{fig.id}: logx but a {main.get_xscale()} axis"


@pytest.mark.parametrize("path, fig", list(_figures()))
def test_every_paper_figure_has_units_and_the_papers_numbers(path, fig):
    assert_paper_figure(path, fig)


NO_VERDICT_YET = {
    "floodgate": {
        "fig12-goodput": "not in the paper: what the hosts' go-back-N makes of Fig. 12's losses",
        "fig18-memcached": "not the paper's Fig. 18: its numbers are of Web Server (fig18-webserver)",
    },
}
"""Figures whose statement (``claim``) has no checkable claim, and why (one that is not the paper's)."""


def test_every_statement_of_a_figure_has_a_verdict_or_is_flagged():
    unflagged = []
    for paper in all_papers():
        for _, model in paper_sweeps(paper_dir(paper)):
            for fig in model.paper.figures:
                if fig.claim and not fig.reported and fig.id not in NO_VERDICT_YET.get(paper, {}):
                    unflagged.append(f"{paper}/{fig.id}: {fig.claim}")
    assert not unflagged, "statements with no verdict (give a reported number or a direction):\n" + "\n".join(unflagged)


def test_every_documented_cause_points_at_a_comment():
    for paper in all_papers():
        for path, model in paper_sweeps(paper_dir(paper)):
            for fig in model.paper.figures:
                for r in fig.reported:
                    if r.cause:
                        _, _, text = cause_excerpt(r.cause, path.parent)
                        assert len(text) > 20, f"{path.name} {fig.id}: cause {r.cause} is not at a comment"


def test_bars_one_chart_per_sweep_dimension_sorted_by_value():
    labels = ["T=10us", "thre=1BDP", "T=20us", "T=5us", "T=40us", "thre=38BDP"]
    assert bar_groups(labels) == [("T", ["T=5us", "T=10us", "T=20us", "T=40us"]), ("thre", ["thre=1BDP", "thre=38BDP"])]
    assert bar_groups(["loss 10%", "loss 0%", "loss 5%"]) == [(None, ["loss 0%", "loss 5%", "loss 10%"])]
    # schemes keep the sweep's order
    assert bar_groups(["dcqcn", "floodgate"]) == [(None, ["dcqcn", "floodgate"])]
    assert sorted(["1ms", "40us", "5us"], key=sort_key) == ["5us", "40us", "1ms"]


def test_one_colour_and_the_papers_name_per_scheme():
    a, b = colours(["pfc", "ppfc", "capfc"]), colours(["capfc", "dcqcn", "pfc"])
    assert a["pfc"] == b["pfc"] == SCHEMES["pfc"][1] and a["capfc"] == b["capfc"]
    # a variant is a shade of its scheme, and the scheme keeps its own colour
    v = colours(["bfc-128", "bfc"])
    assert v["bfc"] == SCHEMES["bfc"][1] and v["bfc-128"] != v["bfc"]
    assert scheme_name("ppfc 6:1") == "P-PFC 6:1" and scheme_name("ideal-fq") == "Ideal-FQ"
    assert scheme_name("fixed 5us") == "fixed 5us"
    assert not math.isnan(_value("x"))


def _legend_figures():
    for path, fig in (p.values for p in _figures()):
        if fig.legend and fig.plot in ("bars", "lines", "series"):
            yield pytest.param(path, fig, id=fig.id)


@pytest.mark.parametrize("path, fig", list(_legend_figures()))
def test_a_papers_legend_order_names_what_the_figure_draws_in_that_order(path, fig):
    """Each name of a figure's `legend` is a series it draws (a scheme, or a scheme's lines such as
    FlowSail f1-f3), and the figure draws them in the legend's order."""
    con = StandIn(planned_labels(path, quick=True), fig)
    d = draw(con, fig, figure_values(con, fig))
    try:
        drawn = list(dict.fromkeys(str(s) for s in d.data["series"]))
    finally:
        plt.close(d.figure)
    at = []
    for name in fig.legend:
        shown = _legend_name(name, fig)
        where = [i for i, s in enumerate(drawn) if s == shown or s.startswith(shown + " ")]
        assert where, f"{fig.id}: legend names {name!r} ({shown}), which the figure does not draw: {drawn}"
        at.append(min(where))
    assert at == sorted(at), f"{fig.id}: drawn {drawn}, not in the legend's order {fig.legend}"
