"""Time stamps and ids: the two things every record carries, below every layer."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    """A short random id with a readable prefix, e.g. ``thr_1f2e3d4c5b6a7980``."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"
