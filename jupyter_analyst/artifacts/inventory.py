"""The artifact inventory and the step ledger, in the workspace database (SQLite or PostgreSQL)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..store import DatabaseStore
from .._clock import utc_now
from ..errors import StorageError
from ..ledger import StepCost
from .blobs import Blobs, open_blob_store
from .deterministic import has_stamps, normalise_bytes
from .fingerprints import sha256_bytes, sha256_file
from .model import Artifact, ArtifactNotFound, ArtifactType, Producer, StepRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS artifacts (
    artifact_id    TEXT PRIMARY KEY,
    thread_id      TEXT NOT NULL,
    name           TEXT NOT NULL,
    type           TEXT NOT NULL,
    mime           TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    source_call_id TEXT,
    producer       TEXT NOT NULL,
    logical_key    TEXT,
    fingerprint    TEXT NOT NULL,
    size           INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS artifacts_by_thread ON artifacts(thread_id, fingerprint);
-- In rowid order per thread: the newest artifacts are read without a sort.
CREATE INDEX IF NOT EXISTS artifacts_in_order ON artifacts(thread_id);
CREATE TABLE IF NOT EXISTS steps (
    thread_id    TEXT NOT NULL,
    step_key     TEXT NOT NULL,
    tool         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    turn_id      TEXT NOT NULL,
    arguments    TEXT NOT NULL,
    status       TEXT NOT NULL,
    result       TEXT NOT NULL,
    artifact_ids TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    duration_s   REAL NOT NULL,
    PRIMARY KEY (thread_id, step_key)
);
-- What each kernel name holds after the thread's steps, executed or reused, in the order
-- they were asked for: a dataset fingerprint or a Python step key (agent/environment/bindings.py).
CREATE TABLE IF NOT EXISTS bindings (
    thread_id TEXT NOT NULL,
    name      TEXT NOT NULL,
    binding   TEXT NOT NULL,
    PRIMARY KEY (thread_id, name)
);
"""

_COLUMNS = (
    "artifact_id, thread_id, name, type, mime, created_at, source_call_id, producer, "
    "logical_key, fingerprint, size"
)

_STEP_COLUMNS = (
    "thread_id, step_key, tool, call_id, turn_id, arguments, status, result, artifact_ids, created_at, duration_s, cost"
)


