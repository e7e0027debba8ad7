"""The deterministic guards: of a call before it runs (refusals.py, payloads.py, names.py), of
its result against what it expected (expectations.py), of an answer's names (names.py)."""

from .names import Flag, check_answer, invented_names, mark_answer
from .refusals import Refusal, payload_refusal, state_refusal, unreadable

__all__ = [
    "Flag", "Refusal", "check_answer", "invented_names", "mark_answer", "payload_refusal", "state_refusal",
    "unreadable",
]
