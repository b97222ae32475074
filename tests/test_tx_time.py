"""`tx_time`: transmission times exact (to the picosecond) or ns-3's whole nanoseconds
(crates/hopsim-core/src/time.rs `TxTimes`), and BFC's `bitmap_frame`, as a scenario sets them."""

import hopsim
import pytest


def _lone_flow(write, tx_time: str):
    return write(f"lone-{tx_time}.toml", f"""
        name = "lone"
        tx_time = "{tx_time}"
        [topology]
        kind = "star"
        hosts = 2
        rate = "100Gbps"
        delay = "1us"
        [workload]
        kind = "flows"
        flows = [{{src = 0, dst = 1, size = 100000}}]
        [flow_control]
        scheme = "none"
        """)


def test_whole_ns_times_finish_a_lone_flow_earlier_at_its_ideal_fct(write):
    """1,048 B packets at 100 Gb/s take 83.84 ns exactly, 83 ns in ns-3: 101 packet times over
    two hops (100 packets, the first crossing both) finish 101 x 0.84 ns earlier, and the ideal
    FCT, cut alike, is still the lone flow's FCT."""
    exact = hopsim.run(_lone_flow(write, "exact")).flows
    cut = hopsim.run(_lone_flow(write, "whole_ns")).flows
    assert exact["fct_ns"][0] - cut["fct_ns"][0] == pytest.approx(101 * 0.84, abs=1e-6)
    assert cut["ideal_fct_ns"][0] == cut["fct_ns"][0] and cut["slowdown"][0] == 1.0


def test_exact_keeps_the_hash_and_a_bad_value_names_the_field(repo, cli):
    from hopsim.errors import ScenarioError
    from hopsim.scenario.model import load_scenario

    s = load_scenario(repo / "scenarios" / "hpcc-4to1.toml")
    assert "tx_time" not in s.core["net"]
    assert s.with_overrides({"tx_time": "exact"}).hash == s.hash
    cut = s.with_overrides({"tx_time": "whole_ns"})
    assert cut.core["net"]["tx_time"] == "whole_ns" and cut.hash != s.hash
    code, msg = cli("validate", repo / "scenarios" / "hpcc-4to1.toml", "--set", "tx_time=ns")
    assert code == 2 and "tx_time" in msg and "'exact'" in msg and "'whole_ns'" in msg, msg
    try:
        s.with_overrides({"flow_control.scheme": "bfc", "flow_control.bfc.bitmap_frame": "one"})
        raise AssertionError("accepted")
    except ScenarioError as e:
        assert "flow_control.bfc.bitmap_frame" in str(e) and "'per_64'" in str(e) and "'whole'" in str(e)


def test_bitmap_frame_keeps_old_hashes_and_reaches_the_core(repo):
    from hopsim.scenario.model import load_scenario

    t1 = load_scenario(repo / "scenarios" / "papers" / "bfc" / "table1-long-flow.toml")
    assert "bitmap_frame" not in t1.core["net"]["flow_control"]
    assert t1.with_overrides({"flow_control.bfc.bitmap_frame": "per_64"}).hash == t1.hash
    whole = t1.with_overrides({"flow_control.bfc.bitmap_frame": "whole"})
    assert whole.core["net"]["flow_control"]["bitmap_frame"] == "whole" and whole.hash != t1.hash
