"""A paper's figures as data: the ``[paper]`` table of a sweep file, the metrics a figure shows,
and the check of each number the paper reports against hopsim's.

Why in the sweep file: a figure compares runs (schemes, loads), and the sweep is what names them.
Each ``[[runs]]`` entry sets ``name = "floodgate"``; that name is the run's label (see
`query.label_of`), and the claims below refer to labels. The paper's numbers are written once,
here, with the figure and the page they come from::

    [paper.quick]                    # overrides for `hopsim reproduce --quick` (first seed only)
    "workload.duration" = "100us"
    [[paper.figures]]
    id = "fig8a"
    title = "Fig. 8a: p99 FCT slowdown of Poisson flows, Memcached incastmix"
    page = 9
    claim = "Floodgate cuts the p99 FCT of Poisson flows 2-4x against DCQCN"
    plot = "bars"                    # bars | lines | series | slowdown_by_size | buffer_cdf | table
    metric = "slowdown_p99"          # a named metric, or sql = "SELECT label, ... AS value ..."
                                     # with y = "what the value is" and unit = "us" (`figstyle.UNITS`)
    flows = "NOT incast"             # SQL filter on `flows` for the named flow metrics
    [[paper.figures.reported]]
    ratio = ["dcqcn", "floodgate"]   # metric(dcqcn) / metric(floodgate) ...
    range = [2.0, 4.0]               # ... is 2-4 in the paper (or value = 3.0)
    note = "Fig. 8a, Memcached"
    cause = "fig8-memcached.toml:12"  # where a claim that does not hold is explained (optional)

Each claim gets one of three verdicts (`check`, `TIERS`):

- *matches*: hopsim's number is inside the range the paper gives, else within 25% of the paper's
  number (and a ratio is on the paper's side of 1);
- *same direction*: a ratio on the same side of 1 (by more than 5%: a ratio of 1.0003 is no win)
  and within a factor of 2 of the paper's number (of the nearer end of its range); a value claim
  has no direction, only the factor;
- *differs*: otherwise.

A claim on a series over time (``plot = "series"``: the sql returns label, x, y) judges one
statistic of a label's points inside an x window, with the paper's number or direction as above::

    [[paper.figures.reported]]
    label = "flowsail f2"            # or ratio = ["dctcp", "pulser"]: the statistic of each
    x_range = [0, 750]               # the points with 0 <= x <= 750, in the figure's x unit
    stat = "mean"                    # mean | min | max | last | reach
    value = 20.0                     # in the figure's y unit

``stat = "reach"`` with ``level = 5.84`` is the time to reach a level: the first x in the window
at which y <= level, counted from the window's start (unbounded where it never does: against a
number that differs, in a ratio it is above 1 with no number). ``relative_to = [0, 120]`` divides
the statistic by the same statistic of the same label over that window (a series against its own
earlier self: "restores its pre-incast window" is 1.0). A label's runs (seeds) are pooled.

A value the paper says is zero (``zero = true``) matches an exact 0 and differs from anything
else. A ratio whose denominator is 0 and numerator is not is above 1 with no number: it has the
paper's direction where the paper's ratio is above 1, and differs otherwise.

Seeds are averaged: a named metric is computed per run and the runs of a label are averaged; an
SQL metric's rows of one label are averaged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from .figstyle import UNITS
from ..scenario.schema import Int, Strict

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PaperModel", "Figure", "Reported", "TIERS", "MATCH", "FACTOR", "FLOW_METRICS", "SUMMARY_METRICS", "METRIC_AXES", "y_axis", "metric_by_run",
           "by_label", "Verdict", "check", "figure_values", "claim_axis", "claim_values", "series_values", "SERIES_STATS", "MANIFEST"]

# named metrics over the flows table: SQL aggregate of the finished flows that pass `flows`
MANIFEST = "paper.json"
"""The file in a reproduction's folder that says what ran, quick or full, and how long it took."""

FLOW_METRICS = {
    "slowdown_mean": "avg(slowdown)",
    "slowdown_p50": "quantile_cont(slowdown, 0.5)",
    "slowdown_p95": "quantile_cont(slowdown, 0.95)",
    "slowdown_p99": "quantile_cont(slowdown, 0.99)",
    "fct_us_mean": "avg(fct_ns) / 1000",
    "fct_us_p99": "quantile_cont(fct_ns, 0.99) / 1000",
    "flows_done": "count(*)",
}
# named metrics from the run summary (the `runs` table)
SUMMARY_METRICS = ("pause_frames", "pause_time_ns", "drops", "max_switch_buffer_bytes", "flows_finished",
                   "wall_time_s", "events", "end_time_ns")

