"""Claims on a series over time (`Reported.stat` over `x_range`): the window's ends, each statistic,
the time to reach a level, a window against an earlier one, their verdicts in the three tiers, the
schema's one-line refusals, and the judged window drawn on the chart."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from hopsim.errors import ScenarioError  # noqa: E402
from hopsim.papers.claims import Figure, Reported, check, claim_axis, series_values  # noqa: E402
from hopsim.papers.plot import draw, text_overlaps  # noqa: E402

# a: 10 at x 0-3, then 1 from x 4 on; b: 10 throughout (never reaches 1)
X = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
A = [10.0, 10.0, 10.0, 10.0, 1.0, 1.0, 1.0]
SERIES = pd.DataFrame({"label": ["a"] * 7 + ["b"] * 7, "x": X * 2, "y": A + [10.0] * 7})


def stat(kind: str, window: list[float], label: str = "a", **kw) -> float:
    return series_values(SERIES, Reported(label=label, x_range=window, stat=kind, value=1.0, **kw))[label]


def test_the_window_holds_both_its_ends_and_nothing_beyond():
    assert stat("mean", [3.0, 4.0]) == 5.5  # x 3 (10) and x 4 (1): both ends in
    assert stat("mean", [3.5, 4.0]) == 1.0  # x 3 is out
    assert stat("mean", [3.0, 3.5]) == 10.0  # x 4 is out
    assert stat("last", [0.0, 3.0]) == 10.0 and stat("last", [0.0, 4.0]) == 1.0
    assert math.isnan(stat("mean", [6.5, 9.0]))  # no point inside: no number


def test_each_statistic_of_the_window():
    assert stat("mean", [0.0, 6.0]) == pytest.approx((4 * 10 + 3 * 1) / 7)
    assert stat("min", [0.0, 3.0]) == 10.0 and stat("min", [0.0, 6.0]) == 1.0
    assert stat("max", [4.0, 6.0]) == 1.0 and stat("max", [3.0, 6.0]) == 10.0
    # the last point is the one with the greatest x, whatever the rows' order
    rev = SERIES.iloc[::-1]
    assert series_values(rev, Reported(label="a", x_range=[0.0, 6.0], stat="last", value=1.0))["a"] == 1.0


def test_the_time_to_reach_a_level_counts_from_the_windows_start():
    assert stat("reach", [1.0, 6.0], level=1.0) == 3.0  # x 4, 3 after the window opens
    assert stat("reach", [4.0, 6.0], level=1.0) == 0.0  # reached at the window's first point
    assert stat("reach", [1.0, 6.0], level=0.999) == math.inf  # y <= level: 1 is not below 0.999
    assert stat("reach", [1.0, 6.0], label="b", level=1.0) == math.inf


def test_a_window_against_an_earlier_one_of_the_same_series():
    r = Reported(label="a", x_range=[4.0, 6.0], stat="mean", relative_to=[0.0, 3.0], value=1.0)
    assert series_values(SERIES, r)["a"] == pytest.approx(0.1)
    assert series_values(SERIES, r)["b"] == pytest.approx(1.0)
    assert check(r, series_values(SERIES, r)).tier == "differs"
    assert claim_axis(Figure(id="f", title="t", plot="series", sql="s", y="window", unit="KB", x_label="time (us)",
                             reported=[r]), r)[1] is None  # a ratio: no unit


def test_series_claims_in_the_three_tiers():
    r = Reported(label="a", x_range=[4.0, 6.0], stat="mean", value=1.2)
    assert check(r, series_values(SERIES, r)).tier == "matches"  # 1 against 1.2: 17% off
    assert check(Reported(label="a", x_range=[4.0, 6.0], stat="mean", value=1.9), series_values(SERIES, r)).tier \
        == "same direction"
    # the time to reach: never reaching differs from a number, and is above 1 in a ratio
    reach = Reported(label="b", x_range=[1.0, 6.0], stat="reach", level=1.0, value=3.0)
    v = check(reach, series_values(SERIES, reach))
    assert v.tier == "differs" and "never reaches 1" in v.why
    slower = Reported(ratio=["b", "a"], x_range=[1.0, 6.0], stat="reach", level=1.0, direction="above")
    v = check(slower, series_values(SERIES, slower))
    assert v.tier == "same direction" and v.hopsim == math.inf and "b never reaches" in v.why
    faster = Reported(ratio=["a", "b"], x_range=[1.0, 6.0], stat="reach", level=1.0, direction="above")
    v = check(faster, series_values(SERIES, faster))
    assert v.tier == "differs" and v.hopsim == 0 and v.why.startswith("below 1")
    assert check(faster.model_copy(update={"direction": "below"}), series_values(SERIES, faster)).tier == "same direction"


@pytest.mark.parametrize("fields, words", [
    ({"stat": "median"}, ["stat", "mean", "reach"]),
    ({"stat": None}, ["x_range", "stat"]),
    ({"x_range": [5.0, 1.0]}, ["x_range", "low first"]),
    ({"stat": "reach"}, ["level"]),
    ({"level": 3.0}, ["level", "reach"]),
    ({"relative_to": [0.0, 1.0], "stat": "reach", "level": 1.0}, ["relative_to"]),
    ({"metric": "drops"}, ["metric"]),
])
def test_bad_series_claims_are_refused_in_one_line(fields, words, tmp_path):
    from hopsim.sweep import read_sweep

    claim = {"label": "a", "x_range": [0.0, 1.0], "stat": "mean", "value": 1.0, **fields}
    lines = "\n".join(f"{k} = {_toml(v)}" for k, v in claim.items() if v is not None)
    (tmp_path / "base.toml").write_text('name = "b"\n[topology]\nkind = "star"\nhosts = 3\n')
    (tmp_path / "s.toml").write_text(f'name = "s"\nbase = "base.toml"\n[[runs]]\nname = "a"\n[paper]\n[[paper.figures]]\n'
                                     f'id = "f"\ntitle = "t"\nplot = "series"\nsql = "SELECT 1"\ny = "w"\nunit = "KB"\n'
                                     f'x_label = "time (us)"\n[[paper.figures.reported]]\n{lines}\n')
    with pytest.raises(ScenarioError) as e:
        read_sweep(tmp_path / "s.toml")
    msg = str(e.value)
    assert "\n" not in msg.strip() and all(w in msg for w in words), msg


def _toml(v) -> str:
    return f'"{v}"' if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def test_a_window_claim_needs_a_series_and_a_series_claim_needs_a_window():
    with pytest.raises(ValueError, match="plot = 'series'"):
        Figure(id="f", title="t", plot="bars", metric="drops",
               reported=[Reported(label="a", x_range=[0.0, 1.0], stat="mean", value=1.0)])
    with pytest.raises(ValueError, match="x_range and stat"):
        Figure(id="f", title="t", plot="series", sql="s", y="w", unit="KB", x_label="time (us)",
               reported=[Reported(label="a", value=1.0)])


class _Con:
    def __init__(self, df: pd.DataFrame):
        self.df = df

    def execute(self, sql: str):
        df = self.df

        class R:
            def fetchdf(self):
                return df
        return R()


def test_the_judged_window_is_shaded_and_the_papers_number_drawn_across_it():
    claims = [Reported(label="a", x_range=[4.0, 6.0], stat="mean", value=1.2),
              Reported(ratio=["b", "a"], x_range=[1.0, 6.0], stat="reach", level=1.0, direction="above"),
              Reported(label="b", x_range=[4.0, 6.0], stat="mean", relative_to=[0.0, 3.0], value=0.5)]
    fig = Figure(id="f", title="t", plot="series", sql="s", y="window", unit="KB", x_label="time (us)", reported=claims)
    d = draw(_Con(SERIES), fig, {})
    try:
        ax = d.figure.axes[0]
        windows = sorted((round(p.get_x(), 6), round(p.get_x() + p.get_width(), 6)) for p in ax.patches
                         if str(p.get_gid()).startswith("paper-window"))
        assert windows == [(0.0, 3.0), (1.0, 6.0), (4.0, 6.0)]
        assert d.drawn == [0, 2]  # a direction has no number to draw
        (line,) = [a for a in ax.lines if a.get_gid() == "paper-claim-0"]
        assert list(line.get_xdata()) == [4.0, 6.0] and list(line.get_ydata()) == [1.2, 1.2]
        # a ratio to the earlier window: at the paper's 0.5 x hopsim's mean there (10)
        (line,) = [a for a in ax.lines if a.get_gid() == "paper-claim-2"]
        assert list(line.get_ydata()) == [5.0, 5.0]
        row = d.data[d.data["paper_is"].notna() & (d.data["paper"] == 1.2)]
        assert list(row["x"]) == [4.0]  # the paper's number beside hopsim's first point in the window
        assert not text_overlaps(d.figure)
    finally:
        plt.close(d.figure)
