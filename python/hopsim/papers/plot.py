"""A paper's figure redrawn from hopsim's runs in the paper's own form, with the paper's numbers on it.

`draw` turns one `claims.Figure` into a matplotlib figure and the table of what it shows:

- lines (``x`` set, ``plot = "lines"``): the swept parameter on a sorted numeric axis in its unit
  (load in %), log where the paper's is (``logx``) or evenly spaced and marked "not to scale"
  (``x_even``); one line per scheme, one chart per value of any other swept parameter (Pulser
  Fig. 7: one per load), each line divided by its value at ``normalise_to`` where the paper
  normalises; runs without the parameter (``reference``) as horizontal lines;
- bars: with ``x``, one group of bars per swept value (sorted), one bar per scheme; without, one
  chart per sweep dimension (``T=5us`` ... and ``thre=1BDP``: two charts, each sorted by value),
  or, for labels that are a scheme and a setting (``pfc 6:1``), one group per setting; one bar per
  scheme in the paper's legend order;
- series: a line per label over x (a scheme's lines told apart by dashes), each x window a claim
  judges shaded (`claims.series_values`); slowdown_by_size, buffer_cdf: as `plots` draws them.

A scheme has one colour and marker on every page (`figstyle`), its paper's name, and the paper's
legend order (``legend``). Values in bytes or nanoseconds are shown in KB/MB or us/ms. Each number
the paper reports is drawn where hopsim's is: a hollow diamond for a value, a bar for a range; a
ratio A / B is drawn at A as the paper's ratio times hopsim's B; a paper number beyond what the
quantity can be (``y_limit``) sits at the edge with its value written. A claim on another metric
than the figure's gets a chart of that metric beside the figure's. Each drawn claim's artist has
the gid ``paper-claim-N`` (N: its index in the figure's ``reported``).

No text overlaps another: `text_overlaps` measures the drawn boxes of tick labels, axis labels,
titles and legends, and `draw` moves a legend off the data or rotates and thins ticks until none do.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import plots
from .claims import Figure, Reported, by_label, metric_by_run, series_values, y_axis
from .figstyle import SCHEMES, Axis, axis_for, colours, marker_of, num, scheme_name, scheme_of, sort_key, variant_of

__all__ = ["Drawn", "draw", "save", "bar_groups", "text_overlaps", "x_of", "PARAM_AXES", "FILE_KINDS", "CSV_COLUMNS"]

FILE_KINDS = ("svg", "pdf", "png", "csv")
CSV_COLUMNS = ["chart", "series", "label", "x", "x_axis", "value", "quantity", "unit", "paper", "paper_low",
               "paper_high", "paper_is"]
"""One meaning per column: the chart (panel title), the line or bar group (scheme), the run's label,
its position on the x axis and what that axis is, hopsim's value with its quantity and unit, and
the paper's number in the same unit (a range: low and high) and what it is (a value, or a ratio
times hopsim's reference)."""

# swept parameters on an axis: (quantity, unit, factor applied to a plain number)
PARAM_AXES = {
    "load": ("load", "%", 100.0),
    "degree": ("incast degree", "senders", 1.0),
    "th_hrtt": ("pause threshold Th", "hop BDP", 1.0),
    "q_h_hrtt": ("pause threshold Q_h", "hop BDP", 1.0),
    "q_l_hrtt": ("resume threshold Q_l", "hop BDP", 1.0),
    "count": ("queues per port", "queues", 1.0),
    "tors": ("ToR switches", "count", 1.0),
    "bursts": ("successive incasts", "count", 1.0),
    "pause": ("fixed pause time", "us", 1.0),
    "T": ("credit period T", "us", 1.0),
    "thre": ("thre_credit", "BDP", 1.0),
}

_DIM = re.compile(r"^([A-Za-z_][\w.]*)\s*=\s*(\S+)$")
_NUM_UNIT = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z%/]*)$")
_TIME_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


@dataclass
class _Panel:
    ax: Any
    axis: Axis
    at: dict[str, float] = field(default_factory=dict)  # label -> x position of its value
    values: dict[str, float] = field(default_factory=dict)  # label -> value as drawn (raw unit, normalised)
    series: pd.DataFrame | None = None  # a series' points (label, x, y): what its claims judge
    windows: set = field(default_factory=set)  # the x windows shaded on it


@dataclass
class Drawn:
    figure: Any
    data: pd.DataFrame
    drawn: list[int]  # indexes of the figure's reported numbers drawn on it


# ----------------------------------------------------------------------------- labels and x

def bar_groups(labels: list[str]) -> list[tuple[str | None, list[str]]]:
    """Labels split by sweep dimension (``T=5us`` -> ``T``; None: labels without one), each
    sorted by its value, in the order the dimensions first appear; labels of settings without
    a dimension (``fixed 5us``) sorted by value after those without a number (``dynamic``)."""
    groups: dict[str | None, list[str]] = {}
    for lab in labels:
        m = _DIM.match(lab)
        groups.setdefault(m.group(1) if m else None, []).append(lab)
    out = []
    for key, labs in groups.items():
        if key is not None:
            labs = sorted(labs, key=lambda s: sort_key(_DIM.match(s).group(2)))  # type: ignore[union-attr]
        elif not any(scheme_of(s) for s in labs):
            labs = sorted(labs, key=sort_key)
        out.append((key, labs))
    return out


def _parse(v: Any, factor: float = 1.0) -> tuple[float, str]:
    """A swept value as (number, unit): 0.6 -> (60, '') with factor 100; '100us' -> (100, 'us')."""
    if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
        return (float(v) * factor if math.isfinite(float(v)) else math.nan), ""
    m = _NUM_UNIT.match(str(v).strip()) if v is not None else None
    if not m:
        return math.nan, ""
    x, unit = float(m.group(1)), m.group(2)
    if unit in _TIME_US:  # times on one axis in us
        return x * _TIME_US[unit], "us"
    return (x if unit else x * factor), unit


