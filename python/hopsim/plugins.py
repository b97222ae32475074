"""Flow-control schemes from outside the repository: ``hopsim plugin build PATH...`` builds one or
more scheme crates (each depends on ``hopsim-core = "0.1"`` and has ``pub fn register() ->
Result<(), String>``, as ``examples/buffer-pause-plugin`` does) together with the core into an
extension, ``hopsim_plugins._native``, and installs it into this Python environment; from then
on `hopsim` runs on that extension, so the crates' schemes are selectable by name beside the
built-in ones.

Why a whole extension and not a library loaded beside the built-in one: Rust has no stable ABI,
so a scheme's module can only run inside the core it was compiled with. The core's sources come
from the installed extension itself (``_native.rust_sources()``), so the build needs no checkout,
only cargo and maturin, and builds against exactly the core that is installed. A second build
replaces the first (give every crate you want at once); ``HOPSIM_PLUGINS=off`` runs the
built-in extension instead, and ``pip uninstall hopsim-plugins`` removes it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Callable

from .errors import ScenarioError

__all__ = ["build", "new_crate", "load_engine", "default_work", "DIST", "MODULE"]

TEMPLATE = "examples/buffer-pause-plugin"
"""The example plugin crate among the extension's sources: what `new_crate` copies."""

DIST = "hopsim-plugins"
"""The distribution a build installs (one per environment)."""
MODULE = "hopsim_plugins"
"""Its package, holding the extension ``_native``."""
ENV = "HOPSIM_PLUGINS"


def load_engine() -> object | None:
    """The installed plugin extension (``hopsim_plugins._native``), or None where there is none
    or ``HOPSIM_PLUGINS=off``. Called once, by ``hopsim/__init__.py``, before anything loads the
    built-in one."""
    import importlib
    import importlib.util

    if os.environ.get(ENV, "").strip().lower() in ("off", "0", "no"):
        return None
    if importlib.util.find_spec(MODULE) is None:
        return None
    return importlib.import_module(f"{MODULE}._native")


def default_work() -> Path:
    """Where builds keep their sources and cargo's target folder between builds (rebuilds then
    compile only what changed)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hopsim" / "plugin-build"


def _crate(path: Path) -> tuple[str, Path]:
    """The package name and folder of the scheme crate at `path`; ScenarioError naming PATH and
    what is wrong."""
    manifest = path / "Cargo.toml"
    if not manifest.is_file():
        raise ScenarioError(f"PATH {path}: no Cargo.toml there; give the folder of a scheme crate")
    try:
        cargo = tomllib.loads(manifest.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"PATH {manifest}: not valid TOML: {e}") from None
    name = cargo.get("package", {}).get("name")
    if not isinstance(name, str):
        raise ScenarioError(f"PATH {manifest}: no [package] name")
    dep = cargo.get("dependencies", {}).get("hopsim-core")
    if dep is None:
        raise ScenarioError(f"PATH {manifest}: the crate does not depend on hopsim-core; add hopsim-core = \"0.1\"")
    if isinstance(dep, dict) and ("path" in dep or "git" in dep):
        raise ScenarioError(f"PATH {manifest}: hopsim-core must be a version dependency (hopsim-core = \"0.1\"), "
                            "not a path or git one: the build supplies the installed core's sources")
    if not (path / "src" / "lib.rs").is_file():
        raise ScenarioError(f"PATH {path}: no src/lib.rs; a scheme crate is a library with `pub fn register()`")
    return name, path.resolve()


def _profile(workspace_toml: str) -> str:
    """The release profile the installed extension was built with, as TOML lines."""
    prof = tomllib.loads(workspace_toml).get("profile", {}).get("release", {})
    return "\n".join(f"{k} = {json.dumps(v)}" for k, v in prof.items())


def _write_engine(work: Path, src: Path, crates: list[tuple[str, Path]], workspace_toml: str) -> Path:
    eng = work / "engine"
    (eng / "src").mkdir(parents=True, exist_ok=True)
    (eng / "python" / MODULE).mkdir(parents=True, exist_ok=True)
    deps = "\n".join(f'{n.replace("-", "_")} = {{ package = {json.dumps(n)}, path = {json.dumps(str(p))} }}' for n, p in crates)
    (eng / "Cargo.toml").write_text(f"""# Written by `hopsim plugin build`: the core's binding with these scheme crates registered.
[package]
name = "{DIST}"
version = "0.1.0"
edition = "2021"
publish = false

[lib]
name = "{MODULE}"
crate-type = ["cdylib"]

[dependencies]
hopsim-py = {{ path = {json.dumps(str(src / "crates" / "hopsim-py"))}, default-features = false, features = ["extension-module"] }}
pyo3 = {{ version = "0.26", features = ["abi3-py311"] }}
{deps}

