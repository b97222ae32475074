"""A paper's figure redrawn from hopsim's runs in the paper's own form, with the paper's numbers on it.

`draw` turns one `claims.Figure` into a matplotlib figure and the table of what it shows:

- bars: one chart per sweep dimension. Labels ``T=5us`` ... ``T=40us`` and ``thre=1BDP`` are two
  dimensions, so two charts, each sorted by its value (``T (us)``: 5, 10, 20, 40); labels that are
  schemes keep the sweep's order and their colours (`figstyle`);
- lines: the swept parameter (``x``) on a sorted numeric axis in its unit (load in %), one line per
  scheme and one chart per value of any other swept parameter (Pulser Fig. 7: one per load);
- series, slowdown_by_size, buffer_cdf: as `plots` draws them, in the schemes' colours.

Values in bytes or nanoseconds are shown in KB/MB or us/ms. Each number the paper reports is drawn
where hopsim's is: a hollow diamond for a value, a bar for a range; a ratio A / B is drawn at A as
the paper's ratio times hopsim's B. A claim on another metric than the figure's gets a chart of
that metric beside the figure's. Each drawn claim's artist has the gid ``paper-claim-N`` (N: its
index in the figure's ``reported``), which tests and SVG readers find.
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
from .figstyle import Axis, axis_for, colours, scheme_name, scheme_of, sort_key
from .claims import Figure, Reported, by_label, metric_by_run, y_axis

__all__ = ["Drawn", "draw", "save", "bar_groups", "PARAM_AXES", "FILE_KINDS"]

FILE_KINDS = ("svg", "pdf", "png", "csv")

# swept parameters on an axis: (quantity, unit, factor applied to a plain number)
PARAM_AXES = {
    "load": ("load", "%", 100.0),
    "degree": ("incast degree", "senders", 1.0),
    "th_hrtt": ("pause threshold Th", "hop BDP", 1.0),
    "count": ("queues per port", "queues", 1.0),
}

_DIM = re.compile(r"^([A-Za-z_][\w.]*)\s*=\s*(\S+)$")
_NUM_UNIT = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z%/]*)$")


@dataclass
class _Panel:
    ax: Any
    axis: Axis
    at: dict[str, float] = field(default_factory=dict)  # label -> x position of its value


@dataclass
class Drawn:
    figure: Any
    data: pd.DataFrame
    drawn: list[int]  # indexes of the figure's reported numbers drawn on it


def bar_groups(labels: list[str]) -> list[tuple[str | None, list[str]]]:
    """Labels split by sweep dimension (``T=5us`` -> ``T``; None: labels without one), each
    sorted by its value, in the order the dimensions first appear."""
    groups: dict[str | None, list[str]] = {}
    for lab in labels:
        m = _DIM.match(lab)
        groups.setdefault(m.group(1) if m else None, []).append(lab)
    out = []
    for key, labs in groups.items():
        if key is not None:
            labs = sorted(labs, key=lambda s: sort_key(_DIM.match(s).group(2)))  # type: ignore[union-attr]
        elif not any(scheme_of(s) for s in labs) and all(sort_key(s)[0] == 0 for s in labs):
            labs = sorted(labs, key=sort_key)
        out.append((key, labs))
    return out


def _ticks(key: str | None, labs: list[str]) -> tuple[list[str], str]:
    """Tick texts and the x axis label of one bar chart."""
    if key is None:
        return [scheme_name(s) for s in labs], "scheme" if all(scheme_of(s) for s in labs) else "setting"
    vals = [_DIM.match(s).group(2) for s in labs]  # type: ignore[union-attr]
    parsed = [_NUM_UNIT.match(v) for v in vals]
    units = {m.group(2) for m in parsed if m}
    if all(parsed) and len(units) == 1:
        unit = units.pop()
        q, u, f = PARAM_AXES.get(key, (key, unit, 1.0))
        return [f"{float(m.group(1)) * (f if not unit else 1):g}" for m in parsed], f"{q} ({unit or u})"  # type: ignore[union-attr]
    return vals, "setting"


def _new(n: int, title: str):
    with plt.rc_context(plots.STYLE):
        fig, axes = plt.subplots(1, n, figsize=(min(4.3 * n, 13.0), 3.4), squeeze=False)
    _title(fig, title)
    return fig, list(axes.flat)


def _title(fig, title: str) -> int:
    """The figure's title inside the image, wrapped to the figure's width; its number of lines."""
    lines = textwrap.wrap(title, max(40, int(fig.get_size_inches()[0] * 15)))
    fig.suptitle("\n".join(lines), fontsize=9.5)
    return len(lines)


def _bars(ax, labs: list[str], values: dict[str, float], axis: Axis, ticks: list[str], xlabel: str) -> _Panel:
    col = colours(labs)  # settings shade in their sorted order; schemes keep their own colours
    x = np.arange(len(labs))
    ys = [axis(values[s]) if math.isfinite(values[s]) else 0.0 for s in labs]
    ax.bar(x, ys, color=[col[s] for s in labs], width=0.7, zorder=2)
    ax.set_xticks(x)
    ax.set_xticklabels(ticks, rotation=30 if max(map(len, ticks), default=0) > 6 else 0,
                       ha="right" if max(map(len, ticks), default=0) > 6 else "center")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(axis.label)
    return _Panel(ax, axis, {s: float(i) for i, s in enumerate(labs)})


def _x_axis(param: str, raw: list[Any], given: str | None) -> tuple[list[float], str]:
    """Numeric x values of a swept parameter and the axis label."""
    q, unit, f = PARAM_AXES.get(param, (param, "", 1.0))
    nums = []
    for v in raw:
        if isinstance(v, (int, float, np.number)) and not isinstance(v, bool):
            nums.append(float(v) * f)
            continue
        m = _NUM_UNIT.match(str(v))
        nums.append(float(m.group(1)) if m else math.nan)
        unit = m.group(2) if m and m.group(2) else unit
    return nums, given or (f"{q} ({unit})" if unit else q)


def _split_series(series: str) -> tuple[str, str]:
    """(scheme part, facet part) of a label without its x: ``dctcp, load=0.6`` -> (dctcp, load=0.6)."""
    parts = series.split(", ")
    return ", ".join(p for p in parts if "=" not in p) or series, ", ".join(p for p in parts if "=" in p)


def _facet_title(facet: str) -> str:
    out = []
    for p in facet.split(", "):
        k, _, v = p.partition("=")
        q, unit, f = PARAM_AXES.get(k, (k, "", 1.0))
        try:
            out.append(f"{q} {float(v) * f:g}{'' if unit in ('', 'senders', 'queues') else ' ' + unit}")
        except ValueError:
            out.append(f"{q} {v}")
    return ", ".join(out)


def _lines(fig: Figure, per_run: pd.DataFrame, title: str, quantity: str, unit: str):
    """Lines over the swept x, one chart per facet; returns (figure, panels, rows)."""
    df = per_run.copy()
    df["name"], df["facet"] = zip(*[_split_series(s) for s in df["series"]]) if len(df) else ([], [])
    xs, xlabel = _x_axis(fig.x or "x", list(df["x"]), fig.x_label)
    df["xn"] = xs
    facets = sorted(dict.fromkeys(df["facet"]), key=lambda f: [sort_key(p.partition("=")[2]) for p in f.split(", ")])
    mpl, axes = _new(max(len(facets), 1), title)
    axis = axis_for(quantity, unit, df["value"])
    col = colours(df["name"])
    panels, rows = [], []
    for ax, facet in zip(axes, facets or [""]):
        g = df[df["facet"] == facet]
        p = _Panel(ax, axis)
        for i, (name, s) in enumerate(g.groupby("name", sort=False)):
            m = s.groupby("xn")["value"].mean().sort_index()
            ax.plot(m.index, [axis(v) for v in m.values], marker=plots.MARKERS[i % len(plots.MARKERS)], ms=4,
                    lw=1.4, color=col[name], label=scheme_name(name), zorder=3)
            rows += [{"chart": _facet_title(facet), "label": name, "x": x, "value": axis(v), "unit": axis.unit}
                     for x, v in m.items()]
        for lab, xn in g.groupby("label", sort=False)["xn"].first().items():
            p.at[str(lab)] = float(xn)
        xs_here = sorted({x for x in g["xn"] if math.isfinite(x)})
        if 0 < len(xs_here) <= 8:  # the swept values themselves as ticks (24, 32, 40 senders)
            ax.set_xticks(xs_here)
            ax.set_xticklabels([f"{x:g}" for x in xs_here])
        if facet:
            ax.set_title(_facet_title(facet))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(axis.label)
        _dedupe_legend(ax)
        panels.append(p)
    return mpl, panels, rows


def _main(con: Any, fig: Figure, values: dict[str, float]):
    """The figure's own charts: (matplotlib figure, panels, data rows, spare axes needed)."""
    quantity, unit = y_axis(fig)
    title = fig.title
    if fig.plot == "bars":
        groups = bar_groups(list(values)) or [(None, [])]  # no rows: one empty chart that says so
        mpl, axes = _new(len(groups) + _extra_charts(fig), title)
        if not values:
            axes[0].text(0.5, 0.5, "no values in these runs", ha="center", va="center",
                         transform=axes[0].transAxes, color="0.4")
        axis = axis_for(quantity, unit, values.values())
        panels, rows = [], []
        for ax, (key, labs) in zip(axes, groups):
            ticks, xlabel = _ticks(key, labs)
            panels.append(_bars(ax, labs, values, axis, ticks, xlabel))
            rows += [{"chart": key or "", "label": s, "x": t, "value": axis(values[s]), "unit": axis.unit}
                     for s, t in zip(labs, ticks)]
        return mpl, panels, rows, axes[len(groups):]
    if fig.plot == "lines":
        per_run = metric_by_run(con, fig.metric, fig.sql, fig.flows)
        key = "run" if "run" in per_run else "label"
        xs = con.execute(f'SELECT DISTINCT {key}, "{fig.x}" AS x FROM runs').fetchdf()
        df = per_run.merge(xs, on=key)
        df["series"] = [", ".join(p for p in str(s).split(", ") if not p.startswith(f"{fig.x}=")) or s
                        for s in df["label"]]
        mpl, panels, rows = _lines(fig, df, title, quantity, unit)
        return _with_extra(mpl, fig, title, panels, rows)
    if fig.plot == "series":
        df = con.execute(fig.sql).fetchdf()
        axis = axis_for(quantity, unit, df["y"])
        mpl, axes = _new(1 + _extra_charts(fig), title)
        ax, col, rows = axes[0], colours(df["label"]), []
        for lab, g in df.groupby("label", sort=False):
            ax.plot(g["x"], [axis(v) for v in g["y"]], lw=1.2, color=col[lab], label=scheme_name(str(lab)))
            rows += [{"chart": "", "label": lab, "x": x, "value": axis(v), "unit": axis.unit} for x, v in zip(g["x"], g["y"])]
        ax.set_xlabel(fig.x_label)
        ax.set_ylabel(axis.label)
        _dedupe_legend(ax)
        return mpl, [], rows, axes[1:]
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
        for ln in ax.lines:
            if ln.get_label().startswith("_"):
                continue
            rows += [{"chart": ax.get_title() or ax.get_ylabel(), "label": ln.get_label(),
                      "x": ticks.get(x, x) if float(x).is_integer() else x, "value": y, "unit": ax.get_ylabel()}
                     for x, y in zip(ln.get_xdata(), ln.get_ydata())]
    return rows


