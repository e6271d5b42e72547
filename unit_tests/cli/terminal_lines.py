# ruff: noqa: E501  (line formats and command lines read better whole)
"""What our commands print, written down independently of the code that prints it: the fixed set of line
formats of ``plan`` and ``demo`` and the headers of their tables. :func:`foreign_lines` returns every
line of a command's terminal output that is none of them (a JVM, Ivy, log4j or warning line)."""

from __future__ import annotations

import re

OUR_LINES = [
    re.compile(p)
    for p in (
        r"",
        # progress (cli/progress.py): an activity's start and end, a count's quarters and end
        r"  \S.* …",
        r"  \S.*: done in \d+\.\ds( — .+)?",
        r"  \S.*: \d+% \([\d,]+/[\d,]+(, .+)?\)",
        r"  \S.*: done \([\d,]+/[\d,]+\) in \d+\.\ds( — .+)?",
        r"warning: \S.*",
        r"kafka-placement \w+: error: \S.*",
        # plan's results (cli/plan_output.py, planning/summary.py, cli/plan.py)
        r"Recommendation: \S.*",
        r"  - \S.*",
        r"records [\d,]+  distinct keys [\d,]+  bytes [\d,]+ \(.+\)  keyless \(NULL key\) records [\d,]+",
        r"Skew per scenario \(max/mean; 1\.000 = perfectly even\)",
        r"Moved between partitionings",
        r"Hottest \d+ keys",
        r"NULL keys \(and keys the scheme treats as keyless\) per partitioning",
        r"planned \d+ scenario\(s\) in \d+\.\ds",
        r"report: \S+report\.html",
        r"results: \S+plan\.json and \S+/\*\.parquet",
        r"planning in this process with \d+ thread\(s\) .+",
        # demo (cli/demo.py, cli/failover_member.py)
        r"=== \d\. \S.*",
        r"  bootstrap servers: \S+( \(\S+\))?",  # the address list, then the security protocol
        r"  (orders|payments)-[0-9a-f]{6}: p0→\[[\d, ]+\], .+, …",
        r"  consumed [\d,]+ records \([\d,]+ from kafka-python, [\d,]+ from confluent-kafka\); in the partition "
        r"our murmur2 predicts: [\d,]+/[\d,]+",
        r"  member priority \d+: \d+ partition\(s\)",
        r"  active: priority \d+ owns all \d+ partitions, consumed [\d,]+ records; standbys idle",
        r"  SIGKILL the active member \(pid \d+\) …",
        r"  takeover: priority \d+ owns all \d+ partitions \d+\.\ds after the kill \(session timeout \d+\.\ds\)",
        r"  finding: \S.*",
        r"demo finished in \d+s",
    )
]

TABLE_HEADERS = [
    [
        "#",
        "partitioning",
        "placement",
        "group",
        "partition",
        "part.gini",
        "broker lead",
        "broker repl",
        "rack",
        "consumer",
    ],
    ["from", "to", "keys", "keys %", "records %", "bytes %"],
    ["rank", "key", "records", "share %"],
    ["partitioning", "NULL records", "empty-key records", "placed"],
    ["broker", "rack"],
    ["topic", "placer", "partitions", "rf", "replica spread", "leader spread", "min racks/partition"],
    ["topic", "partitions", "rf", "replica spread", "leader spread", "min racks/partition", "findings"],
]

_RULE = re.compile(r"-+(  -+)*")


def _cells(line: str) -> list[str]:
    return re.split(r" {2,}", line.strip())


def foreign_lines(text: str) -> list[str]:
    """The lines of ``text`` that are not ours (tables: a known header, its rule, rows of as many cells)."""
    lines = text.splitlines()
    foreign: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _cells(line)
        if header in TABLE_HEADERS and i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1]):
            if len(_cells(lines[i + 1])) != len(header):
                foreign.append(lines[i + 1])
            i += 2
            while i < len(lines) and lines[i].strip() and len(_cells(lines[i])) == len(header):
                i += 1
            continue
        if not any(p.fullmatch(line) for p in OUR_LINES):
            foreign.append(line)
        i += 1
    return foreign
