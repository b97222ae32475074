"""Each default is defined once: the core's (crates/hopsim-core/src/params/, config.rs and the
scheme modules, which cite their sources) are the reference. The scenario schema writes them
again, in human units, so that a resolved scenario shows every value; these tests check that every
one of them is the core's default of the same name, so a default changed on one side only fails here
instead of silently changing results."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest

from hopsim import _native
from hopsim.scenario import schema as S
from hopsim.scenario.model import _core, scenario_from_dict

CORE = json.loads(_native.defaults())
NET = CORE["net"]


def _untag(d: dict[str, Any], tag: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != tag}


# Where each settings table of a scenario sits among the core's defaults: the layout mapping of
# `scenario._net`. Field names below these are the same on both sides.
TABLES: dict[str, dict[str, Any]] = {
    "buffer": NET["switch"],
    "queues": NET["switch"],
    "ecn": NET["switch"]["ecn"],
    "transport": NET["transport"],
    "record": NET["record"],
    "control": NET["control"],
    "aqm": NET["aqm"],
    "routing": NET["routing"],
    # off by default, so absent from the core's `net`: its defaults are published beside it
    "faults": CORE["faults"],
    # the TCP transport's settings: absent from the core's `net` under the default mode (RoCE)
    "transport.tcp": CORE["tcp"],
    **{f"flow_control.{s}": _untag(c, "scheme") for s, c in CORE["flow_control"].items()},
    # the pfc scheme has no parameters beside its tag: `flow_control.pfc` is the core's `pfc`
    "flow_control.pfc": NET["pfc"],
    **{f"congestion_control.{a}": _untag(c, "algorithm") for a, c in CORE["congestion_control"].items()},
}
# Settings whose layout differs: the core's value of the same choice.
LAYOUT = {
    "seed": NET["seed"],
    "duration": NET["duration"],
    # the core leaves the watchdog's limit out of its JSON while it is automatic (None): "auto"
    "stall_timeout": NET.get("stall_timeout", "auto"),
    # left out of the core's JSON while exact
    "tx_time": NET.get("tx_time", "exact"),
    "flow_control.scheme": NET["flow_control"]["scheme"],
    "congestion_control.algorithm": NET["congestion_control"]["algorithm"],
    # PFC's threshold is one tagged value in the core: {"mode": "dynamic"} or {"mode": "static", xoff, xon}
    "flow_control.pfc.threshold": NET["pfc"]["threshold"]["mode"],
    "flow_control.pfc.xoff": NET["pfc"]["threshold"].get("xoff"),
    "flow_control.pfc.xon": NET["pfc"]["threshold"].get("xon"),
    # keywords the front resolves (scenario._substrate): the schema's default keyword stands for the
    # core's default choice, or for nothing if the core's default changed
    "queues.priority": "modulo" if NET["switch"]["priority"] == [] else NET["switch"]["priority"],
    "queues.scheduler": NET["switch"]["scheduler"]["kind"],
    "queues.strict": NET["switch"]["scheduler"].get("queues", []),
    # 'auto' = lossless exactly when the scheme pauses senders (the default scheme, PFC, does)
    "buffer.lossless": "auto" if NET["switch"]["lossless"] == (NET["flow_control"]["scheme"] != "none") else None,
    # 'auto' = what the congestion control is designed with: nothing under the default (none)
    "aqm.ein": "auto" if NET["aqm"]["ein"] is None and NET["congestion_control"]["algorithm"] != "pulser" else None,
    # recorders off by default: the core leaves them out of its JSON (their own defaults are
    # checked in tests/test_record.py)
    "record.qlen_monitor": NET["record"].get("qlen_monitor"),
    "record.trace": NET["record"].get("trace"),
    "record.latency": NET["record"].get("latency"),
    # rate caps: left out of the core's JSON while unset ('none', no per-host caps)
    "transport.rate_cap": NET["transport"].get("rate_cap"),
    "transport.host_rate_caps": NET["transport"].get("host_rate_caps", []),
    "record.cwnd_flows": NET["record"].get("cwnd_flows", []),
    # RoCE is the core's default exactly when its transport has no `tcp` settings
    "transport.mode": "roce" if NET["transport"].get("tcp") is None else "tcp",
    # left out of the core's JSON at its default (dequeue)
    "ecn.mark_at": NET["switch"].get("ecn_mark_at", "dequeue"),
    # left out of the core's JSON at its default (hash)
    "routing.ack_path": NET["routing"].get("ack_path", "hash"),
    "routing.neighbour_order": NET["routing"].get("neighbour_order", "ascending"),
    "aqm.int": "auto" if NET["aqm"]["int_max_hops"] == 0 and NET["congestion_control"]["algorithm"] != "hpcc" else None,
}
# Scenario settings the core has no field for, and why.
SCHEMA_ONLY: dict[str, str] = {}
# Keys of a core table that hold another scenario table, not a setting.
CORE_LAYOUT = {"buffer": {"ecn"}, "aqm": {"int_max_hops"}}
NOT_SETTINGS = {"name", "description", "topology", "workload"}
MINIMAL = {"topology": {"kind": "star", "hosts": 2},
           "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 1, "size": 1}]}}


def _submodel(f: Any) -> type[S.Strict] | None:
    a = f.annotation
    return a if isinstance(a, type) and issubclass(a, S.Strict) else None


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same JSON type: 1 is not 1.0 or True (results must stay bit-identical)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def compare_defaults() -> tuple[list[str], int]:
    """Walk every settings table of `ScenarioModel`; (every disagreement as a line, how many
    defaults were compared). A core setting the schema lacks is a disagreement too."""
    problems: list[str] = []
    compared = 0
    covered: dict[int, tuple[str, dict[str, Any], set[str]]] = {}  # core table -> its keys the schema has

    def value(p: str, ours: Any, human: Any, theirs: Any) -> None:
        nonlocal compared
        compared += 1
        if not _same(ours, theirs):
            problems.append(f"{p}: schema default {human!r} = {ours!r}, core default {theirs!r}")

    def check(model: type[S.Strict], path: str, core: dict[str, Any] | None) -> None:
        if core is None:
            problems.append(f"{path}: no core defaults for this table (map it in TABLES)")
            return
        seen = covered.setdefault(id(core), (path, core, set(CORE_LAYOUT.get(path, ()))))[2]
        ours = _core(model())  # every default, in the core's units and representation
        human = model().model_dump(mode="json")
        for name, f in model.model_fields.items():
            p = f"{path}.{name}"
            seen.add(name)
            if f.is_required() or p in SCHEMA_ONLY:
                continue
            sub = _submodel(f)
            if sub is not None:
                check(sub, p, TABLES.get(p, core.get(name)))
            elif p in LAYOUT:
                value(p, ours[name], human[name], LAYOUT[p])
            elif name in core:
                value(p, ours[name], human[name], core[name])
            else:
                problems.append(f"{p}: the core has no setting named {name!r}")

    top = S.ScenarioModel.model_validate(MINIMAL)
    for name, f in S.ScenarioModel.model_fields.items():
        sub = _submodel(f)
        if name in NOT_SETTINGS:
            continue
        if sub is None:
            value(name, _core(top)[name], top.model_dump(mode="json")[name], LAYOUT[name])
        elif name in TABLES:
            check(sub, name, TABLES[name])
        else:  # a table of tables: a tag (scheme, algorithm) naming one of its sub-tables
            for sname, sf in sub.model_fields.items():
                p = f"{name}.{sname}"
                ssub = _submodel(sf)
                if ssub is not None:
                    check(ssub, p, TABLES.get(p))
                else:
                    value(p, _core(sub())[sname], sub().model_dump(mode="json")[sname], LAYOUT[p])
    for path, core, seen in covered.values():
        for name in sorted(set(core) - seen):
            problems.append(f"{path}.{name}: a core setting the scenario schema does not have")
    return problems, compared


def test_every_schema_default_is_the_cores():
    problems, compared = compare_defaults()
    assert not problems, "defaults differ between the scenario schema and the core:\n" + "\n".join(problems)
    assert compared > 80  # every table was walked


def test_every_scheme_and_algorithm_has_core_defaults():
    assert set(CORE["flow_control"]) == set(typing.get_args(S.FlowControl.model_fields["scheme"].annotation))
    assert set(CORE["congestion_control"]) == set(S.CC_ALGORITHMS)


def test_a_default_changed_on_one_side_fails(monkeypatch):
    """The comparison notices a one-sided change (here the core's DCQCN g as the schema sees it)."""
    monkeypatch.setitem(TABLES["congestion_control.dcqcn"], "g", 1 / 128)
    problems, _ = compare_defaults()
    assert [p for p in problems if p.startswith("congestion_control.dcqcn.g:")], problems


# A keyword of the schema and the core's representation of the same choice.
KEYWORDS = [
    (S.Buffer, "headroom", "auto", "auto"),
    (S.Transport, "window", "bdp", "bdp"),
    (S.Transport, "window", "off", "off"),
    (S.Ecn, "ref_rate", "none", None),
    (S.Record, "buffer_interval", "off", None),
    (S.Hpcc, "base_rtt", "flow", None),
    (S.Ein, "high_water_mark", "ecn", None),
    (S.Ppfc, "kmax", "ecn", None),
    (S.Ppfc, "pause", "predicted", "predicted"),
    (S.Capfc, "warn", "ecn", None),
]


@pytest.mark.parametrize("model, field, keyword, core", KEYWORDS)
def test_keywords_are_the_cores_choices(model, field, keyword, core):
    assert _core(model(**{field: keyword}))[field] == core
    # the human form keeps the keyword (resolved scenario files)
    assert model(**{field: keyword}).model_dump(mode="json")[field] == keyword


def test_keywords_and_byte_counts_reach_the_core():
    star = {"topology": {"kind": "star", "hosts": 3},
            "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 2, "size": "20KB"}]}}
    for more in (
        {"transport": {"window": "off"}, "ecn": {"ref_rate": "none"}, "record": {"buffer_interval": "off"}},
        {"transport": {"window": "64KB"}, "buffer": {"headroom": "290KB"}},
        {"congestion_control": {"algorithm": "hpcc", "hpcc": {"base_rtt": "flow"}}},
        {"congestion_control": {"algorithm": "pulser", "pulser": {"ein": {"high_water_mark": "ecn"}}}},
    ):
        sc = scenario_from_dict({**star, **more})
        sc.validate()  # the core reads it
    net = sc.core["net"]
    assert net["congestion_control"]["ein"]["high_water_mark"] is None
    net = scenario_from_dict({**star, "transport": {"window": "64KB"}, "buffer": {"headroom": "290KB"}}).core["net"]
    assert (net["transport"]["window"], net["switch"]["headroom"]) == (64_000, 290_000)
    net = scenario_from_dict({**star, "buffer": {"headroom": "floodgate"}}).core["net"]
    assert net["switch"]["headroom"] == "floodgate"  # Floodgate-NS3's 8 x rate x delay, sized per port by the core


def test_ppfc_pause_is_predicted_or_a_fixed_time():
    """`flow_control.ppfc.pause`: Algorithm 3's computed time, or Fig. 10's fixed one (picoseconds
    in the core); a size or time overrides the port's ECN Kmax as P-PFC's gate."""
    core = _core(S.Ppfc(pause="20us", kmax="150KB"))
    assert (core["pause"], core["kmax"]) == (20_000_000, 150_000)
    assert S.Ppfc(pause="20us").model_dump(mode="json")["pause"] == "20us"
    for bad in ("0us", "soon"):
        with pytest.raises(Exception):
            S.Ppfc(pause=bad)
    star = {"topology": {"kind": "star", "hosts": 3},
            "workload": {"kind": "flows", "flows": [{"src": 0, "dst": 2, "size": "20KB"}]}}
    sc = scenario_from_dict({**star, "flow_control": {"scheme": "ppfc", "ppfc": {"pause": "5us"}}})
    sc.validate()  # the core reads it
    assert sc.core["net"]["flow_control"]["pause"] == 5_000_000