# what each named metric is on an axis: (quantity, unit of its values)
METRIC_AXES = {
    "slowdown_mean": ("mean FCT slowdown", "slowdown"),
    "slowdown_p50": ("median FCT slowdown", "slowdown"),
    "slowdown_p95": ("p95 FCT slowdown", "slowdown"),
    "slowdown_p99": ("p99 FCT slowdown", "slowdown"),
    "fct_us_mean": ("mean FCT", "us"),
    "fct_us_p99": ("p99 FCT", "us"),
    "flows_done": ("flows finished", "count"),
    "pause_frames": ("pause frames", "count"),
    "pause_time_ns": ("pause time", "ns"),
    "drops": ("packets dropped", "count"),
    "max_switch_buffer_bytes": ("peak switch buffer", "B"),
    "flows_finished": ("flows finished", "count"),
    "wall_time_s": ("wall time", "s"),
    "events": ("events", "count"),
    "end_time_ns": ("simulated time", "ns"),
}

# ratios within this factor of 1 have no direction (`check`)
DEAD_BAND = 1.05
MATCH = 0.25
"""A number within this fraction of the paper's matches it (where the paper gives no range)."""
FACTOR = 2.0
"""A number within this factor of the paper's, in its direction, has the paper's direction."""
TIERS = ("matches", "same direction", "differs")
"""The verdicts, best first; a claim hopsim has no number for has none (None)."""
Tier = Literal["matches", "same direction", "differs"]

PLOTS = ("bars", "lines", "series", "slowdown_by_size", "buffer_cdf", "table")
SERIES_STATS = ("mean", "min", "max", "last", "reach")
"""What a claim on a series judges of the points in its window (`Reported.stat`)."""


class Reported(Strict):
    """One number the paper reports: a label's value, or the ratio of two labels' values."""

    label: str | None = None
    ratio: list[str] | None = Field(default=None, min_length=2, max_length=2)
    value: float | None = None
    range: list[float] | None = Field(default=None, min_length=2, max_length=2)
    direction: Literal["above", "below"] | None = None
    """A ratio the paper states only the direction of, with no number ("P-PFC's pause time is lower
    than PFC's": ratio = ["ppfc", "pfc"], direction = "below"): hopsim's ratio on that side of 1
    has the paper's direction; no number, so it cannot match one."""
    zero: bool = False
    """A label's value the paper says is zero ("Floodgate triggers no PFC pause"): hopsim's value
    matches when it is exactly 0 and differs otherwise; a zero has no factor to be near."""
    x_range: list[float] | None = Field(default=None, min_length=2, max_length=2)
    """The x window of a series whose points the claim judges (both ends included), in the unit
    of the figure's x; with `stat`."""
    stat: Literal["mean", "min", "max", "last", "reach"] | None = None
    """What of the window's points is judged: their mean, least, greatest or last y, or the time
    to `level` (``reach``: the first x with y <= level, less the window's start)."""
    level: float | None = None
    """The y a series reaches (``stat = "reach"``), in the unit of the figure's y."""
    relative_to: list[float] | None = Field(default=None, min_length=2, max_length=2)
    """An earlier x window of the same label: the statistic is divided by its value there."""
    metric: str | None = None
    flows: str | None = None
    note: str = ""
    cause: str | None = Field(default=None, pattern=r"^[^:]+(:[0-9]+)?$")
    """Where the reason it does not hold is written: ``FILE`` or ``FILE:LINE``, a file of the
    paper's folder (a sweep's comment) or of the repository (a module's doc comment)."""
    cause_class: Literal["mechanism", "setting", "unstated", "not_reproducible"] | None = None
    """What kind of reason `cause` gives: hopsim's mechanism differs from the paper's text
    (``mechanism``), the paper states a setting the scenario cannot apply (``setting``), the paper
    leaves a setting unstated and a sweep shows the claim's dependence on it (``unstated``), or the
    number cannot come from a simulator (testbed hardware, a value read off an unlabelled plot:
    ``not_reproducible``)."""

    @model_validator(mode="after")
    def _one_of_each(self) -> "Reported":
        if (self.label is None) == (self.ratio is None):
            raise ValueError("give exactly one of label (a value claim) and ratio (a ratio claim)")
        self._series_fields()
        if self.zero:
            if self.label is None or self.value is not None or self.range is not None or self.direction is not None:
                raise ValueError("zero = true is for a label's value the paper says is zero: give label and zero, "
                                 "without ratio, value, range or direction")
            return self
        if self.direction is not None:
            if self.ratio is None or self.value is not None or self.range is not None:
                raise ValueError("direction is for a ratio the paper gives no number for: give ratio and direction, "
                                 "without value or range")
            return self
        if (self.value is None) == (self.range is None):
            raise ValueError("give exactly one of value and range (or, for a ratio with no number, direction)")
        if self.range is not None and not (0 < self.range[0] <= self.range[1]):
            raise ValueError(f"range must be two positive numbers, low first; got {self.range}")
        if self.value is not None and self.value <= 0:
            raise ValueError(f"value must be positive (claims are compared as ratios); got {self.value}")
        return self


    def _series_fields(self) -> None:
        if (self.x_range is None) != (self.stat is None):
            raise ValueError("x_range and stat go together: the x window of a series and what of its points "
                             f"is judged ({' | '.join(SERIES_STATS)})")
        for name, w in (("x_range", self.x_range), ("relative_to", self.relative_to)):
            if w is not None and not (math.isfinite(w[0]) and math.isfinite(w[1]) and w[0] <= w[1]):
                raise ValueError(f"{name} must be two finite numbers, low first; got {w}")
        if (self.stat == "reach") != (self.level is not None):
            raise ValueError("stat = 'reach' needs level (the y the series reaches), and level needs stat = 'reach'")
        if self.relative_to is not None and self.stat in (None, "reach"):
            raise ValueError("relative_to needs x_range and a stat of the window's values (mean | min | max | last)")
        if self.stat is not None and (self.metric is not None or self.flows is not None or self.zero):
            raise ValueError("a claim on a series (x_range, stat) takes its points from the figure's sql: "
                             "no metric, flows or zero")


