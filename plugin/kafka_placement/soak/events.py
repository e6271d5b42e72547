"""What the soak's producers, members and fault injector log, one JSON object per line.

Every event has ``ev`` (its kind) and ``t`` (``time.time()`` of the writing process: all processes run
on one host, so their clocks agree). The kinds:

- ``ack``: a producer's record acknowledged (``acks=all``) — producer, sequence, key (text or None),
  predicted partition (None when the scheme does not predict, e.g. keyless), actual partition, offset;
- ``own``: a member's ownership interval in one generation — group, member, generation, partitions,
  acquired, released (None while it still owns them; the runner closes it at the member's death);
- ``consumed``: a record a member got from poll — group, member, partition, offset, producer, sequence;
- ``committed``: an offset commit the broker accepted — group, member, partition, offset (the next
  offset to read, Kafka's convention);
- ``life``: a member process running (``up``) or not (``down``: killed, paused, closed) from time t;
- ``session-lost``: a member learned that its membership had ended (the coordinator expired its session
  or fenced its generation: a heartbeat, join or commit answered ``UNKNOWN_MEMBER_ID`` /
  ``ILLEGAL_GENERATION``) — group, member, ``since`` (its last successful heartbeat: the membership ended
  at or after it) and ``t`` (when it learned);
- ``fault``: a fault the injector applied — kind, target; for a fault on a broker or its links also
  what that broker was when it hit (``leads``: the soak partitions it led, ``coordinates``: the groups
  it coordinated; null when the cluster did not say);
- ``health``: the cluster as the runner's sampler saw it, written when it changed — the
  ``__consumer_offsets`` partitions without a leader (the group coordinators that cannot answer) and
  how many partitions of the soak topic were offline or under their min ISR.

The checkers (:mod:`kafka_placement.soak.invariants`) take these dataclasses; :func:`parse_event` reads
one JSON line into one of them (a malformed line raises :class:`~kafka_placement.errors.InvalidArgumentError`
naming it).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from kafka_placement.errors import InvalidArgumentError

__all__ = [
    "Ack",
    "Committed",
    "Consumed",
    "Event",
    "Fault",
    "Health",
    "Life",
    "Ownership",
    "RecordId",
    "SessionLost",
    "dump_event",
    "parse_event",
]

#: A record's identity across the soak: (producer, sequence).
RecordId = tuple[str, int]


@dataclass(frozen=True)
class Ack:
    producer: str
    sequence: int
    key: str | None
    predicted: int | None
    partition: int
    #: None when the client's delivery report carries none (librdkafka's for a batch the broker
    #: answered as a duplicate of an earlier attempt: acknowledged, offset not told)
    offset: int | None
    t: float

    @property
    def record(self) -> RecordId:
        return (self.producer, self.sequence)


@dataclass(frozen=True)
class Ownership:
    group: str
    member: str
    generation: int
    partitions: tuple[int, ...]
    acquired: float
    released: float | None = None

    def holds(self, partition: int, t: float) -> bool:
        still_held = self.released is None or t < self.released
        return partition in self.partitions and self.acquired <= t and still_held


@dataclass(frozen=True)
class Consumed:
    group: str
    member: str
    partition: int
    offset: int
    producer: str
    sequence: int
    t: float

    @property
    def record(self) -> RecordId:
        return (self.producer, self.sequence)


@dataclass(frozen=True)
class Committed:
    """An offset the group coordinator accepted from the member, logged at ``t`` when the member heard.
    ``sent``: when the member sent the commit, for a synchronous one (None for an asynchronous one, whose
    request may have left long before): the coordinator took a commit sent after that moment from a
    member of the group, at its current generation or member epoch (Kafka's
    ``ClassicGroup.validateOffsetCommit``, ``ConsumerGroup.validateOffsetCommit``)."""

    group: str
    member: str
    partition: int
    offset: int
    t: float
    sent: float | None = None


@dataclass(frozen=True)
class Life:
    """A member process running (``up=True``) or stopped/paused/dead (``up=False``) from ``t`` on."""

    group: str
    member: str
    up: bool
    t: float


@dataclass(frozen=True)
class SessionLost:
    """A member's own word that its membership ended: at some moment in ``[since, t]`` the group went on
    without it (``since``: its last successful heartbeat; ``t``: when it was told)."""

    group: str
    member: str
    since: float
    t: float


@dataclass(frozen=True)
class Fault:
    kind: str
    target: str
    t: float
    #: a broker fault's broker's roles when it hit (None: not a broker fault, or unknown)
    leads: tuple[int, ...] | None = None
    coordinates: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Health:
    offline_coordinators: tuple[int, ...]
    topic_offline: int
    topic_under_min_isr: int
    t: float
    #: groups whose coordinator refused them when asked (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
    #: COORDINATOR_NOT_AVAILABLE) though its partition had a leader: what the members meet then
    refused_groups: tuple[str, ...] = ()


Event = Ack | Ownership | Consumed | Committed | Life | SessionLost | Fault | Health

_KINDS: dict[str, type[Any]] = {
    "ack": Ack,
    "own": Ownership,
    "consumed": Consumed,
    "committed": Committed,
    "life": Life,
    "fault": Fault,
    "health": Health,
    "session-lost": SessionLost,
}
_NAMES = {cls: name for name, cls in _KINDS.items()}


def dump_event(event: Event) -> str:
    """One JSON line (no newline) for ``event``."""
    body = asdict(event)
    if isinstance(event, Ownership):
        body["partitions"] = list(event.partitions)
    if isinstance(event, Health):
        body["offline_coordinators"] = list(event.offline_coordinators)
        body["refused_groups"] = list(event.refused_groups)
    if isinstance(event, Committed) and event.sent is None:  # (older logs and asynchronous commits)
        del body["sent"]
    if isinstance(event, Fault):
        for key in ("leads", "coordinates"):  # only a broker fault's (older logs have neither)
            if body[key] is None:
                del body[key]
            else:
                body[key] = list(body[key])
    return json.dumps({"ev": _NAMES[type(event)], **body}, separators=(",", ":"))


def parse_event(line: str) -> Event:
    """The event a JSON line holds; :class:`InvalidArgumentError` naming the line when it is not one."""
    try:
        body = json.loads(line)
        cls = _KINDS[body.pop("ev")]
        if cls is Ownership:
            body["partitions"] = tuple(int(p) for p in body["partitions"])
        if cls is Health:
            body["offline_coordinators"] = tuple(int(p) for p in body["offline_coordinators"])
            body["refused_groups"] = tuple(str(g) for g in body.get("refused_groups", ()))  # older logs: none
        if cls is Fault:
            if body.get("leads") is not None:
                body["leads"] = tuple(int(p) for p in body["leads"])
            if body.get("coordinates") is not None:
                body["coordinates"] = tuple(str(g) for g in body["coordinates"])
        event: Event = cls(**body)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        shown = line.strip()[:120]
        raise InvalidArgumentError(
            f"not a soak event line ({type(exc).__name__}: {exc}): {shown!r}; "
            f"allowed kinds: {', '.join(sorted(_KINDS))}"
        ) from None
    return event
