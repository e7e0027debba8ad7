"""docs/architecture.md matches the code: every package it names exists, every package is named."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()
PACKAGE = ROOT / "jupyter_analyst"


def _packages() -> list[str]:
    """Every package under jupyter_analyst, as ``agent/tools`` (the root aside)."""
    return sorted(str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py")
                  if p.parent != PACKAGE and "labextension" not in p.parts)


def _layer_table_names() -> list[str]:
    """The backticked names in the package column of the layers table."""
    table = DOC.split("## The layers", 1)[1].split("\n\n", 2)[2].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("|") and "---" not in line][1:]
    return [name for row in rows for name in re.findall(r"`([\w.]+)`", re.split(r"(?<!\\)\|", row)[2])]


def test_every_package_is_in_the_document():
    missing = [p for p in _packages() if f"`{p}`" not in DOC and f"{p}/" not in DOC
               and f"`{p.replace('/', '.')}`" not in DOC and f"{p.replace('/', '.')}." not in DOC]
    assert not missing, f"packages docs/architecture.md does not name: {missing}"


def test_every_name_in_the_layers_table_exists():
    names = _layer_table_names()
    assert len(names) > 15
    for name in names:
        path = PACKAGE / name.replace(".", "/")
        assert path.is_dir() or path.with_suffix(".py").is_file(), f"docs/architecture.md names {name}, which is not there"


def test_every_module_path_the_document_gives_exists():
    for path in sorted(set(re.findall(r"`((?:[a-z_]+/)+[a-z_]*(?:\.py)?)`", DOC))):
        if path.startswith(("tests/", "src/", "docs/")):
            continue
        target = PACKAGE / path
        assert target.exists(), f"docs/architecture.md gives {path}, which is not there"
