"""P-PFC's reading options (crates/hopsim-core/src/fc/ppfc.rs: `increment`, `transmission_speed`):
left out of the core's JSON at their defaults, so scenarios written before them keep their hash
and results; set, they reach the core."""

from __future__ import annotations

import pytest

from hopsim.errors import ScenarioError
from hopsim.scenario.model import load_scenario


def test_defaults_leave_the_hash_alone_and_settings_reach_the_core(repo):
    sc = load_scenario(repo / "scenarios" / "ppfc-16to1.toml")
    fc = sc.core["net"]["flow_control"]
    assert "increment" not in fc and "transmission_speed" not in fc
    same = sc.with_overrides({"flow_control.ppfc.increment": "net", "flow_control.ppfc.transmission_speed": "egress"})
    assert same.hash == sc.hash
    other = sc.with_overrides({"flow_control.ppfc.increment": "arrivals", "flow_control.ppfc.transmission_speed": "share"})
    assert (other.core["net"]["flow_control"]["increment"], other.core["net"]["flow_control"]["transmission_speed"]) == (
        "arrivals", "share")
    assert other.hash != sc.hash


def test_bad_values_name_the_field(repo):
    sc = load_scenario(repo / "scenarios" / "ppfc-16to1.toml")
    with pytest.raises(ScenarioError) as e:
        sc.with_overrides({"flow_control.ppfc.increment": "gross"})
    assert "flow_control.ppfc.increment" in str(e.value) and "arrivals" in str(e.value)


def test_the_papers_sweeps_plan_and_every_claim_names_a_run(repo):
    """scenarios/papers/ppfc: every sweep validates, and each reported label or ratio names one of
    its runs (a typo would leave a claim unchecked on the reproduction page)."""
    from hopsim.results.query import _varying_within_names, label_of, param_columns
    from hopsim.papers.reproduce import paper_sweeps
    from hopsim.sweep import plan_sweep

    sweeps = paper_sweeps(repo / "scenarios" / "papers" / "ppfc")
    assert len(sweeps) >= 9
    ids = []
    for path, m in sweeps:
        _, points = plan_sweep(path)
        assert all("name" in p.params for p in points), f"{path.name}: every run is named"
        params = [p.params for p in points]
        cols = param_columns(sorted({k for p in params for k in p}))
        varying = _varying_within_names(params)
        names = {label_of(p, cols, varying=varying) for p in params}
        for fig in m.paper.figures:
            ids.append(fig.id)
            for r in fig.reported:
                own = fig.sql if r.metric is None and fig.sql else ""
                for lab in (r.ratio or [r.label]):
                    # a run's label, or one the figure's own SQL makes (Fig. 9's rate classes)
                    assert lab in names or f"'{lab}'" in own, f"{path.name} {fig.id}: no run named {lab!r}"
    assert len(ids) == len(set(ids)), "figure ids are unique in the paper"
