"""Numbers an answer computed from two numbers it cited: a difference, a sum, a ratio, a
percent change or a share.

A number no result holds may still be honest: "AA's delay (21.9) is 4.2 minutes above UA's
(17.7)". It is matched as derived when one operation on two numbers the same answer cited
gives a value its written precision accepts. Only numbers already cited count (a derived
number is never an operand), each pair in both orders, and each operand both as the result
held it and as the answer wrote it (a writer may compute from the rounded figures).

Three rules keep this from explaining invented numbers by chance (with ten operands and a
target of two significant figures, some pair and operation hits a random number about one
time in five):

* the target must be written to at least two significant figures (its interval no wider
  than a tenth of its value): a wide interval ("3", "5%") would be hit by some combination.
  A wide target is matched only exactly, by operands as the answer wrote them, each written
  to at least :data:`PRECISE_FIGURES` significant figures ("576,092 and 576,084: a spread of
  8"): a writer's arithmetic on its own precise figures is exact, and an exact hit of such
  figures by chance is rare (of ``10`` and ``7``, ``3`` is not);
* one operand must stand in the target's sentence (``sentence``, the caller's): a writer
  states a computed figure beside one it comes from ("4.2 minutes above UA's 17.7",
  "58.7k flights, 17% of all");
* the other is one of the :data:`NEAREST` cited numbers around the target, by position,
  within the caller's bounds (``within``). This also bounds the work: at most
  ``NEAREST * (NEAREST - 1)`` pairs a target, whatever the answer's length.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import get_args

from .citations import Operation
from .claims import Claim

#: The cited numbers nearest a target that may be its operands.
NEAREST = 10
#: The widest interval (as a share of the value) a derived target may be written with.
MAX_RELATIVE_PRECISION = 0.1
#: The significant figures operands need for a wide target to be derived from them exactly.
PRECISE_FIGURES = 4
_ORDER: tuple[Operation, ...] = get_args(Operation)


@dataclass(frozen=True, slots=True)
class Operand:
    """A cited number: its claim (an index), where it stands, and its two readings."""

    claim: int
    position: int
    percent: bool
    held: float
    """The cited value in the claim's units (a share 0.45 cited for ``45%`` is 45)."""
    written: float
    """The value as the answer wrote it."""
    precision: float = float("inf")
    """The interval it was written with (unknown: infinite, never precise)."""

    def precise(self) -> bool:
        """Written to at least :data:`PRECISE_FIGURES` significant figures."""
        return self.precision <= abs(self.written) * 10.0 ** (1 - PRECISE_FIGURES)


@dataclass(frozen=True, slots=True)
class Derived:
    """A target matched: ``operation`` on the operands of claims ``a`` and ``b`` gives ``value``."""

    operation: Operation
    a: int
    b: int
    value: float


def derive(target: Claim, operands: Sequence[Operand], within: tuple[int, int] | None = None,
           sentence: tuple[int, int] | None = None) -> Derived | None:
    """The best derivation of ``target`` from ``operands`` (sorted by position; those
    standing ``within`` these bounds of the answer, one of each pair in ``sentence``, where
    given), if any.

    Best: from the values as held before as written, then nearest the value written, then
    in the order of :data:`Operation`'s operations, then from the nearer pair.

    >>> ops = [Operand(0, 10, False, 21.93, 21.9), Operand(1, 30, False, 17.71, 17.7)]
    >>> found = derive(Claim(start=50, end=53, text="4.2", kind="number", value=4.2, precision=0.1), ops)
    >>> found.operation, found.a, found.b, round(found.value, 2)
    ('difference', 0, 1, 4.22)
    >>> found = derive(Claim(start=50, end=53, text="24%", kind="percent", value=24.0, precision=1.0), ops)
    >>> found.operation, found.a, found.b, round(found.value, 2)
    ('percent_change', 0, 1, 23.83)
    >>> derive(Claim(start=50, end=51, text="4", kind="number", value=4.0, precision=1.0), ops) is None
    True
    >>> written = [Operand(0, 10, False, 576092.4, 576092.0, 1.0), Operand(1, 20, False, 576083.6, 576084.0, 1.0)]
    >>> derive(Claim(start=40, end=41, text="8", kind="number", value=8.0, precision=1.0), written).operation
    'difference'
    """
    assert isinstance(target.value, float)
    if target.kind in ("year", "date", "month") or not target.value:
        return None
    wide = target.precision > MAX_RELATIVE_PRECISION * abs(target.value)
    slack = 1e-9 * max(1.0, abs(target.value))
    # A wide target: only the exact value, from the operands as written (the module's rules).
    low, high = (target.value, target.value) if wide else target.bounds()
    low, high = low - slack, high + slack
    percent = target.kind == "percent"
    best: tuple[tuple[float, ...], Derived] | None = None
    for a, b in permutations(_nearest(target.start, operands, within), 2):
        if a.percent != b.percent or (sentence and not any(sentence[0] <= o.position < sentence[1] for o in (a, b))):
            continue
        for mode, (x, y) in enumerate(((a.held, b.held), (a.written, b.written))):
            if wide and (mode == 0 or not (a.precise() and b.precise())):
                continue
            for operation, value in _results(x, y, a.claim < b.claim, a.percent, percent):
                if operation == "percent_change" and not target.signed:
                    value = abs(value)  # "fell 12%" states a change of -12% unsigned
                if low <= value <= high:
                    key = (mode, abs(value - target.value), _ORDER.index(operation), abs(a.position - target.start)
                           + abs(b.position - target.start), a.claim, b.claim)
                    if best is None or key < best[0]:
                        best = key, Derived(operation, a.claim, b.claim, value)
    return best[1] if best else None


def _nearest(position: int, operands: Sequence[Operand], within: tuple[int, int] | None) -> list[Operand]:
    """The :data:`NEAREST` operands nearest ``position`` (``within`` bounds), from a window around it."""
    positions = [o.position for o in operands]
    low, high = (bisect_left(positions, within[0]), bisect_left(positions, within[1])) if within else (0, len(operands))
    i = bisect_left(positions, position)
    window = operands[max(low, i - NEAREST):min(high, i + NEAREST)]
    return sorted(window, key=lambda o: (abs(o.position - position), o.position))[:NEAREST]


def _results(a: float, b: float, first: bool, operands_percent: bool, target_percent: bool,
             ) -> list[tuple[Operation, float]]:
    """What each operation makes of ``a`` and ``b`` that a target of this kind can state.

    A difference or sum keeps the operands' units (of two percentages, a percentage or its
    points as a plain number); a ratio is a plain number; a percent change and a share are
    percentages. A sum is taken once a pair (``first``: the pair in the answer's order).
    """
    results: list[tuple[Operation, float]] = []
    if target_percent == operands_percent or operands_percent:
        results.append(("difference", a - b))
        if first:
            results.append(("sum", a + b))
    if b and not target_percent:
        results.append(("ratio", a / b))
    if b and target_percent:
        results += [("percent_change", (a - b) / b * 100), ("share", a / b * 100)]
    return results
