"""A context folder read as hostile input, dbt's YAML through dbt-semantic-interfaces, verified
queries' headers, and the digest that spares an unchanged folder the parser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.knowledge.context_files import MAX_FILE_BYTES, read_folder

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "context"


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "context"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def test_the_documented_example_is_read_whole():
    context = load_team_context(EXAMPLE)
    assert context.problems == []
    assert [(m.name, m.formula()) for m in context.metrics] == [
        ("revenue", "SUM(revenue) FROM orders WHERE quantity > 0"),
        ("order_count", "COUNT(DISTINCT order_id) FROM orders WHERE quantity > 0"),
    ]
    assert context.metrics[0].synonyms == ["sales", "turnover"]
    assert [(d.table, d.name, str(d.origin)) for d in context.dimensions][-2:] == [
        ("regions", "region", "models/orders.yml:37"), ("regions", "country", "models/orders.yml:42")]
    (query,) = context.queries
    assert query.questions == ["What was revenue by month?", "monthly revenue trend"]
    assert (query.verified_by, query.verified_at) == ("Ana Lopez", "2026-11-20")


def test_no_folder_is_an_empty_context(tmp_path):
    context = load_team_context(tmp_path / "nowhere")
    assert context.empty and context.prompt_section() == "" and context.problems == []


BAD_FILES = [
    ("models/a.yml", "metrics:\n  - name: m\n    type: simple\n   type_params: {}\n", 4, "not valid YAML"),
    ("models/a.yml", "base: &b [1]\nmetrics: *b\n", 2, "anchors and aliases"),
    ("models/a.yml", "metrics:\n  - name: Bad-Name\n    type: simple\n    type_params:\n      measure: x\n", 2,
     "metric 'Bad-Name': name: 'Bad-Name' does not match"),
    ("models/a.yml", "semantic_models:\n  - name: orders\n    model: orders\n", 3, "'model' must be ref('<table>')"),
    ("models/a.yml", "metrics: {name: m}\n", 1, "'metrics' must be a list"),
    ("models/a.yml", "metrics:\n  - name: lonely\n    type: simple\n    type_params:\n      measure: nowhere\n", 2,
     "names the measure 'nowhere', which no semantic model defines"),
    ("queries/q.sql", "SELECT 1\n", 1, "names the questions it answers"),
    ("queries/q.sql", "-- question: q?\n-- verified_by: ana\nSELECT 1\n", 2, "says verified at"),
    ("queries/q.sql", "-- question: q?\n-- verified_by: ana\n-- verified_at: last week\nSELECT 1\n", 3,
     "verified_at is not a date"),
    ("queries/q.sql", "-- question: q?\n-- verified_by: ana\n-- verified_at: 2026-01-01\n", 3, "no SQL after the header"),
]


@pytest.mark.parametrize(("name", "text", "line", "message"), BAD_FILES)
def test_an_invalid_file_is_one_problem_naming_file_and_line_and_the_rest_is_read(tmp_path, name, text, line, message):
    folder = tmp_path / "context"
    shutil.copytree(EXAMPLE, folder)
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    context = load_team_context(folder)
    (problem,) = context.problems
    assert (problem.file, problem.line) == (name, line)
    assert message in problem.message
    assert [m.name for m in context.metrics] == ["revenue", "order_count"]


def test_links_pipes_and_oversized_files_are_not_read(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("SECRET")
    folder = _folder(tmp_path, {"queries/big.sql": "-- " + "x" * MAX_FILE_BYTES, "notes.txt": "ignored"})
    (folder / "rules.md").symlink_to(outside)
    os.mkfifo(folder / "queries" / "pipe.sql")  # would block a plain open() forever
    files, problems = read_folder(folder)
    assert files == []
    assert {(p.file, p.message.split(":")[0]) for p in problems} == {
        ("rules.md", "a link"), ("queries/big.sql", "not read"), ("queries/pipe.sql", "not read")}


def test_an_unchanged_folder_is_read_from_its_digest_without_the_yaml_parser_or_the_library(tmp_path):
    folder = tmp_path / "context"
    shutil.copytree(EXAMPLE, folder)
    digests = tmp_path / "digests"
    load_team_context(folder)  # known to this process first: the workspace still gets its digest
    first = load_team_context(folder, digests=digests)
    code = textwrap.dedent(f"""
        import json, sys
        from jupyter_analyst.knowledge import load_team_context
        context = load_team_context({str(folder)!r}, digests={str(digests)!r})
        print(json.dumps({{"metrics": [m.name for m in context.metrics],
                          "loaded": sorted(m for m in ("yaml", "dbt_semantic_interfaces", "jsonschema", "sqlglot")
                                           if m in sys.modules)}}))
    """)
    run = lambda: json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: E731
                                            check=True, timeout=300).stdout.splitlines()[-1])
    assert run() == {"metrics": [m.name for m in first.metrics], "loaded": []}
    # A changed file is parsed again.
    (folder / "models" / "orders.yml").write_text((folder / "models" / "orders.yml").read_text().replace(
        "name: order_count", "name: orders_count"))
    changed = run()
    assert changed["metrics"] == ["revenue", "orders_count"] and "dbt_semantic_interfaces" in changed["loaded"]


def test_the_documentation_shows_the_example_folder_as_it_is():
    page = (Path(__file__).parents[2] / "docs" / "context.md").read_text()
    for name in ("rules.md", "models/orders.yml", "queries/revenue_by_month.sql"):
        assert (EXAMPLE / name).read_text() in page, f"docs/context.md does not show {name} as it is"


def test_yaml_nested_thousands_deep_is_one_problem_not_a_crash(tmp_path):
    folder = _folder(tmp_path, {"models/deep.yml": "metrics: " + "[" * 50_000 + "]" * 50_000 + "\n"})
    context = load_team_context(folder)
    (problem,) = context.problems
    assert problem.file == "models/deep.yml" and context.metrics == []
