"""Numbers computed from two cited ones: which operation, from which pair, and when not."""

from __future__ import annotations

import pytest

from jupyter_analyst.receipts.claims import read_claims
from jupyter_analyst.receipts.derivations import NEAREST, Operand, derive


def _target(written: str):
    (claim,) = read_claims(f"so {written}.")
    return claim.model_copy(update={"start": 1000, "end": 1000 + len(written)})


def _operands(*values: float, percent: bool = False) -> list[Operand]:
    return [Operand(i, 10 * i, percent, v, round(v, 1)) for i, v in enumerate(values)]


@pytest.mark.parametrize("written, operation, pair", [
    ("1,210", "difference", (0, 1)),   # 1620 - 410
    ("2,030", "sum", (0, 1)),
    ("3.95", "ratio", (0, 1)),         # 1620 / 410
    ("295%", "percent_change", (0, 1)),  # from 410 to 1620
    ("25.3%", "share", (1, 0)),        # 410 of 1620
    ("74.7%", "percent_change", (1, 0)),  # 1620 to 410 fell 74.7%, written without its sign
])
def test_each_operation_on_a_pair_in_either_order(written, operation, pair):
    found = derive(_target(written), _operands(1620, 410))
    assert (found.operation, (found.a, found.b)) == (operation, pair)


def test_a_signed_change_keeps_its_sign():
    assert derive(_target("-74.7%"), _operands(1620, 410)).operation == "percent_change"
    assert derive(_target("+74.7%"), _operands(1620, 410)) is None


def test_percentages_give_points_as_a_difference():
    found = derive(_target("5.2 percentage points"), _operands(45.3, 40.1, percent=True))
    assert (found.operation, found.a, found.b) == ("difference", 0, 1)
    assert derive(_target("5.2"), _operands(45.3, 40.1, percent=True)).operation == "difference"


def test_a_percentage_and_a_count_are_not_combined():
    operands = [Operand(0, 0, True, 45.0, 45.0), Operand(1, 10, False, 40.0, 40.0)]
    assert derive(_target("5.0"), operands) is None


def test_the_values_as_written_count_when_the_held_ones_do_not():
    """21.93 - 17.77 = 4.16 reads as 4.2, not 4.1; from the rounded 21.9 and 17.8 it is 4.1."""
    operands = [Operand(0, 0, False, 21.93, 21.9), Operand(1, 10, False, 17.77, 17.8)]
    assert derive(_target("4.1"), operands).value == pytest.approx(4.1)
    assert derive(_target("4.2"), operands).value == pytest.approx(4.16)


def test_a_wide_target_is_not_explained_by_chance():
    """``3`` (any of 2.5..3.5) and ``5%`` would be hit by some pair of many; two significant
    figures are needed."""
    assert derive(_target("3"), _operands(10, 7)) is None
    assert derive(_target("5%"), _operands(105, 100)) is None
    assert derive(_target("5.0%"), _operands(105, 100)).operation == "percent_change"


def test_only_the_nearest_cited_numbers_are_operands():
    far = [Operand(0, 0, False, 1620.0, 1620.0), Operand(1, 5, False, 410.0, 410.0)]
    near = [Operand(2 + i, 100 + i, False, 7.0 + i, 7.0 + i) for i in range(NEAREST)]
    target = _target("1,210")
    assert derive(target, far + near) is None
    assert derive(target, far + near[:NEAREST - 2]).operation == "difference"


def test_dates_and_years_are_not_derived():
    assert derive(_target("2024"), _operands(2000, 24)) is None


def test_one_operand_must_stand_in_the_target_s_sentence():
    operands = _operands(1620, 410)  # at 0 and 10
    assert derive(_target("1,210"), operands, sentence=(5, 2000)).operation == "difference"
    assert derive(_target("1,210"), operands, sentence=(20, 2000)) is None


def test_operands_are_taken_within_the_bounds_given():
    operands = _operands(1620, 410)
    assert derive(_target("1,210"), operands, within=(0, 2000)) is not None
    assert derive(_target("1,210"), operands, within=(5, 2000)) is None


def test_a_wide_target_is_derived_exactly_from_precise_figures_as_written():
    """"576,092 and 576,084: a spread of 8": the writer's own arithmetic on figures of six
    significant figures, exact; 9 (their held values' 8.8, rounded) and 7 are not."""
    written = [Operand(0, 10, False, 576092.4, 576092.0, 1.0), Operand(1, 20, False, 576083.6, 576084.0, 1.0)]
    found = derive(_target("8"), written)
    assert (found.operation, found.a, found.b, found.value) == ("difference", 0, 1, 8.0)
    assert derive(_target("9"), written) is None and derive(_target("7"), written) is None
    # Of imprecise figures an exact hit is likely by chance: not taken.
    assert derive(_target("3"), [Operand(0, 10, False, 10.0, 10.0, 1.0), Operand(1, 20, False, 7.0, 7.0, 1.0)]) is None
