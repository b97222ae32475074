"""Scenario files: TOML -> validated model -> the core's JSON, and the resolved scenario's hash.

``load_scenario(path)`` reads and validates a file; ``Scenario.core_json`` is exactly what
``hopsim._native.run`` receives (every default written out, file contents inlined), and
``Scenario.hash`` is the SHA-256 of it in canonical form: two runs with the same hash ran the same
thing, whatever the files were called.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import tomli_w
from pydantic import ValidationError

from . import schema as S
from ..errors import ScenarioError
from .paths import read_text, resolve
from .resources import AUTO, SPILL_ROWS, native_limit
from .units import parse_rate, shown

__all__ = ["Scenario", "load_scenario", "scenario_from_dict", "apply_overrides", "format_validation_error"]

_UNION_TAGS = {"topology": set(S.TOPOLOGY_KINDS), "workload": set(S.WORKLOAD_KINDS)}


def _loc_str(loc: tuple[Any, ...]) -> str:
    parts = list(loc)
    if len(parts) >= 2 and parts[0] in _UNION_TAGS and parts[1] in _UNION_TAGS[parts[0]]:
        del parts[1]
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _is_member(p):
            continue  # a union member's name, not a key
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _is_member(p: Any) -> bool:
    """Whether a part of an error's location names a member of a union (``literal['modulo']``)."""
    return isinstance(p, str) and ("[" in p or p in ("int", "str"))


_WANTS = re.compile(r"^(?:Input should be|expected) (.*?)(?:,? got .*)?$", re.S)


