"""Fuzzing the input readers (issue 9): whatever a scenario file or an HPCC simulator config says,
the answer is a result or a ScenarioError (the CLI's one-line message and exit code 2), never
another exception or a traceback.

Property-based with hypothesis, bounded for CI: a fixed number of examples per test, derandomized
(the same examples on every run, so a failure reproduces), no per-example deadline (the first
examples pay for imports). Together they take well under 30 s.

(a) scenario documents: valid small scenarios with random keys set, from the schema's own field
    names, to random TOML values (numbers of every size and sign, nan, unit strings, keywords of
    the schema, text, booleans, lists, tables), or deleted; checked by the schema and, when the
    network and workload stay small, by the core's validation too.
(b) `hopsim import-hpcc` on the test config, topology and flow files of tests/data/hpcc with
    lines deleted, repeated or cut, tokens replaced and bytes that are not UTF-8 put in.

HOPSIM_FUZZ_EXAMPLES=5000 runs a longer hunt with fresh examples each time.
"""

from __future__ import annotations

import copy
import os
import tempfile
import tomllib
import typing
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from conftest import REPO, TINY
from hopsim.scenario import schema as S
from hopsim.cli import app
from hopsim.errors import ScenarioError
from hopsim.scenario.model import load_scenario, scenario_from_dict

