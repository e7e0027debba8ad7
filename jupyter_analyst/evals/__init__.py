"""Evaluating a model on data: suites of questions with gold answers (suite.py, in the native
JSONL format or as DABstep and InfiAgent-DABench publish theirs), each task run as a new
thread through ``turns.run_turn`` (runner.py), each answer scored (scoring.py, pure), the
finished tasks kept in a resume file (progress_file.py), the report as JSON and Markdown and
two runs compared (report.py). A finished turn becomes a verified query of the team's context
folder and a task of its suite (verified_answers.py). The shipped suites (``suites/``) have gold answers computed
by SQL from the data (gold.py) on named sources (sources.py).

The names below are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .gold import regenerate as regenerate_gold
    from .suite_sources import build_named as build_named_source, parse_source_option
    from .harness import compare_reports, evaluate, outputs, suite_path
    from .verified_answers import VerifiedAnswer, verify_answer

_HOME = {
    "evaluate": "harness",
    "compare_reports": "harness",
    "outputs": "harness",
    "suite_path": "harness",
    "regenerate_gold": "gold:regenerate",
    "build_named_source": "suite_sources:build_named",
    "parse_source_option": "suite_sources",
    "VerifiedAnswer": "verified_answers",
    "verify_answer": "verified_answers",
}

__all__ = ["VerifiedAnswer", "build_named_source", "compare_reports", "evaluate", "outputs", "parse_source_option",
           "regenerate_gold", "suite_path", "verify_answer"]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
