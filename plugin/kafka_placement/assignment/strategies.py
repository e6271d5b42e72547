"""One record per assignment strategy: its function, what it reads from a subscription, what it sends.

Everything that depends on a strategy's name is here, so following a failover priority from a member to
the leader is one table row: :func:`strategy` → ``encode_user_data`` on the member,
``read_subscription`` on the leader, then ``assign``. The wire formats themselves are in
:mod:`~kafka_placement.assignment.userdata`.

* ``range``/``roundrobin``: topics, rack and ``group.instance.id`` only;
* ``sticky`` (eager): previous partitions and generation from the userData (Java ``StickyAssignor``
  V1/V0), never from ``OwnedPartitions``;
* ``cooperative-sticky``: ``OwnedPartitions`` (v1+), generation from ``GenerationId`` (v2+) when present,
  else from the userData INT32 (Java ``CooperativeStickyAssignor.memberData``);
* ``failover``/``priority``: the 4-byte priority in the userData.

The leader's *assignment* userData is empty for every strategy Java has (Java's assignors send none,
and Kafka's documented migration of range/sticky/cooperative-sticky groups to the consumer protocol
relies on it), and non-empty for failover/priority: a failover group must not be converted to the
consumer protocol, whose broker-side assignor knows nothing of the priorities (KAFKA-18134 refuses the
conversion while a member's assignment userData is non-empty). See ``docs/assignment.md``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from kafka_placement.assignment.strategy_names import StrategyName, strategy_name
from kafka_placement.assignment.userdata import (
    DEFAULT_GENERATION,
    decode_failover_assignment,
    encode_cooperative_user_data,
    encode_failover_assignment,
    encode_priority,
    encode_sticky_user_data,
    read_cooperative_generation,
    read_priority,
    read_sticky_user_data,
)
from kafka_placement.errors import UserDataError
from kafka_placement.java import is_int32
from kafka_placement.vocabulary import TopicPartition

#: An assign function's type: (partitions per topic, members, **options) → member id → partitions.
AssignFunction = Callable[..., dict[str, list[TopicPartition]]]


@dataclass(frozen=True)
class MemberData:
    """What a strategy reads from one member's subscription besides topics, rack and instance id."""

    owned: list[TopicPartition]
    generation: int = DEFAULT_GENERATION
    priority: int | None = None


#: (user_data, owned_partitions (cleaned on demand), generation_id, member_id) → MemberData
SubscriptionReader = Callable[[object, Callable[[], list[TopicPartition]], object, str], MemberData]
#: (owned, generation, priority) → userData bytes, or None for a null userData
UserDataEncoder = Callable[[Iterable[TopicPartition] | None, int | None, int | None], bytes | None]
#: the priority the leader read from a member → the assignment userData the leader sends it
AssignmentUserDataEncoder = Callable[[int | None], bytes]
#: (assignment userData received, the member's own priority) → what is wrong with it, or None
AssignmentUserDataCheck = Callable[[object, int | None], str | None]


def _empty_assignment_user_data(priority: int | None) -> bytes:
    return b""


def _accept_any_assignment(user_data: object, priority: int | None) -> None:
    return None


#: What a failover member says when its assignment was not made by a failover leader of ours.
NOT_FROM_FAILOVER_LEADER = (
    "this failover member's assignment carries no failover userData, so no kafka-placement failover "
    "leader computed it: the broker converted the group to the consumer protocol and assigns it "
    "(a group.protocol=consumer member joined while no member held a failover assignment), or a member "
    "with another failover implementation leads; priorities are not guaranteed and the group is not "
    "protected against conversion"
)


def _check_failover_assignment(user_data: object, priority: int | None) -> str | None:
    if not user_data:
        return NOT_FROM_FAILOVER_LEADER
    try:
        got = decode_failover_assignment(user_data)  # type: ignore[arg-type]
    except UserDataError as exc:
        return f"the failover leader's assignment userData is unreadable ({exc})"
    if got.priority != priority:
        ranked = "last (no usable priority)" if got.priority is None else f"with priority {got.priority}"
        return f"the failover leader ranked this member {ranked}, but its priority is {priority}"
    return None


