"""Wire codecs of subscription userData: failover priority, Java ``StickyAssignor`` V0/V1 and
``CooperativeStickyAssignor`` generation.

Every decoder is bounded: lengths and counts are checked against the bytes that remain *before*
anything is allocated, and the whole blob is capped (``max_bytes``). Two flavours:

* ``decode_*`` are strict and raise :class:`~kafka_placement.errors.UserDataError`, whose message
  is Java's ``SchemaException`` text where Java has one;
* ``read_*`` never raise: they return Java's fallback for unparseable data (sticky: no owned
  partitions and generation -1; cooperative: generation -1; priority: ``None``, ranking lowest)
  and log a warning naming the problem. The group leader uses these.

Formats (Kafka protocol primitives, big-endian): STRING = INT16 length + UTF-8 bytes;
``[T]`` = INT32 count + items.

* priority (the failover assignor): one INT32.
* sticky V0: ``[ {topic STRING, partitions [INT32]} ]``; V1 = V0 then ``generation INT32``.
  Java reads V1 first, then V0; bytes after the last field are ignored, so an array followed by
  fewer than 4 bytes reads as V0.
* cooperative-sticky: one INT32 generation.
* failover *assignment* userData (leader → member, ours): ``version INT16`` (0), ``ranked INT8``
  (1 when the leader read a priority from this member, 0 when it ranked the member last for having
  none), ``priority INT32`` (0 when not ranked). Never empty, on purpose: Kafka refuses to convert a
  classic group to the consumer protocol while a member's assignment userData is non-empty
  (KAFKA-18134), and a converted group would be assigned by the broker, dropping the priorities.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable
from typing import NamedTuple

from kafka_placement.assignment.ordering import topic_partitions
from kafka_placement.errors import UserDataError
from kafka_placement.vocabulary import TopicPartition

log = logging.getLogger(__name__)

#: Java's ``DEFAULT_GENERATION`` (``AbstractStickyAssignor``): generation of unparseable data.
DEFAULT_GENERATION = -1
#: Largest userData blob we decode. 8 MiB holds ~2 million owned partitions; a JoinGroup bigger
#: than that is hostile or broken, and refusing it bounds the leader's memory.
MAX_USER_DATA_BYTES = 8 * 1024 * 1024

_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT16_MAX = 2**15 - 1


class StickyUserData(NamedTuple):
    """Decoded Java ``StickyAssignor`` userData: the member's previous partitions and the
    generation they were assigned in (``None`` for V0, which has no generation)."""

    partitions: tuple[TopicPartition, ...]
    generation: int | None


_EMPTY_STICKY = StickyUserData((), None)


def _as_bytes(data: object, what: str, max_bytes: int) -> bytes:
    if isinstance(data, bytes):
        blob = data
    elif isinstance(data, bytearray | memoryview):
        blob = bytes(data)
    else:
        raise UserDataError(f"{what} userData must be bytes, got {type(data).__name__}")
    if len(blob) > max_bytes:
        raise UserDataError(
            f"{what} userData is {len(blob)} bytes, larger than the allowed maximum of {max_bytes} bytes"
        )
    return blob


def _check_int32(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserDataError(f"{name} must be an int in [{_INT32_MIN}, {_INT32_MAX}], got {value!r}")
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise UserDataError(f"{name} {value} is out of range [{_INT32_MIN}, {_INT32_MAX}] (an INT32)")
    return value


class _Reader:
    """A cursor over a blob; every read checks the remaining length first."""

    __slots__ = ("data", "offset")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.offset = 0

    def remaining(self) -> int:
        return len(self.data) - self.offset

    def int32(self) -> int:
        if self.remaining() < 4:
            raise UserDataError(
                f"Error reading INT32 at offset {self.offset}, only {self.remaining()} bytes available"
            )
        (value,) = _INT32.unpack_from(self.data, self.offset)
        self.offset += 4
        return int(value)

    def int16(self) -> int:
        if self.remaining() < 2:
            raise UserDataError(
                f"Error reading INT16 at offset {self.offset}, only {self.remaining()} bytes available"
            )
        (value,) = _INT16.unpack_from(self.data, self.offset)
        self.offset += 2
        return int(value)

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise UserDataError(f"String length {length} cannot be negative")
        if length > self.remaining():
            raise UserDataError(
                f"Error reading string of length {length}, only {self.remaining()} bytes available"
            )
        raw = self.data[self.offset : self.offset + length]
        self.offset += length
        # Java's new String(bytes, UTF_8) replaces malformed input instead of failing.
        return raw.decode("utf-8", "replace")

    def array_size(self, min_item_bytes: int) -> int:
        size = self.int32()
        if size < 0:
            raise UserDataError(f"Array size {size} cannot be negative")
        if size > self.remaining():
            raise UserDataError(
                f"Error reading array of size {size}, only {self.remaining()} bytes available"
            )
        if size * min_item_bytes > self.remaining():
            # Java would fail a little later with a buffer underflow; fail before allocating.
            raise UserDataError(
                f"Error reading array of size {size}, only {self.remaining()} bytes available "
                f"(each item takes at least {min_item_bytes} bytes)"
            )
        return size

    def int32_array(self) -> tuple[int, ...]:
        size = self.array_size(4)
        values = struct.unpack_from(f">{size}i", self.data, self.offset)
        self.offset += 4 * size
        return values


# --- failover priority ----------------------------------------------------------------------
def encode_priority(priority: int) -> bytes:
    """The 4-byte big-endian signed int a failover member puts in its userData."""
    return _INT32.pack(_check_int32(priority, "priority"))


def decode_priority(data: bytes | None, *, max_bytes: int = MAX_USER_DATA_BYTES) -> int | None:
    """The priority in a member's userData; ``None`` when the member sent none (null or empty).

    Raises :class:`UserDataError` unless the userData is exactly 4 bytes.
    """
    if data is None:
        return None
    blob = _as_bytes(data, "priority", max_bytes)
    if not blob:
        return None
    if len(blob) != 4:
        raise UserDataError(
            f"priority userData must be exactly 4 bytes (a big-endian INT32), got {len(blob)} bytes"
        )
    return int(_INT32.unpack(blob)[0])


def read_priority(data: object, *, member_id: str = "?") -> int | None:
    """Like :func:`decode_priority` but never raises: bad data → ``None`` (ranks lowest) and a
    warning."""
    try:
        return decode_priority(data)  # type: ignore[arg-type]
    except UserDataError as exc:
        log.warning(
            "member %s sent unusable failover priority userData (%s); ranking it lowest", member_id, exc
        )
        return None


# --- failover assignment userData (leader → member) -------------------------------------------
FAILOVER_ASSIGNMENT_VERSION = 0
_FAILOVER_ASSIGNMENT = struct.Struct(">hbi")


class FailoverAssignment(NamedTuple):
    """What a failover leader tells a member besides its partitions: the priority it ranked the
    member with (``None``: it found no usable priority and ranked the member last)."""

    priority: int | None


def encode_failover_assignment(priority: int | None) -> bytes:
    """The failover leader's assignment userData for a member it read ``priority`` from (7 bytes)."""
    if priority is None:
        return _FAILOVER_ASSIGNMENT.pack(FAILOVER_ASSIGNMENT_VERSION, 0, 0)
    return _FAILOVER_ASSIGNMENT.pack(FAILOVER_ASSIGNMENT_VERSION, 1, _check_int32(priority, "priority"))


