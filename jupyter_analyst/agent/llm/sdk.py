"""The ``openai`` SDK, imported once per process, on a thread of its own when asked ahead.

Importing the SDK is most of a short turn's start-up: its package imports the types of
every API it serves (about a second of CPU with the 3.x releases). A turn asks for it
ahead (:func:`start_import`) before it opens its workspace, thread and source, so the
import overlaps what they wait for; the first client takes it from there (:func:`sdk`),
waiting only for what is left. An import begun ahead that failed is made again by the
caller, so its error is the caller's, as if nothing had been begun.

A process that is only this package's (the console script) may also leave out the SDK's
optional aiohttp transport, which the model client never uses (it gives the SDK an httpx
client of its own) and which costs a fifth of the import: the SDK takes it for not
installed, as every major from 1.40 does when it is not. A process that hosts other code
(a server, a user's kernel) imports the SDK whole.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import ModuleType

#: The SDK's optional aiohttp transport: vendored by 3.x, the separate package before.
AIOHTTP_TRANSPORTS = ("openai._vendor.httpx_aiohttp", "httpx_aiohttp")
#: The chat resource the client calls, imported with the SDK (3.x loads it on first use).
CHAT_RESOURCE = "openai.resources.chat"

_lock = threading.Lock()
_ahead: threading.Thread | None = None


def _load(without_aiohttp: bool, then: Callable[[], None]) -> None:
    """Import the SDK and its chat resource, then call ``then`` (the body of the thread of
    :func:`start_import`)."""
    kept_out = [name for name in AIOHTTP_TRANSPORTS if name not in sys.modules] if without_aiohttp else []
    for name in kept_out:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import openai  # noqa: F401

        __import__(CHAT_RESOURCE)
    except Exception:  # noqa: BLE001 - made again by the first client, whose error it is then
        pass
    finally:
        for name in kept_out:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
        then()


def start_import(*, without_aiohttp: bool = False, then: Callable[[], None] = lambda: None) -> None:
    """Begin importing the SDK on a thread of its own, unless it is imported or being
    imported already; returns at once. ``without_aiohttp``: see the module's docstring.

    ``then`` is called once the import is over, however it ended, before :func:`sdk`
    returns (at once when there is nothing to import): the console script turns its garbage
    collector back on then, the SDK's thousand modules loaded without it.
    """
    global _ahead
    with _lock:
        if _ahead is not None or "openai" in sys.modules:
            ahead = None
        else:
            ahead = _ahead = threading.Thread(target=_load, args=(without_aiohttp, then), name="openai-import",
                                              daemon=True)
    if ahead is None:
        then()
    else:
        ahead.start()


def sdk() -> ModuleType:
    """The ``openai`` SDK: the import begun ahead once it is done, else imported here."""
    ahead = _ahead
    if ahead is not None and ahead is not threading.current_thread():
        ahead.join()
    import openai

    return openai
