"""The index of reproduced papers: one page listing each paper of a folder of reproductions
(`hopsim reproduce all` writes one folder per paper), its claims that hold and do not, its wall
time and a link to its page. It reads each paper's ``claims.json`` (`page`)."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

from .page import CLAIMS
from ..scenario.paths import resolve

__all__ = ["build_index", "INDEX"]

INDEX = "index.html"


def build_index(root: Path | str) -> Path:
    """Write ``root/index.html`` for the reproductions in the folders under `root`; returns it."""
    from .report import _CSS, _write

    root = resolve(root)
    rows, held, total, wall = [], 0, 0, 0.0
    for f in sorted(root.glob(f"*/{CLAIMS}")):
        c = json.loads(f.read_text())
        n = c["held"] + c["failed"] + c["none"]
        held, total, wall = held + c["held"], total + n, wall + float(c.get("wall_s") or 0.0)
        secs = ", ".join(f"{html.escape(s)} {v['held']}/{v['held'] + v['failed'] + v['none']}" for s, v in c["sections"].items())
        rows.append(f"<tr><td><a href='{f.parent.name}/{html.escape(c['page'])}'>{html.escape(c['paper'])}</a></td>"
                    f"<td>{'quick' if c['quick'] else 'full'}</td><td class='holds'>{c['held']}</td><td>{c['failed']}</td>"
                    f"<td>{c['none']}</td><td>{n}</td><td>{float(c.get('wall_s') or 0):,.0f}</td>"
                    f"<td>{html.escape(c.get('finished') or '')}</td><td class='secs'>{secs}</td></tr>")
    if not rows:
        raise FileNotFoundError(f"no reproduced paper (a folder with {CLAIMS}) under {root}")
    doc = "\n".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>hopsim: reproduced papers</title>",
        f"<style>{_CSS}td.holds{{color:#1a7f37}}td.secs{{text-align:left;font-size:.75rem}}</style></head><body>",
        "<h1>hopsim: reproduced papers</h1>",
        f"<p><b>{held} of {total}</b> reported numbers hold over {len(rows)} papers; {wall:,.0f} s of wall time in all. "
        f"Written {time.strftime('%Y-%m-%d %H:%M:%S')}.</p>",
        "<table><thead><tr><th>paper</th><th>version</th><th>hold</th><th>do not hold</th><th>no number</th><th>claims</th>"
        "<th>wall (s)</th><th>finished</th><th>hold per section</th></tr></thead><tbody>",
        *rows, "</tbody></table></body></html>",
    ])
    out = root / INDEX
    _write(out, doc)
    return out
