"""Time stamps and ids: the two things every record carries, below every layer.

:func:`now` is the clock of what is counted by the day (the budgets' spending and the day it
falls in): a test moves it with :func:`moved` rather than wait for a day to pass.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

_clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731 - replaced by ``moved``


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now() -> datetime:
    """The current time (UTC, aware), as the clock in use says it."""
    return _clock()


def stamp(when: datetime) -> str:
    """``when`` as stored: ISO-8601 UTC with milliseconds, so stored times sort as text.

    >>> from datetime import timedelta, timezone
    >>> stamp(datetime(2026, 1, 2, 1, 30, tzinfo=timezone(timedelta(hours=2))))
    '2026-01-01T23:30:00.000Z'
    """
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@contextlib.contextmanager
def moved(clock: Callable[[], datetime]) -> Iterator[None]:
    """:func:`now` says what ``clock()`` says (an aware datetime) until the block ends.

    >>> with moved(lambda: datetime(2030, 5, 1, tzinfo=UTC)):
    ...     now().year
    2030
    """
    global _clock
    before = _clock
    _clock = clock
    try:
        yield
    finally:
        _clock = before


def new_id(prefix: str) -> str:
    """A short random id with a readable prefix, e.g. ``thr_1f2e3d4c5b6a7980``."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"
