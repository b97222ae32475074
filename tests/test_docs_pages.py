"""The pages made from the code (scripts/docs_pages.py): every scenario field in the reference
has a type as a user writes it and a description, no cell breaks its row, and the schemes page
keeps each module doc's lists as lists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import markdown

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("docs_pages", REPO / "scripts" / "docs_pages.py")
docs_pages = importlib.util.module_from_spec(spec)
spec.loader.exec_module(docs_pages)


def rows(page: str) -> list[list[str]]:
    """The field rows of the reference, split into cells as Python-Markdown splits them."""
    out = []
    for line in page.splitlines():
        if line.startswith("| `"):
            out.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return out


def test_every_field_has_five_cells_a_type_and_a_description():
    table = rows(docs_pages.scenario_reference())
    assert len(table) > 300
    bad = [r for r in table if len(r) != 5 or not r[4] or not r[1]]
    assert not bad, bad[:5]
    assert not [r for r in table if "\\|" in "".join(r)]


def test_fields_with_units_say_so():
    by = {(r[0], r[3]): r for r in rows(docs_pages.scenario_reference())}
    assert by[("`rate`", '`"100Gbps"`')][1:3] == ["a rate", "bits/s: `Kbps`, `Mbps`, `Gbps`, `Tbps`"]
    stall = next(r for r in rows(docs_pages.scenario_reference()) if r[0] == "`stall_timeout`")
    assert stall[1] == 'a time or one of `"auto"`, `"off"`' and stall[4].startswith("stop a run")
    scheme = next(r for r in rows(docs_pages.scenario_reference()) if r[0] == "`scheme`")
    assert scheme[1].startswith('one of `"none"`, `"pfc"`') and scheme[4]


def test_the_reference_renders_one_row_per_field():
    html = markdown.markdown(docs_pages.scenario_reference(), extensions=["tables"])
    cells = re.findall(r"<tr>(.*?)</tr>", html, flags=re.S)
    assert all(c.count("<td") == 5 for c in cells if "<td" in c)


def test_the_schemes_page_keeps_lists():
    page = docs_pages.schemes_page()
    html = markdown.markdown(page, extensions=["tables"])
    # TQP's module doc has a list of its hooks
    tqp = html[html.index("Threshold queue pause"):]
    tqp = tqp[:tqp.index("<h3")] if "<h3" in tqp else tqp
    assert tqp.count("<li>") >= 3
    assert "<li><code>stamp</code>" in tqp


def test_the_benchmark_summary_is_written_once():
    """README's benchmark table is benchmarks/summary.md word for word (GitHub shows the README
    without includes); docs/benchmark.md includes the file itself."""
    summary = (REPO / "benchmarks" / "summary.md").read_text()
    assert summary in (REPO / "README.md").read_text()
    assert '--8<-- "benchmarks/summary.md"' in (REPO / "docs" / "benchmark.md").read_text()
