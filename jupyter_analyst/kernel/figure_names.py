"""A figure's name from what its display says it is, read as untrusted text.

The kernel's figure hook (``cells.FIGURE_NAMES_CODE``) puts a figure's title and the variable
that holds it into its display's metadata. The kernel runs the model's code, which can send
any metadata it likes, so what is read is only ever a label: a string, its control and
reordering characters and path separators gone, spaces collapsed, and bounded in length.
The host never uses it as a path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: The longest label a figure's name takes from its title.
LABEL_CHARS = 80
#: Characters that never enter a name: controls, marks that reorder text, path separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff/\\\\]")
_SPACES = re.compile(r"\s+")


def clean_label(text: Any, cap: int = LABEL_CHARS) -> str:
    """``text`` as a one-line label of at most ``cap`` characters (cut at a word when it can).

    >>> clean_label("Delays\\n by  origin/month\\u202e")
    'Delays by origin-month'
    >>> clean_label("word " * 30, 20)
    'word word word…'
    >>> clean_label({"not": "text"})
    ''
    """
    if not isinstance(text, str):
        return ""
    label = _SPACES.sub(" ", _UNSAFE.sub(lambda m: "-" if m.group() in "/\\" else " ", text[: cap * 4])).strip()
    label = label.strip(".- ")
    if len(label) <= cap:
        return label
    cut = label[: cap - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > cap // 2 else cut).rstrip(" .-") + "…"


def figure_label(metadata: Any) -> str:
    """The label of one figure from its display's metadata for its image type: the title,
    else the variable that held it; empty when neither is there and readable.

    >>> figure_label({"jupyter_analyst": {"title": "Revenue by region", "variable": "fig"}})
    'Revenue by region'
    >>> figure_label({"jupyter_analyst": {"variable": "delays_fig"}})
    'delays_fig'
    >>> figure_label({"jupyter_analyst": {"variable": "not a name; rm -rf"}}), figure_label("x")
    ('', '')
    """
    if not isinstance(metadata, Mapping):
        return ""
    named = metadata.get("jupyter_analyst")
    if not isinstance(named, Mapping):
        return ""
    title = clean_label(named.get("title"))
    if title:
        return title
    variable = named.get("variable")
    if isinstance(variable, str) and variable.isidentifier() and len(variable) <= 60:
        return variable
    return ""


def figure_names(labels: list[str], fallback: str, suffixes: list[str]) -> list[str]:
    """The artifact names of a step's figures: each its label (numbered when two share one),
    ``{fallback}-figure-{n}`` for a figure without one.

    >>> figure_names(["Revenue", "", "Revenue"], "call_1", [".png", ".png", ".svg"])
    ['Revenue.png', 'call_1-figure-2.png', 'Revenue (2).svg']
    """
    names: list[str] = []
    seen: dict[str, int] = {}
    for n, (label, suffix) in enumerate(zip(labels, suffixes, strict=True), start=1):
        if not label:
            names.append(f"{fallback}-figure-{n}{suffix}")
            continue
        seen[label] = seen.get(label, 0) + 1
        names.append(f"{label}{f' ({seen[label]})' if seen[label] > 1 else ''}{suffix}")
    return names
