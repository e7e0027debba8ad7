"""Fingerprints and step keys: what counts as the same work and what does not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jupyter_analyst.artifacts import canonical_python, sha256_file, step_key
from jupyter_analyst.artifacts import fingerprints
from jupyter_analyst.artifacts.fingerprints import FORMAT_VERSION, sha256_bytes

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "artifacts" / "fingerprints.json").read_text())


@pytest.mark.parametrize("left, right", CASES["same"])
def test_layout_comments_and_quotes_do_not_count(left, right):
    assert canonical_python(left) == canonical_python(right)


@pytest.mark.parametrize("left, right", CASES["different"])
def test_a_changed_literal_name_or_block_does(left, right):
    assert canonical_python(left) != canonical_python(right)


@pytest.mark.parametrize("code, expected", CASES["unparsable"])
def test_code_that_does_not_parse_is_only_trimmed(code, expected):
    assert canonical_python(code) == expected


@pytest.mark.parametrize(
    "code",
    ["x = " + "[" * 5000 + "]" * 5000, "x = " + "+".join(["1"] * 100_000), "x = " + "-" * 100_000 + "1"],
)
def test_absurd_nesting_does_not_crash(code):
    assert canonical_python(code) == code


BASE = dict(tool="run_sql", arguments={"sql": "SELECT 1", "name": "x"}, inputs=["sha256:aa", "sha256:bb"],
            data_version="v1")


def key(**change) -> str:
    parts = BASE | change
    return step_key(parts["tool"], parts["arguments"], parts["inputs"], parts["data_version"])


def test_step_key_shape_and_stability():
    assert re.fullmatch(r"step:[0-9a-f]{32}", key())
    assert key() == key(arguments={"name": "x", "sql": "SELECT 1"})
    assert key() == key(inputs=["sha256:bb", "sha256:aa"])
    assert step_key("run_python", {"code": "1"}) == step_key("run_python", {"code": "1"}, (), "")


@pytest.mark.parametrize(
    "change",
    [
        {"tool": "run_python"},
        {"arguments": {"sql": "SELECT 2", "name": "x"}},
        {"arguments": {"sql": "SELECT 1", "name": "y"}},
        {"arguments": {"sql": "SELECT 1", "name": "x", "expect": {"rows": 1}}},
        {"inputs": ["sha256:aa"]},
        {"inputs": ["sha256:aa", "sha256:cc"]},
        {"data_version": "v2"},
    ],
)
def test_step_key_sees_every_part(change):
    assert key(**change) != key()


def test_step_key_sees_the_format_version(monkeypatch):
    before = key()
    monkeypatch.setattr(fingerprints, "FORMAT_VERSION", FORMAT_VERSION + "-next")
    assert key() != before


def test_nested_arguments_are_order_blind():
    a = step_key("run_sql", {"expect": {"rows": 3, "columns": ["a"]}, "sql": "SELECT 1"})
    b = step_key("run_sql", {"sql": "SELECT 1", "expect": {"columns": ["a"], "rows": 3}})
    assert a == b


def test_file_hash_streams_to_the_same_fingerprint(tmp_path):
    data = bytes(range(256)) * (5 * 4096 + 3)  # a bit over 5 MiB: several chunks and a tail
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert sha256_file(path) == sha256_bytes(data)
    assert sha256_bytes(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_step_key_depends_on_every_part():
    base = step_key("run_python", {"code": "x"}, ["sha256:a"], "v1")
    assert base == step_key("run_python", {"code": "x"}, ["sha256:a"], "v1")
    assert base != step_key("run_sql", {"code": "x"}, ["sha256:a"], "v1")
    assert base != step_key("run_python", {"code": "y"}, ["sha256:a"], "v1")
    assert base != step_key("run_python", {"code": "x"}, ["sha256:b"], "v1")
    assert base != step_key("run_python", {"code": "x"}, ["sha256:a"], "v2")
    assert step_key("t", {}, ["b", "a"]) == step_key("t", {}, ["a", "b"]), "inputs are a set"
