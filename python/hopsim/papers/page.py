"""The page of a paper's reproduction: a summary per section of the paper (claims in each of the
three tiers of `claims.check`), then the paper's sections in the paper's order, each figure
redrawn (`plot`) with the verdicts in its caption, each claim that does not match linked to where
its cause is written (`Reported.cause`) with the kind of cause (`Reported.cause_class`).

Beside the page, in the reproduction's folder: ``figures/ID.{svg,pdf,png,csv}`` for every figure
(a table of the paper: its CSV) and ``claims.json``: the counts per tier and section, the wall
time, and every claim (id, section, figure, quantity, the paper's number, hopsim's, tier, cause),
so that two versions can be diffed; the index of papers (`index`) reads it.
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

from .claims import MANIFEST, TIERS, Figure, PaperModel, Reported, check, claim_axis, claim_values, figure_values, y_axis
from .figstyle import num
from ..scenario.paths import resolve
from ..sweep import read_sweep

__all__ = ["build_paper_page", "section_of", "section_order", "figure_order", "cause_excerpt", "CLAIMS", "FIGURES_DIR"]

CLAIMS = "claims.json"
FIGURES_DIR = "figures"
_SECTION = re.compile(r"(§\s*[0-9IVX][0-9A-Za-z.\-/]*|App(?:\.|endix)\s+[A-Z][0-9.]*|appendix\s+[A-Z])")
_ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10}


def _css(tier: str | None) -> str:
    return (tier or "no number").replace(" ", "-")


def section_order(section: str) -> tuple:
    """Where a section stands in its paper: §2.3 < §5.1-5.2 < §5.4 < §VI-B < App. C < appendix E.3."""
    appendix = bool(re.match(r"app", section, re.I))
    body = re.sub(r"^(§|App(?:\.|endix)?)\s*", "", section, flags=re.I)
    key: list[float] = []
    for tok in re.findall(r"[0-9]+|[IVX]+(?![a-z])|[A-Za-z]", body):
        if tok.isdigit():
            key.append(float(tok))
        elif tok in _ROMAN and not key:
            key.append(float(_ROMAN[tok]))
        else:
            key.append(float(ord(tok.upper()) - ord("A") + 1))
    return (1 if appendix else 0, key or [math.inf], section)


def figure_order(fig: Figure) -> tuple:
    """A figure's place by the paper's numbering: Fig. 6a < Fig. 10 < Table 3 (tables after figures)."""
    m = re.search(r"(Fig(?:ure)?\.?|Table)\s*([0-9IVX]+)([a-z]?)", fig.title)
    if not m:
        return (2, math.inf, "", fig.id)
    n = float(_ROMAN[m.group(2)]) if m.group(2) in _ROMAN else float(m.group(2)) if m.group(2).isdigit() else math.inf
    return (1 if m.group(1) == "Table" else 0, n, m.group(3), fig.id)


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
    tiers: dict[str, int] = field(default_factory=lambda: {t: 0 for t in (*TIERS, "no number")})
    figures: int = 0
    sweeps: list[str] = field(default_factory=list)

    def add(self, tier: str | None) -> None:
        self.tiers[tier or "no number"] += 1

    def merge(self, other: "_Counts") -> None:
        for k, v in other.tiers.items():
            self.tiers[k] += v

    @property
    def total(self) -> int:
        return sum(self.tiers.values())

    def as_json(self) -> dict[str, int]:
        return {k.replace(" ", "_"): v for k, v in self.tiers.items()}


def _fmt(v: Any) -> str:
    from .report import _fmt as fmt

    return fmt(v)


def _in_unit(x: Any, unit: str) -> str:
    """A number in the unit an axis would show it in: 1,894,784 B -> 1.89 MB."""
    from .figstyle import axis_for

    if x is None or not math.isfinite(float(x)):
        return "–"
    a = axis_for("", unit, [float(x)])
    shown = num(a(float(x)))
    return shown if a.unit in ("", "count", "slowdown") else f"{shown} {html.escape(a.unit)}"


_CLASS_TEXT = {"mechanism": "hopsim's mechanism differs from the paper's text",
               "setting": "a setting the paper states that the scenario lacks",
               "unstated": "a setting the paper leaves unstated",
               "not_reproducible": "not reproducible in a simulator"}


def _cause_cell(r: Reported, tier: str | None, folder: Path) -> str:
    if tier == "matches":
        return ""
    kind = (f"<div class='cause-class'><b>{html.escape(r.cause_class)}</b>: {html.escape(_CLASS_TEXT[r.cause_class])}</div>"
            if r.cause_class else "<div class='cause-class'>cause class not given</div>")
    if not r.cause:
        return "cause unknown" + (kind if r.cause_class else "")
    try:
        path, line, text = cause_excerpt(r.cause, folder)
    except (OSError, ValueError) as e:
        return f"cause unknown ({html.escape(str(e))})"
    return (f"{kind}<a href='{path.as_uri()}'>{html.escape(path.name)}:{line}</a>"
            f"<div class='cause'>{html.escape(text)}</div>")


def _number(x: float | None, unit: str | None) -> str:
    """A claim's number as its axis shows it: a value in its unit (1.89 MB), a ratio (unit None) as 2.1x."""
    if unit is not None:
        return "never, in the window" if x == math.inf else _in_unit(x, unit)
    if x == math.inf:  # a ratio over a zero
        return "∞ (over 0)"
    return f"{num(x)}x" if x is not None and math.isfinite(x) else "–"


