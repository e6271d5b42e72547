"""Minimal-movement reassignment plans: reach the balanced goals moving as few replicas as possible.

The public face is :func:`plan_reassignment` and :class:`Plan`; the steps live one per module:
:mod:`.plan` (the driver over topics or replication-factor groups), :mod:`.topic` (one topic, step
by step), :mod:`.state` (the per-topic rack rule), :mod:`.keep`, :mod:`.bounds`, :mod:`.rack_first`,
:mod:`.fill` and :mod:`.fresh` (the fallback). Like the rest of :mod:`kafka_placement.replicas` it is
sans-I/O: it imports no Kafka client.

Given the current assignment and the target broker set (brokers added, removed, racks relabelled),
each topic is planned on its own (as Kafka places topics), or with ``scope="cluster"`` all
partitions of one replication factor together:

1. **Quotas** — :func:`~.quotas.replica_quotas` on the target brokers, the free ``+1``s given to
   the brokers that already hold the most replicas (fewest additions).
2. **Keep** — every replica on a surviving broker stays unless rack diversity forbids it (two
   replicas in one rack while ``rf <= R``; a rack left uncovered while ``rf >= R``; a rack whose
   quota equals the partition count must appear in every partition); among competitors the one
   on the broker furthest above quota goes.
3. **Rack-first (``rf <= R``)** — rack totals are fixed first: a partition's replica moves to a
   rack it lacks, along the shortest chain of racks, taking unfilled slots first, then replicas of
   above-quota brokers that do not lead. Inside a rack any broker fits any slot (one replica per
   rack), so brokers above quota free slots (not where they lead, not in partitions another rack
   already changed) and brokers below quota take them — never more moves than the bound.
4. **Generic fill (``rf > R`` or no racks)** — open slots, then above-quota replicas, go straight to
   a broker below quota that fits; a slot nothing fits is solved by the cheapest chain found by a
   0-1 breadth-first search: re-routing replicas this plan added costs nothing, moving a kept one
   costs one move. If a quota still cannot be met, a fresh balanced placement matched to the
   current partitions is used instead (a warning says so; goals are met, moves are higher).
5. **Leaders** — current leaders stay where possible; then leadership moves along shortest
   alternating paths (:mod:`.leaders`) until every broker leads ``floor``–``ceil`` of ``P/N``.

Every plan reports the lower bounds it is measured against:

* replica additions ``>= max(A, B, C)``: ``A = sum_b max(0, quota_b - current_b)`` (equivalently
  the replicas above quota plus those on removed brokers), ``B = sum_p (rf - keepable_p)``
  (replicas a partition must replace for rack diversity, removed brokers or racks needed in every
  partition) and, for ``rf <= R``, ``C`` = :func:`rack_level_minimum` (the exact fewest additions
  that reach the racks' target totals);
* leader changes ``>=`` leaders on removed/dropped replicas plus leaders above ``ceil(P/N)``, and
  ``>=`` the leaders missing below ``floor(P/N)``.
"""

from __future__ import annotations

from kafka_placement.replicas.planner.bounds import LowerBound, rack_level_minimum
from kafka_placement.replicas.planner.plan import Assignment, Plan, plan_reassignment

__all__ = ["Assignment", "LowerBound", "Plan", "plan_reassignment", "rack_level_minimum"]
