"""Types of the optional C form of kafka_placement.assignment.sticky.partition_objects (``_owned.c``)."""

from typing import Any, TypeVar

_T = TypeVar("_T")

def read_claims(
    owned_lists: list[tuple[tuple[object, object], ...]],
    topic_index: dict[str, int],
    offsets: Any,
    objects: list[object],
    known: Any,
    /,
) -> tuple[bytearray, bytearray, bytearray]: ...
def hand_out(owner: Any, objects: list[_T], members: int, /) -> list[list[_T]]: ...