def _extra_charts(fig: Figure) -> int:
    """Charts a figure needs beside its own for claims its own charts cannot show."""
    return len(_claim_metrics(fig))


def _claim_metrics(fig: Figure) -> list[tuple[str | None, str | None]]:
    """(metric, flows) of the claims drawn on a chart of their own."""
    own = fig.plot in ("bars", "lines")
    keys = [(r.metric or fig.metric, r.flows or fig.flows) for r in fig.reported
            if not (own and r.metric is None and r.flows is None)]
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


def _claim_value(r: Reported, values: dict[str, float]) -> tuple[str, float, float, str] | None:
    """(label it is drawn at, low, high, legend text) of a reported number, in the values' unit."""
    lo, hi = (r.range[0], r.range[1]) if r.range else (r.value, r.value)
    assert lo is not None and hi is not None
    if not r.ratio:
        return (r.label or "", lo, hi, "paper's value")
    den = values.get(r.ratio[1], math.nan)
    if not math.isfinite(den) or r.ratio[0] not in values:
        return None
    return (r.ratio[0], lo * den, hi * den, "paper's ratio x hopsim's reference")


def _draw_claim(p: _Panel, i: int, r: Reported, values: dict[str, float]) -> bool:
    c = _claim_value(r, values)
    if c is None or c[0] not in p.at:
        return False
    lab, lo, hi, text = c
    x, (y0, y1) = p.at[lab], (p.axis(lo), p.axis(hi))
    if y0 == y1:
        (art,) = p.ax.plot([x], [y0], ls="none", marker="D", ms=7, mfc="none", mec="black", mew=1.4,
                           label=text, zorder=6)
        art.set_gid(f"paper-claim-{i}")
    else:
        art = p.ax.errorbar([x], [(y0 + y1) / 2], yerr=[[(y1 - y0) / 2]], fmt="none", ecolor="black",
                            elinewidth=2.5, capsize=5, label=text + " (range)", zorder=6)
        for a in art.get_children():
            a.set_gid(f"paper-claim-{i}")
    return True