def _write_table(values: dict[str, float], fig: Figure, figs_out: Path, claims: list[dict]) -> Path:
    """A table of the paper as CSV: one row per label, hopsim's value, and the paper's where it gives one."""
    import csv

    q, unit = y_axis(fig)
    paper = {c["label"]: c for c in claims if c.get("label") in values}
    figs_out.mkdir(parents=True, exist_ok=True)
    path = figs_out / f"{fig.id}.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["label", "quantity", "unit", "hopsim", "paper", "paper_low", "paper_high"])
        for lab, v in values.items():
            c = paper.get(lab, {})
            lo, hi = c.get("paper_low"), c.get("paper_high")
            w.writerow([lab, q, unit, v, c.get("paper", "") if lo is None else "", "" if lo is None else lo, "" if hi is None else hi])
    return path


def _figure_html(con: Any, stem: str, sec: str, fig: Figure, folder: Path, figs_out: Path, counts: _Counts,
                 claims_rows: list[str], claims: list[dict]) -> str:
    from .plot import FILE_KINDS, draw, save

    drawn, err, values = None, "", {}
    try:
        if con is None:
            raise FileNotFoundError(f"no complete run of sweep {stem}")
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
    caption, rows, mine = [], [], []
    for i, r in enumerate(fig.reported):
        v = check(r, claim_values(con, fig, r, values))
        counts.add(v.tier)
        mark = v.tier or "no number"
        what = f"{r.ratio[0]} / {r.ratio[1]}" if r.ratio else str(r.label)
        cq, cunit = claim_axis(fig, r)
        shown_unit = None if r.ratio else cunit
        on_fig = ("" if drawn is None or i in drawn.drawn else " (a direction: no number to draw)" if r.direction
                  else " (not drawn: hopsim has no value to place it at)")
        paper_text = (html.escape(v.paper) if r.direction or r.zero else
                      f"at least {_number(r.range[0], shown_unit)}" if r.range and not math.isfinite(r.range[1]) else
                      "-".join(_number(x, shown_unit) for x in (r.range or [r.value])))
        hopsim_text = ("∞ (a level never reached)" if r.stat == "reach" and r.ratio and v.hopsim == math.inf
                       else _number(v.hopsim, shown_unit))
        caption.append(f"<li class='{_css(v.tier)}'>{html.escape(what)}: paper {paper_text}, "
                       f"hopsim {hopsim_text}: <b>{mark}</b> ({html.escape(v.why)}){on_fig}</li>")
        cells = (f"<td>{html.escape(what)}</td><td>{html.escape(cq)}</td>"
                 f"<td>{paper_text}</td><td>{hopsim_text}</td><td class='{_css(v.tier)}'>{mark}: "
                 f"{html.escape(v.why)}</td><td>{_cause_cell(r, v.tier, folder)}</td><td>{html.escape(r.note)}</td>")
        rows.append(f"<tr>{cells}</tr>")
        claims_rows.append(f"<tr><td><a href='#{fig.id}'>{html.escape(fig.id)}</a></td>{cells}</tr>")
        entry = {"id": f"{fig.id}#{i}", "section": sec, "figure": fig.id, "sweep": stem, "quantity": cq,
                 "unit": "ratio" if r.ratio or cunit is None else cunit, "claim": {"ratio": r.ratio} if r.ratio else {"label": r.label},
                 "paper": 0.0 if r.zero else _json_number(r.value), "paper_range": [_json_number(x) for x in r.range] if r.range else None,
                 "paper_direction": r.direction,
                 "hopsim": None if math.isnan(v.hopsim) else _json_number(v.hopsim), "tier": v.tier, "why": v.why,
                 "cause": r.cause, "cause_class": r.cause_class,
                 "cause_text": _cause_text(r, folder), "note": r.note}
        claims.append(entry)
        mine.append({"label": r.label, "paper": 0.0 if r.zero else r.value, "paper_low": (r.range or [None])[0],
                     "paper_high": (r.range or [None, None])[1]} if not r.ratio else {})
    cap = (f"<figcaption>In black: the paper's numbers (a diamond, a range's bar; a ratio drawn at "
           f"the paper's ratio times hopsim's reference).<ul>{''.join(caption)}</ul></figcaption>"
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
        _write_table(values, fig, figs_out, mine)
        head = f"{q} ({unit})" if unit and unit != "slowdown" else q
        trs = "".join(f"<tr><td>{html.escape(k)}</td><td>{_in_unit(v, unit) if unit in ('B', 'ns', 'us', 'ms') else num(v)}</td></tr>"
                      for k, v in values.items())
        parts.append(f"<table><thead><tr><th>label</th><th>{html.escape(head)}</th></tr></thead><tbody>{trs}</tbody></table>"
                     f"<p class='meta'>file: <a href='{FIGURES_DIR}/{fig.id}.csv'>CSV</a></p>")
    if rows:
        parts.append("<table><thead><tr><th>claim</th><th>quantity</th><th>paper</th><th>hopsim</th><th>verdict</th>"
                     f"<th>cause</th><th>source</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(parts) + "</section>"


def _json_number(x: float | None) -> float | str | None:
    """A number as JSON holds it: an open end of a range (``inf``) as the string "inf"."""
    return x if x is None or math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _cause_text(r: Reported, folder: Path) -> str | None:
    if not r.cause:
        return None
    try:
        return cause_excerpt(r.cause, folder)[2]
    except (OSError, ValueError) as e:
        return f"unreadable: {e}"


_PAGE_CSS = """
section{margin-bottom:2rem}h3{font-size:1.02rem;margin:1.6rem 0 .2rem}
td.matches,li.matches b{color:#1a7f37}td.same-direction,li.same-direction b{color:#9a6700}
td.differs,li.differs b{color:#b42318}td.no-number{color:#777}
.cause{color:#555;font-size:.78rem;max-width:34rem;text-align:left}.cause-class{font-size:.78rem;text-align:left}
figcaption ul{margin:.3rem 0;padding-left:1.2rem}
"""

TIER_RULE = ("<b>matches</b>: inside the paper's range, else within 25% of its number; <b>same direction</b>: "
             "a ratio on the paper's side of 1 and within 2x of its number (a value: within 2x); <b>differs</b>: otherwise.")


def tier_cells(c: dict[str, int]) -> str:
    """The four counts (three tiers and no number) as table cells."""
    return "".join(f"<td class='{t.replace('_', '-')}'>{c.get(t, 0)}</td>" for t in ("matches", "same_direction", "differs", "no_number"))


TIER_HEAD = "<th>matches</th><th>same direction</th><th>differs</th><th>no number</th>"


def build_paper_page(out: Path | str, page: Path | str | None = None) -> Path:
    """Write the page of the reproduction in `out` (its paper.json) and its figure files; returns the page."""
    from ..interrupts import native_ctrl_c
    from ..results.query import connect
    from .report import _CSS, _IMG_CHECK, _write

    out = resolve(out)
    man = json.loads((out / MANIFEST).read_text())
    page = Path(page) if page else out / f"{man['paper']}.html"
    folder = Path(man["folder"])
    figs_out = page.parent / FIGURES_DIR
    title = f"hopsim reproduces {man['paper']}" + (" (quick)" if man.get("quick") else "")
    # every figure with its section and sweep, in the paper's order (not the sweep files')
    entries = []
    for stem in man["sweeps"]:
        model = read_sweep(folder / f"{stem}.toml")
        paper: PaperModel = model.paper  # type: ignore[assignment]
        sec = section_of(folder / f"{stem}.toml")
        # without a legend of its own, a figure's schemes keep the order of the sweep's [[runs]]
        order = [str(r["name"]).split(",")[0].strip().lower() for r in model.runs if r.get("name")]
        entries += [(sec, stem, fig if fig.legend else fig.model_copy(update={"legend": list(dict.fromkeys(order))}))
                    for fig in paper.figures]
    entries.sort(key=lambda e: (section_order(e[0]), figure_order(e[2])))
    sections: dict[str, _Counts] = {}
    body, claims_rows, claims = [], [], []
    cons: dict[str, Any] = {}
    with native_ctrl_c():  # the figures ask DuckDB on this thread: a Ctrl-C then ends as any other
        try:
            for sec, stem, fig in entries:
                counts = sections.get(sec)
                if counts is None:
                    counts = sections[sec] = _Counts()
                    body.append(f"<h2 id='section-{html.escape(re.sub(r'[^A-Za-z0-9]+', '-', sec))}'>{html.escape(sec)}</h2>")
                if stem not in counts.sweeps:
                    counts.sweeps.append(stem)
                if stem not in cons:
                    try:
                        cons[stem] = connect(out / stem)
                    except FileNotFoundError:  # an interrupted sweep: its figures say so, its claims have no number
                        cons[stem] = None
                con = cons[stem]
                counts.figures += 1
                body.append(_figure_html(con, stem, sec, fig, folder, figs_out, counts, claims_rows, claims))
            walls = []
            for stem, con in cons.items():
                for lab, w, n in (con.execute("SELECT label, avg(wall_time_s) AS w, count(*) AS n FROM runs GROUP BY label").fetchall()
                                  if con is not None else []):
                    walls.append(f"<tr><td>{html.escape(stem)}</td><td>{html.escape(str(lab))}</td><td>{num(float(w))}</td><td>{n}</td></tr>")
        finally:
            for con in cons.values():
                if con is not None:
                    con.close()
    body.append("<details><summary class='meta'>Wall time per run</summary><table><thead><tr><th>sweep</th><th>label</th>"
                f"<th>wall (s)</th><th>runs</th></tr></thead><tbody>{''.join(walls)}</tbody></table></details>")
    total = _Counts()
    for c in sections.values():
        total.merge(c)
    srows = "".join(
        f"<tr><td><a href='#section-{re.sub(r'[^A-Za-z0-9]+', '-', s)}'>{html.escape(s)}</a></td>"
        f"<td>{', '.join(html.escape(x) for x in c.sweeps)}</td><td>{c.figures}</td>{tier_cells(c.as_json())}</tr>"
        for s, c in sections.items())
    t = total.as_json()
    wall = man.get("runs_wall_s", man.get("wall_s", math.nan))
    summary = (f"<p><b>{t['matches']} of {total.total} reported numbers match</b>, {t['same_direction']} have the "
               f"paper's direction, {t['differs']} differ, {t['no_number']} have no hopsim number. {TIER_RULE} "
               f"The runs took {num(wall)} s of wall time, finished {html.escape(man.get('finished', ''))}.</p>"
               f"<table><thead><tr><th>paper section</th><th>sweeps</th><th>figures</th>{TIER_HEAD}</tr></thead>"
               f"<tbody>{srows}</tbody></table>")
    every = ("<details><summary>Every reported number</summary><table><thead><tr><th>figure</th><th>claim</th><th>quantity</th>"
             "<th>paper</th><th>hopsim</th><th>verdict</th><th>cause</th><th>source</th></tr></thead><tbody>"
             f"{''.join(claims_rows)}</tbody></table></details>") if claims_rows else ""
    doc = "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}{_PAGE_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>Scenarios: {html.escape(str(folder))}; results: {html.escape(str(out))}; "
        f"figures as SVG, PDF, PNG and CSV in <a href='{FIGURES_DIR}/'>{FIGURES_DIR}/</a>.</p>",
        "<h2>Summary by section of the paper</h2>", summary, every, *body, _IMG_CHECK, "</body></html>",
    ])
    _write(page, doc)
    (out / CLAIMS).write_text(json.dumps({
        "paper": man["paper"], "quick": bool(man.get("quick")), "page": os.path.relpath(page, out), "wall_s": man.get("wall_s"),
        "finished": man.get("finished"), "counts": t,
        "sections": {s: {**c.as_json(), "figures": c.figures} for s, c in sections.items()},
        "claims": claims,
    }, indent=2, allow_nan=False) + "\n")
    return page
