"""Pages of the documentation made from the code when the site is built, so they cannot drift:

- ``reference/scenario-fields.md``: every scenario field from the pydantic schema
  (`hopsim.scenario.schema.ScenarioModel`): its table, type, default and description;
- ``schemes.md``: each flow-control and congestion-control module's doc comment
  (``crates/hopsim-core/src/fc/*.rs``, ``cc/*.rs``): its paper, the sections it follows and the
  interpretation choices;
- ``changelog.md``: the repository's CHANGELOG.md.

MkDocs runs this file as a hook (``hooks:`` in mkdocs.yml): `on_files` adds the pages to the site.
``python scripts/docs_pages.py DIR`` writes them into DIR instead, to read them without MkDocs.
"""

from __future__ import annotations

import re
import sys
import types
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "crates" / "hopsim-core" / "src"
PAGES = {"reference/scenario-fields.md": "scenario_reference", "schemes.md": "schemes_page",
         "changelog.md": "changelog_page"}


# ----------------------------------------------------------------------------- scenario fields


def _models(annotation) -> list[type]:
    """The pydantic models an annotation holds (a model, Optional of one, a union of several)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out = []
    for a in typing.get_args(annotation):
        out += _models(a)
    return out


def _type_text(annotation) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_text(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a!r}`".replace("'", '"') for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(a) for a in typing.get_args(annotation) if a is not type(None))
    if origin is not None:
        args = ", ".join(_type_text(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    return getattr(annotation, "__name__", str(annotation)).replace("NoneType", "none")


def _default(field) -> str:
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    if field.is_required():
        return "required"
    if field.default_factory is not None:
        v = field.default_factory()
        return "see below" if isinstance(v, BaseModel) else f"`{v!r}`"
    if field.default is PydanticUndefined or field.default is None:
        return "none"
    return f"`{field.default!r}`".replace("'", '"')


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(model: type, path: str, out: list[str], seen: set) -> None:
    if (model, path) in seen:
        return
    seen.add((model, path))
    kind = model.model_fields.get("kind")
    title = f"`[{path}]`" if path else "top level"
    if kind is not None and typing.get_origin(kind.annotation) is typing.Literal:
        title += f" with kind = {_type_text(kind.annotation)}"
    out += [f"## {title}", ""]
    doc = (model.__doc__ or "").strip()
    if doc and not doc.startswith(("A base class", "Usage docs")):
        out += [re.sub(r"\s+", " ", doc), ""]
    out += ["| field | type | default | description |", "|---|---|---|---|"]
    nested = []
    for name, f in model.model_fields.items():
        subs = _models(f.annotation)
        if subs:
            nested += [(m, f"{path}.{name}" if path else name) for m in subs]
            out.append(f"| `{name}` | table (below) | {_default(f)} | {_cell(f.description or '')} |")
            continue
        out.append(f"| `{name}` | {_cell(_type_text(f.annotation))} | {_cell(_default(f))} | {_cell(f.description or '')} |")
    out.append("")
    for m, p in nested:
        _table(m, p, out, seen)


def scenario_reference() -> str:
    from hopsim.scenario.schema import ScenarioModel

    out = ["# Scenario fields", "",
           "Every field of a scenario file, made from the schema (`python/hopsim/scenario/schema.py`) when this site is "
           "built. Sizes, times and rates take units (`12MB`, `1us`, `100Gbps`); fractions take `60%` or `0.6`. "
           "Every table refuses unknown keys.", ""]
    _table(ScenarioModel, "", out, set())
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- schemes


def module_doc(path: Path) -> str:
    """A Rust module's `//!` doc comment, as Markdown."""
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("//!"):
            lines.append(line[4:] if line.startswith("//! ") else line[3:])
        elif lines and line.strip():
            break
    text = "\n".join(lines).strip()
    # rustdoc's intra-doc links ([`Name`], [`Name`](path)) read as code here
    text = re.sub(r"\[(`[^`]+`)\](\([^)]*\))?", r"\1", text)
    return re.sub(r"^#", "####", text, flags=re.M)


def schemes_page() -> str:
    out = ["# The schemes", "",
           "Each flow-control and congestion-control scheme's module documentation, taken from its source "
           "file when this site is built: the paper it follows, the sections, and the choices hopsim made "
           "where the paper leaves room.", ""]
    for title, folder in (("Flow control", "fc"), ("Congestion control", "cc")):
        out += [f"## {title}", ""]
        files = sorted((SRC / folder).glob("*.rs"))
        for f in files:
            if f.stem in ("mod", "msg", "view", "datarate", "registry", "plugin") or f.stem.startswith("test"):
                continue
            doc = module_doc(f)
            if not doc:
                continue
            first = doc.split("\n", 1)[0]
            name = re.split(r"[,:(]", first, maxsplit=1)[0].strip() or f.stem
            out += [f"### {name}", "", f"`crates/hopsim-core/src/{folder}/{f.name}`", "", doc, ""]
    return "\n".join(out) + "\n"


def changelog_page() -> str:
    """CHANGELOG.md as it is."""
    return (REPO / "CHANGELOG.md").read_text()


# ----------------------------------------------------------------------------- MkDocs hook


def on_files(files, config):
    """Add the generated pages to the site (MkDocs hook)."""
    from mkdocs.structure.files import File

    for uri, fn in PAGES.items():
        files.append(File.generated(config, uri, content=globals()[fn]()))
    return files


if __name__ == "__main__":
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else "site-pages")
    for uri, fn in PAGES.items():
        (dest / uri).parent.mkdir(parents=True, exist_ok=True)
        (dest / uri).write_text(globals()[fn]())
        print(dest / uri)
