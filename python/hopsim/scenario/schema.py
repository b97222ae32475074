"""The scenario file format: pydantic models of a TOML scenario.

Every table forbids unknown keys and every value is range-checked, so a typo or a wrong unit is
an error naming the field (``buffer.size: unknown size unit 'Mb' ...``), never a silent default.
The settings' defaults are the core's (``crates/hopsim-core/src/params/``, ``config.rs`` and the
scheme modules, which cite the paper or simulator each comes from). They are written again here
so that the resolved scenario has every value in human units and a run folder records what it ran
with even if a default changes later; ``tests/test_defaults.py`` checks each one against the core's
(``hopsim._native.defaults()``).

Field names are the core's too (its serde names), so ``dump(table, context=CORE)`` of a settings
table is what the core reads: integers in its units (bytes, bits/s, picoseconds), and the keywords
that mean "not set" (``ref_rate = "none"``, ``buffer_interval = "off"``, ``base_rtt = "flow"``,
``high_water_mark = "ecn"``) as null, the core's ``None``.

Sources named in the descriptions: HPCC = alibaba-edu/High-Precision-Congestion-Control (its
``third.cc``, ``run.py`` and ``rdma-hw.cc``); P-PFC = Tian et al., TPDS 2020 (Table 2, §4, §5);
DCQCN = Zhu et al., SIGCOMM 2015; BFC = Goyal et al., NSDI 2022 (§6); CaPFC as described in P-PFC
§2.3/§5.6/§7; DCTCP = Alizadeh et al., SIGCOMM 2010, and RFC 8257; TIMELY = Mittal et al., SIGCOMM
2015; HPCC paper = Li et al., SIGCOMM 2019; Pulser = Almasi et al. (EIN, §III-IV); ICTCP = Wu et
al., ToN 2013. The core's module docs (``crates/hopsim-core/src/cc/*.rs``, ``aqm/*.rs``) say more.
"""

from __future__ import annotations

import numbers
import typing
import operator
from typing import Annotated, Any, Callable, Literal, Optional, Union

