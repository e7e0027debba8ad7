"""No module of the package grows past what one reader holds in mind: 600 lines. A module
near the limit has a second concern to split out (``store/threads.py`` became ``turns``,
``events_log``, ``messages`` and ``state`` beside it)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "jupyter_analyst"
MAX_LINES = 600


def test_no_module_is_over_600_lines():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines())
             for p in PACKAGE.rglob("*.py") if "labextension" not in p.parts}
    assert len(sizes) > 200  # the package itself, not an empty folder
    over = {path: n for path, n in sorted(sizes.items()) if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split each by concern): {over}"
