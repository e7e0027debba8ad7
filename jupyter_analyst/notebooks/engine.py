"""The papermill engine ``analyst``: any notebook, executed in the sandboxed kernel.

    papermill in.ipynb out.ipynb --engine analyst -p source data.duckdb

It is papermill's own nbclient engine with one change: the kernel is the sandboxed
``jupyter-analyst`` one (bubblewrap, no network, the system read-only), started in
papermill's working folder (``--cwd``), which is the only place it may write. Files that
the notebook's parameters name (a DuckDB file, a CSV folder) are mounted read-only so the
notebook can read its data and nothing else of the machine.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from ..errors import KernelError
from ..kernel import SandboxPolicy
from ..kernel.kernelspec import SANDBOX_KERNEL
from ..kernel.launcher import LocalKernelLauncher
from ..kernel.provisioner import SETTINGS_ENV, SandboxSettings
from ..kernel.session import kernel_environment
from .trail import parameter_values


def parameter_paths(nb: NotebookNode) -> list[Path]:
    """Existing files and folders named by the notebook's parameters (defaults and overrides)."""
    values: list[Any] = list(((nb.metadata.get("papermill") or {}).get("parameters") or {}).values())
    values += parameter_values(nb, ("parameters", "injected-parameters")).values()
    paths = []
    for value in values:
        if isinstance(value, str) and value and "\n" not in value and len(value) < 4096:
            path = Path(value).expanduser()
            if path.exists():
                paths.append(path.resolve())
    return list(dict.fromkeys(paths))


def _launch(workdir: Path, readable: list[Path], policy: SandboxPolicy, timeout: float) -> tuple[Any, LocalKernelLauncher]:
    env = kernel_environment()
    env[SETTINGS_ENV] = SandboxSettings(policy=policy, readable=[str(p) for p in readable]).model_dump_json()
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
            **kwargs: Any,
        ) -> Any:
            # papermill has already changed into --cwd: that folder is the kernel's to write in.
            workdir = Path.cwd()
            manager, launcher = _launch(workdir, parameter_paths(nb_man.nb), cls.policy, float(start_timeout))
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