def decode_failover_assignment(data: bytes, *, max_bytes: int = MAX_USER_DATA_BYTES) -> FailoverAssignment:
    """Strict decode; bytes after the fields are ignored (room for a later version's fields).

    Raises :class:`UserDataError` for empty or short data, an unknown version or flag."""
    blob = _as_bytes(data, "failover assignment", max_bytes)
    if len(blob) < _FAILOVER_ASSIGNMENT.size:
        raise UserDataError(
            f"failover assignment userData must be at least {_FAILOVER_ASSIGNMENT.size} bytes, "
            f"got {len(blob)}"
        )
    version, ranked, priority = _FAILOVER_ASSIGNMENT.unpack_from(blob)
    if version < FAILOVER_ASSIGNMENT_VERSION:
        raise UserDataError(f"failover assignment userData version {version} is negative")
    if ranked not in (0, 1):
        raise UserDataError(f"failover assignment userData flag {ranked} is not 0 or 1")
    return FailoverAssignment(int(priority) if ranked else None)


# --- Java StickyAssignor userData V0/V1 -------------------------------------------------------
def encode_sticky_user_data(partitions: Iterable[TopicPartition], generation: int | None) -> bytes:
    """Java ``StickyAssignor`` userData: V1 with ``generation``, V0 when it is ``None``.

    Partitions are grouped by topic (topics sorted; partition order kept, like Java's
    ``groupPartitionsByTopic``).
    """
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        topic, partition = tp
        if not isinstance(topic, str):
            raise UserDataError(f"topic must be a str, got {topic!r}")
        by_topic.setdefault(topic, []).append(_check_int32(partition, f"partition of topic {topic!r}"))
    out = bytearray(_INT32.pack(len(by_topic)))
    for topic in sorted(by_topic):
        raw = topic.encode("utf-8")
        if len(raw) > _INT16_MAX:
            raise UserDataError(f"String length {len(raw)} is larger than the maximum string length.")
        out += _INT16.pack(len(raw)) + raw
        parts = by_topic[topic]
        out += _INT32.pack(len(parts)) + struct.pack(f">{len(parts)}i", *parts)
    if generation is not None:
        out += _INT32.pack(_check_int32(generation, "generation"))
    return bytes(out)


