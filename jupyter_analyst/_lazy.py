"""Packages whose names are imported on first use (PEP 562), so a process pays only for
what it touches: a turn whose steps are all reused never imports ``jupyter_client``, and a
worker that only checks SQL never imports DuckDB or Arrow.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_names(package: str, homes: dict[str, str], namespace: dict[str, Any]) -> tuple[
    Callable[[str], Any], Callable[[], list[str]]
]:
    """A package's ``__getattr__`` and ``__dir__`` for ``homes`` (name -> its submodule).

    A home ``"submodule:attribute"`` gives the face its own name for a module's
    ``attribute`` (the face's ``from .submodule import attribute as name``). A name is
    imported from its submodule when first read, then kept in ``namespace`` (the package's
    globals), so later reads cost nothing.

    >>> space = {}
    >>> getattr_, dir_ = lazy_names("json", {"JSONDecodeError": "decoder", "Decoder": "decoder:JSONDecoder"}, space)
    >>> getattr_("Decoder").__name__, getattr_("JSONDecodeError").__name__, dir_()
    ('JSONDecoder', 'JSONDecodeError', ['Decoder', 'JSONDecodeError'])
    >>> sorted(space)
    ['Decoder', 'JSONDecodeError']
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(import_module(f".{module}", package), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
