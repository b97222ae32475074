"""Shared fixtures: the repository root, a CLI runner, small scenario files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hopsim.cli import app

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def cli():
    """cli(*args) -> (exit_code, the text printed on stdout and stderr)."""
    runner = CliRunner()

    def invoke(*args: str):
        r = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
        return r.exit_code, r.output  # stdout and stderr, as a terminal shows them

    return invoke


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> path of a file in tmp_path with dedented text."""

    def w(name: str, text: str) -> Path:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())
        return p

    return w


TINY = """
name = "tiny"
seed = 1
[topology]
kind = "star"
hosts = 5
rate = "100Gbps"
delay = "1us"
[workload]
kind = "incast"
bursts = 1
[workload.incast]
degree = 4
flow_size = "100KB"
at = "1us"
dst = 0
[buffer]
size = "300KB"
[transport]
window = "off"
[record]
buffer_interval = "1us"
queue_ports = [[5, 0]]
"""


@pytest.fixture
def tiny(write) -> Path:
    """A 4-to-1 incast on a star: a few thousand events, with pauses."""
    return write("tiny.toml", TINY)


def import_config(cli, command: str, config: Path, text: str, tmp_path: Path, *extra):
    """Write `text` as a simulator's config file `config` and run `hopsim COMMAND config --out
    tmp_path/out/sc.toml --force EXTRA...` (import-floodgate, import-bfc); (exit code, output, the scenario
    path)."""
    config.write_text(text)
    out = tmp_path / "out" / "sc.toml"
    code, msg = cli(command, config, "--out", out, "--force", *extra)  # (a test may import into it again)
    return code, msg, out


def run_scenario(d: Path, text: str) -> Path:
    """Run scenario `text` through `hopsim run` into d/run (for a module's one run, made from
    tmp_path_factory); the run folder."""
    (d / "scenario.toml").write_text(textwrap.dedent(text).lstrip())
    r = CliRunner().invoke(app, ["run", str(d / "scenario.toml"), "--out", str(d / "run")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return d / "run"


BARE_CDF = """
[topology]
kind = "star"
hosts = 4

[workload]
kind = "background"
cdf = "WebSearch_HPCC.txt"
load = "30%"
duration = "1ms"
"""


@pytest.fixture
def bare_cdf() -> str:
    """A scenario that names its CDF bare (found among the package's workloads)."""
    return BARE_CDF

