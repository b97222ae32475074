"""BFC's reproduction files (scenarios/papers/bfc): every sweep plans (schema and core checks,
quick and full), each figure's labels exist among its sweep's runs, and the Table 1 setting puts
every cross-traffic flow on the one link the long flow uses."""

from __future__ import annotations

import pytest

import hopsim
from hopsim.papers.reproduce import paper_dir, paper_sweeps
from hopsim.sweep import plan_sweep


def _labels(points) -> set[str]:
    names = {p.params.get("name") for p in points}
    return {n for n in names if n is not None}


def test_every_bfc_sweep_plans_and_its_claims_name_its_runs(repo):
    d = paper_dir(str(repo / "scenarios" / "papers" / "bfc"))
    sweeps = paper_sweeps(d)
    ids = [f.id for _, m in sweeps for f in m.paper.figures]
    assert len(ids) == len(set(ids)), "figure ids are unique in the paper"
    assert {"table1-throughput", "table1-delay", "fig7b-queue", "fig8", "fig9-short", "fig10c", "fig13b", "fig14b",
            "fig16", "fig18a", "fig19", "fig21b", "fig22"} <= set(ids)
    for path, model in sweeps:
        for quick in (False, True):
            _, points = plan_sweep(path, quick=quick)
            assert points, path
        names = _labels(points)
        assert names, f"{path.name}: runs are named"
        for fig in model.paper.figures:
            for r in fig.reported:
                for lab in r.ratio or [r.label]:
                    assert lab.split(",")[0] in names, f"{path.name} {fig.id}: no run named {lab!r}"


def test_table1_cross_traffic_all_crosses_the_long_flows_link(repo):
    res = hopsim.run(repo / "scenarios" / "papers" / "bfc" / "table1-long-flow.toml",
                     overrides={"duration": "200us", "workload.duration": "200us"})
    f = res.flows
    assert (f["dst"] == 0).all(), "every flow ends at host 0"
    assert f["incast"].sum() == 1, "one long flow"
    assert (f.loc[~f["incast"], "src"] != 0).all()


def test_a_background_destination_must_be_a_host_on_host_links(repo, cli):
    t1 = repo / "scenarios" / "papers" / "bfc" / "table1-long-flow.toml"
    code, msg = cli("validate", t1, "--set", "workload.dst=9")
    assert code == 2 and "workload.dst: node 9 is not a host" in msg
    code, msg = cli("validate", t1, "--set", "workload.load_on=core_links")
    assert code == 2 and "workload.dst" in msg and "host_links" in msg


@pytest.mark.parametrize("key, default, simulator", [("lone_packet_pauses", True, False),
                                                     ("assign_paused_queues", True, False),
                                                     ("queue_search", "rotating", "random"),
                                                     ("collision_queue", "random", "per_entry")])
def test_the_simulators_rules_keep_old_hashes_and_the_clos_files_take_them(repo, key, default, simulator):
    """`flow_control.bfc.lone_packet_pauses`, `assign_paused_queues`, `queue_search` and
    `collision_queue` (fc/bfc.rs): left out of the core's JSON at their default (§3.3's
    pseudo-code and text, §4), so BFC scenarios written before them keep their hash; the §6.2
    Clos files set the paper's simulator's rules, which their sweeps' BFC runs inherit."""
    from hopsim.errors import ScenarioError
    from hopsim.scenario.model import load_scenario

    d = repo / "scenarios" / "papers" / "bfc"
    t1 = load_scenario(d / "table1-long-flow.toml")
    assert key not in t1.core["net"]["flow_control"]
    assert t1.with_overrides({f"flow_control.bfc.{key}": default}).hash == t1.hash
    off = t1.with_overrides({f"flow_control.bfc.{key}": simulator})
    assert off.core["net"]["flow_control"][key] == simulator and off.hash != t1.hash
    for f in ("fig9-google-incast.toml", "fig10-google.toml", "fig11-facebook.toml", "fig11-facebook-incast.toml",
              "fig20-two-dcs.toml"):
        assert load_scenario(d / f).core["net"]["flow_control"][key] == simulator, f
    with pytest.raises(ScenarioError) as e:
        t1.with_overrides({f"flow_control.bfc.{key}": "maybe"})
    assert f"flow_control.bfc.{key}" in str(e.value)


def test_dc_mix_workload_keeps_background_inside_each_dc_and_names_its_errors(repo, cli):
    """Fig. 20's workload (`kind = "dc_mix"`, App. E.3): background flows with both ends in one
    datacenter, 20 long-lived flows each way between them; bad settings exit 2 naming the field."""
    f20 = repo / "scenarios" / "papers" / "bfc" / "fig20-two-dcs.toml"
    res = hopsim.run(f20, overrides={"duration": "100us", "workload.duration": "100us"})
    f = res.flows
    long = f["size_bytes"] >= 2**50
    assert long.sum() == 40
    assert ((f.loc[long, "src"] // 64) != (f.loc[long, "dst"] // 64)).all()
    assert ((f.loc[~long, "src"] // 64) == (f.loc[~long, "dst"] // 64)).all() and (~long).sum() > 50
    for args, words in ((("topology.kind=leaf_spine",), ("workload.kind 'dc_mix'", "multi_dc")),
                        (("workload.long_flows=65",), ("workload.long_flows", "0 to 64")),
                        (("workload.dst=3",), ("workload.dst",))):
        code, msg = cli("validate", f20, *[x for a in args for x in ("--set", a)])
        assert code == 2 and all(w in msg for w in words), msg