@dataclass(frozen=True)
class Strategy:
    """A strategy's row: ``module``/``function`` name its assign function (imported on first use),
    ``rack_aware`` says whether it uses partition racks (KIP-881), ``cooperative`` its rebalance
    protocol, ``read_subscription``/``encode_user_data`` its side of the wire, ``sorted_output`` whether
    its function's lists need no sorting."""

    name: StrategyName
    module: str
    function: str
    rack_aware: bool
    cooperative: bool
    read_subscription: SubscriptionReader
    encode_user_data: UserDataEncoder
    #: its function already returns each member's partitions sorted by (topic, partition)
    sorted_output: bool = False
    #: the leader's assignment userData for a member (Java's assignors: empty)
    encode_assignment_user_data: AssignmentUserDataEncoder = _empty_assignment_user_data
    #: the member's check of the assignment userData it received
    check_assignment_user_data: AssignmentUserDataCheck = _accept_any_assignment

    def assign_function(self) -> AssignFunction:
        loaded: AssignFunction = getattr(importlib.import_module(self.module), self.function)
        return loaded


def _read_nothing(
    user_data: object, owned: Callable[[], list[TopicPartition]], generation: object, member_id: str
) -> MemberData:
    return MemberData([])


def _read_sticky(
    user_data: object, owned: Callable[[], list[TopicPartition]], generation: object, member_id: str
) -> MemberData:
    data = read_sticky_user_data(user_data, member_id=member_id)
    return MemberData(
        list(data.partitions), DEFAULT_GENERATION if data.generation is None else data.generation
    )


def _read_cooperative(
    user_data: object, owned: Callable[[], list[TopicPartition]], generation: object, member_id: str
) -> MemberData:
    from_subscription = _int32(generation, DEFAULT_GENERATION)
    if from_subscription >= 0:
        return MemberData(owned(), from_subscription)
    from_user_data = read_cooperative_generation(user_data or None, member_id=member_id)
    return MemberData(owned(), DEFAULT_GENERATION if from_user_data is None else from_user_data)


def _read_priority(
    user_data: object, owned: Callable[[], list[TopicPartition]], generation: object, member_id: str
) -> MemberData:
    return MemberData([], priority=read_priority(user_data, member_id=member_id))


def _int32(value: object, default: int) -> int:
    return value if isinstance(value, int) and is_int32(value) else default


def _no_user_data(
    owned: Iterable[TopicPartition] | None, generation: int | None, priority: int | None
) -> None:
    return None


def _sticky_user_data(
    owned: Iterable[TopicPartition] | None, generation: int | None, priority: int | None
) -> bytes | None:
    return None if owned is None else encode_sticky_user_data(owned, generation)


def _cooperative_user_data(
    owned: Iterable[TopicPartition] | None, generation: int | None, priority: int | None
) -> bytes:
    return encode_cooperative_user_data(DEFAULT_GENERATION if generation is None else generation)


def _priority_user_data(
    owned: Iterable[TopicPartition] | None, generation: int | None, priority: int | None
) -> bytes | None:
    return None if priority is None else encode_priority(priority)


_ASSIGNMENT = "kafka_placement.assignment"
_FAILOVER = Strategy(
    "failover",
    f"{_ASSIGNMENT}.failover",
    "assign_failover",
    False,
    False,
    _read_priority,
    _priority_user_data,
    sorted_output=True,
    encode_assignment_user_data=encode_failover_assignment,
    check_assignment_user_data=_check_failover_assignment,
)
STRATEGY_TABLE: dict[StrategyName, Strategy] = {
    s.name: s
    for s in (
        Strategy("range", f"{_ASSIGNMENT}.range", "assign_range", True, False, _read_nothing, _no_user_data),
        Strategy(
            "roundrobin",
            f"{_ASSIGNMENT}.roundrobin",
            "assign_roundrobin",
            False,
            False,
            _read_nothing,
            _no_user_data,
        ),
        Strategy(
            "sticky",
            f"{_ASSIGNMENT}.sticky",
            "assign_sticky",
            True,
            False,
            _read_sticky,
            _sticky_user_data,
            sorted_output=True,
        ),
        Strategy(
            "cooperative-sticky",
            f"{_ASSIGNMENT}.sticky",
            "assign_cooperative_sticky",
            True,
            True,
            _read_cooperative,
            _cooperative_user_data,
            sorted_output=True,
        ),
        _FAILOVER,
        replace(_FAILOVER, name="priority"),  # the same assignor under its alias
    )
}


def strategy(name: object) -> Strategy:
    """The row of a strategy (a Kafka name, ours, or Java's class name); else ``UnknownStrategyError``."""
    return STRATEGY_TABLE[strategy_name(name)]
