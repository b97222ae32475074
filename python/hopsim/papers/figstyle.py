"""How hopsim's figures look, in one place: each scheme's name as its paper writes it and its one
colour on every page, the units of an axis (bytes shown in KB or MB, times in us or ms) and the
test of an axis label's unit.

A run's label starts with a scheme (``dcqcn``, ``bfc-128``, ``hpcc+sfq``, ``ppfc 6:1``) or with a
setting of one (``fixed 5us``, ``T=10us``). The scheme is the longest key of `SCHEMES` that the
label's first word starts with; its variants (``bfc-128``, ``bfc+incastlabel``) are drawn in
shades of its colour, and labels of no scheme in one sequential colour map, in their order.
"""

from __future__ import annotations

import math
import re
from typing import Iterable

__all__ = ["SCHEMES", "scheme_of", "scheme_name", "colours", "Axis", "axis_for", "has_unit", "sort_key",
           "UNITS", "DIMENSIONLESS"]

# key -> (name in the papers, colour). Colours: matplotlib's tab10/tab20, fixed per scheme.
SCHEMES: dict[str, tuple[str, str]] = {
    "pfc": ("PFC", "#7f7f7f"),
    "ppfc": ("P-PFC", "#d62728"),
    "capfc": ("CaPFC", "#9467bd"),
    "dcqcn": ("DCQCN", "#1f77b4"),
    "timely": ("TIMELY", "#bcbd22"),
    "hpcc": ("HPCC", "#2ca02c"),
    "hpcc+sfq": ("HPCC + SFQ", "#98df8a"),
    "dctcp": ("DCTCP", "#ff7f0e"),
    "ictcp": ("ICTCP", "#8c564b"),
    "pulser": ("Pulser", "#d62728"),
    "bfc": ("BFC", "#e377c2"),
    "bfc+incastlabel": ("BFC + IncastLabel", "#f7b6d2"),
    "flowsail": ("FlowSail", "#17becf"),
    "floodgate": ("Floodgate", "#d62728"),
    "pfc_tag": ("PFC w/ tag", "#c7c7c7"),
    "ideal-fq": ("Ideal-FQ", "#000000"),
    "ideal": ("Ideal", "#000000"),
    "none": ("lossy", "#aec7e8"),
}
"""P-PFC, Pulser and Floodgate share red: each is its own paper's proposal, never on one page
with another."""


def _key_of(word: str) -> str | None:
    best = None
    for key in SCHEMES:
        if word == key or (word.startswith(key) and word[len(key)] in "-+_"):
            if best is None or len(key) > len(best):
                best = key
    return best


def scheme_of(label: str) -> str | None:
    """The scheme key a label starts with (``bfc-128`` -> bfc), or that a swept ``scheme=`` or
    ``algorithm=`` part of it names (``scheme=pfc, degree=8`` -> pfc); else None."""
    for part in label.split(", "):
        k, eq, v = part.partition("=")
        if eq and k.strip() in ("scheme", "algorithm"):
            return _key_of(v.strip().lower())
    return _key_of(re.split(r"[ ,]", label.strip(), maxsplit=1)[0].lower())


def scheme_name(label: str) -> str:
    """The label with its scheme written as the paper writes it: ``dcqcn-ns3`` -> ``DCQCN-ns3``,
    ``scheme=capfc, degree=8`` -> ``CaPFC, degree=8``."""
    key = scheme_of(label)
    if key is None:
        return label
    parts = label.split(", ")
    for i, part in enumerate(parts):
        k, eq, v = part.partition("=")
        if eq and k.strip() in ("scheme", "algorithm"):
            parts[i] = SCHEMES[key][0] + v.strip()[len(key):]
            return ", ".join(parts)
    return SCHEMES[key][0] + label.strip()[len(key):]


