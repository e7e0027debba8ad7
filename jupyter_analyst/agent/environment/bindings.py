"""What each name in a thread's kernel holds, told by the step that put it there.

A Python step reads names that earlier steps bound: a dataset a query fetched into a
name, a variable an earlier Python step assigned. The step's logical key includes, for
every name it reads, that name's **binding** when it runs: the dataset's fingerprint
(``sha256:...``) or the key of the Python step that assigned it (``step:...``). Keys thus
chain back to the data: a chart step is not reused when the step that made its input
changed, and an identical history gives identical keys, so "continue" still reuses all.

Two maps are kept, because a reused step is not executed:

- the *logical* bindings follow the steps in the order the model asks for them, executed
  or reused, exactly as a notebook of those steps would run;
- the *kernel* bindings say what the running kernel really holds.

Before a step executes, the names it reads are aligned: a dataset is loaded again, a
Python step's code is run again after its own recorded inputs are aligned (see
rehydrate.py). The step then sees what its key says, and the exported notebook (the steps
in order) reproduces it.

:class:`NameLedger` keeps the logical map of one thread, read from its store and written
back as steps run or are reused.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Mapping

from ...artifacts import ArtifactStore, StepRecord
from ...step_kinds import is_code_step, is_query_step, step_kind
from ..dataflow import KERNEL_NAMES, assigned_names, free_names, rebound_names

#: A dataset fingerprint (``sha256:...``) or a Python step key (``step:...``).
Binding = str


#: Names that read the kernel's whole namespace or its history: what code using them takes
#: from earlier steps cannot be told from its names.
NAMESPACE_READERS = frozenset({
    "globals", "locals", "vars", "dir", "eval", "exec", "__import__", "__builtins__", "get_ipython",
    "In", "Out", "_", "__", "___", "_i", "_ii", "_iii", "_ih", "_oh", "_dh",
})
_HISTORY = re.compile(r"_i?\d+")
#: Names every kernel has without any step: Python's builtins and the set-up cell's.
_ALWAYS_THERE = frozenset(dir(builtins)) | KERNEL_NAMES


def is_dataset(binding: Binding) -> bool:
    """Whether a binding is a dataset's fingerprint (else it is a Python step's key)."""
    return binding.startswith("sha256:")


def inputs_of(code: str, bindings: Mapping[str, Binding]) -> dict[str, Binding]:
    """The bindings of the names ``code`` takes from earlier steps, by name.

    >>> inputs_of("chart = revenue.plot(); print(total)", {"revenue": "sha256:aa", "total": "step:1", "x": "step:2"})
    {'revenue': 'sha256:aa', 'total': 'step:1'}
    >>> inputs_of("import matplotlib.pyplot as plt\\nrevenue = other.copy()", {"revenue": "sha256:aa", "plt": "step:1"})
    {}
    """
    free = free_names(code)
    return {name: bindings[name] for name in sorted(free) if name in bindings}


def python_bindings(code: str, key: Binding) -> dict[str, Binding]:
    """The names ``code`` assigns or changes in place, each now holding what step ``key`` made.

    >>> sorted(python_bindings("x, y = 1, 2\\nrevenue['share'] = 0.5", "step:2").items())
    [('revenue', 'step:2'), ('x', 'step:2'), ('y', 'step:2')]
    """
    return dict.fromkeys(rebound_names(code), key)


def replayed(steps: Iterable[StepRecord], fingerprints: Mapping[str, str]) -> dict[str, Binding]:
    """The bindings after ``steps`` ran in order (``fingerprints``: artifact id -> fingerprint).

    This is the logical state a thread's history leaves: the next turn starts from it.
    """
    bindings: dict[str, Binding] = {}
    for step in steps:
        if step.status != "ok":
            continue
        kind = step_kind(step.tool)
        if kind is None:
            continue
        if kind.is_query:
            if step.artifact_ids:
                bindings[step.arguments[kind.dataset_argument]] = fingerprints[step.artifact_ids[0]]
        else:
            bindings.update(python_bindings(step.arguments[kind.payload], step.step_key))
    return bindings


def unknown_reads(code: str, known: Iterable[str]) -> str | None:
    """Why what ``code`` takes from earlier steps cannot be told from it, or ``None`` when it can.

    ``known`` are the names earlier steps bound. It cannot be told when the code is not
    plain Python (IPython magics, shell escapes), reads the namespace or the history
    dynamically (``globals()``, ``exec``, ``Out``), or reads a name that no step bound and
    the kernel does not define (a star import's, a name set through ``globals()``).

    >>> unknown_reads("print(total + len(revenue))", {"total", "revenue"}) is None
    True
    >>> unknown_reads("print(globals()['total'])", {"total"})
    'it reads the namespace through globals'
    >>> unknown_reads("print(sqrt(2))", set())
    'it reads sqrt, which no step bound'
    """
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return "it is not plain Python"
    free = free_names(code)
    dynamic = sorted(n for n in free if n in NAMESPACE_READERS or _HISTORY.fullmatch(n))
    if dynamic:
        return f"it reads the namespace through {', '.join(dynamic)}"
    unbound = sorted(free - set(known) - _ALWAYS_THERE)
    if unbound:
        return f"it reads {', '.join(unbound)}, which no step bound"
    return None


class NameLedger:
    """What the steps of one thread say each name holds, and the names they defined.

    Read from the thread's store on first use (the truth, whoever wrote it last) and kept
    up to date as the turn's steps run or are reused.
    """

    def __init__(self, thread_id: str, artifacts: ArtifactStore) -> None:
        self.thread_id = thread_id
        self.artifacts = artifacts
        #: What the steps asked for so far say each name holds (loaded from the store).
        self._bindings: dict[str, Binding] | None = None
        self._python_names: set[str] | None = None
        #: Names that steps which could not run (no kernel) would have defined -> their call id.
        self.not_run: dict[str, str] = {}

    def bindings(self) -> dict[str, Binding]:
        """What each name holds after the thread's steps, executed or reused, in order."""
        if self._bindings is None:
            stored = self.artifacts.bindings(self.thread_id)
            if not stored:  # a thread recorded before bindings were: its ledger tells
                steps = self.artifacts.steps(self.thread_id)
                ids = {a for s in steps if is_query_step(s.tool) for a in s.artifact_ids}
                stored = replayed(steps, {a: self.artifacts.get(a).fingerprint for a in ids})
            self._bindings = stored
        return self._bindings

    def bind(self, updates: Mapping[str, Binding]) -> None:
        """``updates``' names hold their bindings now (kept, and written to the store)."""
        self.bindings().update(updates)
        self.artifacts.bind(self.thread_id, updates)

    def dataset_ids(self) -> dict[str, str]:
        """The thread's datasets: name -> artifact id (the latest fetch into a name wins)."""
        out: dict[str, str] = {}
        for step in self.artifacts.steps(self.thread_id):
            kind = step_kind(step.tool)
            if kind is not None and kind.is_query and step.status == "ok" and step.artifact_ids:
                out[step.arguments[kind.dataset_argument]] = step.artifact_ids[0]
        return out

    def python_steps(self) -> list[StepRecord]:
        """The thread's successful Python steps, in execution order."""
        return [s for s in self.artifacts.steps(self.thread_id) if is_code_step(s.tool) and s.status == "ok"]

    def python_names(self) -> set[str]:
        """Every name the thread's Python steps have defined in the kernel so far."""
        if self._python_names is None:
            self._python_names = set()
            for step in self.python_steps():
                self._python_names |= assigned_names(step.arguments["code"])
        return self._python_names

    def python_ran(self, code: str) -> None:
        """Remember the names a step that ran (even one that failed midway) may have defined."""
        names = assigned_names(code)
        self.python_names().update(names)
        for name in names:
            self.not_run.pop(name, None)

    def python_not_run(self, code: str, call_id: str) -> None:
        """Remember that a step could not run at all, so a later reader of its names is told why."""
        for name in assigned_names(code) - self.python_names():
            self.not_run[name] = call_id
