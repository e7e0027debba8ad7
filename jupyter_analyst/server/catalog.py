"""The server's data sources as an allow-list: clients name configured sources, never paths.

A client of the server does not choose what the server opens: it names one of the sources
its administrator configured (``c.AnalystApp.sources``), and threads store that source's
spec. Only with ``c.AnalystApp.allow_any_source`` may a client give a path or URL itself.
Thread listings show a thread's source by its configured name; a spec (a server path, a URL
with credentials) is not shown there.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError, SourceError
from ..sql import absolute_spec
from .._text import masked

__all__ = ["SourceCatalog", "masked"]


def _normal(spec: str) -> str:
    # One file named two ways (relative, absolute, ~, a SQLite URL's relative file) is one
    # source, as threads store it; other URLs compare as typed.
    return absolute_spec(spec)


class SourceCatalog:
    """Configured sources by name (the first is the default), and what clients may open.

    >>> catalog = SourceCatalog({"sales": "/data/sales.duckdb", "crm": "postgresql://u:p@db/crm"})
    >>> catalog.spec_of("crm"), catalog.spec_of(None), catalog.name_of("/data/../data/sales.duckdb")
    ('postgresql://u:p@db/crm', '/data/sales.duckdb', 'sales')
    >>> catalog.spec_of("/etc/passwd")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SourceError: unknown source '/etc/passwd' (hint: configured sources: sales, crm)
    """

    def __init__(self, sources: Mapping[str, str], *, allow_any: bool = False) -> None:
        self.sources = dict(sources)
        self.allow_any = allow_any

    @property
    def names(self) -> list[str]:
        """The configured names, the default first."""
        return list(self.sources)

    def unknown(self, message: str) -> SourceError:
        """The error of a source a client may not open: it lists the names it may use."""
        hint = (f"configured sources: {', '.join(self.names)}" if self.sources
                else "this server has no configured sources (c.AnalystApp.sources)")
        return SourceError(message, reason="unknown_source", hint=hint, sources=self.names)

    def spec_of(self, name: str | None) -> str | None:
        """What a client's source name opens: a configured spec, the default for ``None``
        (``None`` when nothing is configured), the text itself when any source is allowed;
        ``SourceError`` ``unknown_source`` otherwise."""
        if name is None:
            return next(iter(self.sources.values()), None)
        if name in self.sources:
            return self.sources[name]
        if self.allow_any and name.strip():
            return name
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise self.unknown(f"unknown source {shown!r}")

    def configured(self, spec: str) -> str | None:
        """The configured spec naming the same source as ``spec``, if any."""
        target = _normal(spec)
        return next((s for s in self.sources.values() if _normal(s) == target), None)

    def name_of(self, spec: str | None) -> str | None:
        """How the API shows a stored spec: its configured name; when any source is allowed,
        an unconfigured spec without its password; otherwise nothing."""
        if spec is None:
            return None
        target = _normal(spec)
        name = next((n for n, s in self.sources.items() if _normal(s) == target), None)
        if name is None and self.allow_any:
            return masked(spec)
        return name

    def for_thread(self, stored: str | None) -> str:
        """The spec a turn without ``source`` opens: the thread's own (the default when it has
        none), refused when the server no longer offers it."""
        if stored is None:
            spec = self.spec_of(None)
            if spec is None:
                raise ConfigError("the thread has no data source, and this server has none configured",
                                  reason="no_source", hint="name one with 'source', or configure c.AnalystApp.sources")
            return spec
        spec = self.configured(stored)
        if spec is not None:
            return spec
        if self.allow_any:
            return stored
        raise self.unknown("the thread's data source is not configured on this server")