from pydantic import (
    BaseModel,
    create_model,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializationInfo,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from . import registry
from ..errors import ScenarioError
from ..interrupts import deferred
from .paths import read_text, resolve_input
from .units import (
    UnitError,
    fmt_rate,
    fmt_size,
    fmt_time,
    parse_fraction,
    parse_rate,
    parse_size,
    parse_time,
    shown,
)

# ----------------------------------------------------------------------------- unit types


def _wrap(parser: Callable[[object], Any], keywords: tuple[str, ...] = ()) -> Callable[[object], Any]:
    def v(x: object) -> Any:
        if isinstance(x, str) and x.strip().lower() in keywords:
            return x.strip().lower()
        try:
            return parser(x)
        except UnitError as e:
            msg = str(e)
            if keywords:
                msg += "; or one of: " + ", ".join(repr(k) for k in keywords)
            raise PydanticCustomError("unit", "{msg}", {"msg": msg}) from None

    return v


def _ser(fmt: Callable[[int], str]) -> Callable[[Any], Any]:
    return lambda v: v if isinstance(v, str) else fmt(v)


CORE = {"core": True}
"""``dump(table, context=CORE)``: a settings table as the core's JSON has it."""


def dump(model: BaseModel, **kw: Any) -> dict[str, Any]:
    """``model.model_dump(**kw)`` with Ctrl-C and SIGTERM held until it returns. Why: pydantic-core
    turns whatever a serializer function raises, KeyboardInterrupt included, into a
    PydanticSerializationError (a ValueError), so a signal landing inside one of the unit
    formatters above would end the command as bad input (exit code 2) instead of as interrupted.
    A dump takes milliseconds; the held signal is raised as it ends (`interrupts.deferred`)."""
    with deferred():
        return model.model_dump(**kw)


def _ser_unset(fmt: Callable[[int], str], keyword: str) -> Callable[[Any, SerializationInfo], Any]:
    """Like `_ser`; and for the core, `keyword` (the choice the core represents as ``None``) is null."""

    def s(v: Any, info: SerializationInfo) -> Any:
        if info.mode == "json":
            return v if isinstance(v, str) else fmt(v)
        if v == keyword and isinstance(info.context, dict) and info.context.get("core"):
            return None
        return v

    return s


def _unit_or(parse: Callable[[object], int], fmt: Callable[[int], str], keyword: str) -> Any:
    """A unit field that also takes one keyword (a time or "off"): the keyword written back as
    given, a value in the field's unit, and for the core the keyword as null (`_ser_unset`)."""
    return Annotated[Union[Literal[keyword], int], BeforeValidator(_wrap(parse, (keyword,))),
                     PlainSerializer(_ser_unset(fmt, keyword))]


def _ser_zero(fmt: Callable[[int], str], keyword: str) -> Callable[[Any, SerializationInfo], Any]:
    """Like `_ser`; and for the core, `keyword` (the choice the core represents as 0) is 0."""

    def s(v: Any, info: SerializationInfo) -> Any:
        if v == keyword and isinstance(info.context, dict) and info.context.get("core"):
            return 0
        if info.mode == "json":
            return v if isinstance(v, str) else fmt(v)
        return v

    return s


Rate = Annotated[int, BeforeValidator(_wrap(parse_rate)), PlainSerializer(_ser(fmt_rate), when_used="json")]
"""Bits per second; written ``100Gbps``."""
Time = Annotated[int, BeforeValidator(_wrap(parse_time)), PlainSerializer(_ser(fmt_time), when_used="json")]
"""Picoseconds; written ``1us``."""
Size = Annotated[int, BeforeValidator(_wrap(parse_size)), PlainSerializer(_ser(fmt_size), when_used="json")]
"""Bytes; written ``12MB``, ``4KiB`` or a plain integer."""
Fraction = Annotated[float, BeforeValidator(_wrap(parse_fraction))]
"""A fraction; written ``60%`` or ``0.6``."""

SizeOrAuto = Annotated[
    Union[Literal["auto"], int],
    BeforeValidator(_wrap(parse_size, ("auto",))),
    PlainSerializer(_ser(fmt_size), when_used="json"),
]
Window = Annotated[
    Union[Literal["bdp", "off"], int],
    BeforeValidator(_wrap(parse_size, ("bdp", "off"))),
    PlainSerializer(_ser(fmt_size), when_used="json"),
]
TimeOrZeroOff = Annotated[
    Union[Literal["off"], int],
    BeforeValidator(_wrap(parse_time, ("off",))),
    PlainSerializer(_ser_zero(fmt_time, "off")),
]
Headroom = Annotated[
    Union[Literal["auto", "hpcc", "floodgate"], int],
    BeforeValidator(_wrap(parse_size, ("auto", "hpcc", "floodgate"))),
    PlainSerializer(_ser(fmt_size), when_used="json"),
]
TimeOrOff = _unit_or(parse_time, fmt_time, "off")
TimeOrFlow = _unit_or(parse_time, fmt_time, "flow")
TimeOrMeasured = _unit_or(parse_time, fmt_time, "measured")
SizeOrEcn = _unit_or(parse_size, fmt_size, "ecn")
TimeOrPredicted = Annotated[
    Union[Literal["predicted"], int],
    BeforeValidator(_wrap(parse_time, ("predicted",))),
    PlainSerializer(_ser(fmt_time), when_used="json"),
]
TimeOrRunEnd = _unit_or(parse_time, fmt_time, "run_end")
SizeOrNone = _unit_or(parse_size, fmt_size, "none")
RateOrNone = _unit_or(parse_rate, fmt_rate, "none")

# ----------------------------------------------------------------------------- plain numbers


def _as_written(x: object) -> str:
    """A value as the user wrote it in TOML (a string quoted and called one, true not True)."""
    if isinstance(x, str):
        return f"the string {shown(x)}"
    if isinstance(x, bool):
        return "true" if x else "false"
    return shown(x)


def _integer(x: object) -> int:
    """Only integers: pydantic's lax mode would read ``hosts = "5"`` as 5 and ``5.5`` as an error
    but ``5.0`` as 5, hiding a quoting slip or a unit left out; TOML writes integers as integers.
    Python's integer types (``numpy.int64`` from a sweep script) are integers too (``__index__``)."""
    if isinstance(x, bool) or not hasattr(type(x), "__index__"):
        raise PydanticCustomError("integer", "expected an integer written without quotes (e.g. 5), got {got}",
                                  {"got": _as_written(x)})
    return operator.index(x)  # type: ignore[arg-type]


def _number(x: object) -> float:
    """Integers or floats (``alpha = 1`` is as good as ``1.0``), never strings or booleans."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise PydanticCustomError("number", "expected a number written without quotes (e.g. 0.5), got {got}",
                                  {"got": _as_written(x)})
    try:
        return float(x)
    except OverflowError:  # an integer of hundreds of digits
        raise PydanticCustomError("number", "{got} is too large for a number here", {"got": shown(x)}) from None


def _boolean(x: object) -> bool:
    """Only true or false: lax mode would take ``"off"``, ``"no"``, 0 and 1 as booleans."""
    if not isinstance(x, bool):
        raise PydanticCustomError("boolean", "expected true or false written without quotes, got {got}",
                                  {"got": _as_written(x)})
    return x


Int = Annotated[int, BeforeValidator(_integer)]
"""An integer setting (a count, an id, a seed): strings and floats are errors, not converted."""
Float = Annotated[float, BeforeValidator(_number)]
"""A plain number setting: integers and floats; strings and booleans are errors."""
Bool = Annotated[bool, BeforeValidator(_boolean)]
"""A switch: true or false; strings and numbers are errors."""

Prio = Annotated[Int, Field(ge=0, le=7, description="traffic class / PFC priority, 0..7")]
NodeId = Annotated[Int, Field(ge=0, lt=2**31)]

# ----------------------------------------------------------------------------- base


def _positive_or(message: str) -> Any:
    """A field validator for a size, time or rate that may also be a keyword ('none', 'off',
    ...): the parsed number must be above 0; the keyword passes. `message` says which."""

    def check(cls: Any, v: Any) -> Any:
        if isinstance(v, int) and v <= 0:
            raise PydanticCustomError("positive", message, {})
        return v

    return classmethod(check)


class Strict(BaseModel):
    """A table that rejects unknown keys, naming the ones it allows."""

    model_config = ConfigDict(extra="forbid", validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = set(cls.model_fields)
            unknown = [k for k in data if k not in allowed]
            if unknown:
                raise PydanticCustomError(
                    "unknown_key",
                    "unknown key {keys}; allowed here: {allowed}",
                    {"keys": ", ".join(repr(k) for k in unknown), "allowed": ", ".join(sorted(allowed))},
                )
        return data


# ----------------------------------------------------------------------------- topology


class Star(Strict):
    """``hosts`` hosts on one switch: one congestion point (the port to the receiver)."""

    kind: Literal["star"]
    hosts: Int = Field(ge=2, le=1_000_000)
    rate: Rate = Field(default="100Gbps", gt=0)
    delay: Time = Field(default="1us", ge=0)


class Dumbbell(Strict):
    kind: Literal["dumbbell"]
    left: Int = Field(ge=1, le=1_000_000)
    right: Int = Field(ge=1, le=1_000_000)
    host_rate: Rate = Field(default="100Gbps", gt=0)
    bottleneck_rate: Rate = Field(default="100Gbps", gt=0)
    delay: Time = Field(default="1us", ge=0)


class LeafSpineParams(Strict):
    """Defaults: BFC §6, 8 ToRs x 16 hosts, 8 spines, 100 Gb/s and 1 us everywhere."""

    hosts_per_tor: Int = Field(default=16, ge=1, le=100_000)
    tors: Int = Field(default=8, ge=1, le=100_000)
    spines: Int = Field(default=8, ge=1, le=100_000)
    host_rate: Rate = Field(default="100Gbps", gt=0)
    fabric_rate: Rate = Field(default="100Gbps", gt=0)
    host_delay: Time = Field(default="1us", ge=0)
    fabric_delay: Time = Field(default="1us", ge=0)
    links_per_spine: Int = Field(default=1, ge=1, le=64)


class LeafSpine(LeafSpineParams):
    kind: Literal["leaf_spine"]


class FatTree(Strict):
    """k-ary fat-tree (Al-Fares et al. 2008); ``hosts_per_edge`` defaults to k/2 (full bisection)."""

    kind: Literal["fat_tree"]
    k: Int = Field(ge=2, le=128)
    hosts_per_edge: Optional[Int] = Field(default=None, ge=1, le=10_000)
    host_rate: Rate = Field(default="100Gbps", gt=0)
    fabric_rate: Rate = Field(default="100Gbps", gt=0)
    delay: Time = Field(default="1us", ge=0)

    @field_validator("k")
    @classmethod
    def _even(cls, k: int) -> int:
        if k % 2:
            raise PydanticCustomError("even", "fat-tree k must be even, got {k}", {"k": k})
        return k


class MultiDc(Strict):
    """Two leaf-spine DCs joined by a long link. Defaults: BFC Appendix E.3 (64 hosts per DC,
    200 Gb/s long link with 200 us one-way delay)."""

    kind: Literal["multi_dc"]
    dc: LeafSpineParams = Field(default_factory=lambda: LeafSpineParams(tors=4))
    gateway_rate: Rate = Field(default="100Gbps", gt=0)
    gateway_delay: Time = Field(default="1us", ge=0)
    long_rate: Rate = Field(default="200Gbps", gt=0)
    long_delay: Time = Field(default="200us", ge=0)


class HpccTopology(Strict):
    """The HPCC simulator's topology file (``N S L`` / switch ids / ``a b rate delay error``)."""

    kind: Literal["hpcc"]
    file: str

    @field_validator("file")
    @classmethod
    def _exists(cls, v: str, info: ValidationInfo) -> str:
        return str(resolve_input(v, info.context, kind="topology file"))


class Link(Strict):
    a: NodeId
    b: NodeId
    rate: Rate = Field(gt=0)
    delay: Time = Field(default="1us", ge=0)


class Explicit(Strict):
    """Any network: ``nodes`` ids 0..nodes-1; those in ``switches`` are switches (with ``tiers``,
    0 = ToR, 1 = aggregation/spine, 2 = core; default all 0), the rest hosts (one NIC per link: a host
    with several links binds each flow to one of them, see the core's `net::nic_choice`)."""

    kind: Literal["explicit"]
    nodes: Int = Field(ge=2, le=10_000_000)
    switches: list[NodeId] = Field(min_length=0)
    tiers: Optional[list[Annotated[Int, Field(ge=0, le=7)]]] = None
    links: list[Link] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids(self) -> "Explicit":
        seen: set[int] = set()
        for i, s in enumerate(self.switches):
            if s in seen:
                raise PydanticCustomError(
                    "switches", "switches[{i}]: node {s} is listed twice; list each switch once (with its tier at the "
                    "same place in tiers)", {"i": i, "s": s},
                )
            seen.add(s)
        for s in self.switches:
            if s >= self.nodes:
                raise PydanticCustomError(
                    "node_id", "switch id {s} is not below nodes = {n}", {"s": s, "n": self.nodes}
                )
        if self.tiers is not None and len(self.tiers) != len(self.switches):
            raise PydanticCustomError(
                "tiers", "tiers has {t} entries but switches has {s}; give one tier per switch",
                {"t": len(self.tiers), "s": len(self.switches)},
            )
        for i, l in enumerate(self.links):
            for end in (l.a, l.b):
                if end >= self.nodes:
                    raise PydanticCustomError(
                        "node_id", "links[{i}] names node {e}, but nodes = {n}", {"i": i, "e": end, "n": self.nodes}
                    )
        return self


Topology = Annotated[
    Union[Star, Dumbbell, LeafSpine, FatTree, MultiDc, HpccTopology, Explicit],
    Field(discriminator="kind"),
]
TOPOLOGY_KINDS = ("star", "dumbbell", "leaf_spine", "fat_tree", "multi_dc", "hpcc", "explicit")

# ----------------------------------------------------------------------------- workload


def check_cdf_text(text: str, name: str) -> None:
    """The rules of ``workloads/README.md``: ``size_bytes cdf`` lines, both non-decreasing,
    cdf in [0, 1], last cdf 1.0. Raises PydanticCustomError naming the line."""

    def bad(msg: str) -> PydanticCustomError:
        return PydanticCustomError("cdf", "{msg}", {"msg": f"{name}: {msg}"})

    prev: tuple[float, float] | None = None
    last_line = 0
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if len(f) != 2:
            raise bad(f"line {i}: expected 2 fields `size_bytes cdf`, found {len(f)}")
        try:
            size, cdf = float(f[0]), float(f[1])
        except ValueError:
            raise bad(f"line {i}: expected two numbers `size_bytes cdf`, found {line!r}") from None
        if size < 0:
            raise bad(f"line {i}: size {f[0]} is negative")
        if not 0.0 <= cdf <= 1.0:
            raise bad(f"line {i}: cdf {f[1]} is outside [0, 1]")
        if prev is not None:
            if size < prev[0]:
                raise bad(f"line {i}: size {f[0]} is smaller than the previous size {prev[0]:g}; "
                          "the CDF must be monotone (sizes non-decreasing)")
            if cdf < prev[1]:
                raise bad(f"line {i}: cdf {f[1]} is smaller than the previous cdf {prev[1]:g}; "
                          "the CDF must be monotone (non-decreasing)")
        prev = (size, cdf)
        last_line = i
    if prev is None:
        raise bad("no `size_bytes cdf` lines")
    if abs(prev[1] - 1.0) > 1e-9:
        raise bad(f"line {last_line}: the last cdf is {prev[1]:g}, it must be 1.0")


class Flow(Strict):
    src: NodeId
    dst: NodeId
    size: Size = Field(gt=0)
    start: Time = Field(default="0us", ge=0)
    prio: Prio = 3
    incast: Bool = False
    rate_cap: RateOrNone = Field(default="none", description="the NIC paces the flow at no more than this ("
                                 "FlowSail Fig. 8's 60/20/20 Gbps flows); 'none' = the congestion control's rate")

    _cap_positive = field_validator("rate_cap")(_positive_or("must be a rate above 0 or 'none'"))

    @field_validator("start")
    @classmethod
    def _whole_ns(cls, v: int) -> int:
        if v % 1000:
            raise PydanticCustomError("whole_ns", "flow start times are whole nanoseconds, got {v} ps", {"v": v})
        return v


class Incast(Strict):
    """N-to-1 bursts. Size: ``flow_size`` (every flow), ``flow_size_min``+``flow_size_max``
    (uniform per flow) or ``total_size`` (split equally). Timing: ``period`` (one burst per
    period), ``load`` (Poisson bursts averaging that fraction of a host link into the
    destination), ``background_share`` (Poisson bursts whose bytes are that share of the
    background's, so the incast follows the background's load: FlowSail §VI-B's "(0.1*X)%" is
    0.1; incast_mix only) or ``at`` (a single burst at that time)."""

    degree: Int = Field(ge=1, le=1_000_000)
    flow_size: Optional[Size] = Field(default=None, gt=0)
    flow_size_min: Optional[Size] = Field(default=None, gt=0)
    flow_size_max: Optional[Size] = Field(default=None, gt=0)
    total_size: Optional[Size] = Field(default=None, gt=0)
    period: Optional[Time] = Field(default=None, gt=0)
    load: Optional[Fraction] = Field(default=None, gt=0, le=1)
    background_share: Optional[Fraction] = Field(default=None, gt=0, le=10, description="incast bytes per background byte (incast_mix)")
    at: Optional[Time] = Field(default=None, ge=0)
    host_rate: Optional[Rate] = Field(default=None, gt=0, description="rate `load` refers to; default: the topology's host rate")
    dst: Optional[NodeId] = None
    dst_stride: Optional[Int] = Field(
        default=None, ge=1, le=1_000_000,
        description="with dst: burst k goes to the host k x dst_stride places after dst in the host list (wrapping); "
        "dst = the first host and dst_stride = hosts per ToR gives each rack's first host in turn (Floodgate-NS3's "
        "successive incasts)")
    exclude_dsts_from_background: Optional[bool] = Field(
        default=None,
        description="incast_mix: drop the background flows sent from or to any burst's destination, so its link "
        "carries the incasts alone (Floodgate-NS3's incastmix)")
    senders: Literal["distinct", "with_replacement"] = "distinct"
    inter_rack: Optional[bool] = Field(
        default=None,
        description="leaf_spine: draw each sender anew until it is outside the destination's rack, so the whole "
        "burst crosses the fabric (Floodgate-NS3's incastmix; needs senders = \"with_replacement\")")
    jitter: Time = Field(default="0us", ge=0)
    prio: Prio = 3

    @model_validator(mode="after")
    def _one_of_each(self) -> "Incast":
        sizes = [n for n in ("flow_size", "total_size") if getattr(self, n) is not None]
        rng = self.flow_size_min is not None or self.flow_size_max is not None
        if rng:
            if self.flow_size_min is None or self.flow_size_max is None:
                raise PydanticCustomError("incast_size", "give both flow_size_min and flow_size_max", {})
            if self.flow_size_min > self.flow_size_max:
                raise PydanticCustomError("incast_size", "flow_size_min is larger than flow_size_max", {})
            sizes.append("flow_size_min/max")
        if len(sizes) != 1:
            raise PydanticCustomError(
                "incast_size",
                "give exactly one of flow_size, flow_size_min + flow_size_max, total_size (got {got})",
                {"got": ", ".join(sizes) or "none"},
            )
        timing = [n for n in ("period", "load", "background_share", "at") if getattr(self, n) is not None]
        if len(timing) != 1:
            raise PydanticCustomError(
                "incast_timing", "give exactly one of period, load, background_share, at (got {got})", {"got": ", ".join(timing) or "none"}
            )
        if self.total_size is not None and self.total_size < self.degree:
            raise PydanticCustomError("incast_size", "total_size is less than 1 byte per flow", {})
        if self.dst_stride is not None and self.dst is None:
            raise PydanticCustomError("incast_dst_stride", "dst_stride needs dst (the first burst's destination host)", {})
        return self


class BackgroundParams(Strict):
    """Poisson (HPCC traffic_gen, Floodgate, FlowSail) or lognormal (BFC §6.2.1, sigma 2)
    arrivals of flows whose sizes follow a CDF file."""

    cdf: str = Field(description="a file of workloads/ by name, or a path")
    load: Fraction = Field(gt=0, le=1)
    load_on: Literal["host_links", "core_links"] = "host_links"
    arrival: Literal["poisson", "lognormal"] = "poisson"
    sigma: Float = Field(default=2.0, ge=0, le=100, description="lognormal shape (BFC §6.2.1: 2)")
    start: Time = Field(default="0us", ge=0)
    duration: Time = Field(gt=0, description="arrivals in [start, start + duration)")
    prio: Prio = 3
    dst: Optional[NodeId] = Field(
        default=None, description="every flow to this host, at `load` of its link (BFC Table 1: cross traffic on one link)"
    )
    inter_rack: Optional[bool] = Field(
        default=None,
        description="leaf_spine: both ends of every flow in different racks, so all of it crosses the fabric "
        "(Floodgate-NS3's Poisson flows, generate_QP); default: any two hosts")

    @field_validator("cdf")
    @classmethod
    def _cdf(cls, v: str, info: ValidationInfo) -> str:
        p = resolve_input(v, info.context, kind="CDF file", subdir="workloads")
        try:
            text = read_text(p)
        except ScenarioError as e:
            raise PydanticCustomError("file", "{msg}", {"msg": str(e)}) from None
        check_cdf_text(text, p.name)
        return str(p)


class FlowsWorkload(Strict):
    kind: Literal["flows"]
    flows: list[Flow] = Field(min_length=1)


class HpccFlowsWorkload(Strict):
    """The HPCC simulator's flow file (``src dst priority dport size start_seconds`` per line);
    its traffic starts at 2 s (traffic_gen.py), which ``time_offset`` subtracts. hopsim reads an
    optional seventh field, the flow's priority group, which ``routing.ecmp = "ns3_global"``
    hashes, and an eighth, its source port (0: numbered by the run), which BFC's
    ``flow_index = "ns3_header"`` reads (``hopsim import-bfc --flows`` writes both)."""

    kind: Literal["hpcc_flows"]
    file: str
    time_offset: Time = Field(default="2s", ge=0)
    source_ports: Literal["per_pair", "per_source_host"] = Field(
        default="per_pair", description="how the flows' source ports are numbered from 10000 in flow order (they feed "
        "routing.ecmp = 'hpcc'): 'per_pair' = per (source, destination) pair, as the HPCC simulator does; "
        "'per_source_host' = per source host, as Floodgate-NS3 does")

    @field_validator("file")
    @classmethod
    def _exists(cls, v: str, info: ValidationInfo) -> str:
        return str(resolve_input(v, info.context, kind="flow file"))


class BackgroundWorkload(BackgroundParams):
    kind: Literal["background"]


class IncastWorkload(Strict):
    """Incast bursts alone: from ``start``, either ``bursts`` of them or those in ``duration``."""

    kind: Literal["incast"]
    incast: Incast
    start: Time = Field(default="0us", ge=0)
    bursts: Optional[Int] = Field(default=None, ge=1, le=10_000_000)
    duration: Optional[Time] = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _limit(self) -> "IncastWorkload":
        if self.incast.background_share is not None:
            raise PydanticCustomError(
                "incast_timing", "incast.background_share is a share of background traffic: allowed with kind = \"incast_mix\"; "
                "here give period, load or at", {})
        if self.incast.exclude_dsts_from_background:
            raise PydanticCustomError(
                "incast_background", "incast.exclude_dsts_from_background drops background flows: allowed with "
                "kind = \"incast_mix\", where there are some", {})
        if self.bursts is not None and self.duration is not None:
            raise PydanticCustomError("incast_limit", "give bursts or duration, not both", {})
        if self.bursts is None and self.duration is None:
            if self.incast.at is None:
                raise PydanticCustomError(
                    "incast_limit", "give bursts (a count) or duration (a time window) for periodic bursts", {}
                )
            self.bursts = 1
        return self


class IncastMixWorkload(BackgroundParams):
    """Background flows plus incast bursts over the same window (Floodgate §6 "incastmix")."""

    kind: Literal["incast_mix"]
    incast: Incast


class DcMixWorkload(BackgroundParams):
    """BFC App. E.3 (Fig. 20), on a ``multi_dc`` topology: the background flows stay inside each
    datacenter (both ends in one, each datacenter offering ``load`` of its own share: with
    ``load_on = "core_links"`` its own ToR uplinks), plus ``long_flows`` long-lived flows from each
    datacenter to the other (distinct senders, receivers drawn at random), from ``start``."""

    kind: Literal["dc_mix"]
    long_flows: Int = Field(ge=0, le=1_000_000, description="long-lived flows each way between the datacenters "
                            "(BFC App. E.3: 20); at most the hosts of a datacenter")


class LongLivedWorkload(Strict):
    kind: Literal["long_lived"]
    pairs: list[tuple[NodeId, NodeId]] = Field(min_length=1)
    size: Size = Field(default=2**50, gt=0, description="2^50 B never finishes: set `duration`")
    start: Time = Field(default="0us", ge=0)


Workload = Annotated[
    Union[FlowsWorkload, HpccFlowsWorkload, BackgroundWorkload, IncastWorkload, IncastMixWorkload, LongLivedWorkload,
          DcMixWorkload],
    Field(discriminator="kind"),
]
WORKLOAD_KINDS = ("flows", "hpcc_flows", "background", "incast", "incast_mix", "long_lived", "dc_mix")

# ----------------------------------------------------------------------------- switches


class Buffer(Strict):
    """The shared-buffer MMU of every switch (HPCC-simulator style)."""

    size: Size = Field(default="12MB", gt=0, description="shared buffer per switch (HPCC fat-tree uses 32 MB)")
    reserve: Size = Field(default="4KiB", ge=0, description="per ingress (port, priority) (HPCC: 4 KB)")
    alpha: Float = Field(default=0.125, gt=0, le=1024, description="dynamic threshold alpha x free (HPCC: 1/8)")
    resume_offset: Size = Field(default="3KiB", ge=0, description="PFC resume hysteresis (HPCC: 3 KB)")
    headroom_first: Bool = Field(default=False, description="departing bytes leave an ingress's headroom first, then its "
                                 "shared share (the HPCC simulator's MMU); false = each packet releases what it was charged")
    alpha_by_rate: Bool = Field(default=False, description="double alpha per doubling of a port's rate over the NIC rate, "
                                "up to 1 (the HPCC simulator's pfc_a_shift)")
    headroom: Headroom = Field(default="auto", description="'auto' = 3 x rate x delay + 3 KB per port (HPCC's 3 x BDP + MTUs); "
                               "'hpcc' = exactly 3 x rate x delay (the HPCC simulator); 'floodgate' = exactly 8 x rate x "
                               "delay (Floodgate-NS3); or bytes")
    lossless: Union[Literal["auto"], Bool] = Field(
        default="auto",
        description="lossless fabric (headroom, admit into it); 'auto' = whether the flow-control scheme pauses senders",
    )


MAX_QUEUES = 1024
"""Most data queues per port; the core's `queues::port::MAX_QUEUES` (tests/test_substrate.py checks they agree)."""


class Queues(Strict):
    count: Int = Field(default=8, ge=1, le=MAX_QUEUES, description="data queues per egress port (8 as on switch ASICs)")
    scheduler: Literal["drr", "strict", "rank", "rr"] = Field(
        default="drr",
        description="drr: DRR among data queues; strict: the `strict` queues first, DRR among the rest; "
        "rank: smallest head-of-queue rank tag first; rr: one packet per queue per round whatever its size (the BFC "
        "paper's simulator, broadcom-egress-queue.cc DoDequeueRR). Control frames always take strict priority.",
    )
    strict: list[Annotated[Int, Field(ge=0, lt=MAX_QUEUES)]] = Field(
        default_factory=list, description="queues served strictly first under scheduler = 'strict'"
    )
    quantum: Size = Field(default=1500, ge=1, le=10_000_000, description="DRR quantum (one MTU frame)")
    priority: Union[Literal["modulo"], list[Prio]] = Field(
        default="modulo", description="priority of each queue (what PFC pauses); 'modulo' = queue q carries q mod 8"
    )

    @model_validator(mode="after")
    def _consistent(self) -> "Queues":
        if isinstance(self.priority, list) and len(self.priority) != self.count:
            raise PydanticCustomError(
                "queues", "priority has {n} entries for {c} queues; give one per queue or 'modulo'",
                {"n": len(self.priority), "c": self.count},
            )
        bad = [q for q in self.strict if q >= self.count]
        if bad:
            raise PydanticCustomError("queues", "strict names queue {q}; allowed: 0 to {m}", {"q": bad[0], "m": self.count - 1})
        return self

    def priority_map(self, one_class: bool = False) -> list[int]:
        """'modulo': queue q carries q mod 8; but schemes that spread one traffic class over many
        queues (the core says which: `Scheme::one_class`) put every queue in priority 3, the class
        flows use by default, so PFC under them closes all of them (the core's
        `FcConfig::default_prio_map`)."""
        if self.priority != "modulo":
            return list(self.priority)
        if one_class:
            return [3] * self.count
        return [q % 8 for q in range(self.count)]


class Control(Strict):
    """Wire size of each kind of control frame (64 B: a minimum Ethernet frame, what PFC frames are)."""

    pfc: Size = Field(default=64, ge=1, le=65536)
    queue_pause: Size = Field(default=64, ge=1, le=65536)
    credit: Size = Field(default=64, ge=1, le=65536)
    dst_pause: Size = Field(default=64, ge=1, le=65536)
    flow_pause: Size = Field(default=64, ge=1, le=65536)
    other: Size = Field(default=64, ge=1, le=65536)


class Ecn(Strict):
    """RED-style marking at dequeue (HPCC)."""

    enabled: Bool = True
    kmin: Size = Field(default="400KB", ge=0)
    kmax: Size = Field(default="1600KB", ge=0)
    pmax: Float = Field(default=0.2, ge=0, le=1)
    ref_rate: RateOrNone = Field(default="100Gbps", description="kmin/kmax scale with port rate from this rate; 'none' = fixed")
    mark_at: Literal["dequeue", "enqueue"] = Field(
        default="dequeue", description="'dequeue' = against the queue a packet leaves behind (the HPCC simulator); "
        "'enqueue' = against the queue it finds on arrival (DCTCP §3.1)")

    @model_validator(mode="after")
    def _order(self) -> "Ecn":
        if self.kmin > self.kmax:
            raise PydanticCustomError("ecn", "kmin ({a}) is larger than kmax ({b})", {"a": fmt_size(self.kmin), "b": fmt_size(self.kmax)})
        if isinstance(self.ref_rate, int) and self.ref_rate <= 0:
            raise PydanticCustomError("ecn", "ref_rate must be positive", {})
        return self


class Pfc(Strict):
    threshold: Literal["dynamic", "static"] = Field(default="dynamic", description="dynamic = the MMU's alpha x free (HPCC)")
    xoff: Optional[Size] = Field(default=None, gt=0, description="static threshold: pause at this many ingress bytes")
    xon: Optional[Size] = Field(default=None, ge=0, description="static threshold: resume at this many")
    pause_quanta: Int = Field(default=65535, ge=1, le=65535, description="quanta of an XOFF frame (0xFFFF: until resumed)")
    until_resume: Bool = Field(default=False, description="a pause holds until its resume frame and is never refreshed "
                               "(the HPCC simulator); false = quanta, refreshed at half")

    @model_validator(mode="after")
    def _static(self) -> "Pfc":
        if self.threshold == "static":
            if self.xoff is None or self.xon is None:
                raise PydanticCustomError("pfc", "threshold = 'static' needs xoff and xon", {})
            if self.xon > self.xoff:
                raise PydanticCustomError("pfc", "xon is larger than xoff", {})
        return self


class Ppfc(Strict):
    """P-PFC (Tian et al., TPDS 2020). Sections and choices are in the core
    (crates/hopsim-core/src/fc/ppfc.rs)."""

    kmax: SizeOrEcn = Field(default="ecn", description="predict only while an egress queue exceeds Kmax: 'ecn' = "
                            "its port's ECN kmax, as the paper has it (§4.1, Table 2); a size overrides it")
    interval: Time = Field(default="1us", gt=0, description="Algorithm 1 period (§4.1)")
    T: Time = Field(default="100us", gt=0, description="pause when the buffer would fill within T (Table 2)")
    R: Fraction = Field(default=0.8, gt=0, le=1, description="pause ports holding this share of the queue (Table 2)")
    space_left: Literal["shared", "buffer"] = "shared"
    hold: Optional[Time] = Field(default=None, ge=0)
    pause: TimeOrPredicted = Field(default="predicted", description="'predicted' = Algorithm 3's (packets + "
                                   "increment) / egress rate; a time = Fig. 10's fixed pause time")
    increment: Literal["net", "arrivals"] = Field(default="net", description="what increment[port][priority] counts "
                                                  "in Algorithms 1 and 3: 'net' = bytes in less bytes out (§6.3), "
                                                  "'arrivals' = bytes in (§6.1's T_min = B / (P V), §4.4's 'packets in flight')")
    transmission_speed: Literal["egress", "share"] = Field(
        default="egress", description="Algorithm 3's Transmission_speed: 'egress' = the egress port's rate; 'share' = "
        "the ingress's share of it (its bytes / the queue's), so a pause lasts until the whole queue has drained "
        "(Theorem 3.2's bound)")

    _pause_positive = field_validator("pause")(_positive_or("must be a positive time or 'predicted'"))


class Capfc(Strict):
    """CaPFC as P-PFC §2.3/§5.6/§7 describe it (its only source; see crates/hopsim-core/src/fc/capfc.rs)."""

    warn: SizeOrEcn = Field(default="ecn", description="WARN on an egress queue: 'ecn' = its port's ECN kmax (where "
                            "P-PFC's gate opens); or a size")
    resume: Optional[Size] = Field(default=None, ge=0, description="default warn / 2")
    feeder: Size = Field(default=0, ge=0)
    pause_quanta: Int = Field(default=65535, ge=1, le=65535)

    _warn_positive = field_validator("warn")(_positive_or("must be a positive size or 'ecn'"))


class Bfc(Strict):
    """BFC (Goyal et al., NSDI 2022): dynamic queue assignment and per-queue backpressure. The
    defaults and their sections are in the core (crates/hopsim-core/src/fc/bfc.rs). Use
    ``queues.count`` 32 or 128 (one queue is left to the control class) and ``queues.scheduler =
    "rank"`` for the SRF variant."""

    assignment: Literal["dynamic", "stochastic", "single"] = Field(
        default="dynamic", description="dynamic (BFC), stochastic (hash, App. E.4) or single (one queue, §6.1)"
    )
    table_factor: Int = Field(default=100, ge=1, le=1_000_000, description="flow-table entries per queue (App. E.5)")
    sticky_hrtt: Float = Field(default=2.0, ge=0, le=1_000_000, description="sticky threshold in hop RTTs")
    th_hrtt: Float = Field(default=1.0, gt=0, le=1_000_000, description="Th in hop BDPs at the fair drain rate")
    refresh: TimeOrOff = Field(default="1us", description="pause-bitmap refresh period; 'off' = none")
    refresh_when: Literal["faults", "always"] = Field(
        default="faults",
        description="faults: refresh only in runs that can lose frames ([faults]); always: the paper's switch",
    )
    sampling: Fraction = Field(default=1.0, gt=0, le=1, description="share of packets in the bookkeeping (App. E.1)")
    incast_label: Bool = Field(default=False, description="incast flows share one queue per egress (App. E.6)")
    nic_backpressure: Bool = Field(default=True, description="NICs obey pauses; false = BFC - NIC (App. E.1)")
    backpressure: Bool = Field(default=True, description="pause upstream queues at all")
    updown_only: Bool = Field(default=True, description="no backpressure for packets turning back up (App. B)")
    pfc: Bool = Field(default=False, description="standard PFC underneath as a backstop")
    per_flow: Bool = Field(
        default=False, description="ideal per-flow flow control: pause by flow id (give each flow a queue: many queues)"
    )
    lone_packet_pauses: Bool = Field(
        default=True, description="true: any packet above Th may pause its upstream queue (§3.3.2 pseudo-code); false: "
        "not a packet that is its flow-table entry's only one at the switch (the paper's simulator, BFC_NS3_NSDI2022; "
        "the §6.2 scenario files)")
    assign_paused_queues: Bool = Field(
        default=True, description="true: a new flow may get an empty queue its downstream holds paused (§3.3.1's "
        "bitmap of empty queues); false: only an empty queue that is not paused, else a random one (the paper's "
        "simulator, BFC_NS3_NSDI2022; the §6.2 scenario files)")

    hrtt: TimeOrMeasured = Field(
        default="measured", description="the hop RTT Th and the sticky threshold are multiples of: 'measured' = the "
        "largest over the switch's ports (§3.3.2); or a time (the paper's simulator: 2us, with th_hrtt 1.5 and "
        "sticky_hrtt 3; qbb-net-device.cc:1199, 1351)")
    pause_counts_arrival: Bool = Field(
        default=False, description="the pause test counts the arriving packet in its queue (the paper's simulator, "
        "qbb-net-device.cc:907-911, 1200); false: the queue before it (§3.3.1 pseudo-code)")
    pause_delivery: Literal["at_once", "next_refresh"] = Field(
        default="at_once", description="at_once: a pause frame leaves when the counter leaves 0; next_refresh: the "
        "pause rides on the next periodic bitmap frame, sent every `refresh` on every port, and a resume sends the "
        "port's bitmap at once (the paper's simulator, broadcom-node.cc:165-173, qbb-net-device.cc:1209-1245)")
    unlimited_buffer: Bool = Field(
        default=False, description="switch buffers never fill (the paper's simulator admits every packet, "
        "broadcom-node.cc:142-197)")

    nic_queues: Literal["flow_id", "free_list"] = Field(
        default="flow_id", description="a sending NIC's queue for a flow: flow_id = the flow id modulo its queues "
        "(concurrent flows 1,024 ids apart share one); free_list = a free queue from its first packet to its last ACK "
        "(the paper's simulator, qbb-net-device.cc:136-160, 653, 824-827)")
    queue_search: Literal["rotating", "random"] = Field(
        default="rotating", description="where the search for an empty queue starts: rotating = after the queue the "
        "port gave last (§4's rotating start); random = at a random queue each time (the paper's simulator, "
        "qbb-net-device.cc:1294-1303)")
    collision_queue: Literal["random", "per_entry"] = Field(
        default="random", description="the queue of a flow that finds none empty: random (§3.3.1's randomQ); "
        "per_entry = one fixed per flow-table entry (the paper's simulator, qbb-net-device.cc:1305-1308)")
    bitmap_frame: Literal["per_64", "whole"] = Field(
        default="per_64", description="how the pause bitmap goes on the wire: per_64 = a control.queue_pause frame per "
        "64 upstream queues with a paused one; whole = one frame for the port's whole bitmap (the paper's simulator's "
        "1,024-bit frame, pause-header.cc:170, broadcom-node.cc:165-173)")
    flow_index: Literal["fid_hash", "ns3_header"] = Field(
        default="fid_hash", description="a flow's flow-table entry: fid_hash = a hash of its flow id; ns3_header = the "
        "paper's simulator's index of the packet's headers, (source address x 1235 + source port + 13 x the flow's "
        "packets) mod the table's entries, and with collision_queue = 'per_entry' its srand of the entry for the "
        "collision queue (GethqCnt and Assign_hqCnt_qCnt, qbb-net-device.cc:1271-1312); not with per_flow")
    table_entries: Int | None = Field(
        default=None, ge=1, le=1_000_000, description="flow-table entries per egress port; unset: table_factor x the "
        "data queues (the paper's simulator: 7200, hqCnt / pCnt, qbb-net-device.h:50-53)")

    _positive = field_validator("refresh")(_positive_or("must be a positive time or 'off'"))
    _positive_hrtt = field_validator("hrtt")(_positive_or("must be a positive time or 'measured'"))


class Flowsail(Strict):
    """FlowSail: per-flow flow control with as few as two queues per port (hierarchical
    congested-flow identification, rsvQ, order marks). Defaults and their sections are in the core
    (crates/hopsim-core/src/fc/flowsail.rs). ``queues.count`` must be at least 2 (the last is rsvQ)."""

    q_l_hrtt: Float = Field(default=1.0, gt=0, le=1_000_000, description="Q_l in hop BDPs per active queue (§IV-B)")
    q_h_hrtt: Float = Field(default=3.0, gt=0, le=1_000_000, description="Q_h in hop BDPs per active queue (§IV-B)")
    release_hrtt: Float = Field(default=2.0, ge=0, le=1_000_000, description="CFT release after this many hop RTTs")
    pfc: Bool = Field(default=True, description="standard PFC underneath (§VI-B runs every scheme with PFC)")

    @model_validator(mode="after")
    def _order(self) -> "Flowsail":
        if self.q_h_hrtt < self.q_l_hrtt:
            raise PydanticCustomError("flowsail", "q_h_hrtt ({h}) is below q_l_hrtt ({l})", {"h": self.q_h_hrtt, "l": self.q_l_hrtt})
        return self


class Floodgate(Strict):
    """Floodgate (Liu et al., CoNEXT 2021): per-destination credit windows, VOQs for incast,
    delayCredit, PSN-based windows with switchSYN, and the ideal design's dstPause. Defaults and
    sections in the core (crates/hopsim-core/src/fc/floodgate.rs). Queue 0 of every port is the
    non-incast queue, served strictly first (the scheme sets ``queues.scheduler`` so); queues 1..
    are VOQs: use ``queues.count`` of a few dozen."""

    T: Time = Field(default="10us", gt=0, description="credit interval")
    thre_credit_bdp: Float = Field(default=10.0, gt=0, le=1_000_000, description="delayCredit threshold, BDPs")
    delay_credit: Bool = Field(default=True, description="delayCredit (§4.1); off: every credit at its tick (Fig. 14)")
    max_voq: Int = Field(default=100, ge=1, le=MAX_QUEUES, description="VOQs per egress port (per switch with a switch-wide pool)")
    voq_pool: Literal["per_port", "shared", "grouped"] = Field(
        default="per_port",
        description="per_port: VOQs per egress port; shared: one FIFO pool per switch (Fig. 4's deadlock can form); grouped: that pool split up/down on middle-layer switches (§4.2)",
    )
    window: Literal["switch", "port"] = Field(
        default="switch",
        description="switch: one window per destination for the whole switch, spent by every egress port towards it (§7.2's global per-dst window); port: one per (egress port, destination)",
    )
    syn_timeout: Time = Field(default="1ms", gt=0, description="switchSYN after this long without credits")
    dst_pause: Bool = Field(default=False, description="the ideal design: dstPause at the first-hop ToR")
    thre_off_bdp: Float = Field(default=1.0, gt=0, le=1_000_000, description="dstPause above this VOQ length, BDPs")
    thre_on_bdp: Float = Field(default=1.0, gt=0, le=1_000_000, description="dstResume below this VOQ length, BDPs")
    dst_pause_on: Literal["voq", "source_host"] = Field(
        default="voq",
        description="voq: dstPause tests the destination's VOQ length and pauses every source host (§4.3); "
        "source_host: one source host for one destination, on that host's own bytes for it at its ToR (Floodgate-NS3's SRCTOR_DST_PFC)",
    )
    ideal: Bool = Field(default=False, description="the ideal design (§3.2, §6): per-packet credit, window m x BDP, a VOQ per destination, dstPause")
    m: Float = Field(default=1.5, gt=0, le=1_000_000, description="the ideal design's window, next-hop BDPs")
    ideal_delay_credit: Bool = Field(
        default=False, description="delayCredit in the ideal design too (with delay_credit): credits held while the "
        "destination's VOQ bytes pass thre_credit_bdp, all upstreams' released at the first dequeue under it "
        "(Floodgate-NS3 with SWITCH_ACK_TH_M > 0); off: every packet credited at once (§3.2)")
    win_m: Float = Field(default=1.0, gt=0, le=1_000_000, description="the practical window is win_m x BDP_nextHop + C_out x T (paper: 1; Floodgate-NS3's SWITCH_WIN_M)")
    byte_counter: Optional[Size] = Field(
        default=None, gt=0,
        description="also credit at dequeue once this many bytes from an ingress for a destination await credit (Floodgate-NS3's SWTICH_BYTE_COUNTER); unset: on the timer only (§4.1)",
    )
    window_unit: Literal["packets", "bytes"] = Field(
        default="packets",
        description="packets: a packet spends one of the window (§4.2); bytes: its bytes, and it leaves while an MTU-sized "
        "packet still fits (Floodgate-NS3's m_wins)",
    )
    watch_dst: Int | None = Field(default=None, ge=0, description="a host whose window per next hop goes into module_samples (window_pkts)")
    pfc: Bool = Field(default=False, description="standard PFC underneath (appendix B)")
    ecn_counts_voq: Bool = Field(
        default=False, description="ECN marking at a port reads all its data queues, its VOQs included (Floodgate-NS3's "
        "ShouldSendCN reads egress_bytes per port and priority, counted from admission, switch-mmu.cc:138-156, "
        "switch-node.cc:277-301); false: the packet's own queue")
    voq_service: Literal["strict", "egress_fifo"] = Field(
        default="strict", description="strict: VOQs served after the non-incast queue (paper §4.2); egress_fifo: a VOQ "
        "packet joins its egress FIFO once its window allows (Floodgate-NS3: switch-mmu.cc:361-385, voq.cc:100-129; "
        "needs voq_pool shared or grouped)")
    window_fit: Literal["mtu", "own_size"] = Field(
        default="mtu", description="with window_unit bytes, a packet goes while an MTU-sized packet (mtu) or its own "
        "size (own_size, Floodgate-NS3's CheckDstWin, switch-mmu.cc:252-263; needs voq_pool shared or grouped) fits")


class PfcTag(Strict):
    """PFC w/ tag (Floodgate appendix B): pause frames tagged with the destination in incast, sent
    hop by hop to the upstreams that feed its queue; upstreams hold that destination's packets in
    a VOQ while paused. Core: crates/hopsim-core/src/fc/pfc_tag.rs. Queue 0 is served strictly
    first (the scheme sets ``queues.scheduler`` so); use ``queues.count`` of a few dozen."""

    pause_bdp: Float = Field(default=1.0, gt=0, le=1_000_000, description="pause above this queue length, BDPs of the upstream hop")
    resume_bdp: Float = Field(default=0.5, gt=0, le=1_000_000, description="resume below this, BDPs")
    max_voq: Int = Field(default=100, ge=1, le=MAX_QUEUES, description="VOQs per egress port")


# The scheme tables built from the core's registry (`registry`): a scheme's table from its
# declaration alone, and the tagged [flow_control] / [congestion_control] models.


def _field_type(value: Any, unit: str | None) -> Any:
    if unit is not None:
        return {"bytes": Size, "time": Time, "rate": Rate}[unit]
    if isinstance(value, bool):
        return Bool
    if isinstance(value, int):
        return Int
    if isinstance(value, float):
        return Float
    if isinstance(value, str):
        return str
    return Optional[Any]


def generated_model(entry: dict[str, Any], kind: str) -> type:
    """The model of an entry's table from its declaration alone: one field per parameter, typed
    by its unit (``"100KB"``, ``"5us"``, ``"100Gbps"``) or by its default's JSON type, with the
    core's default. Ranges are the core's to check (it names the field)."""
    human = {"bytes": fmt_size, "time": fmt_time, "rate": fmt_rate}
    defs = {}
    for name, v in registry.fields(entry, kind).items():
        unit = entry["units"].get(name)
        # a default with a unit is written as a scenario writes it ("100KB"): a bare number is
        # ambiguous there
        default = human[unit](v) if unit is not None and v is not None else v
        defs[name] = (_field_type(v, unit), Field(default=default, description=f"see the core's `{entry['name']}` module"))
    title = "".join(p.title() for p in entry["name"].split("_"))
    model = create_model(title, __base__=Strict, **defs)  # type: ignore[call-overload]
    model.__doc__ = entry["about"]
    return model


def tagged_model(name: str, kind: str, tag: str, models: dict[str, type], tag_field: Any, doc: str | None = None,
                 **extra: Any) -> type:
    """A scenario's ``[flow_control]`` or ``[congestion_control]`` model: the tag, `extra` fields,
    and one sub-table per entry with parameters (its model from `models`, or generated)."""
    tables: dict[str, Any] = {}
    for e in registry.entries(kind):
        if e["name"] in extra:
            continue
        m = models.get(e["name"]) or (generated_model(e, kind) if registry.fields(e, kind) else None)
        if m is not None:
            tables[e["name"]] = (m, Field(default_factory=m))
    model = create_model(name, __base__=Strict, **{tag: tag_field}, **extra, **tables)  # type: ignore[call-overload]
    if doc:
        model.__doc__ = doc
    return model


FC_MODELS: dict[str, type[Strict]] = {"ppfc": Ppfc, "capfc": Capfc, "bfc": Bfc, "flowsail": Flowsail,
                                       "floodgate": Floodgate, "pfc_tag": PfcTag}
"""Schemes whose table has a model written here (ranges, keywords, descriptions); every other
scheme's table is generated from the core's declaration (`generated_model`)."""

FC_SCHEMES = registry.names("flow_control")
"""Every scheme the core has, in its registry's order."""

FC_TABLES = registry.with_table("flow_control")
"""The schemes with a parameter table (`[flow_control.<scheme>]`), handed to the core whole."""

FlowControl = tagged_model(
    "FlowControl", "flow_control", "scheme", FC_MODELS,
    tag_field=(Literal[FC_SCHEMES], Field(  # type: ignore[valid-type]
        default="pfc", description="ideal_fq: a queue per flow, no backpressure, an unlimited buffer (BFC §6.2.1's Ideal-FQ)")),
    pfc=(Pfc, Field(default_factory=Pfc, description="standard PFC; also the safety net under ppfc, capfc, bfc")),
)


class Dcqcn(Strict):
    """DCQCN reaction point."""

    rai_at_40g: Rate = Field(default="40Mbps", ge=0, description="R_AI at 40 Gb/s, scaled with line rate (P-PFC Table 2)")
    rhai_at_40g: Rate = Field(default="400Mbps", ge=0, description="R_HAI = 10 x R_AI (HPCC run.py)")
    g: Float = Field(default=1 / 256, ge=0, le=1, description="alpha EWMA gain (P-PFC Table 2)")
    rate_increase_timer: Time = Field(default="55us", ge=0, description="(P-PFC Table 2)")
    alpha_timer: Time = Field(default="55us", ge=0, description="(HPCC AlphaResumInterval)")
    byte_counter: Size = Field(default="10MB", ge=0, description="(P-PFC Table 2); 0 = off")
    fast_recovery_stages: Int = Field(default=5, ge=0, le=1000, description="F (HPCC FastRecoveryTimes)")
    rate_decrease_interval: Time = Field(default="4us", ge=0, description="(HPCC RateDecreaseInterval)")
    min_rate: Rate = Field(default="100Mbps", ge=0, description="(HPCC MinRate)")
    clamp_target_rate: Bool = False
    model: Literal["paper", "mlx"] = Field(
        default="paper", description="'paper' = DCQCN §3 as the papers run it; 'mlx' = the HPCC simulator's Mellanox "
        "model (periodic alpha and decrease checks, no cut on the first CNP, timer-only recovery)")
    rate_on_first_cnp: Float = Field(default=1.0, gt=0, le=1, description="'mlx': Rc = Rt = this x Rc on the first CNP "
                                     "(HPCC RateOnFirstCnp)")
    rai: RateOrNone = Field(default="none", description="absolute R_AI, replacing rai_at_40g's scaling (HPCC RATE_AI)")
    rhai: RateOrNone = Field(default="none", description="absolute R_HAI, replacing rhai_at_40g's scaling (HPCC RATE_HAI)")


class DctcpRate(Strict):
    """The HPCC simulator's rate-based RDMA DCTCP (its CC_MODE 8): alpha per window of data from
    the ECN echoes, one cut Rc x (1 - alpha/2) per window, an additive step per window otherwise."""

    g: Float = Field(default=1 / 16, ge=0, le=1, description="alpha EWMA gain (EWMA_GAIN)")
    rai: Rate = Field(default="1000Mbps", ge=0, description="additive step per window (DCTCP_RATE_AI)")
    min_rate: Rate = Field(default="100Mbps", ge=0, description="(MIN_RATE)")


class Dctcp(Strict):
    """DCTCP in the window-based transport mode. Pair it with step marking at K (``[ecn]`` kmin =
    kmax = K, pmax = 1; DCTCP §3.4: 65 packets at 10 Gb/s) and, for plain TCP windows,
    ``transport.window = "off"``."""

    g: Float = Field(default=1 / 16, gt=0, le=1, description="alpha EWMA gain (DCTCP §3.4: 1/16)")
    initial_alpha: Float = Field(default=1.0, ge=0, le=1, description="alpha before the first estimate (RFC 8257 §3.3)")
    start: Literal["line_rate", "slow_start"] = Field(
        default="line_rate", description="line_rate: cwnd = 1 BDP (BFC §6); slow_start: from initial_window (BFC App. D)"
    )
    initial_window: Int = Field(default=10, ge=1, le=1_000_000, description="packets, for slow_start (RFC 6928)")


class Timely(Strict):
    """TIMELY (RTT gradient)."""

    alpha: Float = Field(default=0.875, ge=0, le=1, description="EWMA weight of the newest RTT difference")
    beta: Float = Field(default=0.8, ge=0, le=1, description="multiplicative decrease (TIMELY: 0.8)")
    t_low: Time = Field(default="50us", ge=0, description="always increase below (TIMELY: 50 us)")
    t_high: Time = Field(default="500us", ge=0, description="always decrease above (TIMELY: 500 us)")
    min_rtt: Time = Field(default="20us", gt=0, description="normalises the gradient (HPCC TimelyMinRtt)")
    delta_at_10g: Rate = Field(default="10Mbps", ge=0, description="additive step at 10 Gb/s, scaled with line rate")
    hai_at_10g: Rate = Field(default="50Mbps", ge=0, description="hyperactive step at 10 Gb/s (5 x delta), scaled")
    hai_after: Int = Field(default=5, ge=0, le=1_000_000, description="increases in a row before hyperactive steps")
    min_rate: Rate = Field(default="100Mbps", ge=0, description="(HPCC MinRate)")
    rai: RateOrNone = Field(default="none", description="absolute additive step, replacing delta_at_10g (HPCC RATE_AI)")
    rhai: RateOrNone = Field(default="none", description="absolute hyperactive step, replacing hai_at_10g (HPCC RATE_HAI)")

    @model_validator(mode="after")
    def _order(self) -> "Timely":
        if self.t_low > self.t_high:
            raise PydanticCustomError("timely", "t_low ({a}) is above t_high ({b})", {"a": fmt_time(self.t_low), "b": fmt_time(self.t_high)})
        return self


class IntHeader(Strict):
    """HPCC's INT header on the wire: ``max_hops x hop_bytes + base_bytes`` on every data packet and
    ACK."""

    hop_bytes: Size = Field(default=8, ge=0, le=4096)
    base_bytes: Size = Field(default=2, ge=0, le=4096)
    max_hops: Int = Field(default=5, ge=1, le=8, description="records a packet collects and the header holds")


class Hpcc(Strict):
    """HPCC: window and rate from INT."""

    eta: Float = Field(default=0.95, gt=0, le=1, description="target utilisation (HPCC §3.3)")
    max_stage: Int = Field(default=5, ge=0, le=1_000_000, description="maxStage (HPCC §3.3)")
    rai_at_25g: Rate = Field(default="10Mbps", ge=0, description="W_AI as a rate at 25 Gb/s, scaled (HPCC run.py)")
    fast_react: Bool = Field(default=True, description="react on every ACK (HPCC simulator FAST_REACT 1)")
    min_rate: Rate = Field(default="100Mbps", ge=0, description="(HPCC MinRate)")
    base_rtt: TimeOrFlow = Field(default="flow", description="T: 'flow' = each flow's unloaded RTT, or a time")
    int_header: IntHeader = Field(default_factory=IntHeader)
    rai: RateOrNone = Field(default="none", description="absolute W_AI rate, replacing rai_at_25g's scaling (HPCC RATE_AI)")
    window: SizeOrNone = Field(default="none", description="the simulator's m_win (bytes; its maxBdp under GLOBAL_T): "
                               "the queue term uses qlen x B_nic / (B x window) and the window is window x R / B_nic")
    multi_rate: Bool = Field(default=False, description="per-hop U, reference rate and stage; send at the slowest (MULTI_RATE)")
    sample_feedback: Bool = Field(default=False, description="fast reaction skips hops reporting an empty queue (SAMPLE_FEEDBACK)")
    int_multi: Int = Field(default=0, ge=0, le=1_000_000, description="round INT qlen to 80 x this and txBytes to 128 x "
                           "this bytes, as the simulator's switches (INT_MULTI); 0 = exact")

    _positive = field_validator("base_rtt")(_positive_or("must be a positive time or 'flow'"))


class Ein(Strict):
    """Pulser's switch-side incast detection (Algorithm 1)."""

    n: Int = Field(default=50, ge=1, le=1_000_000, description="N: dequeues averaged")
    threshold: Fraction = Field(default=0.25, ge=0, le=100, description="EIN_threshold as a fraction of line rate")
    high_water_mark: SizeOrEcn = Field(default="ecn", description="HighWaterMark; 'ecn' = the port's ECN kmin (Pulser §III-A)")


class Pulser(Strict):
    """Pulser: DCTCP plus EIN (Almasi et al.)."""

    cwnd_safe: Int = Field(default=4, ge=1, le=1_000_000, description="packets (Pulser §III-B)")
    dctcp: Dctcp = Field(default_factory=Dctcp)
    ein: Ein = Field(default_factory=Ein)


class Ictcp(Strict):
    """ICTCP: receiver-side receive-window control."""

    alpha: Float = Field(default=0.9, ge=0, le=1, description="share of the link ICTCP fills (control trigger)")
    beta: Float = Field(default=0.75, ge=0, le=1, description="weight of the old throughput in its EWMA")
    gamma1: Float = Field(default=0.1, ge=0, le=1, description="increase below this throughput-difference ratio")
    gamma2: Float = Field(default=0.5, ge=0, le=1, description="decrease above this ratio")
    decrease_after: Int = Field(default=3, ge=1, le=1000, description="RTTs above gamma2 before a decrease")
    initial_rwnd: Int = Field(default=2, ge=1, le=1_000_000, description="packets advertised at the start")
    min_rwnd: Int = Field(default=2, ge=1, le=1_000_000, description="packets: the smallest window advertised")
    slow_start: Bool = Field(default=True, description="double the window per increase until the first decrease")
    fairness: Bool = Field(default=True, description="fairness controller: larger-than-average windows give back one MSS")
    fairness_threshold: Float = Field(default=0.2, ge=0, le=1, description="BW_A below this share of C triggers it")
    initial_window: Int = Field(default=10, ge=1, le=1_000_000, description="the sender TCP's initial window, packets")

    @model_validator(mode="after")
    def _order(self) -> "Ictcp":
        if self.gamma1 > self.gamma2:
            raise PydanticCustomError("ictcp", "gamma1 ({a}) is above gamma2 ({b})", {"a": self.gamma1, "b": self.gamma2})
        if self.initial_rwnd < self.min_rwnd:
            raise PydanticCustomError("ictcp", "initial_rwnd is below min_rwnd", {})
        return self


class Ideal(Strict):
    """Pulser's Ideal (§IV): an oracle books every packet a path on which it is never queued and holds
    it at the sender until then. No parameters; run it with ``flow_control.scheme = "none"`` and
    ``transport.window = "off"``."""


CC_MODELS: dict[str, type[Strict]] = {"dcqcn": Dcqcn, "dctcp": Dctcp, "dctcp_rate": DctcpRate, "timely": Timely,
                                       "hpcc": Hpcc, "pulser": Pulser, "ictcp": Ictcp, "ideal": Ideal}
"""Algorithms whose table has a model written here; the others' are generated from the core."""

CC_ALGORITHMS = registry.names("congestion_control")
"""Every congestion control the core has, in its registry's order."""

CC_TABLES = registry.with_table("congestion_control")
"""The algorithms with a parameter table, handed to the core whole."""

CongestionControl = tagged_model(
    "CongestionControl", "congestion_control", "algorithm", CC_MODELS,
    tag_field=(Literal[CC_ALGORITHMS], "none"),  # type: ignore[valid-type]
    doc="End-host congestion control; the table named by ``algorithm`` holds its parameters.",
)


class Tcp(Strict):
    """The TCP transport (``transport.mode = "tcp"``; the core's ``net/tcp.rs``): cumulative ACKs
    over a SACK-less receive buffer, fast retransmit, NewReno recovery, the RFC 6298 timer.
    Defaults are ns-3's ``TcpSocketBase``, which the Pulser paper's simulations ran on."""

    min_rto: Time = Field(default="1s", gt=0, description="lower bound of the RTO (ns-3 MinRto 1 s; Linux 200 ms)")
    initial_rto: Time = Field(default="1s", gt=0, description="RTO before the first RTT sample (RFC 6298 §2.1)")
    max_rto: Time = Field(default="60s", gt=0, description="upper bound of the RTO and its backoff (RFC 6298 §2.5)")
    clock_granularity: Time = Field(default="1ms", ge=0, description="RFC 6298's G: RTO >= SRTT + G (ns-3: 1 ms)")
    dupack_threshold: Int = Field(default=3, ge=1, le=1000, description="duplicate ACKs that trigger fast retransmit")
    delayed_ack: Int = Field(default=1, ge=1, le=1000, description="ACK every this many segments (1 = each; ns-3's "
                             "DelAckCount is 2)")
    delayed_ack_timeout: Time = Field(default="200ms", gt=0, description="longest wait of a delayed ACK (ns-3: 200 ms)")

    @model_validator(mode="after")
    def _order(self) -> "Tcp":
        if self.max_rto < self.min_rto:
            raise PydanticCustomError("tcp", "max_rto ({a}) is below min_rto ({b})", {"a": fmt_time(self.max_rto), "b": fmt_time(self.min_rto)})
        return self


TCP_ALGORITHMS = ("none", "dctcp", "pulser", "ictcp", "ideal")
"""The congestion controls that run over ``transport.mode = "tcp"`` (window-based, or none)."""


class HostRateCap(Strict):
    host: NodeId
    rate: Rate = Field(gt=0)


class Transport(Strict):
    """Hosts: RoCE-style (go-back-N, an ACK per packet) or TCP (``mode``, ``tcp``)."""

    mode: Literal["roce", "tcp"] = Field(
        default="roce", description="'roce' = go-back-N with receiver NACKs and a fixed RTO; 'tcp' = cumulative ACKs, "
        "fast retransmit, NewReno, RFC 6298 RTO (for dctcp, pulser, ictcp, ideal, none)")
    tcp: Tcp = Field(default_factory=Tcp, description="the TCP transport's settings (used with mode = 'tcp')")

    mtu: Size = Field(default=1000, ge=64, le=65536, description="payload bytes per data packet (HPCC PACKET_PAYLOAD_SIZE 1000)")
    header: Size = Field(default=48, ge=0, le=4096, description="header bytes on the wire per data packet")
    ack: Size = Field(default=60, ge=1, le=4096, description="wire size of ACK, NACK and CNP")
    window: Window = Field(
        default="bdp",
        description="'bdp' (1 BDP in flight, as the papers add), 'off', or bytes; caps TCP-style windows too",
    )
    rto: TimeOrZeroOff = Field(default="1ms", description="retransmission timeout; 'off' = NACKs alone repair loss "
                               "(the HPCC simulator has no RTO)")
    nack_interval: Time = Field(default="500us", ge=0, description="(HPCC: 500 us)")
    cnp_interval: Time = Field(default="50us", ge=0, description="(DCQCN / P-PFC Table 2: 50 us)")
    nic_queues: Int = Field(default=8, ge=1, le=MAX_QUEUES, description="NIC queues (gates) the host half of a scheme uses")
    ack_min: Size = Field(default=0, ge=0, le=4096, description="pad ACKs and NACKs to at least this (HPCC simulator: 48 B)")
    ack_every: Int = Field(default=1, ge=1, le=1_000_000, description="an ACK for every N in-order data packets (from "
                           "the (N+1)th on) and the last; 1 = every packet. The BFC paper's simulator: 256 (L2AckInterval, "
                           "qbb-net-device.cc:1117-1128)")
    cnp: Literal["packet", "ack_flag"] = Field(
        default="packet", description="'packet' = CNP packets, one per cnp_interval; 'ack_flag' = a flag on the ACK of every "
        "marked packet (the HPCC simulator)")
    cnp_timing: Literal["since_last", "flow_clock"] = Field(
        default="since_last", description="'since_last' = a CNP for a marked packet if none went in the last "
        "cnp_interval (DCQCN §3); 'flow_clock' = on a per-flow clock from its first packet (ns3-rdma, the P-PFC paper's "
        "simulator)")
    ack_priority: Literal["control", "data"] = Field(
        default="control", description="'control' = strict-priority control queue; 'data' = the flow's data queue, "
        "buffered and paused like data (the HPCC simulator's ACK_HIGH_PRIO 0)")
    ack_pause_at_nic: Bool = Field(default=True, description="with ack_priority 'data': the NIC holds ACKs while their "
                                   "priority is paused (HPCC ACK_HIGH_PRIO 0); false = never (ACK_HIGH_PRIO 1)")
    window_by_rate: Bool = Field(default=False, description="scale the in-flight cap by rate / line rate (HPCC VAR_WIN 1)")
    repace_on_rate_change: Bool = Field(default=False, description="move the next send time when the rate changes "
                                        "(the HPCC simulator's ChangeRate, in its HPCC mode)")
    pace_at_rate: Bool = Field(default=True, description="pace at the congestion control's rate; false = line rate "
                               "(HPCC RATE_BOUND 0)")
    rate_cap: RateOrNone = Field(default="none", description="every host paces each flow at no more than this (issue "
                                 "13: P-PFC Fig. 9a's per-host rates); 'none' = no cap")
    host_rate_caps: list[HostRateCap] = Field(default=[], description="per-host caps, [{host = 5, rate = '20Gbps'}], "
                                              "overriding rate_cap; a flow's own rate_cap below its host's wins")

    _cap_positive = field_validator("rate_cap")(_positive_or("must be a rate above 0 or 'none'"))

    _rto_positive = field_validator("rto")(_positive_or("must be a positive time or 'off'"))
    _window_positive = field_validator("window")(_positive_or(
        "0 bytes would let nothing be sent; allowed: bytes above 0 (e.g. '64KB'), 'bdp' or 'off'"))


class Routing(Strict):
    """How switches spread flows over equal-cost paths."""

    ecmp: Literal["hopsim", "hpcc", "ns3_global"] = Field(
        default="hopsim", description="'hopsim' = a per-switch mix of the flow's hash; 'hpcc' = the HPCC simulator's "
        "MurmurHash3 of addresses and ports seeded by the switch id; 'ns3_global' = ns-3 global routing's flow ECMP as "
        "the BFC simulator runs it (a XOR of its hosts' addresses, the ports and each flow's priority group, a flow "
        "file's seventh field): imported runs take the seed simulator's paths")
    neighbour_order: Literal["ascending", "descending"] = Field(
        default="ascending", description="with ecmp = 'hpcc' or 'ns3_global': the order in which the seed simulator's route "
        "computation meets a node's neighbours (its maps are keyed by node pointers), which orders each switch's "
        "next hops: 'ascending' node id (the HPCC simulator), 'descending' (Floodgate-NS3's runs)")
    ack_path: Literal["hash", "reverse"] = Field(
        default="hash", description="how ACKs, NACKs and CNPs cross the fabric: 'hash' = by their own ECMP hash (the "
        "HPCC simulator's way); 'reverse' = back through the ports their flow's data came in by (Floodgate-NS3's "
        "SYMMETRIC_ROUTING_MODE 1)")


class Aqm(Strict):
    """Marking and telemetry at every switch egress beyond ECN, each its own setting. 'auto' = what
    the congestion control is designed with (EIN for Pulser, INT for HPCC); parameters stay in
    ``congestion_control.pulser.ein`` and ``congestion_control.hpcc.int_header``."""

    ein: Literal["auto", "on", "off"] = Field(default="auto", description="Pulser's Explicit Incast Notification")
    int: Literal["auto", "on", "off"] = Field(default="auto", description="HPCC's in-band telemetry records")


class QlenMonitor(Strict):
    """The HPCC simulator's queue-length histograms (its qlen.txt, ``monitor_buffer`` in third.cc):
    every ``interval`` from ``start``, each switch port's egress bytes add one to the bucket
    bytes/1000 of that port's histogram; at samples whose absolute time (run time +
    ``time_offset``) is a multiple of ``dump_interval`` the cumulative histograms go into the
    ``qlen`` table. Times ``start`` and ``end`` are run times, as ``duration`` is (the HPCC
    simulator's QLEN_MON_START and QLEN_MON_END less the flow file's time offset)."""

    start: Time = Field(default="0us", ge=0, description="run time of the first sample")
    end: TimeOrRunEnd = Field(
        default="run_end",
        description="samples go on while one is taken before this run time (the last is the first at or after it); "
        "'run_end' = until the run ends. With a time, a run whose flows all finished earlier is sampled on to it "
        "(at most to `duration`) with its last, idle, state, as the HPCC simulator running to its stop time is",
    )
    interval: Time = Field(default="100ns", gt=0, description="time between samples (HPCC: 100 ns)")
    dump_interval: Time = Field(default="100ms", gt=0, description="histograms are written at samples whose absolute "
                                "time is a multiple of this (HPCC: 100 ms)")
    time_offset: Time = Field(default="0us", ge=0, description="added to run times to give absolute times: the HPCC "
                              "flow file's offset (its flows start at 2 s), as workload.time_offset")


class Trace(Strict):
    """Enqueue, dequeue, drop and ECN-mark events at switches of the data packets of these flows or
    at these ports (the ``trace`` table; the HPCC simulator's mix.tr as trace_reader prints it)."""

    flows: list[Annotated[Int, Field(ge=0, lt=2**32)]] = Field(default_factory=list, description="flow ids")
    ports: list[tuple[NodeId, Annotated[Int, Field(ge=0, le=65535)]]] = Field(
        default_factory=list, description="[switch node, local port] pairs: packets leaving by them"
    )


class Latency(Strict):
    """Per-packet one-way latency (the core's ``stats/latency.rs``): from the start of a data
    packet's first transmission at the sender's NIC to the arrival of its last bit at the receiver,
    kept per class (``all``, ``incast``, ``non-incast``, and with ``size_edges`` each of those by
    flow-size bucket) in log-linear histograms whose quantiles are within 1/256 of the exact
    sample's value; the ``latency`` table has count, min, p50, p95, p99, max and mean per class.
    With ``per_hop``, also the queueing time at each switch egress (admission to the start of
    serialisation, VOQs included) by hop class and tag: ``queueing at agg-down, incast``,
    ``queueing at tor-up, non-incast``, ``queueing at tor-up, non-incast to an incast
    destination`` (untagged flows to a host an incast goes to), ...
    The P-PFC paper's "tail latency" (§5.1 Fig. 6, §5.6 Fig. 16) and average / 50%ile latency
    (Fig. 19)."""

    size_edges: list[Size] = Field(default_factory=list, description="flow-size bucket edges, rising (e.g. "
                                   "['100KB', '1MB']); empty = classes by incast tag only")
    sent_from: Time = Field(default="0us", ge=0, description="count packets sent at or after this run time")
    sent_until: TimeOrRunEnd = Field(default="run_end", description="... and before this one (P-PFC Fig. 19: 'the "
                                     "first 1500 microseconds'); 'run_end' = to the end of the run")
    per_hop: Bool = Field(default=False, description="also each packet's queueing time at every switch egress, by hop "
                          "class and tag: classes 'queueing at tor-up, non-incast', ... (Floodgate Fig. 11b)")

    @field_validator("size_edges")
    @classmethod
    def _rising(cls, v: list[int]) -> list[int]:
        for i, (a, b) in enumerate(zip(v, v[1:])):
            if b <= a:
                raise PydanticCustomError("rising", "edge {i} ({b} bytes) is not above edge {j} ({a} bytes); allowed: "
                                          "sizes above 0, strictly rising", {"i": i + 1, "j": i, "a": a, "b": b})
        if v and v[0] <= 0:
            raise PydanticCustomError("rising", "allowed: sizes above 0, strictly rising", {})
        return v

    @model_validator(mode="after")
    def _window(self) -> "Latency":
        if isinstance(self.sent_until, int) and self.sent_until <= self.sent_from:
            raise PydanticCustomError("window", "sent_until ({u} ps) is not after sent_from ({f} ps)",
                                      {"u": self.sent_until, "f": self.sent_from})
        return self


def _on_off_table(x: Any) -> Any:
    """``true`` = on with every default (``{}``), ``false`` = off, a table = on with its settings."""
    if x is True:
        return {}
    if x is False:
        return None
    return x


class Record(Strict):
    buffer_interval: TimeOrOff = Field(default="10us", description="switch and port buffer samples; 'off' = none")
    queue_ports: list[tuple[NodeId, Annotated[Int, Field(ge=0, le=65535)]]] = Field(
        default_factory=list, description="[node, local port] pairs whose queue length is recorded"
    )
    queue_interval: Time = Field(default="1us", gt=0)
    qlen_monitor: Optional[QlenMonitor] = Field(
        default=None, description="the HPCC simulator's queue-length histograms; omitted = off (`qlen_monitor = {}`: on, "
        "every default)"
    )
    trace: Optional[Trace] = Field(default=None, description="per-packet switch events of chosen flows and ports; omitted = off")
    latency: Annotated[Optional[Latency], BeforeValidator(_on_off_table)] = Field(
        default=None, description="per-packet one-way latency by flow class (the `latency` table); true or a table "
        "(`{ size_edges = [...] }`) = on, omitted or false = off"
    )
    cwnd_flows: list[Annotated[Int, Field(ge=0, lt=2**32)]] = Field(
        default_factory=list, description="flow ids whose congestion window and in-order delivered bytes are sampled "
        "every buffer_interval into the cwnd table (Pulser Fig. 6; a flow's throughput over time, FlowSail Fig. 9)")

    _positive = field_validator("buffer_interval")(_positive_or("must be a positive time or 'off'"))


class LinkLoss(Strict):
    link: tuple[NodeId, NodeId] = Field(description="the link's two end nodes (every parallel link between them)")
    rate: Fraction = Field(ge=0, le=1, description="probability that a packet crossing it is lost, each direction")


class LinkEvent(Strict):
    at: Time = Field(ge=0, description="run time of the event")
    link: tuple[NodeId, NodeId] = Field(description="the link's two end nodes (every parallel link between them)")
    state: Literal["down", "up"] = Field(description="'down': the link fails; 'up': it comes back")


class Faults(Strict):
    """Faults in the simulated network (the core's ``faults.rs``): random loss of the packets
    crossing links (any packet: data, ACKs, control frames; drawn from a stream per link
    direction, derived from the master seed) and links going down and up. A link going down loses
    what is queued at both its ends and on its wire, routes are computed again without it (ECMP
    leaves it out; packets for a destination left unreachable are dropped), and its pauses are
    lifted. Drops are counted by cause (``drops_loss``, ``drops_link_down``,
    ``drops_unreachable``) in the summary's counters and per port. Off by default."""

    loss_rate: Fraction = Field(default=0.0, ge=0, le=1, description="loss probability of every link, each direction "
                                "(the HPCC simulator's ERROR_RATE_PER_LINK)")
    link_loss: list[LinkLoss] = Field(default_factory=list, description="links with a loss rate of their own, "
                                      "overriding loss_rate: [{link = [a, b], rate = '1%'}]")
    link_events: list[LinkEvent] = Field(default_factory=list, description="links going down or up: "
                                         "[{at = '1ms', link = [a, b], state = 'down'}] (the HPCC simulator's LINK_DOWN)")

    def is_off(self) -> bool:
        return self.loss_rate == 0 and not self.link_loss and not self.link_events


# ----------------------------------------------------------------------------- scenario


class ScenarioModel(Strict):
    """A whole scenario file."""

    name: str = ""
    description: str = ""
    seed: Int = Field(default=1, ge=0, lt=2**64, description="master seed: same scenario + seed, same results")
    duration: Optional[Time] = Field(default=None, gt=0, description="stop time; omitted = until every flow finishes")
    stall_timeout: Annotated[
        Union[Literal["auto", "off"], int],
        BeforeValidator(_wrap(parse_time, ("auto", "off"))),
        PlainSerializer(_ser(fmt_time), when_used="json"),
    ] = Field(default="auto", description="stop a run that delivers no data for this long with flows unfinished "
              "(reported as no_progress or deadlock); 'auto' = 10 x RTO + 100 x the largest base RTT; 'off' = never")
    tx_time: Literal["exact", "whole_ns"] = Field(
        default="exact", description="transmission times on every link and in the NICs' pacing: exact (to the "
        "picosecond); whole_ns = ns-3's at its default 1 ns resolution, cut down to whole nanoseconds as its "
        "Seconds(rate.CalculateTxTime(bytes)) does (the HPCC, Floodgate and BFC simulators)")
    topology: Topology
    workload: Workload
    buffer: Buffer = Field(default_factory=Buffer)
    queues: Queues = Field(default_factory=Queues)
    control: Control = Field(default_factory=Control)
    ecn: Ecn = Field(default_factory=Ecn)
    aqm: Aqm = Field(default_factory=Aqm)
    flow_control: FlowControl = Field(default_factory=FlowControl)
    congestion_control: CongestionControl = Field(default_factory=CongestionControl)
    transport: Transport = Field(default_factory=Transport)
    routing: Routing = Field(default_factory=Routing)
    record: Record = Field(default_factory=Record)
    faults: Faults = Field(default_factory=Faults)

    _stall_positive = field_validator("stall_timeout")(_positive_or(
        "0 would stop every run at its first check as making no progress; allowed: a time above 0, 'auto' or 'off'"))

    @model_validator(mode="after")
    def _cross(self) -> "ScenarioModel":
        if self.stall_timeout == "off" and self.duration is None:
            raise PydanticCustomError(
                "stall_timeout", "stall_timeout = 'off' with no `duration`: a run that deadlocks or stalls would never "
                "end; set `duration` (the stop time) too, or keep stall_timeout = 'auto' or a time", {}
            )
        if self.transport.mode == "tcp" and self.congestion_control.algorithm not in TCP_ALGORITHMS:
            raise PydanticCustomError(
                "transport", "transport.mode: 'tcp' carries window-based congestion controls; allowed with it: {allowed} "
                "(congestion_control.algorithm is '{a}', which runs on 'roce')",
                {"allowed": ", ".join(TCP_ALGORITHMS), "a": self.congestion_control.algorithm},
            )
        if isinstance(self.workload, LongLivedWorkload) and self.duration is None and self.workload.size >= 2**40:
            raise PydanticCustomError(
                "duration", "long-lived flows never finish: set `duration` (the stop time)", {}
            )
        if isinstance(self.workload, DcMixWorkload):
            if self.topology.kind != "multi_dc":
                raise PydanticCustomError(
                    "workload", "workload.kind 'dc_mix' needs topology.kind 'multi_dc' (got '{k}')", {"k": self.topology.kind}
                )
            if self.workload.long_flows > 0 and self.duration is None:
                raise PydanticCustomError(
                    "duration", "workload.long_flows never finish: set `duration` (the stop time)", {}
                )
        return self



# ----------------------------------------------------------------------------- field descriptions

_KIND = "selects this form of the table (the fields below are this form's)"

_DESCRIPTIONS: dict[tuple[str, str], str] = {
    ("ScenarioModel", "name"): "the scenario's name in run folders and reports; default: the file's name",
    ("ScenarioModel", "description"): "free text kept with the scenario",
    ("ScenarioModel", "queues"): "the data queues of every port: how many, their priorities and their scheduler",
    ("ScenarioModel", "flow_control"): "the per-hop flow-control scheme (`scheme`) and the parameter tables of the schemes",
    ("ScenarioModel", "record"): "what a run records besides the flow table: buffer and queue samples, traces, histograms",
    ("Star", "hosts"): "hosts, each on its own link to the one switch",
    ("Star", "rate"): "rate of every link",
    ("Star", "delay"): "propagation delay of every link",
    ("Dumbbell", "left"): "hosts on the left switch (the senders' side)",
    ("Dumbbell", "right"): "hosts on the right switch",
    ("Dumbbell", "host_rate"): "rate of each host's link",
    ("Dumbbell", "bottleneck_rate"): "rate of the link between the two switches",
    ("Dumbbell", "delay"): "propagation delay of every link",
    ("LeafSpineParams", "hosts_per_tor"): "hosts under each ToR (leaf) switch",
    ("LeafSpineParams", "tors"): "ToR (leaf) switches",
    ("LeafSpineParams", "spines"): "spine switches; every ToR links to every spine",
    ("LeafSpineParams", "host_rate"): "rate of each host's link to its ToR",
    ("LeafSpineParams", "fabric_rate"): "rate of each ToR-spine link",
    ("LeafSpineParams", "host_delay"): "propagation delay of each host link",
    ("LeafSpineParams", "fabric_delay"): "propagation delay of each ToR-spine link",
    ("LeafSpineParams", "links_per_spine"): "parallel links between each ToR and each spine",
    ("FatTree", "k"): "switch radix (even): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores",
    ("FatTree", "hosts_per_edge"): "hosts under each edge switch; default k/2 (full bisection)",
    ("FatTree", "host_rate"): "rate of each host's link",
    ("FatTree", "fabric_rate"): "rate of each switch-to-switch link",
    ("FatTree", "delay"): "propagation delay of every link",
    ("MultiDc", "gateway_rate"): "rate of each DC's links to its gateway switch",
    ("MultiDc", "gateway_delay"): "propagation delay of those links",
    ("MultiDc", "long_rate"): "rate of the long link between the two gateways",
    ("MultiDc", "long_delay"): "one-way propagation delay of the long link",
    ("HpccTopology", "file"): "the topology file: a path relative to the scenario file, or absolute",
    ("Explicit", "nodes"): "node ids 0 .. nodes-1",
    ("Explicit", "switches"): "the ids that are switches; the rest are hosts",
    ("Explicit", "tiers"): "each switch's tier, in the order of switches (0 = ToR, 1 = aggregation/spine, 2 = core); default all 0",
    ("Link", "a"): "node id at one end",
    ("Link", "b"): "node id at the other end",
    ("Link", "rate"): "rate of the link, both directions",
    ("Link", "delay"): "propagation delay of the link",
    ("Flow", "src"): "sending host's node id",
    ("Flow", "dst"): "receiving host's node id",
    ("Flow", "size"): "bytes of payload",
    ("Flow", "start"): "when the flow starts (whole nanoseconds)",
    ("Flow", "incast"): "count the flow as part of an incast in the results (and tag it for schemes that read the tag)",
    ("HpccFlowsWorkload", "file"): "the flow file: a path relative to the scenario file, or absolute",
    ("HpccFlowsWorkload", "time_offset"): "subtracted from every start time (the HPCC simulator's traffic starts at 2 s)",
    ("BackgroundParams", "load"): "offered load as a share of the links `load_on` names",
    ("BackgroundParams", "load_on"): "host_links: of every host's link; core_links: of the ToR uplinks",
    ("BackgroundParams", "arrival"): "inter-arrival times: poisson (exponential) or lognormal (shape `sigma`)",
    ("BackgroundParams", "start"): "when arrivals begin",
    ("IncastWorkload", "start"): "when the first burst may start",
    ("IncastWorkload", "bursts"): "how many bursts (or give duration)",
    ("IncastWorkload", "duration"): "bursts that start within [start, start + duration) (or give bursts)",
    ("Incast", "degree"): "senders per burst (N of N-to-1)",
    ("Incast", "flow_size"): "bytes of every flow of a burst",
    ("Incast", "flow_size_min"): "with flow_size_max: each flow's size uniform in [min, max]",
    ("Incast", "flow_size_max"): "with flow_size_min: each flow's size uniform in [min, max]",
    ("Incast", "total_size"): "bytes of a whole burst, split equally among its senders",
    ("Incast", "period"): "one burst every period",
    ("Incast", "load"): "Poisson bursts averaging this share of a host link into the destination",
    ("Incast", "at"): "a single burst at this time",
    ("Incast", "dst"): "the destination host of every burst (or of the first, with dst_stride); default: drawn per burst",
    ("Incast", "senders"): "distinct: a burst's senders are different hosts; with_replacement: drawn independently",
    ("Incast", "jitter"): "each sender starts up to this much after the burst's time (uniform)",
    ("LongLivedWorkload", "pairs"): "[src, dst] host pairs, one long flow each",
    ("LongLivedWorkload", "start"): "when the flows start",
    ("Control", "pfc"): "bytes on the wire of a PFC frame",
    ("Control", "queue_pause"): "bytes of a queue-pause frame (BFC, TQP)",
    ("Control", "credit"): "bytes of a credit frame (Floodgate)",
    ("Control", "dst_pause"): "bytes of a destination-pause frame (Floodgate)",
    ("Control", "flow_pause"): "bytes of a flow-pause frame (FlowSail)",
    ("Control", "other"): "bytes of any other control frame",
    ("Ecn", "enabled"): "mark ECN at all",
    ("Ecn", "kmin"): "no marking below this queue length (at ref_rate)",
    ("Ecn", "kmax"): "marking with probability pmax at this length, every packet above (at ref_rate)",
    ("Ecn", "pmax"): "marking probability at kmax",
    ("Ppfc", "space_left"): "what Algorithm 1's switch_space_left measures: shared = free shared pool (§4.2); buffer = free buffer (§6.3)",
    ("Ppfc", "hold"): "how long §6.3's register bit stays set after a predictive pause; default: for that pause's duration",
    ("Capfc", "feeder"): "pause an ingress for a warned queue once it holds more than this of it (P-PFC §7); 0 = every feeding ingress",
    ("Capfc", "pause_quanta"): "quanta of CaPFC's pause frames (0xFFFF: until resumed)",
    ("CongestionControl", "algorithm"): "the end-host congestion control; its parameters are the table of the same name below",
    ("Dcqcn", "clamp_target_rate"): "always set the target rate to the current rate on a cut; false: only if an increase ran since the last cut",
    ("IntHeader", "hop_bytes"): "bytes per hop record",
    ("IntHeader", "base_bytes"): "bytes of the header's fixed part",
    ("HostRateCap", "host"): "the host's node id",
    ("HostRateCap", "rate"): "the most the host's NIC sends at, all its flows together",
    ("Record", "queue_interval"): "sampling period of the queue lengths of queue_ports",
}
"""Descriptions of the fields declared without one (a plain ``name: Type = default``), so that
the field reference (docs/reference/scenario-fields.md) has one for every field; the test
tests/test_docs_pages.py keeps it so."""


def _describe() -> None:
    """Give each field of `_DESCRIPTIONS` its description, in its model and in the models that
    inherit it (`LeafSpine` from `LeafSpineParams`, ...), and every ``kind`` tag one."""
    models: list[type[BaseModel]] = []

    def walk(m: type[BaseModel]) -> None:
        if m in models:
            return
        models.append(m)
        for f in m.model_fields.values():
            for a in [f.annotation, *typing.get_args(f.annotation)]:
                for sub in [a, *typing.get_args(a)]:
                    if isinstance(sub, type) and issubclass(sub, BaseModel):
                        walk(sub)

    walk(ScenarioModel)
    for m in models:
        for name, f in m.model_fields.items():
            if f.description:
                continue
            if name == "kind":
                f.description = _KIND
                continue
            for base in m.__mro__:
                text = _DESCRIPTIONS.get((base.__name__, name))
                if text:
                    f.description = text
                    break


_describe()
