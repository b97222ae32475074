"""`hopsim reproduce PAPER`: run a paper's sweeps and write one HTML page that redraws each of its
figures from hopsim's runs beside the numbers the paper reports.

A paper is a folder, ``scenarios/papers/PAPER/``: base scenarios and sweep files; every sweep file
with a ``[paper]`` table (`hopsim.paper`) is part of the reproduction. The output folder holds one
sweep folder per sweep file (named by the file), ``paper.json`` (what ran, quick or full, and
how long it took) and ``PAPER.html``. Sweeps resume as `hopsim sweep` does, so a reproduction
that was interrupted picks up where it stopped; quick and full runs never share a folder.
"""

from __future__ import annotations

import html
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import ScenarioError
from .paper import FLOW_METRICS, Figure, PaperModel, by_label, check, metric_by_run
from .sweep import SweepModel, read_sweep, run_sweep
from .paths import resolve

__all__ = ["paper_dir", "paper_sweeps", "reproduce", "build_paper_page", "is_reproduction", "MANIFEST", "PAPERS_DIR"]

MANIFEST = "paper.json"
PAPERS_DIR = Path("scenarios") / "papers"


def _papers_roots() -> list[Path]:
    """Where paper folders are looked for: the working directory's scenarios/papers, then the
    repository's this package was installed from (an editable install)."""
    here = Path(__file__).resolve().parents[2] / PAPERS_DIR
    roots = [Path.cwd() / PAPERS_DIR]
    return roots + ([here] if resolve(here) != resolve(roots[0]) else [])


def paper_dir(paper: str) -> Path:
    """The folder of `paper`: a path to a folder, or a name under scenarios/papers/."""
    p = Path(paper)
    if p.is_dir():
        return resolve(p)
    known: set[str] = set()
    for root in _papers_roots():
        if (root / paper).is_dir():
            return resolve(root / paper)
        if root.is_dir():
            known |= {d.name for d in root.iterdir() if d.is_dir() and paper_sweeps(d, quiet=True)}
    raise ScenarioError(f"PAPER: no paper {paper!r}; allowed: {', '.join(sorted(known)) or 'none found'} "
                        f"(folders of {PAPERS_DIR} with sweep files that have a [paper] table), or a path to such a folder")


def paper_sweeps(d: Path, quiet: bool = False) -> list[tuple[Path, SweepModel]]:
    """The sweep files of paper folder `d` that have a [paper] table, by file name."""
    from .scenario import read_toml

    found = []
    for f in sorted(d.glob("*.toml")):
        try:
            raw = read_toml(f)
        except ScenarioError:
            if quiet:
                continue
            raise
        if "paper" in raw and "base" in raw:
            found.append((f, read_sweep(f)))
    if not found and not quiet:
        raise ScenarioError(f"PAPER: {d} has no sweep file with a [paper] table")
    return found


@dataclass
class Reproduction:
    out: Path
    page: Path
    sweeps: list[str] = field(default_factory=list)
    ran: int = 0
    skipped: int = 0


def expected_wall(sweeps: list[tuple[Path, SweepModel]], quick: bool) -> float | None:
    """The wall time the sweeps' [paper] tables record (measured on 2 cores), if all do."""
    total = 0.0
    for _, m in sweeps:
        assert m.paper is not None
        w = m.paper.wall_quick_s if quick else m.paper.wall_full_s
        if w is None:
            return None
        total += w
    return total


