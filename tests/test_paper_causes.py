"""The FlowSail, Floodgate, BFC, P-PFC and Pulser reproductions explain every claim they cannot match: a claim
that names where its cause is written also says what kind of cause it is (`cause_class`), and a
claim's range is one the paper gives (a range made up to stand for a statement in words, such as
"greatly reduced", cannot be checked against anything)."""

from __future__ import annotations

import pytest

from hopsim.papers.reproduce import paper_dir, paper_sweeps

PAPERS = ("flowsail", "floodgate", "bfc", "ppfc", "pulser")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_cause_names_its_class(repo, paper):
    unclassed = [f"{path.name} {fig.id} {r.ratio or r.label}"
                 for path, model in paper_sweeps(paper_dir(str(repo / "scenarios" / "papers" / paper)))
                 for fig in model.paper.figures for r in fig.reported if r.cause and not r.cause_class]
    assert not unclassed, unclassed


@pytest.mark.parametrize("paper", PAPERS)
def test_no_claim_carries_a_range_the_paper_never_gave(repo, paper):
    made_up = [f"{path.name} {fig.id}: {r.note}"
               for path, model in paper_sweeps(paper_dir(str(repo / "scenarios" / "papers" / paper)))
               for fig in model.paper.figures for r in fig.reported
               if r.range and any(w in r.note for w in ("our range", "read off the plot"))]
    assert not made_up, made_up
