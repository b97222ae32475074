"""Human units in scenario files, and back.

The core works in integers: bits per second, picoseconds, bytes. Scenario files say ``100Gbps``,
``1us``, ``12MB``, ``60%``. Parsing is exact decimal arithmetic (``0.001ms`` is exactly 1,000,000
ps); a value finer than the core's unit (1 ps, 1 bit/s, 1 byte) is an error rather than rounded.
Each parser raises :class:`UnitError` whose message says what forms are allowed; the schema puts
the field name in front.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext

__all__ = [
    "UnitError",
    "shown",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_fraction",
    "fmt_rate",
    "fmt_time",
    "fmt_size",
    "RATE_FORMS",
    "TIME_FORMS",
    "SIZE_FORMS",
]


class UnitError(ValueError):
    """A value with a missing or wrong unit, or out of the unit's range."""


RATE_UNITS = {
    "bps": 1,
    "kbps": 10**3,
    "mbps": 10**6,
    "gbps": 10**9,
    "tbps": 10**12,
    # the HPCC simulator's DataRate spelling
    "b/s": 1,
    "kb/s": 10**3,
    "mb/s": 10**6,
    "gb/s": 10**9,
    "tb/s": 10**12,
}
TIME_UNITS = {"ps": 1, "ns": 10**3, "us": 10**6, "µs": 10**6, "ms": 10**9, "s": 10**12}
SIZE_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}

RATE_FORMS = "a number with a unit: bps, Kbps, Mbps, Gbps, Tbps (e.g. '100Gbps', '2.5Gbps')"
TIME_FORMS = "a number with a unit: ps, ns, us, ms, s (e.g. '1us', '0.5ms')"
SIZE_FORMS = (
    "a whole number of bytes or a number with a unit: B, KB, MB, GB (powers of 1000) or "
    "KiB, MiB, GiB (powers of 1024) (e.g. '12MB', '4KiB', 1500)"
)
FRACTION_FORMS = "a percentage such as '60%' or a number in [0, 1] such as 0.6"

def shown(value: object, limit: int = 60) -> str:
    """A value as messages show it: its repr, or the start of it when long (a list of thousands
    of entries would make a message of thousands of characters)."""
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 5] + " ..." + r[-1]


_NUM_UNIT = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµ/%]*)\s*$")


def _split(value: object, forms: str) -> tuple[Decimal, str]:
    if isinstance(value, bool) or not isinstance(value, str):
        raise UnitError(f"expected {forms}, got {shown(value)}")
    m = _NUM_UNIT.match(value)
    if not m:
        raise UnitError(f"expected {forms}, got {shown(value)}")
    try:
        num = Decimal(m.group(1))
    except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
        raise UnitError(f"expected {forms}, got {shown(value)}") from None
    return num, m.group(2)


U64_MAX = 2**64 - 1
"""The core keeps rates, times and sizes in 64-bit unsigned integers."""


def _too_large(value: object, unit_name: str) -> UnitError:
    return UnitError(f"{shown(value)} is too large: the simulator holds at most 2^64 - 1 (in {unit_name}): "
                     f"times up to about 213 days, sizes and rates up to about 1.8e19")


EXPONENT_LIMIT = 40
"""The largest power of ten, up or down, a unit value may be written with: 1e40 of the smallest
unit is past 2^64 - 1, and 1e-40 of the largest is below 1 ps, 1 byte or 1 bit/s, so nothing
beyond it can be a value; refused before any arithmetic, whose context would overflow (an
exception) or round the number to 0 (a silent zero) at such exponents."""


def _scaled(num: Decimal, scale: int, value: object, unit_name: str) -> int:
    """`num` units of `scale` in the core's unit, exactly, or a UnitError naming why not."""
    if num != 0 and num.adjusted() > EXPONENT_LIMIT:
        raise _too_large(value, unit_name)
    if num != 0 and num.adjusted() < -EXPONENT_LIMIT:
        raise _too_fine(value, unit_name)
    with localcontext() as ctx:  # every digit kept: the product is exact, never rounded
        ctx.prec = len(num.as_tuple().digits) + 2 * EXPONENT_LIMIT
        exact = num * scale
    if exact != exact.to_integral_value():
        raise _too_fine(value, unit_name)
    if exact > U64_MAX:
        raise _too_large(value, unit_name)
    return int(exact)


def _too_fine(value: object, unit_name: str) -> UnitError:
    return UnitError(f"{shown(value)} is finer than 1 {unit_name}, the smallest step the simulator has")


