"""CSV cells a spreadsheet shows and never runs, and a model-written CSV file made of them.

A spreadsheet reads a cell as a formula when it starts with ``=``, ``+``, ``-`` or ``@``
(OWASP's CSV injection guidance; ASVS adds a tab and NUL), runs DDE through ``|``-style cells
(``=cmd|' /C calc'!A0``, and ``%``, ``|`` in some), skips leading spaces or line breaks before
deciding, and in some locales takes the full-width forms (``＝``) too. Such a cell is written
with a leading ``'``, as OWASP advises: shown as the text it is. A separator inside a value
(``a;=1+1`` opened where ``;`` separates) cannot start a new cell: every text cell is
written quoted.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import BinaryIO

#: What makes a spreadsheet read a cell as a formula: a line break, tab or NUL first, or one of
#: the formula characters after any spaces (also line breaks). One pattern for Python's ``re``
#: and Arrow's RE2 (the same syntax here).
FORMULA = "^(?:[\\t\\r\\n\\x00]|[ \\t\\r\\n\\x0b\\x0c\u00a0\u3000]*[=+\\-@|%\uff1d\uff0b\uff0d\uff20])"
_FORMULA = re.compile(FORMULA)
#: A number as a spreadsheet reads one from CSV: kept as it is in a model-written file.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
#: Model-written files whose rows are re-written: what a spreadsheet opens as CSV.
SPREADSHEET_TYPES = frozenset({"text/csv", "text/tab-separated-values", "application/csv"})
_SPREADSHEET_SUFFIXES = (".csv", ".tsv")
#: Characters of a model-written CSV read to tell its separator.
_SNIFF_CHARS = 64 * 1024
#: Rows written at a time.
_ROWS = 5_000


def neutralised(text: str) -> str:
    """``text`` as a spreadsheet shows it, never as a formula it runs.

    >>> neutralised("=1+1"), neutralised("@SUM(A1)"), neutralised("-2"), neutralised("a=b")
    ("'=1+1", "'@SUM(A1)", "'-2", 'a=b')
    >>> neutralised("  =1+1"), neutralised("\\n=1"), neutralised("|cmd"), neutralised("＝1+1")
    ("'  =1+1", "'\\n=1", "'|cmd", "'＝1+1")
    """
    return "'" + text if _FORMULA.match(text) else text


def is_spreadsheet_text(name: str, mime: str) -> bool:
    """Whether a file artifact is one a spreadsheet opens as CSV (by its type or its name).

    >>> is_spreadsheet_text("outputs/a.CSV", "application/octet-stream"), is_spreadsheet_text("b", "text/csv")
    (True, True)
    >>> is_spreadsheet_text("outputs/a.txt", "text/plain")
    False
    """
    return mime.split(";")[0].strip().lower() in SPREADSHEET_TYPES or name.lower().endswith(_SPREADSHEET_SUFFIXES)


def quoted(cell: str) -> str:
    """A neutralised cell in quotes (its quotes doubled): no separator or line break in it
    starts another cell.

    >>> print(quoted('a;=1+1'), quoted('=2'), quoted('say "hi" '))
    "a;=1+1" "'=2" "say ""hi"" "
    """
    return '"' + neutralised(cell).replace('"', '""') + '"'


def _cell(text: str) -> str:
    # A number of the file stays a number; anything else is text, quoted and neutralised.
    return text if _NUMBER.fullmatch(text) else quoted(text)


def csv_rows(rows: Iterable[list[str]], delimiter: str) -> Iterator[bytes]:
    """``rows`` of text cells as UTF-8 CSV, a few thousand rows a chunk: numbers as they are,
    other cells quoted and neutralised; empty cells empty.

    >>> print(b"".join(csv_rows([["n", "=x"], ["-1.5", ""]], ",")).decode().replace("\\r\\n", "|"))
    "n","'=x"|-1.5,|
    """
    rows = iter(rows)
    while chunk := list(itertools.islice(rows, _ROWS)):
        yield "".join(delimiter.join(_cell(c) if c else "" for c in row) + "\r\n" for row in chunk).encode("utf-8")


def _separator(sample: str) -> str:
    """The separator of a CSV file from its start: the one of ``,;\\t|`` the sniffer finds
    (a comma when it finds none)."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:  # one column, or too irregular to tell: a comma, as the file's type says
        return ","


def _rows(text: Iterator[str], delimiter: str) -> Iterator[list[str]]:
    """The rows of the lines ``text`` as the csv module reads them; from a row it cannot read
    (a field over its size limit), each line is one cell, so nothing is lost or left raw."""
    read: list[str] = []  # the lines of the row being read

    def lines() -> Iterator[str]:
        for line in text:
            read.append(line)
            yield line

    reader = csv.reader(lines(), delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error:
            yield from ([line.rstrip("\r\n")] for line in itertools.chain(read, text))
            return
        read.clear()
        yield row


def neutralised_csv(blob: BinaryIO) -> Iterator[bytes]:
    """A model-written CSV (or TSV) file, re-written so that no cell runs as a formula: its rows
    read with the csv module (its separator sniffed from its start), each number as it is,
    each other cell quoted and neutralised, as UTF-8 (bytes that are not are replaced).

    Blocking: call ``next`` off the event loop.
    """
    text = io.TextIOWrapper(blob, encoding="utf-8-sig", errors="replace", newline="")
    sample = text.read(_SNIFF_CHARS)
    sample += text.readline()  # the sample ends at a line's end
    delimiter = _separator(sample)
    yield from csv_rows(_rows(itertools.chain(io.StringIO(sample, newline=""), text), delimiter), delimiter)
