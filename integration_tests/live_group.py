"""A kafka-python group on the live cluster, seen from the test: its member processes and the
group's state read back through the admin API.

:class:`Worker` runs ``kafka_python_member.py`` (one of our assignors in a real kafka-python
consumer). :func:`describe_group` reads every member's subscription — the leader's exact input —
and assignment (DescribeGroups); :func:`predicted_from_description` runs
``kafka_placement.assignment.assign`` on that same input; :func:`stable_group` waits until the
group settled, rescuing members kafka-python left outside it.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from member_process import Json, MemberProcess  # this directory is on sys.path

SESSION_TIMEOUT_MS = 6000  # kafka_python_member's default
MEMBER_SCRIPT = Path(__file__).with_name("kafka_python_member.py")


class Worker(MemberProcess):
    """A kafka-python consumer subprocess running one of our assignors."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        name: str,
        topics: list[str],
        strategy: str,
        log_dir: str,
        **extra: Any,
    ):
        self.name = name
        self.config = {
            "bootstrap": bootstrap,
            "group": group,
            "name": name,
            "topics": topics,
            "strategy": strategy,
            **extra,
        }
        # Under pytest's basetemp (pytest keeps the last three runs), not loose in /tmp.
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115
            prefix=f"asg-live-{name}-", suffix=".log", delete=False, dir=log_dir
        )
        super().__init__([sys.executable, str(MEMBER_SCRIPT), json.dumps(self.config)], stderr=self.log)

    def assignment(self) -> set[tuple[str, int]]:
        event = self.last("assignment")
        return {(t, p) for t, p in event["parts"]} if event else set()

    def log_tail(self, lines: int = 15) -> str:
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-lines:])


PLAIN_CONSUMER_PROTOCOL_MEMBER = Path(__file__).with_name("plain_consumer_protocol_member.py")


class ConsumerProtocolMember(MemberProcess):
    """``plain_consumer_protocol_member.py``: a plain confluent-kafka consumer on the consumer protocol
    (``conf``: more librdkafka settings, e.g. ``client.rack``, ``group.remote.assignor``)."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        name: str,
        topic: str,
        log_dir: Path,
        conf: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed with the process's output
            prefix=f"cp-{name}-", suffix=".log", delete=False, dir=log_dir
        )
        config = {"bootstrap": bootstrap, "group": group, "name": name, "topics": [topic], "conf": conf or {}}
        super().__init__(
            [sys.executable, str(PLAIN_CONSUMER_PROTOCOL_MEMBER), json.dumps(config)], stderr=self.log
        )

    def owned(self) -> set[int]:
        event = self.last("assignment")
        return set(event["parts"]) if event else set()

    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.snapshot() if e["ev"] == "error"]


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _pairs(entries: Any) -> list[tuple[str, int]]:
    return sorted((_get(e, "topic"), p) for e in (entries or []) for p in (_get(e, "partitions") or []))


def describe_group(admin: Any, group: str) -> Json:
    """DescribeGroups, normalised: state, protocol, and per member its subscription and assignment."""
    raw = admin.describe_groups([group])[group]
    members = {}
    for m in raw.get("members", []):
        meta = m.get("member_metadata")
        assignment = m.get("member_assignment")
        members[m["member_id"]] = {
            "client_id": m.get("client_id"),
            "group_instance_id": m.get("group_instance_id"),
            "topics": list(_get(meta, "topics") or []),
            "user_data": _get(meta, "user_data"),
            "owned": _pairs(_get(meta, "owned_partitions")),
            "generation_id": _get(meta, "generation_id", -1),
            "rack_id": _get(meta, "rack_id"),
            "assigned": _pairs(_get(assignment, "assigned_partitions")),
        }
    return {"state": raw.get("group_state"), "protocol": raw.get("protocol_data"), "members": members}


def _bytes_from_json(text: str) -> bytes:
    """Undo ``bytes.decode(errors="backslashreplace")``: ``\\xNN`` escapes back to raw bytes."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text.startswith("\\x", i) and len(text) >= i + 4:
            try:
                out.append(int(text[i + 2 : i + 4], 16))
                i += 4
                continue
            except ValueError:
                pass
        out += text[i].encode("utf-8")
        i += 1
    return bytes(out)


def predicted_from_description(
    strategy: str, ppt: dict[str, int], desc: Json, racks: Any = None
) -> dict[str, Any]:
    """``assign`` on the leader's exact input (the subscriptions DescribeGroups returns)."""
    from kafka_placement.assignment import assign
    from kafka_placement.assignment.wire import member_from_subscription

    user_data = {}
    members = {}
    for member_id, m in desc["members"].items():
        data = m["user_data"]
        if isinstance(data, str):  # kafka-python's to_dict renders bytes as UTF-8 + backslashreplace
            data = _bytes_from_json(data)
        user_data[member_id] = data
        members[member_id] = member_from_subscription(
            strategy,
            member_id,
            m["topics"],
            data,
            owned_partitions=m["owned"],
            generation_id=m["generation_id"],
            rack_id=m["rack_id"],
            group_instance_id=m["group_instance_id"],
            existing=ppt,
        )
    result = assign(strategy, ppt, members, partition_racks=racks)
    return {mid: sorted((tp.topic, tp.partition) for tp in parts) for mid, parts in result.items()}


