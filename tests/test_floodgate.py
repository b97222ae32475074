"""Floodgate through the front: the paper folder's scenarios and [paper] sweeps plan, Floodgate's
settings reach the core (its module time series), PFC w/ tag runs as a scheme of its own, and bad
values name the field."""

from __future__ import annotations

import hopsim

SMALL = """
name = "fg-small"
seed = 1
duration = "300us"
[topology]
kind = "leaf_spine"
hosts_per_tor = 4
tors = 3
spines = 1
host_rate = "100Gbps"
fabric_rate = "400Gbps"
host_delay = "1us"
fabric_delay = "1us"
[workload]
kind = "incast"
bursts = 1
[workload.incast]
degree = 8
dst = 0
flow_size = "200KB"
at = "1us"
[queues]
count = 8
[transport]
window = "off"                # senders at line rate: the spine's window towards host 0's ToR runs out
[record]
buffer_interval = "2us"
[flow_control]
scheme = "floodgate"
[flow_control.floodgate]
watch_dst = 0
"""


def test_the_paper_folder_plans(repo):
    from hopsim.reproduce import paper_sweeps
    from hopsim.sweep import plan_sweep

    d = repo / "scenarios" / "papers" / "floodgate"
    sweeps = paper_sweeps(d)
    names = {p.stem for p, _ in sweeps}
    assert {"fig8-10-table2-webserver", "fig8-10-table2-memcached", "fig8-10-table2-hadoop", "fig8-10-table2-websearch",
            "fig12-loss", "fig14-tor-scale", "fig15-successive-incast", "fig17-parameters", "fig24-pfc-tag"} <= names
    for p, m in sweeps:
        _, points = plan_sweep(p)
        labels = {pt.params.get("name") for pt in points}
        for fig in m.paper.figures:
            for r in fig.reported:
                for lab in r.ratio or [r.label]:
                    # a label is a run's name, then its grid values ("floodgate, bursts=16")
                    assert lab.split(", ")[0] in labels, f"{p.name}: {fig.id} names {lab!r}, not a run"


def test_floodgate_reports_its_windows_and_voqs_over_time(write):
    res = hopsim.run(write("fg.toml", SMALL))
    ms = res.module_samples
    assert set(ms["metric"]) >= {"voqs", "voq_bytes", "window_pkts"}
    # the incast's window towards the ToR of host 0 runs out (0 or less left) and comes back
    w = ms[ms["metric"] == "window_pkts"]
    assert w["value"].min() <= 0 < w["value"].max()
    assert ms[ms["metric"] == "voqs"]["value"].max() >= 1
    assert res.summary["flows_finished"] == 8


def test_pfc_tag_runs_and_pauses_per_destination(write):
    res = hopsim.run(write("tag.toml", SMALL.replace('scheme = "floodgate"', 'scheme = "pfc_tag"').replace(
        "[flow_control.floodgate]\nwatch_dst = 0\n", "[flow_control.pfc_tag]\npause_bdp = 1.0\n")))
    c = res.df("control")
    tagged = c[c["kind"] == "dst_pause"]
    assert len(tagged) > 0 and set(tagged["target"]) == {0}
    assert res.summary["flows_finished"] == 8


def test_bad_floodgate_values_name_the_field(write, cli):
    bad = write("bad.toml", SMALL.replace("watch_dst = 0", 'voq_pool = "pooled"'))
    code, msg = cli("validate", bad)
    assert code == 2 and "flow_control.floodgate.voq_pool" in msg and "grouped" in msg, msg
    scope = write("scope.toml", SMALL.replace("watch_dst = 0", 'window = "global"'))
    code, msg = cli("validate", scope)
    assert code == 2 and "flow_control.floodgate.window" in msg and "'switch'" in msg and "'port'" in msg, msg
    few = write("few.toml", SMALL.replace("watch_dst = 0", 'voq_pool = "grouped"\nmax_voq = 1'))
    code, msg = cli("validate", few)
    assert code == 2 and "flow_control.floodgate.max_voq" in msg and "2 or more" in msg, msg
    tag = write("tag.toml", SMALL.replace('scheme = "floodgate"', 'scheme = "pfc_tag"').replace(
        "[flow_control.floodgate]\nwatch_dst = 0\n", "[flow_control.pfc_tag]\npause_bdp = 0.5\nresume_bdp = 1.0\n"))
    code, msg = cli("validate", tag)
    assert code == 2 and "flow_control.pfc_tag.resume_bdp" in msg, msg


def test_the_window_scope_reaches_the_core():
    import tomllib

    from hopsim.scenario import scenario_from_dict

    d = tomllib.loads(SMALL)
    default = scenario_from_dict(d)
    assert default.core["net"]["flow_control"]["window"] == "switch"
    d["flow_control"]["floodgate"]["window"] = "port"
    port = scenario_from_dict(d)
    assert port.core["net"]["flow_control"]["window"] == "port" and port.hash != default.hash