EXAMPLES = int(os.environ.get("HOPSIM_FUZZ_EXAMPLES", "0"))
"""More examples, and new ones on every run, when set (a longer hunt by hand); CI leaves it unset."""
FUZZ = settings(max_examples=EXAMPLES or 150, deadline=None, derandomize=not EXAMPLES, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ----------------------------------------------------------------------------- (a) scenarios


def _models(annotation: typing.Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold (through Optional, Union, Annotated, list)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models(a)]


def _words(annotation: typing.Any) -> set[str]:
    """The keywords an annotation allows (its Literal strings)."""
    if typing.get_origin(annotation) is typing.Literal:
        return {a for a in typing.get_args(annotation) if isinstance(a, str)}
    return {w for a in typing.get_args(annotation) for w in _words(a)}


def _walk(model: type[BaseModel], prefix: str, paths: set[str], words: set[str]) -> None:
    for name, f in model.model_fields.items():
        path = f"{prefix}{name}"
        paths.add(path)
        words |= _words(f.annotation)
        for sub in _models(f.annotation):
            _walk(sub, path + ".", paths, words)


PATHS: set[str] = set()
WORDS: set[str] = set()
_walk(S.ScenarioModel, "", PATHS, WORDS)
PATHS_SORTED = sorted(PATHS)
NAMES = sorted({p.rsplit(".", 1)[-1] for p in PATHS})

UNIT_WORDS = [
    "0", "1", "5", "0.5", "-1", "1e30", "1e-30", "", " ", "x", "0us", "1us", "1ps", "0.1ps", "-1us", "1e30s",
    "100Gbps", "0Gbps", "1bps", "1e30Gbps", "100GB", "12MB", "1Mb", "4KiB", "0B", "1500", "18446744073709551616",
    "60%", "150%", "-5%", "nan", "inf", "WebSearch_HPCC.txt", "tests/data/hpcc/mix/topology.txt",
    "tests/data/hpcc/mix/flow.txt", "/dev/null", ".", "\u00e9",
]
INTS = [0, 1, 2, 3, 4, 5, 7, 8, 63, 64, 1000, 1024, 1025, 65535, 65536, 2**31, 2**32, 2**63, 2**64, -1, -(2**63),
        10**400, -(10**400)]

scalars = st.one_of(
    st.sampled_from(INTS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(UNIT_WORDS),
    st.sampled_from(sorted(WORDS)),
    st.text(max_size=6),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)

BASES = [
    tomllib.loads(TINY),
    tomllib.loads("""
        seed = 3
        [topology]
        kind = "leaf_spine"
        hosts_per_tor = 2
        tors = 2
        spines = 1
        [workload]
        kind = "incast_mix"
        cdf = "WebSearch_HPCC.txt"
        load = "30%"
        duration = "20us"
        [workload.incast]
        degree = 2
        flow_size = "10KB"
        at = "5us"
        [flow_control]
        scheme = "bfc"
        [congestion_control]
        algorithm = "hpcc"
        """),
    tomllib.loads("""
        [topology]
        kind = "dumbbell"
        left = 2
        right = 2
        [workload]
        kind = "flows"
        flows = [{src = 0, dst = 2, size = "20KB"}, {src = 1, dst = 3, size = "10KB", start = "1us"}]
        [flow_control]
        scheme = "floodgate"
        [congestion_control]
        algorithm = "dctcp"
        """),
    {"topology": {"kind": "hpcc", "file": "tests/data/hpcc/mix/topology.txt"},
     "workload": {"kind": "hpcc_flows", "file": "tests/data/hpcc/mix/flow.txt"},
     "congestion_control": {"algorithm": "timely"}, "record": {"qlen_monitor": {}, "trace": {"flows": [0]}}},
]


def _set(doc: dict, path: str, value: typing.Any) -> None:
    """Set a dotted key, making (or replacing with) tables on the way; None deletes it."""
    *heads, last = path.split(".")
    d = doc
    for h in heads:
        if not isinstance(d.get(h), dict):
            d[h] = {}
        d = d[h]
    if value is None:
        d.pop(last, None)
    else:
        d[last] = value


@st.composite
def scenario_docs(draw) -> dict:
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        _set(doc, draw(st.sampled_from(PATHS_SORTED)), draw(st.none() | values))
    return doc


AWKWARD = [10**400, 2**64, -1, 1.5, float("nan"), -float("inf"), True, "5", "1" * 500, "1e400", "1e400%", "nan%",
           [[]], {"x": 1}, "\x00"]
"""Values that have broken readers: too large for a float, not finite, of the wrong type."""


def test_every_field_takes_every_awkward_value_cleanly():
    """Not random: each field of the schema, on each base scenario it can be set in, given each
    of `AWKWARD` (what random draws reach too rarely: an integer of 400 digits for a float)."""
    for base in BASES[:2]:  # a star with an incast; a leaf-spine with a CDF workload, BFC and HPCC
        for path in PATHS_SORTED:
            for value in AWKWARD:
                doc = copy.deepcopy(base)
                _set(doc, path, value)
                try:
                    scenario_from_dict(doc, REPO)
                except ScenarioError as e:
                    assert e.problems
                except Exception as e:  # pragma: no cover - the failure message
                    raise AssertionError(f"{path} = {value!r:.60}: {type(e).__name__}: {e}") from e


SMALL_TIME = 200 * 10**6  # 200 us in ps


def _small(m: S.ScenarioModel) -> bool:
    """Whether the core can validate the scenario in a moment and a little memory: the fuzzing
    is about the readers, not about the resource limits of huge networks or workloads (the
    guards for those are issue 9's other part)."""
    t, w = m.topology, m.workload
    nodes = {S.Star: lambda: t.hosts, S.Dumbbell: lambda: t.left + t.right,
             S.LeafSpine: lambda: t.hosts_per_tor * t.tors + t.spines * t.links_per_spine,
             S.FatTree: lambda: t.k**3 // 4 * max(1, (t.hosts_per_edge or 1)) if t.k <= 8 else 10**9,
             S.MultiDc: lambda: 10**9, S.HpccTopology: lambda: 0,
             S.Explicit: lambda: t.nodes + len(t.links)}[type(t)]()
    incast = getattr(w, "incast", None)
    if nodes > 64 or (incast is not None and incast.degree > 64):
        return False
    if isinstance(w, (S.BackgroundWorkload, S.IncastMixWorkload)) and (w.duration > SMALL_TIME or w.start > SMALL_TIME):
        return False
    if isinstance(w, S.IncastWorkload) and (w.bursts or 0) > 64:
        return False
    if isinstance(w, S.IncastWorkload) and w.duration is not None and (w.duration > SMALL_TIME):
        return False
    q, fc = m.queues, m.flow_control
    return q.count * fc.bfc.table_factor <= 100_000 and m.transport.nic_queues * q.count <= 100_000


@FUZZ
@given(doc=scenario_docs())
def test_scenario_documents_give_a_result_or_a_clean_error(doc):
    try:
        sc = scenario_from_dict(doc, REPO)
        if _small(sc.model):
            sc.validate()
            _ = sc.resolved_toml()
    except ScenarioError as e:
        assert e.problems and all(isinstance(p, str) and p.strip() for p in e.problems)


@FUZZ
@given(doc=scenario_docs(), cut=st.integers(0, 400), junk=st.binary(max_size=4))
def test_scenario_files_through_the_reader(doc, cut, junk):
    """The same documents as TOML files, some cut short or with bytes spliced in (not TOML, not
    UTF-8): load_scenario, what `hopsim validate` calls, reads them or refuses them cleanly."""
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.toml"
        try:
            text = tomli_w.dumps(doc).encode()
        except (TypeError, ValueError):
            return  # tomli_w cannot write it (TOML has no null): not a file anyone can write
        if junk:
            text = text[:cut] + junk + text[cut:]
        p.write_bytes(text)
        try:
            load_scenario(p)
        except ScenarioError as e:
            assert e.problems


# ----------------------------------------------------------------------------- (b) import-hpcc

RUNNER = CliRunner()
HPCC = REPO / "tests" / "data" / "hpcc"
FILES = {"config.txt": (HPCC / "config.txt").read_text(), "mix/topology.txt": (HPCC / "mix" / "topology.txt").read_text(),
         "mix/flow.txt": (HPCC / "mix" / "flow.txt").read_text()}
TOKENS = ["0", "1", "-1", "2", "3", "6", "9", "10", "1.5", "2.0", "4.00", "1e400", "nan", "inf", "-inf", "0x10",
          "100Gbps", "0Gbps", "25Gbps", "1e30Gbps", "100Mb/s", "1000ns", "0ns", "-5ns", "1e30s", "x", "{", "}", "#",
          "mix/topology.txt", "mix/flow.txt", "nothere.txt", "CC_MODE", "FLOW_FILE", "TOPOLOGY_FILE",
          "SIMULATOR_STOP_TIME", "KMAX_MAP", "2147483647", "99999999999", "\u00e9"]


@st.composite
def mutated_text(draw, text: str) -> bytes:
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            lines.append(draw(st.sampled_from(TOKENS)))
            continue
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["token", "token", "token", "delete", "repeat", "cut", "append"]))
        if op == "token":
            toks = lines[i].split() or [""]
            j = draw(st.integers(0, len(toks) - 1))
            toks[j] = draw(st.sampled_from(TOKENS) | st.text(max_size=5))
            lines[i] = " ".join(toks)
        elif op == "delete":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]) - 1)))]
        else:
            lines[i] += " " + draw(st.sampled_from(TOKENS))
    data = ("\n".join(lines) + "\n").encode()
    if draw(st.integers(0, 9)) == 0:  # now and then a byte that is not UTF-8
        k = draw(st.integers(0, len(data)))
        data = data[:k] + b"\xff" + data[k:]
    return data


@st.composite
def hpcc_inputs(draw) -> dict[str, bytes]:
    out = {name: text.encode() for name, text in FILES.items()}
    for name in draw(st.lists(st.sampled_from(sorted(FILES)), min_size=1, max_size=3, unique=True)):
        out[name] = draw(mutated_text(FILES[name]))
    return out


@settings(FUZZ, max_examples=EXAMPLES or 120)
@given(files=hpcc_inputs())
def test_import_hpcc_gives_a_scenario_or_a_clean_error(files):
    """Through the command, as a user runs it: exit 0 and a valid scenario, or exit 2 with
    messages and nothing written."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for name, data in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        out = root / "out" / "imported.toml"
        r = RUNNER.invoke(app, ["import-hpcc", str(root / "config.txt"), "--out", str(out)], catch_exceptions=False)
        if r.exit_code == 0:
            load_scenario(out, validate=True)  # what it wrote is a valid scenario
        else:
            assert r.exit_code == 2 and r.output.startswith("error: "), r.output
            assert not (root / "out").exists() or not any((root / "out").iterdir())
