"""The core's registries of flow-control schemes and congestion controls, as the scenario schema
uses them.

The core declares every scheme and algorithm once, in its own file (``crates/hopsim-core/src/
registry.rs``), and publishes the list with each entry's default parameters and the units its
fields take (``_native.defaults()["registry"]``). The schema takes from it the names a scenario
may select and, for an entry it has no model of its own for, the model of its table: a scheme
added to the core is selectable here with no Python edit, and its table reaches the core whole.
Hand-written models (ranges, keywords, descriptions) stay for the papers' schemes; the schema's
tests check them against the same declaration (``tests/test_defaults.py``,
``tests/test_scheme_tables.py``).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Optional

from pydantic import Field, create_model

from . import _native


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


def _field_type(value: Any, unit: str | None) -> Any:
    from . import schema as S

    if unit is not None:
        return {"bytes": S.Size, "time": S.Time, "rate": S.Rate}[unit]
    if isinstance(value, bool):
        return S.Bool
    if isinstance(value, int):
        return S.Int
    if isinstance(value, float):
        return S.Float
    if isinstance(value, str):
        return str
    return Optional[Any]


def generated_model(entry: dict[str, Any], kind: str) -> type:
    """The model of an entry's table from its declaration alone: one field per parameter, typed
    by its unit (``"100KB"``, ``"5us"``, ``"100Gbps"``) or by its default's JSON type, with the
    core's default. Ranges are the core's to check (it names the field)."""
    from . import schema as S

    from .units import fmt_rate, fmt_size, fmt_time

    human = {"bytes": fmt_size, "time": fmt_time, "rate": fmt_rate}
    defs = {}
    for name, v in fields(entry, kind).items():
        unit = entry["units"].get(name)
        # a default with a unit is written as a scenario writes it ("100KB"): a bare number is
        # ambiguous there
        default = human[unit](v) if unit is not None and v is not None else v
        defs[name] = (_field_type(v, unit), Field(default=default, description=f"see the core's `{entry['name']}` module"))
    title = "".join(p.title() for p in entry["name"].split("_"))
    model = create_model(title, __base__=S.Strict, **defs)  # type: ignore[call-overload]
    model.__doc__ = entry["about"]
    return model


def tagged_model(name: str, kind: str, tag: str, models: dict[str, type], tag_field: Any, doc: str | None = None,
                 **extra: Any) -> type:
    """A scenario's ``[flow_control]`` or ``[congestion_control]`` model: the tag, `extra` fields,
    and one sub-table per entry with parameters (its model from `models`, or generated)."""
    from . import schema as S

    tables: dict[str, Any] = {}
    for e in entries(kind):
        if e["name"] in extra:
            continue
        m = models.get(e["name"]) or (generated_model(e, kind) if fields(e, kind) else None)
        if m is not None:
            tables[e["name"]] = (m, Field(default_factory=m))
    model = create_model(name, __base__=S.Strict, **{tag: tag_field}, **extra, **tables)  # type: ignore[call-overload]
    if doc:
        model.__doc__ = doc
    return model
