"""The team's context folder as the model meets it, through real turns over HTTP: the rules
and the index in the system message, ``find`` returning its definitions and verified
queries, ``run_sql`` telling a metric computed otherwise than its definition; a broken file
and a link out of the folder told once, and the turn going on."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import nbformat

from jupyter_analyst.progress import ProgressPrinter
from jupyter_analyst.testing import call_step, sql_step, text_step

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "context"
DEFINED = ("the team's metric `revenue` (context/models/orders.yml:46): SUM(revenue) FROM orders WHERE quantity > 0; "
           "compute it with the definition's filter and aggregate, or say in the answer why not")


def _context(tmp_path: Path) -> Path:
    """The example folder (the one docs/context.md shows), where a turn looks by default: beside the workspace."""
    folder = tmp_path / "context"
    shutil.copytree(EXAMPLE, folder)
    return folder


def _told(request: dict) -> dict:
    """The last tool result a model request carries."""
    return json.loads([m for m in request["messages"] if m["role"] == "tool"][-1]["content"])


def _guards(a, reason: str) -> list[str]:
    return [e.message for e in a.of_type("guard") if e.reason == reason]


def test_find_returns_the_metric_and_the_verified_query_and_the_prompt_carries_rules_and_index(analyst, tmp_path):
    _context(tmp_path)
    a = analyst({"turns": [{"steps": [
        call_step("find", query="revenue"), call_step("find", query="turnover"),
        call_step("find", query="monthly revenue trend"), call_step("find", query="territory"), text_step(),
    ]}]})
    assert a.run("what was revenue last month?").status == "completed"
    requests = a.server.requests
    system = requests[0]["messages"][0]["content"]
    assert "Cancelled orders are kept with a quantity of 0" in system  # rules.md
    # Dimensions that are plain columns are in the schema already: only one with synonyms is named.
    assert "Defined (metrics: revenue, order_count; dimensions: regions.region; verified queries: 1)" in system
    # Definitions are found, not sent: the system message names them only.
    assert "SUM(revenue) FROM orders" not in system

    metric = _told(requests[1])["matches"][0]
    assert metric["kind"] == "metric" and metric["name"] == "revenue"
    assert metric["definition"] == "SUM(revenue) FROM orders WHERE quantity > 0"
    assert metric["defined_in"] == "context/models/orders.yml:46"
    assert _told(requests[2])["matches"][0]["name"] == "revenue"  # by synonym
    verified = _told(requests[3])["matches"][0]
    assert verified["kind"] == "verified_query" and verified["name"] == "revenue_by_month.sql"
    assert "verified by Ana Lopez on 2026-11-20" in verified["detail"]
    assert verified["sql"].startswith("SELECT date_trunc('month', order_date)")
    dimension = _told(requests[4])["matches"][0]
    assert (dimension["kind"], dimension["name"]) == ("dimension", "regions.region")
    assert _guards(a, "context_file_invalid") == []


def test_a_metric_computed_with_another_aggregate_or_without_its_filter_is_told_beside_the_rows(analyst, tmp_path):
    _context(tmp_path)
    a = analyst({"turns": [{"steps": [
        sql_step("SELECT AVG(revenue) AS revenue FROM orders WHERE quantity > 0", "avg_revenue"),
        sql_step("SELECT SUM(o.revenue) AS revenue FROM orders AS o", "all_revenue"),
        sql_step("SELECT SUM(revenue) AS revenue FROM orders WHERE quantity > 0", "revenue"),
        sql_step("SELECT region_id, MAX(quantity) AS most FROM orders GROUP BY 1", "most"),
        text_step(),
    ]}]})
    done = a.run("revenue")
    assert done.status == "completed"
    requests = a.server.requests
    other_aggregate = _told(requests[1])
    assert other_aggregate["definition_notes"] == [f"revenue = AVG(revenue) is another aggregate than {DEFINED}"]
    # Beside the rows: right after them, before what the dataset is.
    keys = list(other_aggregate)
    assert keys.index("definition_notes") == keys.index("shown") + 1
    assert _told(requests[2])["definition_notes"] == [f"revenue = SUM(o.revenue) lacks the filter quantity > 0 of {DEFINED}"]
    assert "definition_notes" not in _told(requests[3])  # as defined
    assert "definition_notes" not in _told(requests[4])  # no defined metric
    # Named as find names it, and told the user too: on the step's line and in its notebook cell.
    assert _told(requests[1])["definition_notes"][0].count("context/models/orders.yml:46") == 1
    printed = io.StringIO()
    for event in a.events:
        ProgressPrinter(printed)(event)
    lines = printed.getvalue().splitlines()
    assert f"     definition note: revenue = AVG(revenue) is another aggregate than {DEFINED}" in lines
    assert sum(line.startswith("     definition note:") for line in lines) == 2
    cells = [c for c in nbformat.read(done.notebook, as_version=4).cells if c.cell_type == "code"]
    told = ["\n".join(o.get("data", {}).get("text/plain", "") for o in c.get("outputs", [])) for c in cells]
    assert sum("Definition note: revenue = SUM(o.revenue) lacks the filter quantity > 0" in t for t in told) == 1
    assert sum("Definition note:" in t for t in told) == 2


def test_an_invalid_yaml_file_is_one_error_naming_file_and_line_and_the_turn_goes_on(analyst, tmp_path):
    folder = _context(tmp_path)
    (folder / "models" / "broken.yml").write_text(
        "metrics:\n  - name: margin\n    type: simple\n    type_params:\n      measure: [order_revenue\n")
    (folder / "models" / "typo.yml").write_text(
        "metrics:\n  - name: margin\n    type: simpel\n    type_params:\n      measure: order_revenue\n")
    a = analyst({"turns": [{"steps": [call_step("find", query="revenue"), text_step()]}]})
    assert a.run("revenue").status == "completed"
    told = _guards(a, "context_file_invalid")
    assert len(told) == 2
    assert told[0].startswith("context/models/broken.yml:5: not valid YAML")
    assert told[1].startswith("context/models/typo.yml:3: metric 'margin': type: 'simpel' is not one of")
    # The rest of the folder is used.
    assert _told(a.server.requests[1])["matches"][0]["name"] == "revenue"


def test_a_link_out_of_the_folder_is_not_followed(analyst, tmp_path):
    folder = _context(tmp_path)
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "notes.md").write_text("SECRET-RULE from outside the folder")
    (secret / "q.sql").write_text("-- question: the secret\n-- verified_by: x\n-- verified_at: 2026-01-01\nSELECT 42\n")
    (folder / "rules.md").unlink()
    (folder / "rules.md").symlink_to(secret / "notes.md")
    (folder / "queries" / "secret.sql").symlink_to(secret / "q.sql")
    (folder / "more").symlink_to(secret, target_is_directory=True)
    a = analyst({"turns": [{"steps": [call_step("find", query="the secret"), text_step()]}]})
    assert a.run("the secret").status == "completed"
    assert "SECRET-RULE" not in json.dumps(a.server.requests)
    assert all(m["kind"] != "verified_query" or m["name"] != "secret.sql" for m in _told(a.server.requests[1])["matches"])
    told = _guards(a, "context_file_invalid")
    assert sorted(t.split(":")[0] for t in told) == ["context/more", "context/queries/secret.sql", "context/rules.md"]
    assert all("a link: not followed" in t for t in told)


def test_a_folder_given_by_the_settings_is_read_instead_of_the_default(analyst, tmp_path):
    _context(tmp_path)  # the default, not read when another is configured
    team = tmp_path / "team"
    (team / "queries").mkdir(parents=True)
    (team / "rules.md").write_text("Regions are called territories here.")
    a = analyst({"turns": [{"steps": [text_step()]}]})
    assert a.run("revenue", context_dir=team).status == "completed"
    system = a.server.requests[0]["messages"][0]["content"]
    assert "Regions are called territories here." in system and "Cancelled orders" not in system
    assert "Defined (" not in system  # nothing defined: no index line
