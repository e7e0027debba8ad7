"""Receipts: an answer's numbers, percentages, money amounts and dates tied to the results
that support them (``receipts(answer, evidence)``).

Pure (the standard library and pydantic): the caller hands in the values each step result
showed (``evidence.py``); the answer's prose is read for claims (``answer_prose.py``,
``claims.py``); printed text is read as rows of values (``printed.py``); the values are indexed (``cell_index.py``) and each claim is cited, derived
from two cited numbers (``derivations.py``) or said to be unsupported (``matcher.py``,
``citations.py``).
"""

from __future__ import annotations

from .citations import Citation, DefinitionCitation, Derivation, OperandCell, Operation, Receipts, UnsupportedClaim
from .claims import Claim, ClaimKind, read_claims
from .evidence import Cell, Evidence
from .matcher import MAX_CLAIMS, receipts
from .printed import printed_rows

__all__ = [
    "MAX_CLAIMS", "Cell", "Citation", "Claim", "ClaimKind", "DefinitionCitation", "Derivation", "Evidence", "OperandCell", "Operation", "Receipts",
    "UnsupportedClaim", "printed_rows", "read_claims", "receipts",
]
