"""Each module of the package has a name of its own: a reader who sees ``runner`` in a
traceback, a log or a review knows which file it is, and an editor's go-to-file finds one.
Only the files Python gives fixed names (``__init__``, ``__main__``) repeat."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "jupyter_analyst"
FIXED = {"__init__.py", "__main__.py"}


def test_no_two_modules_share_a_name():
    where: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if "labextension" not in path.parts and path.name not in FIXED:
            where[path.name].append(str(path.relative_to(PACKAGE)))
    assert len(where) > 200  # the package itself, not an empty folder
    shared = {name: sorted(paths) for name, paths in sorted(where.items()) if len(paths) > 1}
    assert not shared, f"modules sharing a name (name each for what it holds): {shared}"