def _label_part(label: str, key: str) -> str | None:
    """The value of ``key=`` in a label (``bfc-32, degree=100`` -> ``100``), or None."""
    for part in re.split(r",\s*|\s+(?=[A-Za-z_][\w.]*=)", label):
        k, eq, v = part.partition("=")
        if eq and k.strip() == key:
            return v.strip()
        m = re.fullmatch(rf"{re.escape(key)}\s+([0-9.]+\S*)", part.strip())  # "loss 5%"
        if m:
            return m.group(1)
    return None


def x_of(label: str, key: str, column: Any = None) -> tuple[float, str]:
    """A run's position on the swept axis `key`: the label's ``key=`` part, else its runs-table
    column; (nan, '') when it has neither (a reference run, or a run of another parameter)."""
    factor = PARAM_AXES.get(key, (key, "", 1.0))[2]
    part = _label_part(label, key)
    if part is not None:
        return _parse(part, factor)
    if column is None or (isinstance(column, float) and math.isnan(column)):
        return math.nan, ""
    return _parse(column, factor)


def _series_of(label: str, key: str | None, raw_x: Any = None) -> str:
    """A label without its x: ``dctcp, degree=24, load=0.4`` -> ``dctcp, load=0.4``;
    ``dcqcn-10`` (10 ToRs) -> ``dcqcn``."""
    if key is None:
        return label
    parts = [p for p in label.split(", ") if not p.strip().startswith(f"{key}=")]
    out = re.sub(rf"\s*\b{re.escape(key)}(=|\s+)[0-9.]+\S*", "", ", ".join(parts)).strip(", ")
    if raw_x is not None and not (isinstance(raw_x, float) and math.isnan(raw_x)):
        rx = f"{raw_x:g}" if isinstance(raw_x, (int, float, np.number)) else str(raw_x)
        out = re.sub(rf"[-\s]{re.escape(rx)}$", "", out)
    return out


def _split_series(series: str) -> tuple[str, str]:
    """(scheme part, facet part) of a series: ``dctcp, load=0.6`` -> (dctcp, load=0.6)."""
    parts = series.split(", ")
    return ", ".join(p for p in parts if "=" not in p), ", ".join(p for p in parts if "=" in p)


def _x_label(fig: Figure, units: set[str]) -> str:
    q, unit, _ = PARAM_AXES.get(fig.x or "", (fig.x or "x", "", 1.0))
    unit = next(iter(units)) if len(units) == 1 and next(iter(units)) else unit
    label = fig.x_label or (f"{q} ({unit})" if unit else q)
    return label + (", not to scale" if fig.x_even and "not to scale" not in label else "")


def _facet_title(facet: str) -> str:
    if not facet:
        return ""
    out = []
    for p in facet.split(", "):
        k, _, v = p.partition("=")
        q, unit, f = PARAM_AXES.get(k, (k, "", 1.0))
        x, u = _parse(v, f)
        out.append(f"{q} {num(x)}{'' if (u or unit) in ('', 'senders', 'queues', 'count') else ' ' + (u or unit)}"
                   if math.isfinite(x) else f"{q} {v}")
    return ", ".join(out)


def _ordered(names: list[str], legend: list[str], scheme: str | None = None) -> list[str]:
    """Series in the paper's legend order (`Figure.legend`), the rest after in their order; a
    series that names only a setting ranks as the figure's `scheme`."""
    rank = {n.lower(): i for i, n in enumerate(legend)}

    def key(s: str) -> int:
        v = variant_of(s) or (scheme if scheme and not scheme_of(s) else s)
        return rank.get(s.lower(), rank.get(v, len(rank)))
    return sorted(dict.fromkeys(names), key=key)


def _colour_map(names: list[str], fig: Figure) -> dict[str, str]:
    """A scheme's own colour; the figure's scheme's for series that name only a setting."""
    col = colours(names)
    if fig.scheme and fig.scheme in SCHEMES:
        for n in names:
            if scheme_of(n) is None:
                col[n] = SCHEMES[fig.scheme][1]
    return col


def _legend_name(series: str, fig: Figure) -> str:
    """A series as the paper's legend writes it: ``bfc-32`` -> BFC 32; a setting of the
    figure's scheme with the scheme's name (``fixed`` -> P-PFC fixed)."""
    if scheme_of(series):
        return scheme_name(series)
    if fig.scheme in SCHEMES:
        return f"{SCHEMES[fig.scheme][0]} {series}".strip()
    return series or "hopsim"


# ----------------------------------------------------------------------------- charts

def _new(n: int, title: str):
    with plt.rc_context(plots.STYLE):
        fig, axes = plt.subplots(1, n, figsize=(min(4.6 * n, 14.0), 3.6), squeeze=False)
    _title(fig, title)
    return fig, list(axes.flat)


def _title(fig, title: str) -> int:
    """The figure's title inside the image, wrapped to the figure's width; its number of lines."""
    lines = textwrap.wrap(title, max(40, int(fig.get_size_inches()[0] * 14)))
    fig.suptitle("\n".join(lines), fontsize=9.5)
    return len(lines)


def _set_x_ticks(ax, positions: list[float], texts: list[str]) -> None:
    ax.set_xticks(positions)
    ax.set_xticklabels(texts)


def _swept(con: Any, fig: Figure, per_run: pd.DataFrame) -> pd.DataFrame:
    """Per run: label, value, series (the label without x), facet, xn (position on the x axis), unit."""
    key = "run" if "run" in per_run else "label"
    try:
        cols = con.execute(f'SELECT DISTINCT {key}, "{fig.x}" AS x FROM runs').fetchdf()
    except Exception:  # the runs table has no such column: x only in the labels
        cols = pd.DataFrame({key: per_run[key].unique(), "x": None})
    df = per_run.merge(cols, on=key, how="left")
    xs = [x_of(str(lab), fig.x or "", col) for lab, col in zip(df["label"], df["x"])]
    df["xn"] = [x for x, _ in xs]
    df["xunit"] = [u for _, u in xs]
    raw = [(_label_part(str(lab), fig.x or "") or col) for lab, col in zip(df["label"], df["x"])]
    df["series"] = [_series_of(str(lab), fig.x, r) for lab, r in zip(df["label"], raw)]
    df["name"], df["facet"] = zip(*[_split_series(s) for s in df["series"]]) if len(df) else ([], [])
    ref = df["label"].isin(fig.reference)
    return df[ref | df["xn"].notna()].assign(reference=ref[ref | df["xn"].notna()])


