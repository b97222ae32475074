"""One self-contained HTML page for a folder of runs: every figure of `plots` as an embedded
PNG, a table per label (runs pooled) and a table per run."""

from __future__ import annotations

import base64
import html
import io
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from . import plots
from ..errors import ScenarioError
from ..scenario.paths import check_replaceable, resolve, why_unwritable
from ..results.query import runs_frame

__all__ = ["build_report"]

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1180px;color:#222;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#666;font-size:.9rem}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem}
figure{margin:0}figure.wide{grid-column:1/-1}figure img{max-width:100%;border:1px solid #eee}
figcaption{color:#555;font-size:.85rem}
table{border-collapse:collapse;font-size:.82rem;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}
th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}
"""

# After load, record on <body> how many figures decoded (a headless browser test reads it).
_IMG_CHECK = (
    "<script>window.addEventListener('load',function(){var n=0;for(var i of document.images)"
    "{if(i.complete&&i.naturalWidth>0)n++;}document.body.setAttribute('data-images-loaded',n);"
    "document.body.setAttribute('data-images-total',document.images.length);});</script>"
)

_LABEL_COLS = {
    "runs": "runs",
    "flows": "flows",
    "flows_finished": "finished",
    "slowdown_mean": "mean slowdown",
    "slowdown_p99": "p99 slowdown",
    "fct_ns_p99": "p99 FCT (us)",
    "pause_frames": "pause frames",
    "pause_time_ns": "pause time (us)",
    "drops": "drops",
    "max_switch_buffer_bytes": "peak buffer (KB)",
}
_RUN_COLS = {
    "run": "run",
    "label": "label",
    "flows": "flows",
    "flows_finished": "finished",
    "drops": "drops",
    "pause_frames": "pause frames",
    "pause_time_ns": "pause time (us)",
    "max_switch_buffer_bytes": "peak buffer (KB)",
    "slowdown_p99": "p99 slowdown",
    "end_time_ns": "sim time (us)",
    "events": "events",
    "wall_time_s": "wall (s)",
    "events_per_s": "events/s",
    "partial": "partial",
}


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "–"
    if isinstance(v, float):  # for people: 1,002,000 and 0.0012, never 1e+06
        from .figstyle import num

        return num(v)
    if isinstance(v, int):
        return f"{v:,}"
    return html.escape(str(v))


def _table(df: pd.DataFrame, cols: dict[str, str]) -> str:
    cols = {k: v for k, v in cols.items() if k in df.columns}
    head = "".join(f"<th>{html.escape(v)}</th>" for v in cols.values())
    rows = []
    for _, r in df.iterrows():
        rows.append("<tr>" + "".join(f"<td>{_fmt(r[k])}</td>" for k in cols) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _scaled(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for c, s in (("pause_time_ns", 1e3), ("fct_ns_p99", 1e3), ("end_time_ns", 1e3), ("max_switch_buffer_bytes", 1e3)):
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce") / s
    return df


def build_report(root: Path | str, out: Path | str, title: str | None = None,
                 on_step: Callable[[str], None] | None = None) -> Path:
    """Write the report for every complete run under `root` to `out` (atomically); returns it."""
    root = Path(root)
    runs = runs_frame(root)
    if runs.empty:
        raise ScenarioError(f"{root}: no complete run folders under it (a run folder holds summary.json); give a "
                            "folder that `hopsim run` or `hopsim sweep` wrote")
    tables = plots.load_tables(runs, ["flows", "buffer", "queues", "ports"])
    figs = []
    for key, (caption, fn, table) in plots.ALL_FIGURES.items():
        if on_step:
            on_step(caption)
        figs.append((key, caption, _png(fn(tables[table]))))

    numeric = [c for c in _LABEL_COLS if c not in ("runs",)]
    by_label = _scaled(runs).groupby("label", sort=False)
    label_df = by_label[numeric].mean(numeric_only=True)
    label_df.insert(0, "runs", by_label.size())
    label_df = label_df.reset_index()
    pcols = runs.attrs.get("param_columns", [])
    title = title or f"hopsim report: {resolve(root).name}"
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>{len(runs)} run(s) from {html.escape(str(resolve(root)))}; generated "
        f"{time.strftime('%Y-%m-%d %H:%M:%S')}; swept parameters: "
        f"{html.escape(', '.join(pcols) or 'none')}.</p>",
        *([f"<p class='meta'><b>partial:</b> {int(runs['partial'].sum())} of {len(runs)} run(s) stopped before "
           "their end (--keep-partial); their tables hold only what they had measured (column partial).</p>"]
          if runs["partial"].any() else []),
        "<h2>Summary by label</h2>",
        "<p class='meta'>Means over the runs of each label (e.g. seeds).</p>",
        _table(label_df, {"label": "label", **_LABEL_COLS}),
        "<h2>Figures</h2>",
        "<div class='figs'>",
    ]
    for key, caption, b64 in figs:
        wide = " class='wide'" if key == "fct_slowdown" else ""
        parts.append(
            f"<figure id='{key}'{wide}><img alt='{html.escape(caption)}' src='data:image/png;base64,{b64}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    parts += ["</div>","<h2>Runs</h2>", _table(_scaled(runs), _RUN_COLS), _IMG_CHECK, "</body></html>"]
    out = resolve(out)
    try:
        _write(out, "\n".join(parts))
    except OSError as e:  # a folder at --out, a file where its folder should be, a full disk
        raise ScenarioError(f"--out {out}: cannot write the report ({why_unwritable(out, e)})") from None
    return out


def _write(out: Path, text: str) -> None:
    check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
