"""A metric saved to a context folder: dbt's YAML that dbt-semantic-interfaces reads back as
the same metric, beside the folder's others and changing none; never over a name, a file or
through a link; bad input refused in one line."""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.knowledge import MetricDraft, save_metric

pytest.importorskip("dbt_semantic_interfaces")

UNITS = MetricDraft(name="units_shipped", table="orders", agg="sum", expr="quantity",
                    filters=["quantity > 0", "region_id = 2"], description="Units of orders not cancelled, region 2.")


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "context"
    shutil.copytree("tests/fixtures/context", folder)
    return folder


def test_a_saved_metric_is_read_back_as_defined_and_the_others_are_unchanged(folder):
    before = {m.name: m.formula() for m in load_team_context(folder).metrics}
    preview = save_metric(folder, UNITS, write=False)
    assert not (folder / "models" / "units_shipped.yml").exists(), "a preview writes nothing"
    saved = save_metric(folder, UNITS)
    assert (saved.file, saved.written, saved.yaml) == ("models/units_shipped.yml", True, preview.yaml)
    assert (folder / saved.file).read_text() == saved.yaml
    # The folder's model over orders has the primary entity `order` and the dimension quantity:
    # the new model declares the same entity (MetricFlow joins them) and names that dimension.
    assert "\"{{ Dimension('order__quantity') }} > 0\"" in saved.yaml
    assert "{{ Dimension('order__region_id') }} = 2" in saved.yaml
    model = yaml.safe_load(saved.yaml)["semantic_models"][0]
    assert model["entities"] == [{"name": "order", "type": "primary", "expr": "order_id"}]
    assert model["dimensions"][0] == {"name": "region_id", "type": "categorical"}
    team = load_team_context(folder)
    assert team.problems == []
    metric = team.metric("units_shipped")
    assert (metric.table, metric.agg, metric.expr, metric.filters, metric.description) == (
        "orders", "sum", "quantity", ["quantity > 0", "region_id = 2"], UNITS.description)
    assert saved.definition == metric.formula() == "SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2"
    assert {m.name: m.formula() for m in team.metrics if m.name != "units_shipped"} == before


def test_a_name_or_file_taken_is_never_replaced(folder):
    save_metric(folder, UNITS)
    written = (folder / "models" / "units_shipped.yml").read_text()
    for draft, words in [(UNITS, "already exists"),
                         (UNITS.model_copy(update={"name": "revenue"}), "defines the metric 'revenue' already"),
                         (UNITS.model_copy(update={"name": "order_revenue"}), "names 'order_revenue' already")]:
        with pytest.raises(ConfigError, match=words) as info:
            save_metric(folder, draft)
        assert info.value.reason == "definition_exists"
    assert (folder / "models" / "units_shipped.yml").read_text() == written
    assert not (folder / "models" / "order_revenue.yml").exists()


@pytest.mark.parametrize("change, words", [
    ({"name": "Units Shipped"}, "is not a metric name"),
    ({"agg": "stddev"}, "is not an aggregate"),
    ({"table": "orders') }}"}, "is not a table name"),
    ({"expr": "(SELECT max(quantity) FROM orders)"}, "is not a term of the table's columns"),
    ({"expr": "o.quantity"}, "a plain column of the table is needed"),
    ({"filters": ["region_id IN (SELECT 1)"]}, "is not a term"),
    ({"filters": ["quantity >"]}, "is not SQL"),
])
def test_bad_input_is_refused_in_one_line(folder, change, words):
    with pytest.raises(ConfigError, match=words) as info:
        save_metric(folder, UNITS.model_copy(update=change))
    assert info.value.reason == "invalid_definition"
    assert not (folder / "models" / "units_shipped.yml").exists()