def parse_rate(value: object) -> int:
    """``'100Gbps'`` -> 100_000_000_000 (bits per second)."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise UnitError(f"a bare number is ambiguous for a rate; expected {RATE_FORMS}, got {shown(value)}")
    num, unit = _split(value, RATE_FORMS)
    u = unit.lower()
    if u in ("g", "m", "k", "t"):
        u += "bps"
    if u not in RATE_UNITS:
        raise UnitError(f"unknown rate unit {unit!r} in {shown(value)}; expected {RATE_FORMS}")
    return _scaled(num, RATE_UNITS[u], value, "bit/s")


def parse_time(value: object) -> int:
    """``'1us'`` -> 1_000_000 (picoseconds)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise UnitError(f"a bare number is ambiguous for a time; expected {TIME_FORMS}, got {shown(value)}")
    num, unit = _split(value, TIME_FORMS)
    u = unit.lower() if unit != "µs" else unit
    if u not in TIME_UNITS:
        raise UnitError(f"unknown time unit {unit!r} in {shown(value)}; expected {TIME_FORMS}")
    return _scaled(num, TIME_UNITS[u], value, "ps")


def parse_size(value: object) -> int:
    """``'12MB'`` -> 12_000_000, ``'4KiB'`` -> 4096, ``1500`` -> 1500 (bytes)."""
    if isinstance(value, bool):
        raise UnitError(f"expected {SIZE_FORMS}, got {shown(value)}")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"a size cannot be negative, got {shown(value)}")
        if value > U64_MAX:
            raise _too_large(value, "byte")
        return value
    num, unit = _split(value, SIZE_FORMS)
    if unit and unit[-1] == "b":
        raise UnitError(f"{shown(value)}: a lowercase 'b' means bits; sizes are bytes: use {unit[:-1] + 'B'!r}")
    u = unit.lower()
    if u == "":
        u = "b"
    if u not in SIZE_UNITS:
        raise UnitError(f"unknown size unit {unit!r} in {shown(value)}; expected {SIZE_FORMS}")
    return _scaled(num, SIZE_UNITS[u], value, "byte")


def parse_fraction(value: object) -> float:
    """``'60%'`` -> 0.6; ``0.6`` -> 0.6. Range checks are the schema's."""
    if isinstance(value, bool):
        raise UnitError(f"expected {FRACTION_FORMS}, got {shown(value)}")
    try:
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            m = _NUM_UNIT.match(value)
            if m and m.group(2) in ("%", ""):
                num = Decimal(m.group(1))
                if num != 0 and num.adjusted() > EXPONENT_LIMIT:
                    raise OverflowError
                if num != 0 and num.adjusted() < -EXPONENT_LIMIT:
                    raise UnitError(f"{shown(value)} is too small to tell from 0; write 0 if 0 is meant")
                return float(num / 100 if m.group(2) else num)
    except OverflowError:  # an integer of hundreds of digits, an exponent of millions
        raise UnitError(f"{shown(value)} is too large for a fraction; expected {FRACTION_FORMS}") from None
    raise UnitError(f"expected {FRACTION_FORMS}, got {shown(value)}")


def _fmt(v: int, units: list[tuple[str, int]]) -> str:
    for name, scale in units:
        if v != 0 and v % scale == 0:
            return f"{v // scale}{name}"
    # Not a whole number of any larger unit: write it with a decimal point in the largest unit
    # that keeps it >= 1, exactly (Decimal keeps every digit).
    for name, scale in units:
        if v >= scale:
            d = (Decimal(v) / scale).normalize()
            return f"{d:f}{name}"
    return f"{v}{units[-1][0]}"


def fmt_rate(bps: int) -> str:
    return _fmt(bps, [("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("Kbps", 10**3), ("bps", 1)])


def fmt_time(ps: int) -> str:
    if ps == 0:
        return "0us"
    return _fmt(ps, [("s", 10**12), ("ms", 10**9), ("us", 10**6), ("ns", 10**3), ("ps", 1)])


def fmt_size(b: int) -> str:
    if b == 0:
        return "0B"
    for name, scale in [("GB", 10**9), ("MB", 10**6), ("KB", 10**3)]:
        if b % scale == 0:
            return f"{b // scale}{name}"
    for name, scale in [("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)]:
        if b % scale == 0:
            return f"{b // scale}{name}"
    return f"{b}B"
