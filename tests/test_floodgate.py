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
    from hopsim.papers.reproduce import paper_sweeps
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

    from hopsim.scenario.model import scenario_from_dict

    d = tomllib.loads(SMALL)
    default = scenario_from_dict(d)
    assert default.core["net"]["flow_control"]["window"] == "switch"
    d["flow_control"]["floodgate"]["window"] = "port"
    port = scenario_from_dict(d)
    assert port.core["net"]["flow_control"]["window"] == "port" and port.hash != default.hash


def test_table2_reads_the_time_ports_were_paused_by_hop(repo, write, cli, tmp_path):
    """Table 2's SQL (the four fig8-10-table2-*.toml) sums the time each port was paused, from pause
    to resume, by the paused port's switch (host, ToR, core), as Floodgate-NS3 traces PFC at the
    receiving device. The sum of the pause frames' quanta durations (refreshes included), which the
    files used before, counts a pause that a resume cut short in full, and is not it."""
    import tomllib

    from hopsim.results.query import connect

    text = SMALL.replace('scheme = "floodgate"', 'scheme = "pfc"').replace("[flow_control.floodgate]\nwatch_dst = 0\n", "")
    text += '[buffer]\nsize = "1MB"\n'  # 1.6 MB of incast into a 1 MB buffer: PFC pauses, hop by hop
    out = tmp_path / "run"
    code, msg = cli("run", write("pfc.toml", text), "--out", out)
    assert code == 0, msg
    con = connect(out)
    frames_us = con.execute("SELECT sum(duration_ns) / 1000.0 FROM pauses WHERE kind = 'pause'").fetchone()[0]
    summary_us = con.execute("SELECT pause_time_ns / 1000.0 FROM runs").fetchone()[0]
    assert summary_us > 0, "the small incast must pause someone"
    hops = {"hosts": "host", "tors": "tor", "cores": "core", "total": "total"}
    for w in ("memcached", "webserver", "hadoop", "websearch"):
        m = tomllib.loads((repo / "scenarios" / "papers" / "floodgate" / f"fig8-10-table2-{w}.toml").read_text())
        figs = {f["id"]: f for f in m["paper"]["figures"] if f["id"].startswith(f"table2-{w}")}
        # the table: one row per (run, hop); it adds up to the summary's pause time
        rows = {lab.rsplit(", ", 1)[1]: v for lab, v in con.execute(figs.pop(f"table2-{w}")["sql"]).fetchall()}
        assert set(rows) == {"total", "host", "tor", "core"}, w
        assert abs(rows["total"] - summary_us) < 1e-6 and abs(rows["host"] + rows["tor"] + rows["core"] - rows["total"]) < 1e-6, rows
        assert rows["tor"] > 0  # host 0's ToR pauses the spine, the spine its ToRs' uplinks or the ToRs their hosts
        # the claims' figures: one value per run label, the table's row of their hop
        assert figs, w
        for fid, f in figs.items():
            ((_, v),) = con.execute(f["sql"]).fetchall()
            assert abs(v - rows[hops[fid.rsplit("-", 1)[1]]]) < 1e-6, (fid, v, rows)
    assert abs(frames_us - summary_us) > 1.0, (frames_us, summary_us)


def test_a_dst_stride_takes_the_racks_in_turn(write):
    """Fig. 15's successive incasts: `dst = 0`, `dst_stride` = hosts per ToR sends burst k to the
    first host of rack k mod racks (Floodgate-NS3's generator), every other host sending."""
    text = SMALL.replace("bursts = 1", "bursts = 4").replace('at = "1us"', 'period = "5us"').replace(
        "degree = 8\ndst = 0", "degree = 11\ndst = 0\ndst_stride = 4")
    res = hopsim.run(write("rot.toml", text))
    f = res.flows
    firsts = f.groupby("dst")["start_ns"].min().sort_values()
    assert list(firsts.index) == [0, 4, 8] and sorted(f["dst"].value_counts()) == [11, 11, 22]
    assert (f["src"] != f["dst"]).all()


def test_inter_rack_keeps_flows_and_incast_senders_out_of_their_rack(write):
    """Floodgate-NS3's incastmix draws its Poisson pairs between racks (`generate_QP`) and redraws
    an incast sender in the destination's rack, so all of its traffic crosses the fabric;
    `workload.inter_rack` and `workload.incast.inter_rack` do the same on a leaf-spine, and only there.
    Unset, the pairs and senders are drawn among all other hosts, as before."""
    import tomllib

    from hopsim.scenario.model import ScenarioError, scenario_from_dict

    mix = SMALL.replace('kind = "incast"\nbursts = 1', 'kind = "incast_mix"\ncdf = "FacebookWebServer_IntraCluster_HomaSim.txt"\n'
                        'load = "50%"\nduration = "20us"').replace(
        "degree = 8\ndst = 0\nflow_size = \"200KB\"\nat = \"1us\"",
        'degree = 64\ndst = 0\nflow_size = "2KB"\nperiod = "10us"\nsenders = "with_replacement"')
    plain = hopsim.run(write("plain.toml", mix)).flows
    racked = hopsim.run(write("rack.toml", mix.replace('duration = "20us"', 'duration = "20us"\ninter_rack = true').replace(
        'senders = "with_replacement"', 'senders = "with_replacement"\ninter_rack = true'))).flows
    same = lambda f: f["src"] // 4 == f["dst"] // 4  # noqa: E731 (4 hosts per ToR)
    assert not same(racked).any() and len(racked[racked["incast"]]) == 128
    assert same(plain[~plain["incast"]]).any() and same(plain[plain["incast"]]).any()
    d = tomllib.loads(mix)
    d["topology"] = {"kind": "star", "hosts": 12, "rate": "100Gbps", "delay": "1us"}
    d["workload"]["inter_rack"] = True
    try:
        scenario_from_dict(d).core
        raise AssertionError("inter_rack on a star must be refused")
    except ScenarioError as e:
        assert "leaf_spine" in str(e) and "workload.inter_rack" in str(e)


