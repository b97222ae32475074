"""Every flow-control scheme's and congestion control's table reaches the core whole.

The core declares its schemes and algorithms (``crates/hopsim-core/src/registry.rs``); the
schema's models of their tables are written by hand or generated from that declaration
(``hopsim.scenario.registry``). These tests set every parameter of every table, one at a time, to a value
other than its default, in a scenario as a user writes it, and check that the core read exactly
that value (``_native.read_tables`` writes back what it read): a field the front forgets to hand
over comes back as the core's default and fails here, instead of a run silently using the default
while its run folder shows the value the user wrote.
"""

from __future__ import annotations

import copy
import re
import typing
from decimal import Decimal
from typing import Any

import pytest

from hopsim.scenario import registry
from hopsim.scenario import schema as S
from hopsim.scenario.model import _core, read_tables, scenario_from_dict

MINIMAL = {"topology": {"kind": "star", "hosts": 2},
           "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 1, "size": 1}]}}
KINDS = ("flow_control", "congestion_control")
_NUMBER_UNIT = re.compile(r"^(\d+(?:\.\d+)?)\s*([A-Za-zµ/%]+)$")


def _models(kind: str) -> dict[str, type[S.Strict]]:
    """Each entry with a table, and the model of its table in the schema."""
    outer = S.FlowControl if kind == "flow_control" else S.CongestionControl
    return {n: outer.model_fields[n].annotation for n in registry.with_table(kind)}  # type: ignore[misc]


def _literals(annotation: Any) -> list[Any]:
    """The keywords an annotation allows (Literal arguments, through Annotated and Union)."""
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    out: list[Any] = []
    for a in typing.get_args(annotation):
        if typing.get_origin(a) is typing.Literal:
            out.extend(typing.get_args(a))
        else:
            out.extend(_literals(a))
    return out


def _candidates(value: Any, annotation: Any) -> list[Any]:
    """Values other than `value`, in a scenario's form, to try for a field."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value * 2, value + 1, value - 1, 1]
    if isinstance(value, float):
        return [value * 1.5, value * 0.5, value + 0.25, 0.5, 0.25]
    keywords = [k for k in _literals(annotation) if k != value]
    generic = ["1us", "10KB", "1Gbps", 5, 0.5, True]
    if isinstance(value, str):
        m = _NUMBER_UNIT.match(value)
        if m:
            n = Decimal(m.group(1))
            return [f"{n * 2}{m.group(2)}", f"{n / 2}{m.group(2)}", f"{n + 1}{m.group(2)}"]
        return keywords + generic
    if value is None:
        return keywords + generic
    return []


def _changes(model: type[S.Strict]) -> tuple[list[tuple[str, Any]], list[str]]:
    """For each field of `model`, a value the model accepts and the core reads differently from
    the default: (field path, value) pairs, nested tables as dotted paths; and the fields no
    candidate changed."""
    found: list[tuple[str, Any]] = []
    missed: list[str] = []
    base_core = _core(model())
    human = model().model_dump(mode="json")
    for name, f in model.model_fields.items():
        sub = f.annotation if isinstance(f.annotation, type) and issubclass(f.annotation, S.Strict) else None
        if sub is not None:
            inner, inner_missed = _changes(sub)
            found += [(f"{name}.{p}", v) for p, v in inner]
            missed += [f"{name}.{p}" for p in inner_missed]
            continue
        for cand in _candidates(human[name], f.annotation):
            try:
                changed = _core(model.model_validate({name: cand}))
            except Exception:
                continue
            if changed[name] != base_core[name]:
                found.append((name, cand))
                break
        else:
            missed.append(name)
    return found, missed


def _nest(path: str, value: Any) -> dict[str, Any]:
    head, _, rest = path.partition(".")
    return {head: _nest(rest, value) if rest else value}


def _get(d: dict[str, Any], path: str) -> Any:
    for p in path.split("."):
        d = d[p]
    return d


def round_trip(kind: str, name: str, path: str, value: Any) -> list[str]:
    """Problems with one parameter set in a scenario: what the front hands the core and what the
    core read back must both be the value the scenario gave (in core units)."""
    tag = registry.tag_of(kind)
    raw = copy.deepcopy(MINIMAL)
    raw[kind] = {tag: name, name: _nest(path, value)}
    sc = scenario_from_dict(raw)
    model = getattr(getattr(sc.model, kind), name)
    expected = _get(_core(model), path)
    handed = sc.core["net"][kind]
    read = read_tables(sc.core["net"])[kind]
    problems = []
    try:
        got = _get(handed, path)
    except KeyError:
        got = "(not handed over)"
    if got != expected:
        problems.append(f"{kind}.{name}.{path} = {value!r}: the front handed {got!r}, not {expected!r}")
    if _get(read, path) != expected:
        problems.append(f"{kind}.{name}.{path} = {value!r}: the core read {_get(read, path)!r}, not {expected!r}")
    for k, v in handed.items():
        if read.get(k) != v:
            problems.append(f"{kind}.{name}.{k}: handed {v!r}, the core read {read.get(k)!r}")
    return problems


def _cases() -> list[tuple[str, str, str, Any]]:
    cases = []
    for kind in KINDS:
        for name, model in _models(kind).items():
            found, _ = _changes(model)
            cases += [(kind, name, p, v) for p, v in found]
    return cases


CASES = _cases()


@pytest.mark.parametrize("kind, name, path, value", CASES, ids=[f"{c[1]}.{c[2]}" for c in CASES])
def test_every_parameter_reaches_the_core(kind, name, path, value):
    assert not round_trip(kind, name, path, value)


def test_every_parameter_of_every_table_is_covered():
    """Each field of each table has a case above (a field no value could change is named)."""
    missed = {f"{kind}.{name}": _changes(model)[1] for kind in KINDS for name, model in _models(kind).items()}
    missed = {k: v for k, v in missed.items() if v}
    assert not missed, f"fields without a non-default value to send: {missed}"
    assert {(c[0], c[1]) for c in CASES} == {(k, n) for k in KINDS for n in registry.with_table(k)}


def test_a_field_left_out_of_the_hand_over_fails(monkeypatch):
    """The check notices a front that drops one field on the way to the core (here the example
    scheme's `k`), as the scheme lists of old did for schemes they did not name."""
    import hopsim.scenario.model as sc_mod

    real = sc_mod._scheme_core

    def dropping_k(fc: Any) -> dict[str, Any]:
        return {k: v for k, v in real(fc).items() if k != "k"}

    assert not round_trip("flow_control", "tqp", "k", "20KB")
    monkeypatch.setattr(sc_mod, "_scheme_core", dropping_k)
    problems = round_trip("flow_control", "tqp", "k", "20KB")
    assert any("the front handed '(not handed over)'" in p for p in problems), problems
    assert any("the core read 100000, not 20000" in p for p in problems), problems


def test_schema_tables_have_exactly_the_cores_fields():
    """A model written by hand (ranges, keywords, descriptions) has the fields the core declares,
    no more, no fewer: a drift between them fails here."""
    for kind in KINDS:
        for e in registry.entries(kind):
            core = set(registry.fields(e, kind))
            outer = S.FlowControl if kind == "flow_control" else S.CongestionControl
            f = outer.model_fields.get(e["name"])
            ours = set(f.annotation.model_fields) if f is not None and e["name"] != "pfc" else set()
            assert ours == core, f"{kind}.{e['name']}: schema {sorted(ours)}, core {sorted(core)}"


def test_the_selectable_names_are_the_cores():
    assert set(typing.get_args(S.FlowControl.model_fields["scheme"].annotation)) == set(registry.names("flow_control"))
    assert set(typing.get_args(S.CongestionControl.model_fields["algorithm"].annotation)) == set(
        registry.names("congestion_control"))
    assert {"tqp", "aimd"} <= set(registry.names("flow_control")) | set(registry.names("congestion_control"))


def test_a_generated_table_takes_units():
    """The example scheme has no model written in Python: its table's model comes from the core's
    declaration, with the unit the core gives `k`."""
    assert "tqp" not in S.FC_MODELS
    raw = {**MINIMAL, "flow_control": {"scheme": "tqp", "tqp": {"k": "20KB"}},
           "congestion_control": {"algorithm": "aimd", "aimd": {"ai": "2Gbps", "beta": 0.25}}}
    net = scenario_from_dict(raw).core["net"]
    assert net["flow_control"] == {"scheme": "tqp", "k": 20_000}
    assert net["congestion_control"] == {"algorithm": "aimd", "ai": 2_000_000_000, "beta": 0.25, "min_rate": 100_000_000}
