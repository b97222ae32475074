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
import zlib
from typing import Iterable

__all__ = ["num", "SCHEMES", "VARIANTS", "scheme_of", "scheme_name", "variant_of", "colours", "marker_of", "Axis", "axis_for", "has_unit", "sort_key",
           "UNITS", "DIMENSIONLESS"]

# key -> (name in the papers, colour, marker). Colours: matplotlib's tab10/tab20, fixed per scheme.
SCHEMES: dict[str, tuple[str, str, str]] = {
    "pfc": ("PFC", "#7f7f7f", "s"),
    "ppfc": ("P-PFC", "#d62728", "o"),
    "capfc": ("CaPFC", "#9467bd", "^"),
    "dcqcn": ("DCQCN", "#1f77b4", "s"),
    "timely": ("TIMELY", "#bcbd22", "v"),
    "hpcc": ("HPCC", "#2ca02c", "^"),
    "hpcc+sfq": ("HPCC + SFQ", "#98df8a", "<"),
    "dctcp": ("DCTCP", "#d62728", "D"),
    "ictcp": ("ICTCP", "#1f77b4", "s"),
    "pulser": ("Pulser", "#2ca02c", "o"),
    "bfc": ("BFC", "#e377c2", "o"),
    "bfc+incastlabel": ("BFC + IncastLabel", "#8c564b", "P"),
    "flowsail": ("FlowSail", "#17becf", "*"),
    "floodgate": ("Floodgate", "#d62728", "o"),
    "dstpause": ("DstPause", "#ff7f0e", "v"),
    "pfc_tag": ("PFC w/ tag", "#c7c7c7", "X"),
    "ideal-fq": ("Ideal-FQ", "#000000", "x"),
    "ideal": ("Ideal", "#000000", "x"),
    "none": ("lossy", "#aec7e8", "."),
}
"""P-PFC, Floodgate and DCTCP share red, each as its paper draws it (Pulser's paper draws DCTCP
red and Pulser green); P-PFC and Floodgate are never on one page with DCTCP, nor Pulser with HPCC."""

VARIANTS: dict[str, str] = {
    "bfc-32": "BFC 32",
    "bfc-128": "BFC 128",
    "bfc-8q": "BFC-8Q",
    "bfc-32q": "BFC-32Q",
    "flowsail-8q": "FlowSail-8Q",
}
"""Variants of a scheme (a label's first word) by the name their paper's legend gives them; any
other variant is the scheme's name with the label's suffix (``dcqcn-ns3`` -> DCQCN-ns3)."""


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
            parts[i] = _variant_name(v.strip(), key)
            return ", ".join(parts)
    return _variant_name(label.strip(), key)


def _variant_name(text: str, key: str) -> str:
    first = re.split(r"[ ,]", text, maxsplit=1)[0]
    name = VARIANTS.get(first.lower()) or SCHEMES[key][0] + first[len(key):]
    return name + text[len(first):]


def variant_of(label: str) -> str | None:
    """The scheme variant a label names: its first word when that starts with a scheme
    (``bfc-32, load=0.5`` -> bfc-32, ``pfc 6:1`` -> pfc), else the swept scheme's value; None for
    a label of no scheme."""
    key = scheme_of(label)
    if key is None:
        return None
    for part in label.split(", "):
        k, eq, v = part.partition("=")
        if eq and k.strip() in ("scheme", "algorithm"):
            return v.strip().lower()
    return re.split(r"[ ,]", label.strip(), maxsplit=1)[0].lower()


def _shade(hex_colour: str, k: int) -> str:
    """The k-th shade of a colour (k = 0 is the colour itself): alternately lighter and darker."""
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    f = 0.22 * ((k + 1) // 2) * (1 if k % 2 else -1)
    if max(r, g, b) < 0x40:  # black (the ideal schemes) has no darker shade: greys, lighter each step
        f = 0.18 * k
    mix = (lambda c: c + (255 - c) * f) if f > 0 else (lambda c: c * (1 + f))
    return "#" + "".join(f"{max(0, min(255, round(mix(c)))):02x}" for c in (r, g, b))


def _variant_shade(variant: str, key: str) -> int:
    """Which shade a variant of a scheme gets: fixed by its name (the same on every page), never 0."""
    if variant == key:
        return 0
    named = [v for v in VARIANTS if v.startswith(key)]
    return 1 + (named.index(variant) if variant in named else zlib.crc32(variant.encode()) % 6)


def colour_of(label: str) -> str | None:
    """A label's colour wherever it is drawn: its scheme's, or a fixed shade of it for a variant
    (``bfc-128``); None for a label of no scheme."""
    v = variant_of(label)
    if v is None:
        return None
    key = scheme_of(label)
    assert key is not None
    return _shade(SCHEMES[key][1], _variant_shade(v, key))


def marker_of(label: str, i: int = 0) -> str:
    """A label's marker: its scheme's (the same on every page); the i-th of a fixed cycle for a
    label of no scheme."""
    key = scheme_of(label)
    if key is None:
        return "os^Dv<>P*X"[i % 10]
    return SCHEMES[key][2]


def colours(labels: Iterable[str]) -> dict[str, str]:
    """A colour per label: its scheme's (fixed shades for a scheme's variants), else a colour map
    in the labels' order."""
    import matplotlib

    labels = list(dict.fromkeys(labels))
    out = {lab: c for lab in labels if (c := colour_of(lab)) is not None}
    rest = [lab for lab in labels if lab not in out]
    cmap = matplotlib.colormaps["viridis"]
    for i, lab in enumerate(rest):
        out[lab] = matplotlib.colors.to_hex(cmap(0.1 + 0.8 * i / max(len(rest) - 1, 1)))
    return {lab: out[lab] for lab in labels}


# ----------------------------------------------------------------------------- units

def num(v: float | None, digits: int = 3) -> str:
    """A number for people: `digits` significant digits, thousands separated, never an exponent
    (1,002,000 not 1.002e+06; 570 not 5.7e+02; 0.0012)."""
    if v is None or not math.isfinite(float(v)):
        return "–"
    v = float(v)
    if v == 0:
        return "0"
    places = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    text = f"{v:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


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
