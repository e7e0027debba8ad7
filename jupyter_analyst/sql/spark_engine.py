"""Spark as a source engine, through Spark Connect (``sc://host:15002``): an open-source Spark
cluster's Connect server, or Databricks Connect's endpoint.

The source is one Spark Connect session of its own (``SparkSession.builder.remote(spec).create()``),
whose current catalog and database hold the tables the model sees. The model's SQL is checked
in sqlglot's ``spark`` dialect against Spark's own function list (``allowed/spark.txt``: no
``reflect``/``java_method``, no file readers or ``input_file_name``, no session functions), and
the guard refuses writes, settings, ``ADD JAR``, ``CACHE``, script transforms, files read as
tables and ``${...}`` substitution (``prepare/guard.py``). Spark has no read-only session: what
the server may do is what the connecting user may do, so the source needs a role that may only
read (docs/data-sources.md).

Each query is tagged (``SparkSession.addTag``) with a tag of its own (a step's queries, the
model's SQL and the row counts of the tables it reads, begin ``jupyter-analyst-query``; the
schema outline's look-ups ``jupyter-analyst-probe``, so Spark's UI tells them apart), so a
timeout or a Stop interrupts it on the cluster (``interruptTag``): Spark Connect keeps tags per
thread, so the tag is added in the very thread that runs the query (a tag added elsewhere marks
nothing, and ``interruptTag`` would then stop nothing). Rows come back as Arrow
(``DataFrame.toArrow``) under the row cap (``limit``); the rows past it are counted by a query
of their own.

Data version: the Delta tables' versions (``DESCRIBE HISTORY``) where every table is a Delta
table; otherwise the version ends with ``:live`` (reuse across turns then assumes the data did
not change, and says so).
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from .._text import json_safe
from ..errors import QueryFailed, SourceError
from .query_model import ColumnInfo, TableDescription, TableInfo
from .sealed import EngineLimits
from .source_engine import BatchQuery, QueryRun, ResultBatches, RunningQuery, SourceEngine, stopped_after, unknown_table

T = TypeVar("T")

#: What installs the Spark Connect client.
INSTALL_HINT = "pip install 'jupyter-analyst[spark]'"
#: The prefix of every query's tag (a tag per query follows it), to be found in Spark's UI.
TAG_PREFIX = "jupyter-analyst"
#: The tags of a step's queries (the model's SQL, its tables' row counts) begin with this; the
#: outline's look-ups' with ``jupyter-analyst-probe``: Spark's UI tells which jobs a step ran.
QUERY_TAG_PREFIX = f"{TAG_PREFIX}-query"
#: The dialect host-written look-ups (the schema outline's) are written in.
_HOST_DIALECT = "duckdb"


def is_spark_connect_url(spec: str) -> bool:
    """Whether ``spec`` is a Spark Connect URL.

    >>> is_spark_connect_url("sc://127.0.0.1:15002"), is_spark_connect_url("sqlite:///x.db")
    (True, False)
    """
    return spec.lower().startswith("sc://")


def safe_url(spec: str) -> str:
    """The URL without its secrets (Spark Connect's ``;token=...`` and any ``user:password@``).

    >>> safe_url("sc://ws.cloud.databricks.com:443/;token=dapi123;use_ssl=true")
    'sc://ws.cloud.databricks.com:443/;token=***;use_ssl=true'
    """
    spec = re.sub(r"(;\s*token\s*=)[^;]*", r"\1***", spec, flags=re.IGNORECASE)
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", spec)


class SparkSource(SourceEngine):
    """The tables of a Spark Connect session's current database."""

    kind = "spark"
    dialect = "spark"
    interruptible = True

    def __init__(self, spec: str, limits: EngineLimits | None = None) -> None:
        super().__init__(spec, limits)
        try:
            from pyspark.sql.connect.session import SparkSession
        except ImportError as exc:
            raise SourceError(f"cannot open {safe_url(spec)}: the Spark Connect client is not installed",
                              reason="source_unreadable", hint=INSTALL_HINT) from exc
        session = None
        try:
            session = self.session = SparkSession.builder.remote(spec).create()
            self.version = _first_contact(self.session)
        except Exception as exc:  # noqa: BLE001 - the client raises gRPC's and its own types
            if session is not None:  # its channel's threads would keep the process from exiting
                _stop(session, release=False)
            super().close()
            raise SourceError(f"cannot connect to {safe_url(spec)}: {_first_line(exc)}", reason="source_unreadable",
                              hint="check the sc:// URL (host, port, token) and that the Spark Connect server runs") from exc
        try:
            # Spark replaces ${...} in a statement's text (settings, the server's environment):
            # the guard refuses it, and this session does not do it either.
            self.session.conf.set("spark.sql.variable.substitute", "false")
        except Exception:  # noqa: BLE001 - a managed server may not let a session change it
            pass
        self._schema: dict[str, dict[str, str]] | None = None
        #: Tables known not to be Delta tables (their format does not change under a name).
        self._unversioned: set[str] = set()

    # ------------------------------------------------------------------ tagged calls

    def tagged(self, tag: str, call: Callable[[], T]) -> T:
        """``call()`` with this thread's operations tagged ``tag``: ``interruptTag(tag)`` from
        any thread then stops them on the cluster. The tag is thread-local in Spark Connect,
        so it is added here, in the thread that runs the query."""
        self.session.addTag(tag)
        try:
            return call()
        finally:
            self.session.removeTag(tag)

    def interrupt_tag(self, tag: str) -> list[str]:
        """Stop the operations tagged ``tag`` on the cluster; the ids of those it stopped."""
        try:
            return list(self.session.interruptTag(tag))
        except Exception:  # noqa: BLE001 - the session is closing, or the server is gone
            return []

    def _sql_rows(self, sql: str) -> list[dict[str, Any]]:
        return self.session.sql(sql).toArrow().to_pylist()

    # ------------------------------------------------------------------ the catalogue

    def _tables(self) -> list[Any]:
        return sorted(self.session.catalog.listTables(), key=lambda t: t.name)

    def schema(self) -> dict[str, dict[str, str]]:
        if self._schema is None:
            self._schema = {
                t.name: {c.name: c.dataType for c in self.session.catalog.listColumns(_ident(t.name))}
                for t in self._tables()
            }
        return self._schema

    def list_tables(self) -> list[TableInfo]:
        out = []
        for t in self._tables():
            count = self._sql_rows(f"SELECT count(*) AS n FROM {_ident(t.name)}")[0]["n"]
            kind = "view" if (t.tableType or "").upper().endswith("VIEW") else "table"
            out.append(TableInfo(name=t.name, kind=kind, rows=int(count)))
        return out

    def describe_table(self, table: str, sample_rows: int = 5) -> TableDescription:
        schema = self.schema()
        match = {t.lower(): t for t in schema}.get(str(table).lower())
        if match is None:
            raise unknown_table(str(table), sorted(schema))
        count = self._sql_rows(f"SELECT count(*) AS n FROM {_ident(match)}")[0]["n"]
        rows = self._sql_rows(f"SELECT * FROM {_ident(match)} LIMIT {int(sample_rows)}")
        sample = [{k: json_safe(v) for k, v in row.items()} for row in rows]
        columns = [ColumnInfo(name=c, type=t) for c, t in schema[match].items()]
        return TableDescription(name=match, columns=columns, rows=int(count), sample=sample)

    def data_version(self) -> str:
        """The Delta versions of the tables (``name@version``), or ``...:live`` when one of them
        is not a Delta table (or the server has no Delta): then nothing tells a change."""
        versions = []
        for name in sorted(self.schema()):
            if name in self._unversioned:
                return f"spark:{safe_url(self.spec)}:live"
            try:
                history = self._sql_rows(f"DESCRIBE HISTORY {_ident(name)} LIMIT 1")
            except Exception:  # noqa: BLE001 - not a Delta table, or no Delta on this server
                self._unversioned.add(name)
                return f"spark:{safe_url(self.spec)}:live"
            versions.append(f"{name}@{history[0]['version'] if history else 0}")
        return f"spark:{safe_url(self.spec)}:delta:{';'.join(versions)}"

    # ------------------------------------------------------------------ running

    def start(self, run: QueryRun) -> RunningQuery:
        return SparkQuery(self, run)

    def probe(self, sql: str, timeout_s: float) -> list[tuple[Any, ...]] | None:
        import sqlglot

        tag = _new_tag("probe")
        try:
            spark_sql = sqlglot.transpile(sql, read=_HOST_DIALECT, write=self.dialect)[0]
            with stopped_after(timeout_s, lambda: self.interrupt_tag(tag)):
                table = self.tagged(tag, lambda: self.session.sql(spark_sql).toArrow())
            return [tuple(row.values()) for row in table.to_pylist()]
        except Exception:  # noqa: BLE001 - a failed or stopped look-up states no figures
            return None

    def close(self) -> None:
        super().close()
        _stop(self.session)


class SparkQuery(BatchQuery):
    """One model query, tagged so that it can be interrupted on the cluster."""

    #: The rows past the cap are counted by a query of their own (Spark hands over at most the cap).
    counts_apart = True

    def __init__(self, source: SparkSource, run: QueryRun) -> None:
        super().__init__(run)
        self.source = source
        self.tag = _new_tag("query")
        self._stopped = threading.Event()

    def batches(self) -> ResultBatches:
        table = self._tagged(lambda: self.source.session.sql(self.run.sql).limit(int(self.run.row_cap)).toArrow())
        return ResultBatches(schema=table.schema, batches=iter(table.to_batches()), dropped=0)

    def count(self) -> int:
        return int(self._tagged(lambda: self.source.session.sql(self.run.sql).count()))

    def _tagged(self, call: Callable[[], T]) -> T:
        if self._stopped.is_set():  # stopped before it began: an interrupt would find nothing
            raise QueryFailed("the query was stopped before it began", reason="query_failed")
        return self.source.tagged(self.tag, call)

    def interrupt(self) -> None:
        self._stopped.set()
        self.source.interrupt_tag(self.tag)


#: How often the first call to the server is tried (waits of 50, 200 and 800 ms between).
FIRST_CONTACT_TRIES = 3


def _first_contact(session: Any) -> str:
    """The server's Spark version, asked with few retries: the client's own policy retries an
    unreachable server for ten minutes, so a wrong host or port would hang ``--db``. Queries
    keep the client's policy (a runner's timeout bounds them)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = session.client
    policies = client.get_retry_policies()
    client.set_retry_policies([DefaultPolicy(max_retries=FIRST_CONTACT_TRIES)])
    try:
        return str(session.version)
    finally:
        client.set_retry_policies(policies)


def _stop(session: Any, *, release: bool = True) -> None:
    """Close the session's channel (first releasing the session on the server, with few
    retries: a server that is gone would otherwise be retried for ten minutes)."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    try:
        session.client.set_retry_policies([DefaultPolicy(max_retries=FIRST_CONTACT_TRIES)])
        if release:
            session.stop()
        else:
            session.client.close()
    except Exception:  # noqa: BLE001 - the server may be gone already
        pass


def _new_tag(kind: str) -> str:
    return f"{TAG_PREFIX}-{kind}-{uuid.uuid4().hex[:16]}"


def _ident(name: str) -> str:
    """A Spark SQL identifier (back-quoted).

    >>> _ident("my`table")
    '`my``table`'
    """
    return "`" + name.replace("`", "``") + "`"


def _first_line(exc: BaseException) -> str:
    cause: BaseException | None = exc
    while cause is not None:  # gRPC's error (under the client's "retries exceeded") says what happened
        details = getattr(cause, "details", None)
        if callable(details) and details():
            return str(details()).strip().splitlines()[0]
        cause = cause.__cause__ or cause.__context__
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
