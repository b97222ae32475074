"""Resource guards: a scenario whose estimated memory exceeds the limit is refused before it is
built, naming the largest part and the field to change, with exit code 2 and nothing written.

The limits here are explicit (or astronomically exceeded), so these tests do not depend on the
machine's memory; nothing here times a run or measures its memory."""

from __future__ import annotations

import pytest

import hopsim
from hopsim import sweep
from hopsim.scenario import resources
from hopsim.errors import ScenarioError
from hopsim.scenario.model import load_scenario

from conftest import TINY


def fat_tree(k: int) -> str:
    return f"""
        name = "fat-tree-k{k}"
        [topology]
        kind = "fat_tree"
        k = {k}
        [workload]
        kind = "incast"
        bursts = 1
        [workload.incast]
        degree = 16
        flow_size = "100KB"
        at = "1us"
        dst = 0
        """


def refused(code: int, msg: str, *want: str) -> None:
    assert code == 2, msg
    assert "memory: this run needs about" in msg, msg
    for w in want:
        assert w in msg, (w, msg)


@pytest.mark.parametrize("cmd", ["validate", "run"])
def test_fat_tree_k64_is_refused_under_a_limit_naming_the_network_and_topology_k(write, tmp_path, cli, cmd):
    sc = write("ft64.toml", fat_tree(64))
    out = tmp_path / "out"
    args = ["--out", out] if cmd == "run" else []
    code, msg = cli(cmd, sc, *args, "--max-memory", "256MiB")
    refused(code, msg, "the limit is 268.4 MB (--max-memory)", "the largest part is network", "65,536 hosts",
            "topology.k")
    assert not out.exists()


def test_fat_tree_k128_is_refused_without_being_built(write, tmp_path, cli):
    sc = write("ft128.toml", fat_tree(128))
    code, msg = cli("run", sc, "--out", tmp_path / "out", "--max-memory", "4GiB")
    refused(code, msg, "GB but the limit is 4.3 GB", "network", "524,288 hosts", "3,145,728 ports", "topology.k")
    assert not (tmp_path / "out").exists()
    est = resources.estimate_memory(load_scenario(sc).core_json)
    assert est["total"] > 4 * 2**30
    assert est["shape"]["hosts"] == 524_288 and est["shape"]["route_cols"] == 8192


PS_SAMPLES = TINY.replace('buffer_interval = "1us"', 'buffer_interval = "1ps"').replace(
    'seed = 1', 'seed = 1\nduration = "10s"')


def test_sampling_every_picosecond_is_refused_naming_record_buffer_interval(write, tmp_path, cli):
    """10 s of 1 ps samples of every port: `hopsim run` spools samples to disk, so it is the
    disk they would fill (petabytes: more than any machine has); a sweep keeps them in memory,
    so there it is memory."""
    sc = write("ps.toml", PS_SAMPLES)
    for args in (["run", sc, "--out", tmp_path / "out"], ["validate", sc]):
        code, msg = cli(*args)
        assert code == 2, msg
        for want in ("disk: this run writes about", "of buffer and queue samples", "the spool",
                     "record.buffer_interval"):
            assert want in msg, (want, msg)
    assert not (tmp_path / "out").exists()
    est = resources.estimate_memory(load_scenario(sc).core_json, spooled=True)
    assert est["disk"] > 10**15 and est["total"] < 10**9
    # kept in memory (a sweep's runs, hopsim.run(spool=False)): refused for memory
    with pytest.raises(ScenarioError, match="memory: .*the largest part is buffer samples.*record.buffer_interval"):
        hopsim.run(load_scenario(sc), spool=False)
    write("base.toml", PS_SAMPLES)
    f = write("sweep.toml", 'base = "base.toml"\n[grid]\n"seed" = [1]\n')
    code, msg = cli("sweep", f, "--out", tmp_path / "sw")
    # 10 s at 1 ps, less the first 1 us before the incast, of which the sampler takes 1000
    refused(code, msg, "9,999,999,001,001 samples", "record.buffer_interval")
    assert not (tmp_path / "sw").exists()


