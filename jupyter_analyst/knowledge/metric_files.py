"""Saving a metric to a context folder: a new file ``models/<name>.yml`` in dbt's
semantic-layer YAML, a semantic model over the metric's table holding its one measure (and,
as dimensions, the columns its filters name) and the metric, its filters written as
MetricFlow's ``{{ Dimension('<entity>__<dimension>') }}``. Where the folder has a semantic
model over the table, the new one declares that model's primary entity (``order``, on
``order_id``), so MetricFlow joins the two, and its filters name the dimensions the folder
declares there rather than declaring them again; otherwise the table's name is its
primary entity. MetricFlow wants a measure's aggregation time dimension in its own model: the
folder model's is declared again, under the metric's name (``units_shipped_order_date``); a
table no model is over has none, as nothing says which column is its time.

What is saved is a person's choice (a suggestion accepted, or the command typed), never
written by a turn. It is checked before anything is written: the name, the aggregate, the
table and every term parsed (sqlglot: no subquery, no other table), then the YAML read back
by dbt-semantic-interfaces with the folder's other files, as a turn would read it, where it
must define exactly this metric and leave every other metric as it was. A file is never
replaced and never written through a link (writing.py's way: the folder and ``models/``
opened without following one, the file linked into place whole, refused when the name is
taken).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from .context_files import FolderFile, read_folder
from .definitions import Metric, aggregate_sql
from .writing import open_dir, write_new

#: Where saved metrics go in the folder.
MODELS = "models"
AGGS = ("sum", "count", "count_distinct", "average", "min", "max")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,59}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


class MetricDraft(BaseModel):
    """A metric to save: its name, its measure (aggregate, expression, table) and filters."""

    name: str
    table: str
    agg: str
    expr: str
    filters: list[str] = []
    label: str = ""
    description: str = ""

    def formula(self) -> str:
        where = f" WHERE {' AND '.join(self.filters)}" if self.filters else ""
        return f"{aggregate_sql(self.agg, self.expr)} FROM {self.table}{where}"


class SavedMetric(BaseModel):
    """A metric saved (or shown before it is): its file in the folder and the file's text."""

    name: str
    file: str
    """The file's path in the context folder: ``models/<name>.yml``."""
    yaml: str
    definition: str
    """The metric in one line of SQL terms, as ``find`` shows it."""
    written: bool


