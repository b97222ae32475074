"""FlowSail's reproduction files (scenarios/papers/flowsail): every sweep plans (quick and full)
and each claim names a run its sweep makes; and the §VI-B fabric's outputs carry issue 12's
in-order evidence: with two queues per port under the 50-to-1 incast, the ports table counts the
order marks sent and matched (equal), and the summary's out-of-order count stays zero."""

from __future__ import annotations

import hopsim

from paper_claims import unmatched_claims


def test_every_flowsail_sweep_plans_and_its_claims_name_its_runs(repo):
    for quick in (False, True):
        ids, missing = unmatched_claims(repo / "scenarios" / "papers" / "flowsail", quick=quick)
        assert len(ids) == len(set(ids)), "figure ids are unique in the paper"
        assert {"fig9-f2", "fig9-f3", "fig10b", "fig10c", "fig12", "fig14a", "fig14b", "fig15"} <= set(ids), ids
        assert not missing, missing


def test_two_queue_fabric_run_reports_order_marks_matched_and_nothing_out_of_order(repo):
    res = hopsim.run(repo / "scenarios" / "papers" / "flowsail" / "fabric-webserver.toml",
                     overrides={"topology.file": "fabric-128.txt", "workload.duration": "50us", "queues.count": 2,
                                "workload.load": 0.8})
    ports = res.ports
    sent, matched = int(ports["markers_inserted"].sum()), int(ports["markers_matched"].sum())
    counters = res.summary["counters"]
    assert res.summary["flows_finished"] == res.summary["flows"]
    assert res.flows["incast"].sum() >= 50, "the 50-to-1 incast ran"
    assert sent > 0, "flows were isolated with packets still queued: order marks went out"
    assert sent == matched == res.summary["modules"]["flowsail_order_marks"]
    assert counters["out_of_order"] == 0 and counters["nacks"] == 0
