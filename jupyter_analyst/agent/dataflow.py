"""What a Python step takes from the steps before it, and what it leaves for the steps after.

- Its **inputs** are its free names: names it reads before anything in the step itself
  binds them (``x = x + 1`` reads the earlier ``x``; ``import pandas as pd; pd.concat(...)``
  reads no earlier ``pd``).
- Its **outputs** are the names it rebinds: assigned, imported, defined, or changed in
  place in the ways pandas code does (``df["x"] = ...``, ``df.x = ...``, ``del df["x"]``,
  ``df.dropna(inplace=True)``). Mutation through other methods (``items.append(x)``)
  cannot be seen in the code and is not counted.

Both are read off the syntax tree, in statement order, conservatively: when in doubt a
name counts as an input (a needless input costs a re-run, a missed one a wrong reuse).
Code that does not parse has neither; the kernel reports its error.

The plainer questions asked of a step's code live here too: which names it defines
(``assigned_names``), reads without any definition (``undefined_names``), or mentions at
all (``names_used``), and the names every kernel has before any step (``KERNEL_NAMES``).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

#: Names the kernel defines before any step runs (see kernel/session.py SETUP_CODE) and
#: the ones IPython itself provides.
KERNEL_NAMES = frozenset(
    {"pd", "matplotlib", "plt", "get_ipython", "display", "In", "Out", "exit", "quit", "_", "__", "___", "_ih", "_oh"}
)
_DYNAMIC = frozenset({"exec", "eval", "globals", "locals", "vars", "__import__", "__builtins__"})
_BUILTINS = frozenset(dir(builtins))


def _defined_and_read(tree: ast.AST) -> tuple[set[str], list[str], bool]:
    defined: set[str] = set()
    read: list[str] = []
    dynamic = False
    for node in ast.walk(tree):
        match node:
            case ast.Name(id=name, ctx=ast.Load()):
                read.append(name)
                dynamic |= name in _DYNAMIC
            case ast.Name(id=name):
                defined.add(name)
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
                defined.add(name)
            case ast.arg(arg=name):
                defined.add(name)
            case ast.Import(names=aliases) | ast.ImportFrom(names=aliases):
                for alias in aliases:
                    if alias.name == "*":
                        dynamic = True
                    defined.add(alias.asname or alias.name.split(".")[0])
            case ast.ExceptHandler(name=str(name)):
                defined.add(name)
            case ast.Global(names=names) | ast.Nonlocal(names=names):
                defined.update(names)
            case ast.MatchAs(name=str(name)) | ast.MatchStar(name=str(name)):
                defined.add(name)
            case ast.MatchMapping(rest=str(name)):
                defined.add(name)
    return defined, read, dynamic


def assigned_names(code: str) -> set[str]:
    """Every name a piece of Python defines (empty when it does not parse).

    >>> sorted(assigned_names("import numpy as np\\nfor i, row in df.iterrows(): total = i"))
    ['i', 'np', 'row', 'total']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return _defined_and_read(tree)[0]


def undefined_names(code: str, known: Iterable[str]) -> list[str]:
    """Names ``code`` reads that neither it nor anything ``known`` defines, in order.

    >>> undefined_names("print(revenu.sum())", ["revenue"])
    ['revenu']
    >>> undefined_names("x = 1\\nprint(x, len(revenue))", ["revenue"])
    []
    >>> undefined_names("exec('y = 1'); print(y)", [])
    []
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []  # the kernel reports syntax errors better than a guess would
    defined, read, dynamic = _defined_and_read(tree)
    if dynamic:
        return []
    allowed = defined | set(known) | _BUILTINS | KERNEL_NAMES
    return list(dict.fromkeys(name for name in read if name not in allowed))


def names_used(code: str) -> set[str]:
    """The plain names a piece of Python reads or writes (empty when it does not parse).

    >>> sorted(names_used("total = revenue['amount'].sum()"))
    ['revenue', 'total']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def free_names(code: str) -> set[str]:
    """The names ``code`` reads before binding them itself: what it takes from earlier steps.

    >>> sorted(free_names("import matplotlib.pyplot as plt\\nax = revenue.plot()\\nplt.show()"))
    ['revenue']
    >>> sorted(free_names("x = x + 1\\nfor i in range(3):\\n    total = total + i"))
    ['range', 'total', 'x']
    >>> sorted(free_names("def f(a):\\n    return a * k\\nsquares = [n * n for n in f(2)]"))
    ['k']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    flow = _Flow()
    flow.block(tree.body, set())
    return flow.free


def rebound_names(code: str) -> set[str]:
    """The names whose value ``code`` changes: assigned, or changed in place.

    >>> sorted(rebound_names("revenue['share'] = revenue.revenue / 2\\nbase.dropna(inplace=True)\\ny = 1"))
    ['base', 'revenue', 'y']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return assigned_names(code) | _mutated(tree)


#: Methods that change their object in place (lists, dicts, sets; ``DataFrame.insert``, ``.pop``,
#: ``.update``): a call of one is a change the bindings cannot see (see ``changed_by_methods``).
IN_PLACE_METHODS = frozenset({
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "add",
    "discard", "sort", "reverse", "intersection_update", "difference_update", "symmetric_difference_update",
})