def _normalised(df: pd.DataFrame, fig: Figure) -> pd.DataFrame:
    """Each line divided by its own value at x = `normalise_to` (the paper's normalisation)."""
    if fig.normalise_to is None:
        return df
    at, _ = x_of(f"{fig.x}={fig.normalise_to}", fig.x or "")
    df = df.copy()
    for series, g in df.groupby("series", sort=False):
        base = g.loc[np.isclose(g["xn"], at), "value"].astype(float).mean()
        df.loc[g.index, "value"] = g["value"].astype(float) / base if base and math.isfinite(base) else math.nan
    return df


def _x_positions(fig: Figure, xs: list[float]) -> dict[float, float]:
    """Where each swept value sits: itself, or evenly spaced (`x_even`, "not to scale")."""
    return {x: (float(i) if fig.x_even else x) for i, x in enumerate(sorted(set(xs)))}


def _lines(con: Any, fig: Figure, title: str, quantity: str, unit: str):
    """Lines over the swept x, one chart per facet; returns (figure, panels, rows)."""
    df = _normalised(_swept(con, fig, metric_by_run(con, fig.metric, fig.sql, fig.flows)), fig)
    facets = sorted(dict.fromkeys(df["facet"]), key=lambda f: [sort_key(p.partition("=")[2]) for p in f.split(", ")])
    mpl, axes = _new(max(len(facets), 1) + _extra_charts(fig), title)
    norm = fig.normalise_to is not None
    at = fig.normalise_to if isinstance(fig.normalise_to, str) else num(fig.normalise_to)
    axis = (Axis(f"{quantity.split(',')[0]}, ratio to {PARAM_AXES.get(fig.x or '', (fig.x,))[0]} {at}", "ratio")
            if norm else axis_for(quantity, unit, df["value"]))
    names = _ordered(list(df["name"]), fig.legend, fig.scheme)
    col = _colour_map(names, fig)
    pos = _x_positions(fig, [x for x in df["xn"] if math.isfinite(x)])
    xlabel = _x_label(fig, {u for u in df["xunit"] if u})
    panels, rows = [], []
    for ax, facet in zip(axes, facets or [""]):
        g = df[df["facet"] == facet]
        p = _Panel(ax, axis)
        for i, name in enumerate(names):
            s = g[(g["name"] == name) & ~g["reference"]]
            if s.empty:
                continue
            m = s.groupby("xn")["value"].mean().sort_index()
            ax.plot([pos[x] for x in m.index], [axis(v) for v in m.values], marker=marker_of(name, i), ms=4.5,
                    lw=1.4, color=col[name], label=_legend_name(name, fig), zorder=3)
            rows += [{"chart": _facet_title(facet), "series": _legend_name(name, fig), "x": x, "x_axis": xlabel,
                      "value": axis(v), "quantity": axis.quantity, "unit": axis.unit} for x, v in m.items()]
        for lab, s in g[g["reference"]].groupby("label", sort=False):
            v = float(s["value"].mean())
            ax.axhline(axis(v), ls="--", lw=1.2, color=_colour_map([str(lab)], fig)[str(lab)],
                       label=_legend_name(str(lab), fig))
            rows.append({"chart": _facet_title(facet), "series": str(lab), "label": str(lab), "x": math.nan,
                         "x_axis": xlabel, "value": axis(v), "quantity": axis.quantity, "unit": axis.unit})
        for lab, s in g.groupby("label", sort=False):
            p.at[str(lab)] = pos.get(float(s["xn"].iloc[0]), math.nan) if not s["reference"].iloc[0] else \
                float(np.mean(ax.get_xlim()))
            p.values[str(lab)] = float(s["value"].mean())
        here = sorted({x for x in g["xn"] if math.isfinite(x)})
        if fig.logx and here and min(here) > 0:
            ax.set_xscale("log")
            ax.minorticks_off()
        if 0 < len(here) <= 10:  # the swept values themselves as ticks (24, 32, 40 senders)
            _set_x_ticks(ax, [pos[x] for x in here], [num(x) for x in here])
        if facet:
            ax.set_title(_facet_title(facet))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(axis.label)
        panels.append(p)
    # rows carry the label of their run: the label whose x and series they are
    lab_at = {(_legend_name(n, fig), _facet_title(f), x): lab for lab, n, f, x in zip(df["label"], df["name"], df["facet"], df["xn"])}
    for r in rows:
        r.setdefault("label", lab_at.get((r["series"], r["chart"], r["x"]), ""))
    return mpl, panels, rows, axes[len(facets or [""]):]


def _grouped(ax, groups: list[str], names: list[str], value_of, axis: Axis, fig: Figure, xlabel: str) -> tuple[_Panel, list[dict]]:
    """Bars: one group per x value (or setting), one bar per series in the paper's legend order."""
    col = _colour_map(names, fig)
    n = max(len(names), 1)
    w = 0.8 / n
    p = _Panel(ax, axis)
    rows = []
    for i, name in enumerate(names):
        xs, ys = [], []
        for j, grp in enumerate(groups):
            lab = value_of(name, grp)
            if lab is None:
                continue
            v = p.values[lab] = value_of.values[lab]
            p.at[lab] = j + (i - (n - 1) / 2) * w
            xs.append(p.at[lab])
            ys.append(axis(v) if math.isfinite(v) else 0.0)
            rows.append({"chart": "", "series": _legend_name(name, fig), "label": lab, "x": grp, "x_axis": xlabel,
                         "value": axis(v), "quantity": axis.quantity, "unit": axis.unit})
        ax.bar(xs, ys, width=w * 0.95, color=col[name], label=_legend_name(name, fig) if len(names) > 1 or name else None,
               zorder=2, edgecolor="white", linewidth=0.4)
    _set_x_ticks(ax, list(range(len(groups))), groups)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(axis.label)
    return p, rows


