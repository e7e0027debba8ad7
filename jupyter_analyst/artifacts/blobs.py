"""Content-addressed blobs: ``<root>/artifacts/sha256/ab/<hex>``, written once, atomically."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..errors import StorageError


class BlobStore:
    """Bytes stored by their sha256; a blob is never rewritten once present."""

    def __init__(self, root: Path) -> None:
        self.dir = Path(root) / "artifacts" / "sha256"
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, fingerprint: str) -> Path:
        """Where the blob of ``fingerprint`` (``sha256:<hex>``) lives."""
        hexdigest = fingerprint.removeprefix("sha256:")
        return self.dir / hexdigest[:2] / hexdigest

    def has(self, fingerprint: str) -> bool:
        """Whether the blob is stored."""
        return self.path(fingerprint).exists()

    def put_bytes(self, fingerprint: str, data: bytes) -> Path:
        """Store ``data`` under its fingerprint (no-op when already there)."""
        return self._put(fingerprint, lambda fh: fh.write(data))

    def put_file(self, fingerprint: str, src: Path, *, move: bool = False) -> Path:
        """Store the file ``src`` under its fingerprint, moving it when allowed."""
        dest = self.path(fingerprint)
        if dest.exists():
            return dest
        if move:
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.chmod(src, 0o644)
                os.replace(src, dest)
                return dest
            except OSError:
                pass  # another file system: fall back to a copy
        with open(src, "rb") as fh_in:
            return self._put(fingerprint, lambda fh: shutil.copyfileobj(fh_in, fh, 1 << 20))

    def _put(self, fingerprint: str, write) -> Path:
        dest = self.path(fingerprint)
        if dest.exists():
            return dest
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            # temp file + fsync + rename: a crash leaves either no blob or a whole one.
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    write(fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                # Readable by the sandboxed kernel, which may run as another user.
                os.chmod(tmp, 0o644)
                os.replace(tmp, dest)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StorageError(f"cannot store blob {fingerprint[:19]}: {exc}") from exc
        return dest
