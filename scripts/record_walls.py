"""Record the wall times of a paper reproduction in its sweep files, for `hopsim reproduce`'s estimate.

    python scripts/record_walls.py REPRO [REPRO ...] [--write] [--note TEXT]

REPRO: the folder of `hopsim reproduce PAPER [--quick] --out REPRO` (its paper.json), or of
`hopsim reproduce all`, whose subfolders are. Each sweep's measured wall time goes into its sweep
file's `[paper]` table as `wall_quick_s` or `wall_full_s` (whole seconds, at least 1), with a
comment saying how it was measured (worker processes, cores, the machine's load at the start and
the end). Without --write the lines are printed and nothing is changed: these are files of the
repository, edited in place only when asked.

A sweep that was resumed (some of its runs were already complete) is left as it is: its time
is not the sweep's. A manifest written before `hopsim reproduce` counted a sweep's runs cannot
say so; give --note to say how it was measured (it is taken as made from scratch).
Exit code: 0, or 2 on a folder that is not a reproduction.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

from hopsim.papers.reproduce import paper_dir

KEYS = ("wall_quick_s", "wall_full_s")


def manifests(root: Path) -> list[Path]:
    """paper.json of `root`, or of each paper folder under it (`reproduce all`)."""
    if (root / "paper.json").is_file():
        return [root / "paper.json"]
    return sorted(p for p in root.glob("*/paper.json") if p.is_file())


def how(m: dict, note: str | None) -> str:
    """The comment beside a recorded time."""
    if note:
        return note
    load = m.get("load") or [None, None]
    loads = "load " + "-".join(f"{x:g}" for x in load) if None not in load else "load not known"
    return f"measured: {m.get('jobs', '?')} worker(s) on {m.get('cores', '?')} cores, {loads}"


def set_key(text: str, key: str, value: int, comment: str) -> str:
    """`text` (a sweep file) with `key = value  # comment` in its [paper] table: the line replaced
    where there is one, else put first in the table."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "[paper]"), None)
    if start is None:
        raise ValueError("no [paper] table")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    line = f"{f'{key} = {value}':<30} # {comment}\n"
    for i in range(start + 1, end):
        if re.match(rf"\s*{key}\s*=", lines[i]):
            lines[i] = line
            return "".join(lines)
    lines.insert(start + 1, line)
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repro", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true", help="change the sweep files (else print what would change)")
    ap.add_argument("--note", help="the comment beside each time (default: from the manifest)")
    a = ap.parse_args(argv)
    for root in a.repro:
        found = manifests(root)
        if not found:
            print(f"record_walls: {root}: no paper.json (not a `hopsim reproduce` folder)", file=sys.stderr)
            return 2
        for mp in found:
            m = json.loads(mp.read_text())
            key = KEYS[0] if m.get("quick") else KEYS[1]
            counts = m.get("sweep_runs")
            if counts is None and not a.note:
                print(f"record_walls: {mp}: written before sweeps' runs were counted; give --note", file=sys.stderr)
                return 2
            folder = paper_dir(m["paper"])
            for stem, wall in sorted(m.get("sweep_wall_s", {}).items()):
                f = folder / f"{stem}.toml"
                if counts is not None and counts.get(stem, [0, 1])[1] > 0:
                    print(f"{m['paper']}/{stem}: resumed ({counts[stem][1]} run(s) already complete), left as it is")
                    continue
                value = max(1, math.ceil(wall))
                new = set_key(f.read_text(), key, value, how(m, a.note))
                print(f"{m['paper']}/{stem}: {key} = {value}")
                if a.write:
                    f.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
