"""`hopsim compare-fct REF CAND`: do two fct.txt files (the HPCC ns-3 simulator's format; see
`hopsim.interop.hpcc.exporter`) say the same, flow-size bucket by bucket?

Each side is an fct.txt, a folder holding one (the reference runs' folders), or a hopsim run
folder (then its lines are what ``hopsim export-fct`` would write). A file in Floodgate-NS3's fct
format (`hopsim.interop.floodgate.exporter`: 9 fields, node ids, its oracle FCT) is read as such.
`compare(basis="ref")` puts both sides over the reference's standalone FCT; `flows` keeps the
incast or the background flows only (see `compare`).

Matching: flows are paired by (src node, dst node, size, start time), node id = (ip >> 8) &
0xffff as the simulator's ``ip_to_node_id``. Start times pair within `START_TOL_NS` (1 ns): the
simulator truncates the flow file's seconds to whole ns (``Seconds(double)``), so about half of
its starts read 1 ns earlier than the file says, where hopsim rounds. Among flows with the same
(src, dst, size), both sides are taken in start order (then source port) and paired greedily.
Flows on one side only are counted (``unmatched``), not compared.

Slowdown: fct / standalone_fct of each line, each side with its own standalone_fct (as the
reference README defines it). Quantiles by index, as that README's p99: sorted[int(q n)] (the
median is sorted[int(0.5 n)], the upper middle value for even n).

Size buckets ("deciles"): from the reference's sizes of the matched flows, sorted: edges e_k =
sizes[k n / 10] (k = 1..9, index rounded down); a flow of size s is in bucket 1 + (number of
edges <= s). So a flow's bucket depends on its size alone: all flows of a size equal to an edge
are in the bucket that the edge opens, ties never split, and buckets hold about (not exactly)
n/10 flows each; where several edges coincide (one size covers more than a tenth of the flows)
the buckets between are empty, shown as such and left out of the worst gap.

Gap: |cand - ref| / ref of a statistic. The worst gap is the largest over the buckets' medians
and p99s; the comparison passes when it is at most `tol`. Overall mean, median and p99 (and
their gaps) are reported beside, not judged.

Tails over seeds. A p99 sits on a cliff where few flows are slow: one flow more or less above it
moves it far (a bucket of 3,600 flows has its p99 at the 36th slowest), so one run's p99 against
another's is no verdict. Each side's p99 is therefore a range: over its runs where it has
several (`ref_more`, `cand_more`: runs of the same flows with other seeds, each matched to the
reference), and for a reference of one run the 95% bootstrap interval of its p99 (its flows in
the bucket drawn with replacement `BOOTSTRAP` times, a fixed generator seed so the interval is
the same every time). A p99 is judged by the gap between the two ranges (0 where they overlap,
else the distance from the nearer end over that end), not by the two points; the points and
their gap are reported beside.
"""

from __future__ import annotations

import bisect
import json
import os
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import ScenarioError
from ..results.store import is_complete
from ..scenario.paths import check_replaceable, read_text
from .bfc.compare import read_stdout_rows
from .bfc.files import is_bfc_stdout
from .fct import FctRow
from .floodgate.exporter import is_floodgate_fct, parse_fct_floodgate
from .hpcc.exporter import _read, _time_offset_ps, fct_lines

__all__ = [
    "FctRow", "parse_fct", "read_fct", "match_flows", "size_edges", "quantile", "range_gap", "bootstrap_p99", "compare", "Comparison",
    "render", "summary_lines", "plot", "write_json", "START_TOL_NS", "N_BUCKETS", "PLOT_FORMATS",
]

START_TOL_NS = 1
N_BUCKETS = 10
BOOTSTRAP = 1000
"""Resamples of a one-run reference's bucket for its p99's interval (see the module doc)."""
BFC_TAG = "(BFC simulator)"
"""How `read_fct` names a side that is the BFC simulator's standard output (`hopsim.interop.bfc.compare`:
its slowdown basis, its size buckets and incast flows)."""


