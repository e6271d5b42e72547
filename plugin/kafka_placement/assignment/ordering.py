"""Java's ordering of member ids, instance ids and topic names.

Java sorts strings with ``String.compareTo``, which compares UTF-16 code units; Python compares
code points. The two orders agree unless a string holds a character above U+FFFF (a surrogate
pair in Java sorts below U+E000..U+FFFF, in Python above). Comparing the UTF-16-BE encodings
byte by byte is exactly Java's order, so that is the key whenever such a character occurs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from kafka_placement.vocabulary import TopicPartition

T = TypeVar("T")
_new_tuple = tuple.__new__

_BMP_MAX = 0xFFFF


def _has_astral(text: str) -> bool:
    return not text.isascii() and any(ord(ch) > _BMP_MAX for ch in text)


def java_string_key(text: str) -> bytes:
    """A sort key that orders strings exactly like Java's ``String.compareTo``."""
    return text.encode("utf-16-be", "surrogatepass")


def java_sorted(strings: Iterable[str]) -> list[str]:
    """``strings`` sorted the way ``Collections.sort`` sorts Java strings."""
    items = list(strings)
    if any(_has_astral(s) for s in items):
        return sorted(items, key=java_string_key)
    return sorted(items)


def member_sort_key(member_id: str, group_instance_id: str | None) -> tuple[int, bytes]:
    """Java ``AbstractPartitionAssignor.MemberInfo`` order: static members first (by
    ``group.instance.id``), then dynamic members (by member id)."""
    if group_instance_id is not None:
        return (0, java_string_key(group_instance_id))
    return (1, java_string_key(member_id))


def sorted_members(members: Iterable[T], key: Callable[[T], tuple[str, str | None]]) -> list[T]:
    """Members sorted in Java ``MemberInfo`` order; ``key`` returns (member id, instance id)."""
    return sorted(members, key=lambda m: member_sort_key(*key(m)))


def topic_partitions(topic: str, partitions: Iterable[int]) -> list[TopicPartition]:
    """``[TopicPartition(topic, p) for p in partitions]`` without the NamedTuple constructor's
    Python-level call per item (the hot loop of assigning a million partitions)."""
    return [_new_tuple(TopicPartition, (topic, p)) for p in partitions]
