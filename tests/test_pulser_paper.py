"""scenarios/papers/pulser: every sweep with a [paper] table plans (its scenarios validate), and
every number the paper reports names labels that its sweep's runs will carry, so a claim never
goes unchecked for a typo in a label."""

from __future__ import annotations

from hopsim.results.query import _varying_within_names, label_of, param_columns
from hopsim.papers.reproduce import paper_dir, paper_sweeps
from hopsim.sweep import plan_sweep


def test_every_reported_label_is_a_run_of_its_sweep(repo):
    sweeps = paper_sweeps(paper_dir(str(repo / "scenarios" / "papers" / "pulser")))
    assert {p.name for p, _ in sweeps} == {"fig2-4-fct-throughput.toml", "fig5-6-queue-window.toml",
                                             "fig7-incast-degree.toml", "table1-testbed.toml", "settings-sensitivity.toml"}
    for path, model in sweeps:
        _, points = plan_sweep(path, max_memory="off")
        # a run folder keeps its params with sorted keys (store.py), and labels are made from those
        params = [dict(sorted(p.params.items())) for p in points]
        keys = list(dict.fromkeys(k for p in params for k in p))
        cols, varying = param_columns(keys), _varying_within_names(params)
        labels = {label_of(p, cols, varying=varying) for p in params}
        for fig in model.paper.figures:
            for r in fig.reported:
                for lab in r.ratio or [r.label]:
                    assert lab in labels, f"{path.name} {fig.id}: no run labelled {lab!r}; labels: {sorted(labels)}"
        # every run of the paper's leaf-spine rides ns-3's TCP
        assert all(p.scenario.model.transport.mode == "tcp" for p in points)
        # Figs. 2-4 and 7 read the minimum and first RTO as 1 ms (leaf-spine-mix.toml, [rto]): with
        # ns-3's 1 s, DCTCP's p99 is 1 s and the paper's 2-3.3x p99 ratios cannot hold
        if path.name in ("fig2-4-fct-throughput.toml", "fig7-incast-degree.toml"):
            ms = 10**9  # picoseconds
            assert {(p.scenario.model.transport.tcp.min_rto, p.scenario.model.transport.tcp.initial_rto)
                    for p in points} == {(ms, ms)}, path.name
