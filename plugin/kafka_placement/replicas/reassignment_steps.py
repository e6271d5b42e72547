"""One replica at a time: a partition's move split into steps that each add at most one replica.

Kafka holds ``A ∪ B`` replicas while a partition moves from list ``A`` to list ``B``; moving all
replicas at once can double a partition's copies (and its disk and fetch load) for the whole copy.
Here each step drops one old replica and adds one new one in its place, so while a step runs the
partition holds at most one replica more than before it. Submitted one after another, the steps end
at the target exactly (the last step *is* the target list, so its order, and thus the preferred leader,
is the plan's).

Pairing (which old replica a new one replaces): a new replica replaces one on its own rack where there
is one (so the rack spread of the steps stays that of the lists), then the old replicas in their list
order. A change of replication factor adds (or removes) the unpaired replicas in single steps;
removals go first (the partition never grows before it shrinks). The current preferred leader is
replaced or removed in the last step only: until then it leads every step and is the source every new
replica copies from (so the plain apply's throttles fit every step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_placement.errors import InvalidArgumentError

#: Kafka's own reassignment reader refuses longer lists long before this; a bound on the work.
MAX_REPLICAS = 1024


def _check(replicas: Sequence[int], what: str) -> list[int]:
    ids = list(replicas)
    if not 1 <= len(ids) <= MAX_REPLICAS:
        raise InvalidArgumentError(f"{what} must hold 1..{MAX_REPLICAS} replicas, got {len(ids)}")
    for b in ids:
        if isinstance(b, bool) or not isinstance(b, int) or not 0 <= b <= 2**31 - 1:
            raise InvalidArgumentError(f"{what} must be broker ids in [0, 2147483647], got {b!r:.40}")
    if len(set(ids)) != len(ids):
        raise InvalidArgumentError(f"{what} names a broker twice: {ids!r:.80}")
    return ids


def _pairs(
    drops: list[int], adds: list[int], racks: Mapping[int, str | None]
) -> list[tuple[int | None, int]]:
    """Each new replica with the old one it replaces (``None``: a plain addition), in target order."""
    free = list(drops)
    paired: dict[int, int] = {}
    for add in adds:  # first pass: same rack
        rack = racks.get(add)
        if rack is None:
            continue
        same = next((d for d in free if racks.get(d) == rack), None)
        if same is not None:
            paired[add] = same
            free.remove(same)
    for add in adds:  # then whatever is left, in order
        if add not in paired and free:
            paired[add] = free.pop(0)
    return [(paired.get(add), add) for add in adds]


def one_replica_steps(
    current: Sequence[int], target: Sequence[int], racks: Mapping[int, str | None] | None = None
) -> list[tuple[int, ...]]:
    """The replica lists to submit one after another to move ``current`` to ``target``.

    Empty when ``current == target``; a single step when the sets are equal (a reorder copies no data)
    or one replica changes. Every step is a list of distinct brokers from ``current ∪ target``;
    ``|step_{k-1} ∪ step_k| ≤ |step_{k-1}| + 1`` (with ``step_{-1} = current``); the last step equals
    ``target``.
    """
    now = _check(current, "the current replica list")
    goal = _check(target, "the target replica list")
    if now == goal:
        return []
    racks = racks or {}
    leader = now[0]
    drops = [b for b in now if b not in goal and b != leader] + ([leader] if leader not in goal else [])
    adds = [b for b in goal if b not in now]
    # the preferred leader is replaced (or removed) in the last step only: until then it leads and is
    # every follower's source, as the throttles assume
    pairs = sorted(_pairs(drops, adds, racks), key=lambda pair: pair[0] == leader)
    paired = {d for d, _ in pairs if d is not None}
    unpaired = [d for d in drops if d not in paired]
    steps: list[tuple[int, ...]] = []
    state = now
    for gone in (d for d in unpaired if d != leader):  # a lower replication factor: shrink first
        state = [b for b in state if b != gone]
        steps.append(tuple(state))
    for old, add in pairs:
        state = [*state, add] if old is None else [add if b == old else b for b in state]
        steps.append(tuple(state))
    if leader in unpaired:
        state = [b for b in state if b != leader]
        steps.append(tuple(state))
    if steps:
        steps[-1] = tuple(goal)  # same brokers as ``state``: the target's order and preferred leader
    else:
        steps.append(tuple(goal))  # a reorder only
    return steps
