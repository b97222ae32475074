"""The documents' examples, run from the folder each document says: getting-started's commands
and sweep file in an empty folder of the user's own (its "Running", "Sweeps" and "Reading results"
sections), and the README's scenario, validated from an empty folder (it names its CDF bare).
Slow (a sweep of 18 runs): marked `slow`, which scripts/test.sh runs like every other test."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def blocks(md: str) -> list[tuple[str, str]]:
    """The fenced code blocks of a Markdown text: (language, text)."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", md, flags=re.M | re.S)]


def section(md: str, start: str, end: str) -> str:
    return md[md.index(start):md.index(end)]


def hopsim(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    args = shlex.split(line, comments=True)
    assert args[0] == "hopsim", line
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "hopsim", *args[1:]], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_getting_started_runs_in_a_folder_of_ones_own(tmp_path: Path):
    md = (REPO / "docs" / "getting-started.md").read_text()
    part = section(md, "### Running", "The flow-control modules report")
    ran = 0
    for lang, text in blocks(part):
        if lang == "toml":
            name = text.splitlines()[0].removeprefix("## ").strip()  # "## sweep.toml": the file to write
            (tmp_path / name).write_text(text)
            continue
        for line in text.splitlines():
            if not line.startswith("hopsim ") or "--cluster" in line:  # (a Dask scheduler is not at hand)
                continue
            r = hopsim(line, tmp_path)
            assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
            ran += 1
    assert ran >= 8
    assert (tmp_path / "report.html").is_file() and (tmp_path / "runs" / "s").is_dir()


def test_the_readme_scenario_validates_from_an_empty_folder(tmp_path: Path):
    md = (REPO / "README.md").read_text()
    (scenario,) = [text for lang, text in blocks(md) if lang == "toml" and 'name = "my-incast"' in text]
    (tmp_path / "my-incast.toml").write_text(scenario)
    r = hopsim("hopsim validate my-incast.toml", tmp_path)
    assert r.returncode == 0, r.stderr