def reproduce(paper: str, out: Path | str, quick: bool = False, jobs: int | None = None,
              on_sweep: Callable[[int, int, str], None] | None = None,
              on_plan: Callable[[int, int], None] | None = None,
              on_done: Callable[[str], None] | None = None) -> Reproduction:
    """Run every [paper] sweep of `paper` into `out` (resuming), then write its page."""
    d = paper_dir(paper)
    sweeps = paper_sweeps(d)
    out = resolve(out)
    man_path = out / MANIFEST
    if man_path.exists():
        old = json.loads(man_path.read_text())
        if bool(old.get("quick")) != quick or old.get("paper") != d.name:
            raise ScenarioError(f"--out {out}: holds the {'quick' if old.get('quick') else 'full'} reproduction of "
                                f"{old.get('paper')!r}; give another folder")
    rep = Reproduction(out=out, page=out / f"{d.name}.html")
    t0 = time.perf_counter()
    walls: dict[str, float] = {}
    for i, (f, _) in enumerate(sweeps):
        if on_sweep:
            on_sweep(i + 1, len(sweeps), f.stem)
        s0 = time.perf_counter()
        r = run_sweep(f, out / f.stem, jobs=jobs, on_plan=on_plan, on_done=on_done, quick=quick)
        walls[f.stem] = time.perf_counter() - s0
        rep.sweeps.append(f.stem)
        rep.ran += len(r.ran)
        rep.skipped += len(r.skipped)
    manifest = {"paper": d.name, "folder": str(d), "quick": quick, "sweeps": rep.sweeps,
                "wall_s": time.perf_counter() - t0, "sweep_wall_s": walls,
                "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    out.mkdir(parents=True, exist_ok=True)
    man_path.write_text(json.dumps(manifest, indent=2) + "\n")
    build_paper_page(out, rep.page)
    return rep


def is_reproduction(d: Path | str) -> bool:
    return (Path(d) / MANIFEST).exists()


# ----------------------------------------------------------------------------- the page


def _figure_values(con: Any, fig: Figure) -> dict[str, float]:
    if fig.metric is None and (fig.sql is None or fig.plot == "series"):
        return {}  # a series' sql gives points over x, not one value per label
    return by_label(metric_by_run(con, fig.metric, fig.sql, fig.flows))


def _plot(con: Any, fig: Figure, values: dict[str, float]):
    """The figure's plot, or None for a table."""
    from . import plots

    if fig.plot == "table":
        return None
    if fig.plot == "slowdown_by_size":
        where = f"finished AND ({fig.flows})" if fig.flows else "finished"
        df = con.execute(f"SELECT label, size_bytes, slowdown, finished, incast FROM flows WHERE {where}").fetchdf()
        return plots.fct_slowdown(df)
    if fig.plot == "buffer_cdf":
        return plots.buffer_cdf(con.execute("SELECT label, scope, bytes FROM buffer WHERE scope = 'switch'").fetchdf())
    if fig.plot == "bars":
        return plots.labelled_bars(values, _axis_name(fig), fig.logy)
    if fig.plot == "lines":
        per_run = metric_by_run(con, fig.metric, fig.sql, fig.flows)
        # a figure's SQL may give a value per run or one per label (seeds pooled): x joins either
        key = "run" if "run" in per_run else "label"
        xs = con.execute(f'SELECT DISTINCT {key}, "{fig.x}" AS x FROM runs').fetchdf()
        df = per_run.merge(xs, on=key)
        df["series"] = [_without(lab, fig.x) for lab in df["label"]]
        # the x values came as column "x"; the plot reads the column named by the figure's x
        return plots.lines(df.rename(columns={"x": fig.x or "x"}), fig.x or "x", _axis_name(fig), fig.logy)
    # series: the sql gives label, x, y
    df = con.execute(fig.sql).fetchdf()
    return plots.lines(df.rename(columns={"label": "series", "y": "value"}), "x", _axis_name(fig), fig.logy)


def _without(label: str, x: str | None) -> str:
    return ", ".join(p for p in label.split(", ") if not p.startswith(f"{x}=")) or label


def _axis_name(fig: Figure) -> str:
    m = fig.metric or "value"
    return f"{m} ({fig.flows})" if fig.flows and m in FLOW_METRICS else m


def build_paper_page(out: Path | str, page: Path | str | None = None) -> Path:
    """Write the page of the reproduction in `out` (its paper.json); returns the page."""
    from .query import connect
    from .report import _CSS, _IMG_CHECK, _fmt, _png, _write

    out = resolve(out)
    man = json.loads((out / MANIFEST).read_text())
    page = Path(page) if page else out / f"{man['paper']}.html"
    folder = Path(man["folder"])
    title = f"hopsim reproduces {man['paper']}" + (" (quick)" if man.get("quick") else "")
    body: list[str] = []
    claims_rows: list[str] = []
    held = total = 0
    for stem in man["sweeps"]:
        model = read_sweep(folder / f"{stem}.toml")
        paper: PaperModel = model.paper  # type: ignore[assignment]
        con = connect(out / stem)
        walls = con.execute("SELECT label, avg(wall_time_s) AS w, count(*) AS n FROM runs GROUP BY label").fetchall()
        for fig in paper.figures:
            # a figure whose SQL fails (a table a scheme did not write) must not hide the others:
            # the page says what failed where the figure would be
            plot, err, values = None, "", {}
            try:
                values = _figure_values(con, fig)
                plot = _plot(con, fig, values)
            except Exception as e:
                err = f"{type(e).__name__}: {e}"
            head = f"<h2 id='{fig.id}'>{html.escape(fig.title)}</h2>"
            meta = [f"sweep <code>{html.escape(stem)}.toml</code>"]
            if fig.page:
                meta.append(f"paper page {fig.page}")
            body.append(head + f"<p class='meta'>{' · '.join(meta)}</p>")
            if fig.claim:
                body.append(f"<p><b>The paper:</b> {html.escape(fig.claim)}</p>")
            if plot is not None:
                body.append(f"<figure class='wide'><img alt='{html.escape(fig.title)}' src='data:image/png;base64,{_png(plot)}'></figure>")
            if err:
                body.append(f"<p class='meta'>figure failed: {html.escape(err)}</p>")
            if values:
                rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{_fmt(v)}</td></tr>" for k, v in values.items())
                body.append(f"<table><thead><tr><th>label</th><th>{html.escape(_axis_name(fig))}</th></tr></thead><tbody>{rows}</tbody></table>")
            crow = []
            for r in fig.reported:
                try:
                    vals = values if (r.metric is None and r.flows is None) else by_label(
                        metric_by_run(con, r.metric or fig.metric, None if r.metric else fig.sql, r.flows or fig.flows))
                except Exception:
                    vals = {}
                v = check(r, vals)
                total += 1
                held += bool(v.holds)
                what = f"{r.ratio[0]} / {r.ratio[1]}" if r.ratio else str(r.label)
                mark = {True: "holds", False: "does not hold", None: "no number"}[v.holds]
                cells = (f"<td>{html.escape(what)}</td><td>{html.escape(r.metric or fig.metric or 'sql')}</td>"
                         f"<td>{html.escape(v.paper)}</td><td>{_fmt(v.hopsim)}</td><td>{mark}: {html.escape(v.why)}</td>"
                         f"<td>{html.escape(r.note)}</td>")
                crow.append(f"<tr>{cells}</tr>")
                claims_rows.append(f"<tr><td><a href='#{fig.id}'>{html.escape(fig.id)}</a></td>{cells}</tr>")
            if crow:
                body.append("<table><thead><tr><th>claim</th><th>metric</th><th>paper</th><th>hopsim</th><th>verdict</th>"
                            f"<th>source</th></tr></thead><tbody>{''.join(crow)}</tbody></table>")
        wrows = "".join(f"<tr><td>{html.escape(str(lab))}</td><td>{_fmt(float(w))}</td><td>{n}</td></tr>" for lab, w, n in walls)
        body.append(f"<p class='meta'>Wall time per run of <code>{html.escape(stem)}</code> (s, mean over seeds):</p>"
                    f"<table><thead><tr><th>label</th><th>wall (s)</th><th>runs</th></tr></thead><tbody>{wrows}</tbody></table>")
        con.close()
    summary = (f"<p>{held} of {total} reported numbers hold (same direction, within 2x). "
               f"Whole reproduction: {man.get('wall_s', math.nan):,.0f} s of wall time, finished {html.escape(man.get('finished', ''))}.</p>")
    claims = ("<table><thead><tr><th>figure</th><th>claim</th><th>metric</th><th>paper</th><th>hopsim</th><th>verdict</th>"
              f"<th>source</th></tr></thead><tbody>{''.join(claims_rows)}</tbody></table>") if claims_rows else ""
    doc = "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>Scenarios: {html.escape(str(folder))}; results: {html.escape(str(out))}.</p>",
        summary, "<h2>Reported numbers</h2>", claims, *body, _IMG_CHECK, "</body></html>",
    ])
    _write(page, doc)
    return page
