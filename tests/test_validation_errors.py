"""Bad scenarios: each is a clear message naming the field and what is allowed, exit code 2,
and no output folder left behind."""

from __future__ import annotations

import pytest

from conftest import TINY
from hopsim.scenario import registry

_NAMES = registry.names("flow_control")
SCHEMES = ", ".join(repr(n) for n in _NAMES[:-1]) + f" or {_NAMES[-1]!r}"
"""How an unknown scheme's error lists the allowed ones: every scheme the core has, in its order."""

STAR = """
[topology]
kind = "star"
hosts = 4
rate = "100Gbps"
delay = "1us"
"""
FLOW = """
[workload]
kind = "flows"
flows = [{src = 0, dst = 1, size = "1MB"}]
"""

CASES = {
    "unknown key": (
        STAR.replace('rate = "100Gbps"', 'rat = "100Gbps"') + FLOW,
        ["topology: unknown key 'rat'", "allowed here: delay, hosts, kind, rate"],
    ),
    "unknown section": (STAR + FLOW + "\n[buffers]\nsize = '1MB'\n", ["unknown key 'buffers'", "allowed here:", "buffer"]),
    "wrong unit": (
        STAR.replace('"100Gbps"', '"100GB"') + FLOW,
        ["topology.rate", "unknown rate unit 'GB'", "Gbps"],
    ),
    "bare number for a time": (STAR.replace('"1us"', "5") + FLOW, ["topology.delay", "ambiguous", "us"]),
    "bits for a size": (STAR + FLOW.replace('"1MB"', '"1Mb"'), ["workload.flows[0].size", "use 'MB'"]),
    "out of range": (STAR + FLOW + "\n[ecn]\npmax = 2\n", ["ecn.pmax", "less than or equal to 1", "got 2"]),
    "out of range (percent)": (
        STAR + '\n[workload]\nkind = "background"\ncdf = "WebSearch_HPCC.txt"\nload = "150%"\nduration = "1ms"\n',
        ["workload.load", "less than or equal to 1"],
    ),
    "unknown scheme": (
        STAR + FLOW + '\n[flow_control]\nscheme = "credits"\n',
        ["flow_control.scheme", SCHEMES],
    ),
    "unknown topology kind": (
        '[topology]\nkind = "torus"\n' + FLOW,
        ["topology: unknown kind 'torus'", "allowed kinds:", "fat_tree", "star"],
    ),
    "missing workload": (STAR, ["workload: missing"]),
    "missing CDF file": (
        STAR + '\n[workload]\nkind = "background"\ncdf = "NoSuchCdf.txt"\nload = 0.5\nduration = "1ms"\n',
        ["workload.cdf", "'NoSuchCdf.txt' not found", "workloads/"],
    ),
    "disconnected topology": (
        """
        [topology]
        kind = "explicit"
        nodes = 5
        switches = [3, 4]
        links = [{a = 0, b = 3, rate = "100Gbps"}, {a = 1, b = 3, rate = "100Gbps"}, {a = 2, b = 4, rate = "100Gbps"}]
        """ + FLOW,
        ["topology", "disconnected", "host 2 is unreachable"],
    ),
    "flow to a switch": (STAR + FLOW.replace("dst = 1", "dst = 4"), ["workload", "flow 0", "must be host"]),
    "ecn thresholds reversed": (
        STAR + FLOW + '\n[ecn]\nkmin = "2MB"\nkmax = "1MB"\n', ["ecn: kmin (2MB) is larger than kmax (1MB)"],
    ),
    "incast without size": (
        STAR + '\n[workload]\nkind = "incast"\nbursts = 1\n[workload.incast]\ndegree = 2\nat = "0us"\n',
        ["workload.incast", "exactly one of flow_size"],
    ),
    "an incast share of no background": (
        STAR + '\n[workload]\nkind = "incast"\nbursts = 1\n[workload.incast]\ndegree = 2\nflow_size = "1KB"\nbackground_share = 0.1\n',
        ["workload", "background_share", 'kind = "incast_mix"'],
    ),
    "an incast dst_stride without dst": (
        STAR + '\n[workload]\nkind = "incast"\nbursts = 2\n[workload.incast]\ndegree = 2\nflow_size = "1KB"\nperiod = "1us"\ndst_stride = 1\n',
        ["workload.incast", "dst_stride needs dst"],
    ),
    "an incast dst_stride from a switch": (
        STAR + '\n[workload]\nkind = "incast"\nbursts = 2\n[workload.incast]\ndegree = 2\nflow_size = "1KB"\nperiod = "1us"\ndst = 4\ndst_stride = 1\n',
        ["dst 4 is not a host", "dst_stride"],
    ),
    "an incast alone excluding background": (
        STAR + '\n[workload]\nkind = "incast"\nbursts = 2\n[workload.incast]\ndegree = 2\nflow_size = "1KB"\nperiod = "1us"\nexclude_dsts_from_background = true\n',
        ["workload", "exclude_dsts_from_background", 'kind = "incast_mix"'],
    ),
    "not TOML": ("[topology\nkind = 1\n", ["not valid TOML"]),
    "an integer too large for a number": (STAR + FLOW + "\n[buffer]\nalpha = 1" + "0" * 400 + "\n",
                                          ["buffer.alpha", "too large for a number"]),
    "an integer too large for a fraction": (
        STAR + '\n[workload]\nkind = "background"\ncdf = "WebSearch_HPCC.txt"\nload = 1' + "0" * 400 + '\nduration = "1ms"\n',
        ["workload.load", "too large for a fraction"]),
    "TOML nested too deeply": ("a = " + "[" * 3000 + "]" * 3000 + "\n", ["arrays or tables nested too deeply"]),
    "a huge value is shown by its start": (STAR + FLOW.replace('"1MB"', "[" * 300 + "]" * 300),
                                           ["workload.flows[0].size", "[[[[ ...]"]),
    # issue 9: inputs that used to pass validation and then crash or mislead the run
    "1e30 with a unit": (STAR + FLOW.replace('"1MB"', '"1e30MB"'), ["workload.flows[0].size", "too large", "2^64 - 1"]),
    "1e30 seconds": (STAR.replace('"1us"', '"1e30s"') + FLOW, ["topology.delay", "too large"]),
    "queue_ports: no such node": (
        STAR + FLOW + "\n[record]\nqueue_ports = [[99, 0]]\n", ["record.queue_ports: [99, 0]", "node 99 does not exist"],
    ),
    "queue_ports: no such port": (
        STAR + FLOW + "\n[record]\nqueue_ports = [[4, 7]]\n", ["record.queue_ports: [4, 7]", "switch 4 has no port 7", "0 to 3"],
    ),
    "queue_ports: a host": (STAR + FLOW + "\n[record]\nqueue_ports = [[0, 0]]\n", ["node 0 is a host"]),
    "buffer below one packet": (
        STAR + FLOW + '\n[buffer]\nsize = "500B"\n', ["buffer.size", "cannot hold one packet", "at least 1048"],
    ),
    "reserve above the buffer": (
        STAR + FLOW + '\n[buffer]\nsize = "100KB"\nreserve = "200KB"\n', ["buffer.reserve", "exceeds buffer.size"],
    ),
    "headroom: an unknown keyword": (
        STAR + FLOW + '\n[buffer]\nheadroom = "ns3"\n', ["buffer.headroom", "'auto', 'hpcc', 'floodgate'"],
    ),
    "headroom above the buffer": (
        STAR + FLOW + '\n[buffer]\nsize = "100KB"\nheadroom = "200KB"\n', ["buffer.headroom", "exceeds buffer.size"],
    ),
    # numbers and switches are taken as TOML writes them, never converted from strings (issue 9)
    "a string for an integer": (STAR.replace("hosts = 4", 'hosts = "5"') + FLOW,
                                ["topology.hosts: expected an integer written without quotes", "got the string '5'"]),
    "a float for an integer": (STAR.replace("hosts = 4", "hosts = 5.0") + FLOW,
                               ["topology.hosts: expected an integer", "got 5.0"]),
    "a boolean for an integer": (STAR + FLOW + "\n[queues]\ncount = true\n", ["queues.count: expected an integer", "got true"]),
    "a string for a number": (STAR + FLOW + '\n[buffer]\nalpha = "0.5"\n',
                              ["buffer.alpha: expected a number written without quotes", "got the string '0.5'"]),
    "a string for a switch": (STAR + FLOW + '\n[ecn]\nenabled = "off"\n',
                              ["ecn.enabled: expected true or false", "got the string 'off'"]),
    "a string for a seed": ('seed = "7"\n' + STAR + FLOW, ["seed: expected an integer", "got the string '7'"]),
    "a string for a flow's node": (STAR + FLOW.replace("src = 0", 'src = "0"'), ["workload.flows[0].src: expected an integer"]),
    "neither member of a union": (STAR + FLOW + '\n[queues]\npriority = "x"\n',
                                  ["queues.priority: expected 'modulo' or a valid list; got 'x'"]),
    "CDF mean beyond what the duration holds": (
        STAR + '\n[workload]\nkind = "background"\ncdf = "WebSearch_HPCC.txt"\nload = "1%"\nduration = "10ns"\n',
        ["workload: no flow starts within the duration", "mean"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_scenario_run(case, write, cli, tmp_path):
    text, needles = CASES[case]
    path = write("bad.toml", text)
    out = tmp_path / "out"
    code, msg = cli("run", path, "--out", out)
    assert code == 2, msg
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.toml"]  # nothing else written


def test_a_union_miss_is_one_line(write, cli):
    # 'auto' or a boolean: one problem, not one per member of the union
    path = write("bad.toml", STAR + FLOW + '\n[buffer]\nlossless = "yes"\n')
    code, msg = cli("validate", path)
    assert code == 2 and "problems" not in msg, msg
    assert "buffer.lossless: expected 'auto' or true or false" in msg


def test_integers_stay_good_numbers(write, cli):
    """What TOML gives stays accepted: an integer where a float is wanted, and Python integer
    types (numpy's, from a sweep script) where an integer is."""
    import numpy as np

    from hopsim.scenario.model import scenario_from_dict

    path = write("ok.toml", STAR + FLOW + "\n[buffer]\nalpha = 1\n[ecn]\npmax = 1\n")
    code, msg = cli("validate", path)
    assert code == 0, msg
    import tomllib

    raw = tomllib.loads(STAR + FLOW)
    raw["topology"]["hosts"] = np.int64(6)
    raw["buffer"] = {"alpha": np.float32(0.5)}
    sc = scenario_from_dict(raw)
    assert sc.model.topology.hosts == 6 and type(sc.model.topology.hosts) is int
    assert sc.model.buffer.alpha == 0.5


def test_non_monotone_cdf(write, cli, tmp_path):
    write("bad.cdf", "0 0\n1000 0.5\n2000 0.3\n3000 1.0\n")
    path = write("bad.toml", STAR + '\n[workload]\nkind = "background"\ncdf = "bad.cdf"\nload = "50%"\nduration = "1ms"\n')
    code, msg = cli("validate", path)
    assert code == 2
    assert "workload.cdf: bad.cdf: line 3: cdf 0.3 is smaller than the previous cdf 0.5" in msg
    assert "monotone" in msg
    code, msg = cli("run", path, "--out", tmp_path / "out")
    assert code == 2 and not (tmp_path / "out").exists()


def test_files_that_are_not_utf8(write, cli, tmp_path):
    (tmp_path / "latin1.cdf").write_bytes(b"0 0\n1000 0.5\n# caf\xe9\n3000 1.0\n")
    path = write("bad.toml", STAR + '\n[workload]\nkind = "background"\ncdf = "latin1.cdf"\nload = "50%"\nduration = "1ms"\n')
    code, msg = cli("validate", path)
    assert code == 2, msg
    assert f"workload.cdf: {tmp_path / 'latin1.cdf'}: line 3: not UTF-8 text (byte 0xe9)" in msg
    bad = tmp_path / "latin1.toml"
    bad.write_bytes((STAR + FLOW).encode() + b'name = "caf\xe9"\n')
    code, msg = cli("run", bad, "--out", tmp_path / "out")
    assert code == 2 and f"{bad}: line 11: not UTF-8 text (byte 0xe9)" in msg, msg
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cdf,needle", [
    ("inf 1.0\n", "line 1: cannot parse size `inf` as a finite number"),
    ("0 0\n0 1\n", "mean flow size 0 must be positive"),
])
def test_the_cores_cdf_errors_name_the_file(write, cli, tmp_path, cdf, needle):
    write("e.cdf", cdf)
    path = write("bad.toml", STAR + '\n[workload]\nkind = "background"\ncdf = "e.cdf"\nload = "50%"\nduration = "10us"\n')
    code, msg = cli("validate", path)
    assert code == 2 and f"workload.cdf {tmp_path / 'e.cdf'}: {needle}" in msg, msg


def test_several_problems_reported_together(write, cli):
    path = write("bad.toml", STAR.replace('"100Gbps"', '"fast"') + FLOW + "\n[buffer]\nalpha = -1\n")
    code, msg = cli("validate", path)
    assert code == 2
    assert "2 problems" in msg and "topology.rate" in msg and "buffer.alpha" in msg


def test_bad_override(tiny, cli, tmp_path):
    code, msg = cli("run", tiny, "--out", tmp_path / "o", "--set", "queues.count=0")
    assert code == 2 and "queues.count" in msg and not (tmp_path / "o").exists()


def test_bad_sweep_value_runs_nothing(write, cli, tmp_path):
    write("base.toml", TINY)
    sweep = write("sweep.toml", 'base = "base.toml"\n[grid]\n"flow_control.scheme" = ["pfc", "ppfcc"]\n')
    out = tmp_path / "sweep-out"
    code, msg = cli("sweep", sweep, "--out", out, "--jobs", "1")
    assert code == 2
    assert "flow_control.scheme='ppfcc'" in msg and SCHEMES in msg
    assert not out.exists()


def test_existing_output_is_refused(tiny, cli, tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    code, msg = cli("run", tiny, "--out", out)
    assert code == 2 and "already exists" in msg


def _hpcc(write, topo: str, flows: str) -> object:
    write("topo.txt", topo)
    write("flows.txt", flows)
    return write("h.toml", '[topology]\nkind = "hpcc"\nfile = "topo.txt"\n[workload]\nkind = "hpcc_flows"\nfile = "flows.txt"\n')


TOPO = "3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n"


def test_hpcc_flow_priority_8_is_refused_with_the_file(write, cli, tmp_path):
    path = _hpcc(write, TOPO, "1\n0 1 8 100 1000 2.0\n")
    code, msg = cli("run", path, "--out", tmp_path / "o")
    assert code == 2, msg
    assert "flows.txt: line 2: priority 8 is not a priority; allowed: 0 to 7" in msg
    assert "workload.file" in msg and "panicked" not in msg and not (tmp_path / "o").exists()


def test_hpcc_topology_error_names_the_file(write, cli):
    path = _hpcc(write, "3 1 2\n2\n0 2 100Gbps 0.001ms 0\n", "1\n0 1 3 100 1000 2.0\n")
    code, msg = cli("validate", path)
    assert code == 2, msg
    assert "topology.file" in msg and "topo.txt: line" in msg


def test_unwritable_out_is_refused_before_the_run(tiny, cli, tmp_path):
    import os

    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    try:
        if os.access(ro, os.W_OK) and os.geteuid() == 0:
            # root writes anywhere: use a path under a file instead
            target = tiny / "out"
        else:
            target = ro / "out"
        code, msg = cli("run", tiny, "--out", target)
        assert code == 2, msg
        assert "--out" in msg and ("cannot write" in msg or "is a file" in msg)
        assert "flows finished" not in msg  # refused before running
    finally:
        os.chmod(ro, 0o755)
