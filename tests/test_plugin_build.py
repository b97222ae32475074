"""A flow-control scheme from a crate outside the repository: `hopsim plugin build PATH` builds
it with the installed core (whose sources the extension carries) into an extension installed
beside hopsim, and `hopsim run` then selects the scheme by name. Done from a temporary folder
with a crate made there, as a user would, without touching the checkout.

Slow (a release build of the core and, the first time, of its dependencies): marked `slow`,
which scripts/test.sh runs like every other test. Its cargo folder is target/plugin-build, kept
between runs; not target/ itself, where the build's copy of hopsim-py without its module would
take the place of the extension's library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hopsim.plugins import build, new_crate

REPO = Path(__file__).resolve().parents[1]

SCENARIO = """
[topology]
kind = "star"
hosts = 9

[workload]
kind = "incast"
bursts = 1

[workload.incast]
degree = 8
flow_size = "200KB"
at = "1us"
dst = 0

[buffer]
size = "1MB"

[transport]
window = "off"

[flow_control]
scheme = "my_pause"

[flow_control.my_pause]
limit = "100KB"
"""


def scheme_crate(root: Path) -> Path:
    """The crate `hopsim plugin new` writes (the example buffer-pause scheme), its scheme renamed
    as a user makes it their own."""
    crate = new_crate(root / "my-pause")
    lib = crate / "src" / "lib.rs"
    lib.write_text(lib.read_text().replace("buffer_pause", "my_pause"))
    toml = crate / "Cargo.toml"
    toml.write_text(toml.read_text().replace('name = "buffer-pause-plugin"', 'name = "my-pause"'))
    return crate


def hopsim(args: list[str], cwd: Path, site: Path | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "hopsim", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_plugin_new_writes_the_example_crate_with_a_version_dependency_and_never_over_a_folder(tmp_path: Path, cli):
    code, out = cli("plugin", "new", str(tmp_path / "mine"))
    assert code == 0, out
    assert 'hopsim-core = "0.1"' in (tmp_path / "mine" / "Cargo.toml").read_text()
    assert (tmp_path / "mine" / "src" / "lib.rs").read_text() == (REPO / "examples" / "buffer-pause-plugin" / "src" / "lib.rs").read_text()
    code, out = cli("plugin", "new", str(tmp_path / "mine"))
    assert code == 2 and "already exists" in out


def test_a_crate_that_pins_the_core_by_path_is_refused_by_name(tmp_path: Path, cli):
    crate = scheme_crate(tmp_path)
    toml = crate / "Cargo.toml"
    toml.write_text(toml.read_text().replace('hopsim-core = "0.1"', 'hopsim-core = { path = "../hopsim/crates/hopsim-core" }'))
    assert "path =" in toml.read_text()
    code, out = cli("plugin", "build", str(crate), "--work", str(tmp_path / "work"))
    assert code == 2 and "hopsim-core must be a version dependency" in out
    assert not (tmp_path / "work").exists()


@pytest.mark.slow
def test_a_scheme_crate_from_a_temporary_folder_runs_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    crate = scheme_crate(tmp_path)
    (tmp_path / "s.toml").write_text(SCENARIO)
    # without the plugin, the name is unknown
    before = hopsim(["validate", "s.toml"], tmp_path, None)
    assert before.returncode == 2 and "my_pause" in before.stderr, before.stderr

    monkeypatch.setenv("CARGO_TARGET_DIR", str(REPO / "target" / "plugin-build"))
    site = tmp_path / "site"
    wheel = build([crate], tmp_path / "work", site)
    assert wheel.name.startswith("hopsim_plugins-")
    assert (site / "hopsim_plugins" / "__init__.py").is_file()

    r = hopsim(["run", "s.toml", "--out", "r"], tmp_path, site)
    assert r.returncode == 0, r.stderr
    modules = json.loads((tmp_path / "r" / "summary.json").read_text())["modules"]
    assert modules["my_pause_pauses"] > 0
    # the built-in extension again with HOPSIM_PLUGINS=off
    off = subprocess.run([sys.executable, "-m", "hopsim", "validate", "s.toml"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(site), "HOPSIM_PLUGINS": "off"})
    assert off.returncode == 2
