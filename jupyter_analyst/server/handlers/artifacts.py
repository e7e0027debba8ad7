"""Artifacts: a thread's inventory, one artifact's metadata, its bytes (served so that nothing
the model wrote runs in the server's origin) and its preview as a notebook output."""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Iterator
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...artifacts import (
    csv_name,
    dataset_csv,
    download_name,
    is_spreadsheet_text,
    neutralised_csv,
    preview_artifact,
)
from ...errors import StorageError
from ..inputs import ArtifactsQuery, ContentQuery, InvalidRequest, PreviewQuery
from .base import AnalystHandler


class ThreadArtifactsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's artifact inventory (``?type=`` keeps one type)."""
        self.owned_thread(thread_id)
        items = self.service.workspace.artifacts.list(thread_id, type=self.query(ArtifactsQuery).type)
        self.reply({"artifacts": [a.model_dump() for a in items]})


class ArtifactHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """One artifact's metadata."""
        self.reply(self.owned_artifact(artifact_id).model_dump())


#: The artifact types a browser may show in place: ones that hold no script. Anything else
#: (HTML, SVG, XML, PDF, unknown bytes) the model's code wrote is downloaded instead.
_SHOWN_INLINE = frozenset({"image/png", "image/jpeg", "image/gif", "text/plain", "text/csv", "application/json"})


def content_disposition(name: str, mime: str, *, download: bool = False) -> str:
    """``inline`` only for a type that holds no script (and not to ``download``); the file
    name as RFC 6266 says, never able to end the header's quoted string, with its type's
    extension when it has none (a SQL dataset's name has none).

    >>> print(content_disposition("outputs/report.html", "text/html"))
    attachment; filename="report.html"; filename*=UTF-8''report.html
    >>> print(content_disposition('outputs/a"b é.png', "image/png"))
    inline; filename="a_b _.png"; filename*=UTF-8''a%22b%20%C3%A9.png
    >>> print(content_disposition("sales.csv", "text/csv", download=True))
    attachment; filename="sales.csv"; filename*=UTF-8''sales.csv
    >>> print(content_disposition("by_region", "application/vnd.apache.parquet"))
    attachment; filename="by_region.parquet"; filename*=UTF-8''by_region.parquet
    """
    import re
    from urllib.parse import quote

    base = download_name(name, mime)
    plain = re.sub(r'[^\x20-\x7e]|["\\]', "_", base)
    how = "inline" if mime in _SHOWN_INLINE and not download else "attachment"
    return f"{how}; filename=\"{plain}\"; filename*=UTF-8''{quote(base, safe='')}"


class ArtifactContentHandler(AnalystHandler):
    @property
    def content_security_policy(self) -> str:
        """The API's own policy (``default-src 'none'``: nothing loads, no script runs) and
        ``sandbox``: a document opened here has an opaque origin, so even a browser that let
        something run would give it neither the server's cookies nor its API."""
        return super().content_security_policy + "; sandbox"

    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """An artifact's bytes, with its content type; a dataset as CSV with ``?format=csv``.

        The bytes are the model's (its code wrote the file), served from the origin that can
        start kernels: never sniffed as another type, sandboxed by CSP, and downloaded
        rather than shown unless their type holds no script. A CSV file it wrote is served
        with its cells neutralised, as a dataset's CSV is: a spreadsheet runs none of them.
        """
        artifact = self.owned_artifact(artifact_id)
        as_csv = self.query(ContentQuery).format == "csv"
        if as_csv and artifact.type != "dataset":
            raise self.refuse(InvalidRequest(
                f"artifact {artifact_id!r} is a {artifact.type}, not a dataset: only a dataset downloads as CSV",
                reason="not_a_dataset", hint="ask for its own bytes, without ?format="))
        try:
            # Re-hashed before a byte is sent (off the loop: big blobs take a while).
            blob = await asyncio.to_thread(self.service.open_artifact, artifact_id)
        except StorageError as exc:
            raise web.HTTPError(500, exc.message, reason=exc.reason) from exc
        self.set_header("X-Content-Type-Options", "nosniff")
        with blob as fh:
            if as_csv:
                await self._send_csv(artifact.name, fh)
            elif artifact.type != "dataset" and is_spreadsheet_text(artifact.name, artifact.mime):
                await self._send_rows(artifact.name, artifact.mime, fh)
            else:
                mime = artifact.mime or mimetypes.guess_type(artifact.name)[0] or "application/octet-stream"
                self.set_header("Content-Type", mime)
                self.set_header("Content-Disposition", content_disposition(artifact.name, mime))
                while chunk := fh.read(1 << 20):
                    self.write(chunk)
                    await self.flush()
        self.finish(set_content_type=self._headers["Content-Type"])

    async def _send_csv(self, name: str, fh: Any) -> None:
        """The dataset in ``fh`` as CSV, converted a batch at a time off the loop (a large one
        is never read whole), always downloaded: its cells are the model's."""
        self.set_header("Content-Type", "text/csv; charset=utf-8")
        self.set_header("Content-Disposition", content_disposition(csv_name(name), "text/csv", download=True))
        await self._send_chunks(dataset_csv(fh))

    async def _send_rows(self, name: str, mime: str, fh: Any) -> None:
        """A CSV (or TSV) file the model's code wrote, its rows re-written so that a spreadsheet
        opening it runs none of its cells (its numbers as they are)."""
        tsv = "tab-separated" in mime or name.lower().endswith(".tsv")
        mime = "text/tab-separated-values" if tsv else "text/csv"
        self.set_header("Content-Type", f"{mime}; charset=utf-8")
        self.set_header("Content-Disposition", content_disposition(name, mime))
        await self._send_chunks(neutralised_csv(fh))

    async def _send_chunks(self, chunks: Iterator[bytes]) -> None:
        # Each chunk made off the loop: reading and converting block.
        while (chunk := await asyncio.to_thread(next, chunks, None)) is not None:
            self.write(chunk)
            await self.flush()


class ArtifactPreviewHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """An artifact as a notebook output shows it: ``{data: MIME bundle, metadata}``
        (a dataset's first ``?rows=`` rows, an image, the start of a text file)."""
        artifact = self.owned_artifact(artifact_id)
        rows = self.query(PreviewQuery).rows

        def read() -> dict[str, Any]:
            with self.service.open_artifact(artifact_id) as blob:
                return preview_artifact(artifact, blob, rows=rows)

        try:
            bundle = await asyncio.to_thread(read)
        except StorageError as exc:
            raise self.refuse(exc, 500) from None
        self.reply(bundle)
