"""A notebook's queries run by the host for a source the sandboxed kernel cannot reach: found
by parsing its cells (never running them), and taken by ``analyst.sql`` from the host's
folder by their text; a query the host did not run fails its cell with a clear error."""

from __future__ import annotations

import duckdb
import pytest

from jupyter_analyst import runtime
from jupyter_analyst.artifacts import sha256_file
from jupyter_analyst.errors import ConfigError
from jupyter_analyst.notebooks import HOSTED_ENV, hosted_result_name
from jupyter_analyst.notebooks.hosted_queries import needs_host, notebook_queries
from jupyter_analyst.notebooks.ipynb import new_code_cell, new_markdown_cell, new_notebook


def test_only_the_literal_queries_of_code_cells_are_found_each_once():
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell('analyst.sql("""SELECT 0""")'),  # prose, not code
        new_code_cell('from jupyter_analyst import runtime as analyst\nanalyst.connect(source)'),
        new_code_cell('# Written by a model\nrevenue = analyst.sql("""\nSELECT 1\n""")'),
        new_code_cell('again = analyst.sql("""\nSELECT 1\n""")\nx = analyst.sql(\'SELECT 2\')'),
        # Built at run time: the host never evaluates model code to find a query.
        new_code_cell("secret = analyst.sql(open('/etc/hostname').read())\ny = analyst.sql(f'SELECT {3}')"),
        new_code_cell("this is not python ("),
        new_code_cell("other.sql('SELECT 4')"),
    ]
    assert notebook_queries(nb) == ["\nSELECT 1\n", "SELECT 2"]


def test_urls_are_run_by_the_host_and_files_by_the_kernel(tmp_path):
    assert needs_host("sc://localhost:15002/;token=x") and needs_host("postgresql://u@h/db")
    assert not needs_host(str(tmp_path / "sales.duckdb")) and not needs_host(":memory:")


def test_analyst_sql_takes_the_hosts_result_by_its_text(tmp_path, monkeypatch):
    hosted = tmp_path / "hosted"
    hosted.mkdir()
    monkeypatch.setenv(HOSTED_ENV, str(hosted))
    monkeypatch.chdir(tmp_path)
    duckdb.sql("SELECT 42 AS answer").write_parquet(str(hosted / hosted_result_name("SELECT answer FROM t")))
    (hosted / hosted_result_name("SELECT refused")).with_suffix(".error").write_text("SqlRejected: not read-only")
    # The URL is never opened: the kernel has no network, and the host ran the queries.
    runtime.connect("sc://unreachable.invalid:1/;token=x")
    try:
        frame = runtime.sql("SELECT answer FROM t")
        assert frame["answer"].tolist() == [42]
        with pytest.raises(ConfigError, match="not read-only"):
            runtime.sql("SELECT refused")
        with pytest.raises(ConfigError, match="the host ran no such query"):
            runtime.sql("SELECT something else")
    finally:
        runtime._state.clear()
    assert sha256_file(hosted / hosted_result_name("SELECT answer FROM t")).startswith("sha256:")


def test_a_notebook_past_the_cap_of_hosted_queries_is_refused_before_any_runs(tmp_path):
    from jupyter_analyst.notebooks.hosted_queries import MAX_HOSTED_QUERIES, run_hosted

    nb = new_notebook()
    nb.cells = [new_code_cell(f"x{i} = analyst.sql('SELECT {i}')") for i in range(MAX_HOSTED_QUERIES + 1)]
    # Refused before the source is opened: nothing listens on this port, and nothing is written.
    with pytest.raises(ConfigError) as info:
        run_hosted(nb, "postgresql://u:secret@127.0.0.1:1/db", tmp_path / "hosted")
    assert info.value.reason == "too_many_queries" and f"{MAX_HOSTED_QUERIES + 1:,} queries" in info.value.message
    assert "secret" not in info.value.message
    assert list((tmp_path / "hosted").iterdir()) == []
