"""The ``process`` marker (tests/conftest.py) is on each test that starts a server, however
it starts it, and on no other: ``make test-fast`` (``-m "not process"``) leaves out exactly
the tests that need one. The ``kernel`` marker is on each other test that may start a kernel,
so ``make test-unit`` (``-m "not process and not kernel"``) runs none."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Test files with a test for each way a server is started, and tests that start none.
FILES = ("tests/server/test_users.py", "tests/store/test_threads.py", "tests/artifacts/blobs/test_s3.py",
         "tests/artifacts/blobs/test_integrity.py", "tests/server/test_crash.py", "tests/server/test_gateway.py",
         "tests/server/test_api_fuzz.py", "tests/cli/test_lab_demo.py", "tests/security/test_stubborn_queries.py",
         "tests/agent/tools/test_run_sql.py", "tests/cli/test_cli_errors.py", "tests/sql/test_intent.py")


#: Collects ``FILES`` once and prints each test's id with the markers the suite's conftest
#: gave it (as ``-m`` reads them: every marker on the test, its class and its module).
LIST_MARKS = """
import sys, pytest

class Marks:
    def pytest_collection_finish(self, session):
        for item in session.items:
            print("MARKS", item.nodeid, ",".join(sorted({m.name for m in item.iter_markers()})), sep="\\t")

sys.exit(pytest.main(["--collect-only", "-q", "-s", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[Marks()]))
"""


@functools.cache
def marks_of_each_test() -> dict[str, frozenset[str]]:
    """Each test of ``FILES`` and its markers, from one collection (a collection takes
    seconds; each ``-m`` of the checks below is then a filter of it)."""
    run = subprocess.run([sys.executable, "-c", LIST_MARKS, *FILES], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    listed = [line.split("\t") for line in run.stdout.splitlines() if line.startswith("MARKS\t")]
    return {parts[1]: frozenset(filter(None, parts[2].split(","))) for parts in listed}


def collected(marks: str) -> set[str]:
    """The ids of the tests of ``FILES`` that ``-m marks`` selects: ``process``, ``kernel``,
    their negations, and ``and`` of those."""
    def selects(names: frozenset[str]) -> bool:
        return all((name.removeprefix("not ") not in names) if name.startswith("not ") else (name in names)
                   for name in marks.split(" and "))

    return {test for test, names in marks_of_each_test().items() if selects(names)}


def test_each_way_of_starting_a_server_carries_the_marker():
    marked = collected("process")
    for test in (
        "tests/server/test_users.py::test_nobody_gets_401",  # jp_fetch: pytest-jupyter's server
        "tests/store/test_threads.py::test_unknown_thread_has_a_hint[postgresql]",  # a fixture's parameter
        "tests/artifacts/blobs/test_integrity.py::test_the_server_does_not_serve_a_swapped_blob[folder]",  # jp_serverapp
        "tests/artifacts/blobs/test_s3.py::test_a_deleted_or_damaged_cache_is_refilled_from_the_bucket",  # s3_server, under a fixture
        "tests/artifacts/blobs/test_s3.py::test_server_down_is_a_clear_error",  # started in the test, imported there
        "tests/server/test_crash.py::test_kill_9_mid_turn_then_continue",  # started in the test
        "tests/server/test_gateway.py::test_a_gateway_that_is_down_fails_the_turn_clearly_and_loses_nothing",  # by a helper
        "tests/server/test_api_fuzz.py::test_the_stateful_walk_keeps_to_the_description",  # by a helper, in a fixture
        "tests/cli/test_lab_demo.py::test_serves_the_sample_source",  # by a command: marked in the file
    ):
        assert test in marked, f"{test} starts a server and is not marked process"


def test_a_test_that_starts_no_server_is_left_to_the_fast_suite():
    fast = collected("not process")
    for test in (
        "tests/store/test_threads.py::test_unknown_thread_has_a_hint[sqlite]",
        "tests/store/test_threads.py::test_events_survive_reopen_and_round_trip",
        "tests/artifacts/blobs/test_s3.py::test_credentials_in_the_url_are_refused_without_echoing_them",
    ):
        assert test in fast, f"{test} starts no server and is marked process"
    assert not fast & collected("process")


def test_each_way_of_starting_a_kernel_carries_the_kernel_marker():
    marked = collected("kernel")
    for test in (
        "tests/sql/test_intent.py::test_a_computed_column_in_a_filter_is_defined",  # the analyst fixture
        "tests/security/test_stubborn_queries.py::test_a_turn_whose_query_ignores_its_interrupt_tells_the_model_and_completes",  # TurnRunner
        "tests/security/test_stubborn_queries.py::test_run_json_prints_its_json_when_a_query_ignores_its_interrupt",  # a command
    ):
        assert test in marked, f"{test} may start a kernel and is not marked kernel"
    assert not marked & collected("process")


def test_a_test_that_starts_neither_is_left_to_the_unit_suite():
    unit = collected("not process and not kernel")
    for test in (
        "tests/store/test_threads.py::test_events_survive_reopen_and_round_trip",
        "tests/agent/tools/test_run_sql.py::test_the_worker_clears_a_query_before_its_answer_and_a_known_text_is_answered_at_once",
    ):
        assert test in unit, f"{test} starts neither a server nor a kernel and is not in the unit suite"