def test_the_limit_comes_from_the_option_then_the_environment(write, cli, monkeypatch):
    sc = write("tiny.toml", TINY)
    code, msg = cli("validate", sc, "--max-memory", "1KB")
    refused(code, msg, "the limit is 1.0 KB (--max-memory)")
    monkeypatch.setenv("HOPSIM_MAX_MEMORY", "2KB")
    code, msg = cli("validate", sc)
    refused(code, msg, "the limit is 2.0 KB (HOPSIM_MAX_MEMORY)")
    code, msg = cli("validate", sc, "--max-memory", "off")
    assert code == 0, msg
    monkeypatch.setenv("HOPSIM_MAX_MEMORY", "off")
    code, msg = cli("validate", sc, "--memory")
    assert code == 0 and "estimated memory: about" in msg and "network" in msg and "process" in msg, msg


def test_a_bad_limit_is_bad_input(write, cli, monkeypatch):
    sc = write("tiny.toml", TINY)
    code, msg = cli("validate", sc, "--max-memory", "lots")
    assert code == 2 and "--max-memory:" in msg and "'off' for no limit" in msg, msg
    monkeypatch.setenv("HOPSIM_MAX_MEMORY", "4Gb")
    code, msg = cli("validate", sc)
    assert code == 2 and "HOPSIM_MAX_MEMORY:" in msg and "bits" in msg, msg


def test_the_python_api_refuses_too(write):
    sc = load_scenario(write("tiny.toml", TINY))
    with pytest.raises(ScenarioError, match=r"memory: this run needs about .* but the limit is 1.0 KB"):
        hopsim.run(sc, max_memory=1000)
    assert hopsim.run(sc, max_memory="off").summary["flows_finished"] == 4


def test_memory_limit_defaults_to_the_memory_available(monkeypatch):
    monkeypatch.delenv("HOPSIM_MAX_MEMORY", raising=False)
    limit, note = resources.memory_limit()
    avail = resources.available_memory()
    assert avail is not None and avail > 0
    assert limit is not None and abs(limit - avail) < avail // 2  # read moments apart
    assert "available" in note
    assert resources.memory_limit("4GiB") == (4 * 2**30, "--max-memory")
    assert resources.memory_limit(12345) == (12345, "--max-memory")
    assert resources.memory_limit("off")[0] is None


def test_estimate_structure(write):
    """Parts largest first and adding up; each names what to change; they scale with what they count."""
    def est(text, **kw):
        return resources.estimate_memory(load_scenario(write("s.toml", text), kw or None).core_json)

    e = est(TINY)
    assert [p["bytes"] for p in e["parts"]] == sorted((p["bytes"] for p in e["parts"]), reverse=True)
    assert e["total"] == sum(p["bytes"] for p in e["parts"])
    assert all(p["change"] for p in e["parts"])
    assert e["flows"] == 4 and e["shape"]["hosts"] == 5

    def part(e, name):
        return next(p for p in e["parts"] if p["name"] == name)

    big = est(TINY, **{"topology.hosts": 50_001})
    small = est(TINY, **{"topology.hosts": 25_001})
    assert 1.9 < part(big, "network")["bytes"] / part(small, "network")["bytes"] < 2.1
    fast = est(TINY, **{"record.buffer_interval": "100ns"})
    assert 9 < part(fast, "buffer samples")["bytes"] / part(e, "buffer samples")["bytes"] < 11
    assert part(est(TINY, **{"record.buffer_interval": "100ns", "duration": "2ms"}), "buffer samples")["detail"] \
        .startswith("20,001 samples of 5 switch ports")


def test_a_sweep_point_over_the_limit_stops_the_sweep_before_anything_runs(write, tmp_path, cli):
    write("base.toml", TINY)
    f = write("sweep.toml", 'base = "base.toml"\n[grid]\n"topology.hosts" = [5, 200000]\n')
    out = tmp_path / "out"
    with pytest.raises(ScenarioError, match=r"\[topology.hosts=200000\] memory: .*topology.hosts"):
        sweep.run_sweep(f, out, jobs=1, max_memory="100MB")
    assert not out.exists()
    code, msg = cli("sweep", f, "--out", out, "--max-memory", "100MB")
    assert code == 2 and "memory: this run needs about" in msg and not out.exists(), msg
