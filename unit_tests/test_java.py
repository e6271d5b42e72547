"""kafka_placement.java: Java int, String and HashMap semantics (expected values from the JLS/JDK
documentation and hand computation; the HashMap order against a real java.util.HashMap is in
unit_tests/conformance/test_java_semantics.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.java import (
    INT_MAX,
    INT_MIN,
    is_int32,
    java_hashmap_order,
    java_hashmap_trees,
    java_mod,
    java_sorted,
    java_string_hash,
    java_string_key,
    to_int32,
)


def test_int_wraps_like_java() -> None:
    assert to_int32(INT_MAX + 1) == INT_MIN
    assert to_int32(-1) == -1
    assert to_int32(2**32 + 5) == 5
    assert is_int32(INT_MAX) and is_int32(INT_MIN)
    assert not is_int32(INT_MAX + 1) and not is_int32(True) and not is_int32(1.0)


def test_mod_truncates_toward_zero() -> None:
    assert java_mod(-7, 3) == -1  # Java: -7 % 3 == -1
    assert java_mod(7, -3) == 1
    assert java_mod(7, 3) == 1


def test_string_hash_known_values() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == INT_MIN
    # U+1F600 is the surrogate pair D83D DE00: 31 * 0xD83D + 0xDE00
    assert java_string_hash("\U0001f600") == 31 * 0xD83D + 0xDE00


def test_astral_sorts_below_private_use() -> None:
    # Java compares UTF-16 code units: D83D (the emoji's high surrogate) < E000
    assert java_sorted(["\ue000", "\U0001f600"]) == ["\U0001f600", "\ue000"]
    assert java_sorted(["b", "a"]) == ["a", "b"]


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",))), max_size=8))
def test_sorted_is_utf16_code_unit_order(strings: list[str]) -> None:
    def units(s: str) -> list[int]:
        data = s.encode("utf-16-be")
        return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]

    assert java_sorted(strings) == sorted(strings, key=units)
    assert sorted(strings, key=java_string_key) == sorted(strings, key=units)


def test_nine_and_ten_colliding_keys_only_grow_the_table() -> None:
    colliding = [
        a + b + c + d for a in ("Aa", "BB") for b in ("Aa", "BB") for c in ("Aa", "BB") for d in ("Aa", "BB")
    ]
    assert java_hashmap_trees(colliding[:10]) == []
    assert java_hashmap_order(colliding[:10]) == list(range(10))  # one bucket, insertion order
    # the 11th treeifies the bucket: the red-black tree's root moves to the front
    trees = java_hashmap_trees(colliding[:11])
    assert len(trees) == 1 and sorted(trees[0]) == list(range(11))
    order = java_hashmap_order(colliding[:11])
    assert order[1:] == [i for i in range(11) if i != order[0]]