def test_nothing_is_written_through_a_link(folder, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(folder / "models")
    os.symlink(elsewhere, folder / "models")
    with pytest.raises(ConfigError) as info:
        save_metric(folder, UNITS)
    assert info.value.reason == "context_link"
    assert list(elsewhere.iterdir()) == []


def test_a_new_folder_is_made(tmp_path):
    saved = save_metric(tmp_path / "fresh", UNITS.model_copy(update={"filters": []}))
    assert load_team_context(tmp_path / "fresh").metric("units_shipped").formula() == "SUM(quantity) FROM orders"
    assert saved.written


def test_without_a_model_over_the_table_the_new_one_is_its_own_entity(tmp_path):
    saved = save_metric(tmp_path / "fresh", UNITS)
    model = yaml.safe_load(saved.yaml)["semantic_models"][0]
    assert model["primary_entity"] == "orders" and "entities" not in model
    assert [d["name"] for d in model["dimensions"]] == ["quantity", "region_id"]
    assert "{{ Dimension('orders__quantity') }} > 0" in saved.yaml


EVENTS = """semantic_models:
  - name: events
    model: ref('events')
    defaults:
      agg_time_dimension: happened_at
    entities:
      - name: user
        type: primary
        expr: user_id
    dimensions:
      - name: event_kind
        type: categorical
        expr: kind
      - name: happened_at
        type: time
        type_params:
          time_granularity: day
    measures:
      - name: amount
        agg: sum
        expr: amount
metrics:
  - name: revenue
    type: simple
    type_params:
      measure: amount
    filter: "{{ Dimension('user__event_kind') }} = 'sale'"
"""


def test_a_dimension_the_folder_declares_under_another_name_is_named_so(tmp_path):
    folder = tmp_path / "context"
    (folder / "models").mkdir(parents=True)
    (folder / "models" / "events.yml").write_text(EVENTS)
    refunds = MetricDraft(name="refunds", table="events", agg="count", expr="1", filters=["kind = 'refund'"])
    saved = save_metric(folder, refunds)
    assert "\"{{ Dimension('user__event_kind') }} = 'refund'\"" in saved.yaml
    model = yaml.safe_load(saved.yaml)["semantic_models"][0]
    assert model["entities"] == [{"name": "user", "type": "primary", "expr": "user_id"}]
    assert (model["defaults"], model["dimensions"]) == ({"agg_time_dimension": "refunds_happened_at"}, [
        {"name": "refunds_happened_at", "type": "time", "type_params": {"time_granularity": "day"},
         "expr": "happened_at"}])
    assert _metricflow_issues(folder) == []  # the folder, the new model with it, as MetricFlow validates it
    team = load_team_context(folder)
    assert team.problems == []
    assert {m.name: m.formula() for m in team.metrics} == {
        "revenue": "SUM(amount) FROM events WHERE kind = 'sale'", "refunds": "COUNT(1) FROM events WHERE kind = 'refund'"}


def _metricflow_issues(folder):
    """dbt-semantic-interfaces' full validation of the folder's YAML (each entry its own
    document, ``model: ref('t')`` as the ``node_relation`` dbt would make of it)."""
    from dbt_semantic_interfaces.parsing.dir_to_model import parse_yaml_files_to_validation_ready_semantic_manifest
    from dbt_semantic_interfaces.parsing.objects import YamlConfigFile
    from dbt_semantic_interfaces.validations.semantic_manifest_validator import SemanticManifestValidator

    documents = [{"project_configuration": {"time_spine_table_configurations": [
        {"location": "s.time_spine", "column_name": "ds", "grain": "day"}]}}]
    for path in sorted((folder / "models").glob("*.yml")):
        for key, entries in yaml.safe_load(path.read_text()).items():
            for entry in entries:
                if "model" in entry:
                    entry["node_relation"] = {"alias": entry.pop("model")[5:-2], "schema_name": "s"}
                documents.append({key[:-1]: entry})
    text = "\n---\n".join(yaml.safe_dump(d) for d in documents)
    built = parse_yaml_files_to_validation_ready_semantic_manifest([YamlConfigFile(filepath="all.yml", contents=text)],
                                                                   raise_issues_as_exceptions=False)
    issues = SemanticManifestValidator().validate_semantic_manifest(built.semantic_manifest)
    return [i.message for i in [*built.issues.all_issues, *issues.all_issues]]
