"""Types of the optional C form of kafka_placement.assignment.dealing (``_dealing.c``)."""

from typing import TypeVar

_T = TypeVar("_T")

def deal(sources: list[list[_T]], members: int, /) -> list[list[_T]]: ...
