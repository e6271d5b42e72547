"""Dealing items to members like cards: item k of the concatenated lists goes to member k % members.

A fresh sticky group with equal subscriptions is exactly this (member i takes every M-th partition from
i). The optional C form (``_dealing.c``, compiled with the package like the hashing accelerator) touches
each item once; :func:`deal_in_python` is the fallback and the reference the C form is tested against.
``KAFKA_PLACEMENT_NO_NATIVE=1`` turns the C form off, as it does the hashing one.
"""

from __future__ import annotations

from typing import TypeVar

from kafka_placement.accelerators import native_allowed

try:
    from kafka_placement.assignment import _dealing
except ImportError:  # not compiled: the Python form
    _dealing = None  # type: ignore[assignment]

T = TypeVar("T")

_enabled = _dealing is not None and native_allowed()


def deal_in_python(sources: list[list[T]], members: int) -> list[list[T]]:
    """Item k of the concatenation of ``sources`` to list ``k % members``, in order (``members`` >= 1)."""
    if members < 1:
        raise ValueError(f"deal: members must be >= 1, got {members}")
    flat: list[T] = []
    for source in sources:
        flat.extend(source)
    return [flat[i::members] for i in range(members)]


def deal(sources: list[list[T]], members: int) -> list[list[T]]:
    """:func:`deal_in_python`'s result, from C when the accelerator is compiled and on."""
    if _enabled:
        return _dealing.deal(sources, members)
    return deal_in_python(sources, members)


def dealing_in_c() -> bool:
    """True if :func:`deal` runs in C."""
    return _enabled
