"""The Agent Skill shipped in the package (jupyter_analyst/skills/jupyter-analyst/SKILL.md):
front matter Claude Code and Codex read, and commands that the command line really has."""

from __future__ import annotations

import re
import shlex
from importlib.util import find_spec
from pathlib import Path

import pytest
import yaml

import jupyter_analyst
from jupyter_analyst.cli.parser import build_parser

SKILL = Path(jupyter_analyst.__file__).parent / "skills" / "jupyter-analyst" / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")
#: Commands built beside this skill on another branch: checked once their package is here.
ELSEWHERE = {"mcp": "jupyter_analyst.mcp"}


def _elsewhere(name: str) -> bool:
    """Whether ``name`` is a command of a package not in this tree yet."""
    return name in ELSEWHERE and find_spec(ELSEWHERE[name]) is None


def _commands() -> set[str]:
    (sub,) = [a for a in build_parser()._actions if a.dest == "command"]
    return set(sub.choices)


def _lines() -> list[str]:
    """Each ``jupyter analyst ...`` the skill gives: in its shell blocks, and as inline code."""
    blocks = re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    lines += re.findall(r"`(jupyter[ -]analyst [^`]*)`", TEXT)
    return [line for line in lines if line.startswith(("jupyter analyst ", "jupyter-analyst "))]


def test_the_front_matter_names_and_describes_the_skill():
    assert TEXT.startswith("---\n")
    front, _, body = TEXT[4:].partition("\n---\n")
    meta = yaml.safe_load(front)
    assert set(meta) == {"name", "description"}
    # The Agent Skills format: the name is the folder's, lowercase letters, digits and hyphens, at most 64.
    assert meta["name"] == SKILL.parent.name and re.fullmatch(r"[a-z0-9-]{1,64}", meta["name"])
    assert isinstance(meta["description"], str) and 50 < len(meta["description"]) <= 1024
    assert "Use when" in meta["description"] and body.strip()


def test_every_command_line_it_gives_parses_with_the_real_parser():
    lines = _lines()
    named = {shlex.split(line)[2] for line in lines} | set(re.findall(r"jupyter analyst ([a-z][a-z-]+)", TEXT))
    assert {"run", "verify", "export", "threads", "mcp"} <= named
    known = _commands()
    for line in lines:
        argv = shlex.split(line)[2:]
        if argv[0] not in known and _elsewhere(argv[0]):
            continue
        try:
            build_parser().parse_args(argv)
        except SystemExit:
            pytest.fail(f"the skill gives a command the command line refuses: {line}")
    missing = {name for name in named - known if not _elsewhere(name)}
    assert not missing, f"the skill names commands the command line does not have: {missing}"