class _Lookup:
    """(series, group) -> label, with the labels' values."""

    def __init__(self, table: dict[tuple[str, str], str], values: dict[str, float]):
        self.table, self.values = table, values

    def __call__(self, name: str, grp: str) -> str | None:
        return self.table.get((name, grp))


DEFAULT_GROUP = "as set"
"""The group of bars of schemes with no setting after them, beside their variants (``capfc`` beside
``capfc warn=1MB``): the scenario's own settings."""


def _scheme_settings(labels: list[str]) -> list[tuple[str, str, str]] | None:
    """(label, series, setting) when every label is a scheme with a setting after it
    (``pfc 6:1``, ``ppfc-share 16:1``, ``capfc warn=1MB``); None otherwise."""
    out = []
    for lab in labels:
        v = variant_of(lab)
        if v is None or "=" in lab.split(" ", 1)[0]:
            return None
        first, _, rest = lab.strip().partition(" ")
        out.append((lab, first.rstrip(","), rest.strip()))
    return out if any(s for _, _, s in out) else None


def _bars_main(con: Any, fig: Figure, values: dict[str, float], title: str, quantity: str, unit: str):
    axis = axis_for(quantity, unit, values.values())
    if fig.x is not None:  # bars over a swept parameter: groups sorted by value
        df = _swept(con, fig, pd.DataFrame({"label": list(values), "value": list(values.values())}))
        xlabel = _x_label(fig, {u for u in df["xunit"] if u})
        xs = sorted({x for x in df["xn"] if math.isfinite(x)})
        groups = [num(x) for x in xs]
        names = _ordered(list(df["series"]), fig.legend, fig.scheme)
        table = {(s, num(x)): str(lab) for lab, s, x in zip(df["label"], df["series"], df["xn"])}
        mpl, axes = _new(1 + _extra_charts(fig), title)
        p, rows = _grouped(axes[0], groups, names, _Lookup(table, values), axis, fig, xlabel)
        return mpl, [p], rows, axes[1:]
    settings = _scheme_settings(list(values))
    if settings is not None:  # schemes side by side in each setting (6:1, 16:1)
        # the schemes as the scenario sets them come first, named, beside their variants
        settings = [(lab, n, s or DEFAULT_GROUP) for lab, n, s in settings]
        groups = sorted(dict.fromkeys(s for _, _, s in settings), key=lambda g: (g != DEFAULT_GROUP, sort_key(g)))
        names = _ordered([n for _, n, _ in settings], fig.legend, fig.scheme)
        table = {(n, s): lab for lab, n, s in settings}
        mpl, axes = _new(1 + _extra_charts(fig), title)
        p, rows = _grouped(axes[0], groups, names, _Lookup(table, values), axis, fig, "setting")
        return mpl, [p], rows, axes[1:]
    groups_ = bar_groups(list(values)) or [(None, [])]
    mpl, axes = _new(len(groups_) + _extra_charts(fig), title)
    if not values:
        axes[0].text(0.5, 0.5, "no values in these runs", ha="center", va="center", transform=axes[0].transAxes, color="0.4")
    panels, rows = [], []
    for ax, (key, labs) in zip(axes, groups_):
        if key is not None:
            q, u, f = PARAM_AXES.get(key, (key, "", 1.0))
            parsed = [_parse(_DIM.match(s).group(2), f) for s in labs]  # type: ignore[union-attr]
            units = {pu for _, pu in parsed if pu}
            ticks = [num(x) if math.isfinite(x) else _DIM.match(s).group(2) for (x, _), s in zip(parsed, labs)]  # type: ignore[union-attr]
            xlabel = f"{q} ({next(iter(units)) if len(units) == 1 else u})" if (units or u) else q
        else:
            if all(scheme_of(s) for s in labs):  # one bar per scheme: in the paper's legend order
                labs = _ordered(labs, fig.legend, fig.scheme)
            ticks = [scheme_name(s) for s in labs]
            xlabel = "scheme" if all(scheme_of(s) for s in labs) else "setting"
        names = [""] if fig.scheme and not any(scheme_of(s) for s in labs) else labs
        table = {("" if names == [""] else s, t): s for s, t in zip(labs, ticks)}
        if names != [""]:
            # each bar its own series (a scheme): one group per bar, the bar centred in it
            p = _Panel(ax, axis)
            col = _colour_map(labs, fig)
            for j, s in enumerate(labs):
                v = values[s]
                ax.bar([j], [axis(v) if math.isfinite(v) else 0.0], width=0.7, zorder=2,
                       color=col[s] if scheme_of(s) or fig.scheme else "0.55")
                p.at[s], p.values[s] = float(j), v
                rows.append({"chart": key or "", "series": scheme_name(s), "label": s, "x": ticks[j], "x_axis": xlabel,
                             "value": axis(v), "quantity": axis.quantity, "unit": axis.unit})
            _set_x_ticks(ax, list(range(len(labs))), ticks)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(axis.label)
        else:
            p, r = _grouped(ax, ticks, [""], _Lookup(table, values), axis, fig, xlabel)
            rows += [{**x, "chart": key or ""} for x in r]
        panels.append(p)
    return mpl, panels, rows, axes[len(groups_):]


