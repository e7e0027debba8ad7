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
Python step's code is run again after its own recorded inputs are aligned. The step then
sees what its key says, and the exported notebook (the steps in order) reproduces it.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Mapping

from ...artifacts import StepRecord
from ..dataflow import free_names, rebound_names
from ..dataflow import KERNEL_NAMES

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
        if step.tool == "run_sql" and step.artifact_ids:
            bindings[step.arguments["name"]] = fingerprints[step.artifact_ids[0]]
        elif step.tool == "run_python":
            bindings.update(python_bindings(step.arguments["code"], step.step_key))
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