def _shade(hex_colour: str, k: int) -> str:
    """The k-th shade of a colour (k = 0 is the colour itself): alternately lighter and darker."""
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    f = 0.35 * ((k + 1) // 2) * (1 if k % 2 else -1)
    mix = (lambda c: c + (255 - c) * f) if f > 0 else (lambda c: c * (1 + f))
    return "#" + "".join(f"{max(0, min(255, round(mix(c)))):02x}" for c in (r, g, b))


def colours(labels: Iterable[str]) -> dict[str, str]:
    """A colour per label: its scheme's (shades for a scheme's variants), else a colour map in order."""
    import matplotlib

    labels = list(dict.fromkeys(labels))
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    rest = []
    # the scheme itself first, so that it keeps the pure colour whatever the order of labels
    for lab in sorted(labels, key=lambda s: scheme_name(s) != SCHEMES.get(scheme_of(s) or "", ("",))[0]):
        key = scheme_of(lab)
        if key is None:
            rest.append(lab)
            continue
        k = seen.get(key, 0)
        seen[key] = k + 1
        out[lab] = _shade(SCHEMES[key][1], k)
    cmap = matplotlib.colormaps["viridis"]
    rest = [lab for lab in labels if lab in rest]
    for i, lab in enumerate(rest):
        out[lab] = matplotlib.colors.to_hex(cmap(0.1 + 0.8 * i / max(len(rest) - 1, 1)))
    return {lab: out[lab] for lab in labels}


# ----------------------------------------------------------------------------- units

UNITS = ("B", "KB", "MB", "GB", "ns", "us", "ms", "s", "Gb/s", "Mb/s", "%", "count", "hop BDP", "BDP",
         "senders", "queues")
"""Units an axis label may end with, in parentheses."""
DIMENSIONLESS = ("slowdown", "CDF", "ratio")
"""Quantities that are their own unit: an axis naming one needs no parentheses."""

_SCALES = {
    "B": [("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("B", 1.0)],
    "ns": [("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)],
    "us": [("s", 1e6), ("ms", 1e3), ("us", 1.0)],
    "ms": [("s", 1e3), ("ms", 1.0)],
}


class Axis:
    """An axis quantity in a unit: the factor that scales raw values into the shown unit, and the label."""

    def __init__(self, quantity: str, unit: str, factor: float = 1.0):
        self.quantity, self.unit, self.factor = quantity, unit, factor

    @property
    def label(self) -> str:
        if self.unit in ("", "slowdown") or self.unit in DIMENSIONLESS:
            return self.quantity
        return f"{self.quantity} ({self.unit})"

    def __call__(self, v: float) -> float:
        return v / self.factor


def axis_for(quantity: str, unit: str, values: Iterable[float] = ()) -> Axis:
    """The axis of `quantity` given in `unit`: bytes and times scaled so that the largest value
    reads between 1 and 1000 of the shown unit (KB or MB, us or ms); other units as given."""
    if unit not in _SCALES:
        return Axis(quantity, unit)
    v = [abs(float(x)) for x in values if x is not None and math.isfinite(float(x))]
    top = max(v) if v else 0.0
    for name, f in _SCALES[unit]:
        if top >= f:
            return Axis(quantity, name, f)
    name, f = _SCALES[unit][-1]
    return Axis(quantity, name, f)


def has_unit(label: str) -> bool:
    """Whether an axis label names its unit: ``... (KB)`` for a unit of `UNITS`, or a quantity of
    `DIMENSIONLESS` (``p99 FCT slowdown``, ``CDF``)."""
    m = re.search(r"\(([^()]+)\)\s*$", label)
    if m and m.group(1).strip() in UNITS:
        return True
    return any(re.search(rf"\b{w}\b", label) for w in DIMENSIONLESS)


# ----------------------------------------------------------------------------- order

_NUM = re.compile(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ps|ns|us|ms|s|KB|MB|GB|B|%|BDP|x)?")
_TIME = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_SIZE = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def sort_key(v: object) -> tuple:
    """Order of a swept value: numbers by value, with units (``5us`` < ``40us`` < ``1ms``,
    ``5%`` < ``10%``), text without a number after them, in their order (`sorted` is stable)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v))
    m = _NUM.search(str(v))
    if not m:
        return (1, 0.0)
    x = float(m.group(1)) * _TIME.get(m.group(2) or "", 1.0) * _SIZE.get(m.group(2) or "", 1.0)
    return (0, x)