def changed_by_methods(code: str) -> set[str]:
    """The names ``code`` may change through an in-place method (``items.append(x)``).

    Such a change is not a rebinding (the name keeps the binding of the step that made
    it), so restoring that step alone would not restore the value: a kernel that is not
    the one the change ran in must replay the whole history to get it back.

    >>> sorted(changed_by_methods("items.append(1)\\nd['k'].update(e)\\ntotal = revenue.sum()"))
    ['d', 'items']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in IN_PLACE_METHODS:
            name = _base(node.func.value)
            if name is not None:
                out.add(name)
    return out


def _base(node: ast.AST) -> str | None:
    """The name at the root of ``a.b[c].d``."""
    while isinstance(node, ast.Subscript | ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _mutated(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        match node:
            case ast.Subscript(ctx=ast.Store() | ast.Del()) | ast.Attribute(ctx=ast.Store() | ast.Del()):
                name = _base(node)
            case ast.Call(func=ast.Attribute() as method, keywords=keywords) if any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True for k in keywords
            ):
                name = _base(method.value)
            case _:
                name = None
        if name is not None:
            out.add(name)
    return out


def _stored(node: ast.AST) -> set[str]:
    """Plain names bound by an assignment target (``a, (b, *c) = ...``)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _arguments(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


class _Flow:
    """Walks statements in order, keeping the names bound so far in the current scope."""

    def __init__(self) -> None:
        self.free: set[str] = set()

    def reads(self, nodes: Iterable[ast.AST | None], bound: set[str]) -> None:
        """Names an expression reads; its own comprehension variables and lambda arguments
        are local to it, and what it binds with ``:=`` is bound from then on."""
        for node in nodes:
            if node is None:
                continue
            # Names local to this expression, kept apart from ``bound``: copying ``bound`` for
            # every statement made long code quadratic to analyse.
            local: set[str] = set()
            walrus: set[str] = set()
            for inner in ast.walk(node):
                if isinstance(inner, ast.comprehension):
                    local |= _stored(inner.target)
                elif isinstance(inner, ast.Lambda):
                    local |= _arguments(inner.args)
                elif isinstance(inner, ast.NamedExpr):
                    walrus |= _stored(inner.target)
            local |= walrus
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load)
                    and inner.id not in local and inner.id not in bound
                ):
                    self.free.add(inner.id)
            bound |= walrus

    def block(self, body: Iterable[ast.stmt], bound: set[str]) -> None:
        for stmt in body:
            self.statement(stmt, bound)

    def statement(self, stmt: ast.stmt, bound: set[str]) -> None:
        match stmt:
            case ast.FunctionDef() | ast.AsyncFunctionDef():
                self.reads([*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults], bound)
                bound.add(stmt.name)
                # The body runs later, in its own scope: what it reads from outside is free.
                self.block(stmt.body, bound | _arguments(stmt.args))
            case ast.ClassDef():
                self.reads([*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)], bound)
                bound.add(stmt.name)
                self.block(stmt.body, set(bound))
            case ast.Import() | ast.ImportFrom():
                bound |= {alias.asname or alias.name.split(".")[0] for alias in stmt.names if alias.name != "*"}
            case ast.Assign():
                self.reads([stmt.value, *stmt.targets], bound)  # a target's subscripts are read
                for target in stmt.targets:
                    bound |= _stored(target)
            case ast.AugAssign():
                self.reads([stmt.value], bound)
                name = _base(stmt.target)
                if name is not None and name not in bound:
                    self.free.add(name)  # x += 1 reads x first
                self.reads([stmt.target], bound)
                bound |= _stored(stmt.target)
            case ast.AnnAssign():
                self.reads([stmt.value, stmt.target], bound)
                bound |= _stored(stmt.target) if stmt.value is not None else set()
            case ast.For() | ast.AsyncFor():
                self.reads([stmt.iter], bound)
                bound |= _stored(stmt.target)
                self.block(stmt.body, bound)
                self.block(stmt.orelse, bound)
            case ast.While() | ast.If():
                self.reads([stmt.test], bound)
                self.block(stmt.body, bound)
                self.block(stmt.orelse, bound)
            case ast.With() | ast.AsyncWith():
                for item in stmt.items:
                    self.reads([item.context_expr], bound)
                    if item.optional_vars is not None:
                        bound |= _stored(item.optional_vars)
                self.block(stmt.body, bound)
            case ast.Try() | ast.TryStar():
                self.block(stmt.body, bound)
                for handler in stmt.handlers:
                    self.reads([handler.type], bound)
                    self.block(handler.body, bound | ({handler.name} if handler.name else set()))
                self.block(stmt.orelse, bound)
                self.block(stmt.finalbody, bound)
            case _:
                # Expressions, returns, deletes, match statements, ...: read, then bind
                # whatever they store (a walrus, a match capture).
                self.reads([stmt], bound)
                bound |= _stored(stmt) | {
                    n.name for n in ast.walk(stmt) if isinstance(n, ast.MatchAs | ast.MatchStar) and n.name
                }
