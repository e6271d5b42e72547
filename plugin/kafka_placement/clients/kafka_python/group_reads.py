"""Group reads through kafka-python's admin that survive a coordinator moving or loading: ListGroups
(over every broker, or one group's coordinator), OffsetFetch, and requests to a group's coordinator
(DescribeGroups, ConsumerGroupDescribe).

kafka-python 3.0.12's admin caches each group's coordinator for its whole life and never drops the
entry on NOT_COORDINATOR (Java's admin looks the coordinator up again): once a coordinator moved (a
leader election of its ``__consumer_offsets`` partition, e.g. after a broker restart), every later
OffsetFetch of the group went to the old broker and failed. Here a retriable error drops the groups'
cached coordinators and the whole read is tried again, a bounded number of times.

Kafka's own limit stays: a coordinator just elected may answer from before the latest commits for a
moment (until its high watermark catches up; seen live as a group with no offsets under load)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from kafka.errors import KafkaTimeoutError, RequestTimedOutError

T = TypeVar("T")

#: OffsetFetch tries while a coordinator answers with a retriable error (it moved, is loading, or its
#: broker is down)
OFFSET_FETCH_TRIES = 5
#: ListGroups tries before a retriable error (a coordinator still loading its groups) is raised
LIST_GROUPS_TRIES = 10
#: tries of a request to a group's coordinator answered with a retriable group-level error code
COORDINATOR_TRIES = 5
#: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
RETRIABLE_GROUP_ERRORS = frozenset({14, 15, 16})


def forget_coordinators(admin: Any, groups: set[str]) -> None:
    """Drop the groups' cached coordinators, so the next request looks them up again. The cache is
    private (``_manager.cluster._coordinators``, keyed (key type, key)); when it is not where 3.0.x
    keeps it, nothing is dropped and a retry only waits."""
    cache = getattr(getattr(getattr(admin, "_manager", None), "cluster", None), "_coordinators", None)
    if isinstance(cache, dict):
        for key in [k for k in cache if isinstance(k, tuple) and len(k) == 2 and k[1] in groups]:
            del cache[key]


def fetch_group_offsets(
    admin: Any, groups: list[str], pause_s: float = 0.5, tries: int = OFFSET_FETCH_TRIES
) -> dict[str, Any]:
    """``admin.list_group_offsets`` of ``groups`` (group → {TopicPartition: OffsetAndMetadata}), in one
    call, tried again (coordinators looked up again) on a retriable error, at most ``tries`` times;
    other errors, and the last retriable one, are raised."""
    return _asked_again(
        lambda: dict(admin.list_group_offsets({g: None for g in groups})),
        tries,
        pause_s,
        before_again=lambda: forget_coordinators(admin, set(groups)),
    )


def list_groups(admin: Any, pause_s: float = 1.0) -> list[Any]:
    """ListGroups, retried while a broker answers with a retriable error (COORDINATOR_LOAD_IN_PROGRESS
    on a cluster just started, or after a broker restart), at most :data:`LIST_GROUPS_TRIES` times."""
    return _asked_again(lambda: list(admin.list_groups()), LIST_GROUPS_TRIES, pause_s)


def listed_by_coordinator(admin: Any, group_id: str) -> dict[str, Any] | None:
    """``group_id``'s ListGroups entry from its own coordinator (looked up afresh), or None when the
    coordinator does not list it. ListGroups over every broker asks them one after another, so a group
    whose coordinator moved during that sweep is listed by neither (the new coordinator was asked
    before it led, the old one after it resigned): run 19a's ``group describe`` said "does not exist"
    of a group with two members. Its coordinator is the one broker whose answer decides."""

    async def coordinator() -> int:
        return int(await admin._find_coordinator_id(group_id))

    def ask() -> list[Any]:
        return list(admin.list_groups(broker_ids=[admin._manager.run(coordinator)]))

    forget_coordinators(admin, {group_id})  # the cached one may be the broker that resigned
    listed = ask_group_coordinator(admin, group_id, ask, lambda answer: 0)
    return next((g for g in listed if isinstance(g, dict) and g.get("group_id") == group_id), None)


def refused_by_coordinators(admin: Any, groups: list[str]) -> dict[str, str]:
    """The groups whose coordinator refuses them now, each with kafka-python's error name: each group's
    coordinator looked up afresh (FindCoordinator) and asked its committed offsets (OffsetFetch), once.
    Refused means a coordinator error code (:data:`RETRIABLE_GROUP_ERRORS`): the broker named is not, or
    not yet, the group's coordinator, or none is available — what every member of the group meets then,
    even while the group's ``__consumer_offsets`` partition has a leader — or no answer in time (a
    coordinator too busy to answer: seed 41's coordinators took 104-109 s to load their partitions, every
    member's JoinGroup timed out meanwhile, and each sample's OffsetFetch did too). Any other failure (a
    broker that cannot be reached, no authorization) says nothing about the coordinator and is left out."""
    refused: dict[str, str] = {}
    forget_coordinators(admin, set(groups))
    for group in groups:
        try:
            admin.list_group_offsets({group: None})
        except Exception as exc:
            code = getattr(exc, "errno", None)
            unanswered = code == RequestTimedOutError.errno or isinstance(exc, KafkaTimeoutError)
            if code in RETRIABLE_GROUP_ERRORS or unanswered:
                refused[group] = type(exc).__name__
    return refused


def ask_group_coordinator(
    admin: Any, group_id: str, ask: Callable[[], Any], error_code: Callable[[Any], int], pause_s: float = 0.5
) -> Any:
    """``ask()`` (a request to ``group_id``'s coordinator), asked again with the coordinator looked up
    again while it raises a retriable error or ``error_code(answer)`` is one of
    :data:`RETRIABLE_GROUP_ERRORS`, at most :data:`COORDINATOR_TRIES` times; the last answer is
    returned (its error left to the caller) and the last error raised."""
    return _asked_again(
        ask,
        COORDINATOR_TRIES,
        pause_s,
        before_again=lambda: forget_coordinators(admin, {group_id}),
        answer_is_retriable=lambda answer: error_code(answer) in RETRIABLE_GROUP_ERRORS,
    )


def _asked_again(
    ask: Callable[[], T],
    tries: int,
    pause_s: float,
    before_again: Callable[[], None] = lambda: None,
    answer_is_retriable: Callable[[T], bool] = lambda answer: False,
) -> T:
    """``ask()``, asked again after ``before_again()`` and a pause while it raises a retriable
    KafkaError or its answer is retriable, at most ``tries`` times: the last answer is returned and
    the last error raised; other errors are raised at once."""
    from kafka.errors import KafkaError

    for _ in range(tries - 1):
        try:
            answer = ask()
        except KafkaError as e:
            if not getattr(e, "retriable", False):
                raise
        else:
            if not answer_is_retriable(answer):
                return answer
        before_again()
        time.sleep(pause_s)
    return ask()  # the last try: whatever it answers or raises is the caller's
