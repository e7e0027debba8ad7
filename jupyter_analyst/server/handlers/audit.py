"""A thread's audit notebook in the user's own Jupyter folder: export, verify, one step's cell.

These are what the sidebar's "Export", "Verify", "Open audit notebook" and "Insert as cell"
do, through the same functions as ``jupyter analyst export`` and ``verify``. Notebooks are
written and read through the server's contents manager, so its checks apply (no path
outside the root, no hidden files) and any contents backend works.
"""

from __future__ import annotations

import asyncio
import errno
import json
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from jupyter_server.utils import url_path_join
from tornado import web

from ..._text import masked
from ...errors import AnalystError, ConfigError
from ...events import ToolCallStarted
from ...notebooks import (
    META,
    NotebookNode,
    connect_source,
    export_thread,
    file_stem,
    notebook_json,
    recorded_data_version,
    step_source,
)
from ...step_kinds import STEP_TOOLS
from ...store import Thread
from ..inputs import NOTEBOOK_FOLDER, ExportNotebook, VerifyNotebook
from ..contents import refuse_links
from ..reanswers import check_reanswerable, reanswer_notebook_text, reanswered_path
from ..verifications import POLL_S, Verification, verify_notebook_text
from .base import AnalystHandler


def default_notebook_path(thread: Thread) -> str:
    """``analyst/{title}-{thread}.ipynb`` in the user's folder.

    >>> from jupyter_analyst.store import Thread
    >>> default_notebook_path(Thread(thread_id="thr_0123456789abcdef", title="Revenue / region?", user="u",
    ...                              created_at=""))
    'analyst/revenue-region-89abcdef.ipynb'
    """
    return f"{NOTEBOOK_FOLDER}/{file_stem(thread.title, thread.thread_id)}.ipynb"


#: What a file-backed contents manager reports as a 500 when the folder cannot hold a path
#: (a file where a folder should be, a name too long, no permission), not a broken server.
_PATH_ERRNOS = frozenset({errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EEXIST, errno.EACCES, errno.EPERM,
                          errno.EROFS})


def refused_by_the_folder(error: web.HTTPError) -> bool:
    """Whether the contents manager refused a path of the user's folder (a hidden name, a
    file that is no notebook, a folder in the way), rather than failed.

    >>> refused_by_the_folder(web.HTTPError(400, "Cannot create hidden directory"))
    True
    >>> cause = OSError(errno.ENOSPC, "No space left on device")
    >>> try:
    ...     raise web.HTTPError(500, "Unexpected error while saving file") from cause
    ... except web.HTTPError as exc:
    ...     refused_by_the_folder(exc)
    False
    """
    if 400 <= error.status_code < 500:
        return True
    cause = error.__cause__
    return isinstance(cause, OSError) and cause.errno in _PATH_ERRNOS


class AuditHandler(AnalystHandler):
    """Shared parts: the thread's notebook as the user may see it, the contents manager."""

    def exported(self, thread: Thread, path: str | None = None) -> NotebookNode:
        """The thread exported as ``jupyter analyst export`` does (to ``path``), a URL's
        password masked: the notebook leaves the server, where credentials stay."""
        workspace = self.service.workspace
        return export_thread(
            workspace.store, workspace.artifacts, thread.thread_id, user=thread.user,
            data_version=recorded_data_version(workspace.notebook_path(thread.thread_id)),
            file_name=path.rsplit("/", 1)[-1] if path else None,
        )

    def answer(self, verification: Verification, status: int = 200) -> None:
        """A verification; a new one (202) with where to follow it (``Location``), and while
        it is not finished, when to ask again (``Retry-After``)."""
        if status == 202:
            self.set_header("Location", url_path_join(self.base_url, "analyst", "api", "threads",
                                                      verification.thread_id, "verifications",
                                                      verification.verification_id))
        if not verification.finished:
            self.set_header("Retry-After", str(POLL_S))
        self.reply(verification.to_json(), status=status)

    async def make_folders(self, path: str) -> None:
        """The folders above ``path``, made through the contents manager when missing."""
        cm = self.contents_manager
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            if not await ensure_async(cm.dir_exists(folder)):
                await ensure_async(cm.save({"type": "directory"}, folder))

    async def save_reanswer(self, content: dict[str, Any] | None, path: str) -> tuple[str | None, str | None]:
        """The re-answered notebook written at ``path`` of the user's folder: where, or why not."""
        if content is None:
            return None, "the re-run wrote no notebook"
        try:
            self.no_links(path)
            await self.make_folders(path)
            saved = await ensure_async(self.contents_manager.save({"type": "notebook", "format": "json",
                                                                   "content": content}, path))
        except web.HTTPError as exc:
            if not refused_by_the_folder(exc):
                raise
            return None, f"{path} cannot be written in your Jupyter folder"
        return saved["path"], None


