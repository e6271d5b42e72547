"""The iptables rules that cut one broker off the rest of the cluster, and the rules to take them back
(sans-I/O: argv lists in, argv lists out; :mod:`~kafka_placement.soak.netfault` runs them).

The test cluster's containers share the host's network (every node listens on its own 127.0.0.1 port),
so a partition is drawn with filter rules on the loopback interface:

- ``INPUT -i lo -d 127.0.0.0/8 -p tcp --dport PORT -j DROP`` for each of the broker's listener ports:
  nothing reaches it (clients, fellow brokers' replica fetches, the controller has no connection to it);
- ``OUTPUT -o lo -d 127.0.0.0/8 -m cgroup --path PATH -j DROP`` for the broker container's cgroup v2
  path: nothing its processes send leaves (its heartbeats to the controller, its own fetches from
  leaders, its answers). Sockets keep the cgroup of the process that created them, so this matches the
  broker's JVM and nothing else. Without a cgroup v2 path only the first kind is possible: a "gray"
  partition in which the broker still reaches the controller, which therefore does not fence it.

Every rule carries one comment, ``kafka-placement-soak/<pid>`` (the pid of the process that added it), so
the rules are found again by their tag alone and a later run removes only those whose process is gone.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError

__all__ = [
    "TAG_PREFIX",
    "PartitionRules",
    "cgroup_v2_path",
    "partition_rules",
    "rule_tag",
    "tagged_rule_deletions",
]

TAG_PREFIX = "kafka-placement-soak/"
IPTABLES = ("iptables", "-w")
LOOPBACK_NET = "127.0.0.0/8"
#: the "0::PATH" line of /proc/PID/cgroup (the cgroup v2 hierarchy, also present in hybrid v1 setups)
_V2_LINE = re.compile(r"^0::(/\S*)$", re.MULTILINE)
#: what a cgroup path may hold here (docker's ``/docker/<id>``, systemd's ``/system.slice/….scope``)
_SAFE_PATH = re.compile(r"/[A-Za-z0-9_.:@/-]{1,4095}")


@dataclass(frozen=True)
class PartitionRules:
    """``add`` cuts the broker off, ``delete`` (the same rules, ``-D``) takes it back."""

    add: tuple[tuple[str, ...], ...]
    delete: tuple[tuple[str, ...], ...]
    #: "full" (its own traffic dropped too) or "ports" (only what arrives at its listeners)
    isolation: str


def rule_tag(pid: int) -> str:
    if pid < 1:
        raise InvalidArgumentError(f"pid must be >= 1, got {pid}")
    return f"{TAG_PREFIX}{pid}"


def partition_rules(ports: Sequence[int], cgroup_path: str | None, tag: str) -> PartitionRules:
    """Rules isolating the broker listening on ``ports`` whose processes are in ``cgroup_path``
    (``None``: ports only)."""
    if not ports:
        raise InvalidArgumentError("a broker partition needs at least one listener port")
    for port in ports:
        if not 1 <= port <= 65535:
            raise InvalidArgumentError(f"port {port} out of range [1, 65535]")
    if not tag.startswith(TAG_PREFIX) or not tag[len(TAG_PREFIX) :].isdigit():
        raise InvalidArgumentError(f"tag {tag!r} is not {TAG_PREFIX}<pid>")
    specs: list[tuple[str, ...]] = [
        ("INPUT", "-i", "lo", "-d", LOOPBACK_NET, "-p", "tcp", "--dport", str(port))
        for port in sorted(set(ports))
    ]
    if cgroup_path is not None:
        parts = cgroup_path.split("/")[1:]
        if not _SAFE_PATH.fullmatch(cgroup_path) or any(part in ("", ".", "..") for part in parts):
            # the root cgroup holds every process of the host: matching it would cut off everything
            raise InvalidArgumentError(
                f"cgroup path {cgroup_path!r} must be a non-root absolute path of letters, digits and "
                f"_.:@/- without empty, . or .. parts"
            )
        specs.append(("OUTPUT", "-o", "lo", "-d", LOOPBACK_NET, "-m", "cgroup", "--path", cgroup_path))
    tail = ("-m", "comment", "--comment", tag, "-j", "DROP")
    return PartitionRules(
        add=tuple((*IPTABLES, "-I", *spec, *tail) for spec in specs),
        delete=tuple((*IPTABLES, "-D", *spec, *tail) for spec in specs),
        isolation="ports" if cgroup_path is None else "full",
    )


def cgroup_v2_path(proc_cgroup: str) -> str | None:
    """The cgroup v2 path in the text of ``/proc/PID/cgroup``; ``None`` when there is none or it is the
    root (a process there cannot be told apart from the rest of the host)."""
    match = _V2_LINE.search(proc_cgroup)
    if match is None or match.group(1) == "/":
        return None
    return match.group(1)


def tagged_rule_deletions(listing: str, remove: Callable[[int], bool]) -> list[tuple[str, ...]]:
    """``iptables -D`` argv for each rule of ``iptables -S`` output whose comment is exactly
    ``kafka-placement-soak/<pid>`` with ``remove(pid)`` true; every other rule is left alone."""
    out: list[tuple[str, ...]] = []
    for line in listing.splitlines():
        if not line.startswith("-A ") or TAG_PREFIX not in line:
            continue
        try:
            words = shlex.split(line)
        except ValueError:  # not a rule of ours: ours never hold quotes that do not pair
            continue
        tags = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "--comment"]
        if len(tags) != 1 or not tags[0].startswith(TAG_PREFIX):
            continue
        pid = tags[0][len(TAG_PREFIX) :]
        if pid.isdigit() and remove(int(pid)):
            out.append((*IPTABLES, "-D", *words[1:]))
    return out
