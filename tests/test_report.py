"""The HTML report: built from a folder of runs, loads in headless Chromium with its figures."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

import pytest

import hopsim
from hopsim.papers import plots
from conftest import TINY

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.fail("headless Chromium is needed: install Debian's `chromium` package (scripts/test.sh does)")


def _browse(args: list[str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def sweep_out(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    (d / "base.toml").write_text(TINY)
    (d / "sweep.toml").write_text('base = "base.toml"\nseeds = [1, 2]\n[grid]\n"flow_control.scheme" = ["pfc", "capfc"]\n')
    hopsim.run_sweep(d / "sweep.toml", d / "runs", jobs=1)
    return d / "runs"


def test_report_loads_in_chromium_with_images(sweep_out, tmp_path, cli):
    out = tmp_path / "report.html"
    code, msg = cli("report", sweep_out, "--out", out)
    assert code == 0, msg
    html = out.read_text()
    imgs = re.findall(r"<img [^>]*src='data:image/png;base64,", html)
    assert len(imgs) == len(plots.ALL_FIGURES) == 6
    assert "scheme=pfc" in html and "scheme=capfc" in html and "Summary by label" in html

    r = _browse(["--virtual-time-budget=10000", "--dump-dom", out.as_uri()])
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<body[^>]*data-images-loaded="(\d+)"[^>]*data-images-total="(\d+)"', r.stdout)
    assert m, r.stdout[:500]
    assert m.group(1) == m.group(2) == "6"  # every figure decoded in the browser

    shot = tmp_path / "shot.png"
    r = _browse(["--window-size=1200,3000", f"--screenshot={shot}", out.as_uri()])
    assert r.returncode == 0 and shot.stat().st_size > 50_000  # a page of figures, not a blank one


def test_each_figure_function(sweep_out):
    runs = hopsim.runs_frame(sweep_out)
    tables = plots.load_tables(runs, ["flows", "buffer", "queues", "ports"])
    for key, (_, fn, table) in plots.ALL_FIGURES.items():
        fig = fn(tables[table])
        assert fig.axes, key
    # every axis names its unit (or is an axis of hop classes), and a scheme has its one colour
    from hopsim.papers.figstyle import SCHEMES, has_unit

    for key, (_, fn, table) in plots.ALL_FIGURES.items():
        for ax in fn(tables[table]).axes:
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                assert has_unit(label) or label.startswith("hop class"), (key, label)
    fig = plots.fct_slowdown(tables["flows"])
    colours = {ln.get_label(): ln.get_color() for ln in fig.axes[0].lines}
    assert colours["CaPFC"] == SCHEMES["capfc"][1] and colours["PFC"] == SCHEMES["pfc"][1]
    # empty input draws a "no data" figure rather than failing
    fig = plots.queue_timeseries(tables["queues"].iloc[0:0])
    assert fig.axes


def test_a_log_axis_of_only_zeros_stays_linear_without_a_warning():
    """A paper figure on a log axis whose runs gave only zeros (no pauses in a short run) is drawn
    on a linear axis, silently; any positive value keeps the log axis."""
    import warnings

    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = plots.labelled_bars({"pfc": 0.0, "bfc": 0.0, "nan": float("nan")}, "pauses", logy=True)
        assert fig.axes[0].get_yscale() == "linear"
        df = pd.DataFrame({"series": ["a", "a"], "x": [1, 2], "value": [0.0, 0.0]})
        assert plots.lines(df, "x", "drops", logy=True).axes[0].get_yscale() == "linear"
    assert plots.labelled_bars({"pfc": 0.0, "bfc": 3.0}, "pauses", logy=True).axes[0].get_yscale() == "log"
    df = pd.DataFrame({"series": ["a", "a"], "x": [1, 2], "value": [0.0, 5.0]})
    assert plots.lines(df, "x", "drops", logy=True).axes[0].get_yscale() == "log"


def test_report_of_nothing_is_an_error(tmp_path, cli):
    code, msg = cli("report", tmp_path, "--out", tmp_path / "r.html")
    assert code == 2 and "no complete run folders" in msg
    assert not (tmp_path / "r.html").exists()