_FIELDS = ("sip", "dip", "sport", "dport", "size", "start_time", "fct", "standalone_fct")


def parse_fct(text: str, name: str) -> list[FctRow]:
    """fct.txt lines (blank lines skipped). Errors name `name`, the 1-based line and the field."""
    rows = []
    for no, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if len(f) != 8:
            raise ScenarioError(f"{name} line {no}: expected 8 fields `{' '.join(_FIELDS)}`, found {len(f)}")
        vals = []
        for i, (field_, v) in enumerate(zip(_FIELDS, f)):
            try:
                x = int(v, 16) if i < 2 else int(v)
            except ValueError:
                kind = "a hex address" if i < 2 else "a whole number"
                raise ScenarioError(f"{name} line {no}: {field_} {v!r} is not {kind}") from None
            if x < 0:
                raise ScenarioError(f"{name} line {no}: {field_} {v!r} must not be negative")
            vals.append(x)
        if vals[7] == 0:
            raise ScenarioError(f"{name} line {no}: standalone_fct is 0, so the slowdown is undefined")
        rows.append(FctRow((vals[0] >> 8) & 0xFFFF, (vals[1] >> 8) & 0xFFFF, *vals[2:]))
    return rows


def read_fct(path: Path | str, what: str = "REF") -> tuple[list[FctRow], str]:
    """The rows of an fct.txt, of a folder holding one, or of a hopsim run folder (exported as
    `hopsim export-fct` would); also a short description of what was read. `what` names the
    argument in errors."""
    p = Path(path)
    if p.is_dir() and is_complete(p):
        return _tagged(parse_fct("\n".join(fct_lines(p)), f"{p} (exported)"), p), f"run folder {p}"
    if p.is_dir():
        if not (p / "fct.txt").is_file() and (p / "stdout.txt").is_file():
            p = p / "stdout.txt"
        elif not (p / "fct.txt").is_file():
            raise ScenarioError(f"{what} {p}: a folder that is neither a complete hopsim run folder "
                                "(summary.json) nor holds an fct.txt (or the BFC simulator's stdout.txt)")
        else:
            p = p / "fct.txt"
    text = read_text(p, what)

    if is_bfc_stdout(text):
        return read_stdout_rows(p, text)[0], f"{p} {BFC_TAG}"
    if is_floodgate_fct(text):
        return parse_fct_floodgate(text, str(p)), f"{p} (Floodgate-NS3)"
    return parse_fct(text, str(p)), str(p)


