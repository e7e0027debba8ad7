"""Metrics and dimensions from dbt's semantic-layer YAML, read by dbt-semantic-interfaces.

The files are dbt's own (``semantic_models:`` and ``metrics:`` lists, as in a dbt
project's ``models/*.yml``); each entry is checked by the library's JSON schema and parsed
into its pydantic object, as its own ``parse_config_yaml`` does for MetricFlow's
one-object-per-document files. dbt's ``model: ref('orders')`` names the table; the library
wants a ``node_relation``, made from it as dbt makes it.

A file with a problem is left out whole, with one problem naming the file and the line of
the entry (or the field) at fault; the rest of the folder is read. The library is imported
only here, and only when a folder with YAML has changed (loading.py keeps a digest).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .definitions import ContextProblem, Dimension, Metric, Origin
from .context_files import FolderFile

#: The most YAML nodes read from one file (a hostile file of nested lists stops here).
MAX_NODES = 20_000
INSTALL_HINT = "reading dbt semantic models needs dbt-semantic-interfaces: pip install 'jupyter-analyst[context]'"
_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"]\s*(?:,\s*['"]([^'"]+)['"]\s*)?\)\s*$""")
#: ``{{ Dimension('order__status') }}``, ``{{ TimeDimension('order__ordered_at', 'day') }}``, ``{{ Entity('order') }}``.
_JINJA_CALL = re.compile(
    r"""\{\{\s*(Dimension|TimeDimension|Entity)\(\s*['"]([A-Za-z0-9_]+)['"][^)]*\)(?:\.\w+\([^)]*\))*\s*\}\}""")

Path_ = tuple[str | int, ...]


