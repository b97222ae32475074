"""The package as a user installs it: the wheel `maturin build --release` makes, installed into a
fresh virtual environment, used from an empty folder (no repository in sight): a scenario with a
bare CDF name, `hopsim reproduce ppfc --quick` and `hopsim run` of an example `hopsim init`
copied out. And the sdist carries the same data and the Rust sources the wheel is built from.

Slow (a release build when the extension is not built yet, then the dependencies' install from
the package index): marked `slow`, which scripts/test.sh runs like every other test."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]



def sh(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 900) -> str:
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout + p.stderr


def test_the_sdist_carries_the_data_and_the_rust_sources(tmp_path: Path):
    sh([sys.executable, "-m", "maturin", "sdist", "--out", str(tmp_path)], REPO)
    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for want in ("python/hopsim/data/workloads/WebSearch_HPCC.txt", "python/hopsim/data/scenarios/small-incast-star.toml",
                 "python/hopsim/data/scenarios/papers/ppfc/dumbbell-8to1.toml", "crates/hopsim-core/src/lib.rs",
                 "crates/hopsim-py/build.rs", "examples/buffer-pause-plugin/src/lib.rs"):
        assert want in names, want


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_environment_works_from_an_empty_folder(tmp_path: Path, bare_cdf: str):
    dist = tmp_path / "dist"
    sh([sys.executable, "-m", "maturin", "build", "--release", "--out", str(dist)], REPO, timeout=1800)
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "hopsim/data/workloads/WebSearch_HPCC.txt" in names
    assert "hopsim/data/scenarios/papers/ppfc/dumbbell-8to1.toml" in names
    assert not [n for n in names if n.startswith(("workloads/", "scenarios/"))], "data outside the package"

    venv = tmp_path / "venv"
    sh([sys.executable, "-m", "venv", str(venv)], tmp_path)
    sh([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], tmp_path, timeout=1800)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    hopsim = str(venv / "bin" / "hopsim")

    (empty / "bare.toml").write_text(bare_cdf)
    out = sh([hopsim, "run", "bare.toml", "--out", "bare"], empty)
    assert "flows finished" in out and (empty / "bare" / "flows.parquet").is_file()

    out = sh([hopsim, "examples"], empty)
    assert "small-incast-star" in out
    sh([hopsim, "init", "small-incast-star"], empty)
    out = sh([hopsim, "run", "small-incast-star.toml", "--out", "star"], empty)
    assert "8/8 flows finished" in out

    out = sh([hopsim, "reproduce", "ppfc", "--quick", "--out", "ppfc"], empty)
    assert "page: " in out and (empty / "ppfc" / "ppfc.html").is_file()
    # nothing came from the repository: the installed package is the one that ran
    where = sh([str(venv / "bin" / "python"), "-c", "import hopsim; print(hopsim.__file__)"], empty)
    assert str(venv) in where
