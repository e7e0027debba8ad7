"""Leases on running turns, when several processes share one PostgreSQL store.

One server alone knows at start that any turn still marked running was cut by its own last
crash. Processes sharing a store cannot: another may be running that turn right now. So
each turn run on a shared store holds a lease in the store, which its process renews while
the turn runs (every third of the lease): a server for all its turns (:class:`TurnLeases`),
a command-line run for its one (:func:`renewing`). A turn whose lease ran out lost its
process (killed, or cut off from the database); any server then closes it as
``interrupted`` with its ``turn_ended`` event, which every server's followers of the thread
receive, and a new turn may start on the thread. A turn whose lease still runs is refused
a second turn (``ThreadBusy``, 409) rather than marked interrupted under its living process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from ..events import Event
from .threads import ThreadStore, Turn

log = logging.getLogger(__name__)


class TurnLeases:
    """This server's running turns' leases, renewed on a timer; expired ones swept."""

    def __init__(self, store: ThreadStore, lease_s: float, publish: Callable[[Event], None],
                 cut: Callable[[Turn], Event]) -> None:
        self.store = store
        #: The ``turn_ended`` of a turn whose lease ran out (told by the turns' one owner).
        self._cut = cut
        self.lease_s = lease_s
        self._publish = publish
        self._held: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Renew and sweep from now on (call on the event loop; once is enough)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._keep())

    def hold(self, turn: Turn) -> None:
        """Renew ``turn``'s lease until :meth:`release` (call on the event loop)."""
        self._held.add(turn.turn_id)
        self.start()

    def release(self, turn: Turn) -> None:
        """The turn ended: its lease is left to run out (its status says it is not running)."""
        self._held.discard(turn.turn_id)

    def sweep(self) -> list[Event]:
        """Close the turns whose lease ran out; their stored ``turn_ended`` events (blocking)."""
        return self.store.expire_leases(self._cut)

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)  # a timer, not a wait on something: renews on time
            try:
                await asyncio.to_thread(self.store.renew_leases, sorted(self._held), self.lease_s)
                for event in await asyncio.to_thread(self.sweep):
                    self._publish(event)
            except Exception:  # noqa: BLE001 - the database may be away for a moment: next round retries
                log.warning("jupyter-analyst: renewing turn leases failed", exc_info=True)

    async def close(self) -> None:
        """Stop renewing (at shutdown: this server's turns are being cancelled)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


@contextlib.asynccontextmanager
async def renewing(store: ThreadStore, turn: Turn, lease_s: float | None) -> AsyncIterator[None]:
    """Renew ``turn``'s lease while the block runs (nothing when it holds none)."""
    if lease_s is None:
        yield
        return

    async def keep() -> None:
        while True:
            await asyncio.sleep(lease_s / 3)  # a timer: renews on time
            try:
                await asyncio.to_thread(store.renew_leases, [turn.turn_id], lease_s)
            except Exception:  # noqa: BLE001 - the database may be away for a moment: next round retries
                log.warning("jupyter-analyst: renewing the turn's lease failed", exc_info=True)

    task = asyncio.get_running_loop().create_task(keep())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
