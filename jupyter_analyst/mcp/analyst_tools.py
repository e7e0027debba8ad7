"""The analyst's tools as a client agent calls them: each one a step of a thread
(:func:`~jupyter_analyst.turns.run_tool_step`), or a whole turn of this product's own agent
(``ask``), or a look at the store. Independent of the MCP SDK: the server (server.py) and
the tools inside Jupyter's MCP server (jupyter_tools.py) both call :class:`AnalystTools`.

A new thread opens one of the sources the user configured, chosen by name (:mod:`.sources`);
a thread stays on its source, and every result says which thread and source it ran on. No
result carries a path of this machine: a source is said by its name, a notebook by its URI.

Every result is a :class:`Reply`: a compact text for the client's model and the same facts
as structured content. Artifacts are named by their resource URI
(``analyst://artifact/<fingerprint>``); their bytes are not put in a result, but for a
chart's PNG within :data:`IMAGE_CAP` (a client's model sees it as an image).

A client works in its own threads: those it made or named (its :class:`Scope`), of the
server's user. An artifact is readable when a thread of the server's user holds it (those of
the scope are looked in first): a new session reads what an earlier one made, never what
another user's thread holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._text import how_many
from ..errors import AnalystError, ConfigError
from .queueing import WAIT_S, ThreadQueues, Waiting, runs_beside
from .source_choice import SourceList

if TYPE_CHECKING:
    from ..agent import EventSink
    from ..artifacts import Artifact
    from ..turns import AnalystConfig, LiveThreads, ModelSettings, ToolStep

ARTIFACT_SCHEME = "analyst://artifact/"
NOTEBOOK_SCHEME = "analyst://notebook/"
#: A result's sample rows and text are cut here: the client reads the rest as a resource.
TEXT_CAP = 4_000
#: A chart's PNG goes into a result as an image up to this size; a larger one is read as a resource.
IMAGE_CAP = 400_000
#: Images in one result at most (the rest are resource links).
MAX_IMAGES = 4
#: Artifacts that ``resources/list`` lists at most, the most recent threads' first.
LISTED = 50


#: What a client does about an error, in the client's words: the store's and the turn's own
#: hints name the command line's flags and commands, which a client agent does not have.
MCP_HINTS = {
    "thread_not_found": "threads lists your threads; leave out `thread` to start a new one",
    "no_source": "the server was started without a source (--db or --source): pass the `thread` of a thread "
                 "that has one",
    "turn_in_progress": "the thread's earlier steps (or a turn in Jupyter's panel) still run: wait for them to "
                        "end, then call again",
    "no_model": "the server was started without a model: start it with OPENAI_API_KEY (and OPENAI_BASE_URL) "
                "set, or with --base-url",
}


def error_reply(exc: AnalystError) -> Reply:
    """A call refused as a whole (nothing ran), its reason and what to do, in MCP words. A
    refusal that names the client's thread (its context's ``thread`` and ``source``) is headed
    by them, as that thread's results are.

    >>> error_reply(ConfigError("unknown thread 'thr_x'", reason="thread_not_found")).text
    "unknown thread 'thr_x' (hint: threads lists your threads; leave out `thread` to start a new one)"
    >>> error_reply(ConfigError("it is on sales", reason="source_of_thread", thread="thr_1", source="sales")).text
    '[thread thr_1, source sales] it is on sales'
    """
    error = {**exc.to_dict(), "hint": MCP_HINTS.get(exc.reason, exc.hint)}
    if error["hint"] is None:
        del error["hint"]
    hint = f" (hint: {error['hint']})" if "hint" in error else ""
    thread, source = exc.context.get("thread"), exc.context.get("source")
    if isinstance(thread, str):
        return Reply(f"{where(thread, source)} {exc.message}{hint}", {"thread": thread, "source": source,
                                                                      "error": error}, error=True)
    return Reply(exc.message + hint, {"thread": None, "error": error}, error=True)


def continuing(thread: str, *, new: bool) -> str:
    """How the client goes on in ``thread``: said in every result that ran in one.

    >>> continuing("thr_1", new=False)
    '(in thread thr_1: pass "thread": "thr_1" to continue in it)'
    """
    if new:
        return (f'(a new thread {thread}: pass "thread": "{thread}" to continue in it; '
                "without `thread` each call starts another thread)")
    return f'(in thread {thread}: pass "thread": "{thread}" to continue in it)'


def where(thread: str, source: str | None) -> str:
    """The head of a result: the thread it ran in, and on which source.

    >>> where("thr_1", "sales"), where("thr_1", None)
    ('[thread thr_1, source sales]', '[thread thr_1]')
    """
    return f"[thread {thread}, source {source}]" if source else f"[thread {thread}]"


def artifact_uri(artifact: Artifact) -> str:
    return ARTIFACT_SCHEME + artifact.fingerprint


@dataclass
class Reply:
    """One tool's answer: ``text`` for the client's model, ``data`` as structured content."""

    text: str
    data: dict[str, Any]
    error: bool = False
    images: list[tuple[bytes, str]] = field(default_factory=list)
    """Charts the step made, as (bytes, MIME type): within :data:`IMAGE_CAP`, at most :data:`MAX_IMAGES`."""


@dataclass
class Scope:
    """The threads one client made or named: what its resource reads may reach."""

    threads: set[str] = field(default_factory=set)


def _artifact_view(artifact: Artifact) -> dict[str, Any]:
    return {"id": artifact.artifact_id, "name": artifact.name, "type": artifact.type, "mime": artifact.mime,
            "size": artifact.size, "fingerprint": artifact.fingerprint, "uri": artifact_uri(artifact)}


def _cut(text: str) -> str:
    """``text``, cut at :data:`TEXT_CAP` characters with how much was left out.

    >>> _cut("abc")
    'abc'
    >>> _cut("x" * 4_010)[-23:]
    'x… (10 more characters)'
    """
    return text if len(text) <= TEXT_CAP else text[:TEXT_CAP] + f"… ({len(text) - TEXT_CAP} more characters)"


class AnalystTools:
    """The engine behind the MCP tools: one user's, on one workspace, with its kernels kept
    between steps (``live``), and the sources a client may choose among.

    Args:
        config: the engine's settings (workspace, store, sandbox, limits).
        sources: the sources a client may choose by name for a new thread (name to spec, the
            first the default; never any other: a client names, it does not open paths).
        model: the model that ``ask`` runs a turn with (``None``: ``ask`` says none is set).
        user: whose threads these are.
        host_turn: the host's own running turn on a thread, if any (Jupyter's panel): a step
            waits for it as for the thread's steps before it (:mod:`.queueing`).
    """

    def __init__(self, config: AnalystConfig, *, sources: Mapping[str, str] | None = None,
                 model: ModelSettings | None = None, user: str = "local", live: LiveThreads | None = None,
                 wait_s: float = WAIT_S, host_turn: Waiting | None = None, notebooks: Path | None = None) -> None:
        from ..turns import LiveThreads
        from .notebook_desk import desk_of

        self.config, self.model, self.user = config, model, user
        self.sources = SourceList(sources)
        self.live = live if live is not None else LiveThreads()
        self.queues = ThreadQueues(wait_s=wait_s, host_turn=host_turn)
        self._root = str(Path(config.workspace).expanduser().resolve())
        self._notebook = re.compile(re.escape(self._root) + r"/threads/(thr_[A-Za-z0-9]+)/notebook\.ipynb")
        #: The folder whose notebooks ``ask`` may work beside (``None``: none; see notebook_desk.py).
        self.desk = desk_of(notebooks)

    async def close(self) -> None:
        await self.live.close()

    def refused(self, exc: AnalystError) -> Reply:
        """A call refused as a whole (:func:`error_reply`), as a client is sent it."""
        return self._shown(error_reply(exc))

    # ------------------------------------------------------------------ steps

    async def step(self, tool: str, arguments: dict[str, Any], *, thread: str | None, scope: Scope,
                   on_event: EventSink | None = None, rerun: bool = False, source: str | None = None) -> Reply:
        """One call of ``tool`` as a step of ``thread`` (a new thread when ``None``).

        A call refused before it ran (its arguments, a guard), or a look-up that failed, on a
        new thread leaves no thread behind: a client looping on a bad call does not fill the store.

        Steps of one thread run one after another, in the order they came (:mod:`.queueing`);
        a look-up runs at once, beside them, on an environment of its own (no kernel).
        """
        from ..turns import ToolStepRequest, run_tool_step

        spec = await self._source_for(thread, source)
        beside = runs_beside(tool)
        request = ToolStepRequest(tool=tool, arguments={k: v for k, v in arguments.items() if v is not None},
                                  thread_id=thread, source=spec, user=self.user, rerun=rerun, beside=beside)
        if beside:
            step = await run_tool_step(request, config=self.config, on_event=on_event)
        else:
            async with self._queued(thread):
                step = await run_tool_step(request, config=self.config, on_event=on_event, live=self.live)
        if thread is None and _left_nothing(step, looked=beside):
            await self._forget(step.thread_id)
            return self._shown(_step_reply(tool, step, thread=None, source=self.sources.name_of(spec)))
        scope.threads.add(step.thread_id)
        ran_on = spec if thread is None else await self._thread_source(step.thread_id)
        reply = _step_reply(tool, step, thread=step.thread_id, new=thread is None, source=self.sources.name_of(ran_on))
        reply.images = await asyncio.to_thread(self._images, step.artifacts)
        return self._shown(reply)

    async def ask(self, prompt: str, *, thread: str | None, scope: Scope, on_event: EventSink | None = None,
                  source: str | None = None, notebook: str | None = None) -> Reply:
        """A whole turn of this product's own agent on ``thread`` (a new one on ``source`` when
        ``None``), beside ``notebook`` (of the server's notebook folder), for which it may propose cells."""
        from ..turns import TurnRequest, run_turn

        spec = await self._source_for(thread, source)  # a source the client may not name: said first
        if self.model is None:
            raise ConfigError("no model is configured for ask", reason="no_model",
                              hint="set OPENAI_API_KEY (and OPENAI_BASE_URL), or pass --base-url")
        attached = await asyncio.to_thread(self._desk().attach, notebook) if notebook else None
        request = TurnRequest(prompt=prompt, thread_id=thread, source=spec, user=self.user, attached=attached)
        before = {a.artifact_id for a in await asyncio.to_thread(self._artifacts, thread)} if thread else set()
        async with self._queued(thread):
            summary = await run_turn(request, config=self.config, model=self.model, on_event=on_event,
                                     live=self.live)
        scope.threads.add(summary.thread_id)
        name = self.sources.name_of(spec if thread is None else await self._thread_source(summary.thread_id))
        made = [a for a in await asyncio.to_thread(self._artifacts, summary.thread_id) if a.artifact_id not in before]
        views = [_artifact_view(a) for a in made]
        data = {"thread": summary.thread_id, "source": name, "turn": summary.turn_id, "status": summary.status,
                "answer": summary.answer, "artifacts": views,
                "notebook": NOTEBOOK_SCHEME + summary.thread_id if summary.notebook else None,
                "error": summary.error,
                "citations": [c.model_dump(mode="json") for c in summary.citations],
                "unsupported": [u.model_dump(mode="json") for u in summary.unsupported]}
        # A turn that failed says why (an unreachable model, a refused key), not a bare status; one
        # stopped by a budget says which, what it spent and when it resets.
        why = ((summary.error or {}).get("message") if summary.status == "error"
               else summary.message if summary.status == "budget_exhausted" else None)
        text = f"{where(summary.thread_id, name)} {summary.status}" + (f": {why}" if why else "")
        text += f"\n{_cut(summary.answer or '')}" if summary.answer else ""
        if summary.unsupported:
            text += "\nno result holds these numbers of the answer: " + ", ".join(u.text for u in summary.unsupported)
        text += "".join(f"\n- {v['name']} ({v['type']}): {v['uri']}" for v in views)
        if notebook and self.desk is not None:
            from .notebook_desk import proposals_text

            desk = self.desk
            diffs = await asyncio.to_thread(self._with_workspace,
                                            lambda ws: desk.review(ws, summary.thread_id, summary.turn_id))
            data["proposals"] = [d.model_dump(mode="json") for d in diffs]
            text += ("\n" + proposals_text(diffs, summary.thread_id)) if diffs else ""
        text += "\n" + continuing(summary.thread_id, new=thread is None)
        # The turn's charts come back as images, as a step's do.
        return self._shown(Reply(text, data, error=summary.status == "error",
                                 images=await asyncio.to_thread(self._images, made)))

    # ------------------------------------------------------------------ proposed cells

    def _desk(self) -> Any:
        if self.desk is None:
            from .notebook_desk import NO_FOLDER_HINT

            raise ConfigError("this server has no notebook folder, so a turn works beside no notebook",
                              reason="no_notebook_folder", hint=NO_FOLDER_HINT)
        return self.desk

    async def decide(self, decision: str, *, thread: str, proposal: str, cells: list[str] | None,
                     scope: Scope) -> Reply:
        """Accept or reject changes the model proposed (``cells``: by id; ``None``: all pending)."""
        desk = self._desk()

        def work(ws: Any) -> Any:
            ws.store.get_thread(thread, user=self.user)
            return desk.decide(ws, decision, thread, proposal, cells, self.user)

        async with self._queued(thread):
            diffs = await asyncio.to_thread(self._with_workspace, work)
        scope.threads.add(thread)
        lines = [f"{c.status:9} {c.change_id}: {c.op}: {c.reason}" for d in diffs for c in d.changes]
        return self._shown(Reply(f"{where(thread, None)} {decision}: proposal {proposal}\n" + "\n".join(lines),
                                 {"thread": thread, "proposals": [d.model_dump(mode="json") for d in diffs]}))

    async def revert(self, *, thread: str, turn: str, scope: Scope) -> Reply:
        """Undo a turn's accepted changes: the notebook restored from its checkpoint."""
        desk = self._desk()

        def work(ws: Any) -> Any:
            ws.store.get_thread(thread, user=self.user)
            return desk.revert(ws, thread, turn, self.user)

        async with self._queued(thread):
            result = await asyncio.to_thread(self._with_workspace, work)
        scope.threads.add(thread)
        text = f"{where(thread, None)} reverted {len(result['reverted'])} change(s) of turn {turn}: {result['notebook']}"
        return self._shown(Reply(text + " is as it was before them", {"thread": thread, **result}))

    # ------------------------------------------------------------------ look-ups

    async def list_sources(self, *, scope: Scope) -> Reply:
        """The sources a client may name: each one's name, kind, tables and row counts (the
        default first); and this user's threads, each with its source's name."""
        described = await asyncio.to_thread(self.sources.describe)
        threads = await asyncio.to_thread(self._with_store, lambda s: s.list_threads(user=self.user))
        data = {"default": self.sources.default, "sources": described,
                "threads": [{"thread": t.thread_id, "source": self.sources.name_of(t.source), "title": t.title}
                            for t in threads]}
        if not described:
            text = "no source configured: pass the `thread` of a thread that has one"
        else:
            text = "sources (pass one's name as `source` to start a new thread on it):"
            for view in described:
                tables = ", ".join(f"{t['name']} ({how_many(t['rows'], 'row')})" if t["rows"] is not None else t["name"]
                                   for t in view["tables"])
                more = f" and {view['more_tables']} more" if view.get("more_tables") else ""
                said = view.get("error") or f"{view['kind']}: {tables or 'no tables'}{more}"
                text += f"\n- {view['name']}{' (default)' if view['default'] else ''}, {said}"
        text += f"\nyou have {how_many(len(threads), 'thread')} (the threads tool lists them)"
        return self._shown(Reply(text, data))

    async def threads(self, *, scope: Scope) -> Reply:
        """This user's threads, the most recently active first."""
        found = await asyncio.to_thread(self._with_store, lambda s: s.list_threads(user=self.user))
        views = [{"thread": t.thread_id, "title": t.title, "source": self.sources.name_of(t.source),
                  "last_activity": t.last_activity, "running": bool(t.running)} for t in found]
        text = how_many(len(views), "thread") + "".join(
            f"\n- {v['thread']}: {v['title'] or '(untitled)'} (on {v['source']}, last {v['last_activity']})"
            for v in views[:50])
        return self._shown(Reply(text, {"threads": views}))

    async def restart_kernel(self, *, thread: str, scope: Scope) -> Reply:
        """Stop the thread's kept kernel, after the thread's running steps: its next Python step
        starts a fresh one, where the thread's datasets and values are restored as steps read them."""
        await asyncio.to_thread(self._with_store, lambda s: s.get_thread(thread, user=self.user))
        scope.threads.add(thread)
        async with self._queued(thread):
            stopped = await self.live.forget(thread)
        what = "its kernel was stopped" if stopped else "it had no kernel running"
        return Reply(f"[thread {thread}] {what}: the next run_python starts a fresh kernel\n"
                     + continuing(thread, new=False), {"thread": thread, "stopped": stopped})

    async def read_notebook(self, thread: str, *, scope: Scope) -> bytes:
        """The thread's audit notebook (.ipynb), when it is this user's.

        Raises:
            ConfigError: ``thread_not_found`` for another user's or an unknown thread;
                ``no_notebook`` before its first turn ended.
        """
        def read(workspace: Any) -> bytes:
            workspace.store.get_thread(thread, user=self.user)
            path = workspace.notebook_path(thread)
            if not path.is_file():
                raise ConfigError(f"thread {thread} has no audit notebook yet", reason="no_notebook")
            return path.read_bytes()

        return await asyncio.to_thread(self._with_workspace, read)

    async def list_artifacts(self, *, thread: str, scope: Scope) -> Reply:
        """The thread's datasets, charts and files (a look-up: it starts no thread, so it needs one)."""
        await asyncio.to_thread(self._with_store, lambda s: s.get_thread(thread, user=self.user))
        scope.threads.add(thread)
        views = [_artifact_view(a) for a in await asyncio.to_thread(self._artifacts, thread)]
        text = f"[thread {thread}] {how_many(len(views), 'artifact')}" + "".join(
            f"\n- {v['name']} ({v['type']}, {how_many(v['size'], 'byte')}): {v['uri']}" for v in views)
        return Reply(text, {"thread": thread, "artifacts": views})

    async def thread_state(self, *, thread: str, scope: Scope) -> Reply:
        """The thread's agent state (entities, hypotheses, open items) and its turns."""
        from ..agent import ThreadMemory

        def read(store: Any) -> dict[str, Any]:
            record = store.get_thread(thread, user=self.user)
            state = ThreadMemory(store, thread).state()
            return {"thread": thread, "source": self.sources.name_of(record.source), "title": record.title,
                    "turns": [{"turn": t.turn_id, "prompt": t.prompt, "status": t.status} for t in store.turns(thread)],
                    "state": json.loads(state.model_dump_json())}

        data = await asyncio.to_thread(self._with_store, read)
        scope.threads.add(thread)
        lines = [f"{where(thread, data['source'])} {how_many(len(data['turns']), 'turn')}"]
        lines += [f"- {t['status']}: {t['prompt'][:100]}" for t in data["turns"][-10:]]
        return self._shown(Reply("\n".join(lines), data))

    async def verify(self, *, thread: str, scope: Scope) -> Reply:
        """Re-execute the thread's audit notebook and compare its fingerprints, in a process
        of its own: cancelling the call stops it (:mod:`.verifying`)."""
        from ..notebooks import format_report
        from .verifying import verify_apart

        # The workspace says which source and notebook the thread has (as `verify --thread`).
        record, notebook = await asyncio.to_thread(self._with_workspace, lambda ws: (
            ws.store.get_thread(thread, user=self.user), ws.notebook_path(thread)))
        scope.threads.add(thread)
        report = await verify_apart(notebook, record.source)
        name = self.sources.name_of(record.source)
        data = {**report.to_json(), "thread": thread, "source": name, "notebook": NOTEBOOK_SCHEME + thread}
        text = f"{where(thread, name)} " + _cut(format_report(report))
        return self._shown(Reply(text, data, error=report.verdict not in ("verified", "nothing_to_verify")))

    # ------------------------------------------------------------------ resources

    async def artifact(self, fingerprint: str, *, scope: Scope) -> Reply:
        """Where an artifact is (its resource URI), with its type, MIME type and size."""
        found = await asyncio.to_thread(self._with_workspace, lambda ws: self._find(ws, fingerprint, scope))
        view = _artifact_view(found)
        return Reply(f"{view['uri']} ({view['mime']}, {how_many(view['size'], 'byte')}): read it as a resource", view)

    async def read_artifact(self, fingerprint: str, *, scope: Scope) -> tuple[bytes, str]:
        """An artifact's bytes (checked against its fingerprint) and MIME type, when a thread of
        ``scope`` holds it.

        Raises:
            ConfigError: ``artifact_not_found`` when no thread of the scope holds it.
        """
        def read(workspace: Any) -> tuple[bytes, str]:
            found = self._find(workspace, fingerprint, scope)
            return workspace.artifacts.read_bytes(found.artifact_id), found.mime

        return await asyncio.to_thread(self._with_workspace, read)

    async def recent_artifacts(self, *, limit: int = LISTED) -> list[dict[str, Any]]:
        """The artifacts of this user's threads, the most recently active threads' first, at most ``limit``."""
        def read(workspace: Any) -> list[dict[str, Any]]:
            views: list[dict[str, Any]] = []
            for thread in workspace.store.list_threads(user=self.user):
                for artifact in reversed(workspace.artifacts.list(thread.thread_id)):
                    views.append({**_artifact_view(artifact), "thread": thread.thread_id})
                    if len(views) >= limit:
                        return views
            return views

        return await asyncio.to_thread(self._with_workspace, read)

    def _find(self, workspace: Any, fingerprint: str, scope: Scope) -> Artifact:
        """The artifact of that fingerprint in a thread of this user's: those of ``scope`` first
        (checked still this user's), then the user's others (a new session's reads)."""
        ordered = [*sorted(scope.threads)]
        ordered += [t.thread_id for t in workspace.store.list_threads(user=self.user)
                    if t.thread_id not in scope.threads]
        for thread in ordered:
            workspace.store.get_thread(thread, user=self.user)
            for artifact in workspace.artifacts.list(thread):
                if artifact.fingerprint == fingerprint:
                    return artifact
        raise ConfigError("no artifact of your threads has that fingerprint", reason="artifact_not_found")

    def _images(self, artifacts: list[Artifact]) -> list[tuple[bytes, str]]:
        """The PNG charts among ``artifacts`` within the caps, as (bytes, MIME type)."""
        charts = [a for a in artifacts if a.mime.split(";")[0].strip() == "image/png" and a.size <= IMAGE_CAP]
        if not charts:
            return []
        return self._with_workspace(lambda workspace: [
            (workspace.artifacts.read_bytes(a.artifact_id), "image/png") for a in charts[:MAX_IMAGES]])

    # ------------------------------------------------------------------ internals

    async def _source_for(self, thread: str | None, name: str | None) -> str | None:
        """The source a step opens: none for a thread (it keeps its own), else the configured
        one named, else the default.

        Raises:
            ConfigError: ``unknown_source`` for a name not configured (a path, a URL), checked
                first; ``source_of_thread`` when a thread is named too, on another source.
        """
        if not name:  # left out (some clients send every optional parameter, empty)
            return None if thread else self.sources.spec_of(None)
        spec = self.sources.spec_of(name)
        own = self.sources.name_of(await self._thread_source(thread)) if thread else None
        if thread and own != name:
            raise ConfigError(f"thread {thread} is on source {own}, not {name}: a thread keeps the source it was "
                              "made on", reason="source_of_thread", thread=thread, source=own,
                              hint=f"leave out `source` to go on in the thread on {own}, or `thread` to start one "
                                   f"on {name}")
        return None if thread else spec

    async def _thread_source(self, thread: str) -> str | None:
        """The spec the user's ``thread`` runs on (``thread_not_found`` for anyone else's)."""
        record = await asyncio.to_thread(self._with_store, lambda s: s.get_thread(thread, user=self.user))
        return record.source

    def _shown(self, reply: Reply) -> Reply:
        """``reply`` as a client is sent it: a configured source's path or URL, quoted by an
        engine's message, said by the source's name (the result's own fields already are); a
        thread's audit notebook by its URI, and the workspace's folder by no path."""
        def said(text: str) -> str:
            text = self.sources.redact(text)
            if self._root in text:
                text = self._notebook.sub(lambda m: NOTEBOOK_SCHEME + m.group(1), text)
                text = text.replace(self._root, "<workspace>")
            return text

        reply.text = said(reply.text)
        reply.data = _redacted(reply.data, said)
        return reply

    def _queued(self, thread: str | None) -> contextlib.AbstractAsyncContextManager[None]:
        """The thread held for one step, after those before it (a new thread: nothing to wait for)."""
        return self.queues.turn(thread) if thread is not None else contextlib.nullcontext()

    async def _forget(self, thread: str) -> None:
        """Delete a thread this server just made (its kernel first, if one was kept)."""
        await self.live.forget(thread)
        await asyncio.to_thread(self._with_workspace, lambda workspace: workspace.delete_thread(thread))

    def _with_workspace(self, work: Callable[[Any], Any]) -> Any:
        """``work(workspace)`` on a workspace opened for it (blocking: call off the loop)."""
        from ..workspace import Workspace

        workspace = Workspace.of(self.config)
        try:
            return work(workspace)
        finally:
            workspace.close()

    def _with_store(self, work: Callable[[Any], Any]) -> Any:
        return self._with_workspace(lambda workspace: work(workspace.store))

    def _artifacts(self, thread: str) -> list[Artifact]:
        return self._with_workspace(lambda workspace: workspace.artifacts.list(thread))


def _left_nothing(step: ToolStep, *, looked: bool) -> bool:
    """The failed call left nothing a thread should keep: it was refused before it ran (its
    arguments, or a guard: nothing executed or reused), or it was a look-up (which reads only
    the schema: a table that is not there, a name left empty)."""
    calls = step.summary.tool_calls
    refused = calls.get("blocked", 0) > 0 and not calls.get("executed") and not step.reused
    return not step.ok and (refused or looked)


def _step_reply(tool: str, step: ToolStep, *, thread: str | None, source: str | None, new: bool = False) -> Reply:
    """A step's result as text and structured content: artifacts by URI, never their bytes;
    ``thread`` the one it ran in (``None``: refused before running, no thread kept) and
    ``source`` the name of its source."""
    views = [_artifact_view(a) for a in step.artifacts]
    result = {k: v for k, v in step.result.items() if k not in ("artifacts",)}
    data = {"thread": thread, "source": source, "tool": tool, "status": step.status, "reused": step.reused,
            "result": result, "artifacts": views}
    if thread is None:
        return Reply(f"{tool} {step.status}: {step.error}\n(nothing ran, and no thread was made)", data, error=True)
    going_on = continuing(thread, new=new)
    if not step.ok:
        return Reply(f"{where(thread, source)} {tool} {step.status}: {step.error}\n{going_on}", data, error=True)
    # The text is the result as the agent's own model is sent it (rows as lists, floats and
    # long values as it shows them, nothing said twice); the structured content is all of it.
    shown = {k: v for k, v in (step.shown or result).items() if k not in ("artifacts", "reused")}
    body = json.dumps(shown, default=str, ensure_ascii=False)
    text = f"{where(thread, source)} {tool} ok" + (" (reused)" if step.reused else "") + "\n" + _cut(body)
    text += "".join(f"\n- {v['name']} ({v['type']}): {v['uri']}" for v in views)
    return Reply(text + "\n" + going_on, data)


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` (JSON-like) with ``redact`` applied to every string in it.

    >>> _redacted({"a": ["x/p", 1, {"b": "p"}]}, lambda s: s.replace("p", "P"))
    {'a': ['x/P', 1, {'b': 'P'}]}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v, redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v, redact) for v in value]
    return value

