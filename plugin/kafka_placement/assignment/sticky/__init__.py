"""The sticky and cooperative-sticky assignors (KIP-54, KIP-341, KIP-429, KIP-881) — one home.

Modules, in the order a call goes through them:

* :mod:`.assignor` — ``assign_sticky``, the entry point (fast path for a fresh equal group);
* :mod:`.problem` — the integer view of a group (member and topic numbers in Java ``String`` order,
  global partition ids, the ``owner`` array), the rack view, output;
* :mod:`.claims` — owned-partition claims (KIP-341): the highest generation keeps a partition;
* :mod:`.partition_objects` — owned TopicPartitions read into ids and the result handed out per member
  (C form ``assignment/_owned.c``, numpy form kept and tested against it);
* :mod:`.equal_subscriptions` — every member subscribes to the same topics: Java's
  ``ConstrainedAssignmentBuilder`` step by step, rack-aware variant included (exact);
* :mod:`.general` — unequal subscriptions: the members × topics counts from claims, fill and balance,
  then the choice of partitions;
* :mod:`.water_fill` — unowned partitions of a topic (or a run of alike topics) onto the least loaded;
* :mod:`.count_balance` — balancing the counts: direct moves (KIP-54) and chains along augmenting paths;
* :mod:`.java_general` — Java's general builder replayed on small groups (the better of the two is kept);
* :mod:`.rack_awareness` — rack-local dealing of free partitions for the general case (KIP-881);
* :mod:`.cooperative` — the cooperative layer (KIP-429): the sticky target minus what others still own;
* :mod:`.checks` — KIP-54 validity and balance checks, independent of the algorithm;
* Java ordering (``String.compareTo``, ``String.hashCode``, ``HashMap`` iteration) is shared with the
  other Java-exact algorithms in :mod:`kafka_placement.java`.

How it works (from docs/sticky.md):

* **Balance first** (KIP-54): partition counts differ by at most one, or no partition can move to
  another of its potential consumers that has two or more fewer partitions. Like Java, once this
  holds we stop moving previously owned partitions: a better balance score (KIP-54: sum of pairwise
  size differences) is only bought when it costs no more moves (details under the general path).
  The sticky contract — never more partitions moved than Java, never a worse balance score — is
  checked on 10,000 random rebalances by `kafka-placement conformance` (numbers below).
* **Then stickiness**: as many partitions as possible stay with their previous owner.
* **Claims** (KIP-341, as Kafka 3.x+ `allSubscriptionsEqual`/`prepopulateCurrentAssignments`): a
  member's `owned` partitions count only while the partition exists; when several members claim one
  partition the highest `generation` wins; a tie in the highest generation voids the claims (Kafka
  logs "Found multiple consumers ... claiming the same TopicPartition ... in the same generation" and
  invalidates both); only then is a winner that no longer subscribes to the topic dropped (its claim
  still beats or voids the others, as in Java — Java-checked vector in `test_sticky_java_vectors.py`);
  a member listing a partition twice claims it once.
* **Deterministic**: members and topics are numbered in sorted order; the same input gives the same
  output. The order of the `members` mapping matters only where it matters to Java: member ids
  sharing a Java `HashMap` bucket (equal subscriptions, below) are walked in the mapping's order, as
  Kafka walks them in the group's member order (the JoinGroup response's, which a Python leader sees
  in the same order).
* **Equal subscriptions** — Java's `ConstrainedAssignmentBuilder`, step by step: `N` partitions, `M`
  members → `minQuota = N // M`, `N % M` members get one more. Members are visited in Java `HashMap`
  iteration order of their ids (`String.hashCode`, spread, table size as `HashMap` grows; same-bucket
  ids in insertion order, i.e. the `members` mapping's order; treeified buckets too —
  `kafka_placement.java`): one owning fewer than `minQuota` keeps everything,
  one owning `maxQuota` or more keeps `maxQuota` while larger members are still needed, otherwise
  `minQuota`; owned partitions are kept in Java's (partition, topic) order. The free partitions, in
  (topic, partition) order, go round robin to the members below `minQuota` (member-id order) until all
  reach it, then one each to the members at exactly `minQuota` (first those that were there from the
  start, in member-id order, then in the order the others reached it). With no history this is
  member `i` gets every `M`-th partition starting at `i` (a slice, no per-partition work).
  Kafka's own expected assignments from `AbstractStickyAssignorTest` are reproduced verbatim
  (`unit_tests/assignment/test_sticky_java_vectors.py`). With racks (KIP-881) exactly as Java too,
  fresh or with history (conformance `sticky-rack-equal`): owned partitions without a replica in the
  owner's rack are not kept; the free partitions, sorted (stably) by how many consumers live in their
  replicas' racks, go one by one to the next member below `minQuota` in a rack holding a replica (a
  cursor cycling over those members in member-id order), else to the first such member at exactly
  `minQuota` while members may still take one more; the rest go round robin as without racks.
* **Unequal subscriptions** (Java's `GeneralAssignmentBuilder`): on small groups Java's builder is
  replayed too and the better of the two kept (details under "Limits"). Our own algorithm: balance only
  depends on how many partitions of each topic a member holds, so balancing runs on a members × topics
  count matrix: valid claims first; unowned partitions water-filled per topic (topics with the fewest
  subscribers first, as Java sorts partitions by potential consumers); then augmenting paths from the
  most loaded members ("holds a partition of t" → "another member subscribes to t") to any member with
  two or more fewer, shifting one partition per hop, with a bulk pass for single-hop moves (a joining
  member is filled in one round). This first pass only moves partitions their holder did not own
  before (free for stickiness). Moving owned partitions comes next, and three candidates are
  computed: (a) direct moves only until KIP-54 balanced, topics with the fewest subscribers first,
  each from the topic's most loaded holder to its least loaded subscriber, as Java's reassignment
  loop (both tie-breaks between equally loaded holders are tried, the better balanced kept);
  (b) chains of moves within the number of moves (a) needs, then made KIP-54 balanced (only while
  moves × members × topics ≤ 2·10⁷); (c) the chain search on any partition (no chain of moves can
  improve it). The fewest moves win, at equal moves the better balance; (b) replaces (a) when
  better balanced at no more moves; with racks (c) may also spend as many moves as Java's rack-aware
  builder spends anyway revoking owned partitions without a local replica. Guarantee: if the counts of a
  fresh run (no history) would keep more owned partitions, those counts are used — never less sticky
  than a fresh assignment. Partitions are chosen per topic at the end: each member keeps
  `min(count, previously owned)` of its own (rack-local first), the remaining counts are filled from
  the topic's other partitions (rack-local first, then round robin in member order). Java's general
  builder uses different heuristics (direct moves only, a revert step), so exact equality with Java
  is only expected on simple cases (Kafka's `testMultipleConsumersMixedTopicSubscriptions` matches).
  Free partitions are dealt topic by topic in Java's order (fewest subscribers first), each to the
  taker with the fewest partitions so far (ties by member id), as Java's initial assignment does: on
  324 random fresh unequal-subscription groups our result is identical to kafka-python's port of
  Java's algorithm in 241; in 26 kafka-python's is less balanced; 57 are equally balanced with other
  partitions (Java's reassignment pass moved some).
* **Rack-aware** (KIP-881): applies when Java's `useRackAwareAssignment` would — some member has a
  rack, some replica lives in one of those racks, and not all partitions have the same replica racks.
  Racks choose *which* partitions go where and never cost balance (with history they may buy a
  better one, see the general path).
  Equal subscriptions follow Java's rack-aware constrained builder exactly (above). Unequal ones:
  free partitions are grouped by the set of member racks holding a replica (a handful of groups);
  how many of each group go to each rack is a maximum flow (capped by the rack members' remaining
  quota), so the number of rack-local placements is the largest these quotas allow. Owned rack-local
  partitions are kept first.
* **Cooperative** (KIP-429): the target is the sticky assignment; a partition that the target gives to
  B while its current owner — the claimant with the highest generation (KIP-341; older-generation
  claims are stale and never cause a revocation) — still lists it is left out of B's assignment this
  round (its owner is not given it, so it revokes it); a partition claimed by several members in the
  same highest generation is withheld unless the target gives it to one of them. The follow-up
  rebalance hands it over once nobody owns it. For unequal subscriptions the fewest-moves target is
  used when the follow-up round (everyone owning the target minus what was withheld) moves nothing
  kept and is as balanced; otherwise the chain-balanced target (c), which the follow-up reproduces.
  Never two owners; the second round is complete and at least as balanced as the target
  (property-tested) — except where Java's own second round moves a partition again (unequal
  subscriptions, Java's general builder replayed): then, as in Java, that partition is unassigned for
  a round and a third round completes it (27 of 1,500 membership changes in the `--full` churn test,
  every round equal to Java's `CooperativeStickyAssignor`).
"""

from __future__ import annotations

from kafka_placement.assignment.sticky.assignor import assign_sticky, sticky_owner_array
from kafka_placement.assignment.sticky.cooperative import assign_cooperative_sticky, cooperative_owner_array

__all__ = ["assign_cooperative_sticky", "assign_sticky", "cooperative_owner_array", "sticky_owner_array"]
