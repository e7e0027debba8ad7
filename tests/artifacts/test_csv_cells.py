"""A model-written CSV file re-written cell by cell: its separator kept, its numbers as they
are, every other cell quoted and neutralised, whatever its encoding or shape."""

from __future__ import annotations

import csv
import io

import pytest

from jupyter_analyst.artifacts import is_spreadsheet_text, neutralised_csv


def rewritten(data: bytes, delimiter: str = ",") -> list[list[str]]:
    text = b"".join(neutralised_csv(io.BytesIO(data))).decode("utf-8")
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


@pytest.mark.parametrize(("data", "delimiter", "expected"), [
    (b"a,b\n=1+1,-2\n", ",", [["a", "b"], ["'=1+1", "-2"]]),
    (b"a\tb\n@x\t3.5e-2\n", "\t", [["a", "b"], ["'@x", "3.5e-2"]]),
    (b"\xef\xbb\xbfname\n-\n", ",", [["name"], ["'-"]]),  # a byte-order mark is not a cell's start
    (b"n\n=\xff\n", ",", [["n"], ["'=\ufffd"]]),  # not UTF-8: the bytes that are not are replaced
    (b"n\n\"a\n=b\"\n", ",", [["n"], ["a\n=b"]]),  # a line break inside a quoted cell
    (b"", ",", []),
])
def test_each_cell_is_neutralised_and_each_number_kept(data, delimiter, expected):
    assert rewritten(data, delimiter) == expected


def test_a_line_the_csv_module_cannot_read_is_one_neutralised_cell_per_line():
    huge = "x" * (csv.field_size_limit() + 1)
    text = b"".join(neutralised_csv(io.BytesIO(f"a,b\n1,2\n{huge},3\n=4,5\n".encode()))).decode()
    assert text.split("\r\n") == ['"a","b"', "1,2", f'"{huge},3"', '"\'=4,5"', ""]


def test_what_a_spreadsheet_opens_as_csv():
    assert is_spreadsheet_text("outputs/a.tsv", "application/octet-stream")
    assert is_spreadsheet_text("outputs/a", "text/csv; charset=utf-8")
    assert not is_spreadsheet_text("outputs/a.json", "application/json")
