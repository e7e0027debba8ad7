"""Which engine a source spec opens: a small registry (``register_source``), tried in order.

Each kind of source is a :class:`~.source_engine.SourceEngine` of its own module: DuckDB (a
file, ``:memory:``, CSV/Parquet/JSON files as views: ``duckdb_engine.py``), SQLite
(``sqlite_engine.py``), PostgreSQL (``postgres_engine.py``), the warehouses
(``warehouse_engines.py``), Spark Connect (``sc://``: ``spark_engine.py``) and any other
SQLAlchemy URL (``sqlalchemy_engine.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import SourceError
from .duckdb_engine import DATA_SUFFIXES, DuckDBSource
from .postgres_engine import PostgresSource, is_postgres_url
from .sealed import EngineLimits
from .source_engine import QUERY_THREADS, SourceEngine, file_version, source_not_found
from .spark_engine import SparkSource, is_spark_connect_url
from .sqlalchemy_engine import SQLAlchemySource
from .sqlite_engine import SQLiteSource, is_sqlite_file, open_sqlite_file
from .warehouse_engines import WAREHOUSES

#: What the agent and the query runner need of a data source: an engine (see ``source_engine.py``).
DataSource = SourceEngine

__all__ = ["QUERY_THREADS", "DataSource", "DuckDBSource", "PostgresSource", "SQLAlchemySource", "SQLiteSource", "SparkSource",
           "SourceFactory", "file_version", "open_source", "register_source"]

SourceFactory = Callable[[str, EngineLimits | None], SourceEngine]
_REGISTRY: list[tuple[str, Callable[[str], bool], SourceFactory]] = []


def register_source(name: str, predicate: Callable[[str], bool], factory: SourceFactory) -> None:
    """Add a kind of source: ``predicate(spec)`` says whether ``factory(spec, limits)`` opens it."""
    _REGISTRY.insert(0, (name, predicate, factory))


def _data_files(spec: str) -> list[Path] | None:
    path = Path(spec).expanduser()
    if path.is_dir():
        files = sorted(p.resolve() for p in path.iterdir() if p.suffix.lower() in DATA_SUFFIXES and p.is_file())
        if not files:
            raise SourceError(f"the folder {spec} holds no CSV, Parquet or JSON files", reason="source_empty",
                              hint="point --db at a folder of .csv/.parquet files, or at one file")
        return files
    if path.suffix.lower() in DATA_SUFFIXES and path.is_file():
        return [path.resolve()]
    return None


def _url_backend(spec: str) -> str | None:
    """The backend a URL names (``sqlite`` of ``sqlite+pysqlite:///x``); ``None`` for a path."""
    scheme, found, _ = spec.partition("://")
    return scheme.split("+", 1)[0].lower() if found else None


# Tried newest first: a plugin registered later takes precedence over these.
register_source("duckdb", lambda s: s.removeprefix("duckdb:///") == ":memory:"
                or Path(s.removeprefix("duckdb:///")).expanduser().is_file(),
                lambda s, limits: DuckDBSource(s.removeprefix("duckdb:///"), limits=limits))
register_source("files", lambda s: _data_files(s) is not None,
                lambda s, limits: DuckDBSource(s, files=_data_files(s), limits=limits))
register_source("sqlite-file", is_sqlite_file, open_sqlite_file)
register_source("sqlalchemy", lambda s: "://" in s and not s.startswith("duckdb://"),
                lambda s, limits: SQLAlchemySource(s, limits=limits))
register_source("sqlite", lambda s: _url_backend(s) == "sqlite", lambda s, limits: SQLiteSource(s, limits=limits))
register_source("postgresql", is_postgres_url, lambda s, limits: PostgresSource(s, limits=limits))
for _scheme, _engine in WAREHOUSES.items():
    register_source(_scheme, lambda s, scheme=_scheme: _url_backend(s) == scheme,
                    lambda s, limits, engine=_engine: engine(s, limits=limits))
register_source("spark", is_spark_connect_url, lambda s, limits: SparkSource(s, limits=limits))


def open_source(spec: str, *, limits: EngineLimits | None = None) -> SourceEngine:
    """Open a data source from what the user typed (``limits``: what its engine may use).

    Raises:
        SourceError: the path does not exist, cannot be read, or is of no known kind.
    """
    spec = str(spec).strip()
    if not spec:
        raise SourceError("no data source given", reason="no_source", hint="pass --db PATH_OR_URL")
    for _name, predicate, factory in _REGISTRY:
        if predicate(spec):
            return factory(spec, limits)
    path = Path(spec.removeprefix("duckdb:///")).expanduser()
    if not path.exists():
        raise source_not_found(spec)
    raise SourceError(f"cannot tell what kind of data source {spec} is", reason="source_unknown_kind",
                      hint="use a .duckdb, .csv or .parquet file, a folder of them, or a SQLAlchemy URL")
