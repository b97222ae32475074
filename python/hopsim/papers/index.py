"""The index of reproduced papers: one page listing each paper of a folder of reproductions
(`hopsim reproduce all` writes one folder per paper), its claims that hold and do not, its wall
time and a link to its page. It reads each paper's ``claims.json`` (`page`)."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

from .figstyle import num
from .page import CLAIMS, TIER_RULE
from ..scenario.paths import resolve

__all__ = ["build_index", "INDEX"]

INDEX = "index.html"


def build_index(root: Path | str, wall_s: float | None = None) -> Path:
    """Write ``root/index.html`` for the reproductions in the folders under `root`; returns it.
    `wall_s`: the wall time of the command that ran them all (`hopsim reproduce all`); without
    it, the sum of the papers' own wall times (each from its start to its page written)."""
    from .page import TIER_HEAD, tier_cells
    from .report import _CSS, _write

    root = resolve(root)
    rows, total, n_all, wall = [], {}, 0, 0.0
    for f in sorted(root.glob(f"*/{CLAIMS}")):
        c = json.loads(f.read_text())
        counts = c["counts"]
        n = sum(counts.values())
        n_all += n
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
        wall += float(c.get("wall_s") or 0.0)
        secs = ", ".join(f"{html.escape(s)} {v['matches']}/{v['same_direction']}/{v['differs']}"
                         for s, v in c["sections"].items())
        rows.append(f"<tr><td><a href='{f.parent.name}/{html.escape(c['page'])}'>{html.escape(c['paper'])}</a></td>"
                    f"<td>{'quick' if c['quick'] else 'full'}</td>{tier_cells(counts)}<td>{n}</td>"
                    f"<td>{num(float(c.get('wall_s') or 0))}</td>"
                    f"<td>{html.escape(c.get('finished') or '')}</td><td class='secs'>{secs}</td></tr>")
    if not rows:
        raise FileNotFoundError(f"no reproduced paper (a folder with {CLAIMS}) under {root}")
    took = wall_s if wall_s is not None else wall
    doc = "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>hopsim: reproduced papers</title>",
        f"<style>{_CSS}td.matches{{color:#1a7f37}}td.same-direction{{color:#9a6700}}td.differs{{color:#b42318}}"
        "td.secs{text-align:left;font-size:.75rem}</style></head><body>",
        "<h1>hopsim: reproduced papers</h1>",
        f"<p><b>{total.get('matches', 0)} of {n_all}</b> reported numbers match over {len(rows)} papers, "
        f"{total.get('same_direction', 0)} have the paper's direction, {total.get('differs', 0)} differ, "
        f"{total.get('no_number', 0)} have no hopsim number. {TIER_RULE} "
        f"Wall time {num(took)} s ({num(took / 60)} min){'' if wall_s is not None else ', the sum of the papers'}. "
        f"Written {time.strftime('%Y-%m-%d %H:%M:%S')}.</p>",
        f"<table><thead><tr><th>paper</th><th>version</th>{TIER_HEAD}<th>claims</th>"
        "<th>wall (s)</th><th>finished</th><th>matches / same direction / differs per section</th></tr></thead><tbody>",
        *rows, "</tbody></table></body></html>",
    ])
    out = root / INDEX
    _write(out, doc)
    return out
