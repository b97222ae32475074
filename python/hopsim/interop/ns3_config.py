"""The key-value config format of the seed simulators' ns-3 programs (HPCC's ``config.txt`` as
``scratch/third.cc`` reads it, and the Floodgate and BFC programs built on it): ``KEY value...``
lines, ``{...}`` comments ignored, a later line overriding an earlier one. One reader for the three
importers, so that a key is read, and a bad value named (``line N: KEY``), the same way in each."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from ..scenario.paths import is_file, resolve
from ..scenario.units import UnitError

__all__ = ["Config", "parse_config"]


class Config(dict[str, list[str]]):
    """KEY -> its value tokens, as `parse_config` read them; `lines` says on which line each key
    was (last) set, so that a message can point at it."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[str, int] = {}


def parse_config(text: str) -> Config:
    """KEY -> its value tokens. Later lines override earlier ones, as in third.cc."""
    out = Config()
    for no, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"\{[^}]*\}", " ", raw).split("#", 1)[0].strip()
        if not line:
            continue
        key, *vals = line.split()
        out[key] = vals
        out.lines[key] = no
    return out


def _key(cfg: dict[str, list[str]], key: str) -> str:
    """``line N: KEY`` (or the bare key when it is not in the file): how messages name a key."""
    no = getattr(cfg, "lines", {}).get(key)
    return f"line {no}: {key}" if no else key


def _one(cfg: dict[str, list[str]], key: str, conv=str, default: Any = None) -> Any:
    if key not in cfg:
        return default
    vals = cfg[key]
    if len(vals) != 1:
        raise ScenarioError(f"{_key(cfg, key)}: expected one value, got {' '.join(vals) or 'none'}")
    try:
        return conv(vals[0])
    except (ValueError, UnitError, ArithmeticError) as e:
        raise ScenarioError(f"{_key(cfg, key)}: cannot read {vals[0]!r} ({e})") from None


def _real(s: str) -> float:
    """A finite number: ``nan`` and ``inf``, which Python's float() takes, are no setting."""
    v = float(s)
    if not math.isfinite(v):
        raise ValueError("not a finite number")
    return v


def _map(cfg: dict[str, list[str]], key: str) -> dict[int, float]:
    vals = cfg[key]
    try:
        n = int(vals[0])
        pairs = vals[1:]
        if len(pairs) != 2 * n:
            raise ValueError(f"says {n} entries but has {len(pairs) / 2:g}")
        m = {int(pairs[2 * i]): _real(pairs[2 * i + 1]) for i in range(n)}
    except (ValueError, IndexError) as e:
        raise ScenarioError(f"{_key(cfg, key)}: expected `n rate1 value1 ... rateN valueN`, got {' '.join(vals)!r} "
                            f"({e})") from None
    bad = [f"{v:g} at {r}" for r, v in m.items() if r <= 0 or v < 0]
    if bad:
        raise ScenarioError(f"{_key(cfg, key)}: rates must be positive and values not negative; got {', '.join(bad)}")
    return m


def _file(cfg: dict[str, list[str]], key: str, config_dir: Path) -> Path:
    """The input file a key names (TOPOLOGY_FILE, FLOW_FILE)."""
    name = _one(cfg, key)
    try:
        return _find(name, config_dir)
    except ScenarioError as e:
        raise ScenarioError(f"{_key(cfg, key)}: {e}") from None


def _find(name: str, config_dir: Path) -> Path:
    p = Path(name)
    if p.is_absolute():
        cands = [p]
    else:
        cands = [config_dir / p, config_dir.parent / p, Path.cwd() / p]
        cands += [d / p.name for d in (config_dir, config_dir.parent)]
    for c in cands:
        if is_file(c):
            return resolve(c)
    raise ScenarioError(f"{name!r} not found (looked at {', '.join(str(c) for c in cands)})")
