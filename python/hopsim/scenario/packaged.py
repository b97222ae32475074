"""The data the package carries, read through `importlib.resources`: the workload CDFs
(``data/workloads``), the example scenarios and sweeps (``data/scenarios``) and the papers'
scenarios and sweeps (``data/scenarios/papers``).

Why inside the package: an installed hopsim (a wheel in a fresh virtual environment, used from
an empty folder) must find a bare CDF name, ``hopsim reproduce PAPER`` and the examples without
the repository. The files live once, in ``python/hopsim/data``: a wheel, an sdist and an
editable install all take them from there, with nothing copied at build time that could go stale
(the repository's top-level ``workloads`` and ``scenarios`` are links to them, for the paths the
docs and tests use).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["data_dir", "workloads_dir", "papers_dir", "examples", "example", "summary"]


def data_dir() -> Path:
    """The package's data folder. A package installed as files (a wheel, an editable install:
    every way hopsim installs) gives a real path, which the core's readers need."""
    return Path(str(files("hopsim").joinpath("data")))


def workloads_dir() -> Path:
    """Where a bare CDF name (``cdf = "WebSearch_HPCC.txt"``) is found after the scenario's own
    folders."""
    return data_dir() / "workloads"


def papers_dir() -> Path:
    """The papers' folders (``hopsim reproduce PAPER``)."""
    return data_dir() / "scenarios" / "papers"


def examples() -> dict[str, Path]:
    """The example scenarios that run from any folder, by name (file name without ``.toml``):
    those whose inputs the package carries (a bare CDF name), not those that read a topology or
    flow file of the repository's (the benchmark's)."""
    import tomllib

    out = {}
    for f in sorted((data_dir() / "scenarios").glob("*.toml")):
        raw = tomllib.loads(f.read_text())
        if not any(isinstance(raw.get(t), dict) and "file" in raw[t] for t in ("topology", "workload")):
            out[f.stem] = f
    return out


def summary(path: Path) -> str:
    """The first sentence of an example's leading comment: what it is."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(lines).split(". ")[0]
    return text if len(text) <= 100 else text[:100].rsplit(" ", 1)[0] + " ..."


def example(name: str) -> Path:
    """The example `name` (with or without ``.toml``); ScenarioError listing the names otherwise."""
    from ..errors import ScenarioError

    known = examples()
    key = name[:-5] if name.endswith(".toml") else name
    if key not in known:
        raise ScenarioError(f"NAME: no example {name!r}; allowed: {', '.join(known)}")
    return known[key]