def _dedupe_legend(ax) -> None:
    h, lab = ax.get_legend_handles_labels()
    if h:
        seen = dict(zip(lab, h))
        ax.legend(seen.values(), seen.keys(), fontsize=7)


def draw(con: Any, fig: Figure, values: dict[str, float]) -> Drawn | None:
    """The figure (None for a table) with the paper's numbers on it, and its data."""
    if fig.plot == "table":
        return None
    with plt.rc_context(plots.STYLE):
        mpl, panels, rows, extra = _main(con, fig, values)
        drawn: list[int] = []
        own = fig.plot in ("bars", "lines")
        for i, r in enumerate(fig.reported):
            if own and r.metric is None and r.flows is None:
                if any(_draw_claim(p, i, r, values) for p in panels):
                    drawn.append(i)
        for ax, (metric, flows) in zip(extra, _claim_metrics(fig)):
            vals = by_label(metric_by_run(con, metric, None if metric else fig.sql, flows))
            q, unit = y_axis(fig, metric, flows)
            axis = axis_for(q, unit, vals.values())
            labs = [s for s in vals if any(s in (r.ratio or [r.label]) for r in fig.reported)] or list(vals)
            p = _bars(ax, labs, vals, axis, [scheme_name(s) for s in labs],
                      "scheme" if all(scheme_of(s) for s in labs) else "setting")
            ax.set_title("the paper's numbers on this metric", fontsize=8)
            rows += [{"chart": q, "label": s, "x": scheme_name(s), "value": axis(vals[s]), "unit": axis.unit} for s in labs]
            for i, r in enumerate(fig.reported):
                if (r.metric or fig.metric, r.flows or fig.flows) == (metric, flows) and i not in drawn:
                    if _draw_claim(p, i, r, vals):
                        drawn.append(i)
            panels.append(p)
        for p in panels:
            if fig.logy:
                plots.log_y(p.ax, [v for ln in p.ax.lines for v in ln.get_ydata()] +
                            [b.get_height() for b in p.ax.patches])
            _dedupe_legend(p.ax)
        lines = _title(mpl, fig.title)  # again: extra charts widen the figure
        mpl.tight_layout(rect=(0, 0, 1, 1 - (0.16 * lines + 0.04) / mpl.get_size_inches()[1]))
    return Drawn(mpl, pd.DataFrame(rows, columns=["chart", "label", "x", "value", "unit"]), sorted(drawn))


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