def _tagged(rows: list[FctRow], run_dir: Path) -> list[FctRow]:
    """Rows of a run folder with each flow's incast tag from its flows table."""
    from dataclasses import replace

    f = _read(run_dir, "flows", ["src", "dst", "size_bytes", "start_ps", "incast"])
    off = _time_offset_ps(run_dir)
    tag = {(int(a), int(b), int(n), (int(t) + off) // 1000): bool(i)
           for a, b, n, t, i in zip(f["src"], f["dst"], f["size_bytes"], f["start_ps"], f["incast"])}
    return [replace(r, incast=tag.get((r.src, r.dst, r.size, r.start_ns))) for r in rows]


def match_flows(ref: Sequence[FctRow], cand: Sequence[FctRow],
                start_tol_ns: int = START_TOL_NS) -> tuple[list[tuple[FctRow, FctRow]], int, int]:
    """Pairs (ref row, cand row) and the numbers of unmatched ref and cand rows (see the module
    doc)."""
    groups: dict[tuple[int, int, int], tuple[list[FctRow], list[FctRow]]] = defaultdict(lambda: ([], []))
    for side, rows in ((0, ref), (1, cand)):
        for r in rows:
            groups[(r.src, r.dst, r.size)][side].append(r)
    pairs = []
    for a, b in groups.values():
        a.sort(key=lambda r: (r.start_ns, r.sport))
        b.sort(key=lambda r: (r.start_ns, r.sport))
        i = j = 0
        while i < len(a) and j < len(b):
            d = a[i].start_ns - b[j].start_ns
            if abs(d) <= start_tol_ns:
                pairs.append((a[i], b[j]))
                i += 1
                j += 1
            elif d < 0:
                i += 1
            else:
                j += 1
    pairs.sort(key=lambda p: (p[0].start_ns, p[0].src, p[0].dst, p[0].sport))
    return pairs, len(ref) - len(pairs), len(cand) - len(pairs)


def quantile(values: Sequence[float], q: float) -> float:
    """sorted(values)[int(q n)], the reference README's p99 convention."""
    s = sorted(values)
    return s[min(int(q * len(s)), len(s) - 1)]


def size_edges(sizes: Sequence[int], buckets: int = N_BUCKETS) -> list[int]:
    """The `buckets - 1` size edges (see the module doc)."""
    s = sorted(sizes)
    return [s[k * len(s) // buckets] for k in range(1, buckets)]


def _gap(ref: float | None, cand: float | None) -> float | None:
    if ref is None or cand is None:
        return None
    return abs(cand - ref) / ref


def range_gap(ref: Sequence[float] | None, cand: Sequence[float] | None) -> float | None:
    """The gap between two ranges `(lo, hi)`: 0 where they overlap, else the distance from the
    candidate's nearer end to the reference's over that reference end."""
    if ref is None or cand is None:
        return None
    (rl, rh), (cl, ch) = ref, cand
    if cl > rh:
        return (cl - rh) / rh
    if ch < rl:
        return (rl - ch) / rl
    return 0.0


def bootstrap_p99(values: Sequence[float], draws: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float]:
    """The 95% interval of `quantile(values, 0.99)` over `draws` resamples with replacement."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    n = len(v)
    k = min(int(0.99 * n), n - 1)
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    p99 = np.sort(np.partition(v[idx], k, axis=1)[:, k])
    return float(p99[int(0.025 * draws)]), float(p99[min(int(0.975 * draws), draws - 1)])


def _select(pairs: list[tuple[FctRow, FctRow]], basis: str, flows: str, incast_dsts: Sequence[int]) -> list[tuple[FctRow, FctRow]]:
    """The pairs `compare` judges: over the basis asked, the flows asked (see `compare`)."""
    if basis == "ref":
        from dataclasses import replace

        pairs = [(r, replace(x, standalone_ns=r.standalone_ns)) for r, x in pairs]
    if flows != "all":
        dsts = set(incast_dsts)
        tags = [r.dst in dsts if dsts else r.incast if r.incast is not None else x.incast for r, x in pairs]
        if any(t is None for t in tags):
            raise ScenarioError(f"--flows {flows}: needs the flows' incast tags, which only a hopsim run folder on one "
                                "side carries (give REF or CAND as a run folder), or --incast-dsts")
        pairs = [p for p, t in zip(pairs, tags) if t == (flows == "incast")]
    return pairs


def _p99s(ref: Sequence[FctRow], runs: Sequence[Sequence[FctRow]], edges: Sequence[int], nb: int, basis: str,
          flows: str, incast_dsts: Sequence[int]) -> tuple[list[list[float]], list[float]]:
    """Per run of `runs` (each matched to the reference `ref`), its p99 slowdown in each bucket
    (by the reference's sizes) and overall: per bucket and overall, the list over the runs."""
    per: list[list[float]] = [[] for _ in range(nb)]
    overall: list[float] = []
    for run in runs:
        pairs = _select(match_flows(ref, run)[0], basis, flows, incast_dsts)
        by: list[list[float]] = [[] for _ in range(nb)]
        for r, x in pairs:
            by[bisect.bisect_right(edges, r.size)].append(x.slowdown)
        for k, v in enumerate(by):
            if v:
                per[k].append(quantile(v, 0.99))
        if pairs:
            overall.append(quantile([x.slowdown for _, x in pairs], 0.99))
    return per, overall


@dataclass
class Comparison:
    ref: str
    cand: str
    ref_flows: int
    cand_flows: int
    matched: int
    unmatched_ref: int
    unmatched_cand: int
    tol: float
    buckets: list[dict[str, Any]] = field(default_factory=list)
    overall: dict[str, dict[str, float | None]] = field(default_factory=dict)
    worst: dict[str, Any] = field(default_factory=dict)
    runs: dict[str, int] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.worst.get("gap") is not None and self.worst["gap"] <= self.tol

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed, "start_tol_ns": START_TOL_NS}


def compare(ref: Sequence[FctRow], cand: Sequence[FctRow], tol: float = 0.10, ref_name: str = "REF",
            cand_name: str = "CAND", buckets: int = N_BUCKETS, basis: str = "own", flows: str = "all",
            incast_dsts: Sequence[int] = (), edges: Sequence[int] | None = None,
            ref_more: Sequence[Sequence[FctRow]] = (), cand_more: Sequence[Sequence[FctRow]] = ()) -> Comparison:
    """Match, bucket and compare (see the module doc). Raises ScenarioError when no flow matches.

    `basis`: "own" (each side's slowdown over its own standalone FCT) or "ref" (both over the
    reference's, e.g. Floodgate-NS3's Get_Oracle_Fct, so that only the FCTs differ). `flows`:
    "all", or only the "incast" or "background" flows: by `incast_dsts` when given (flows to these
    hosts are the incast: Floodgate-NS3's generators send incasts to the first host of a rack and
    keep Poisson flows off them), else by the incast tag of the side that has it (a hopsim run
    folder, or the BFC simulator's output, whose incast flows are those of its incast size).
    `edges`: fixed size edges (bytes; a flow of size s is in bucket 1 + the number of edges <= s)
    instead of the deciles: the BFC simulator's packet buckets (`bfc.compare.size_edges`).
    `ref_more`, `cand_more`: more runs of each side (other seeds), for the p99s' ranges (module doc)."""
    pairs, ur, uc = match_flows(ref, cand)
    if basis not in ("own", "ref"):
        raise ScenarioError(f"--basis {basis!r}; allowed: own, ref")
    if flows not in ("all", "incast", "background"):
        raise ScenarioError(f"--flows {flows!r}; allowed: all, incast, background")
    pairs = _select(pairs, basis, flows, incast_dsts)
    if not pairs:
        raise ScenarioError(
            f"no flow of {cand_name} ({len(cand)} flows) matches one of {ref_name} ({len(ref)} flows) by "
            f"(src, dst, size, start time within {START_TOL_NS} ns); are they runs of the same flow file?")
    c = Comparison(ref_name, cand_name, len(ref), len(cand), len(pairs), ur, uc, tol)
    if edges is None:
        edges = size_edges([r.size for r, _ in pairs], buckets)
    else:
        edges, buckets = list(edges), len(edges) + 1
    by: list[list[tuple[FctRow, FctRow]]] = [[] for _ in range(buckets)]
    for p in pairs:
        by[bisect.bisect_right(edges, p[0].size)].append(p)
    more = (_p99s(ref, ref_more, edges, buckets, basis, flows, incast_dsts),
            _p99s(ref, cand_more, edges, buckets, basis, flows, incast_dsts))
    c.runs = {"ref": 1 + len(ref_more), "cand": 1 + len(cand_more)}

    def ranges(rs: list[float], cs: list[float], ref_extra: list[float], cand_extra: list[float]):
        rv, cv = quantile(rs, 0.99), quantile(cs, 0.99)
        rr = (min([rv, *ref_extra]), max([rv, *ref_extra])) if ref_extra else bootstrap_p99(rs)
        cr = (min([cv, *cand_extra]), max([cv, *cand_extra]))
        return list(rr), list(cr), range_gap(rr, cr)

    worst: dict[str, Any] = {"gap": None}
    for k, ps in enumerate(by, 1):
        b: dict[str, Any] = {"bucket": k, "n": len(ps), "size_min": None, "size_max": None}
        rs, cs = [r.slowdown for r, _ in ps], [x.slowdown for _, x in ps]
        rm, cm = (sum(rs) / len(rs), sum(cs) / len(cs)) if ps else (None, None)
        b["ref_mean"], b["cand_mean"], b["mean_gap"] = rm, cm, _gap(rm, cm)
        b["ref_p99_range"], b["cand_p99_range"], b["p99_range_gap"] = \
            ranges(rs, cs, more[0][0][k - 1], more[1][0][k - 1]) if ps else (None, None, None)
        for stat, q in (("median", 0.5), ("p99", 0.99)):
            rv, cv = (quantile(rs, q), quantile(cs, q)) if ps else (None, None)
            b[f"ref_{stat}"], b[f"cand_{stat}"], b[f"{stat}_gap"] = rv, cv, _gap(rv, cv)
            g = b["p99_range_gap"] if stat == "p99" else b[f"{stat}_gap"]
            if g is not None and (worst["gap"] is None or g > worst["gap"]):
                worst = {"gap": g, "bucket": k, "stat": stat, "ref": rv, "cand": cv}
                if stat == "p99":
                    worst.update(ref_range=b["ref_p99_range"], cand_range=b["cand_p99_range"])
        if ps:
            b["size_min"], b["size_max"] = min(r.size for r, _ in ps), max(r.size for r, _ in ps)
        c.buckets.append(b)
    c.worst = worst
    rs, cs = [r.slowdown for r, _ in pairs], [x.slowdown for _, x in pairs]
    for stat, fn in (("mean", lambda v: sum(v) / len(v)), ("median", lambda v: quantile(v, 0.5)),
                     ("p99", lambda v: quantile(v, 0.99))):
        rv, cv = fn(rs), fn(cs)
        c.overall[stat] = {"ref": rv, "cand": cv, "gap": _gap(rv, cv)}
    rr, cr, g = ranges(rs, cs, more[0][1], more[1][1])
    c.overall["p99"].update(ref_range=rr, cand_range=cr, range_gap=g)
    return c


# ----------------------------------------------------------------------------- output


def _size(b: int | None) -> str:
    if b is None:
        return "-"
    for unit, div in (("MB", 10**6), ("KB", 10**3)):
        if b >= div:
            return f"{b / div:.3g}{unit}"
    return f"{b}B"


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _pct(v: float | None, tol: float) -> str:
    if v is None:
        return "-"
    s = f"{100 * v:.1f}%"
    return f"[red]{s}[/]" if v > tol else s


def render(c: Comparison):
    """A rich Table: per bucket n, size range, median and p99 of both sides with their gaps,
    then the overall rows."""
    from rich.table import Table

    t = Table(title=f"slowdown by flow size: REF {c.ref} vs CAND {c.cand}", title_justify="left")
    ref_how = f"over {c.runs.get('ref', 1)} runs" if c.runs.get("ref", 1) > 1 else "95% bootstrap"
    cand_how = f"over {c.runs.get('cand', 1)} runs" if c.runs.get("cand", 1) > 1 else "one run"
    for col in ("bucket", "sizes", "n", "median ref", "median cand", "gap", "p99 ref", "p99 cand", "gap",
                f"p99 ref ({ref_how})", f"p99 cand ({cand_how})", "range gap"):
        t.add_column(col, justify="left" if col in ("bucket", "sizes") else "right")
    for b in c.buckets:
        sizes = f"{_size(b['size_min'])}-{_size(b['size_max'])}" if b["n"] else "(empty)"
        t.add_row(str(b["bucket"]), sizes, str(b["n"]), _num(b["ref_median"]), _num(b["cand_median"]),
                  _pct(b["median_gap"], c.tol), _num(b["ref_p99"]), _num(b["cand_p99"]), _pct(b["p99_gap"], float("inf")),
                  _range(b["ref_p99_range"]), _range(b["cand_p99_range"]), _pct(b["p99_range_gap"], c.tol))
    t.add_section()
    o = c.overall
    t.add_row("all", "", str(c.matched), _num(o["median"]["ref"]), _num(o["median"]["cand"]),
              _pct(o["median"]["gap"], float("inf")), _num(o["p99"]["ref"]), _num(o["p99"]["cand"]),
              _pct(o["p99"]["gap"], float("inf")), _range(o["p99"]["ref_range"]), _range(o["p99"]["cand_range"]),
              _pct(o["p99"]["range_gap"], float("inf")))
    t.add_row("mean", "", "", _num(o["mean"]["ref"]), _num(o["mean"]["cand"]), _pct(o["mean"]["gap"], float("inf")),
              "", "", "", "", "", "")
    return t


def _range(r: Sequence[float] | None) -> str:
    return "-" if r is None else f"{r[0]:.3f}-{r[1]:.3f}"


def summary_lines(c: Comparison) -> list[str]:
    """The matching counts and the verdict, as printed under the table."""
    w = c.worst
    verdict = "ok" if c.passed else "FAIL"
    at = (f"ref {_range(w['ref_range'])}, cand {_range(w['cand_range'])}" if "ref_range" in w
          else f"ref {w['ref']:.3f}, cand {w['cand']:.3f}")
    return [
        f"matched {c.matched} flows; unmatched: {c.unmatched_ref} of {c.ref_flows} in REF, "
        f"{c.unmatched_cand} of {c.cand_flows} in CAND",
        f"worst gap: {100 * w['gap']:.1f}% (bucket {w['bucket']} {w['stat']}: {at}); tolerance {100 * c.tol:.1f}%: {verdict}",
        "p99s judged as ranges: the reference's " + (f"over its {c.runs['ref']} runs" if c.runs.get("ref", 1) > 1
                                                     else "95% bootstrap interval (one run)")
        + ", the candidate's " + (f"over its {c.runs['cand']} runs" if c.runs.get("cand", 1) > 1 else "one run"),
    ]


def _atomic(path: Path, write) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    check_replaceable(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(c: Comparison, path: Path | str) -> None:
    _atomic(Path(path), lambda p: p.write_text(json.dumps(c.as_dict(), indent=2) + "\n"))


PLOT_FORMATS = ("png", "pdf", "svg")


def _short(name: str) -> str:
    """A legend label: the run folder's name, or the folder of an fct.txt."""
    p = Path(name.removeprefix("run folder "))
    return (p.parent.name if p.name == "fct.txt" else p.name) or name


def plot(c: Comparison, path: Path | str) -> None:
    """Two panels, median and p99 slowdown per size bucket, REF vs CAND."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bs = [b for b in c.buckets if b["n"]]
    x = [b["bucket"] for b in bs]
    labels = [f"{b['bucket']}\n≤{_size(b['size_max'])}" for b in bs]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharex=True)
    for ax, stat in zip(axes, ("median", "p99")):
        ax.plot(x, [b[f"ref_{stat}"] for b in bs], "o-", label=f"REF {_short(c.ref)}")
        ax.plot(x, [b[f"cand_{stat}"] for b in bs], "s--", label=f"CAND {_short(c.cand)}")
        ax.set_title(f"{stat} slowdown per flow-size bucket")
        ax.set_xticks(x, labels, fontsize=6)
        ax.set_xlabel("size bucket (upper size)")
        ax.set_ylabel("slowdown (fct / standalone fct)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    try:
        _atomic(Path(path), lambda p: fig.savefig(p, format=Path(path).suffix.lstrip(".").lower() or "png"))
    finally:
        plt.close(fig)
