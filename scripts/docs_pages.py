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


_UNITS = {
    "parse_size": ("a size", "bytes: `B`, `KB`, `MB`, `GB`, `KiB`, `MiB` (a bare integer is bytes)"),
    "parse_time": ("a time", "`ps`, `ns`, `us`, `ms`, `s`"),
    "parse_rate": ("a rate", "bits/s: `Kbps`, `Mbps`, `Gbps`, `Tbps`"),
    "parse_fraction": ("a fraction", "`60%` or `0.6`"),
}
"""The unit parsers of the schema's field types, as a user writes the field."""

_PLAIN = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text", "Any": "any value"}


def _parser(annotation, metadata=()) -> tuple[str, tuple[str, ...]] | None:
    """The unit parser (by name) and keywords of a field type written with a unit (`Size`,
    `TimeOrOff`, ...: an Annotated type whose BeforeValidator wraps `parse_size` and the like;
    pydantic moves a field's own Annotated metadata into `metadata`)."""
    for meta in [*getattr(annotation, "__metadata__", ()), *metadata]:
        fn = getattr(meta, "func", None)
        if fn is None or fn.__closure__ is None:
            continue
        cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
        name = getattr(cells.get("parser"), "__name__", "")
        if name in _UNITS:
            return name, tuple(cells.get("keywords", ()))
    return None


def _choices(values) -> str:
    return ", ".join(f"`{v!r}`".replace("'", '"') for v in values)


def _type_text(annotation, metadata=()) -> str:
    """A field's type as a user writes it: a time, a rate, a size, a fraction, one of ..."""
    found = _parser(annotation, metadata)
    if found:
        name, keywords = found
        if not keywords:
            return _UNITS[name][0]
        return _UNITS[name][0] + (f" or {_choices(keywords)}" if len(keywords) == 1 else f" or one of {_choices(keywords)}")
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_text(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        return f"`{values[0]!r}`".replace("'", '"') if len(values) == 1 else f"one of {_choices(values)}"
    if origin in (typing.Union, types.UnionType):
        parts = [_type_text(a) for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(dict.fromkeys(parts))
    if origin in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return "a list of " + " or ".join(dict.fromkeys(_plural(_type_text(a)) for a in args))
    if origin is dict:
        return "a table"
    name = getattr(annotation, "__name__", str(annotation))
    return _PLAIN.get(name, name.replace("NoneType", "none"))


def _plural(text: str) -> str:
    """``an integer`` -> ``integers``, ``a list of integers`` -> ``lists of integers``."""
    head, _, rest = text.removeprefix("a ").removeprefix("an ").partition(" of ")
    return f"{head}s" + (f" of {rest}" if rest else "")


def _unit(annotation, metadata=()) -> str:
    """The unit of a field written with one (what `_type_text` calls a size, time, rate or
    fraction), else empty."""
    found = _parser(annotation, metadata)
    if found:
        return _UNITS[found[0]][1]
    for a in typing.get_args(annotation):
        u = _unit(a)
        if u:
            return u
    return ""


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
    """Text for a table cell: one line, and no `|`, which would end the cell (Python-Markdown
    splits on it even inside backticks, escaped or not)."""
    return text.replace("|", "&#124;").replace("\n", " ")


def _summary(models: list[type]) -> str:
    """A nested table's row: the first sentence of its model's doc, or the forms it takes."""
    docs = [(m.__doc__ or "").strip() for m in models]
    if len(models) == 1 and docs[0] and not docs[0].startswith(("A base class", "Usage docs")):
        return re.split(r"(?<=\.)\s", re.sub(r"\s+", " ", docs[0]), maxsplit=1)[0]
    kinds = [typing.get_args(m.model_fields["kind"].annotation)[0] for m in models if "kind" in m.model_fields]
    return f"one of the forms below, by kind: {', '.join(kinds)}" if kinds else "the table below"


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
    out += ["| field | type | unit | default | description |", "|---|---|---|---|---|"]
    nested = []
    for name, f in model.model_fields.items():
        subs = _models(f.annotation)
        if subs:
            nested += [(m, f"{path}.{name}" if path else name) for m in subs]
            out.append(f"| `{name}` | a table (below) | | {_default(f)} | {_cell(f.description or _summary(subs))} |")
            continue
        out.append(f"| `{name}` | {_cell(_type_text(f.annotation, f.metadata))} | {_cell(_unit(f.annotation, f.metadata))} | {_cell(_default(f))} | "
                   f"{_cell(f.description or '')} |")
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
    return _lists(re.sub(r"^#", "####", text, flags=re.M))


_ITEM = re.compile(r"^(\s*)([-*]|\d+[.)]) ")


def _lists(text: str) -> str:
    """Markdown lists as rustdoc reads them: rustdoc (CommonMark) starts a list right after a
    paragraph's line, Python-Markdown only after a blank line and with continuation lines
    indented four spaces, so each item gets both here."""
    out: list[str] = []
    in_item = False
    for line in text.split("\n"):
        m = _ITEM.match(line)
        if m and not m.group(1):
            if out and out[-1].strip() and not in_item:
                out.append("")
            in_item = True
            out.append(line)
        elif in_item and line.startswith(" ") and line.strip():
            out.append("    " + line.strip())
        else:
            if in_item and line.strip():
                out.append("")
            in_item = False
            out.append(line)
    return "\n".join(out)


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
