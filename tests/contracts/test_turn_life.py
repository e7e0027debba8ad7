"""A turn's life has one owner: ``turn_started`` and ``turn_ended`` are made in
``turns/life.py`` alone, whichever surface runs the turn and however it ends (the server's
announced turn, a thread that goes on, a new thread; the loop's end, an abandoned turn, a
cut one). A second maker is a second set of words and statuses for the same event."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "jupyter_analyst"
LIFE_EVENTS = {"TurnStarted", "TurnEnded"}
OWNER = "turns/life.py"


def makers(root: Path) -> dict[str, list[str]]:
    """Where each of the life events is constructed under ``root``: ``{event: [path:line]}``
    (a call of its class by name or as an attribute, ``events.TurnEnded(...)``)."""
    found: dict[str, list[str]] = {name: [] for name in LIFE_EVENTS}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name in LIFE_EVENTS:
                    found[name].append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_turn_started_and_turn_ended_are_made_in_one_module():
    for event, places in makers(PACKAGE).items():
        outside = [p for p in places if not p.startswith(OWNER + ":")]
        assert places, f"{event} is made nowhere: the finder no longer sees it"
        assert not outside, f"{event} made outside {OWNER}: {outside}"


def test_the_finder_sees_a_second_maker(tmp_path):
    (tmp_path / "turns").mkdir()
    (tmp_path / "turns" / "life.py").write_text("TurnStarted(prompt='p')\n")
    (tmp_path / "loop.py").write_text("import events\nasync def end(run):\n    await run.emit(events.TurnEnded(status='error'))\n")
    assert makers(tmp_path) == {"TurnStarted": ["turns/life.py:1"], "TurnEnded": ["loop.py:3"]}
