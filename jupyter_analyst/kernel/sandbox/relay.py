"""A relay between a kernel's ZMQ sockets and everything in the host that connects to them,
which lets no message from the kernel past a size.

ZMQ assembles a whole message, every frame of it, before a reader sees any of it, and no ZMQ
option bounds that: ``ZMQ_MAXMSGSIZE`` bounds one *frame* (a message of fifty frames of 20 MB
went through, and one over the bound cut the subscriber off for good, without a word to the
reader). The kernel's code can send such a message on any of its sockets, with one 20 MB
buffer sent fifty times without a copy; a host that reads it holds 1 GB, and in a Jupyter
server that is every user's server process, whose own activity watcher reads each kernel's
IOPub socket too.

So a sandboxed kernel binds its sockets at addresses of its own (``kernel-<port>`` in its
socket folder), and the host's advertised addresses (``k-<port>``, in the connection file
every client reads) are this relay's, made by the host before the kernel starts, in a
folder the kernel may add to but whose host-made entries it may not remove or replace
(sticky, root-owned). For each connection the relay forwards the host's bytes as they come,
and reads the kernel's as ZMTP frames: a message's frames are passed on while they add up
to at most ``limit`` bytes; one that would pass it ends the message there (an empty last
frame, so the host reads a short, invalid message and drops it) and the rest of that
message is read and dropped, never held. A command frame (the protocol's own) over 64 KB,
or bytes that are not ZMTP 3, end the connection. The relay holds a chunk at a time.

Under CURVE (jupyter_client's transport encryption, off by default) frames travel as
encrypted commands whose ``MORE`` flag cannot be read: each is then capped alone.

The relays run on an event loop of their own, in a thread: a kernel must be reachable
whether or not the loop that started it still runs (papermill's engine starts one in a
loop of its own, then hands it to nbclient), and a large display's bytes are not copied
on a Jupyter server's main loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Coroutine, Iterable
from typing import Any, TypeVar

GREETING = 64
MORE, LONG, COMMAND = 0x01, 0x02, 0x04
#: The largest protocol command passed on (a READY with its metadata is a few hundred bytes).
COMMAND_BYTES = 64 * 1024
CHUNK = 1 << 20
#: How long the relay waits for the kernel to bind a socket a client already connected to.
UPSTREAM_WAIT_S = 60.0


_T = TypeVar("_T")
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _relay_loop() -> asyncio.AbstractEventLoop:
    """The loop every relay of this process runs on (started on first use)."""
    global _loop
    with _loop_lock:
        if _loop is None or not _loop.is_running():
            loop = asyncio.new_event_loop()
            started = threading.Event()
            loop.call_soon(started.set)
            threading.Thread(target=loop.run_forever, name="kernel-relay", daemon=True).start()
            started.wait()
            _loop = loop
        return _loop


async def _on_relay_loop(coro: Coroutine[Any, Any, _T]) -> _T:
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, _relay_loop()))


class _Broken(Exception):
    """The kernel's bytes are not ZMTP 3: the connection is closed."""


class Relay:
    """Relays ``(listen, upstream)`` Unix socket pairs, capping the upstream's messages."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._cut = 0
        self._cut_lock = threading.Lock()
        self._servers: list[asyncio.base_events.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._paths: list[str] = []

    async def start(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Listen at each ``listen`` path (made now: it must not exist)."""
        await _on_relay_loop(self._start(list(pairs)))

    async def stop(self) -> None:
        """Close the listening sockets and every connection."""
        await _on_relay_loop(self._stop())

    def take_cut(self) -> int:
        """How many of the kernel's messages were cut since the last call."""
        with self._cut_lock:
            cut, self._cut = self._cut, 0
        return cut

    async def _start(self, pairs: list[tuple[str, str]]) -> None:
        for listen, upstream in pairs:
            server = await asyncio.start_unix_server(
                lambda r, w, up=upstream: self._spawn(self._serve(r, w, up)), path=listen)
            self._servers.append(server)
            self._paths.append(listen)

    async def _stop(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        for path in self._paths:
            with contextlib.suppress(OSError):
                os.unlink(path)
        self._servers, self._paths = [], []

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, down_r: asyncio.StreamReader, down_w: asyncio.StreamWriter, upstream: str) -> None:
        up_w: asyncio.StreamWriter | None = None
        try:
            up_r, up_w = await _connect(upstream)
            ahead = asyncio.ensure_future(_pipe(down_r, up_w))
            back = asyncio.ensure_future(self._frames(up_r, down_w))
            try:
                await asyncio.wait({ahead, back}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (ahead, back):
                    task.cancel()
                await asyncio.gather(ahead, back, return_exceptions=True)
        except (OSError, asyncio.TimeoutError):
            pass  # the kernel never bound it, or went away: the client connects again
        finally:
            for writer in (down_w, up_w):
                if writer is not None:
                    writer.close()

    async def _frames(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Pass the kernel's ZMTP stream on, capping each message at ``limit`` bytes."""
        # The greeting is passed on as it comes: each side sends its next part only once it
        # has the other's last one.
        greeting = b""
        while len(greeting) < GREETING:
            part = await reader.read(GREETING - len(greeting))
            if not part:
                raise asyncio.IncompleteReadError(greeting, GREETING)
            greeting += part
            if len(greeting) >= 11 and (greeting[0] != 0xFF or greeting[9] & 1 != 1 or greeting[10] < 3):
                raise _Broken("not a ZMTP 3 greeting")
            writer.write(part)
            await writer.drain()
        total, begun, dropping = 0, False, False
        while True:
            flags = (await reader.readexactly(1))[0]
            if flags & ~(MORE | LONG | COMMAND):
                raise _Broken("a frame with unknown flags")
            size = int.from_bytes(await reader.readexactly(8 if flags & LONG else 1), "big")
            header = bytes([flags]) + size.to_bytes(8 if flags & LONG else 1, "big")
            if flags & COMMAND:
                if size > max(COMMAND_BYTES, self.limit if not flags & MORE else 0):
                    raise _Broken("a command too large")
                writer.write(header)
                await _copy(reader, writer, size)
                continue
            if dropping:
                await _copy(reader, None, size)
                dropping = bool(flags & MORE)
                continue
            if total + size > self.limit:
                with self._cut_lock:
                    self._cut += 1
                if begun:
                    writer.write(b"\x00\x00")  # an empty last frame ends what was passed on
                await _copy(reader, None, size)
                dropping, total, begun = bool(flags & MORE), 0, False
                continue
            writer.write(header)
            await _copy(reader, writer, size)
            total, begun = (total + size, True) if flags & MORE else (0, False)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None, size: int) -> None:
    """Move ``size`` bytes from ``reader`` to ``writer`` (or drop them), a chunk at a time."""
    while size:
        chunk = await reader.read(min(size, CHUNK))
        if not chunk:
            raise asyncio.IncompleteReadError(b"", size)
        size -= len(chunk)
        if writer is not None:
            writer.write(chunk)
            await writer.drain()
    if writer is not None:
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while chunk := await reader.read(CHUNK):
        writer.write(chunk)
        await writer.drain()


async def _connect(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the kernel's socket, waiting while the kernel is starting."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + UPSTREAM_WAIT_S
    pause = 0.005
    while True:
        try:
            return await asyncio.open_unix_connection(path)
        except (FileNotFoundError, ConnectionRefusedError):
            if loop.time() >= deadline:
                raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.1)