class ArtifactStore(DatabaseStore):
    """Content-addressed blobs plus the inventory rows that name them, per thread."""

    schema = _SCHEMA
    migrations = (
        # What each executed step cost (its share of the model call that issued it, see
        # jupyter_analyst/ledger.py), set once its reply's steps are done; NULL: not recorded.
        "ALTER TABLE steps ADD COLUMN cost TEXT;",
    )

    def __init__(self, db_path: Path | str, blob_root: Path, *, blobs: Blobs | None = None) -> None:
        """``blobs`` is where the bytes go (default: the folder ``blob_root/artifacts/sha256``)."""
        self.blobs = blobs if blobs is not None else open_blob_store(None, blob_root)
        super().__init__(db_path)

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self._query(sql, params)]

    # ------------------------------------------------------------------ adding

    def add_bytes(
        self,
        data: bytes,
        *,
        thread_id: str,
        name: str,
        type: ArtifactType,
        mime: str,
        producer: Producer,
        source_call_id: str | None = None,
        logical_key: str | None = None,
    ) -> tuple[Artifact, bool]:
        """Store bytes as an artifact of the thread; ``(artifact, created)``.

        An artifact of the same type and content already in the thread is returned as it
        is (``created`` False): equivalent artifacts are stored once.
        """
        data = normalise_bytes(data, mime)
        fingerprint = sha256_bytes(data)
        # Validated before any byte is written: a bad type or producer leaves no blob.
        artifact = _new_artifact(thread_id, name, type, mime, producer, source_call_id, logical_key, fingerprint, len(data))
        # Stored again even when an equivalent exists: a damaged copy is repaired.
        self.blobs.put_bytes(fingerprint, data)
        existing = self._equivalent(thread_id, fingerprint, type)
        if existing is not None:
            return existing, False
        return self._insert(artifact)

    def add_file(
        self,
        src: Path,
        *,
        thread_id: str,
        name: str,
        type: ArtifactType,
        mime: str,
        producer: Producer,
        source_call_id: str | None = None,
        logical_key: str | None = None,
        move: bool = False,
        fingerprint: str | None = None,
    ) -> tuple[Artifact, bool]:
        """Store a file as an artifact of the thread; ``(artifact, created)``.

        Formats with time stamps (PNG, PDF) are normalised first; other files are hashed
        streaming and moved (or copied) into the blob store without being read whole.
        ``fingerprint`` is the file's, when the host hashed the bytes as it wrote them (a
        query's result, staged where no kernel can reach): the file is not read again.
        """
        src = Path(src)
        if not src.is_file():
            raise StorageError(
                f"cannot add {name!r} to the inventory: {src} is not a file",
                reason="artifact_source_missing", path=str(src),
            )
        if has_stamps(mime):
            # Formats with stamps are normalised in memory (charts and reports: small).
            made = self.add_bytes(
                src.read_bytes(), thread_id=thread_id, name=name, type=type, mime=mime,
                producer=producer, source_call_id=source_call_id, logical_key=logical_key,
            )
            if move:
                src.unlink(missing_ok=True)
            return made
        try:
            fingerprint = fingerprint or sha256_file(src)
            size = src.stat().st_size
        except OSError as exc:
            raise StorageError(f"cannot read {src}: {exc}", path=str(src)) from exc
        artifact = _new_artifact(thread_id, name, type, mime, producer, source_call_id, logical_key, fingerprint, size)
        # Stored again even when an equivalent exists: a damaged copy is repaired (and a
        # moved file is handed over either way, so the caller never cleans up a dedup hit).
        self.blobs.put_file(fingerprint, src, move=move)
        existing = self._equivalent(thread_id, fingerprint, type)
        if existing is None:
            return self._insert(artifact)
        return existing, False

    def _equivalent(self, thread_id: str, fingerprint: str, type: str) -> Artifact | None:
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM artifacts WHERE thread_id = ? AND fingerprint = ? AND type = ? "
            "ORDER BY rowid LIMIT 1",
            (thread_id, fingerprint, type),
        )
        return _artifact(rows[0]) if rows else None

    def _insert(self, artifact: Artifact) -> tuple[Artifact, bool]:
        with self._tx() as cur:
            # Another thread or process may have added the same content meanwhile: check
            # again inside the write lock (BEGIN IMMEDIATE).
            self.backend.lock_thread(cur, artifact.thread_id)
            row = cur.execute(
                f"SELECT {_COLUMNS} FROM artifacts WHERE thread_id = ? AND fingerprint = ? AND type = ? "
                "ORDER BY rowid LIMIT 1",
                (artifact.thread_id, artifact.fingerprint, artifact.type),
            ).fetchone()
            if row is not None:
                return _artifact(row), False
            cur.execute(
                f"INSERT INTO artifacts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                tuple(artifact.model_dump().values()),
            )
        return artifact, True

    # ------------------------------------------------------------------ reading

    def get(self, artifact_id: str) -> Artifact:
        """The artifact with this id."""
        rows = self._rows(f"SELECT {_COLUMNS} FROM artifacts WHERE artifact_id = ?", (artifact_id,))
        if not rows:
            raise ArtifactNotFound(
                f"no artifact {artifact_id!r}",
                hint="list them with `jupyter analyst artifacts list`",
                artifact_id=artifact_id,
            )
        return _artifact(rows[0])

    def list(self, thread_id: str, *, type: ArtifactType | None = None, name: str | None = None) -> list[Artifact]:
        """The thread's artifacts in the order they were made, optionally filtered.

        ``name`` keeps those whose name contains it (case-blind).
        """
        sql = f"SELECT {_COLUMNS} FROM artifacts WHERE thread_id = ?"
        params: list[Any] = [thread_id]
        if type:
            sql += " AND type = ?"
            params.append(type)
        if name:
            # A plain, case-blind substring: LIKE would read the `_` of dataset names
            # as a wildcard.
            sql += " AND " + self.backend.contains("name")
            params.append(name)
        return [_artifact(r) for r in self._rows(sql + " ORDER BY rowid", tuple(params))]

    def recent(self, thread_id: str, limit: int) -> list[Artifact]:
        """The thread's newest ``limit`` artifacts, oldest first (a bounded read for prompts)."""
        rows = self._rows(
            f"SELECT * FROM (SELECT rowid AS r, {_COLUMNS} FROM artifacts WHERE thread_id = ? "
            "ORDER BY rowid DESC LIMIT ?) AS newest ORDER BY r",
            (thread_id, limit),
        )
        return [_artifact(r[1:]) for r in rows]

    def count(self, thread_id: str | None = None) -> int:
        """How many artifacts the thread (or the whole workspace) has."""
        if thread_id is None:
            return int(self._rows("SELECT COUNT(*) FROM artifacts")[0][0])
        return int(self._rows("SELECT COUNT(*) FROM artifacts WHERE thread_id = ?", (thread_id,))[0][0])

    def usage(self, thread_id: str) -> tuple[int, int]:
        """How many artifacts the thread holds and their bytes in all."""
        count, size = self._rows(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM artifacts WHERE thread_id = ?", (thread_id,)
        )[0]
        return int(count), int(size)

    def blob_path(self, artifact: Artifact | str) -> Path:
        """Where an artifact's bytes are on this machine (from the artifact or its fingerprint):
        the blob, or an object store's cached copy (which may not be there yet).

        Unchecked: to read them, use :meth:`open_blob`, :meth:`read_bytes` or
        :meth:`checked_blob`, which hash them first.
        """
        fingerprint = artifact.fingerprint if isinstance(artifact, Artifact) else artifact
        return self.blobs.path(fingerprint)

    def open_blob(self, artifact: Artifact | str) -> BinaryIO:
        """An artifact's bytes opened for reading, checked against its fingerprint first.

        Raises:
            StorageError: ``blob_missing`` or ``blob_corrupt``, naming the artifact.
        """
        if isinstance(artifact, str):
            artifact = self.get(artifact)
        try:
            return self.blobs.open_verified(artifact.fingerprint)
        except StorageError as exc:
            raise _named(exc, artifact) from exc

    def read_bytes(self, artifact_id: str) -> bytes:
        """An artifact's bytes, checked against its fingerprint."""
        with self.open_blob(artifact_id) as fh:
            return fh.read()

    def checked_blob(self, fingerprint: str, *, thread_id: str, copy: Path | None = None) -> Path:
        """The path of a blob whose bytes were just checked, for a reader that opens it
        itself (a kernel loading a dataset); errors name the thread's artifact.

        With ``copy``, that copy of the blob is checked instead (and returned).
        """
        try:
            return self.blobs.verified_path(fingerprint, copy)
        except StorageError as exc:
            artifact = self._equivalent_any(thread_id, fingerprint)
            raise (exc if artifact is None else _named(exc, artifact)) from exc

    def _equivalent_any(self, thread_id: str, fingerprint: str) -> Artifact | None:
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM artifacts WHERE thread_id = ? AND fingerprint = ? ORDER BY rowid LIMIT 1",
            (thread_id, fingerprint),
        )
        return _artifact(rows[0]) if rows else None

    # ------------------------------------------------------------------ the step ledger

    def record_step(self, step: StepRecord) -> None:
        """Remember an executed step; the first record of a key is kept."""
        with self._tx() as cur:
            cur.execute(
                f"INSERT INTO steps ({_STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    step.thread_id, step.step_key, step.tool, step.call_id, step.turn_id,
                    json.dumps(step.arguments, default=str), step.status, json.dumps(step.result, default=str),
                    json.dumps(step.artifact_ids), step.created_at, step.duration_s,
                    step.cost.model_dump_json() if step.cost is not None else None,
                ),
            )

    def set_step_costs(self, thread_id: str, costs: Sequence[tuple[str, str, StepCost]]) -> None:
        """Record what executed steps cost: ``(step key, call id, cost)``, each set on the
        record that call made (a rerun of a recorded step leaves the first record as it is)."""
        if not costs:
            return
        with self._tx() as cur:
            cur.executemany(
                "UPDATE steps SET cost = ? WHERE thread_id = ? AND step_key = ? AND call_id = ?",
                [(cost.model_dump_json(), thread_id, key, call_id) for key, call_id, cost in costs],
            )

    def find_step(self, thread_id: str, step_key: str) -> StepRecord | None:
        """The recorded step with this key, if any."""
        rows = self._rows(f"SELECT {_STEP_COLUMNS} FROM steps WHERE thread_id = ? AND step_key = ?", (thread_id, step_key))
        return _step(rows[0]) if rows else None

    def sql_asked_before(self, thread_id: str, sql: str, name: str) -> bool:
        """Whether the thread has a recorded SQL step of exactly this text, or one that made a
        dataset of this name: its next such call is most likely the same query again (a
        rerun, a "continue" that writes it differently) and reused, so nothing is run
        before its key is known."""
        sql_of = self.backend.json_text("arguments", "sql")
        name_of = self.backend.json_text("arguments", "name")
        return bool(self._rows("SELECT 1 FROM steps WHERE thread_id = ? AND tool = 'run_sql' "
                               f"AND ({sql_of} = ? OR {name_of} = ?) LIMIT 1", (thread_id, sql, name)))

    def steps(self, thread_id: str) -> list[StepRecord]:
        """The thread's recorded steps in execution order."""
        return [_step(r) for r in self._rows(f"SELECT {_STEP_COLUMNS} FROM steps WHERE thread_id = ? ORDER BY rowid", (thread_id,))]

    def forget_thread(self, thread_id: str) -> int:
        """Remove the thread's artifacts, steps and bindings from the inventory (one
        transaction); returns how many artifacts it held.

        The bytes stay in the blob store: a blob is addressed by its content, so the same
        bytes may be another thread's artifact, and deleting them here would race a thread
        that is recording them right now. No thread can reach them once forgotten.
        """
        with self._tx() as cur:
            cur.execute("SELECT COUNT(*) FROM artifacts WHERE thread_id = ?", (thread_id,))
            (count,) = cur.fetchone()
            for table in ("artifacts", "steps", "bindings"):
                cur.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        return int(count)

    def bindings(self, thread_id: str) -> dict[str, str]:
        """What each of the thread's kernel names holds: name -> fingerprint or step key."""
        return dict(self._rows("SELECT name, binding FROM bindings WHERE thread_id = ?", (thread_id,)))  # type: ignore[arg-type]

    def bind(self, thread_id: str, bindings: Mapping[str, str]) -> None:
        """Record new bindings of some names (one transaction)."""
        if not bindings:
            return
        with self._tx() as cur:
            cur.executemany(
                "INSERT INTO bindings VALUES (?, ?, ?) ON CONFLICT(thread_id, name) DO UPDATE SET binding = excluded.binding",
                [(thread_id, name, binding) for name, binding in bindings.items()],
            )


