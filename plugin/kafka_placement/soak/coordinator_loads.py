"""Kafka's own group coordinator failing to load a ``__consumer_offsets`` partition, read from the
brokers' logs (sans-I/O).

Seen in the PLAINTEXT run of seed 50 (docs/reliability.md): Kafka 4.4.0's group coordinator could not
replay ``__consumer_offsets-11`` — ``IllegalStateException: Cannot set the epoch of <partition> to 2
because the partition is still owned at epoch 2`` — on any broker that became its leader (8 failed loads
on brokers 2 and 4), so every group stored there had no coordinator for the run's last 17 minutes.
Before that, under the machine's load, one broker had finished two loads of the partition 4 s apart
(leader epochs 10 and 12), and after each one member of the same group had joined at group epoch 2 and
been given all 24 partitions. The class of failure is KAFKA-19862 ("Group coordinator loading may fail
when there is concurrent compaction"); 4.4.0 carries that fix and still failed here, in the check that
sets a partition's epoch. No client can do anything about it: the verdict names it, so that what those
groups left unconsumed is read as the broker's doing. (The first time was seed 37, secured:
``__consumer_offsets-8``, "still owned at epoch 73".)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CoordinatorLoadFailure", "coordinator_load_failures"]

#: the line Kafka's ``CoordinatorRuntime`` logs when a load fails (Kafka 4.x's log4j layout)
_LOAD_FAILED = re.compile(
    r"^\[(?P<at>[^\]]+)\] ERROR \[GroupCoordinator id=(?P<broker>\d+)\] Failed to load metadata from "
    r"(?P<partition>__consumer_offsets-\d+) with epoch \d+ due to (?P<reason>.*)$"
)
#: a load stopped because the partition's leadership moved on: the next leader loads it (not a failure)
_LEADERSHIP_MOVED = "Stopped loading records from"
_CAUSED_BY = re.compile(r"^Caused by: (?P<cause>.*)$")
_GROUP = re.compile(r"groupId='([^']*)'")
#: how far after the failure its stack trace is searched for the root cause
_TRACE_LINES = 80
#: how much of a cause the summary keeps
CAUSE_CHARS = 300


@dataclass(frozen=True)
class CoordinatorLoadFailure:
    partition: str  # __consumer_offsets-N
    brokers: tuple[int, ...]  # the brokers whose coordinator failed to load it
    times: int  # how many loads failed
    first: str  # the first failure's time, as the broker logged it
    last: str
    groups: tuple[str, ...]  # the groups the failing records belonged to
    cause: str  # the root cause of the first failure (its last "Caused by:", else the reason)


def coordinator_load_failures(logs: Mapping[str, str]) -> list[CoordinatorLoadFailure]:
    """Every ``__consumer_offsets`` partition a group coordinator failed to load, in the node logs
    ``logs`` (node name → its log text), in order of partition."""
    seen: dict[str, list[tuple[str, int, str, str]]] = {}  # partition → (at, broker, group, cause)
    for text in logs.values():
        lines = text.splitlines()
        for index, line in enumerate(lines):
            matched = _LOAD_FAILED.match(line)
            if matched is None or matched["reason"].startswith(_LEADERSHIP_MOVED):
                continue
            cause = matched["reason"]
            for follow in lines[index + 1 : index + 1 + _TRACE_LINES]:
                if follow.startswith("["):  # the next log entry: the trace is over
                    break
                caused = _CAUSED_BY.match(follow)
                if caused is not None:
                    cause = caused["cause"]
            group = _GROUP.search(matched["reason"])
            seen.setdefault(matched["partition"], []).append(
                (matched["at"], int(matched["broker"]), group[1] if group else "", cause[:CAUSE_CHARS])
            )
    failures = []
    for partition, entries in sorted(seen.items(), key=lambda item: int(item[0].rsplit("-", 1)[1])):
        entries.sort()
        failures.append(
            CoordinatorLoadFailure(
                partition=partition,
                brokers=tuple(sorted({broker for _at, broker, _g, _c in entries})),
                times=len(entries),
                first=entries[0][0],
                last=entries[-1][0],
                groups=tuple(sorted({group for _at, _b, group, _c in entries if group})),
                cause=entries[0][3],
            )
        )
    return failures