# the scheme crates' `hopsim-core = "0.1"` is the installed core's own sources
[patch.crates-io]
hopsim-core = {{ path = {json.dumps(str(src / "crates" / "hopsim-core"))} }}

[profile.release]
{_profile(workspace_toml)}

[workspace]
""")
    calls = ", ".join(f'{n.replace("-", "_")}::register' for n, _ in crates)
    (eng / "src" / "lib.rs").write_text(f"""//! Written by `hopsim plugin build`: `hopsim._native` with the schemes of {", ".join(n for n, _ in crates)}.
use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {{
    hopsim_py::init(m, &[{calls}])
}}
""")
    (eng / "pyproject.toml").write_text(f"""[build-system]
requires = ["maturin>=1.5,<2"]
build-backend = "maturin"

[project]
name = "{DIST}"
version = "0.1.0"
description = "hopsim's core with the scheme crates {", ".join(n for n, _ in crates)} (written by hopsim plugin build)"
requires-python = ">=3.11"

[tool.maturin]
python-source = "python"
module-name = "{MODULE}._native"
""")
    (eng / "python" / MODULE / "__init__.py").write_text(
        f'"""hopsim\'s core with the scheme crates {", ".join(n for n, _ in crates)}: `hopsim` loads `_native` from here."""\n\n'
        f"CRATES = {json.dumps([n for n, _ in crates])}\n")
    lock = src / "Cargo.lock"
    if lock.is_file() and not (eng / "Cargo.lock").exists():
        shutil.copyfile(lock, eng / "Cargo.lock")  # the versions the installed core was tested with
    return eng


def build(paths: list[Path], work: Path | None = None, target: Path | None = None,
          say: Callable[[str], None] = lambda line: None) -> Path:
    """Build the scheme crates at `paths` with the installed core into ``hopsim-plugins`` and
    install it with pip (into `target` if given, else this environment). Returns the wheel.
    Raises ScenarioError for bad input or a failed step (the tool's last lines)."""
    from . import _native

    if shutil.which("cargo") is None:
        raise ScenarioError("hopsim plugin build needs cargo (the Rust toolchain: https://rustup.rs)")
    try:
        import maturin  # noqa: F401
    except ImportError:
        raise ScenarioError("hopsim plugin build needs maturin: pip install 'hopsim[plugin]' (or pip install maturin)") from None
    crates = [_crate(Path(p)) for p in paths]
    names = [n for n, _ in crates]
    if len(set(names)) != len(names):
        raise ScenarioError(f"PATH: two crates named alike ({', '.join(names)})")
    work = (work or default_work()).resolve()
    src = work / "hopsim"
    files: dict[str, str] = json.loads(getattr(_native, "rust_sources")())
    if src.exists():
        shutil.rmtree(src)
    for rel, text in files.items():
        if rel == "Cargo.toml":
            continue  # the workspace's: only its release profile is used (`_profile`)
        f = src / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    eng = _write_engine(work, src, crates, files.get("Cargo.toml", ""))
    dist = work / "dist"
    if dist.exists():
        shutil.rmtree(dist)
    say(f"building {DIST} with {', '.join(names)} in {eng} (cargo, release mode: minutes the first time)")
    _step([sys.executable, "-m", "maturin", "build", "--release", "--out", str(dist)], eng, "maturin build")
    wheel = next(dist.glob("*.whl"))
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", "--quiet", str(wheel)]
    if target is not None:
        pip[4:4] = ["--target", str(target.resolve()), "--upgrade"]
    say(f"installing {wheel.name}" + (f" into {target}" if target else ""))
    _step(pip, work, "pip install")
    return wheel


def new_crate(dest: Path) -> Path:
    """A scheme crate to start from at `dest` (a new folder): the example plugin
    (``examples/buffer-pause-plugin``, a switch-wide buffer pause) from the installed extension's
    sources, with hopsim-core as the version dependency `build` supplies. Refuses an existing
    path (ScenarioError)."""
    from . import _native

    if dest.exists() or dest.is_symlink():
        raise ScenarioError(f"PATH {dest}: already exists; hopsim plugin new writes a new folder")
    files: dict[str, str] = json.loads(getattr(_native, "rust_sources")())
    prefix = TEMPLATE + "/"
    for rel, text in files.items():
        if not rel.startswith(prefix):
            continue
        if rel == prefix + "Cargo.toml":
            text = text.replace('hopsim-core = { path = "../../crates/hopsim-core" }', 'hopsim-core = "0.1"')
        f = dest / rel[len(prefix):]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return dest


def _step(cmd: list[str], cwd: Path, what: str) -> None:
    import subprocess

    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-20:])
        raise ScenarioError(f"{what} failed (exit {p.returncode}):\n{tail}")
