"""A query's Parquet bytes, written once and hashed as they are written.

A result's fingerprint is the sha256 of its file. Reading the file back to hash it would
pass over every byte a second time, so the bytes are hashed on their way to the disk:

* DuckDB writes its own Parquet (in parallel, on every core) into a pipe that
  :func:`copy_hashed` drains into the destination file, hashing each chunk;
* other engines hand Arrow tables to :class:`HashingFile`, a file object for
  ``pyarrow.parquet.ParquetWriter`` that hashes what it writes.

Either way the file and its fingerprint come out of the same pass, in the host.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

from ..errors import QueryFailed

T = TypeVar("T")
_CHUNK = 1 << 20
_PIPE_BYTES = 1 << 20


class HashingFile:
    """A writable file object that hashes every byte it passes to ``raw``.

    >>> import io
    >>> sink = HashingFile(io.BytesIO())
    >>> sink.write(b"abc"), sink.tell(), sink.fingerprint()[:20]
    (3, 3, 'sha256:ba7816bf8f01c')
    """

    closed = False

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.size = 0
        self._digest = hashlib.sha256()

    def write(self, data: bytes | memoryview) -> int:
        """Write ``data`` and add it to the hash."""
        self._digest.update(data)
        self.raw.write(data)
        self.size += len(data)
        return len(data)

    def tell(self) -> int:
        """Bytes written so far (the writer never seeks)."""
        return self.size

    def flush(self) -> None:
        """Flush the underlying file."""
        self.raw.flush()

    def fingerprint(self) -> str:
        """``sha256:<hex>`` of everything written."""
        return "sha256:" + self._digest.hexdigest()


class Staging:
    """Whether a query's thread may still create its staging file: not once the query was
    given up (the runner removes the path then, and a call that returns later must not put a
    file back there)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._given_up = False

    def give_up(self) -> None:
        with self._lock:
            self._given_up = True

    @contextlib.contextmanager
    def creating(self) -> Iterator[None]:
        """Create the file in this block, or raise when the query was given up."""
        with self._lock:
            if self._given_up:
                raise QueryFailed(f"the query was given up before {self.path.name} was written", reason="query_timeout")
            yield


#: Whether :func:`copy_hashed` can work here (named pipes: POSIX).
PIPES = hasattr(os, "mkfifo")


def copy_hashed(dest: Path, write: Callable[[str], T], *, pipe_dir: Path | None = None) -> tuple[T, str, int]:
    """Let ``write(path)`` write a file in one sequential pass; it lands at ``dest``, hashed.

    ``path`` is a named pipe in ``pipe_dir`` (default: beside ``dest``; a folder of the
    host's, never a kernel's); a thread drains it into ``dest`` and hashes each chunk on the
    way. Returns
    what ``write`` returned, the fingerprint and the size. When ``write`` raises, the
    error is raised (``dest`` then holds a partial file: the caller discards it).
    """
    fifo = (pipe_dir or dest.parent) / (dest.name + ".pipe")
    fifo.unlink(missing_ok=True)
    with open(dest, "wb") as raw:
        sink = HashingFile(raw)
        os.mkfifo(fifo, 0o600)
        try:
            # Opened by us at both ends first: the engine's open never blocks, and the drain
            # sees the end of the data only once the engine's end and ours are both closed.
            read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            try:
                os.set_blocking(read_fd, True)
                keep_fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except BaseException:
                os.close(read_fd)
                raise
            _widen(read_fd)
            drain = _Drain(read_fd, sink)  # closes its end when the data ends
            try:
                drain.start()
            except BaseException:
                os.close(read_fd)
                os.close(keep_fd)
                raise
            try:
                result = write(str(fifo))
            finally:
                os.close(keep_fd)
                drain.join()
        finally:
            fifo.unlink(missing_ok=True)
    if drain.error is not None:
        raise drain.error
    return result, sink.fingerprint(), sink.size


def _widen(fd: int) -> None:
    """A larger pipe: fewer switches between the engine's writer and the drain."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except OSError:
        pass  # the default size is only slower


class _Drain(threading.Thread):
    """Reads a pipe to its end into a file, hashing; always reads to the end, so that the
    writer never blocks on a full pipe, even after the file could not be written."""

    def __init__(self, fd: int, sink: HashingFile) -> None:
        super().__init__(name="sql-result-drain", daemon=True)
        self.fd = fd
        self.sink = sink
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, _CHUNK):
                if self.error is None:
                    try:
                        self.sink.write(chunk)
                    except OSError as exc:  # a full disk: keep draining, report it after
                        self.error = exc
        finally:
            os.close(self.fd)
