"""What a suite's tasks may read: the shipped named sources, and only the sources the user
gives the run (``--source NAME=PATH_OR_URL``, relative paths inside ``--data-dir``, ``--db``)."""

from __future__ import annotations

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.evals.suite_sources import SourcePolicy, parse_source_option


def test_a_name_the_user_maps_is_read_as_what_it_maps_to(tmp_path):
    policy = SourcePolicy(cache=tmp_path, named={"sales": "/data/sales.duckdb"})
    policy.check("t", "sales")
    assert policy.resolve("sales") == "/data/sales.duckdb"


def test_the_user_s_mapping_of_a_shipped_name_wins(tmp_path):
    policy = SourcePolicy(cache=tmp_path, named={"sample": "/data/my-sample.duckdb"})
    assert policy.resolve("sample") == "/data/my-sample.duckdb" and not (tmp_path / "sample.duckdb").exists()


def test_a_shipped_name_is_built_in_the_cache(tmp_path):
    policy = SourcePolicy(cache=tmp_path)
    policy.check("t", "sample")
    assert policy.resolve("sample") == str(tmp_path / "sample.duckdb") and (tmp_path / "sample.duckdb").is_file()


def test_db_gives_every_task_its_source_whatever_the_task_names(tmp_path):
    policy = SourcePolicy(cache=tmp_path, every="/data/one.duckdb")
    policy.check("t", "/etc/shadow")
    assert policy.resolve("/etc/shadow") == "/data/one.duckdb" and policy.resolve(None) == "/data/one.duckdb"


def test_relative_paths_are_read_inside_the_data_dir_and_nowhere_else(tmp_path):
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "a.csv").write_text("x\n1\n")
    (tmp_path / "outside.csv").write_text("x\n2\n")
    (data / "link.csv").symlink_to(tmp_path / "outside.csv")
    policy = SourcePolicy(cache=tmp_path, data_dir=data)
    policy.check("t", "sub/a.csv")
    assert policy.resolve("sub/a.csv") == str((data / "sub" / "a.csv").resolve())
    for spec in ("../outside.csv", "sub/../../outside.csv", "link.csv", str(tmp_path / "outside.csv"), "~/x.csv"):
        with pytest.raises(ConfigError, match="which this run was not given") as caught:
            policy.check("t", spec)
        assert caught.value.reason == "source_not_allowed", spec
        assert (f"inside --data-dir {data} only" in caught.value.hint) == (not spec.startswith("/")), spec


@pytest.mark.parametrize("spec", ["data.csv", "/srv/db.duckdb", "postgresql://db/x", ":memory:", "duckdb:///x.db"])
def test_without_being_given_a_source_is_refused_with_how_to_allow_it(tmp_path, spec):
    with pytest.raises(ConfigError) as caught:
        SourcePolicy(cache=tmp_path).check("q7", spec)
    assert caught.value.message.startswith(f"task 'q7' names the source {spec!r}, which this run was not given")
    assert "--source" in caught.value.hint and "--db PATH_OR_URL" in caught.value.hint
    assert ("--data-dir" in caught.value.hint) == (spec == "data.csv")


def test_a_source_holding_terminal_controls_is_shown_escaped(tmp_path):
    with pytest.raises(ConfigError) as caught:
        SourcePolicy(cache=tmp_path).check("t\x1b[2J", "/x\x1b]0;owned\x07.duckdb")
    assert "\x1b" not in caught.value.message and "\x1b" not in caught.value.hint


def test_the_option_reads_name_and_source_and_leaves_a_url_whole():
    assert parse_source_option("sales=/d/s.duckdb") == ("sales", "/d/s.duckdb")
    assert parse_source_option("a=b=c") == ("a", "b=c")
    assert parse_source_option("/d/s.duckdb") == ("/d/s.duckdb", "/d/s.duckdb")
    url = "postgresql://u@h/db?sslmode=require"
    assert parse_source_option(url) == (url, url)
    assert parse_source_option(f"pg={url}") == ("pg", url)
