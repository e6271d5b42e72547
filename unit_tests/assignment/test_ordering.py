"""Java string and MemberInfo ordering (AbstractPartitionAssignorTest's sorting tests)."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment.ordering import java_sorted, member_sort_key, sorted_members


def _java_compare_key(s: str) -> list[int]:
    """UTF-16 code units, as java.lang.String holds them."""
    raw = s.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]


@given(st.lists(st.text(max_size=6)))
def test_java_sorted_is_utf16_code_unit_order(strings: list[str]) -> None:
    assert java_sorted(strings) == sorted(strings, key=_java_compare_key)


def test_astral_characters_sort_like_java() -> None:
    assert java_sorted(["\uffff", "\U00010000"]) == ["\U00010000", "\uffff"]
    assert sorted(["\uffff", "\U00010000"]) == ["\uffff", "\U00010000"]  # Python differs


def _sorted(infos: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    return sorted_members(infos, key=lambda m: m)


def test_member_info_sorting_without_instance_id() -> None:
    infos: list[tuple[str, str | None]] = [("a", None), ("b", None), ("c", None)]
    assert _sorted(infos) == infos


def test_member_info_sorting_with_all_instance_ids() -> None:
    m1, m2, m3 = ("a", "y"), ("b", "z"), ("c", "x")
    assert _sorted([m1, m2, m3]) == [m3, m1, m2]


def test_member_info_sorting_some_instance_ids() -> None:
    m1, m2, m3 = ("a", None), ("b", "y"), ("c", "x")
    assert _sorted([m1, m2, m3]) == [m3, m2, m1]


def test_merge_sort_many_member_info() -> None:
    rng = random.Random(7)
    infos = [(str(i + 100), str(i + 100) if rng.random() < 0.5 else None) for i in range(100)]
    expected = [m for m in infos if m[1] is not None] + [m for m in infos if m[1] is None]
    shuffled = infos[:]
    rng.shuffle(shuffled)
    assert _sorted(shuffled) == expected
    assert member_sort_key("z", "a") < member_sort_key("a", None)
