"""The papermill engine ``analyst``: any notebook, executed in the sandboxed kernel.

    papermill in.ipynb out.ipynb --engine analyst -p source data.duckdb

It is papermill's own nbclient engine with one change: the kernel is the sandboxed
``jupyter-analyst`` one (bubblewrap, no network, the system read-only), started in
papermill's working folder (``--cwd``), which is the only place it may write. That folder
is the user's: started as root, the kernel (a uid of its own) works in a staging folder
mounted at its path, with the named inputs in it copied in, and what it made is copied
back when it stops; the user's folder and files keep their owner and mode (see
``kernel/sandbox/staging.py``).

The notebook is untrusted input: anyone can hand you one. So what the kernel may read is
never what the notebook names (its ``parameters`` cell, an ``injected-parameters`` cell or
papermill metadata it carries): only what the person running it names. ``verify`` passes
that list itself (``readable=``); under the papermill command, the files and folders named
by the ``-p`` values are mounted read-only, and a value the input notebook already carries
in its own papermill record is not (papermill's record of an earlier run is the notebook's
claim, whoever wrote it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from ..errors import KernelError
from ..kernel import (
    SANDBOX_KERNEL,
    SETTINGS_ENV,
    LocalKernelLauncher,
    SandboxPolicy,
    SandboxSettings,
    kernel_environment,
)
from .trail import HOSTED_ENV, RESULTS_ENV


def named_paths(values: Iterable[Any]) -> list[Path]:
    """The existing files and folders among ``values`` (absolute, in order, once each)."""
    paths = []
    for value in values:
        if isinstance(value, str) and value and "\n" not in value and len(value) < 4096:
            path = Path(value).expanduser()
            if path.exists():
                paths.append(path.resolve())
    return list(dict.fromkeys(paths))


def papermill_parameters(nb: NotebookNode) -> dict[str, Any]:
    """The parameters papermill recorded in ``nb``'s metadata (``-p`` of its last run)."""
    recorded = (nb.metadata.get("papermill") or {}).get("parameters")
    return dict(recorded) if isinstance(recorded, dict) else {}


def user_parameter_paths(nb: NotebookNode, given: NotebookNode) -> list[Path]:
    """The files and folders named by this run's ``-p`` values: ``nb`` is the notebook
    papermill parameterised, ``given`` the input notebook as it was handed over. A value
    ``given`` already records is its own claim, not the user's, and is left out."""
    claimed = papermill_parameters(given)
    chosen = {k: v for k, v in papermill_parameters(nb).items() if k not in claimed or claimed[k] != v}
    return named_paths(chosen.values())


def _launch(
    workdir: Path, readable: Sequence[Path], policy: SandboxPolicy, timeout: float, results: str | None,
    own_workdir: bool, hosted: Path | None = None,
) -> tuple[Any, LocalKernelLauncher]:
    env = kernel_environment()
    # Only the sandbox's allow-list and the policy's own variables reach the kernel.
    extra = {k: v for k, v in policy.extra_env.items() if k not in (RESULTS_ENV, HOSTED_ENV)}
    if results:
        extra[RESULTS_ENV] = results
    if hosted is not None:  # the host's results, read-only beside the other inputs
        extra[HOSTED_ENV] = str(hosted)
        readable = [*readable, hosted]
    policy = policy.model_copy(update={"extra_env": extra})
    settings = SandboxSettings(policy=policy, readable=[str(p) for p in readable], user_workdir=not own_workdir)
    env[SETTINGS_ENV] = settings.model_dump_json()
    launcher = LocalKernelLauncher(ready_timeout=timeout)

    async def start() -> Any:
        manager, client = await launcher.launch(SANDBOX_KERNEL, workdir, env)
        client.stop_channels()  # nbclient connects its own client
        return manager

    try:
        return asyncio.run(start()), launcher
    except Exception as exc:
        raise KernelError(f"the sandboxed kernel could not start: {exc}",
                          hint="run `jupyter analyst doctor` to see which sandbox layers work here") from exc


def _engine_class() -> type:
    """The engine, a subclass of papermill's nbclient engine."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine as base
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args

    class AnalystEngine(base):  # type: ignore[valid-type,misc]
        """papermill's nbclient engine, with the kernel in the jupyter-analyst sandbox."""

        #: The sandbox policy of the kernels this engine starts (the defaults of the CLI).
        policy = SandboxPolicy()

        @classmethod
        def nb_kernel_name(cls, nb: NotebookNode, name: str | None = None) -> str:
            # The kernel is always the sandboxed Python one, whatever the notebook names.
            return SANDBOX_KERNEL

        @classmethod
        def nb_language(cls, nb: NotebookNode, language: str | None = None) -> str:
            return language or "python"

        @classmethod
        def execute_managed_notebook(
            cls,
            nb_man: Any,
            kernel_name: str,
            log_output: bool = False,
            stdout_file: Any = None,
            stderr_file: Any = None,
            start_timeout: float = 60,
            execution_timeout: float | None = None,
            readable: Sequence[Path] | None = None,
            results: str | None = None,
            own_workdir: bool = False,
            hosted: Path | None = None,
            **kwargs: Any,
        ) -> Any:
            """``readable``: what the kernel may read (else the paths the ``-p`` values name);
            ``results``: the kernel's folder where ``analyst.sql`` keeps each result;
            ``own_workdir``: ``--cwd`` is a fresh folder made for the kernel (``verify``'s),
            not the user's, and the kernel works in it directly; ``hosted``: the folder of
            the results the host ran, for a source the kernel cannot reach (``hosted_queries.py``)."""
            # papermill has already changed into --cwd: that folder is the kernel's to write in.
            workdir = Path.cwd()
            if readable is None:
                from papermill.iorw import load_notebook_node

                given = load_notebook_node(kwargs["input_path"]) if kwargs.get("input_path") else nb_man.nb
                readable = user_parameter_paths(nb_man.nb, given)
            manager, launcher = _launch(workdir, readable, cls.policy, float(start_timeout), results, own_workdir,
                                       hosted)
            try:
                kwargs = remove_args(["input_path"], **kwargs)
                safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
                final_kwargs = merge_kwargs(
                    safe_kwargs,
                    timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
                    startup_timeout=start_timeout,
                    kernel_name=SANDBOX_KERNEL,
                    log=logger,
                    log_output=log_output,
                    stdout_file=stdout_file,
                    stderr_file=stderr_file,
                )
                client = PapermillNotebookClient(nb_man, km=manager, **final_kwargs)
                try:
                    return client.execute()
                finally:
                    # nbclient leaves the client of a kernel it does not own connected; its
                    # channels would outlive the kernel and warn when collected.
                    if client.kc is not None:
                        client.kc.stop_channels()
            finally:
                asyncio.run(launcher.stop(manager))

    AnalystEngine.__qualname__ = "AnalystEngine"
    return AnalystEngine


def __getattr__(name: str) -> Any:
    # The class is made on first use, not at import: importing papermill.engines loads its
    # entry points, this module among them, so a module-level subclass would be a circular
    # import whenever this module is imported first.
    if name != "AnalystEngine":
        raise AttributeError(name)
    if "AnalystEngine" not in globals():
        engine = _engine_class()  # may re-enter here through papermill's entry points
        globals().setdefault("AnalystEngine", engine)
    return globals()["AnalystEngine"]
