"""The dealing helper: the C form equals the pure-Python one, and both equal dealing done by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.assignment import dealing
from kafka_placement.assignment.dealing import deal, deal_in_python

needs_c = pytest.mark.skipif(
    dealing._dealing is None, reason="the C accelerator is not compiled (pure install)"
)


def dealt_by_hand(sources: list[list[object]], members: int) -> list[list[object]]:
    """The definition, one item at a time: item k of the concatenation to hand k % members."""
    hands: list[list[object]] = [[] for _ in range(members)]
    k = 0
    for source in sources:
        for item in source:
            hands[k % members].append(item)
            k += 1
    return hands


sources_st = st.lists(st.lists(st.integers(-5, 1000), max_size=30), max_size=12)


@given(sources=sources_st, members=st.integers(1, 40))
@settings(max_examples=300, deadline=None)
def test_python_form_deals_like_cards(sources: list[list[object]], members: int) -> None:
    assert deal_in_python(sources, members) == dealt_by_hand(sources, members)


@needs_c
@given(sources=sources_st, members=st.integers(1, 40))
@settings(max_examples=300, deadline=None)
def test_c_form_equals_the_python_form(sources: list[list[object]], members: int) -> None:
    assert dealing._dealing.deal(sources, members) == deal_in_python(sources, members)


@needs_c
def test_c_form_shares_the_items_and_counts_their_references() -> None:
    import sys

    item = ("t", 1)
    before = sys.getrefcount(item)
    hands = dealing._dealing.deal([[item] * 7, [item] * 3], 4)
    assert [len(hand) for hand in hands] == [3, 3, 2, 2]
    assert all(x is item for hand in hands for x in hand)
    assert sys.getrefcount(item) == before + 10
    del hands
    assert sys.getrefcount(item) == before


@needs_c
@pytest.mark.parametrize(
    ("sources", "members", "error", "text"),
    [
        ([[1]], 0, ValueError, "members must be >= 1, got 0"),
        ([[1]], -3, ValueError, "members must be >= 1, got -3"),
        ([[1], (2,)], 2, TypeError, "sources[1] must be a list, got tuple"),
        (([1],), 2, TypeError, "must be list"),
    ],
)
def test_c_form_rejects_bad_input(sources: object, members: int, error: type, text: str) -> None:
    with pytest.raises(error, match=text.replace("[", r"\[").replace("]", r"\]")):
        dealing._dealing.deal(sources, members)  # type: ignore[arg-type]


@pytest.mark.parametrize("members", [0, -1])
def test_python_form_rejects_no_members(members: int) -> None:
    with pytest.raises(ValueError, match=f"members must be >= 1, got {members}"):
        deal_in_python([[1]], members)


def test_deal_uses_the_c_form_when_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    assert dealing.dealing_in_c() is (dealing._dealing is not None)
    monkeypatch.setattr(dealing, "_enabled", False)
    assert deal([[1, 2, 3]], 2) == [[1, 3], [2]]