def test_dcqcn_ns3_packets_are_as_long_as_floodgate_ns3s(repo, write):
    """Floodgate-NS3's PppHeader is 38 B (Ethernet 14 + preamble, FCS and gap 24: ppp-header.cc),
    so its data packets carry 72 B of headers (with IPv4 20, UDP 8, SeqTs 6), its ACKs 84 B (padded,
    rdma-hw.cc) and its PFC frames 70 B. The "dcqcn-ns3" run's transport and control settings must
    give an uncontended flow the time its reference run measured (fg11: fct.txt's receiver-side
    line `rcv 1 125 11876 2000050408 ... 3.597`, 9 packets over host-ToR-core-ToR-host at 100 /
    400 / 400 / 100 Gb/s, 600 ns each); with HPCC's 36 B of headers it would take 3,555 ns."""
    import tomllib

    sweep = tomllib.loads((repo / "scenarios" / "papers" / "floodgate" / "fig8-10-table2-webserver.toml").read_text())
    (ns3,) = [r for r in sweep["runs"] if r["name"] == "dcqcn-ns3"]
    wire = {k: v for k, v in ns3.items() if k.startswith(("transport.", "control."))}
    one = """
name = "one-flow"
duration = "50us"
[topology]
kind = "leaf_spine"
hosts_per_tor = 1
tors = 2
spines = 1
host_rate = "100Gbps"
fabric_rate = "400Gbps"
host_delay = "600ns"
fabric_delay = "600ns"
[workload]
kind = "flows"
flows = [{ src = 0, dst = 1, size = 11876 }]
[congestion_control]
algorithm = "dcqcn"
[transport]
mtu = 1460                      # PACKET_PAYLOAD_SIZE (base-webserver.toml)
"""
    f = hopsim.run(write("one.toml", one), overrides=wire).flows
    # ns-3 rounds each transmission to whole ns: 11 ns off here with 72 B, 42 with 36 B
    assert abs(f["fct_ns"].iloc[0] - 3597.0) < 20.0, f["fct_ns"].iloc[0]


def test_ecn_counting_voq_bytes_keeps_old_hashes_reaches_the_core_and_names_a_bad_value(write, cli):
    """`flow_control.floodgate.ecn_counts_voq` (Floodgate-NS3's ECN over a port's bytes from
    admission): left out of the core's JSON at its default (false), so Floodgate scenarios
    written before it keep their hash; true reaches the core; a bad value exits 2 naming it."""
    from hopsim.scenario.model import load_scenario

    sc = load_scenario(write("fg.toml", SMALL))
    assert "ecn_counts_voq" not in sc.core["net"]["flow_control"]
    assert sc.with_overrides({"flow_control.floodgate.ecn_counts_voq": False}).hash == sc.hash
    on = sc.with_overrides({"flow_control.floodgate.ecn_counts_voq": True})
    assert on.core["net"]["flow_control"]["ecn_counts_voq"] is True and on.hash != sc.hash
    code, msg = cli("validate", write("bad.toml", SMALL.replace("watch_dst = 0", 'ecn_counts_voq = "yes"')))
    assert code == 2 and "flow_control.floodgate.ecn_counts_voq" in msg, msg


def test_voq_service_and_window_fit_keep_old_hashes_reach_the_core_and_name_a_bad_value(write, cli):
    """`flow_control.floodgate.voq_service` and `window_fit` (Floodgate-NS3's VOQ order and
    window test): left out of the core's JSON at their defaults, so older Floodgate scenarios keep
    their hash; set, they reach the core; a value outside the allowed ones, or one the core cannot
    honour with the per-port VOQ pool, exits 2 naming the field."""
    from hopsim.scenario.model import load_scenario

    sc = load_scenario(write("fg.toml", SMALL))
    fc = sc.core["net"]["flow_control"]
    assert "voq_service" not in fc and "window_fit" not in fc
    assert sc.with_overrides({"flow_control.floodgate.voq_service": "strict", "flow_control.floodgate.window_fit": "mtu"}).hash == sc.hash
    on = sc.with_overrides({"flow_control.floodgate.voq_pool": "shared", "flow_control.floodgate.voq_service": "egress_fifo",
                            "flow_control.floodgate.window_unit": "bytes", "flow_control.floodgate.window_fit": "own_size"})
    assert (on.core["net"]["flow_control"]["voq_service"], on.core["net"]["flow_control"]["window_fit"]) == ("egress_fifo", "own_size")
    code, msg = cli("validate", write("bad.toml", SMALL.replace("watch_dst = 0", 'voq_service = "fifo"')))
    assert code == 2 and "flow_control.floodgate.voq_service" in msg, msg
    code, msg = cli("validate", write("perport.toml", SMALL.replace("watch_dst = 0", 'voq_service = "egress_fifo"')))
    assert code == 2 and "voq_service" in msg and "shared" in msg and "Traceback" not in msg, msg
