"""How a paper's page judges and draws: the three tiers of a claim at their boundaries, one colour
per scheme on every page, the paper's names, and the overlap check that keeps text readable."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hopsim.papers.claims import Reported, check  # noqa: E402
from hopsim.papers.figstyle import SCHEMES, marker_of, num, scheme_name, scheme_of, variant_of  # noqa: E402
from hopsim.papers.plot import _colour_map, _legend_name, _series_of, text_overlaps  # noqa: E402
from hopsim.papers.reproduce import all_papers, paper_dir, paper_sweeps  # noqa: E402

from paper_claims import planned_labels  # noqa: E402

ROOT = Path(__file__).resolve().parents[1] / "scenarios" / "papers"


@pytest.mark.parametrize("h, tier", [(1.24, "matches"), (1.26, "same direction"), (0.76, "matches"),
                                     (0.74, "same direction"), (1.9, "same direction"), (2.1, "differs"),
                                     (1 / 1.9, "same direction"), (1 / 2.1, "differs")])
def test_value_tiers_at_their_boundaries(h, tier):
    assert check(Reported(label="a", value=10.0), {"a": 10.0 * h}).tier == tier


@pytest.mark.parametrize("h, tier", [(2.48, "matches"), (2.52, "same direction"), (3.8, "same direction"),
                                     (4.2, "differs"), (0.9, "differs"), (1.02, "differs")])
def test_ratio_tiers_at_their_boundaries(h, tier):
    # the paper's ratio 2.0: within 25% matches, within 2x on the same side of 1 is its direction,
    # the wrong side of 1 (0.9) and no difference (1.02) differ whatever the factor
    v = check(Reported(ratio=["a", "b"], value=2.0), {"a": h, "b": 1.0})
    assert v.tier == tier, v


def test_a_range_matches_inside_and_is_measured_from_its_nearer_end():
    r = Reported(ratio=["a", "b"], range=[2.0, 4.0])
    assert check(r, {"a": 3.9, "b": 1.0}).tier == "matches"
    assert check(r, {"a": 4.4, "b": 1.0}).tier == "same direction"  # 10% above the range: no 25% rule for ranges
    assert check(r, {"a": 8.4, "b": 1.0}).tier == "differs"  # 2.1x the range's top
    # a ratio below 1 in the paper: hopsim above 1 is the wrong side, 25% or not
    low = Reported(ratio=["a", "b"], value=0.9)
    assert check(low, {"a": 1.1, "b": 1.0}).tier == "differs"
    assert check(low, {"a": 0.8, "b": 1.0}).tier == "matches"
    assert check(Reported(label="zzz", value=1.0), {"a": 1.0}).tier is None
    # "at least 2x": a range open above
    least = Reported(ratio=["a", "b"], range=[2.0, math.inf])
    assert check(least, {"a": 50.0, "b": 1.0}).tier == "matches" and check(least, {"a": 1.5, "b": 1.0}).tier == "same direction"
    assert check(least, {"a": 1.0, "b": 1.0}).paper == "at least 2"


def test_a_direction_without_a_number_gets_a_verdict():
    r = Reported(ratio=["ppfc", "pfc"], direction="below")
    assert check(r, {"ppfc": 1.0, "pfc": 3.0}).tier == "same direction"
    assert check(r, {"ppfc": 3.0, "pfc": 1.0}).tier == "differs"
    assert check(r, {"ppfc": 1.0, "pfc": 1.01}).why == "no difference in hopsim"
    with pytest.raises(ValueError, match="direction"):
        Reported(ratio=["ppfc", "pfc"], direction="below", value=0.5)


def test_a_zero_matches_only_an_exact_zero_and_shows_the_value_it_got():
    r = Reported(label="floodgate", zero=True)
    assert check(r, {"floodgate": 0.0}).tier == "matches"
    v = check(r, {"floodgate": 1e-6})
    assert v.tier == "differs" and "1e-06" in v.why and v.paper == "0"
    assert check(r, {"floodgate": math.nan}).tier is None and check(r, {"dcqcn": 0.0}).tier is None
    for bad in ({"value": 1.0}, {"direction": "above"}):
        with pytest.raises(ValueError, match="zero"):
            Reported(label="a", zero=True, **bad)
    with pytest.raises(ValueError, match="zero"):
        Reported(ratio=["a", "b"], zero=True)


def test_a_ratio_over_a_zero_is_above_one_with_no_number():
    # "standard PFC never pauses" (0) and P-PFC does: the ratio has a direction, not a number
    above = Reported(ratio=["ppfc", "pfc"], direction="above")
    v = check(above, {"ppfc": 5.0, "pfc": 0.0})
    assert v.tier == "same direction" and v.hopsim == math.inf
    assert check(Reported(ratio=["ppfc", "pfc"], direction="below"), {"ppfc": 5.0, "pfc": 0.0}).tier == "differs"
    assert check(Reported(ratio=["a", "b"], value=3.0), {"a": 5.0, "b": 0.0}).tier == "same direction"
    assert check(Reported(ratio=["a", "b"], value=0.5), {"a": 5.0, "b": 0.0}).tier == "differs"
    # both zero: no ratio at all
    assert check(above, {"ppfc": 0.0, "pfc": 0.0}).tier is None


def test_comparable_is_a_ratio_of_one_within_a_quarter():
    same = Reported(ratio=["pfc_tag", "floodgate"], value=1.0)
    assert check(same, {"pfc_tag": 1.2, "floodgate": 1.0}).tier == "matches"
    assert check(same, {"pfc_tag": 0.8, "floodgate": 1.0}).tier == "matches"
    assert check(same, {"pfc_tag": 1.3, "floodgate": 1.0}).tier != "matches"


def test_a_zero_is_drawn_at_zero_with_its_note():
    from hopsim.papers.plot import _claim_value

    assert _claim_value(Reported(label="bfc", zero=True), {"bfc": 0.3}) == ("bfc", 0.0, 0.0, "paper's value: zero")


def _page_labels() -> dict[str, list[str]]:
    out = {}
    for paper in all_papers():
        labs: list[str] = []
        for path, _ in paper_sweeps(paper_dir(str(ROOT / paper))):
            labs += list(planned_labels(path, quick=True))
        out[paper] = labs
    return out


def test_one_scheme_keeps_one_colour_and_marker_on_every_page():
    seen: dict[str, set[tuple[str, str]]] = {}
    for paper, labels in _page_labels().items():
        page_colours: dict[str, str] = {}
        for path, model in paper_sweeps(paper_dir(str(ROOT / paper))):
            labs = list(planned_labels(path, quick=True))
            for fig in model.paper.figures:
                names = [_series_of(lab, fig.x) for lab in labs]
                names = [n for n in names if scheme_of(n)]
                col = _colour_map(list(reversed(names)), fig)  # any order: the colour is the scheme's
                for n in names:
                    v = variant_of(n)
                    seen.setdefault(v, set()).add((col[n], marker_of(n)))
                    page_colours.setdefault(col[n], v)
                    # two schemes of one page never share a colour
                    assert scheme_of(page_colours[col[n]]) == scheme_of(n) or page_colours[col[n]] == v, \
                        f"{paper}: {v} and {page_colours[col[n]]} share {col[n]}"
    many = {v: c for v, c in seen.items() if len(c) > 1}
    assert not many, f"schemes drawn in more than one colour or marker: {many}"
    assert ("#d62728", "D") in seen["dctcp"] and seen["pulser"] == {(SCHEMES["pulser"][1], "o")}  # Pulser's paper: DCTCP red


def test_the_papers_legend_names():
    assert scheme_name("bfc-32") == "BFC 32" and scheme_name("flowsail-8q, degree=50") == "FlowSail-8Q, degree=50"
    assert scheme_name("bfc-32q") == "BFC-32Q" and scheme_name("dcqcn-ns3") == "DCQCN-ns3"
    # a run that names only a setting of the page's scheme is drawn as that scheme
    from hopsim.papers.claims import Figure

    fig = Figure(id="f", title="t", plot="bars", metric="drops", scheme="floodgate", x="loss")
    assert _legend_name("", fig) == "Floodgate" and _colour_map([""], fig)[""] == SCHEMES["floodgate"][1]
    assert _series_of("dcqcn, loss 5%", "loss", "5%") == "dcqcn" and _series_of("dcqcn-10", "tors", 10) == "dcqcn"


def test_numbers_for_people():
    assert num(1_002_000) == "1,002,000" and num(570) == "570" and num(0.139) == "0.139" and num(3.0) == "3"
    assert "e+" not in num(5.7e2) and "e" not in num(1.2e-4)


def test_overlapping_text_is_found():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [0, 1, 2], label="a line")
    ax.set_xticks(range(8))
    ax.set_xticklabels([f"a long tick label {i}" for i in range(8)])
    ax.set_xlim(0, 7)
    assert any("x tick" in s for s in text_overlaps(fig))
    ax.set_xticks([0, 2])
    ax.set_xticklabels(["0", "2"])
    ax.set_xlim(0, 2)
    ax.legend(loc="center")  # over the line
    found = text_overlaps(fig)
    assert any("legend covers" in s for s in found) and not any("x tick" in s for s in found)
    plt.close(fig)
    assert math.isfinite(1.0)


def test_reproduce_estimates_its_wall_time_for_every_paper():
    from hopsim.papers.reproduce import expected_wall

    for paper in all_papers():
        sweeps = paper_sweeps(paper_dir(str(ROOT / paper)))
        for quick in (True, False):
            total, missing = expected_wall(sweeps, quick)
            assert total > 0 and not missing, f"{paper} ({'quick' if quick else 'full'}): no recorded time for {missing}"


def test_schemes_beside_their_variants_are_a_named_group_drawn_first():
    # P-PFC Fig. 16: PFC, P-PFC and CaPFC as the scenario sets them, beside CaPFC's WARN variants
    from hopsim.papers.claims import Figure
    from hopsim.papers.plot import DEFAULT_GROUP, _bars_main

    fig = Figure(id="f", title="t", plot="bars", sql="SELECT 1", y="q", unit="us")
    values = {"pfc": 800.0, "ppfc": 236.0, "capfc warn=3MB": 610.0, "capfc": 283.0, "capfc warn=1MB": 213.0}
    _, panels, rows, _ = _bars_main(None, fig, values, "t", "q", "us")
    ticks = [t.get_text() for t in panels[0].ax.get_xticklabels()]
    assert ticks == [DEFAULT_GROUP, "warn=1MB", "warn=3MB"]
    assert {r["x"] for r in rows if r["label"] in ("pfc", "ppfc", "capfc")} == {DEFAULT_GROUP}
    plt.close("all")
