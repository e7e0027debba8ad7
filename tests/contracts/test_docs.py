"""The README is a landing page and the reference lives in docs/: the README stays short, every
page of docs/ is in the site's nav (mkdocs.yml), and every relative link of the README leads to
a file (and heading) that is there, on GitHub as in a clone.

`make docs` (a step of `make test`) builds the site with `mkdocs build --strict`, which checks the
links between the pages; these checks need no MkDocs and run with the unit tests.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_README_LINES = 300

# A markdown link or image target, up to an optional title: [text](target "title").
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


class _ConfigLoader(yaml.SafeLoader):
    """mkdocs.yml as data: its `!!python/...` tags (the toc's slugify) are read as nothing."""


_ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _config() -> dict[str, Any]:
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_ConfigLoader)  # noqa: S506 (a safe loader)


def _nav_pages(nav: Any) -> Iterator[str]:
    """The page paths of a nav: entries are paths, ``{title: path}`` or ``{title: [entries]}``."""
    if isinstance(nav, str):
        if "://" not in nav:
            yield nav
    elif isinstance(nav, list):
        for entry in nav:
            yield from _nav_pages(entry)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def _prose(text: str) -> str:
    """The markdown outside fenced code blocks (a link-shaped string in code is no link)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return "\n".join(out)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it (mkdocs.yml's toc slugify makes the same).

    >>> slug('What "continue" reuses'), slug("The agent's memory"), slug("In JupyterLab: the server extension")
    ('what-continue-reuses', 'the-agents-memory', 'in-jupyterlab-the-server-extension')
    >>> slug("Audit trails: export, re-execute, verify"), slug("`run`'s options")
    ('audit-trails-export-re-execute-verify', 'runs-options')
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", _prose(page.read_text()), re.M)}


def test_the_readme_is_a_landing_page_under_300_lines():
    lines = README.read_text().splitlines()
    assert len(lines) < MAX_README_LINES, (
        f"README.md has {len(lines)} lines: a reference section belongs in a page of docs/ (and mkdocs.yml's nav)")


def test_every_page_of_docs_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = _config()
    docs = ROOT / config.get("docs_dir", "docs")
    assert docs == ROOT / "docs"
    pages = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}
    nav = list(_nav_pages(config["nav"]))
    assert len(nav) == len(set(nav)), f"pages listed twice in mkdocs.yml's nav: {sorted({p for p in nav if nav.count(p) > 1})}"
    assert sorted(pages - set(nav)) == [], "pages of docs/ that mkdocs.yml's nav leaves out"
    assert sorted(set(nav) - pages) == [], "mkdocs.yml's nav names pages that docs/ does not have"


def test_the_site_is_built_into_a_folder_git_ignores():
    site_dir = Path(_config()["site_dir"])
    ignored = {line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()}
    assert any(part in ignored for part in (site_dir.parts[0], site_dir.as_posix())), (
        f"mkdocs.yml's site_dir {site_dir} is not git-ignored")


def broken_links(page: Path, root: Path) -> list[str]:
    """The relative links of ``page`` (files under ``root``) to a file or a heading that is not there."""
    links = LINK.findall(_prose(page.read_text()))
    broken = []
    for link in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto:
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path) if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: {target.relative_to(root).as_posix()} has no heading #{anchor}")
    return broken


def test_every_relative_link_of_the_readme_leads_to_a_file_and_heading_that_are_there():
    assert "](docs/getting-started.md)" in README.read_text(), "README.md links to the docs' first page"
    assert broken_links(README, ROOT) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## A heading\n\n```\n## Not a heading\n```\n")
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\n[a](docs/page.md#a-heading) [b](docs/page.md#not-a-heading) ![c](docs/c.png)\n"
                      "[d](https://example.org/x.md) [e](#title) [f](#nothing)\n\n```\n[g](docs/in-code.md)\n```\n")
    assert broken_links(readme, tmp_path) == [
        "docs/page.md#not-a-heading: docs/page.md has no heading #not-a-heading",
        "docs/c.png: no such file",
        "#nothing: README.md has no heading #nothing",
    ]