def _main(con: Any, fig: Figure, values: dict[str, float]):
    """The figure's own charts: (matplotlib figure, panels, data rows, spare axes needed)."""
    quantity, unit = y_axis(fig)
    title = fig.title
    if fig.plot == "bars":
        return _bars_main(con, fig, values, title, quantity, unit)
    if fig.plot == "lines":
        return _lines(con, fig, title, quantity, unit)
    if fig.plot == "series":
        df = con.execute(fig.sql).fetchdf()
        axis = axis_for(quantity, unit, df["y"])
        mpl, axes = _new(1 + _extra_charts(fig), title)
        ax, rows = axes[0], []
        names = _ordered(sorted({str(x) for x in df["label"]}), fig.legend, fig.scheme)
        col = _colour_map(names, fig)
        for lab in names:
            g = df[df["label"].astype(str) == lab]
            # lines of one colour (a scheme's flows f1-f3) told apart by their dashes
            dash = ["-", "--", ":", "-."][[n for n in names if col[n] == col[lab]].index(lab) % 4]
            ax.plot(g["x"], [axis(v) for v in g["y"]], lw=1.2, color=col[lab], ls=dash, label=scheme_name(lab))
            rows += [{"chart": "", "series": scheme_name(lab), "label": lab, "x": x, "x_axis": fig.x_label, "value": axis(v),
                      "quantity": axis.quantity, "unit": axis.unit} for x, v in zip(g["x"], g["y"])]
        ax.set_xlabel(fig.x_label)
        ax.set_ylabel(axis.label)
        return mpl, [_Panel(ax, axis, series=df)], rows, axes[1:]
    if fig.plot == "slowdown_by_size":
        where = f"finished AND ({fig.flows})" if fig.flows else "finished"
        df = con.execute(f"SELECT label, size_bytes, slowdown, finished, incast FROM flows WHERE {where}").fetchdf()
        mpl = plots.fct_slowdown(df)
    else:  # buffer_cdf
        df = con.execute("SELECT label, scope, bytes FROM buffer WHERE scope = 'switch'").fetchdf()
        mpl = plots.buffer_cdf(df)
    _title(mpl, title)
    return _with_extra(mpl, fig, title, [], _line_rows(mpl))


def _line_rows(mpl) -> list[dict]:
    """The data of a figure drawn by `plots`, read back from its lines: x as its tick reads."""
    rows = []
    for ax in mpl.axes:
        ticks = {round(t): lab.get_text() for t, lab in zip(ax.get_xticks(), ax.get_xticklabels()) if lab.get_text()}
        q = ax.get_ylabel()
        for ln in ax.lines:
            if ln.get_label().startswith("_"):
                continue
            rows += [{"chart": ax.get_title(), "series": ln.get_label(), "label": ln.get_label(),
                      "x": ticks.get(x, x) if float(x).is_integer() else x, "x_axis": ax.get_xlabel(), "value": y,
                      "quantity": q.rsplit(" (", 1)[0], "unit": q.rsplit(" (", 1)[1].rstrip(")") if " (" in q else ""}
                     for x, y in zip(ln.get_xdata(), ln.get_ydata())]
    return rows


def _on_own_chart(r: Reported, fig: Figure) -> bool:
    """Whether a claim is drawn on the figure's own charts: on its metric, and, where the figure
    is normalised, a line's value against its own value at the normalising x (a ratio of two
    schemes has no place on normalised lines: it goes to a chart of the values themselves)."""
    if r.stat is not None:  # a window of the figure's series
        return True
    if fig.plot not in ("bars", "lines") or r.metric is not None or r.flows is not None:
        return False
    if fig.normalise_to is None:
        return True
    if not r.ratio:
        return False
    base = x_of(f"{fig.x}={fig.normalise_to}", fig.x or "")[0]
    a, b = r.ratio
    return _series_of(a, fig.x) == _series_of(b, fig.x) and x_of(b, fig.x or "")[0] == base


def _extra_charts(fig: Figure) -> int:
    """Charts a figure needs beside its own for claims its own charts cannot show."""
    return len(_claim_metrics(fig))


def _claim_metrics(fig: Figure) -> list[tuple[str | None, str | None]]:
    """(metric, flows) of the claims drawn on a chart of their own."""
    keys = [(r.metric or fig.metric, r.flows or fig.flows) for r in fig.reported if not _on_own_chart(r, fig)]
    return list(dict.fromkeys(keys))


def _with_extra(mpl, fig: Figure, title: str, panels, rows):
    """Add the axes the claims on other metrics need to a figure drawn without them."""
    n = _extra_charts(fig)
    if n == 0:
        return mpl, panels, rows, []
    have = len(mpl.axes)
    w, h = mpl.get_size_inches()
    mpl.set_size_inches(w + 4.0 * n, h)
    gs = mpl.add_gridspec(1, have + n)
    for i, ax in enumerate(mpl.axes[:have]):
        ax.set_subplotspec(gs[0, i])
    extra = [mpl.add_subplot(gs[0, have + i]) for i in range(n)]
    return mpl, panels, rows, extra


# ----------------------------------------------------------------------------- the paper's numbers

def _claim_value(r: Reported, values: dict[str, float]) -> tuple[str, float, float, str] | None:
    """(label it is drawn at, low, high, what it is) of a reported number, in the values' unit."""
    if r.direction:  # no number to draw
        return None
    if r.zero:
        return (r.label or "", 0.0, 0.0, "paper's value: zero")
    lo, hi = (r.range[0], r.range[1]) if r.range else (r.value, r.value)
    assert lo is not None and hi is not None
    if not r.ratio:
        return (r.label or "", lo, hi, "paper's value")
    den = values.get(r.ratio[1], math.nan)
    if not math.isfinite(den) or r.ratio[0] not in values:
        return None
    return (r.ratio[0], lo * den, hi * den, f"paper's ratio x hopsim's {scheme_name(r.ratio[1])}")