class _Invalid(Exception):
    """A file's problem: its line and message."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def load_yaml(text: str) -> tuple[Any, dict[Path_, int]]:
    """A YAML document and the line (1-based) of each of its mappings' keys and list items.

    Anchors and aliases are refused: a context file has no need of them, and expanding them
    is how a small file becomes a huge object.

    >>> data, lines = load_yaml("metrics:\\n  - name: revenue\\n    type: simple\\n")
    >>> data["metrics"][0]["type"], lines[("metrics", 0, "type")]
    ('simple', 3)
    """
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            # An error found at the end of the text (an unclosed list) is told on its last line.
            line = min(mark.line + 1, max(len(text.splitlines()), 1)) if mark else None
            raise _Invalid(line, f"not valid YAML: {exc.problem or exc.context}") from None
        except yaml.YAMLError as exc:
            raise _Invalid(None, f"not valid YAML: {exc}") from None
        if node is None:
            return None, {}
        lines: dict[Path_, int] = {}
        seen: set[int] = set()

        def walk(item: Any, path: Path_) -> None:
            if id(item) in seen:  # told where it is used (the key's line), not where it was anchored
                raise _Invalid(lines.get(path, item.start_mark.line + 1),
                               "YAML anchors and aliases (& and *) are not read here")
            seen.add(id(item))
            if len(seen) > MAX_NODES:
                raise _Invalid(item.start_mark.line + 1, f"more than {MAX_NODES} YAML values")
            lines.setdefault(path, item.start_mark.line + 1)
            if isinstance(item, yaml.MappingNode):
                for key, value in item.value:
                    lines[(*path, str(key.value))] = key.start_mark.line + 1
                    walk(value, (*path, str(key.value)))
            elif isinstance(item, yaml.SequenceNode):
                for index, value in enumerate(item.value):
                    walk(value, (*path, index))

        walk(node, ())
        try:
            return loader.construct_document(node), lines
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise _Invalid(mark.line + 1 if mark else None, f"not valid YAML: {exc.problem}") from None
    finally:
        loader.dispose()


def _line(lines: dict[Path_, int], path: Iterable[str | int]) -> int | None:
    """The line of ``path``, or of its nearest ancestor that has one."""
    path = tuple(path)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get(())


def _node_relation(entry: dict[str, Any], where: Path_, lines: dict[Path_, int]) -> dict[str, Any]:
    """dbt's ``model: ref('orders')`` as the library's ``node_relation``."""
    if "node_relation" in entry:
        return entry
    match = _REF.match(str(entry.get("model") or ""))
    if match is None:
        raise _Invalid(_line(lines, (*where, "model")),
                       f"semantic model {entry.get('name')!r}: 'model' must be ref('<table>'), not {entry.get('model')!r}")
    table = match.group(2) or match.group(1)
    entry = {k: v for k, v in entry.items() if k != "model"}
    entry["node_relation"] = {"alias": table, "schema_name": ""}
    return entry


def _check(validator: Any, parse: Any, obj: Any, where: Path_, lines: dict[Path_, int], what: str) -> Any:
    """``obj`` checked by the library's schema and parsed into its object, or the problem."""
    from jsonschema import exceptions

    name = obj.get("name") if isinstance(obj, dict) else None
    label = f"{what} {name!r}" if name else what
    try:
        validator.validate(obj)
    except exceptions.ValidationError as exc:
        field = ".".join(str(p) for p in exc.absolute_path)
        message = exc.message if len(exc.message) <= 240 else exc.message[:239] + "…"
        raise _Invalid(_line(lines, (*where, *exc.absolute_path)),
                       f"{label}: {field + ': ' if field else ''}{message}") from None
    try:
        return parse(obj)
    except Exception as exc:  # the library's pydantic (v1) errors, and its own parsing errors
        errors = getattr(exc, "errors", None)
        if callable(errors):
            first = errors()[0]
            field = ".".join(str(p) for p in first.get("loc", ()) if p != "__root__")
            raise _Invalid(_line(lines, (*where, *first.get("loc", ()))),
                           f"{label}: {field + ': ' if field else ''}{first.get('msg')}") from None
        raise _Invalid(_line(lines, where), f"{label}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None


def _synonyms(obj: Any) -> list[str]:
    config = getattr(obj, "config", None)
    meta = getattr(config, "meta", None) or {}
    found = meta.get("synonyms") if isinstance(meta, dict) else None
    return [str(s) for s in found] if isinstance(found, list) else []


class _Parsed:
    """One file's semantic models and metrics, with the line of each."""

    def __init__(self) -> None:
        self.models: list[tuple[Any, int, list[int]]] = []
        """Each semantic model, its line and the line of each of its dimensions."""
        self.metrics: list[tuple[Any, int]] = []


def _parse_file(file: FolderFile) -> _Parsed | None:
    """The library's objects of one file (``None`` when it defines none)."""
    from dbt_semantic_interfaces.implementations.metric import PydanticMetric
    from dbt_semantic_interfaces.implementations.semantic_model import PydanticSemanticModel
    from dbt_semantic_interfaces.parsing.schemas import metric_validator, semantic_model_validator

    data, lines = load_yaml(file.text)
    if not isinstance(data, dict) or not ({"semantic_models", "metrics"} & set(data)):
        return None
    parsed = _Parsed()
    for key in ("semantic_models", "metrics"):
        entries = data.get(key) or []
        if not isinstance(entries, list):
            raise _Invalid(_line(lines, (key,)), f"'{key}' must be a list")
        for index, entry in enumerate(entries):
            where: Path_ = (key, index)
            if not isinstance(entry, dict):
                raise _Invalid(_line(lines, where), f"each of '{key}' must be a mapping")
            if key == "semantic_models":
                obj = _check(semantic_model_validator, PydanticSemanticModel.parse_obj,
                             _node_relation(entry, where, lines), where, lines, "semantic model")
                dimension_lines = [_line(lines, (*where, "dimensions", j)) or 1 for j in range(len(obj.dimensions))]
                parsed.models.append((obj, _line(lines, where) or 1, dimension_lines))
            else:
                obj = _check(metric_validator, PydanticMetric.parse_obj, entry, where, lines, "metric")
                parsed.metrics.append((obj, _line(lines, where) or 1))
    return parsed


def _render(template: str, columns: dict[str, str]) -> str:
    """A MetricFlow filter as SQL on the table's columns: each ``{{ Dimension('entity__name') }}``
    as the dimension's expression.

    >>> _render("{{ Dimension('order__status') }} = 'completed'", {"status": "status"})
    "status = 'completed'"
    """
    def column(match: re.Match[str]) -> str:
        name = match.group(2).rsplit("__", 1)[-1]
        return columns.get(name, name)

    return _JINJA_CALL.sub(column, template).strip()


def _filters(metric: Any) -> list[str]:
    """The filter templates of a metric and of its measure input."""
    templates = []
    for holder in (metric, getattr(metric.type_params, "measure", None)):
        intersection = getattr(holder, "filter", None) if holder is not None else None
        for where in getattr(intersection, "where_filters", None) or ():
            templates.append(where.where_sql_template)
    return templates


def read_semantic_layer(files: Iterable[FolderFile]) -> tuple[list[Metric], list[Dimension], list[ContextProblem]]:
    """The metrics and dimensions the folder's YAML defines, and the files left out."""
    yaml_files = [f for f in files if f.is_yaml]
    problems: list[ContextProblem] = []
    if not yaml_files:
        return [], [], problems
    try:
        import dbt_semantic_interfaces  # noqa: F401
    except ImportError:
        return [], [], [ContextProblem(file=f.path, message=INSTALL_HINT) for f in yaml_files
                        if "semantic_models:" in f.text or "metrics:" in f.text]
    measures: dict[str, tuple[Any, Any]] = {}  # measure name -> (measure, its semantic model)
    dimensions: list[Dimension] = []
    metrics: list[tuple[Any, int, str]] = []
    for file in yaml_files:
        try:
            parsed = _parse_file(file)
        except _Invalid as exc:
            problems.append(ContextProblem(file=file.path, line=exc.line, message=exc.message))
            continue
        except RecursionError:  # lists nested thousands deep: within the size cap, past any real file
            problems.append(ContextProblem(file=file.path, message="nested too deeply to be read"))
            continue
        if parsed is None:
            continue
        for model, _, dimension_lines in parsed.models:
            for measure in model.measures:
                measures[measure.name] = (measure, model)
            for dim, line in zip(model.dimensions, dimension_lines):
                dimensions.append(Dimension(
                    name=dim.name, table=model.node_relation.alias, expr=dim.expr or dim.name, type=dim.type.value,
                    description=dim.description or "", label=dim.label or "", synonyms=_synonyms(dim),
                    origin=Origin(file=file.path, line=line)))
        metrics += [(metric, line, file.path) for metric, line in parsed.metrics]
    found: list[Metric] = []
    for metric, line, path in metrics:
        origin = Origin(file=path, line=line)
        base = dict(name=metric.name, label=metric.label or "", description=metric.description or "",
                    synonyms=_synonyms(metric), type=metric.type.value, origin=origin)
        measure_input = getattr(metric.type_params, "measure", None)
        if metric.type.value != "simple" or measure_input is None:
            found.append(Metric(**base))
            continue
        if measure_input.name not in measures:
            problems.append(ContextProblem(file=path, line=line, message=(
                f"metric {metric.name!r} names the measure {measure_input.name!r}, which no semantic model defines")))
            continue
        measure, model = measures[measure_input.name]
        # A filter may name a dimension another model over the table declares (joined by
        # the entity they share); the measure's own model's names come first.
        columns = {d.name: d.expr for d in dimensions if d.table == model.node_relation.alias}
        columns.update({d.name: d.expr or d.name for d in model.dimensions})
        columns.update({e.name: e.expr or e.name for e in model.entities})
        found.append(Metric(**base, table=model.node_relation.alias, agg=measure.agg.value,
                            expr=measure.expr or measure.name,
                            filters=[_render(t, columns) for t in _filters(metric)]))
    return found, dimensions, problems