def _terms(text: str, dialect: str, what: str) -> Any:
    """``text`` parsed as one SQL term of the table's columns, or the refusal."""
    import sqlglot
    from sqlglot import exp

    try:
        node = sqlglot.parse_one(text, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise ConfigError(f"the {what} {text!r} is not SQL: {str(exc).splitlines()[0]}",
                          reason="invalid_definition") from None
    if node is None or isinstance(node, (exp.Select, exp.Query)) or node.find(
            exp.Select, exp.Subquery, exp.Star, exp.Placeholder, exp.Parameter) is not None:
        raise ConfigError(f"the {what} {text!r} is not a term of the table's columns", reason="invalid_definition",
                          hint="a column or an expression of the table's columns, without a subquery")
    for column in node.find_all(exp.Column):
        if column.table or not _IDENTIFIER.fullmatch(column.name):
            raise ConfigError(f"the {what} {text!r} names {column.sql()!r}: a plain column of the table is needed",
                              reason="invalid_definition")
    return node


class TableModel(BaseModel):
    """What the folder's semantic models over a table say that a new one must agree with:
    the table's primary entity (and its column) and the dimensions under it, by column."""

    entity: str
    entity_expr: str = ""
    entity_field: bool = False
    """Declared with ``primary_entity:`` (no column), not as an entity of type primary."""
    dimensions: dict[str, str] = {}
    """Lower-cased column -> the dimension's name."""
    time: dict[str, Any] | None = None
    """The aggregation time dimension of the model the entity was found in, as written."""


def table_model(files: list[FolderFile], table: str) -> TableModel | None:
    """The primary entity of the folder's first semantic model over ``table`` that has one, and
    the dimensions the folder's models over the table declare under it; ``None`` when none."""
    from .semantic import _REF

    found: TableModel | None = None
    models = []
    for file, data in _yaml_documents(files):
        entries = data.get("semantic_models") if isinstance(data, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            relation = entry.get("node_relation")
            match = _REF.match(str(entry.get("model") or ""))
            alias = relation.get("alias") if isinstance(relation, dict) else \
                (match.group(2) or match.group(1)) if match else None
            if str(alias).lower() == table.lower():
                models.append(entry)
    for entry in models:
        entities = entry.get("entities") if isinstance(entry.get("entities"), list) else []
        primary = next((e for e in entities if isinstance(e, dict) and e.get("type") == "primary"), None)
        if primary is not None and primary.get("name"):
            found = TableModel(entity=str(primary["name"]), entity_expr=str(primary.get("expr") or primary["name"]))
        elif entry.get("primary_entity"):
            found = TableModel(entity=str(entry["primary_entity"]), entity_field=True)
        if found is not None:
            defaults = entry.get("defaults") if isinstance(entry.get("defaults"), dict) else {}
            dims = entry.get("dimensions") if isinstance(entry.get("dimensions"), list) else []
            found.time = next((d for d in dims if isinstance(d, dict) and d.get("type") == "time"
                               and d.get("name") == defaults.get("agg_time_dimension")), None)
            break
    if found is None:
        return None
    for entry in models:
        entities = entry.get("entities") if isinstance(entry.get("entities"), list) else []
        own = next((str(e.get("name")) for e in entities if isinstance(e, dict) and e.get("type") == "primary"),
                   entry.get("primary_entity"))
        if own != found.entity:
            continue
        for dim in entry.get("dimensions") if isinstance(entry.get("dimensions"), list) else []:
            if isinstance(dim, dict) and dim.get("name"):
                found.dimensions.setdefault(str(dim.get("expr") or dim["name"]).lower(), str(dim["name"]))
    return found


def _filter_templates(draft: MetricDraft, dialect: str, entity: str,
                      declared: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """``draft``'s filters as MetricFlow templates naming ``entity``'s dimensions (``declared``:
    the folder's, by column), and the dimensions the new model must declare (name -> column)."""
    from sqlglot import exp

    dimensions: dict[str, str] = {}
    templates = []
    for text in draft.filters:
        node = _terms(text, dialect, "filter")
        marks: dict[str, str] = {}

        def mark(n: Any) -> Any:
            if isinstance(n, exp.Column):
                name = declared.get(n.name.lower())
                if name is None:
                    name = n.name.lower()
                    if name in declared.values():  # the name is another column's dimension
                        name = f"{draft.name}_{name}"
                    dimensions.setdefault(name, n.name)
                marks[f"jadim{len(marks)}x"] = f"{{{{ Dimension('{entity}__{name}') }}}}"
                return exp.column(list(marks)[-1])
            return n

        rendered = node.transform(mark).sql(dialect=dialect)
        for placeholder, template in marks.items():
            rendered = rendered.replace(placeholder, template)
        templates.append(rendered)
    return templates, dimensions


def render_metric(draft: MetricDraft, dialect: str = "duckdb", existing: TableModel | None = None) -> str:
    """The YAML file of ``draft``, after its name, aggregate, table and terms are checked.
    ``existing``: what the folder's semantic models over the table declare; the new one then
    declares the same primary entity, so MetricFlow joins them, and names in its filters the
    dimensions they declare (``{{ Dimension('order__quantity') }}``) rather than declaring them
    again (a dimension is declared once under an entity). Otherwise its primary entity is the
    table's name.

    Raises:
        ConfigError: any of them is not what a metric may hold (``invalid_definition``).
    """
    import yaml

    if not _NAME.fullmatch(draft.name):
        raise ConfigError(f"{draft.name!r} is not a metric name: lower-case letters, digits and _, a letter first",
                          reason="invalid_definition")
    if draft.agg not in AGGS:
        raise ConfigError(f"{draft.agg!r} is not an aggregate a metric may have", reason="invalid_definition",
                          hint=f"one of: {', '.join(AGGS)}")
    if not _IDENTIFIER.fullmatch(draft.table):
        raise ConfigError(f"{draft.table!r} is not a table name", reason="invalid_definition")
    expr = _terms(draft.expr, dialect, "expression")
    entity = existing.entity if existing is not None else draft.table.lower()
    templates, dimensions = _filter_templates(draft, dialect, entity, existing.dimensions if existing else {})
    model: dict[str, Any] = {
        "name": f"{draft.name}_measures",
        "description": f"The measure of the metric {draft.name}.",
        "model": f"ref('{draft.table}')",
    }
    if existing is not None and not existing.entity_field:
        model["entities"] = [{"name": entity, "type": "primary", "expr": existing.entity_expr}]
    elif dimensions:  # MetricFlow names a model's own dimensions by its primary entity
        model["primary_entity"] = entity
    listed = [{"name": name, "type": "categorical", **({"expr": column} if column != name else {})}
              for name, column in dimensions.items()]
    if existing is not None and existing.time is not None:
        # MetricFlow wants a measure's aggregation time dimension in its own model, and each
        # dimension once under an entity: the folder's, under a name of this model's own.
        time = {k: v for k, v in existing.time.items() if k in ("type", "type_params", "expr")}
        time = {"name": f"{draft.name}_{existing.time['name']}", **time, "expr": time.get("expr", existing.time["name"])}
        model["defaults"] = {"agg_time_dimension": time["name"]}
        listed.append(time)
    if listed:
        model["dimensions"] = listed
    model["measures"] = [{"name": draft.name, "agg": draft.agg, "expr": expr.sql(dialect=dialect)}]
    metric: dict[str, Any] = {"name": draft.name, "label": draft.label or draft.name.replace("_", " ").capitalize()}
    if draft.description:
        metric["description"] = draft.description
    metric.update({"type": "simple", "type_params": {"measure": draft.name}})
    if templates:
        metric["filter"] = templates[0] if len(templates) == 1 else templates
    class Dumper(yaml.SafeDumper):
        """A MetricFlow filter in double quotes, as dbt's documentation writes one (its ``'``s kept)."""

    def text(dumper: Any, value: str) -> Any:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if "{{" in value else None)

    Dumper.add_representer(str, text)
    body = yaml.dump({"semantic_models": [model], "metrics": [metric]}, Dumper=Dumper, sort_keys=False,
                     allow_unicode=True, width=120)
    return f"# The metric {draft.name}, saved from an analysis; review it as any change to the folder.\n{body}"


def check_metric(files: list[FolderFile], path: str, text: str, draft: MetricDraft, dialect: str) -> Metric:
    """``text`` read by dbt-semantic-interfaces beside the folder's ``files``: it must define the
    metric ``draft`` is, and change no other.

    Raises:
        ConfigError: it does not (``invalid_definition``), the name is a metric's already
            (``definition_exists``), or the library is not installed (``context_library_missing``).
    """
    from .divergence import _conjuncts, _key
    from .semantic import INSTALL_HINT, read_semantic_layer

    try:
        import dbt_semantic_interfaces  # noqa: F401
    except ImportError:
        raise ConfigError("saving a metric needs dbt's semantic-layer library", reason="context_library_missing",
                          hint=INSTALL_HINT) from None
    import sqlglot

    before, _, before_problems = read_semantic_layer(files)
    if any(m.name == draft.name for m in before):
        where = next(m.origin for m in before if m.name == draft.name)
        raise ConfigError(f"the folder defines the metric {draft.name!r} already ({where}): a definition is never "
                          "replaced", reason="definition_exists", hint="choose another name")
    taken = _names(files)
    for name in (draft.name, f"{draft.name}_measures"):
        if name in taken:
            raise ConfigError(f"{taken[name]} names {name!r} already: dbt's semantic layer wants each name once",
                              reason="definition_exists", hint="choose another name")
    after, _, problems = read_semantic_layer([*files, FolderFile(path, text)])
    own = [p for p in problems if p.file == path]
    if own:
        raise ConfigError(f"the metric would not be read: {own[0]}", reason="invalid_definition")
    saved = next((m for m in after if m.name == draft.name and m.origin.file == path), None)

    def key(text: str) -> str:
        return _key(sqlglot.parse_one(text, read=dialect), dialect)

    def conditions(filters: list[str]) -> list[str]:
        return sorted(_key(c, dialect) for f in filters for c in _conjuncts(sqlglot.parse_one(f, read=dialect)))

    if saved is None or (saved.table, saved.agg, key(saved.expr)) != (draft.table, draft.agg, key(draft.expr)) \
            or conditions(saved.filters) != conditions(draft.filters):
        read = saved.formula() if saved is not None else "nothing"
        raise ConfigError(f"the metric would be read as {read}, not {draft.formula()}", reason="invalid_definition")
    others = {m.name: m.formula() for m in after if m is not saved}
    if others != {m.name: m.formula() for m in before} or len(problems) != len(before_problems):
        raise ConfigError(f"the metric {draft.name!r} would change how the folder's other definitions are read "
                          "(a measure or semantic model of that name exists)", reason="invalid_definition",
                          hint="choose another name")
    return saved


def _names(files: list[FolderFile]) -> dict[str, str]:
    """The names the folder's YAML gives its semantic models, measures and metrics, and where."""
    names: dict[str, str] = {}
    for file, data in _yaml_documents(files):
        if not isinstance(data, dict):
            continue
        for key in ("semantic_models", "metrics"):
            for entry in data.get(key) or [] if isinstance(data.get(key), list) else []:
                if not isinstance(entry, dict):
                    continue
                names.setdefault(str(entry.get("name")), file.path)
                for measure in entry.get("measures") or [] if isinstance(entry.get("measures"), list) else []:
                    if isinstance(measure, dict):
                        names.setdefault(str(measure.get("name")), f"{file.path} (a measure)")
    return names


def save_metric(folder: Path, draft: MetricDraft, *, dialect: str = "duckdb", write: bool = True) -> SavedMetric:
    """Check ``draft`` and, when ``write``, save it as ``models/<name>.yml`` of ``folder`` (made
    when missing; its parent must exist). ``write=False`` only shows what would be saved.

    Raises:
        ConfigError: see :func:`render_metric` and :func:`check_metric`; the file exists
            (``definition_exists``); the folder or ``models/`` is a link (``context_link``).
    """
    path = f"{MODELS}/{draft.name}.yml"
    folder = Path(folder).expanduser()
    files = read_folder(folder)[0] if folder.is_dir() and not folder.is_symlink() else []
    text = render_metric(draft, dialect, table_model(files, draft.table))
    if any(f.path == path for f in files):
        raise ConfigError(f"{path} already exists: a definition is never replaced", reason="definition_exists",
                          hint="choose another name")
    saved = check_metric(files, path, text, draft, dialect)
    if write:
        shown = str(folder)
        root = open_dir(folder, create=True, shown=shown)
        try:
            models = open_dir(MODELS, parent=root, create=True, shown=f"{shown}/{MODELS}")
            try:
                write_new(models, f"{draft.name}.yml", text, under=MODELS, what="a definition")
            finally:
                os.close(models)
        finally:
            os.close(root)
    return SavedMetric(name=draft.name, file=path, yaml=text, definition=saved.formula(), written=write)


def _yaml_documents(files: list[FolderFile]) -> Iterator[tuple[FolderFile, Any]]:
    """Each YAML file of the folder that reads, with what it holds (one that does not read is
    reported where the folder is loaded, not here)."""
    from .semantic import _Invalid, load_yaml

    for file in files:
        if not file.is_yaml:
            continue
        try:
            data, _ = load_yaml(file.text)
        except (_Invalid, RecursionError):
            continue
        yield file, data