def _draw_claim(p: _Panel, i: int, r: Reported, fig: Figure, normalised: bool) -> dict | None:
    """Draw claim i on panel p; returns the CSV fields of the paper's number, or None if not drawn."""
    if normalised and not r.ratio:
        return None  # an absolute value has no place on a normalised axis
    c = _claim_value(r, p.values)
    if c is None or c[0] not in p.at or not math.isfinite(p.at[c[0]]):
        return None
    lab, lo, hi, text = c
    x, (y0, y1) = p.at[lab], (p.axis(lo), p.axis(hi))
    top = p.axis(fig.y_limit) if fig.y_limit is not None and not normalised else math.inf
    if r.zero:  # on the axis's floor (a log axis has no 0), its value written
        lo, hi = p.ax.get_ylim()
        if p.ax.get_yscale() == "linear" and lo < 0 < hi and all(v >= 0 for v in p.values.values() if math.isfinite(v)):
            p.ax.set_ylim(0, hi)  # a quantity that cannot be negative: no axis below its zero
        floor = 0.0 if p.ax.get_yscale() == "linear" else lo
        (art,) = p.ax.plot([x], [floor], ls="none", marker="D", ms=7, mfc="none", mec="black", mew=1.4,
                           label="paper's number", zorder=6, clip_on=False)
        art.set_gid(f"paper-claim-{i}")
        p.ax.annotate("paper 0", (x, floor), xytext=(0, 8), textcoords="offset points", ha="center", fontsize=7)
    elif y0 > top:  # beyond what the quantity can be: at the edge, its value written
        (art,) = p.ax.plot([x], [top], ls="none", marker="^", ms=7, mfc="none", mec="black", mew=1.4,
                           label="paper's number, off the axis", zorder=6, clip_on=False)
        art.set_gid(f"paper-claim-{i}")
        p.ax.annotate(f"paper {num(y0)}{' ' + p.axis.unit if p.axis.unit not in ('', 'ratio', 'slowdown') else ''}",
                      (x, top), xytext=(0, -12), textcoords="offset points", ha="center", fontsize=7)
    elif not math.isfinite(y1):  # "at least": the range's low end, pointing up
        (art,) = p.ax.plot([x], [y0], ls="none", marker="^", ms=7, mfc="none", mec="black", mew=1.4,
                           label="paper's lower bound", zorder=6)
        art.set_gid(f"paper-claim-{i}")
    elif y0 == y1:
        (art,) = p.ax.plot([x], [y0], ls="none", marker="D", ms=7, mfc="none", mec="black", mew=1.4,
                           label="paper's number", zorder=6)
        art.set_gid(f"paper-claim-{i}")
    else:
        y1 = min(y1, top)
        art = p.ax.errorbar([x], [(y0 + y1) / 2], yerr=[[(y1 - y0) / 2]], fmt="none", ecolor="black",
                            elinewidth=2.5, capsize=5, label="paper's range", zorder=6)
        for a in art.get_children():
            a.set_gid(f"paper-claim-{i}")
    return {"label": lab, "paper": p.axis(lo) if lo == hi else math.nan, "paper_low": p.axis(lo) if lo != hi else math.nan,
            "paper_high": p.axis(hi) if lo != hi and math.isfinite(hi) else math.nan, "paper_is": text}


def _shade(p: _Panel, window: list[float], earlier: bool = False) -> None:
    """Shade an x window of a series (once), so a reader sees what a claim measured; the earlier
    window a claim is divided by (`Reported.relative_to`) hatched."""
    what = "reference window" if earlier else "window judged"
    if (tuple(window), what) in p.windows:
        return
    first = not any(w == what for _, w in p.windows)
    p.windows.add((tuple(window), what))
    # a window's ends drawn: two windows side by side (120-300, 300-600) stay two
    style = dict(facecolor="none", hatch="//", edgecolor="0.6", lw=0) if earlier else \
        dict(facecolor=(0.55, 0.55, 0.55, 0.15), edgecolor="0.45", ls="--", lw=0.8)
    span = p.ax.axvspan(window[0], window[1], zorder=0, label=what if first else None, **style)
    span.set_gid(f"paper-window-{len(p.windows)}")


def _draw_window_claim(p: _Panel, i: int, r: Reported) -> dict | None:
    """Draw claim i on a series (`Reported.stat` over `x_range`): its window shaded, the paper's
    number across it (a statistic of y) or at its time from the window's start (``reach``); the
    CSV fields of the paper's number, or None where it has none to draw."""
    assert p.series is not None and r.x_range is not None
    x0, x1 = r.x_range
    _shade(p, r.x_range)
    if r.relative_to is not None:
        _shade(p, r.relative_to, earlier=True)
    if r.stat == "reach" and r.level is not None:
        p.ax.hlines(p.axis(r.level), x0, x1, colors="black", linestyles=":", lw=1.0, zorder=5)
    vals = series_values(p.series, r)
    if r.relative_to is not None and r.label is not None:
        # a ratio to the label's own earlier window: drawn at the paper's ratio x hopsim's there
        earlier = series_values(p.series, r.model_copy(update={"x_range": r.relative_to, "relative_to": None}))
        c = _claim_value(r.model_copy(update={"label": None, "ratio": [r.label, " "]}),
                         {**vals, " ": earlier.get(r.label, math.nan)})
        text = f"paper's ratio x hopsim's over x {r.relative_to[0]:g}-{r.relative_to[1]:g}"
    else:
        c = _claim_value(r, vals)
        text = c[3] if c else ""
    if c is None or c[0] not in vals:
        return None
    lab, lo, hi = c[0], c[1], c[2]
    if r.stat == "reach":  # a time from the window's start: a vertical line (a band for a range)
        arts = ([p.ax.axvline(x0 + lo, color="black", lw=1.8, ls="--", label="paper's number", zorder=6)] if lo == hi else
                [p.ax.axvspan(x0 + lo, x0 + min(hi, x1 - x0), facecolor="none", edgecolor="black", hatch="..", lw=1.2,
                              label="paper's range", zorder=6)])
    else:  # a statistic of y: a line across the window (a box for a range)
        lo, hi = p.axis(lo), p.axis(hi)
        arts = p.ax.plot([x0, x1, x1, x0, x0] if lo != hi else [x0, x1], [lo, lo, hi, hi, lo] if lo != hi else [lo, lo],
                         color="black", lw=2.0 if lo == hi else 1.4, ls="--" if lo == hi else "-",
                         label="paper's number" if lo == hi else "paper's range", zorder=6)
    for a in arts:
        a.set_gid(f"paper-claim-{i}")
    stat = "time to reach" if r.stat == "reach" else r.stat
    return {"label": lab, "paper": lo if lo == hi else math.nan, "paper_low": lo if lo != hi else math.nan,
            "paper_high": hi if lo != hi else math.nan, "paper_is": f"{text}: {stat} over x {x0:g}-{x1:g}",
            "x_from": x0, "x_to": x1}