class ExportHandler(AuditHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Write the thread's audit notebook into the user's folder; ``{path, cells, artifacts}``."""
        thread = self.owned_thread(thread_id)
        request = self.body(ExportNotebook)
        if not self.service.workspace.store.turns(thread_id):
            raise self.refuse(ConfigError("the thread has no turn yet", reason="notebook_not_found",
                                          hint="ask a question first; the notebook records the turns"), 409)
        path = request.path or default_notebook_path(thread)
        self.no_links(path)
        nb = await asyncio.to_thread(self.exported, thread, path)
        content = json.loads(notebook_json(nb))
        try:
            await self.make_folders(path)
            saved = await ensure_async(self.contents_manager.save({"type": "notebook", "format": "json",
                                                                   "content": content}, path))
        except web.HTTPError as exc:
            if not refused_by_the_folder(exc):
                raise
            self.log.info("jupyter-analyst: export to %r refused by the contents manager: %s", path, exc.log_message)
            raise self.refuse(ConfigError(
                f"{path} cannot be written in your Jupyter folder", reason="path_not_writable",
                hint="choose another path: one without hidden names, where no file stands for a folder (or a folder "
                     "for the notebook)"), 409) from None
        self.reply({"path": saved["path"], "cells": len(nb["cells"]),
                    "artifacts": len(nb["metadata"][META]["manifest"])})


class VerifyHandler(AuditHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Start re-executing the thread's notebook (``path`` in the user's folder, else a
        fresh export) against the thread's own source: 202 at once with the verification,
        whose resource (``Location``) gives the report once done; with ``reanswer``, the
        answers restated on today's data too, their notebook written beside ``path``."""
        thread = self.owned_thread(thread_id)
        request = self.body(VerifyNotebook)
        if not self.service.workspace.store.turns(thread_id):
            raise self.refuse(ConfigError("the thread has no turn yet", reason="notebook_not_found",
                                          hint="ask a question first"), 409)
        if request.path is not None:
            # A `path` naming no notebook (or one reached through a link) is a well-formed body
            # naming what the folder does not hold: 409, as the API answers every body that
            # names something not there (a step, a context file; 400 is for bodies that are not
            # what the call takes). 404 stays the answer about the path's thread id, so a client
            # never reads a missing file as the thread, or the verification it started, gone.
            try:
                refuse_links(self.contents_manager, request.path)
            except ConfigError as exc:
                raise self.refuse(exc, 409) from None
            try:
                model = await ensure_async(self.contents_manager.get(request.path, content=True, type="notebook"))
            except web.HTTPError as exc:
                if exc.status_code == 404:
                    raise self.refuse(ConfigError(f"there is no notebook {request.path!r} in your Jupyter folder",
                                                  reason="notebook_not_found",
                                                  hint="export the thread, then verify that notebook"), 409) from None
                if not refused_by_the_folder(exc):
                    raise
                raise self.refuse(ConfigError(f"{request.path} cannot be read as a notebook",
                                              reason="notebook_unreadable",
                                              hint="export the thread, then verify that notebook"), 409) from None
            nb: dict[str, Any] = model["content"]
            if (nb.get("metadata", {}).get(META) or {}).get("thread_id") != thread_id:
                raise self.refuse(ConfigError(f"{request.path} is not an export of this thread",
                                              reason="notebook_of_another_thread",
                                              hint="export the thread, then verify that notebook"), 409)
        else:
            nb = await asyncio.to_thread(self.exported, thread)
        # Whatever the notebook's parameters cell says, it runs on the thread's own source:
        # the server opens configured sources only.
        try:
            spec = self.service.catalog.for_thread(thread.source)
        except AnalystError as exc:
            raise self.refuse(exc) from None
        notebook = request.path or default_notebook_path(thread)
        if request.reanswer:
            try:
                await asyncio.to_thread(check_reanswerable, nb, notebook)
            except ConfigError as exc:  # nothing cited, or receipts that are not the answer's
                raise self.refuse(exc, 409) from None

        async def reanswer() -> dict[str, Any]:
            restated, content = await reanswer_notebook_text(nb, spec)
            written = await self.save_reanswer(content, reanswered_path(notebook))
            restated["output"], restated["output_refused"] = written
            return restated

        try:
            verification = self.service.verifications.start(
                thread_id, notebook=request.path, source=self.service.catalog.name_of(spec),
                run=reanswer if request.reanswer else lambda: verify_notebook_text(nb, spec),
                kind="reanswer" if request.reanswer else "verify")
        except ConfigError as exc:  # one of the thread's is under way
            raise self.refuse(exc, 409) from None
        self.answer(verification, status=202)


class VerificationHandler(AuditHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str, verification_id: str) -> None:
        """One of the thread's verifications: how it goes; once done, its report."""
        self.owned_thread(thread_id)
        try:
            verification = self.service.verifications.get(thread_id, verification_id)
        except ConfigError as exc:
            raise self.refuse(exc, 404) from None
        self.answer(verification)


class StepCellHandler(AuditHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str, call_id: str) -> None:
        """The runnable cell of one SQL or Python step: ``{tool, call_id, source, setup}``;
        ``setup`` opens the thread's source with the runtime helper, as exported notebooks do."""
        thread = self.owned_thread(thread_id)
        events = await asyncio.to_thread(self.service.workspace.store.events, thread_id)
        call = next((e for e in events if isinstance(e, ToolCallStarted) and e.call_id == call_id), None)
        if call is None:
            raise self.refuse(ConfigError(f"unknown step {call_id!r}", reason="step_not_found",
                                          hint="name a tool call of this thread (its call_id)"), 404)
        if call.tool not in STEP_TOOLS:
            raise self.refuse(ConfigError(f"{call.tool} steps are not notebook cells", reason="not_a_cell",
                                          hint=f"only {' and '.join(STEP_TOOLS)} steps are"))
        self.reply({
            "tool": call.tool,
            "call_id": call_id,
            "name": call.arguments.get("name"),
            "source": step_source(call.tool, call.arguments),
            "setup": connect_source(masked(thread.source or "")),
        })


class NotebookHandler(AuditHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's audit notebook (404 before its first turn); a source URL's password
        is masked in it, as in an export."""
        thread = self.owned_thread(thread_id)
        path = self.service.workspace.notebook_path(thread_id)
        if not path.exists():
            raise self.refuse(ConfigError("the thread has no notebook yet", reason="notebook_not_found",
                                          hint="it is written at the end of the thread's first turn"), 409)
        spec = thread.source or ""
        if masked(spec) == spec:
            body: bytes | str = await asyncio.to_thread(path.read_bytes)
        else:
            body = notebook_json(await asyncio.to_thread(self.exported, thread, path.name))
        self.finish(body, set_content_type="application/x-ipynb+json")
