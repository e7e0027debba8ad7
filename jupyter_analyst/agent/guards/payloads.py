"""Checks of a tool call's payload before anything analyses or runs it.

* Python code: several analyses parse it (on the event loop, so its length is capped) (names it reads, names it binds, its canonical
  form for the step key) and some of them recurse, so how deeply code may nest decides
  whether they succeed. Code is parsed once here, and code nested deeper than
  :data:`MAX_PYTHON_DEPTH` is refused, with margin enough that every later analysis
  succeeds wherever it runs: the same code always gets the same key and bindings.
* Dataset names: a ``run_sql`` name becomes a variable in the kernel (and in the exported
  notebook). A name that is not a plain identifier, or that would shadow a keyword, a
  builtin, a dunder, IPython's own variables or what the kernel's set-up defines, is
  refused with a suggestion.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import unicodedata

from ...errors import InvalidArguments
from ..dataflow import KERNEL_NAMES

#: How deeply a Python step's syntax tree may nest (a ``a + b + ...`` of n terms is n deep).
MAX_PYTHON_DEPTH = 200
#: The longest Python step (characters). Its analyses run on the event loop and take time
#: linear in its length: about a second for this much on a busy machine.
MAX_PYTHON_CHARS = 100_000
#: Names the exported audit notebook's later cells rely on: its SQL cells call ``analyst.sql``.
NOTEBOOK_NAMES = frozenset({"analyst"})
_BUILTINS = frozenset(dir(builtins))
_RESERVED = KERNEL_NAMES | NOTEBOOK_NAMES


def _too_complex(detail: str) -> InvalidArguments:
    return InvalidArguments(
        f"the code is too complex to check: {detail}",
        reason="python_too_complex",
        hint="split long expressions and deep nesting into several statements with intermediate variables",
    )


def check_python_code(code: str) -> None:
    """Refuse code no analysis could handle; code with a plain syntax error passes (the
    kernel reports it as it would to a person).

    >>> check_python_code("total = revenue['amount'].sum()")
    >>> check_python_code("x = " + "-" * 300 + "1")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.InvalidArguments: the code is too complex to check: it nests 303 levels deep, more than 200 (hint: split long expressions and deep nesting into several statements with intermediate variables)

    Raises:
        InvalidArguments: ``python_too_large`` (longer than :data:`MAX_PYTHON_CHARS`),
            ``python_too_complex`` (nested too deeply to parse or to analyse),
            ``invalid_code`` (a NUL character, which Python refuses to read).
    """
    if len(code) > MAX_PYTHON_CHARS:
        raise InvalidArguments(
            f"the code is {len(code):,} characters long; at most {MAX_PYTHON_CHARS:,} are accepted in one step",
            reason="python_too_large", hint="split the work into several steps, or load data instead of inlining it",
        )
    if "\x00" in code:
        raise InvalidArguments(
            f"the code holds a NUL character (at position {code.index(chr(0))}), which Python cannot read",
            reason="invalid_code", hint="remove the NUL character; write it as '\\x00' inside a string literal",
        )
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return
    except (RecursionError, MemoryError):
        raise _too_complex(f"it nests more than {MAX_PYTHON_DEPTH} levels deep") from None
    except ValueError as exc:  # anything else the parser refuses to read
        raise InvalidArguments(f"the code cannot be read: {exc}", reason="invalid_code") from None
    depth = _depth(tree)
    if depth > MAX_PYTHON_DEPTH:
        raise _too_complex(f"it nests {depth} levels deep, more than {MAX_PYTHON_DEPTH}")


def _depth(tree: ast.AST) -> int:
    """How deeply the syntax tree nests, walked without recursion."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def check_dataset_name(name: str) -> None:
    """Refuse a dataset name that is not a plain, free Python variable name.

    >>> check_dataset_name("revenue_by_region")
    >>> check_dataset_name("sum")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.InvalidArguments: 'sum' cannot name a dataset: it is a Python builtin, which the dataset would hide (hint: pick another name, e.g. sum_df)

    Raises:
        InvalidArguments: ``invalid_name`` (empty, not an identifier, or not in the form
            Python itself would use) or ``reserved_name`` (a keyword, builtin, dunder or
            underscore name, or one the kernel or the exported notebook defines), with a
            suggestion.
    """
    if not name:
        raise _bad_name(
            "run_sql needs a 'name': the Python variable that will hold the dataset", "data", reason="invalid_name"
        )
    if not name.isidentifier():
        raise _bad_name(f"{name!r} cannot name a dataset: it is not a Python identifier", _suggest(name),
                        reason="invalid_name")
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        # Python reads identifiers in this form: the dataset would land under another name.
        raise _bad_name(f"{name!r} cannot name a dataset: Python would read it as {normal!r}", _suggest(normal),
                        reason="invalid_name")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise _bad_name(f"{name!r} cannot name a dataset: it is a Python keyword", _suggest(name))
    if name.startswith("_"):
        what = "a dunder" if name.startswith("__") and name.endswith("__") else "an underscore name"
        raise _bad_name(
            f"{name!r} cannot name a dataset: {what}, reserved for Python, IPython's output history and private names",
            _suggest(name),
        )
    if name in _BUILTINS:
        raise _bad_name(f"{name!r} cannot name a dataset: it is a Python builtin, which the dataset would hide",
                        _suggest(name))
    if name in _RESERVED:
        raise _bad_name(
            f"{name!r} cannot name a dataset: the kernel's set-up or the exported notebook defines it", _suggest(name)
        )


def _bad_name(message: str, suggestion: str, *, reason: str = "reserved_name") -> InvalidArguments:
    return InvalidArguments(
        message, reason=reason, hint=f"pick another name, e.g. {suggestion}", suggestions=[suggestion],
    )


def _suggest(name: str) -> str:
    """A free name close to ``name``.

    >>> _suggest("__builtins__"), _suggest("my-data"), _suggest("2024 sales"), _suggest("class")
    ('builtins', 'my_data', 'df_2024_sales', 'class_df')
    """
    base = re.sub(r"\W+", "_", unicodedata.normalize("NFKC", name)).strip("_")[:60]
    base = re.sub(r"[^A-Za-z0-9_]", "", base) or "data"
    if base[0].isdigit():
        base = f"df_{base}"
    for candidate in (base, f"{base}_df", "data"):
        if _free(candidate) and candidate != name:
            return candidate
    return "dataset_1"


def _free(name: str) -> bool:
    return (
        name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
        and not name.startswith("_") and name not in _BUILTINS and name not in _RESERVED
    )
