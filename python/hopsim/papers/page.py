"""The page of a paper's reproduction: a summary per section of the paper (claims that hold and
that do not), then each figure redrawn (`plot`) with the verdicts in its caption, each claim
that does not hold linked to where its cause is written (`Reported.cause`), or marked unknown.

Beside the page, in the reproduction's folder: ``figures/ID.{svg,pdf,png,csv}`` for every figure
and ``claims.json`` (counts per section, wall time), which the index of papers (`index`) reads.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claims import MANIFEST, Figure, PaperModel, Reported, by_label, check, figure_values, metric_by_run, y_axis
from ..scenario.paths import resolve
from ..sweep import read_sweep

__all__ = ["build_paper_page", "section_of", "cause_excerpt", "CLAIMS", "FIGURES_DIR"]

CLAIMS = "claims.json"
FIGURES_DIR = "figures"
_SECTION = re.compile(r"(§\s*[0-9IVX][0-9A-Za-z.\-/]*|App(?:\.|endix)\s+[A-Z][0-9.]*|appendix\s+[A-Z])")
_VERDICT = {True: "holds", False: "does not hold", None: "no number"}


def section_of(sweep_file: Path) -> str:
    """The paper section a sweep file's header comment names first (``§6.2.2``, ``App. E.3``)."""
    head = []
    for line in sweep_file.read_text().splitlines():
        if not line.startswith("#"):
            break
        head.append(line)
    m = _SECTION.search(" ".join(head[:3]))
    return re.sub(r"\s+", " ", m.group(1)).rstrip(".,") if m else sweep_file.stem


def _cause_path(cause: str, paper_folder: Path) -> tuple[Path, int]:
    name, _, line = cause.partition(":")
    for root in (paper_folder, paper_folder.parents[2]):
        if (root / name).is_file():
            return root / name, int(line or 1)
    raise FileNotFoundError(f"cause {cause!r}: no file {name!r} in {paper_folder} or the repository")


def cause_excerpt(cause: str, paper_folder: Path) -> tuple[Path, int, str]:
    """(file, line, the comment there): the comment lines from `line` on, at most eight."""
    path, line = _cause_path(cause, paper_folder)
    lines = path.read_text().splitlines()
    if not 1 <= line <= len(lines):
        raise ValueError(f"cause {cause!r}: {path.name} has {len(lines)} lines")
    out = []
    for text in lines[line - 1:line + 7]:
        m = re.match(r"^\s*(#|//!|///|//)\s?(.*)$", text)
        if not m:
            break
        out.append(m.group(2))
    return path, line, re.sub(r"\s+", " ", " ".join(out)).strip()


@dataclass
class _Counts:
    held: int = 0
    failed: int = 0
    none: int = 0
    figures: int = 0
    sweeps: list[str] = field(default_factory=list)

    def add(self, holds: bool | None) -> None:
        if holds is None:
            self.none += 1
        elif holds:
            self.held += 1
        else:
            self.failed += 1

    @property
    def total(self) -> int:
        return self.held + self.failed + self.none


def _fmt(v: Any) -> str:
    from .report import _fmt as fmt

    return fmt(v)


def _in_unit(x: Any, unit: str) -> str:
    """A number in the unit an axis would show it in: 1,894,784 B -> 1.89 MB."""
    from .figstyle import axis_for

    if x is None or not math.isfinite(float(x)):
        return "–"
    a = axis_for("", unit, [float(x)])
    shown = f"{a(float(x)):,.3g}" if abs(a(float(x))) < 1000 else f"{a(float(x)):,.0f}"
    return shown if a.unit in ("", "count", "slowdown") else f"{shown} {html.escape(a.unit)}"


def _claim_values(con: Any, fig: Figure, r: Reported, values: dict[str, float]) -> dict[str, float]:
    if r.metric is None and r.flows is None:
        return values
    try:
        return by_label(metric_by_run(con, r.metric or fig.metric, None if r.metric else fig.sql, r.flows or fig.flows))
    except Exception:
        return {}


def _cause_cell(r: Reported, holds: bool | None, folder: Path) -> str:
    if holds:
        return ""
    if not r.cause:
        return "cause unknown"
    try:
        path, line, text = cause_excerpt(r.cause, folder)
    except (OSError, ValueError) as e:
        return f"cause unknown ({html.escape(str(e))})"
    return (f"<a href='{path.as_uri()}'>{html.escape(path.name)}:{line}</a>"
            f"<div class='cause'>{html.escape(text)}</div>")


