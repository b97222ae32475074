"""The Python front's layering: no import circle among hopsim's modules, and no module importing
one of a higher layer.

The layers, lowest first (the table below; a module belongs to the longest name in it that is
its own or one of its packages'):

- base: errors, progress, interrupts and the core (`hopsim._native`), which everything may use;
- scenario: what a scenario is (schema, units, paths, the core's registries, resources);
- results: what a run leaves (tables, spool, run folders, locks, SQL over them);
- interop: the seed simulators' files (one subpackage per simulator, the shared ns-3 config
  reader and FCT row, compare-fct);
- claims: what a sweep file's ``[paper]`` table says and the units its axes may name
  (`papers.claims`, `papers.figstyle`). They stand in the papers' folder but below sweep, which
  validates a sweep file whole, its claims included;
- run: running one scenario, and sweeps of them;
- papers: reproductions, their pages, figures and reports;
- cli: the command line and the package's own namespace (`hopsim/__init__.py` re-exports `run`
  and `query`).

Every import statement counts, wherever it stands (at the top, inside a function, under
``TYPE_CHECKING``): one written inside a function to get around a circle is still the circle.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import hopsim

PACKAGE = Path(hopsim.__file__).parent

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("hopsim.errors", "hopsim.progress", "hopsim.interrupts", "hopsim._native")),
    ("scenario", ("hopsim.scenario",)),
    ("results", ("hopsim.results",)),
    ("interop", ("hopsim.interop",)),
    ("claims", ("hopsim.papers.claims", "hopsim.papers.figstyle")),
    ("run", ("hopsim.run", "hopsim.sweep")),
    ("papers", ("hopsim.papers",)),
    ("cli", ("hopsim.cli", "hopsim.__main__", "hopsim")),
]


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every Python module of the package, by dotted name (a package by its own name)."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The hopsim modules `name` imports: ``from X import Y`` is X.Y where that is a module, else X."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                frm = ".".join(base + ([node.module] if node.module else []))
            else:
                frm = node.module or ""
            for a in node.names:
                sub = f"{frm}.{a.name}"
                out.add(sub if sub in known or sub == "hopsim._native" else frm)
    return {m for m in out if m == "hopsim" or m.startswith("hopsim.")} - {name}


def layer_of(name: str) -> int:
    best, layer = -1, None
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if (name == n or name.startswith(n + ".")) and len(n) > best:
                best, layer = len(n), i
    assert layer is not None, f"{name}: in no layer; add it to LAYERS in {Path(__file__).name}"
    return layer


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    mods = modules(root)
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def layer_breaks(g: dict[str, set[str]]) -> list[str]:
    out = []
    for a, targets in sorted(g.items()):
        for b in sorted(targets):
            la, lb = layer_of(a), layer_of(b)
            if lb > la:
                out.append(f"{a} (layer {LAYERS[la][0]}) imports {b} (layer {LAYERS[lb][0]}): a module may import "
                           "only from its own layer and those below it")
    return out


def circles(g: dict[str, set[str]]) -> list[str]:
    """One line per import circle found: the modules around it, the first named again at the end."""
    out, done = [], set()
    for start in sorted(g):
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        seen = set()
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(g.get(node, ())):
                if nxt == start:
                    key = frozenset(trail)
                    if key not in done:
                        done.add(key)
                        out.append(f"import circle: {' -> '.join([*trail, start])} (no module may reach itself "
                                   "through its imports)")
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    return out


def test_every_module_has_a_layer():
    for name in modules():
        layer_of(name)


def test_no_import_circle():
    found = circles(graph())
    assert not found, "\n".join(found)


def test_no_module_imports_a_higher_layer():
    found = layer_breaks(graph())
    assert not found, "\n".join(found)


def test_modules_named_in_strings_exist():
    """The modules the CLI preloads by name and the names the package exports on first use: a
    moved module would otherwise be found missing only when its command runs."""
    from hopsim import cli

    for command, names in cli._MODULES.items():
        for n in names:
            if n not in ("duckdb", "pandas"):
                assert (PACKAGE / (n.replace(".", "/") + ".py")).is_file(), f"cli._MODULES[{command!r}]: no module {n}"
    for name in hopsim.__all__:
        assert getattr(hopsim, name) is not None, name


@pytest.mark.parametrize("case", ["upward", "circle"])
def test_the_checks_fail_on_a_broken_tree(tmp_path, case):
    """The checks above, run over a copy of the package with one import added, name both modules
    and the rule."""
    import shutil

    root = tmp_path / "hopsim"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    if case == "upward":
        (root / "scenario" / "units.py").write_text((root / "scenario" / "units.py").read_text()
                                                    + "\nfrom ..results import store\n")
        found = layer_breaks(graph(root))
        assert any(f.startswith("hopsim.scenario.units (layer scenario) imports hopsim.results.store (layer results)")
                   for f in found), found
    else:
        (root / "results" / "tables.py").write_text((root / "results" / "tables.py").read_text()
                                                    + "\nfrom .store import write_run\n")
        found = circles(graph(root))
        assert any("hopsim.results.store" in f and "hopsim.results.tables" in f for f in found), found


def test_every_module_imports():
    """Each module loads on its own (its imports resolve after any move)."""
    for name in modules():
        if name != "hopsim.__main__":
            importlib.import_module(name)