def decode_sticky_user_data(data: bytes, *, max_bytes: int = MAX_USER_DATA_BYTES) -> StickyUserData:
    """Strict decode of Java ``StickyAssignor`` userData (V1, else V0).

    Empty data decodes to no partitions and no generation (Java: member without userData).
    Raises :class:`UserDataError` when neither V1 nor V0 parses, or the blob is too large.
    """
    blob = _as_bytes(data, "sticky", max_bytes)
    if not blob:
        return _EMPTY_STICKY
    reader = _Reader(blob)
    partitions: list[TopicPartition] = []
    # topic entry: INT16 length + INT32 partition count at least.
    for _ in range(reader.array_size(6)):
        topic = reader.string()
        partitions.extend(topic_partitions(topic, reader.int32_array()))
    generation = reader.int32() if reader.remaining() >= 4 else None
    return StickyUserData(tuple(partitions), generation)


def read_sticky_user_data(data: object, *, member_id: str = "?") -> StickyUserData:
    """Java's lenient read: ``None``/empty → no partitions, no generation; unparseable →
    no partitions and generation -1 (``DEFAULT_GENERATION``), with a warning."""
    if data is None:
        return _EMPTY_STICKY
    try:
        return decode_sticky_user_data(data)  # type: ignore[arg-type]
    except UserDataError as exc:
        log.warning(
            "member %s sent unparseable sticky userData (%s); ignoring its previous assignment",
            member_id,
            exc,
        )
        return StickyUserData((), DEFAULT_GENERATION)


# --- CooperativeStickyAssignor userData -------------------------------------------------------
def encode_cooperative_user_data(generation: int) -> bytes:
    """Java ``CooperativeStickyAssignor`` userData: one INT32 generation."""
    return _INT32.pack(_check_int32(generation, "generation"))


def decode_cooperative_user_data(data: bytes, *, max_bytes: int = MAX_USER_DATA_BYTES) -> int:
    """Strict decode of the cooperative generation; trailing bytes are ignored like Java."""
    blob = _as_bytes(data, "cooperative-sticky", max_bytes)
    return _Reader(blob).int32()


def read_cooperative_generation(data: object, *, member_id: str = "?") -> int | None:
    """Java's lenient read: ``None`` → ``None`` (no generation sent); unparseable → -1."""
    if data is None:
        return None
    try:
        return decode_cooperative_user_data(data)  # type: ignore[arg-type]
    except UserDataError as exc:
        log.warning(
            "member %s sent unparseable cooperative-sticky userData (%s); using generation -1", member_id, exc
        )
        return DEFAULT_GENERATION
