"""Members that hang (issue 45, item 5): a member that owns partitions with records waiting on them and
consumes nothing from them for longer than its session timeout plus :data:`STUCK_BOUND_S`, with no
fault explaining it. Sans-I/O, over the soak's logs.

Why the rule: a member that stops consuming but keeps its session (it heartbeats, or the coordinator
still thinks it does) is never replaced — the group keeps assigning it the partitions, and nothing
fails (docs/reliability.md: our confluent member ``coop-a`` held partitions 12-23 for 9 minutes, 20,786
records unconsumed). A crashed member is replaced within its session timeout; a member that notices it
lost its session rejoins within a rebalance. So after a session timeout plus a rebalance's worth of time
(:data:`STUCK_BOUND_S`) a member that owns partitions with records waiting should have consumed one.

- **Waiting**: an acknowledged record (its offset from the producer's ack) on an owned partition at an
  offset above the highest its group had consumed there when the silence began — and, when the topic
  was read back, below the partition's high watermark (a record the brokers lost is counted as lost,
  not as waiting for a member that cannot read it). A partition nobody wrote to is not waiting.
- **Silence**: within one ownership interval (closed at the member's death, as the other checkers do),
  the time between two reads of the owned partitions — from the acquisition, or the last read, until
  the next read or the release — counted from the moment a record was waiting.
- **Explained**: the silence is reduced by every span in which a fault concerned the member — a kill
  or pause of the member itself; a fault on a broker or its links (``broker-*``, ``net-*``) whose broker
  led one of the owned partitions or coordinated the member's group when it hit (its ``leads`` /
  ``coordinates``; a fault whose roles were not recorded concerns everyone); an outage of the group's
  coordinator — from the fault until it was undone. What is left, one continuous piece longer than the
  member's session timeout plus :data:`STUCK_BOUND_S`, is a stuck member.

A member can also hang without owning anything in its own log: it gave its partitions up (its
``on_lost``) while the group's assignment still gives them to it, so nobody else is given them. Such a
partition — records waiting, no member of its group owning it, the same silence rule — is reported
with member ``""`` (an orphan).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafka_placement.soak.absences import Absence, all_absent
from kafka_placement.soak.events import Ack, Consumed, Fault, Ownership

__all__ = ["STUCK_BOUND_S", "StuckMember", "fault_spans", "stuck_members"]

#: Beyond the session timeout: a rebalance after a member or broker change (the group's members
#: rejoin: up to a rebalance timeout, 30 s for the soak's classic members
#: (:data:`~kafka_placement.soak.member_events.REBALANCE_TIMEOUT_MS`), plus a join and a sync) and a
#: fetch from a new leader. Held soaks here (load average 100-170) had partitions unread for up to 69 s
#: from a broker fault's start; spans of faults are subtracted, so what is left after one is its
#: recovery only.
STUCK_BOUND_S = 60.0

#: Faults of these kinds concern their target member only.
_MEMBER_PREFIX = "member-"


@dataclass(frozen=True)
class StuckMember:
    group: str
    member: str  # "" for a partition no member owned (an orphan)
    partitions: tuple[int, ...]  # what it owned (orphans: the partitions silent over the same span)
    since: float  # the silence began (records waiting, nothing read, no fault concerning it)
    until: float  # it ended (a read, the release, or the end of the run)
    waiting: int  # acknowledged records on its partitions above what its group had consumed at ``since``

    @property
    def seconds(self) -> float:
        return self.until - self.since


@dataclass(frozen=True)
class _Span:
    """A fault from when it hit until it was undone; ``leads`` / ``coordinates`` None: concerns all."""

    kind: str
    target: str
    start: float
    end: float
    leads: tuple[int, ...] | None
    coordinates: tuple[str, ...] | None


def fault_spans(faults: Iterable[Fault], until: float) -> list[_Span]:
    """Each applied fault with the time it was undone (``-undone``, ``-refused``; ``until`` when it never
    was). A ``-skipped`` fault did nothing and has no span."""
    ordered = sorted(faults, key=lambda f: f.t)
    spans = []
    for i, fault in enumerate(ordered):
        if fault.kind.endswith(("-undone", "-refused", "-skipped")):
            continue
        ends = (f"{fault.kind}-undone", f"{fault.kind}-refused")
        end = next((f.t for f in ordered[i + 1 :] if f.kind in ends and f.target == fault.target), until)
        spans.append(_Span(fault.kind, fault.target, fault.t, end, fault.leads, fault.coordinates))
    return spans


def _concerns(span: _Span, member: str, group: str, partitions: Sequence[int]) -> bool:
    if span.kind.startswith(_MEMBER_PREFIX):
        return span.target == member
    if span.leads is None or span.coordinates is None:
        return True
    return group in span.coordinates or bool(set(span.leads) & set(partitions))


def _longest_unexplained(
    start: float, end: float, explained: list[tuple[float, float]]
) -> tuple[float, float]:
    """The longest piece of [start, end) outside every span of ``explained``."""
    best = (start, start)
    at = start
    for a, b in sorted(explained):
        if b <= at or a >= end:
            continue
        if a > at and a - at > best[1] - best[0]:
            best = (at, a)
        at = max(at, b)
    if end > at and end - at > best[1] - best[0]:
        best = (at, end)
    return best


def stuck_members(
    ownerships: Iterable[Ownership],
    consumed: Iterable[Consumed],
    acks: Iterable[Ack],
    faults: Iterable[Fault],
    session_s: Mapping[str, float],
    until: float,
    outages: Mapping[str, Sequence[tuple[float, float]]] | None = None,
    high_watermarks: Mapping[int, int] | None = None,
    bound_s: float = STUCK_BOUND_S,
    absences: Mapping[str, Sequence[Absence]] | None = None,
) -> list[StuckMember]:
    """Every stuck member (module docstring), then every orphaned partition (:func:`_orphans`).
    ``session_s``: each group's session timeout in seconds; ``until``: the end of the run (an ownership
    still open ends there); ``outages``: each group's coordinator outages
    (:func:`~kafka_placement.soak.health.coordinator_outages`); ``high_watermarks``: the topic's, read
    back after the run (partition → the next offset); ``absences``: members out of their group by their own
    word (:func:`~kafka_placement.soak.absences.session_absences`), which explain an orphan while every
    member of its group is out."""
    ownerships, consumed = list(ownerships), list(consumed)
    highest = _highest_read(consumed)
    mine: dict[tuple[str, str, int], list[float]] = {}
    for c in consumed:
        mine.setdefault((c.group, c.member, c.partition), []).append(c.t)
    acked: dict[int, list[tuple[float, int]]] = {}
    for ack in acks:
        beyond = (
            high_watermarks is not None
            and ack.offset is not None
            and ack.offset >= high_watermarks.get(ack.partition, 0)
        )
        if ack.offset is not None and not beyond:
            acked.setdefault(ack.partition, []).append((ack.t, ack.offset))
    spans = fault_spans(faults, until)
    out = []
    for own in ownerships:
        end = until if own.released is None else own.released
        if end <= own.acquired or not own.partitions:
            continue
        times = sorted(
            t
            for p in own.partitions
            for t in mine.get((own.group, own.member, p), [])
            if own.acquired <= t < end
        )
        explained = [(s.start, s.end) for s in spans if _concerns(s, own.member, own.group, own.partitions)]
        explained += list((outages or {}).get(own.group, ()))
        limit = session_s.get(own.group, 0.0) + bound_s
        for start, stop in zip([own.acquired, *times], [*times, end], strict=True):
            if stop - start <= limit:
                continue
            waiting, since = _waiting(own.group, own.partitions, start, stop, acked, highest)
            if waiting == 0:
                continue
            a, b = _longest_unexplained(since, stop, explained)
            if b - a > limit:
                out.append(StuckMember(own.group, own.member, own.partitions, a, b, waiting))
    out += _orphans(
        ownerships, acked, highest, spans, session_s, until, outages or {}, bound_s, absences or {}
    )
    return sorted(out, key=lambda s: (s.since, s.group, s.member))


def _orphans(
    ownerships: list[Ownership],
    acked: Mapping[int, list[tuple[float, int]]],
    highest: Mapping[tuple[str, int], tuple[list[float], list[int]]],
    spans: list[_Span],
    session_s: Mapping[str, float],
    until: float,
    outages: Mapping[str, Sequence[tuple[float, float]]],
    bound_s: float,
    absences: Mapping[str, Sequence[Absence]],
) -> list[StuckMember]:
    """Partitions with records waiting that no member of a group owns, by the members' own logs, for
    longer than the session timeout + ``bound_s`` with no fault explaining it — reported with member
    ``""``. The hang this catches: a member that gave its partitions up (its ``on_lost``) while the
    group's assignment still gives them to it, so it never takes them up again and nobody else is
    given them (the soak's coop-a, docs/reliability.md). From the group's first acquisition on (before
    it, the run waits for the groups to own every partition). A fault concerns the partition when it
    hit any member of the group, or a broker that led the partition or coordinated the group."""
    out = []
    for group in sorted({o.group for o in ownerships}):
        mine = [o for o in ownerships if o.group == group]
        first = min(o.acquired for o in mine)
        limit = session_s.get(group, 0.0) + bound_s
        members = {o.member for o in mine}
        nobody_in = all_absent(absences.get(group, ()), members)
        for partition in sorted(acked):
            held = sorted(
                (o.acquired, until if o.released is None else o.released)
                for o in mine
                if partition in o.partitions
            )
            for start, stop in _uncovered(first, until, held):
                if stop - start <= limit:
                    continue
                waiting, since = _waiting(group, (partition,), start, stop, acked, highest)
                if waiting == 0:
                    continue
                explained = [
                    (s.start, s.end)
                    for s in spans
                    if any(_concerns(s, m, group, (partition,)) for m in members)
                ]
                explained += list(outages.get(group, ())) + nobody_in
                a, b = _longest_unexplained(since, stop, explained)
                if b - a > limit:
                    out.append(StuckMember(group, "", (partition,), a, b, waiting))
    return _merged(out)


def _merged(orphans: list[StuckMember]) -> list[StuckMember]:
    """One entry per group for orphans whose silences overlap (one hang leaves every partition of a group
    without an owner at once: 24 lines of the same minutes hid the other stuck members of a report)."""
    out: list[StuckMember] = []
    for orphan in sorted(orphans, key=lambda o: (o.group, o.since)):
        last = out[-1] if out else None
        if last is not None and last.group == orphan.group and orphan.since < last.until:
            out[-1] = StuckMember(
                orphan.group,
                "",
                tuple(sorted({*last.partitions, *orphan.partitions})),
                last.since,
                max(last.until, orphan.until),
                last.waiting + orphan.waiting,
            )
        else:
            out.append(orphan)
    return out


def _uncovered(start: float, end: float, held: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The pieces of [start, end) outside every interval of ``held`` (sorted by start)."""
    pieces, at = [], start
    for a, b in held:
        if a > at:
            pieces.append((at, min(a, end)))
        at = max(at, b)
        if at >= end:
            break
    if at < end:
        pieces.append((at, end))
    return [(a, b) for a, b in pieces if b > a]


def _highest_read(consumed: list[Consumed]) -> dict[tuple[str, int], tuple[list[float], list[int]]]:
    """(group, partition) → the times of its group's reads and the highest offset read by each."""
    reads: dict[tuple[str, int], list[tuple[float, int]]] = {}
    for c in consumed:
        reads.setdefault((c.group, c.partition), []).append((c.t, c.offset))
    highest = {}
    for key, items in reads.items():
        items.sort()
        times, tops, top = [], [], -1
        for t, offset in items:
            top = max(top, offset)
            times.append(t)
            tops.append(top)
        highest[key] = (times, tops)
    return highest


def _waiting(
    group: str,
    partitions: Sequence[int],
    start: float,
    stop: float,
    acked: Mapping[int, list[tuple[float, int]]],
    highest: Mapping[tuple[str, int], tuple[list[float], list[int]]],
) -> tuple[int, float]:
    """How many acknowledged records wait on ``partitions`` in [start, stop) (above what ``group`` had
    consumed at ``start``), and since when (``start``, or the first such ack after it)."""
    count, since = 0, stop
    for p in partitions:
        times, tops = highest.get((group, p), ([], []))
        i = bisect.bisect_right(times, start)
        consumed_to = tops[i - 1] if i else -1
        for t, offset in acked.get(p, ()):
            if offset > consumed_to and t < stop:
                count += 1
                since = min(since, max(t, start))
    return count, since