def _new_artifact(
    thread_id: str, name: str, type: str, mime: str, producer: str, source_call_id: str | None,
    logical_key: str | None, fingerprint: str, size: int,
) -> Artifact:
    return Artifact(
        artifact_id=f"art_{uuid.uuid4().hex[:16]}",
        thread_id=thread_id,
        name=name,
        type=type,  # type: ignore[arg-type]  # pydantic checks the literal
        mime=mime,
        created_at=utc_now(),
        source_call_id=source_call_id,
        producer=producer,  # type: ignore[arg-type]
        logical_key=logical_key,
        fingerprint=fingerprint,
        size=size,
    )


def _named(exc: StorageError, artifact: Artifact) -> StorageError:
    """The blob store's error, told about the artifact whose bytes it concerns."""
    what = "are missing" if exc.reason == "blob_missing" else "no longer match its fingerprint"
    return StorageError(
        f"the stored bytes of artifact {artifact.artifact_id} ({artifact.type} `{artifact.name}`) {what}: "
        f"{exc.message}",
        reason=exc.reason, hint=exc.hint, artifact_id=artifact.artifact_id, name=artifact.name,
        fingerprint=artifact.fingerprint,
    )


def _artifact(row: tuple[Any, ...]) -> Artifact:
    keys = [c.strip() for c in _COLUMNS.split(",")]
    return Artifact(**dict(zip(keys, row, strict=True)))


def _step(row: tuple[Any, ...]) -> StepRecord:
    (thread_id, key, tool, call_id, turn_id, arguments, status, result, artifact_ids, created_at, duration, cost) = row
    return StepRecord(
        thread_id=thread_id, step_key=key, tool=tool, call_id=call_id, turn_id=turn_id,
        arguments=json.loads(arguments), status=status, result=json.loads(result),
        artifact_ids=json.loads(artifact_ids), created_at=created_at, duration_s=duration,
        cost=StepCost.model_validate_json(cost) if cost else None,
    )
