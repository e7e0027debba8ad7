"""How a source the user typed is stored, and how a stored one is shown.

Threads, notebooks and exports keep a source's file as an absolute path, so a thread can be
continued, and its export verified, from any folder. Paths are made absolute without
following links (the file a user named stays the one named). URLs stay as typed, except
that a SQLite URL's relative file is made absolute too. For people, a stored path inside
the current folder is shown relative again.
"""

from __future__ import annotations

import os
from pathlib import Path

_DUCKDB_URL = "duckdb:///"


def _absolute(path: str, base: Path | None) -> str:
    expanded = os.path.expanduser(path)
    return os.path.normpath(os.path.join(base or os.getcwd(), expanded))


def _sqlite_url(spec: str) -> object | None:
    """The parsed URL when ``spec`` is a SQLite URL with a file, else ``None``."""
    if "://" not in spec:
        return None
    try:
        from sqlalchemy.engine import make_url

        url = make_url(spec)
    except Exception:  # not a URL SQLAlchemy reads: left as typed
        return None
    database = url.database or ""
    if url.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return None
    return url


def absolute_spec(spec: str, base: Path | None = None) -> str:
    """The source as it is stored: file paths absolute (against ``base``, else the current folder).

    >>> absolute_spec("data/sales.duckdb", Path("/home/ann"))
    '/home/ann/data/sales.duckdb'
    >>> absolute_spec("sqlite:///shop.db", Path("/srv"))
    'sqlite:////srv/shop.db'
    >>> absolute_spec("postgresql://ann@db/shop", Path("/srv"))
    'postgresql://ann@db/shop'
    """
    spec = str(spec).strip()
    if not spec or spec in (":memory:", f"{_DUCKDB_URL}:memory:"):
        return spec
    if spec.startswith(_DUCKDB_URL):
        return _DUCKDB_URL + _absolute(spec.removeprefix(_DUCKDB_URL), base)
    if "://" in spec:
        url = _sqlite_url(spec)
        if url is None:
            return spec
        return url.set(database=_absolute(url.database, base)).render_as_string(hide_password=False)  # type: ignore[attr-defined]
    return _absolute(spec, base)


def local_path(spec: str) -> Path | None:
    """The file or folder on this machine a stored source names, or ``None`` (a server's
    URL, a database in memory): what a sandboxed kernel must be shown to open it.

    >>> local_path("/data/sales.duckdb")
    PosixPath('/data/sales.duckdb')
    >>> local_path("duckdb:////data/sales.duckdb")
    PosixPath('/data/sales.duckdb')
    >>> local_path("sqlite:////srv/shop.db")
    PosixPath('/srv/shop.db')
    >>> local_path("postgresql://ann@db/shop") is None and local_path(":memory:") is None
    True
    """
    spec = str(spec).strip()
    if not spec or spec in (":memory:", f"{_DUCKDB_URL}:memory:"):
        return None
    if spec.startswith(_DUCKDB_URL):
        return Path(spec.removeprefix(_DUCKDB_URL)).expanduser()
    if "://" in spec:
        url = _sqlite_url(spec)
        return None if url is None else Path(url.database).expanduser()  # type: ignore[attr-defined]
    return Path(spec).expanduser()


def display_spec(spec: str, base: Path | None = None) -> str:
    """A stored source as people read it: relative to ``base`` (the current folder) when inside it.

    >>> display_spec("/home/ann/data/sales.duckdb", Path("/home/ann"))
    'data/sales.duckdb'
    >>> display_spec("/srv/sales.duckdb", Path("/home/ann"))
    '/srv/sales.duckdb'
    """
    spec = str(spec)
    here = Path(base or os.getcwd())
    if spec.startswith(_DUCKDB_URL):
        rest = spec.removeprefix(_DUCKDB_URL)
        return spec if not os.path.isabs(rest) else _DUCKDB_URL + display_spec(rest, here)
    if "://" in spec:
        url = _sqlite_url(spec)
        if url is None or not os.path.isabs(url.database):  # type: ignore[attr-defined]
            return spec
        shown = display_spec(url.database, here)  # type: ignore[attr-defined]
        return url.set(database=shown).render_as_string(hide_password=False)  # type: ignore[attr-defined]
    if not os.path.isabs(spec):
        return spec
    path = Path(spec)
    return str(path.relative_to(here)) if path.is_relative_to(here) and path != here else spec


def model_spec(spec: str) -> str:
    """A source as the model is told it: a file's or folder's name, a server's database
    without its host or credentials; never a path of this machine (the model provider sees
    everything the model is sent).

    >>> model_spec("/home/ann/data/sales.duckdb"), model_spec("duckdb:////srv/x/shop.duckdb")
    ('sales.duckdb', 'shop.duckdb')
    >>> model_spec("sqlite:////srv/shop.db"), model_spec("postgresql://ann:pw@db.internal:5432/shop")
    ('shop.db', 'postgresql database shop')
    >>> model_spec("/data/exports/"), model_spec(":memory:")
    ('exports', ':memory:')
    >>> model_spec("sc://ws.example.com:443/;token=dapi1;use_ssl=true")
    'Spark (Spark Connect)'
    """
    spec = str(spec).strip()
    if not spec or spec in (":memory:", f"{_DUCKDB_URL}:memory:"):
        return spec
    if spec.lower().startswith("sc://"):  # its parameters hold a token: nothing of the URL is told
        return "Spark (Spark Connect)"
    path = local_path(spec)
    if path is not None:
        return path.name or spec
    try:
        from sqlalchemy.engine import make_url

        url = make_url(spec)
    except Exception:  # not a URL SQLAlchemy reads: its scheme only
        return spec.split("://", 1)[0] + " database"
    name = Path(url.database or "").name
    return f"{url.get_backend_name()} database" + (f" {name}" if name else "")
