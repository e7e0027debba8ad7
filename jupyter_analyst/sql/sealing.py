"""The statements that seal a DuckDB instance, with no dependency beyond the standard library.

``sealed.py`` explains the walls and holds the settings' model (``EngineLimits``, pydantic);
this module is what the engine worker (``engine_worker.py``) imports to put them up, so that
a worker starts without importing pydantic (a quarter of its start-up), given its host's
figures.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: Extensions DuckDB would otherwise load (or download) when a query names one of their
#: functions: ``httpfs`` reaches the network, ``postgres`` other databases.
DUCKDB_CONNECT_CONFIG: dict[str, Any] = {
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,
}

#: A connection's own settings that make the engine estimate a running query's progress
#: (``query_progress()``) without drawing a progress bar anywhere.
_PROGRESS_SESSION = (("enable_progress_bar", "true"), ("enable_progress_bar_print", "false"))


def literal(text: str) -> str:
    """A SQL string literal (settings take no parameters).

    >>> literal("/tmp/it's")
    "'/tmp/it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def seal(
    conn: Any, private: Path, *, files: Iterable[Path] = (), memory: int, threads: int, spill: int, sessions: int = 0,
) -> list[Any]:
    """Seal a DuckDB instance: only ``files`` and ``private`` reachable, ``memory`` bytes,
    ``threads`` threads and ``spill`` bytes of spill files, locked.

    Runs once, before the instance is handed out; afterwards no statement can change a
    setting (``lock_configuration``). Returns ``sessions`` connections (cursors of ``conn``)
    opened just before the lock with the engine's progress estimate on: a connection's own
    setting, which no connection opened after the lock can turn on.
    """
    allowed_files = ", ".join(literal(str(f)) for f in files)
    for name, value in (
        ("allowed_directories", f"[{literal(str(private) + os.sep)}]"),
        ("allowed_paths", f"[{allowed_files}]"),
        ("temp_directory", literal(str(private / "spill"))),
        ("max_temp_directory_size", f"'{int(spill)}B'"),
        ("memory_limit", f"'{int(memory)}B'"),
        ("threads", str(int(threads))),
        ("home_directory", literal(str(private))),
        ("secret_directory", literal(str(private / "secrets"))),
        # INSTALL would download from DuckDB's repository: it looks in an empty folder instead.
        ("custom_extension_repository", literal(str(private / "no-extensions"))),
        ("autoinstall_extension_repository", literal(str(private / "no-extensions"))),
        ("enable_external_access", "false"),
    ):
        # GLOBAL: a setting of the instance, which every cursor opened later inherits.
        conn.execute(f"SET GLOBAL {name} = {value}")
    opened = []
    try:
        for _ in range(sessions):
            opened.append(conn.cursor())
            for name, value in _PROGRESS_SESSION:
                opened[-1].execute(f"SET {name} = {value}")
        conn.execute("SET GLOBAL lock_configuration = true")
    except BaseException:
        for cursor in opened:
            cursor.close()
        raise
    return opened
