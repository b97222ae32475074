"""The core's registries of flow-control schemes and congestion controls, as the scenario schema
uses them.

The core declares every scheme and algorithm once, in its own file (``crates/hopsim-core/src/
registry.rs``), and publishes the list with each entry's default parameters and the units its
fields take (``_native.defaults()["registry"]``). The schema takes from it the names a scenario
may select and, for an entry it has no model of its own for, the model of its table
(`schema.generated_model`): a scheme added to the core is selectable here with no Python edit, and
its table reaches the core whole.
Hand-written models (ranges, keywords, descriptions) stay for the papers' schemes; the schema's
tests check them against the same declaration (``tests/test_defaults.py``,
``tests/test_scheme_tables.py``).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from .. import _native


@cache
def entries(kind: str) -> list[dict[str, Any]]:
    """The core's entries of `kind` ("flow_control" or "congestion_control"), in its order."""
    return list(json.loads(_native.defaults())["registry"][kind])


def names(kind: str) -> tuple[str, ...]:
    return tuple(e["name"] for e in entries(kind))


def tag_of(kind: str) -> str:
    return {"flow_control": "scheme", "congestion_control": "algorithm"}[kind]


def fields(entry: dict[str, Any], kind: str) -> dict[str, Any]:
    """An entry's parameters with their defaults in core units (its tag left out)."""
    return {k: v for k, v in entry["defaults"].items() if k != tag_of(kind)}


def with_table(kind: str) -> tuple[str, ...]:
    """The entries that have parameters: a scenario's ``[<kind>.<name>]`` table goes to the core."""
    return tuple(e["name"] for e in entries(kind) if fields(e, kind))
