"""Where the sticky assignors touch one ``TopicPartition`` object per partition: reading the members' owned
partitions into global ids, and handing the result out as one list per member.

Both have a C form (``assignment/_owned.c``, compiled with the package like the other accelerators) that
touches each object once and hands out by counting instead of sorting; the numpy forms here
(:func:`read_claims_in_python`, :func:`hand_out_in_python`) give the same answers and are the reference
the C form is tested against. ``KAFKA_PLACEMENT_NO_NATIVE=1`` turns the C form off.

``objects`` is a list over global partition ids: the members' own ``TopicPartition`` objects for claimed
partitions (reused in the output, so a rebalance of a million owned partitions builds no new tuples).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from kafka_placement.accelerators import native_allowed

try:
    from kafka_placement.assignment import _owned
except ImportError:  # not compiled: the numpy forms
    _owned = None  # type: ignore[assignment]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
T = TypeVar("T")

_enabled = _owned is not None and native_allowed()
_LIMIT = 2**62  # partition numbers beyond int64 name no partition (Member allows any int)


def read_claims_in_python(
    owned_lists: list[tuple[tuple[object, object], ...]],
    topic_index: dict[str, int],
    offsets: IntArray,
    objects: list[object],
    known: BoolArray,
) -> tuple[IntArray, IntArray, IntArray]:
    """(global ids, topic numbers, claims per member) of every member's claims that name an existing
    partition — topic in ``topic_index``, partition an int in ``[0, count)`` — in member order; the rest
    are dropped. For each, ``objects[gid]`` = the member's own object (a later member's replaces an
    earlier one's) and ``known[gid] = True``."""
    gid_parts: list[IntArray] = []
    topic_parts: list[IntArray] = []
    per_member = np.zeros(len(owned_lists), dtype=np.int64)
    counts = offsets[1:] - offsets[:-1]
    for i, owned in enumerate(owned_lists):
        if not owned:
            continue
        topics_col, parts_col = zip(*owned, strict=True)
        n = len(owned)
        tix = np.fromiter(map(topic_index.get, topics_col, repeat(-1)), dtype=np.int64, count=n)  # type: ignore[arg-type]
        parts = np.fromiter(
            (p if isinstance(p, int) and -_LIMIT < p < _LIMIT else -1 for p in parts_col),
            dtype=np.int64,
            count=n,
        )
        safe_t = np.where(tix >= 0, tix, 0)
        ok = (tix >= 0) & (parts >= 0) & (parts < (counts[safe_t] if counts.size else 0))
        gids = offsets[tix[ok]] + parts[ok]
        for gid, tp in zip(gids.tolist(), compress(owned, ok.tolist()), strict=True):
            objects[gid] = tp
        known[gids] = True
        gid_parts.append(gids)
        topic_parts.append(tix[ok])
        per_member[i] = gids.size
    if not gid_parts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), per_member
    return np.concatenate(gid_parts), np.concatenate(topic_parts), per_member


def read_claims_in_c(
    owned_lists: list[tuple[tuple[object, object], ...]],
    topic_index: dict[str, int],
    offsets: IntArray,
    objects: list[object],
    known: BoolArray,
) -> tuple[IntArray, IntArray, IntArray]:
    """:func:`read_claims_in_python`'s result from the C form (compiled only)."""
    gids, topics, per_member = _owned.read_claims(
        owned_lists, topic_index, np.ascontiguousarray(offsets, dtype=np.int64), objects, known.view(np.uint8)
    )
    return (
        np.frombuffer(gids, dtype=np.int64),
        np.frombuffer(topics, dtype=np.int64),
        np.frombuffer(per_member, dtype=np.int64),
    )


def read_claims(
    owned_lists: list[tuple[tuple[object, object], ...]],
    topic_index: dict[str, int],
    offsets: IntArray,
    objects: list[object],
    known: BoolArray,
) -> tuple[IntArray, IntArray, IntArray]:
    """:func:`read_claims_in_python`'s result, from C when the accelerator is compiled and on."""
    reader = read_claims_in_c if _enabled else read_claims_in_python
    return reader(owned_lists, topic_index, offsets, objects, known)


def hand_out_in_python(owner: IntArray, objects: Sequence[T], members: int) -> list[list[T]]:
    """List ``i`` holds ``objects[g]`` for every ``g`` with ``owner[g] == i``, in ascending ``g``
    (``owner`` -1: nobody's)."""
    small = owner.astype(np.int16 if members < 32000 else np.int32)
    order = np.argsort(small, kind="stable")
    bounds = np.cumsum(np.bincount(owner + 1, minlength=members + 1)).tolist()
    get = objects.__getitem__
    return [list(map(get, order[bounds[i] : bounds[i + 1]].tolist())) for i in range(members)]


def hand_out_in_c(owner: IntArray, objects: list[T], members: int) -> list[list[T]]:
    """:func:`hand_out_in_python`'s result from the C form (compiled only): a counting pass, no sort."""
    return _owned.hand_out(np.ascontiguousarray(owner, dtype=np.int64), objects, members)


def hand_out(owner: IntArray, objects: list[T], members: int) -> list[list[T]]:
    """:func:`hand_out_in_python`'s result, from C when the accelerator is compiled and on."""
    if _enabled:
        return hand_out_in_c(owner, objects, members)
    return hand_out_in_python(owner, objects, members)


def objects_in_c() -> bool:
    """True if :func:`read_claims` and :func:`hand_out` run in C."""
    return _enabled
