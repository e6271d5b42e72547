"""What to configure for failover on the consumer group protocol: the broker's settings and a member's.

Plain functions over strings (no I/O). ``group.consumer.assignors`` keeps Kafka's own assignors first, so
the broker's default (the first) stays ``uniform`` and every other group is unaffected; only members that
ask for ``group.remote.assignor=failover`` get ours.
"""

from __future__ import annotations

from kafka_placement.assignment.rack_priority import encode_rack_priority
from kafka_placement.broker_plugin.build import ASSIGNOR_CLASS, ASSIGNOR_NAME, REPLICA_SELECTOR_CLASS

#: Kafka's default ``group.consumer.assignors`` (4.x), kept in front of ours.
KAFKA_DEFAULT_ASSIGNORS = ("uniform", "range")
#: Kafka's defaults: a member that dies holds its partitions this long on the consumer protocol.
KAFKA_DEFAULT_SESSION_TIMEOUT_MS = 45_000
#: Broker settings the controller must share: in KRaft the controller validates a group's dynamic configs
#: (``kafka-configs --entity-type groups``) against its own limits, so a broker minimum below Kafka's default
#: alone would still refuse a group-level ``consumer.session.timeout.ms`` under 45 s.
CONTROLLER_GROUP_LIMITS = frozenset(
    {
        "group.consumer.min.session.timeout.ms",
        "group.consumer.max.session.timeout.ms",
        "group.consumer.session.timeout.ms",
        "group.consumer.min.heartbeat.interval.ms",
        "group.consumer.max.heartbeat.interval.ms",
        "group.consumer.heartbeat.interval.ms",
    }
)


def broker_settings(
    *, session_timeout_ms: int | None = None, heartbeat_interval_ms: int | None = None
) -> dict[str, str]:
    """``server.properties`` entries that load the assignor and the rack-stripping replica selector.

    ``session_timeout_ms`` lowers the consumer protocol's session timeout and its minimum (both 45 s by
    default), ``heartbeat_interval_ms`` the heartbeat interval and its minimum (5 s): a dead member's
    partitions move after the session timeout, a closed member's at the survivors' next heartbeat."""
    settings = {
        "group.consumer.assignors": ",".join((*KAFKA_DEFAULT_ASSIGNORS, ASSIGNOR_CLASS)),
        "replica.selector.class": REPLICA_SELECTOR_CLASS,
    }
    if session_timeout_ms is not None:
        settings["group.consumer.min.session.timeout.ms"] = str(session_timeout_ms)
        settings["group.consumer.session.timeout.ms"] = str(session_timeout_ms)
    if heartbeat_interval_ms is not None:
        settings["group.consumer.min.heartbeat.interval.ms"] = str(heartbeat_interval_ms)
        settings["group.consumer.heartbeat.interval.ms"] = str(heartbeat_interval_ms)
    return settings


def member_settings(priority: int, rack: str | None = None) -> dict[str, str]:
    """The consumer settings of a failover member (the same keys in Java and librdkafka)."""
    return {
        "group.protocol": "consumer",
        "group.remote.assignor": ASSIGNOR_NAME,
        "client.rack": encode_rack_priority(rack, priority),
    }


def properties_text(settings: dict[str, str]) -> str:
    """``key=value`` lines that ``java.util.Properties.load`` (ISO-8859-1, as Kafka's tools read a
    ``--command-config`` file) reads back as ``settings``: backslashes, line breaks, a leading blank,
    separators in keys and every non-ASCII character are escaped; ``#`` inside a value needs nothing."""
    return "".join(
        f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}\n" for key, value in settings.items()
    )


_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}


def _escape(text: str, *, is_key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char in _NAMED:
            out.append(_NAMED[char])
        elif (char == " " and (is_key or index == 0)) or (
            is_key and (char in "=:" or (index == 0 and char in "#!"))
        ):
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) > 0x7E:
            data = char.encode("utf-16-be", "surrogatepass")
            units = (int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
            out.append("".join(f"\\u{unit:04x}" for unit in units))
        else:
            out.append(char)
    return "".join(out)