def _one_per_union(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A value that fits no member of a union (``queues.priority``: 'modulo' or a list of
    priorities) fails once per member, which reads as two contradicting problems. Keep the errors
    of the members the value got inside (a list with a bad item: the user wrote that member), or
    else one error saying what each member wants."""
    out: list[Any] = []
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for err in errors:
        i = next((k for k, p in enumerate(err["loc"]) if _is_member(p)), None)
        if i is None:
            out.append(err)
            continue
        key = tuple(err["loc"][:i])
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(err)
    merged: list[dict[str, Any]] = []
    for item in out:
        if isinstance(item, dict):
            merged.append(item)
            continue
        group = groups[item]
        inside = [e for e in group if len(e["loc"]) > len(item) + 1]
        if inside:
            merged += inside
            continue
        wants = [m.group(1) if (m := _WANTS.match(e["msg"])) else e["msg"] for e in group]
        merged.append({"loc": item, "type": "union", "msg": "expected " + " or ".join(wants),
                       "input": group[0].get("input")})
    return merged


def format_validation_error(e: ValidationError) -> list[str]:
    """One line per problem: ``field.path: message``."""
    lines = []
    for err in _one_per_union(e.errors(include_url=False)):
        loc = _loc_str(err["loc"])
        t = err["type"]
        msg = err["msg"]
        if t == "missing":
            msg = "missing: this key is required"
        elif t == "union_tag_not_found":
            section = str(err["loc"][0]) if err["loc"] else ""
            allowed = ", ".join(sorted(_UNION_TAGS.get(section, ())))
            msg = f"missing 'kind'; allowed kinds: {allowed}"
        elif t == "union_tag_invalid":
            section = str(err["loc"][0]) if err["loc"] else ""
            allowed = ", ".join(sorted(_UNION_TAGS.get(section, ())))
            msg = f"unknown kind {err['input'].get('kind')!r}; allowed kinds: {allowed}"
        elif t in ("literal_error", "greater_than", "greater_than_equal", "less_than", "less_than_equal",
                   "int_parsing", "int_type", "float_parsing", "float_type", "bool_parsing", "bool_type",
                   "string_type", "list_type", "too_short", "tuple_type", "dict_type", "model_type",
                   "int_from_float", "union"):
            msg = f"{msg}; got {shown(err['input'], 80)}"
        if not err["loc"] and re.match(r"^[a-z_]+(\.[a-z_]+)+: ", msg):
            # a check across tables names its field itself (transport.mode)
            lines.append(msg)
            continue
        lines.append(f"{loc}: {msg}")
    return lines


def apply_overrides(raw: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `raw` with dotted keys set (``{"flow_control.scheme": "ppfc"}``)."""
    out = copy.deepcopy(dict(raw))
    for key, value in overrides.items():
        parts = key.split(".")
        d = out
        for p in parts[:-1]:
            nxt = d.get(p)
            if nxt is None:
                nxt = d[p] = {}
            elif not isinstance(nxt, dict):
                raise ScenarioError(f"{key}: cannot set it, {p!r} is a value, not a table")
            d = nxt
        d[parts[-1]] = copy.deepcopy(value)
    return out


@dataclass
class Scenario:
    """A validated scenario. `raw` is the file's table (overrides applied); `model` its
    validated form; `base_dir` where relative file names were resolved from."""

    model: S.ScenarioModel
    raw: dict[str, Any]
    base_dir: Path
    source: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Tables given for a scheme or algorithm not selected (`unselected_tables`), and what
    `validate` found the input files' readers skipping (text after an HPCC topology's or flow
    file's declared counts), one line each naming the table or the file."""

    # ---------------------------------------------------------------- conversions

    @cached_property
    def core(self) -> dict[str, Any]:
        return to_core(self.model)

    @cached_property
    def core_json(self) -> str:
        return json.dumps(self.core, sort_keys=True, separators=(",", ":"))

    @cached_property
    def hash(self) -> str:
        return hashlib.sha256(self.core_json.encode()).hexdigest()

    @property
    def name(self) -> str:
        if self.model.name:
            return self.model.name
        return self.source.stem if self.source else "scenario"

    def resolved_dict(self) -> dict[str, Any]:
        """The scenario with every default written out, in human units (re-loadable)."""
        return S.dump(self.model, mode="json", exclude_none=True)

    def resolved_toml(self) -> str:
        head = (
            f"# hopsim resolved scenario: every default written out; file names are absolute.\n"
            f"# sha256 of the core JSON (scenario.json): {self.hash}\n"
        )
        if self.source:
            head += f"# from: {self.source}\n"
        if self.overrides:
            head += f"# overrides: {json.dumps(self.overrides, sort_keys=True)}\n"
        return head + tomli_w.dumps(self.resolved_dict())

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Scenario":
        merged = {**self.overrides, **overrides}
        return scenario_from_dict(apply_overrides(self.raw, overrides), self.base_dir, self.source, merged)

    def validate(self, max_memory: Any = AUTO, spooled: bool = True) -> list[str]:
        """Also build the network in the core (topology connectivity, routes, flows); returns
        (and keeps in `warnings`) what the input files' readers skipped. First the core's memory
        estimate is checked against `max_memory` (see `hopsim.scenario.resources`: a size, ``"off"``, or
        the default, the memory available), so a scenario too large is refused unbuilt; `spooled`:
        for a run that spools its samples to disk (`hopsim.run`'s default; a sweep's runs do not)."""
        from .. import _native

        limit = native_limit(max_memory)
        try:
            found = _native.validate(self.core_json, spill_rows=SPILL_ROWS if spooled else None, **limit)
        except ValueError as e:
            raise ScenarioError(core_error_lines(str(e), self.model), source=str(self.source) if self.source else None) from None
        self.warnings = unselected_tables(self.model, self.raw) + [line for w in found or [] for line in core_error_lines(w, self.model)]
        return self.warnings


def core_error_lines(msg: str, model: S.ScenarioModel | None = None) -> list[str]:
    """The core's error message, with the section it is about in front; errors inside an HPCC
    topology or flow file or a CDF (the core says ``topology.file: line N``) name that file."""
    if model is not None:
        for section, table, key in (("topology", model.topology, "file"), ("workload", model.workload, "file"),
                                    ("workload", model.workload, "cdf")):
            field = f"{section}.{key}"
            if msg.startswith(f"{field}: ") and getattr(table, key, None):
                return [f"{field} {getattr(table, key)}: " + msg[len(field) + 2:]]
        if msg.startswith("mean flow size") and getattr(model.workload, "cdf", None):
            return [f"workload.cdf {model.workload.cdf}: {msg}"]
        if isinstance(model.workload, S.HpccFlowsWorkload) and msg.startswith("flow "):
            line = _flow_line(model.workload.file, msg)
            if line:
                return [f"workload.file {model.workload.file}: line {line}: {msg}"]
    for section in ("topology", "workload", "scenario", "flow_control", "congestion_control", "buffer", "record",
                    "memory", "faults", *S.CC_ALGORITHMS):
        if msg.startswith(section):
            return [msg]
    if msg.startswith(("flow ", "incast", "need at least", "load", "lognormal", "long-lived", "host ")):
        return ["workload: " + msg]
    return ["scenario: " + msg]


_FLOW_FAULTS = [
    (re.compile(r"src (\d+) and dst (\d+) must be host node ids"), lambda m, f: (f[0], f[1]) == m.groups()),
    (re.compile(r"src and dst are the same host (\d+)"), lambda m, f: f[0] == f[1] == m.group(1)),
    (re.compile(r"no route from (\d+) to (\d+)"), lambda m, f: (f[0], f[1]) == m.groups()),
    (re.compile(r"size must be at least 1 byte"), lambda m, f: f[4].lstrip("0") == ""),
]
"""What the core says about a flow it has numbered (in start-time order, not the file's) and how
to tell the flow file's line it came from."""


def _flow_line(path: str, msg: str) -> int | None:
    """The line of an HPCC flow file that a core message about ``flow N`` is about (the first
    counted flow line with the fields the message names), or None."""
    for pattern, fits in _FLOW_FAULTS:
        m = pattern.search(msg)
        if not m:
            continue
        try:
            text = read_text(path)
        except ScenarioError:
            return None
        lines = [(no, l.split()) for no, l in enumerate(text.splitlines(), 1) if l.strip()]
        for no, f in lines[1:]:
            if len(f) >= 6 and fits(m, f):
                return no
    return None


def scenario_from_dict(
    raw: Mapping[str, Any],
    base_dir: Path | str = ".",
    source: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Scenario:
    base = resolve(base_dir)
    try:
        model = S.ScenarioModel.model_validate(dict(raw), context={"base_dir": base})
    except ValidationError as e:
        raise ScenarioError(format_validation_error(e), source=str(source) if source else None) from None
    return Scenario(model=model, raw=dict(raw), base_dir=base, source=source, overrides=dict(overrides or {}),
                    warnings=unselected_tables(model, raw))


def unselected_tables(model: S.ScenarioModel, raw: Mapping[str, Any]) -> list[str]:
    """One line for each ``[flow_control.X]`` or ``[congestion_control.X]`` table the file gives
    for a scheme or algorithm it does not select: the core reads only the selected one's, so
    such a table is ignored, which a user who meant to tune the run must hear. (``flow_control.pfc``
    is PFC's own settings, read under several schemes, so it is not one of them. A sweep sets
    the selection per run from its grid and does not print these.)"""
    out = []
    for section, tag, names, chosen in (
        ("flow_control", "scheme", S.FC_SCHEMES, model.flow_control.scheme),
        ("congestion_control", "algorithm", S.CC_ALGORITHMS, model.congestion_control.algorithm),
    ):
        table = raw.get(section)
        if not isinstance(table, Mapping):
            continue
        for name, value in table.items():
            if name in names and name != chosen and name != "pfc" and isinstance(value, Mapping):
                out.append(f"{section}.{name}: ignored: a table for {tag} '{name}', but {section}.{tag} is '{chosen}'")
    return out


def read_toml(path: Path | str, what: str = "") -> dict[str, Any]:
    p = Path(path)
    text = read_text(p, what)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{p}: not valid TOML: {e}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ScenarioError(f"{p}: cannot read it: arrays or tables nested too deeply") from None


def load_scenario(path: Path | str, overrides: Mapping[str, Any] | None = None, validate: bool = False,
                  max_memory: Any = AUTO) -> Scenario:
    """Read and validate a scenario file. `overrides` sets dotted keys first. With `validate`,
    the core also builds the network (as `hopsim validate` does), after checking its memory
    estimate against `max_memory` (`Scenario.validate`)."""
    p = resolve(path)
    raw = read_toml(p, "SCENARIO")
    if overrides:
        raw = apply_overrides(raw, overrides)
    sc = scenario_from_dict(raw, p.parent, p, overrides)
    if validate:
        sc.validate(max_memory)
    return sc


# ----------------------------------------------------------------------------- to the core


def _topology(t: Any) -> dict[str, Any]:
    if isinstance(t, S.Star):
        return {"kind": "star", "hosts": t.hosts, "rate": t.rate, "delay": t.delay}
    if isinstance(t, S.Dumbbell):
        return {"kind": "dumbbell", "left": t.left, "right": t.right, "host_rate": t.host_rate,
                "bottleneck_rate": t.bottleneck_rate, "delay": t.delay}
    if isinstance(t, S.LeafSpine):
        return {"kind": "leaf_spine", **_leaf_spine(t)}
    if isinstance(t, S.FatTree):
        return {"kind": "fat_tree", "k": t.k, "hosts_per_edge": t.hosts_per_edge or t.k // 2,
                "host_rate": t.host_rate, "fabric_rate": t.fabric_rate, "delay": t.delay}
    if isinstance(t, S.MultiDc):
        return {"kind": "multi_dc", "dc": _leaf_spine(t.dc), "gateway_rate": t.gateway_rate,
                "gateway_delay": t.gateway_delay, "long_rate": t.long_rate, "long_delay": t.long_delay}
    if isinstance(t, S.HpccTopology):
        return {"kind": "hpcc", "text": read_text(t.file, "topology.file")}
    if isinstance(t, S.Explicit):
        tiers = dict(zip(t.switches, t.tiers or [0] * len(t.switches)))
        nodes = [{"Switch": {"tier": tiers[i]}} if i in tiers else "Host" for i in range(t.nodes)]
        links = [{"a": l.a, "b": l.b, "rate": l.rate, "delay": l.delay} for l in t.links]
        return {"kind": "explicit", "nodes": nodes, "links": links}
    raise TypeError(t)  # pragma: no cover


def _leaf_spine(t: S.LeafSpineParams) -> dict[str, Any]:
    return {"hosts_per_tor": t.hosts_per_tor, "tors": t.tors, "spines": t.spines, "host_rate": t.host_rate,
            "fabric_rate": t.fabric_rate, "host_delay": t.host_delay, "fabric_delay": t.fabric_delay,
            "links_per_spine": t.links_per_spine}


def host_rate(t: Any) -> int:
    """The rate of a host's link (bits/s): what an incast's `load` refers to by default. A host
    with several links (one NIC each) sends at their sum, as the core's `Topology::host_rate`;
    for the explicit and HPCC topologies, the host of the first link that has one."""
    if isinstance(t, S.Star):
        return t.rate
    if isinstance(t, (S.Dumbbell, S.LeafSpine, S.FatTree)):
        return t.host_rate
    if isinstance(t, S.MultiDc):
        return t.dc.host_rate
    if isinstance(t, S.Explicit):
        mine = _first_host_links([(l.a, l.b) for l in t.links], set(t.switches))
        if not mine:
            raise ScenarioError("topology: the explicit topology has no host link")
        return sum(t.links[k].rate for k in mine)
    if isinstance(t, S.HpccTopology):
        lines = [l.split() for l in read_text(t.file, "topology.file").splitlines() if l.strip()]
        switches = set(lines[1]) if len(lines) > 1 else set()
        links = [f for f in lines[2:] if len(f) >= 4]
        mine = _first_host_links([(f[0], f[1]) for f in links], switches)
        if not mine:
            raise ScenarioError("topology.file: no host link found")
        return sum(parse_rate(links[k][2]) for k in mine)
    raise TypeError(t)  # pragma: no cover


def _first_host_links(ends: list[tuple[Any, Any]], switches: set[Any]) -> list[int]:
    """Indices of every link of the host at the first link with a host end (its `a` end if both
    are hosts); empty if no link has one."""
    for a, b in ends:
        if a not in switches or b not in switches:
            h = a if a not in switches else b
            return [k for k, (x, y) in enumerate(ends) if h in (x, y)]
    return []


def _incast(i: S.Incast, topo: Any) -> dict[str, Any]:
    if i.flow_size is not None:
        size: Any = {"PerFlowRange": {"min": i.flow_size, "max": i.flow_size}}
    elif i.total_size is not None:
        size = {"Total": i.total_size}
    else:
        size = {"PerFlowRange": {"min": i.flow_size_min, "max": i.flow_size_max}}
    if i.period is not None:
        timing: Any = {"Period": i.period}
    elif i.load is not None:
        timing = {"LoadShare": {"load": i.load, "host_rate": i.host_rate or host_rate(topo)}}
    elif i.background_share is not None:
        timing = {"BackgroundShare": {"share": i.background_share, "host_rate": i.host_rate or host_rate(topo)}}
    else:
        timing = {"Once": i.at}
    return {"degree": i.degree, "size": size, "timing": timing, "dst": i.dst,
            **({"dst_stride": i.dst_stride} if i.dst_stride is not None else {}),  # absent when unset: hashes stay
            **({"exclude_dsts_from_background": True} if i.exclude_dsts_from_background else {}),  # likewise
            **({"rack_size": _rack_size(topo, "workload.incast.inter_rack")} if i.inter_rack else {}),  # likewise
            "senders": {"distinct": "Distinct", "with_replacement": "WithReplacement"}[i.senders],
            "jitter": i.jitter, "prio": i.prio}


def _rack_size(topo: Any, what: str) -> int:
    """Hosts per rack for `inter_rack`: a leaf-spine's hosts are numbered rack by rack (ToR t
    holds hosts t x hosts_per_tor onwards), which is what the core's racks of consecutive hosts
    assume."""
    if not isinstance(topo, S.LeafSpine):
        raise ScenarioError(f"{what}: racks are known on topology.kind = \"leaf_spine\" (allowed there)")
    return topo.hosts_per_tor


def _background(b: S.BackgroundParams, topo: Any) -> dict[str, Any]:
    arrival: Any = "Poisson" if b.arrival == "poisson" else {"LogNormal": {"sigma": b.sigma}}
    return {"cdf": read_text(b.cdf, "workload.cdf"), "load": b.load, "load_on": b.load_on, "arrival": arrival,
            "start": b.start, "duration": b.duration, "prio": b.prio,
            **({"dst": b.dst} if b.dst is not None else {}),  # absent when unset: scenario hashes stay
            **({"rack_size": _rack_size(topo, "workload.inter_rack")} if b.inter_rack else {})}  # likewise


def _workload(w: Any, topo: Any) -> dict[str, Any]:
    if isinstance(w, S.FlowsWorkload):
        return {"kind": "flows", "flows": [
            {"src": f.src, "dst": f.dst, "size": f.size, "start_ns": f.start // 1000, "prio": f.prio, "incast": f.incast,
             # left out when unset, as the core leaves it out, so flow lists without caps keep their hash
             **({} if f.rate_cap == "none" else {"rate_cap": f.rate_cap})}
            for f in w.flows]}
    if isinstance(w, S.HpccFlowsWorkload):
        # source_ports left out at its default, as the core leaves it out, so scenarios keep their hash
        return {"kind": "hpcc_flows", "text": read_text(w.file, "workload.file"), "time_offset": w.time_offset,
                **({} if w.source_ports == "per_pair" else {"source_ports": w.source_ports})}
    if isinstance(w, S.BackgroundWorkload):
        return {"kind": "background", **_background(w, topo)}
    if isinstance(w, S.IncastWorkload):
        limit = {"Count": w.bursts} if w.bursts is not None else {"Duration": w.duration}
        return {"kind": "incast", "incast": _incast(w.incast, topo), "start": w.start, "limit": limit}
    if isinstance(w, S.IncastMixWorkload):
        return {"kind": "incast_mix", "background": _background(w, topo), "incast": _incast(w.incast, topo)}
    if isinstance(w, S.DcMixWorkload):
        return {"kind": "dc_mix", "background": _background(w, topo), "long_flows": w.long_flows}
    if isinstance(w, S.LongLivedWorkload):
        return {"kind": "long_lived", "pairs": [list(p) for p in w.pairs], "size": w.size, "start": w.start}
    raise TypeError(w)  # pragma: no cover


def _core(table: S.Strict, exclude: set[str] | None = None) -> dict[str, Any]:
    """A settings table as the core reads it: the core deserialises the scenario's own field
    names, so the table goes over whole (see `schema.CORE`). Through JSON, so that `Scenario.core`
    equals the scenario.json written from it (pairs are lists there, not tuples)."""
    return json.loads(json.dumps(S.dump(table, context=S.CORE, exclude=exclude)))


def _net(m: S.ScenarioModel) -> dict[str, Any]:
    """The core's `NetConfig` (crates/hopsim-core/src/config.rs). Only the layout differs from the
    scenario's: the core has one `switch` table for [buffer], [queues] and [ecn]; the selected
    flow-control scheme and congestion control carry their sub-table's fields beside their tag
    (`scheme`, `algorithm`); and PFC's threshold is one tagged value."""
    fc, cc = m.flow_control, m.congestion_control
    pfc = fc.pfc
    threshold: dict[str, Any] = (
        {"mode": "dynamic"} if pfc.threshold == "dynamic" else {"mode": "static", "xoff": pfc.xoff, "xon": pfc.xon}
    )
    return {
        "seed": m.seed,
        # the queue-level keywords (priority map, scheduler, lossless) are resolved in _substrate
        "switch": {**_core(m.buffer, exclude={"lossless"}), **_core(m.queues, exclude={"scheduler", "strict", "priority"}),
                   "ecn": _core(m.ecn, exclude={"mark_at"}),
                   # beside `ecn` in the core, and left out at its default so that hashes stay
                   **({"ecn_mark_at": m.ecn.mark_at} if m.ecn.mark_at != "dequeue" else {})},
        # rate caps left out while unset, as the core leaves them out, so scenarios without keep their hash;
        # the TCP transport's settings go over only with mode = "tcp" (the core's `tcp: Some`),
        # so the hash of every RoCE scenario stays what it was
        "transport": {**_core(m.transport, exclude={"mode", "tcp"} | {k for k, unset in (
                          ("rate_cap", m.transport.rate_cap == "none"), ("host_rate_caps", not m.transport.host_rate_caps))
                          if unset}),
                      **({"tcp": _core(m.transport.tcp)} if m.transport.mode == "tcp" else {})},
        # every scheme's and algorithm's table goes over whole: the core reads it strictly
        "flow_control": {"scheme": fc.scheme, **_scheme_core(fc)},
        "pfc": {"threshold": threshold, "pause_quanta": pfc.pause_quanta, "until_resume": pfc.until_resume},
        # ack_path and neighbour_order left out at their defaults, as the core leaves them out, so
        # scenarios keep their hash
        "routing": _core(m.routing, exclude={k for k, at_default in (("ack_path", m.routing.ack_path == "hash"),
                                                                      ("neighbour_order", m.routing.neighbour_order == "ascending"))
                                             if at_default}),
        "congestion_control": {"algorithm": cc.algorithm, **(_core(getattr(cc, cc.algorithm)) if cc.algorithm in S.CC_TABLES else {})},
        "record": _record(m.record),
        "duration": m.duration,
        # the watchdog's limit (crates/hopsim-core/src/watchdog.rs): left out when "auto", so the
        # scenario hash of every scenario that does not set it stays what it was; "off" = never
        **({} if m.stall_timeout == "auto" else {"stall_timeout": 2**64 - 1 if m.stall_timeout == "off" else m.stall_timeout}),
        # faults (crates/hopsim-core/src/faults.rs): left out while off, as the core leaves them
        # out of its own JSON, so the hash of every scenario without faults stays what it was
        **({} if m.faults.is_off() else {"faults": _core(m.faults)}),
        # transmission times (crates/hopsim-core/src/time.rs TxTimes): left out while exact, as
        # the core leaves them out, so the hash of every scenario that does not set it stays
        **({} if m.tx_time == "exact" else {"tx_time": m.tx_time}),
    }


UNSET_AT_DEFAULT = {
    "ppfc": {"increment": "net", "transmission_speed": "egress"},
    "floodgate": {"delay_credit": True, "voq_pool": "per_port", "ideal": False, "m": 1.5, "watch_dst": None,
                  "ideal_delay_credit": False,
                  "dst_pause_on": "voq", "win_m": 1.0, "byte_counter": None, "window_unit": "packets",
                  "ecn_counts_voq": False, "voq_service": "strict", "window_fit": "mtu"},
    "bfc": {"lone_packet_pauses": True, "assign_paused_queues": True, "queue_search": "rotating",
            "collision_queue": "random", "bitmap_frame": "per_64", "flow_index": "fid_hash", "table_entries": None},
}
"""Scheme settings left out of the core's JSON while at their default (the core's serde default is
the same), so that the hash of every scenario written before they existed stays what it was."""


def _scheme_core(fc: Any) -> dict[str, Any]:
    if fc.scheme not in S.FC_TABLES:
        return {}
    d = _core(getattr(fc, fc.scheme))
    for k, v in UNSET_AT_DEFAULT.get(fc.scheme, {}).items():
        if d.get(k) == v:
            del d[k]
    return d


OFF_RECORDERS = ("qlen_monitor", "trace", "latency")
"""Recorders that are left out of the core's JSON while off (as the core leaves them out of its
own), so that the hash of every scenario that does not turn them on stays what it was."""


def _record(r: S.Record) -> dict[str, Any]:
    # record.cwnd_flows too is left out while empty, as the core leaves it out
    d = {k: v for k, v in _core(r).items() if not (k in OFF_RECORDERS and v is None) and not (k == "cwnd_flows" and not v)}
    if d.get("latency") and not d["latency"].get("per_hop"):
        # left out while off, as the core leaves it out: latency scenarios keep their hash
        d["latency"] = {k: v for k, v in d["latency"].items() if k != "per_hop"}
    return d


IDEAL_BUFFER = 2**50
"""Ideal-FQ's "infinite buffering at each switch" (BFC §6.2.1): a petabyte, never reached."""


def _substrate(net: dict[str, Any], m: S.ScenarioModel) -> dict[str, Any]:
    """The queue-level settings whose scenario values are keywords the front resolves: the priority
    map ('modulo' -> one priority per queue), the scheduler (with its strict queues), lossless
    ('auto' -> whether the scheme pauses senders), and which AQM runs ('auto' -> what the
    congestion control is designed with); plus the control-frame sizes."""
    q, b = m.queues, m.buffer
    sw = net["switch"]
    # what the scheme implies, as the core declares it (`fc::Scheme`)
    facts = read_tables(net)["facts"]
    sw["priority"] = q.priority_map(facts["one_class"])
    sw["scheduler"] = {"kind": "strict", "queues": q.strict} if q.scheduler == "strict" else {"kind": q.scheduler}
    # 'auto': lossless exactly when the scheme pauses senders before the buffer overflows (BFC
    # does not guarantee it, §5, unless PFC backs it up)
    sw["lossless"] = facts["pauses"] if b.lossless == "auto" else b.lossless
    if facts["unlimited_buffer"]:
        sw["size"] = IDEAL_BUFFER
    if facts["strict_first_queue"]:
        # Floodgate §4.2 (and appendix B): the non-incast queue (0) is served strictly before the VOQs
        sw["scheduler"] = {"kind": "strict", "queues": [0]}
    a, cc = m.aqm, m.congestion_control
    ein_on = a.ein == "on" or (a.ein == "auto" and cc.algorithm == "pulser")
    int_on = a.int == "on" or (a.int == "auto" and cc.algorithm == "hpcc")
    e = cc.pulser.ein
    net["aqm"] = {
        "ein": {"n": e.n, "threshold": e.threshold,
                "high_water_mark": None if e.high_water_mark == "ecn" else e.high_water_mark} if ein_on else None,
        "int_max_hops": cc.hpcc.int_header.max_hops if int_on else 0,
    }
    net["control"] = _core(m.control)
    return net


def read_tables(net: dict[str, Any]) -> dict[str, Any]:
    """The core's reading of the scenario's scheme and algorithm tables (`_native.read_tables`):
    each table as the core read it, every field with its value, and the scheme's `facts`. A field
    the core does not have is a `ScenarioError` naming it and the fields allowed."""
    from .. import _native

    try:
        return dict(json.loads(_native.read_tables(json.dumps(
            {"flow_control": net["flow_control"], "congestion_control": net["congestion_control"]}))))
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def to_core(m: S.ScenarioModel) -> dict[str, Any]:
    """The core's `Scenario` (crates/hopsim-core/src/scenario.rs) as a JSON-ready dict."""
    return {"topology": _topology(m.topology), "workload": _workload(m.workload, m.topology),
            "net": _substrate(_net(m), m)}
