"""Fingerprints of bytes and logical keys of steps."""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: Bumped when the way keys are computed changes, so old keys never match new ones.
FORMAT_VERSION = "1"
_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    """The fingerprint of some bytes.

    >>> sha256_bytes(b"abc")[:20]
    'sha256:ba7816bf8f01c'
    """
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """The fingerprint of a file, read in 1 MiB chunks (never whole)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def step_key(
    tool: str, arguments: Mapping[str, Any], inputs: Sequence[str] = (), data_version: str = ""
) -> str:
    """The logical key of a step: what it does, on what, against which data.

    >>> a = step_key("run_sql", {"sql": "SELECT 1", "name": "x"})
    >>> a == step_key("run_sql", {"name": "x", "sql": "SELECT 1"}), a.startswith("step:")
    (True, True)
    >>> a == step_key("run_sql", {"sql": "SELECT 1", "name": "x"}, data_version="v2")
    False
    """
    payload = json.dumps(
        [FORMAT_VERSION, tool, dict(arguments), sorted(inputs), data_version],
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return "step:" + hashlib.sha256(payload.encode()).hexdigest()[:32]


def canonical_python(code: str) -> str:
    """Python re-emitted from its syntax tree: comments, layout and quote style do not count.

    >>> canonical_python("x = 'a'  # note\\n\\n\\ny=x") == canonical_python('x = "a"\\ny = x')
    True
    >>> canonical_python("x = 1") == canonical_python("x = 2")
    False

    Code that does not parse is only trimmed; the kernel will report the error.
    """
    try:
        return ast.unparse(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Absurdly deep nesting overflows the parser (MemoryError) or the unparser
        # (RecursionError); the kernel will refuse that code as well.
        lines = [line.rstrip() for line in code.splitlines()]
        return "\n".join(lines).strip("\n")