def _figure_html(con: Any, stem: str, fig: Figure, folder: Path, figs_out: Path, counts: _Counts,
                 claims_rows: list[str]) -> str:
    from .plot import FILE_KINDS, draw, save
    from .report import _png

    drawn, err, values = None, "", {}
    try:
        values = figure_values(con, fig)
        drawn = draw(con, fig, values)
    except Exception as e:  # one failing figure must not hide the others
        err = f"{type(e).__name__}: {e}"
    q, unit = y_axis(fig)
    parts = [f"<section id='{fig.id}'><h3>{html.escape(fig.title)}</h3>"]
    meta = [f"sweep <code>{html.escape(stem)}.toml</code>"] + ([f"paper page {fig.page}"] if fig.page else [])
    if drawn is not None:
        save(drawn, figs_out, fig.id)
        meta.append("files: " + " ".join(f"<a href='{FIGURES_DIR}/{fig.id}.{k}'>{k.upper()}</a>" for k in FILE_KINDS))
    parts.append(f"<p class='meta'>{' · '.join(meta)}</p>")
    if fig.claim:
        parts.append(f"<p><b>The paper:</b> {html.escape(fig.claim)}</p>")
    caption, rows = [], []
    for i, r in enumerate(fig.reported):
        v = check(r, _claim_values(con, fig, r, values))
        counts.add(v.holds)
        what = f"{r.ratio[0]} / {r.ratio[1]}" if r.ratio else str(r.label)
        mark = _VERDICT[v.holds]
        on_fig = "" if drawn is None or i in drawn.drawn else " (not drawn: hopsim has no value to place it at)"
        paper_text, hopsim_text = html.escape(v.paper), _fmt(v.hopsim)
        if not r.ratio:  # a value in the unit the figure shows it in (1.0 MB, not 1.002e+06)
            cq, cunit = y_axis(fig, r.metric, r.flows)
            paper_text = "-".join(_in_unit(x, cunit) for x in (r.range or [r.value]))
            hopsim_text = _in_unit(v.hopsim, cunit)
        caption.append(f"<li class='{mark.replace(' ', '-')}'>{html.escape(what)}: paper {paper_text}, "
                       f"hopsim {hopsim_text}: <b>{mark}</b> ({html.escape(v.why)}){on_fig}</li>")
        cells = (f"<td>{html.escape(what)}</td><td>{html.escape(r.metric or fig.metric or q)}</td>"
                 f"<td>{html.escape(v.paper)}</td><td>{_fmt(v.hopsim)}</td><td class='{mark.replace(' ', '-')}'>{mark}: "
                 f"{html.escape(v.why)}</td><td>{_cause_cell(r, v.holds, folder)}</td><td>{html.escape(r.note)}</td>")
        rows.append(f"<tr>{cells}</tr>")
        claims_rows.append(f"<tr><td><a href='#{fig.id}'>{html.escape(fig.id)}</a></td>{cells}</tr>")
    cap = (f"<figcaption>Diamonds and bars in black: the paper's numbers.<ul>{''.join(caption)}</ul></figcaption>"
           if caption else "<figcaption>The paper reports no number for this figure.</figcaption>")
    if drawn is not None:
        import base64

        import matplotlib.pyplot as plt

        png = base64.b64encode((figs_out / f"{fig.id}.png").read_bytes()).decode("ascii")
        plt.close(drawn.figure)
        parts.append(f"<figure><img alt='{html.escape(fig.title)}' src='data:image/png;base64,{png}'>{cap}</figure>")
    elif caption:
        parts.append(cap.replace("figcaption", "div"))
    if err:
        parts.append(f"<p class='meta'>figure failed: {html.escape(err)}</p>")
    if values and fig.plot == "table":
        trs = "".join(f"<tr><td>{html.escape(k)}</td><td>{_fmt(v)}</td></tr>" for k, v in values.items())
        head = f"{q} ({unit})" if unit and unit != "slowdown" else q
        parts.append(f"<table><thead><tr><th>label</th><th>{html.escape(head)}</th></tr></thead><tbody>{trs}</tbody></table>")
    if rows:
        parts.append("<table><thead><tr><th>claim</th><th>metric</th><th>paper</th><th>hopsim</th><th>verdict</th>"
                     f"<th>cause</th><th>source</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(parts) + "</section>"


_PAGE_CSS = """
section{margin-bottom:2rem}h3{font-size:1.02rem;margin:1.6rem 0 .2rem}
td.holds,li.holds b{color:#1a7f37}td.does-not-hold,li.does-not-hold b{color:#b42318}td.no-number{color:#777}
.cause{color:#555;font-size:.78rem;max-width:34rem;text-align:left}figcaption ul{margin:.3rem 0;padding-left:1.2rem}
"""


def build_paper_page(out: Path | str, page: Path | str | None = None) -> Path:
    """Write the page of the reproduction in `out` (its paper.json) and its figure files; returns the page."""
    from ..results.query import connect
    from .report import _CSS, _IMG_CHECK, _write

    out = resolve(out)
    man = json.loads((out / MANIFEST).read_text())
    page = Path(page) if page else out / f"{man['paper']}.html"
    folder = Path(man["folder"])
    figs_out = page.parent / FIGURES_DIR
    title = f"hopsim reproduces {man['paper']}" + (" (quick)" if man.get("quick") else "")
    sections: dict[str, _Counts] = {}
    body, claims_rows = [], []
    for stem in man["sweeps"]:
        model = read_sweep(folder / f"{stem}.toml")
        paper: PaperModel = model.paper  # type: ignore[assignment]
        sec = section_of(folder / f"{stem}.toml")
        counts = sections.setdefault(sec, _Counts())
        counts.sweeps.append(stem)
        con = connect(out / stem)
        body.append(f"<h2 id='sweep-{html.escape(stem)}'>{html.escape(sec)}: <code>{html.escape(stem)}</code></h2>")
        for fig in paper.figures:
            counts.figures += 1
            body.append(_figure_html(con, stem, fig, folder, figs_out, counts, claims_rows))
        walls = con.execute("SELECT label, avg(wall_time_s) AS w, count(*) AS n FROM runs GROUP BY label").fetchall()
        wrows = "".join(f"<tr><td>{html.escape(str(lab))}</td><td>{_fmt(float(w))}</td><td>{n}</td></tr>" for lab, w, n in walls)
        body.append(f"<details><summary class='meta'>Wall time per run of <code>{html.escape(stem)}</code></summary>"
                    f"<table><thead><tr><th>label</th><th>wall (s)</th><th>runs</th></tr></thead><tbody>{wrows}</tbody></table></details>")
        con.close()
    total = _Counts()
    for c in sections.values():
        total.held, total.failed, total.none = total.held + c.held, total.failed + c.failed, total.none + c.none
    srows = "".join(
        f"<tr><td>{html.escape(s)}</td><td>{', '.join(f'<a href=#sweep-{x}>{html.escape(x)}</a>' for x in c.sweeps)}</td>"
        f"<td>{c.figures}</td><td class='holds'>{c.held}</td><td class='does-not-hold'>{c.failed}</td><td>{c.none}</td></tr>"
        for s, c in sections.items())
    summary = (f"<p><b>{total.held} of {total.total} reported numbers hold</b> (same direction, within 2x); "
               f"{total.failed} do not, {total.none} have no hopsim number. Wall time {man.get('wall_s', math.nan):,.0f} s, "
               f"finished {html.escape(man.get('finished', ''))}.</p>"
               "<table><thead><tr><th>paper section</th><th>sweeps</th><th>figures</th><th>hold</th><th>do not hold</th>"
               f"<th>no number</th></tr></thead><tbody>{srows}</tbody></table>")
    claims = ("<details><summary>Every reported number</summary><table><thead><tr><th>figure</th><th>claim</th><th>metric</th>"
              "<th>paper</th><th>hopsim</th><th>verdict</th><th>cause</th><th>source</th></tr></thead><tbody>"
              f"{''.join(claims_rows)}</tbody></table></details>") if claims_rows else ""
    doc = "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}{_PAGE_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>Scenarios: {html.escape(str(folder))}; results: {html.escape(str(out))}; "
        f"figures as SVG, PDF, PNG and CSV in <a href='{FIGURES_DIR}/'>{FIGURES_DIR}/</a>.</p>",
        "<h2>Summary by section of the paper</h2>", summary, claims, *body, _IMG_CHECK, "</body></html>",
    ])
    _write(page, doc)
    (out / CLAIMS).write_text(json.dumps({
        "paper": man["paper"], "quick": bool(man.get("quick")), "page": os.path.relpath(page, out), "wall_s": man.get("wall_s"),
        "finished": man.get("finished"), "held": total.held, "failed": total.failed, "none": total.none,
        "sections": {s: {"held": c.held, "failed": c.failed, "none": c.none, "figures": c.figures} for s, c in sections.items()},
    }, indent=2) + "\n")
    return page
