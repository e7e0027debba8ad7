"""The sources a client agent may choose among: those the user configured, by name.

The client is untrusted and its words reach a model provider. So a client names a source
from this list and never opens a path or URL of its own choosing (a path, a URL or an
unknown name is refused with the names it may use), and nothing sent to it carries a path
of this machine or a URL's host and credentials: a source is said by its name, a thread's
source that is not configured by what the model is told of it (``sql.model_spec``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from ..errors import ConfigError

#: A source's name as a user gives it: a word a client can pass back, never a path or URL.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
#: How long ``list_sources`` waits for one source to open and count its tables.
DESCRIBE_S = 10.0


def parse_named(value: str) -> tuple[str | None, str]:
    """``--source NAME=PATH_OR_URL`` as ``(NAME, PATH_OR_URL)``; a value without such a
    name (a bare path, a URL whose query holds ``=``) is ``(None, value)``: named from its spec.

    >>> parse_named("flights=/data/f.duckdb"), parse_named("/data/f.duckdb")
    (('flights', '/data/f.duckdb'), (None, '/data/f.duckdb'))
    >>> parse_named("postgresql://h/db?sslmode=require")
    (None, 'postgresql://h/db?sslmode=require')
    """
    name, equals, spec = value.partition("=")
    if equals and NAME.fullmatch(name) and spec.strip():
        return name, spec
    return None, value


def name_from_spec(spec: str) -> str:
    """The name a source given without one goes by: its file's or database's name.

    >>> name_from_spec("/data/sales.duckdb"), name_from_spec("postgresql://u:p@db:5432/shop")
    ('sales', 'shop')
    >>> name_from_spec(":memory:"), name_from_spec("/data/exports/"), name_from_spec("sqlite:////srv/a b.db")
    ('memory', 'exports', 'a_b')
    """
    from ..sql import model_spec

    shown = model_spec(spec)
    if "://" in spec and " database" in shown:  # "postgresql database shop" -> "shop"
        shown = shown.split(" database", 1)[1].strip() or shown.split(" ", 1)[0]
    stem = shown.split(".")[0] if not shown.startswith(".") else shown
    word = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem.strip(":")).strip("_.-")[:64]
    return word if word and NAME.fullmatch(word) else "source"


def named_sources(pairs: Iterable[tuple[str | None, str]]) -> dict[str, str]:
    """Name -> spec, in the order given (the first is the default); a source without a name
    is named from its spec, made unique with ``-2``, ``-3``...

    >>> named_sources([(None, "/a/sales.duckdb"), ("crm", "postgresql://db/crm"), (None, "/b/sales.duckdb")])
    {'sales': '/a/sales.duckdb', 'crm': 'postgresql://db/crm', 'sales-2': '/b/sales.duckdb'}

    Raises:
        ConfigError: ``duplicate_source`` when the user gives one name twice.
    """
    pairs = list(pairs)
    given = [name for name, _ in pairs if name is not None]
    twice = next((name for name in given if given.count(name) > 1), None)
    if twice is not None:
        raise ConfigError(f"the source name {twice!r} is given twice", reason="duplicate_source")
    named: dict[str, str] = {}
    for name, spec in pairs:
        if name is None:  # named from its spec, clear of every name the user gave
            base, n = name_from_spec(spec), 1
            name = base
            while name in named or name in given:
                n += 1
                name = f"{base}-{n}"
        named[name] = spec
    return named


class SourceList:
    """The configured sources by name (the first the default), and how each is said.

    >>> sources = SourceList({"sales": "/data/sales.duckdb", "crm": "postgresql://u:pw@db/crm"})
    >>> sources.spec_of(None), sources.spec_of("crm"), sources.default
    ('/data/sales.duckdb', 'postgresql://u:pw@db/crm', 'sales')
    >>> sources.name_of("/data/../data/sales.duckdb"), sources.name_of("/elsewhere/x.duckdb")
    ('sales', 'x.duckdb')
    >>> sources.spec_of("hr")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.ConfigError: unknown source 'hr' (hint: choose one of: sales, crm)
    >>> sources.spec_of("/etc/passwd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.ConfigError: a source is chosen by its name, never by a path or URL (hint: ...)
    >>> sources.redact("cannot open /data/sales.duckdb: gone"), SourceList({"m": ":memory:"}).redact(":memory:")
    ('cannot open source sales: gone', ':memory:')
    """

    def __init__(self, sources: Mapping[str, str] | None = None) -> None:
        self.sources = dict(sources or {})

    @property
    def names(self) -> list[str]:
        return list(self.sources)

    @property
    def default(self) -> str | None:
        return next(iter(self.sources), None)

    def spec_of(self, name: str | None) -> str | None:
        """The spec of the configured source ``name`` (the default's for ``None``).

        Raises:
            ConfigError: ``unknown_source`` for anything else: a path, a URL, another name.
        """
        if name is None:
            return self.sources.get(self.default) if self.default else None
        if name in self.sources:
            return self.sources[name]
        # A path or URL is not said back: a client is answered in names only.
        said = (f"unknown source {name!r}" if NAME.fullmatch(name)
                else "a source is chosen by its name, never by a path or URL")
        raise ConfigError(said, reason="unknown_source",
                          hint="choose one of: " + (", ".join(self.sources) or "(none configured)"),
                          sources=self.names)

    def name_of(self, spec: str | None) -> str | None:
        """How a stored spec is said: its configured name, else what the model is told of it."""
        from ..sql import absolute_spec, model_spec

        if spec is None:
            return None
        target = absolute_spec(spec)
        found = next((n for n, s in self.sources.items() if absolute_spec(s) == target), None)
        return found if found is not None else model_spec(spec)

    def redact(self, text: str) -> str:
        """``text`` with each configured source's spec (as given, and as an absolute path)
        said by its name: an engine's message that quotes the path it could not open."""
        from ..sql import absolute_spec

        # Only what names a place (a path, a URL): a bare file name may be a value in the data.
        forms = sorted(((form, name) for name, spec in self.sources.items()
                        for form in {spec, absolute_spec(spec)} if "/" in form), key=lambda f: -len(f[0]))
        for form, name in forms:
            if form in text:
                text = text.replace(form, f"source {name}")
        return text

    def describe(self) -> list[dict[str, Any]]:
        """Each source: its name, kind, tables with row counts (as the model's outline reads
        them, each count under a time limit), or why it did not open. Blocking."""
        if not self.sources:
            return []
        # Not a `with` block: its exit would wait for a source that hangs.
        pool = ThreadPoolExecutor(max_workers=min(4, len(self.sources)))
        try:
            futures = {name: pool.submit(_describe_one, spec) for name, spec in self.sources.items()}
            views, deadline = [], time.monotonic() + DESCRIBE_S
            for name, future in futures.items():
                try:
                    view = future.result(timeout=max(0.0, deadline - time.monotonic()))
                except FutureTimeout:
                    view = {"kind": None, "tables": [], "error": f"it did not answer within {DESCRIBE_S:g} s"}
                views.append({"name": name, "default": name == self.default, **view})
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return views


def _describe_one(spec: str) -> dict[str, Any]:
    """One source's kind and tables; its error by reason only (an engine's message may quote
    the path or URL, which a client is never sent)."""
    from ..errors import AnalystError
    from ..sql import OUTLINE_TABLES, open_source, source_outline

    try:
        source = open_source(spec)
    except AnalystError as exc:
        return {"kind": None, "tables": [], "error": f"it does not open ({exc.reason})"}
    try:
        names = list(source.schema())
        outline = source_outline(source).tables
        kind = "files" if source.kind == "files" else source.dialect
    except Exception as exc:  # noqa: BLE001 - a source that fails to list is said, not raised
        return {"kind": None, "tables": [], "error": f"its tables could not be read ({type(exc).__name__})"}
    finally:
        source.close()
    listed = names[:OUTLINE_TABLES]
    # A table past a million rows by its engine's estimate is not counted: said as estimated.
    tables = [{"name": n, "rows": outline[n].rows if n in outline else None,
               **({"rows_estimated": True} if n in outline and outline[n].estimated else {})} for n in listed]
    return {"kind": kind, "tables": tables, "more_tables": len(names) - len(listed)}