STABLE = "<stable>"  # kafka.structs.MemberState.STABLE, as the workers report it
ABSENT_BEFORE_RECOVERY_S = SESSION_TIMEOUT_MS / 1000 + 4.0
RECOVERY_BUDGET_S = 25.0
MAX_RECOVERIES = 6


def stable_group(
    admin: Any, group: str, workers: list[Worker], timeout: float = 30.0, settle: float = 2.0
) -> Json:
    """Wait until the group is Stable with exactly ``workers``, every worker is joined
    (kafka-python member state STABLE) and reports the assignment the coordinator holds for it,
    and nothing changed for ``settle`` seconds; return the description.

    A worker that believes it is a member (or is trying to be) but is missing from
    DescribeGroups for longer than the session timeout + 4 s was dropped without noticing
    (kafka-python, see ``kafka_python_member``): it is told to replace its consumer. Every
    recovery (the worker's own rejoins included) extends the budget by ``RECOVERY_BUDGET_S``
    seconds, up to ``MAX_RECOVERIES``."""
    names = {w.name for w in workers}
    seen: list[Any] = [None]
    failures = [0]
    settled: list[Any] = [None]
    start = time.monotonic()
    recoveries_before = {w.name: w.recoveries() for w in workers}
    absent_since: dict[str, float] = {}
    recovered_at: dict[str, float] = {}

    def recoveries() -> int:
        return sum(w.recoveries() - recoveries_before[w.name] for w in workers)

    def deadline() -> float:
        return start + timeout + RECOVERY_BUDGET_S * min(recoveries(), MAX_RECOVERIES)

    def watch_members(desc: Json) -> None:
        """Recover workers that are missing from the group for too long."""
        present = {m["client_id"] for m in desc["members"].values()}
        now = time.monotonic()
        for w in workers:
            if not w.alive():
                raise AssertionError(f"worker {w.name} exited: {w.log_tail()}")
            if w.name in present or w.last("ready") is None:  # a worker still starting is not stuck
                absent_since.pop(w.name, None)
                continue
            since = absent_since.setdefault(w.name, now)
            quiet = now - max(since, recovered_at.get(w.name, -1e9))
            if quiet > ABSENT_BEFORE_RECOVERY_S and desc["state"] == "Stable":
                recovered_at[w.name] = now
                w.recover()

    def check() -> Json | None:
        try:
            desc = describe_group(admin, group)
        except Exception as exc:
            desc = None
            seen[0] = exc
        if desc is None or not desc["state"]:
            failures[0] += 1
            if failures[0] % 10 == 0 and hasattr(admin, "refresh"):
                admin.refresh()  # the coordinator moved (a broker was restarted): ask anew
            return None
        failures[0] = 0
        seen[0] = {m["client_id"]: m["assigned"] for m in desc["members"].values()}, desc["state"]
        watch_members(desc)
        if desc["state"] != "Stable":
            return None
        by_client = {m["client_id"]: (mid, m) for mid, m in desc["members"].items()}
        if set(by_client) != names:
            return None
        for w in workers:
            event = w.last("assignment")
            mid, m = by_client[w.name]
            if event is None or event["member_id"] != mid or w.assignment() != set(m["assigned"]):
                return None
            if event.get("state", STABLE) != STABLE:
                return None
        # Settled: the same generation everywhere for ``settle`` seconds. A leader that lacked
        # metadata for a topic only others subscribe to assigns without it and rebalances again
        # once its metadata arrives (kafka-python and Java alike); don't judge that interim state.
        gens = tuple(sorted((w.name, w.last("assignment")["gen"]) for w in workers))  # type: ignore[index]
        gens += (desc["state"], tuple(sorted(desc["members"])))
        if settled[0] is None or settled[0][0] != gens:
            settled[0] = (gens, time.monotonic())
            return None
        if time.monotonic() - settled[0][1] < settle:
            return None
        return desc

    what = f"group {group} stable with {sorted(names)}"
    try:
        while True:
            value = check()
            if value:
                return value
            if time.monotonic() > deadline():
                raise AssertionError(
                    f"timed out after {time.monotonic() - start:.1f}s ({timeout:.0f}s + "
                    f"{RECOVERY_BUDGET_S:.0f}s for each of {recoveries()} recoveries) waiting for {what}"
                )
            time.sleep(0.3)
    except AssertionError as exc:
        reports = {w.name: (w.alive(), w.last("assignment")) for w in workers}
        recoveries_seen = [e for w in workers for e in w.snapshot() if e["ev"] in ("unstick", "recreate")]
        logs = "".join(f"\n--- {w.name} ({w.log.name}):\n{w.log_tail()}" for w in workers)
        raise AssertionError(
            f"{exc}; last DescribeGroups: {seen[0]}; workers: {reports}; recoveries: {recoveries_seen}{logs}"
        ) from None


class AdminHandle:
    """A KafkaAdminClient that can be replaced by a fresh one: other live suites stop and kill
    brokers of the shared cluster, and a client that cached a dead group coordinator keeps
    answering with an empty group."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.client: Any = None
        self.refresh()

    def refresh(self) -> None:
        from kafka import KafkaAdminClient

        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        self.client = KafkaAdminClient(bootstrap_servers=self.bootstrap, client_id="assignment-live")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)
