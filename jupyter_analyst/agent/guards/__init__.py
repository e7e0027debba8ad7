"""The deterministic guards: of a call before it runs (refusals.py, payloads.py, names.py), of
its result against what it expected (expectations.py), of an answer's names (names.py) and
numbers (cited_numbers.py); of the team's definitions its queries followed or lacked
(team_definitions.py)."""

from .cited_numbers import ANSWER_CHECK_MARKER, answer_check, answer_receipts
from .expectations import Verdict, expectation_delta, match, observe
from .names import check_answer, invented_names, mark_answer, unknown_python_names, unknown_table
from .payloads import check_dataset_name, check_python_code
from .refusals import Refusal, payload_refusal, state_refusal, unreadable
from .team_definitions import read_team_definitions

__all__ = [
    "ANSWER_CHECK_MARKER", "Refusal", "Verdict", "answer_check", "answer_receipts", "check_answer",
    "check_dataset_name", "check_python_code", "expectation_delta", "invented_names",
    "mark_answer", "match", "observe", "payload_refusal", "read_team_definitions", "state_refusal",
    "unknown_python_names",
    "unknown_table", "unreadable",
]