def _limit_axis(p: _Panel, fig: Figure) -> None:
    """Keep the y axis within what the quantity can be (`Figure.y_limit`)."""
    if fig.y_limit is None or fig.normalise_to is not None:
        return
    top = p.axis(fig.y_limit)
    lo, hi = p.ax.get_ylim()
    if hi > top:
        p.ax.set_ylim(lo, top * 1.04)


# ----------------------------------------------------------------------------- text that overlaps

def _boxes(fig) -> list[tuple[str, Any]]:
    """(what, display box) of every drawn text: tick labels, axis labels, titles, legends."""
    r = fig.canvas.get_renderer()
    out = []
    if fig._suptitle is not None and fig._suptitle.get_text():
        out.append(("suptitle", fig._suptitle.get_window_extent(r)))
    for k, ax in enumerate(fig.axes):
        for name, t in _drawn_ticks(ax):
            out.append((f"axes {k} {name} {t.get_text()!r}", t.get_window_extent(r)))
        for name, t in (("x label", ax.xaxis.label), ("y label", ax.yaxis.label), ("title", ax.title)):
            if t.get_visible() and t.get_text():
                out.append((f"axes {k} {name}", t.get_window_extent(r)))
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            out.append((f"axes {k} legend", leg.get_window_extent(r)))
    return out


def _drawn_ticks(ax) -> list[tuple[str, Any]]:
    """The tick labels matplotlib draws: visible, with text, and inside the axis' view (ticks
    beyond it keep a label that is never drawn)."""
    out = []
    for side, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        lo, hi = sorted(axis.get_view_interval())
        span = (hi - lo) * 1e-9
        for minor, ticks in ((False, axis.get_major_ticks()), (True, axis.get_minor_ticks())):
            for tick in ticks:
                t = tick.label1
                if t.get_visible() and tick.get_visible() and t.get_text() and lo - span <= tick.get_loc() <= hi + span:
                    out.append((f"{side}{' minor' if minor else ''} tick", t))
    return out


def _data_points(ax) -> np.ndarray:
    """Display coordinates of an axes' data: line vertices, bar tops, markers."""
    pts = [ln.get_transform().transform(np.column_stack([ln.get_xdata(orig=False), ln.get_ydata(orig=False)]))
           for ln in ax.lines if len(ln.get_xdata()) and ln.get_visible()]
    for b in ax.patches:
        if str(b.get_gid() or "").startswith("paper-window"):  # a shaded window is background, not data
            continue
        bb = b.get_window_extent()
        if bb.width > 0 and bb.height > 0:
            pts.append(np.array([[bb.x0, bb.y1], [bb.x1, bb.y1], [(bb.x0 + bb.x1) / 2, bb.y1]]))
    return np.vstack(pts) if pts else np.empty((0, 2))


def text_overlaps(fig) -> list[str]:
    """Pairs of drawn texts whose boxes overlap, and legends that cover data: empty when none do."""
    fig.canvas.draw()
    boxes = _boxes(fig)
    out = []
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            if ba.overlaps(bb) and ba.width > 0 and bb.width > 0:
                inter_w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
                inter_h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
                if inter_w > 1 and inter_h > 1:  # a pixel's touch is no overlap
                    out.append(f"{a} overlaps {b}")
    for k, ax in enumerate(fig.axes):
        leg = ax.get_legend()
        if leg is None or not leg.get_visible():
            continue
        bb = leg.get_window_extent()
        pts = _data_points(ax)
        inside = (pts[:, 0] > bb.x0) & (pts[:, 0] < bb.x1) & (pts[:, 1] > bb.y0) & (pts[:, 1] < bb.y1) if len(pts) else []
        if np.any(inside):
            out.append(f"axes {k} legend covers {int(np.sum(inside))} data points")
    return out


