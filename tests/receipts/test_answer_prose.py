"""The prose of an answer: code and links blanked, every position kept."""

from __future__ import annotations

import pytest

from jupyter_analyst.receipts.answer_prose import prose


@pytest.mark.parametrize("text, kept", [
    ("a `1` b", "a     b"),
    ("a ``x ` 1`` b", "a           b"),
    ("a ` b 2", "a ` b 2"),  # a run never closed is text
    ("```\n1\n```\n2", "   \n \n   \n2"),
    ("~~~~py\n1\n~~~\n2\n~~~~\n3", "      \n \n   \n \n    \n3"),  # a shorter fence does not close
    ("x\n```\n1\n2", "x\n   \n \n "),  # an unclosed fence runs to the end
    ("```\n`1`\n```\n`2` 3", "   \n   \n   \n    3"),
    ("see http://a.b/1?x=2) and 3", "see " + " " * len("http://a.b/1?x=2") + ") and 3"),
    ("<https://a.org/2024>", "<" + " " * len("https://a.org/2024") + ">"),
    ("[f](files/a-2.csv) 3", "[f" + " " * len("](files/a-2.csv") + ") 3"),
    ("[x](javascript:alert(1)) 4", "[x" + " " * len("](javascript:alert(1)") + ") 4"),
    ('<span style="width: 5px">6</span>', " " * len('<span style="width: 5px">') + "6" + " " * 7),
    ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),  # comparisons are no tag
])
def test_code_and_links_are_blanked_in_place(text, kept):
    assert prose(text) == kept


def test_text_without_code_is_itself():
    text = "AA averages 21.9 minutes."
    assert prose(text) is text


@pytest.mark.parametrize("text", [
    "".join("`" * (i % 40 + 1) + "x" for i in range(40_000)),  # runs of every length, few closed
    "`" * 1_000_000,
    "```\n" * 250_000,
    "http://" * 150_000,
    "](" * 500_000,
    "](" + "()" * 400_000,
    "<a" * 500_000,
])
def test_a_megabyte_of_backticks_fences_or_links_is_blanked_in_one_pass(text):
    blanked = prose(text)
    assert len(blanked) == len(text) and blanked.count("\n") == text.count("\n")
