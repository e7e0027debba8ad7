"""Which closing sentences of an answer offer a next step: the phrasings models use, and
statements that merely mention what comes next."""

from __future__ import annotations

import pytest

from jupyter_analyst.agent.context.previous import offered_next

OFFERS = [
    "Next step, if useful: split the delays by carrier.",
    "The next step joins weather on origin and hour to see whether visibility explains it.",
    "A natural next step is to compare 2014.",
    "If useful, I can chart it by month.",
    "I'd suggest checking the outliers in March.",
    "You may want to exclude cancelled flights.",
    "Shall we break it down by region?",
    "As a follow-up, compare the weekends.",
    "To go further, the planes table gives each aircraft's age.",
    "Would you like the same for 2014?",
]
STATEMENTS = [
    "Next below the cut is BOS with 459.",
    "The next busiest airport is LGA.",
    "North leads with 1,200, then South.",
    "Delays follow the weather closely.",
]


@pytest.mark.parametrize("offer", OFFERS)
def test_an_offer_in_the_last_paragraph_is_recorded_whatever_its_phrasing(offer):
    assert offered_next(f"JFK has the longest delays (18.2 min).\n\n{offer}") == offer


@pytest.mark.parametrize("statement", STATEMENTS)
def test_a_statement_about_what_comes_next_is_no_offer(statement):
    assert offered_next(f"JFK has the longest delays (18.2 min).\n\n{statement}") == ""
