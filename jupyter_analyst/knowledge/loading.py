"""A context folder read into a :class:`TeamContext`, kept as a digest while it is unchanged.

Parsing dbt's YAML imports dbt-semantic-interfaces and its JSON schemas (seconds on a busy
machine); a turn's folder rarely changes between turns. So the result is kept, keyed by the
sha256 of every file read (path and bytes) and of what was not read: in this process, and
as a JSON digest in the workspace (trusted ground, which the folder is not). A turn whose
folder is unchanged reads the digest and imports neither YAML nor the library.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .definitions import ContextProblem, TeamContext
from .context_files import FolderFile, read_folder

#: Changes when what a digest holds changes: older digests are then not read.
DIGEST_VERSION = "1"
_MEMO: dict[str, TeamContext] = {}
_MEMO_SIZE = 8


def _key(name: str, files: list[FolderFile], problems: list[ContextProblem]) -> str:
    digest = hashlib.sha256(f"{DIGEST_VERSION}\0{name}".encode())
    for file in files:
        digest.update(b"\0" + file.path.encode() + b"\0" + file.text.encode())
    for problem in problems:
        digest.update(b"\1" + str(problem).encode())
    return digest.hexdigest()


def _parse(folder: Path, files: list[FolderFile], problems: list[ContextProblem]) -> TeamContext:
    from .semantic import read_semantic_layer
    from .verified import read_verified

    metrics, dimensions, yaml_problems = read_semantic_layer(files)
    queries, query_problems = read_verified(files)
    rules = next((f.text for f in files if f.is_rules), "")
    return TeamContext(folder=folder.name, rules=rules, metrics=metrics, dimensions=dimensions, queries=queries,
                       problems=[*problems, *yaml_problems, *query_problems])


def _write_digest(path: Path, context: TeamContext) -> None:
    """Written whole or not at all (temp file + rename); an unwritable workspace only costs a re-parse."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".digest-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(context.model_dump_json())
        os.replace(tmp, path)
    except OSError:
        return
    for old in path.parent.glob("*.json"):  # one digest per folder state is enough
        if old != path:
            old.unlink(missing_ok=True)


def load_team_context(folder: Path | str, *, digests: Path | str | None = None) -> TeamContext:
    """What the context folder defines (empty when there is no such folder).

    ``digests``: a folder of the workspace where the parsed result is kept. Blocking (it
    reads files, and may parse YAML): call it off the event loop.
    """
    folder = Path(folder).expanduser()
    if not folder.exists():
        return TeamContext(folder=folder.name)
    if not folder.is_dir():
        return TeamContext(folder=folder.name, problems=[ContextProblem(file=folder.name, message="not a folder")])
    files, problems = read_folder(folder)
    key = _key(folder.name, files, problems)
    path = Path(digests) / f"{key}.json" if digests is not None else None
    context = _MEMO.get(key)
    if context is not None:
        # Known to this process (another workspace's turn read it): this workspace gets its
        # digest too, so its next process reads it without the parser.
        if path is not None and not path.is_file():
            _write_digest(path, context)
        return context
    if path is not None and path.is_file():
        try:
            context = TeamContext.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            context = None
    if context is None:
        context = _parse(folder, files, problems)
        if path is not None:
            _write_digest(path, context)
    context = context.model_copy(update={"digest": key})
    if len(_MEMO) >= _MEMO_SIZE:
        _MEMO.pop(next(iter(_MEMO)))
    _MEMO[key] = context
    return context