class Figure(Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    title: str
    page: Int | None = None
    claim: str = ""
    plot: Literal["bars", "lines", "series", "slowdown_by_size", "buffer_cdf", "table"] = "bars"
    metric: str | None = None
    sql: str | None = None
    flows: str | None = None
    x: str | None = None
    x_label: str | None = None
    y: str | None = None
    unit: str | None = None
    logy: bool = False
    logx: bool = False
    """The swept x on a log axis, as the paper draws it (incast degrees 10 to 2000)."""
    x_even: bool = False
    """The swept x values evenly spaced, labelled, "not to scale", as the paper draws them."""
    normalise_to: float | str | None = None
    """The x value each line is divided by its own value at (Pulser Fig. 7: degree 24)."""
    reference: list[str] = Field(default_factory=list)
    """Labels drawn as a horizontal line across a lines figure: runs without the swept x (P-PFC's
    dynamic pause time beside the fixed ones)."""
    legend: list[str] = Field(default_factory=list)
    """The series (scheme variants) in the order of the paper's legend; others follow."""
    scheme: str | None = None
    """The scheme of runs whose labels name only a setting (``T=5us`` of Floodgate): their colour."""
    y_limit: float | None = Field(default=None, gt=0)
    """The most the y quantity can physically be, in the figure's raw unit (a 4 MB switch buffer:
    4000000): a paper number above it is drawn at the edge with its value written."""
    reported: list[Reported] = Field(default_factory=list)

    @model_validator(mode="after")
    def _metric(self) -> "Figure":
        if self.metric is not None and self.sql is not None:
            raise ValueError("give metric or sql, not both")
        if self.metric is not None and self.metric not in FLOW_METRICS and self.metric not in SUMMARY_METRICS:
            raise ValueError(f"metric {self.metric!r} is not a named metric; allowed: "
                             f"{', '.join([*FLOW_METRICS, *SUMMARY_METRICS])} (or use sql)")
        if self.plot in ("bars", "lines") and self.metric is None and self.sql is None:
            raise ValueError(f"plot = {self.plot!r} needs a metric or sql")
        if self.plot == "series" and self.sql is None:
            raise ValueError("plot = 'series' needs sql returning label, x, y")
        if self.sql is not None and self.plot != "table" and (self.y is None or self.unit is None):
            raise ValueError("a figure drawn from sql needs y (what its value is) and unit (one of "
                             f"{', '.join(UNITS)}, or slowdown)")
        if self.unit is not None and self.unit not in (*UNITS, "slowdown"):
            raise ValueError(f"unit {self.unit!r} is not one of {', '.join(UNITS)}, slowdown")
        if self.plot == "series" and self.x_label is None:
            raise ValueError("plot = 'series' needs x_label (the quantity on the x axis, with its unit)")
        if self.plot == "lines" and self.x is None:
            raise ValueError("plot = 'lines' needs x (the swept parameter on the x axis)")
        if (self.logx or self.x_even or self.normalise_to is not None) and self.x is None:
            raise ValueError("logx, x_even and normalise_to need x (the swept parameter on the x axis)")
        if self.logx and self.x_even:
            raise ValueError("give logx (a log axis) or x_even (evenly spaced, not to scale), not both")
        for r in self.reported:
            if r.stat is not None and self.plot != "series":
                raise ValueError(f"x_range and stat judge a series over time: they need plot = 'series', not {self.plot!r}")
            if self.plot == "series" and r.stat is None and r.metric is None:
                raise ValueError("a claim on a series needs x_range and stat (the window and what of it is judged: "
                                 f"{' | '.join(SERIES_STATS)}), or a metric of its own")
            if r.stat is not None:
                continue
            m = r.metric or self.metric
            if m is None and self.sql is None:
                raise ValueError("a reported number needs the figure's metric or sql, or its own metric")
            if m is not None and m not in FLOW_METRICS and m not in SUMMARY_METRICS:
                raise ValueError(f"reported metric {m!r} is not a named metric; allowed: "
                                 f"{', '.join([*FLOW_METRICS, *SUMMARY_METRICS])}")
        return self


class PaperModel(Strict):
    quick: dict[str, Any] = Field(default_factory=dict)
    figures: list[Figure] = Field(min_length=1)
    wall_full_s: float | None = Field(default=None, gt=0)
    wall_quick_s: float | None = Field(default=None, gt=0)


def flows_in_words(sql: str) -> str:
    """A flow filter as an axis says it: ``NOT incast AND size_bytes < 3000`` -> ``non-incast flows < 3 KB``."""
    from ..scenario.units import fmt_size

    words = []
    for part in re.split(r"\s+AND\s+", sql.strip(), flags=re.I):
        m = re.fullmatch(r"size_bytes\s*([<>]=?)\s*([0-9]+)", part.strip())
        if part.strip() == "NOT incast":
            words.append("non-incast")
        elif part.strip() == "incast":
            words.append("incast")
        elif m:
            words.append(f"{m.group(1)} {fmt_size(int(m.group(2))).replace('KB', ' KB').replace('MB', ' MB')}")
        elif part.strip() != "finished":
            words.append(part.strip())
    kind = [w for w in words if w in ("non-incast", "incast")]
    return " ".join([*kind, "flows", *(w for w in words if w not in kind)])


def y_axis(fig: Figure, metric: str | None = None, flows: str | None = None) -> tuple[str, str]:
    """(quantity, unit) of a figure's values, or of a claim's own `metric` on it."""
    m = metric or fig.metric
    if m is not None and (metric is not None or fig.sql is None):
        q, unit = METRIC_AXES[m]
        f = flows if flows is not None else fig.flows
        return (f"{q}, {flows_in_words(f)}" if f and m in FLOW_METRICS else q), unit
    return fig.y or "value", fig.unit or ""


def claim_axis(fig: Figure, r: Reported) -> tuple[str, str | None]:
    """(quantity, unit) of a claim's number: the figure's axis, or a statistic of its series over a
    window (a time to reach a level in the x axis' unit; a statistic against an earlier window of
    the same series: unit None, a ratio)."""
    if r.stat is None or r.x_range is None:
        return y_axis(fig, r.metric, r.flows)
    q, unit = y_axis(fig)
    win = f"x {r.x_range[0]:g}-{r.x_range[1]:g}"
    if r.stat == "reach":
        m = re.search(r"\(([^()]+)\)\s*$", fig.x_label or "")
        return (f"time from x {r.x_range[0]:g} until {q} <= {r.level:g} {unit} (window {win})",
                m.group(1) if m and m.group(1) in UNITS else "")
    if r.relative_to is not None:
        return f"{r.stat} {q} over {win} / over x {r.relative_to[0]:g}-{r.relative_to[1]:g}", None
    return f"{r.stat} {q} over {win}", unit


def metric_by_run(con: Any, metric: str | None, sql: str | None = None, flows: str | None = None) -> "pd.DataFrame":
    """(run, label, value) per run for a named metric, or (label, value) rows from `sql`."""
    if sql is not None:
        df = con.execute(sql).fetchdf()
        if "label" not in df or "value" not in df:
            raise ValueError(f"the figure's sql must return columns label and value; it returned {list(df.columns)}")
        return df
    assert metric is not None
    if metric in SUMMARY_METRICS:
        return con.execute(f'SELECT run, label, CAST("{metric}" AS DOUBLE) AS value FROM runs').fetchdf()
    where = f"finished AND ({flows})" if flows else "finished"
    return con.execute(
        f"SELECT r.run, r.label, f.value FROM runs r LEFT JOIN "
        f"(SELECT run, {FLOW_METRICS[metric]} AS value FROM flows WHERE {where} GROUP BY run) f ON f.run = r.run"
    ).fetchdf()


def by_label(df: "pd.DataFrame") -> dict[str, float]:
    """Mean value per label (seeds averaged), in first-seen order."""
    out: dict[str, float] = {}
    for lab, g in df.groupby("label", sort=False):
        v = g["value"].astype(float).dropna()
        out[str(lab)] = float(v.mean()) if len(v) else math.nan
    return out


@dataclass
class Verdict:
    paper: str
    hopsim: float
    tier: Tier | None  # None: hopsim has no number (a label missing, no finished flow)
    why: str

    @property
    def holds(self) -> bool | None:
        """Whether hopsim has at least the paper's direction (None: no number)."""
        return None if self.tier is None else self.tier != "differs"


def _paper_text(r: Reported) -> str:
    if r.zero:
        return "0"
    if r.direction:
        return "above 1" if r.direction == "above" else "below 1"
    if r.range and not math.isfinite(r.range[1]):
        return f"at least {r.range[0]:g}"
    return f"{r.range[0]:g}-{r.range[1]:g}" if r.range else f"{r.value:g}"


def hopsim_number(r: Reported, values: dict[str, float]) -> float:
    """hopsim's number for a claim: the label's value, or the ratio of the two labels' values (``inf``
    where the denominator is 0 and the numerator is not, or the numerator is unbounded: a direction,
    "above", with no number; 0 where the denominator alone is unbounded: "below")."""
    if r.ratio:
        a, b = values.get(r.ratio[0], math.nan), values.get(r.ratio[1], math.nan)
        if math.isinf(a) and math.isinf(b):
            return math.nan
        if (b == 0 and a > 0) or (math.isinf(a) and b >= 0):
            return math.inf
        return a / b if b and not math.isnan(b) else math.nan
    return values.get(r.label or "", math.nan)


def _why_unbounded(r: Reported, values: dict[str, float]) -> str:
    """Why a ratio has no number: which of its labels is 0 or never reaches its level."""
    assert r.ratio is not None
    a, b = r.ratio
    if math.isinf(values[a]) or math.isinf(values[b]):
        return f"{a if math.isinf(values[a]) else b} never reaches {r.level:g} in the window"
    return f"{b} is 0, {a} is not"


def check(r: Reported, values: dict[str, float]) -> Verdict:
    """Compare one reported number with hopsim's values by label (the tiers: module doc)."""
    h = hopsim_number(r, values)
    missing = [x for x in (r.ratio or [r.label]) if x not in values]
    if missing:
        return Verdict(_paper_text(r), math.nan, None, f"no run labelled {', '.join(map(repr, missing))}")
    if r.zero:
        if math.isnan(h):
            return Verdict(_paper_text(r), h, None, "hopsim has no number here")
        return (Verdict(_paper_text(r), h, "matches", "zero, as the paper says") if h == 0 else
                Verdict(_paper_text(r), h, "differs", f"hopsim {h:.4g}, not zero"))
    if not r.ratio and math.isinf(h):  # a time to reach a level that is never reached
        return Verdict(_paper_text(r), h, "differs", f"never reaches {r.level if r.level is not None else math.nan:g} in the window")
    if r.ratio and (math.isinf(h) or (h == 0 and math.isinf(values[r.ratio[1]]))):
        # above 1 (or below it) with no number: a 0 denominator, a level never reached
        up = h > 0
        paper_up = r.direction == "above" if r.direction else min(r.range or [r.value or 0.0]) > 1
        paper_down = r.direction == "below" if r.direction else max(r.range or [r.value or 0.0]) < 1
        side, why = ("above 1" if up else "below 1"), _why_unbounded(r, values)
        same = paper_up if up else paper_down
        return Verdict(_paper_text(r), h, "same direction" if same else "differs",
                       f"{side} ({why}): the paper's direction, no number" if same else f"{side} ({why}): opposite direction")
    if not math.isfinite(h) or h <= 0:
        return Verdict(_paper_text(r), h, None, "hopsim has no positive number here")
    if r.direction:  # a direction only: it can have the paper's direction, not match a number
        right = h > DEAD_BAND if r.direction == "above" else h < 1 / DEAD_BAND
        tie = 1 / DEAD_BAND <= h <= DEAD_BAND
        return Verdict(_paper_text(r), h, "same direction" if right else "differs",
                       "the paper's direction (it gives no number)" if right else
                       "no difference in hopsim" if tie else "opposite direction")
    lo, hi = (r.range[0], r.range[1]) if r.range else (r.value, r.value)
    assert lo is not None and hi is not None
    # factor: how far hopsim is outside the paper's range (1 inside it)
    factor = lo / h if h < lo else (h / hi if h > hi else 1.0)
    # inside the paper's range, or within 25% of its single number
    close = factor == 1.0 if r.range else abs(h - lo) <= MATCH * lo
    off = "inside the paper's range" if factor == 1.0 else f"{abs(h / lo - 1):.0%} off" if not r.range else f"{factor:.2g}x off"
    if not r.ratio:
        tier: Tier = "matches" if close else "same direction" if factor <= FACTOR else "differs"
        return Verdict(_paper_text(r), h, tier, off if tier != "differs" else f"{factor:.2g}x off")
    # a direction is a difference: within 5% of 1 hopsim sees none (a 1.0003 is no win)
    if lo > 1:
        same, side = h > DEAD_BAND, h > 1
    elif hi < 1:
        same, side = h < 1 / DEAD_BAND, h < 1
    else:
        same = side = True
    if close and side:
        return Verdict(_paper_text(r), h, "matches", off)
    if same and factor <= FACTOR:
        return Verdict(_paper_text(r), h, "same direction", f"same direction, {factor:.2g}x off")
    tie = 1 / DEAD_BAND <= h <= DEAD_BAND
    why = ("no difference in hopsim" if not same and tie else "opposite direction" if not same
           else f"same direction, {factor:.2g}x off")
    return Verdict(_paper_text(r), h, "differs", why)


def _window_stat(x: "pd.Series", y: "pd.Series", stat: str, window: list[float], level: float | None) -> float:
    """One statistic of the points with x inside `window` (nan: none there)."""
    inside = (x >= window[0]) & (x <= window[1]) & y.notna()
    xs, ys = x[inside].astype(float), y[inside].astype(float)
    if xs.empty:
        return math.nan
    order = xs.argsort(kind="stable")
    xs, ys = xs.iloc[order], ys.iloc[order]
    if stat == "reach":
        assert level is not None
        hit = xs[ys <= level]
        return float(hit.iloc[0] - window[0]) if len(hit) else math.inf
    if stat == "last":
        return float(ys.iloc[-1])
    return float({"mean": ys.mean, "min": ys.min, "max": ys.max}[stat]())


def series_values(df: "pd.DataFrame", r: Reported) -> dict[str, float]:
    """A series claim's statistic per label (`Reported.stat` over `x_range`, divided by the same
    over `relative_to` where given), from a series' rows (label, x, y); a label's runs pooled."""
    assert r.stat is not None and r.x_range is not None
    out: dict[str, float] = {}
    for lab, g in df.groupby("label", sort=False):
        v = _window_stat(g["x"], g["y"], r.stat, r.x_range, r.level)
        if r.relative_to is not None:
            base = _window_stat(g["x"], g["y"], r.stat, r.relative_to, r.level)
            v = v / base if base and math.isfinite(base) else math.nan
        out[str(lab)] = v
    return out


def claim_values(con: Any, fig: Figure, r: Reported, values: dict[str, float]) -> dict[str, float]:
    """The values by label a claim is judged on: the figure's (`figure_values`), those of the
    claim's own metric or flows, or its statistic of the figure's series."""
    if con is None:
        return values
    try:
        if r.stat is not None:
            return series_values(con.execute(fig.sql).fetchdf(), r)
        if r.metric is None and r.flows is None:
            return values
        return by_label(metric_by_run(con, r.metric or fig.metric, None if r.metric else fig.sql, r.flows or fig.flows))
    except Exception:  # a table the runs lack: the claim has no number
        return {}


def figure_values(con: Any, fig: Figure) -> dict[str, float]:
    """A figure's value per label (seeds averaged); none for a series, whose sql gives points over x."""
    if fig.metric is None and (fig.sql is None or fig.plot == "series"):
        return {}
    return by_label(metric_by_run(con, fig.metric, fig.sql, fig.flows))
