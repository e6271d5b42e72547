"""How a failover priority travels on Kafka's consumer group protocol (KIP-848): inside ``client.rack``.

On that protocol a member sends no userData: the broker's assignor sees only each member's rack id,
instance id and subscribed topic ids. The rack id is the one field every client sets with a standard
setting (Java ``client.rack``, librdkafka ``client.rack``) on a dynamic member, so a member that closes
leaves at once (an instance id would make it static, keeping its partitions until its session times
out). The value is ``"<rack>#priority=<n>"``, or ``"#priority=<n>"`` with no rack. ``#`` does not occur
in cloud zone ids or Hadoop-style rack paths, so the real rack is everything before the last ``#``; our
broker-side assignor and replica selector read the rack that way, which keeps rack-aware placement and
fetch-from-follower working. The same rule is implemented in Java for the broker
(``FailoverServerAssignor``); this module is the reference both are tested against.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.vocabulary import check_priority

#: Separates the real rack from the priority in ``client.rack``.
SEPARATOR = "#priority="
#: The longest ``client.rack`` we read; longer values are not a priority (a broker logs and ranks last).
MAX_RACK_CHARS = 1024
_MIN, _MAX = -(2**31), 2**31 - 1


@dataclass(frozen=True)
class RackPriority:
    """What one member's ``client.rack`` says: its real rack, its priority, and why a priority was unusable.

    ``problem`` is ``None`` when the value was well formed (with or without a priority)."""

    rack: str | None
    priority: int | None
    problem: str | None = None


def encode_rack_priority(rack: str | None, priority: int) -> str:
    """The ``client.rack`` value carrying ``priority`` (and ``rack``, when the member has one)."""
    check_priority(priority)
    if rack is not None and (not isinstance(rack, str) or "#" in rack):
        raise InvalidArgumentError(f"rack must be a string without '#', got {rack!r}")
    return f"{rack or ''}{SEPARATOR}{priority}"


def decode_rack_priority(value: str | None) -> RackPriority:
    """Never raises: a malformed priority ranks the member last (``priority=None``) and says why."""
    if value is None or value == "":
        return RackPriority(None, None)
    if not isinstance(value, str):
        return RackPriority(None, None, f"client.rack is not a string: {type(value).__name__}")
    if len(value) > MAX_RACK_CHARS:
        return RackPriority(None, None, f"client.rack is {len(value)} characters (at most {MAX_RACK_CHARS})")
    cut = value.rfind(SEPARATOR)
    if cut < 0:
        return RackPriority(value, None)
    rack = value[:cut] or None
    digits = value[cut + len(SEPARATOR) :]
    body = digits[1:] if digits[:1] == "-" else digits
    if not body or not body.isascii() or not body.isdigit() or len(body) > 10:
        return RackPriority(rack, None, f"priority {digits!r} is not an integer")
    number = int(digits)
    if not _MIN <= number <= _MAX:
        return RackPriority(rack, None, f"priority {digits} is out of range [{_MIN}, {_MAX}]")
    return RackPriority(rack, number)
