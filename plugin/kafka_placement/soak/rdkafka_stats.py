"""librdkafka's own view of a soak member's fetching, every :data:`STATS_INTERVAL_MS`, one line each.

Why: a confluent member once owned partitions and fetched nothing for 7 minutes after every fault had
ended (docs/reliability.md, session 24), and nothing in its logs said what librdkafka was waiting for.
librdkafka's statistics do (its STATISTICS.md): each assigned partition's fetch state, leader and
offsets, each broker connection's state and how long it has been silent (``rxidle``), the group
handle's state. Compacted here (sans-I/O) to what tells a stalled fetch apart: the member writes one
line per interval to ``member-<name>.rdkstats`` beside its event log (not ``*.jsonl``: the checkers
do not read it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["STATS_INTERVAL_MS", "compact_stats", "stats_settings"]

#: How often librdkafka reports: often enough to date a stall within a session timeout, rarely enough
#: to cost nothing (one JSON document of a few kB per interval)
STATS_INTERVAL_MS = 10_000


def _ms(us: int) -> int:
    """librdkafka's microseconds (``-1``: never) as milliseconds."""
    return us if us < 0 else us // 1000


def compact_stats(text: str) -> dict[str, Any]:
    """One statistics document → ``t`` (its time, s), ``cgrp`` (state, join state, state age in ms),
    ``brokers`` (name → [state, state age ms, ms since the last byte received, requests awaiting a
    response, requests not sent yet, request timeouts, disconnects]) and ``partitions``
    ("topic/partition" → [fetch state, leader, next offset to fetch, next offset for the application,
    high watermark, messages fetched and not yet handed out, the broker that fetches it, the leader
    epoch librdkafka holds]) for the partitions librdkafka is asked to fetch. (A broker's entry is keyed
    by its name: two handles of one broker — librdkafka makes a new one when a broker returns to the
    metadata — show as one; the partition's ``broker`` says which id fetches it.)"""
    doc = json.loads(text)
    cgrp = doc.get("cgrp") or {}
    brokers = {
        b["name"]: [
            b["state"],
            _ms(b["stateage"]),
            _ms(b["rxidle"]),
            b["waitresp_cnt"],
            b["outbuf_cnt"],
            b["req_timeouts"],
            b["disconnects"],
        ]
        for b in (doc.get("brokers") or {}).values()
    }
    partitions = {
        f"{topic}/{p['partition']}": [
            p["fetch_state"],
            p["leader"],
            p["next_offset"],
            p["app_offset"],
            p["hi_offset"],
            p["fetchq_cnt"],
            p["broker"],
            p["leader_epoch"],
        ]
        for topic, t in (doc.get("topics") or {}).items()
        for p in t["partitions"].values()
        if p["partition"] >= 0 and (p["desired"] or p["fetch_state"] != "none")
    }
    return {
        "t": doc["time"],
        "cgrp": [cgrp.get("state"), cgrp.get("join_state"), cgrp.get("stateage")] if cgrp else None,
        "brokers": brokers,
        "partitions": partitions,
    }


def stats_settings(path: Path) -> dict[str, Any]:
    """confluent-kafka settings that write each statistics document, compacted, as a line of ``path``
    (a document that cannot be read is written as its error: the member goes on)."""
    out: IO[str] = open(path, "a", buffering=1)  # noqa: SIM115 - lives as long as the member

    def on_stats(text: str) -> None:
        try:
            line = json.dumps(compact_stats(text), separators=(",", ":"))
        except (ValueError, KeyError, TypeError) as exc:
            line = json.dumps({"t": int(time.time()), "error": repr(exc)})
        out.write(line + "\n")

    stats_cb: Callable[[str], None] = on_stats
    return {"statistics.interval.ms": STATS_INTERVAL_MS, "stats_cb": stats_cb}
