"""The papers' figures, one function each, from the tables of one or more runs.

Every function takes DataFrames with a ``label`` column (one line or bar group per label, e.g.
one per flow-control scheme; runs of the same label, such as seeds, are pooled) and returns a
matplotlib Figure. `hopsim.query` views and `load_tables` give such frames.

- `fct_slowdown`: FCT slowdown vs flow size, average / p95 / p99, flows binned by size
  percentile (HPCC Fig. 11, BFC Fig. 9, Floodgate Fig. 9 style);
- `buffer_cdf`: CDF of switch buffer occupancy samples (BFC Fig. 10);
- `buffer_by_hop`: port buffer occupancy by hop class (ToR-up / agg / core / ToR-down);
- `queue_timeseries`: queue length over time at one port (P-PFC Fig. 1, 6);
- `pause_time_by_hop`: total PFC pause time per hop class (Floodgate Fig. 2, FlowSail Fig. 1);
- `throughput_timeseries`: delivered throughput over time (data bytes sent by the host-facing
  switch ports between buffer samples).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as ticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .figstyle import axis_for, colours, marker_of, scheme_name, sort_key  # noqa: E402
from ..results.store import read_frame  # noqa: E402

__all__ = [
    "fct_slowdown",
    "buffer_cdf",
    "buffer_by_hop",
    "queue_timeseries",
    "pause_time_by_hop",
    "throughput_timeseries",
    "load_tables",
    "ALL_FIGURES",
]

STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "figure.dpi": 100,
    "savefig.dpi": 110,
}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
HOP_ORDER = ["host-up", "tor-up", "agg-up", "core-down", "agg-down", "tor-down", "other"]


def _styled(fn):
    """Draw inside the papers' style without touching the caller's rcParams."""

    @functools.wraps(fn)
    def wrapper(*a, **k):
        with plt.rc_context(STYLE):
            return fn(*a, **k)

    return wrapper


def _fig(ncols: int = 1, width: float = 5.2, height: float = 3.2):
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, list(axes.flat)


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} in these runs", ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def log_y(ax, values) -> None:
    """A log y axis, if any value is positive. Why: a paper figure asks for log scale, but a
    short or small run may give only zeros (no pauses, no drops), and matplotlib then warns and
    draws a broken axis; a linear axis shows the zeros as they are."""
    v = np.asarray(list(values), dtype=float)
    if np.any(v[np.isfinite(v)] > 0):
        ax.set_yscale("log")
        # plain numbers (20, 100), not 2 x 10^1; minor ticks unlabelled unless within one decade
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        lo, hi = ax.get_ylim()
        if hi / max(lo, 1e-300) < 10:  # within a decade: a few round numbers, spaced apart on the log scale
            k = np.floor(np.log10(max(lo, 1e-300)))
            ticks = [m * 10 ** e for e in (k, k + 1) for m in (1, 1.5, 2, 3, 5, 7)]
            ax.yaxis.set_minor_locator(ticker.FixedLocator([t for t in ticks if lo <= t <= hi]))
            ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        elif hi / max(lo, 1e-300) < 100:  # two decades or less: 2 and 5 of each decade labelled too
            ax.yaxis.set_minor_locator(ticker.LogLocator(base=10, subs=(2.0, 5.0)))
            ax.yaxis.set_minor_formatter(ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        else:
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def _labels(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["label"])) if "label" in df else ["run"]


def _with_label(df: pd.DataFrame) -> pd.DataFrame:
    return df if "label" in df else df.assign(label="run")


@_styled
def fct_slowdown(flows: pd.DataFrame, nbins: int = 10, incast: bool | None = None):
    """FCT slowdown vs flow size: three panels (average, p95, p99), flows binned by size
    percentile (equal-count bins over all runs' flows), one line per label. `incast` keeps only
    incast (True) or background (False) flows."""
    flows = _with_label(flows)
    f = flows[flows["finished"]] if "finished" in flows else flows.dropna(subset=["slowdown"])
    if incast is not None:
        f = f[f["incast"] == incast]
    fig, axes = _fig(3, width=3.6, height=3.0)
    if f.empty:
        for ax in axes:
            _empty(ax, "finished flows")
        return fig
    sizes = f["size_bytes"].to_numpy(dtype=float)
    edges = np.unique(np.quantile(sizes, np.linspace(0, 1, nbins + 1)))
    if len(edges) == 1:
        edges = np.array([edges[0], edges[0]])
    idx = np.clip(np.searchsorted(edges, sizes, side="left") - 1, 0, len(edges) - 2)
    f = f.assign(_bin=idx)
    xt = np.arange(len(edges) - 1)
    # sizes span decades: each tick in engineering notation (103, 1.5k, 12.2M bytes), as on a log axis
    eng = ticker.EngFormatter(places=None, sep="")
    xlabels = [eng.format_eng(float(f"{e:.3g}")) for e in edges[1:]]
    col = colours(_labels(f))
    for ax, (title, q) in zip(axes, [("average", None), ("p95", 0.95), ("p99", 0.99)]):
        for i, lab in enumerate(_labels(f)):
            by_bin = f[f["label"] == lab].groupby("_bin")["slowdown"]
            g = by_bin.mean() if q is None else by_bin.quantile(q)
            ax.plot(g.index, g.values, marker=marker_of(lab, i), ms=4, lw=1.4, color=col[lab],
                    label=scheme_name(lab))
        ax.set_title(f"{title} FCT slowdown")
        ax.set_xticks(xt)
        ax.set_xticklabels(xlabels, rotation=90)
        ax.set_xlabel("flow size, top of its size-percentile bin (B)")
        log_y(ax, [v for ln in ax.lines for v in ln.get_ydata()])
    for ax, title in zip(axes, ("average", "p95", "p99")):
        ax.set_ylabel(f"{title} FCT slowdown")
    axes[0].legend()
    fig.tight_layout()
    return fig


@_styled
def buffer_cdf(buffer: pd.DataFrame):
    """CDF of whole-switch buffer occupancy samples, one line per label."""
    b = _with_label(buffer)
    b = b[b["scope"] == "switch"] if "scope" in b else b
    fig, (ax,) = _fig()
    if b.empty:
        _empty(ax, "buffer samples")
        return fig
    axis = axis_for("switch buffer occupancy", "B", b["bytes"])
    col = colours(_labels(b))
    for lab in _labels(b):
        v = np.sort(b.loc[b["label"] == lab, "bytes"].to_numpy(dtype=float)) / axis.factor
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", lw=1.4, color=col[lab], label=scheme_name(lab))
    ax.set_xlabel(axis.label)
    ax.set_ylabel("CDF")
    ax.set_ylim(0, 1.02)
    ax.legend()
    fig.tight_layout()
    return fig


def _grouped_bars(ax, table: pd.DataFrame, ylabel: str) -> None:
    """`table`: index = hop classes, columns = labels."""
    classes = [c for c in HOP_ORDER if c in table.index] + [c for c in table.index if c not in HOP_ORDER]
    table = table.reindex(classes)
    n = max(len(table.columns), 1)
    w = 0.8 / n
    x = np.arange(len(classes))
    col = colours(table.columns)
    for i, lab in enumerate(table.columns):
        ax.bar(x + (i - (n - 1) / 2) * w, table[lab].fillna(0).to_numpy(), width=w, color=col[lab],
               label=scheme_name(lab))
    ax.set_xticks(x)
    ax.set_xticklabels(classes)
    ax.set_ylabel(ylabel)
    ax.legend()


@_styled
def labelled_bars(values: dict[str, float], ylabel: str, logy: bool = False):
    """One bar per label (a paper figure's metric by scheme, `hopsim reproduce`)."""
    fig, (ax,) = _fig(width=max(4.0, 0.9 * len(values) + 1.5))
    if not values:
        _empty(ax, "values")
        return fig
    x = np.arange(len(values))
    col = colours(values)
    ax.bar(x, [0 if v != v else v for v in values.values()], color=[col[k] for k in values])
    ax.set_xticks(x)
    ax.set_xticklabels([scheme_name(k) for k in values], rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    if logy:
        log_y(ax, values.values())
    fig.tight_layout()
    return fig


@_styled
def lines(df: pd.DataFrame, x: str, ylabel: str, logy: bool = False):
    """`df` (series, x column, value): one line per series over x, points averaged (seeds)."""
    fig, (ax,) = _fig()
    if df.empty:
        _empty(ax, "values")
        return fig
    col = colours(df["series"])
    for i, (name, g) in enumerate(df.groupby("series", sort=False)):
        xs = pd.to_numeric(g[x], errors="coerce")
        style = dict(marker=marker_of(str(name), i), ms=4, lw=1.4, color=col[name], label=scheme_name(str(name)))
        if xs.isna().any():  # values with units ("50%", "10us") are categories, sorted by their value
            m = g.groupby(x, sort=False)["value"].mean()
            m = m.iloc[sorted(range(len(m)), key=lambda j: sort_key(m.index[j]))]
            ax.plot(range(len(m)), m.values, **style)
            ax.set_xticks(range(len(m)))
            ax.set_xticklabels([str(v) for v in m.index])
        else:
            m = g.assign(_x=xs).groupby("_x")["value"].mean()
            ax.plot(m.index, m.values, **style)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    if logy:
        log_y(ax, df["value"])
    ax.legend()
    fig.tight_layout()
    return fig


@_styled
def buffer_by_hop(buffer: pd.DataFrame, quantile: float = 0.99):
    """Port buffer occupancy by hop class: the `quantile` of samples (bars), one group per
    hop class, one bar per label."""
    b = _with_label(buffer)
    b = b[b["scope"] == "port"] if "scope" in b else b
    fig, (ax,) = _fig()
    if b.empty:
        _empty(ax, "port buffer samples")
        return fig
    t = b.groupby(["hop_class", "label"])["bytes"].quantile(quantile).unstack("label")
    t = t[[c for c in _labels(b) if c in t.columns]]
    y = axis_for(f"p{quantile * 100:g} port queue", "B", t.to_numpy().ravel())
    _grouped_bars(ax, t / y.factor, y.label)
    ax.set_xlabel("hop class of the egress port")
    fig.tight_layout()
    return fig


@_styled
def queue_timeseries(queues: pd.DataFrame, node: int | None = None, port: int | None = None):
    """Queue length over time at one port (default: the first recorded), one line per label
    (the first run of each label)."""
    q = _with_label(queues)
    fig, (ax,) = _fig()
    if q.empty:
        _empty(ax, "queue series (set record.queue_ports)")
        return fig
    if node is None or port is None:
        node, port = int(q["node"].iloc[0]), int(q["port"].iloc[0])
    q = q[(q["node"] == node) & (q["port"] == port)]
    col = colours(_labels(q))
    t = axis_for("time", "ns", q["time_ns"])
    y = axis_for(f"queue at node {node} port {port}", "B", q["bytes"])
    for lab in _labels(q):
        g = q[q["label"] == lab]
        if "run" in g:
            g = g[g["run"] == g["run"].iloc[0]]
        ax.plot(g["time_ns"] / t.factor, g["bytes"] / y.factor, lw=1.2, color=col[lab], label=scheme_name(lab))
    ax.set_xlabel(t.label)
    ax.set_ylabel(y.label)
    ax.legend()
    fig.tight_layout()
    return fig


@_styled
def pause_time_by_hop(ports: pd.DataFrame):
    """Total time ports were paused by PFC, per hop class (mean over the runs of a label)."""
    p = _with_label(ports)
    fig, (ax,) = _fig()
    if p.empty or float(p["paused_ns"].sum()) == 0.0:
        _empty(ax, "PFC pauses")
        return fig
    run_col = "run" if "run" in p else None
    keys = ["hop_class", "label"] + ([run_col] if run_col else [])
    per_run = p.groupby(keys)["paused_ns"].sum()
    t = per_run.groupby(level=["hop_class", "label"]).mean().unstack("label")
    t = t[[c for c in _labels(p) if c in t.columns]]
    y = axis_for("total pause time", "ns", t.to_numpy().ravel())
    _grouped_bars(ax, t / y.factor, y.label)
    ax.set_xlabel("hop class of the paused port")
    fig.tight_layout()
    return fig


@_styled
def throughput_timeseries(buffer: pd.DataFrame, hop_class: str = "tor-down"):
    """Throughput over time (Gb/s): the data bytes that ports of `hop_class` (by default the
    switch ports facing hosts, i.e. delivered traffic) sent between consecutive buffer samples,
    summed over those ports; mean over the runs of a label."""
    b = _with_label(buffer)
    if "tx_bytes" in b:
        b = b[(b["scope"] == "port") & (b["hop_class"] == hop_class)].dropna(subset=["tx_bytes"])
    else:
        b = b.iloc[0:0]
    fig, (ax,) = _fig()
    if b.empty:
        _empty(ax, f"{hop_class} port samples (set record.buffer_interval)")
        return fig
    col = colours(_labels(b))
    t = axis_for("time", "ns", b["time_ns"])
    for lab in _labels(b):
        g = b[b["label"] == lab]
        keys = ["run", "time_ns"] if "run" in g else ["time_ns"]
        tot = g.groupby(keys)["tx_bytes"].sum().reset_index().sort_values(keys)
        if "run" in tot:
            d = tot.groupby("run")[["time_ns", "tx_bytes"]].diff()
        else:
            d = tot[["time_ns", "tx_bytes"]].diff()
        tot = tot.assign(gbps=d["tx_bytes"].astype(float) * 8 / d["time_ns"]).dropna(subset=["gbps"])
        series = tot.groupby("time_ns")["gbps"].mean()  # bits per ns = Gb/s
        ax.plot(series.index / t.factor, series.values, lw=1.2, color=col[lab], label=scheme_name(lab))
    ax.set_xlabel(t.label)
    ax.set_ylabel(f"throughput out of {hop_class} ports (Gb/s)")
    ax.legend()
    fig.tight_layout()
    return fig


ALL_FIGURES = {
    "fct_slowdown": ("FCT slowdown vs flow size", fct_slowdown, "flows"),
    "buffer_cdf": ("CDF of switch buffer occupancy", buffer_cdf, "buffer"),
    "buffer_by_hop": ("Buffer occupancy by hop class", buffer_by_hop, "buffer"),
    "queue_timeseries": ("Queue length over time", queue_timeseries, "queues"),
    "pause_time_by_hop": ("Total pause time per hop class", pause_time_by_hop, "ports"),
    "throughput_timeseries": ("Throughput over time", throughput_timeseries, "buffer"),
}


NEEDS = {
    "flows": ("size_bytes", "slowdown"),
    "buffer": ("hop_class", "bytes"),
    "queues": ("node", "port", "time_ns", "bytes"),
    "ports": ("hop_class", "paused_ns"),
}
"""The columns the figures cannot do without, per table (others, such as ``finished`` or
``tx_bytes``, they use when present: run folders written before them lack them)."""


def load_tables(runs: pd.DataFrame, names: Iterable[str]) -> dict[str, pd.DataFrame]:
    """Each named table of every run in `runs` (a `query.runs_frame`), with run and label
    columns, concatenated. A file without the columns the figures need (another table copied
    over it, a file from elsewhere) is a ScenarioError naming it."""
    from ..errors import ScenarioError

    out: dict[str, Any] = {}
    for name in names:
        parts = []
        for _, r in runs.iterrows():
            path = Path(r["path"]) / f"{name}.parquet"
            df = read_frame(path)
            missing = [c for c in NEEDS.get(name, ()) if c not in df.columns]
            if missing:
                raise ScenarioError(f"{path}: has no column {', '.join(missing)}: not the {name} table of a hopsim "
                                    "run; re-create it with `hopsim run` (or the sweep)")
            df.insert(0, "label", r["label"])
            df.insert(0, "run", r["run"])
            parts.append(df)
        out[name] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return out