def _place_legend(ax) -> None:
    """A legend where it covers no data: the best corner inside, else outside, right of the axes."""
    h, lab = ax.get_legend_handles_labels()
    if not h:
        return
    seen = dict(zip(lab, h))
    ax.legend(seen.values(), seen.keys(), fontsize=7, loc="best")
    fig = ax.figure
    fig.canvas.draw()
    bb = ax.get_legend().get_window_extent()
    pts = _data_points(ax)
    if len(pts) and np.any((pts[:, 0] > bb.x0) & (pts[:, 0] < bb.x1) & (pts[:, 1] > bb.y0) & (pts[:, 1] < bb.y1)):
        ax.legend(seen.values(), seen.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _untangle_ticks(fig) -> None:
    """Turn the x tick labels of an axes whose labels overlap: 30 degrees, then upright; numbers
    (evenly spaced) may then lose every other label, names never; last, widen the figure."""
    for step in range(4):
        bad = {int(m.group(1)) for m in (re.match(r"axes (\d+) x tick", s) for s in text_overlaps(fig)) if m}
        if not bad:
            return
        for k in bad:
            labels = [t for name, t in _drawn_ticks(fig.axes[k]) if name == "x tick"]
            numeric = all(re.fullmatch(r"[0-9.,]+k?", t.get_text()) for t in labels)
            if step == 0:
                for t in labels:
                    t.set_rotation(30)
                    t.set_ha("right")
            elif step == 1:
                for j, t in enumerate(labels):
                    t.set_rotation(90)
                    t.set_ha("center")
                    t.set_visible(j % 2 == 0 or not numeric)
            else:
                w, h = fig.get_size_inches()
                fig.set_size_inches(w * 1.4, h)
        _layout(fig)


def _fit_y_labels(mpl) -> None:
    """A y label taller than its axes (shortened by turned tick labels) reaches up into the title:
    on three lines, then a taller figure, until it fits beside its axes."""
    for _ in range(4):
        mpl.canvas.draw()
        r = mpl.canvas.get_renderer()
        tall = [ax for ax in mpl.axes if ax.get_ylabel() and
                ax.yaxis.label.get_window_extent(r).height > ax.get_window_extent(r).height]
        if not tall:
            return
        for ax in tall:
            text = ax.get_ylabel()
            if text.count("\n") < 2:
                flat = text.replace("\n", " ")
                ax.set_ylabel("\n".join(textwrap.wrap(flat, max(16, len(flat) // 3 + 5))))
            else:
                w, h = mpl.get_size_inches()
                mpl.set_size_inches(w, h * 1.15)
        _layout(mpl)


def _layout(mpl) -> None:
    """Fit the charts under the title: matplotlib's tight layout already keeps the title's own
    height free above them (a margin reserved on top of that left an empty band under the title)."""
    mpl.tight_layout()


def draw(con: Any, fig: Figure, values: dict[str, float]) -> Drawn | None:
    """The figure (None for a table) with the paper's numbers on it, and its data."""
    if fig.plot == "table":
        return None
    with plt.rc_context(plots.STYLE):
        mpl, panels, rows, extra = _main(con, fig, values)
        drawn: dict[int, dict] = {}
        norm = fig.normalise_to is not None
        for i, r in enumerate(fig.reported):
            if r.stat is not None:
                got = _draw_window_claim(panels[0], i, r) if panels else None
                if got:
                    drawn[i] = got
            elif _on_own_chart(r, fig):
                for p in panels:
                    got = _draw_claim(p, i, r, fig, norm)
                    if got:
                        drawn[i] = got
                        break
        for ax, (metric, flows) in zip(extra, _claim_metrics(fig)):
            vals = by_label(metric_by_run(con, metric, None if metric else fig.sql, flows))
            q, unit = y_axis(fig, metric, flows)
            axis = axis_for(q, unit, vals.values())
            labs = [s for s in vals if any(s in (r.ratio or [r.label]) for r in fig.reported)] or list(vals)
            p = _Panel(ax, axis, {s: float(j) for j, s in enumerate(labs)}, {s: vals[s] for s in labs})
            col = _colour_map(labs, fig)
            ax.bar(range(len(labs)), [axis(vals[s]) if math.isfinite(vals[s]) else 0.0 for s in labs],
                   color=[col[s] if scheme_of(s) or fig.scheme else "0.55" for s in labs], width=0.7, zorder=2)
            _set_x_ticks(ax, list(range(len(labs))), [scheme_name(s).replace(", ", "\n") for s in labs])
            ax.set_xlabel("scheme" if all(scheme_of(s) for s in labs) else "setting")
            ax.set_ylabel(axis.label)
            ax.set_title("the paper's numbers on this metric", fontsize=8)
            rows += [{"chart": q, "series": scheme_name(s), "label": s, "x": scheme_name(s), "x_axis": ax.get_xlabel(),
                      "value": axis(vals[s]), "quantity": axis.quantity, "unit": axis.unit} for s in labs]
            for i, r in enumerate(fig.reported):
                if (r.metric or fig.metric, r.flows or fig.flows) == (metric, flows) and i not in drawn \
                        and not _on_own_chart(r, fig):
                    got = _draw_claim(p, i, r, fig, False)
                    if got:
                        drawn[i] = {**got, "chart": q}
            panels.append(p)
        for p in panels:
            if fig.logy:
                plots.log_y(p.ax, [v for ln in p.ax.lines for v in ln.get_ydata()] +
                            [b.get_height() for b in p.ax.patches])
            _limit_axis(p, fig)
        for ax in mpl.axes:  # a long quantity on two lines: it must fit beside its axes, not over the title
            y = ax.get_ylabel()
            if len(y) > 30:
                ax.set_ylabel("\n".join(textwrap.wrap(y, max(28, (len(y) + 1) // 2 + 2))))
        _title(mpl, fig.title)  # again: extra charts widen the figure
        _layout(mpl)
        for ax in mpl.axes:
            _place_legend(ax)
        _layout(mpl)
        _untangle_ticks(mpl)
        _fit_y_labels(mpl)
        if any("legend" in x for x in text_overlaps(mpl)):  # turned or widened: the legend again
            for ax in mpl.axes:
                _place_legend(ax)
            _layout(mpl)
    data = pd.DataFrame(rows, columns=CSV_COLUMNS).astype({"paper_is": object, "label": object})
    for i, got in drawn.items():  # the paper's number beside hopsim's, in the row of its label
        at = data.index[data["label"] == got["label"]]
        if "x_from" in got:  # a window of a series: its first point inside the window
            x = pd.to_numeric(data["x"], errors="coerce")
            at = data.index[(data["label"] == got["label"]) & (x >= got["x_from"]) & (x <= got["x_to"])]
        if "chart" in got:
            at = data.index[(data["label"] == got["label"]) & (data["chart"] == got["chart"])]
        if len(at):
            for k in ("paper", "paper_low", "paper_high", "paper_is"):
                data.loc[at[0], k] = got[k]
    return Drawn(mpl, data, sorted(drawn))


def save(d: Drawn, folder: Path, fig_id: str) -> dict[str, Path]:
    """Write the figure as SVG, PDF and PNG and its data as CSV, named by the figure's id."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {k: folder / f"{fig_id}.{k}" for k in FILE_KINDS}
    for k in ("svg", "pdf", "png"):
        # no creation date in the vector files: the same runs give the same bytes
        meta = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(k)
        d.figure.savefig(out[k], format=k, bbox_inches="tight", metadata=meta)
    d.data.to_csv(out["csv"], index=False)
    return out
