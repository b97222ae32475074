"""Write CHANGELOG.md from `git log`: the project's history by date, each change with its commit.

    python scripts/changelog.py > CHANGELOG.md

Each commit's subject is cut at its first sentence (the details stay in the commit). Merges are
left out: the commits they bring are listed themselves. A few subjects are given reworded
(`REWORDED`), dating what they measured.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import OrderedDict

# the first sentence of commits whose subject dates a measurement by how the work was organised
# rather than by the day: the same facts, dated
REWORDED = {
    "a5b6cef": "The scenario schema takes its schemes and algorithms from the core's registries: their names, and "
               "a model generated from the core's defaults and units for any table without a hand-written one; "
               "every table goes to the core whole and the core's reading of it decides what the front resolves",
    "e74242d": "Engine: events of one instant ordered by a key of the event itself (kind, entity, generation), not "
               "push order; the run in windows of the shortest cuttable link delay; partitions on threads exchange "
               "cut-link packets as messages at window ends; tables merged as one thread writes them",
    "6664396": "Engine: a receiver in another partition answers every data packet (the early return keyed on the "
               "flow's packet count alone); chosen flows' delivered bytes taken where their receivers are",
    "d059b78": "Engine: equal-time events of one kind in an order permuted by the instant (no port wins every tie); "
               "wire arrivals, then flow-control timers, flow timers, port services",
    "aa6fe44": "Engine: --threads on run and validate, threads= in the Python API, a sweep's jobs share the cores; "
               "the memory estimate counts each partition; hopsim-bench --threads",
    "bcd8e2e": "Engine: the scaling table over threads (1-16) on 1,024 and 4,394 hosts; docs",
    "e535284": "README: the 1,024-host 10 ms run beside the first commit of 2026-11-24 (416 s against 388 s)",
    "0e4aa9d": "Scaling study re-measured on 2026-11-24 (profile-guided; events per second 9-12 M at 128-320 hosts, "
               "5.3-6.1 M at 1,024, 2.3-3.6 M at 4,394); README's Benchmark section: that day's row and scaling figures",
    "31be515": "Scaling study re-run with the profile-guided core (events identical to the table of 2026-11-22; "
               "7-11 M events/s up to 320 hosts, 1.6-1.7 M/s at 4,394; 56-242 MB).",
    "db15054": "README Benchmark: the profile-guided build (what it is, what it buys, where it does not help), "
               "side-by-side timings of 2026-11-23, and memory after the flows table was spooled",
    "fdd6104": "README benchmark section: side-by-side measurements of 2026-11-23 (hopsim run 84 MB peak, "
               "instruction counts, the re-run scaling study, the 1,024-host 10 ms run)",
    "32d1f57": "README benchmark section: measurements of 2026-11-23 (hopsim run peaks at 115-117 MB, was 187-193 MB; "
               "instruction counts 5.1% fewer; wall times on the loaded machine, stated as such)",
    "58c4109": "Floodgate sweeps' expected wall times from runs of 2026-11-23 (2 cores loaded 5-10, --jobs 1: "
               "163 s full, 56 s quick; the page said 7 min)",
    "a74666f": "schema: one _positive_or validator for a size, time or rate that may be a keyword, instead of "
               "eight copies of the same five lines; the messages are unchanged",
    "cfbad85": "MMU: one release path for both policies (as charged, headroom first) instead of two copies of its tail; "
               "benchmark instructions +4.6% where they were +6.7%, wall within noise, results identical",
}


def _first_sentence(subject: str, limit: int = 240) -> str:
    m = re.search(r"(?<=[a-z0-9)%])\. (?=[A-Z])", subject)
    s = subject[:m.start() + 1] if m else subject
    if len(s) > limit:
        cut = s.rfind(";", 0, limit)
        s = (s[:cut] if cut > 80 else s[:limit].rsplit(" ", 1)[0]) + " ..."
    return s


def changelog(rev: str = "HEAD") -> str:
    log = subprocess.run(["git", "log", "--no-merges", "--date=short", "--format=%ad%x09%h%x09%s", rev],
                         capture_output=True, text=True, check=True).stdout
    by_date: OrderedDict[str, list[str]] = OrderedDict()
    for line in log.splitlines():
        date, commit, subject = line.split("\t", 2)
        text = REWORDED.get(commit[:7]) or _first_sentence(subject)
        by_date.setdefault(date, []).append(f"- {text} (`{commit}`)")
    out = ["# Changelog", "", "What changed in hopsim, newest first, by date; each line names its commit "
           "(`git show COMMIT` has the whole message). Made by `python scripts/changelog.py`.", ""]
    for date, items in by_date.items():
        out += [f"## {date}", "", *items, ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(changelog(sys.argv[1] if len(sys.argv) > 1 else "HEAD"))
