"""When a consumer-protocol member should assume the broker fenced it: its group coordinator silent
for about a session.

On Kafka's consumer group protocol (KIP-848) the broker alone keeps the session: a member whose
heartbeats stop reaching the coordinator for ``group.consumer.session.timeout.ms`` is fenced and its
partitions go to the others at their next heartbeat. The member hears of it only from a heartbeat
answer — after the coordinator is reachable again, which can be minutes later. Until then it keeps
fetching from the partitions' leaders, which it still reaches, so two members consume the same
partitions (seen in the soak: 10-112 s, docs/reliability.md, session 24). The classic protocol's
clients guard against this themselves (librdkafka and Java: no successful heartbeat for
``session.timeout.ms`` → the assignment is lost); librdkafka does not on the consumer protocol.

:class:`CoordinatorSilence` is that rule as a state object, sans-I/O (no client, no clock): the adapter
(:mod:`kafka_placement.clients.confluent.fencing_guard`) tells it, at each observation, how many
answers the coordinator has sent so far and whether the member's group state is steady; it says when
to stop consuming (:data:`Verdict.SUSPECT`: silent for the session timeout less a margin) and when to
go on (:data:`Verdict.CLEARED`: the coordinator answered again, and the member's state stayed steady
for ``resume_after_s`` after that answer — a fencing the answer brought would have started a rejoin by
then).

Any answer is not enough to go on: the coordinator's connection also carries the member's offset
commits, and their answers can come while its heartbeats still time out (seen in the secured soak of
session 30: a member the broker had fenced resumed 76 s later on such answers, and consumed for 5 s
beside the member that had its partitions). So when the adapter knows the connection's requests in
flight and its failed requests (``Observation.in_flight``/``failures``), an answer counts only once
every request of a window at least ``confirm_after_s`` long (a heartbeat interval and an observation:
a heartbeat was sent in it) was answered — none failed in it, none is left in flight at its end. A
fencing in that answer then shows as a state no longer steady.

The same holds before any suspicion, once a request to the coordinator failed: heartbeats queued
behind a slow offset commit time out on the member while the commit's answer still comes (seen in the
secured soak of session 32: a member's heartbeats timed out for 22 s, its commits were answered every
few seconds, the broker fenced it and gave its partitions to the standby, and it consumed on for 9 s
beside it). So after a failed request an answer no longer keeps the member consuming by itself; only
a window of ``confirm_after_s`` with no failure and nothing left in flight at its end does, and it
counts as an answer ``confirm_after_s`` before its end (a heartbeat sent in the window was answered,
so the broker heard the member no earlier than that). librdkafka and Java's classic consumers keep
the same rule for themselves: only a *successful* heartbeat keeps the session (``session.timeout.ms``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from kafka_placement.errors import InvalidArgumentError

__all__ = ["CoordinatorSilence", "Observation", "Verdict"]


class Verdict(Enum):
    NONE = "none"  # nothing changes
    SUSPECT = "suspect"  # silent for about a session: stop consuming, the partitions may be someone else's
    CLEARED = "cleared"  # answering again and still a steady member: go on consuming


@dataclass(frozen=True)
class Observation:
    at: float  # seconds, on a clock that does not jump (monotonic)
    answers: int  # responses received from the group coordinator so far (never decreases)
    steady: bool  # the member's group state is steady: no rebalance, fencing or rejoin under way
    #: requests to the coordinator sent and not answered, and waiting to be sent (None: unknown)
    in_flight: int | None = None
    #: the coordinator connection's requests failed so far: timed out, transport errors, disconnects
    #: (never decreases; None: unknown)
    failures: int | None = None


class CoordinatorSilence:
    """See the module docstring. ``session_timeout_s``: the group's (the broker's
    ``group.consumer.session.timeout.ms``, or the group's own ``consumer.session.timeout.ms``);
    ``margin_s``: how much earlier than a full session the member suspects (the broker counts from the
    last heartbeat it received, the member from the last answer: later, by a round trip and its
    observation interval); ``resume_after_s``: how long after the first new answer the state must stay
    steady; ``confirm_after_s``: the window whose every request must be answered before an answer
    counts, when observations tell requests in flight and failures (the module docstring)."""

    def __init__(
        self,
        session_timeout_s: float,
        margin_s: float = 2.0,
        resume_after_s: float = 1.0,
        confirm_after_s: float = 0.0,
    ) -> None:
        if not (math.isfinite(session_timeout_s) and 0 < session_timeout_s <= 3600):
            raise InvalidArgumentError(f"session_timeout_s must be in (0, 3600], got {session_timeout_s!r}")
        if not (math.isfinite(margin_s) and 0 <= margin_s < session_timeout_s):
            raise InvalidArgumentError(
                f"margin_s must be in [0, session_timeout_s={session_timeout_s}), got {margin_s!r}"
            )
        if not (math.isfinite(resume_after_s) and 0 <= resume_after_s <= session_timeout_s):
            raise InvalidArgumentError(
                f"resume_after_s must be in [0, session_timeout_s={session_timeout_s}], "
                f"got {resume_after_s!r}"
            )
        if not (math.isfinite(confirm_after_s) and 0 <= confirm_after_s <= session_timeout_s):
            raise InvalidArgumentError(
                f"confirm_after_s must be in [0, session_timeout_s={session_timeout_s}], "
                f"got {confirm_after_s!r}"
            )
        self.limit_s = session_timeout_s - margin_s
        self.resume_after_s = resume_after_s
        self.confirm_after_s = confirm_after_s
        #: since the suspicion: where the window of answered requests began (time, answers, failures)
        self._window: tuple[float, int, int | None] | None = None
        self.suspected = False
        self.last_answer_at: float | None = None  # the first observation counts as one
        self._answers = 0
        self._answered_again_at: float | None = None  # since the suspicion
        self._failures: int | None = None  # failed requests so far, as last observed
        #: before a suspicion, after a failed request: where the window free of failures began
        #: (time, answers); None while no request failed since the last window that counted
        self._after_failure: tuple[float, int] | None = None

    def observe(self, seen: Observation) -> Verdict:
        if self.last_answer_at is None:
            self.last_answer_at, self._answers, self._failures = seen.at, seen.answers, seen.failures
            return Verdict.NONE
        answered = seen.answers > self._answers
        failed = seen.failures is not None and self._failures is not None and seen.failures != self._failures
        self._failures = seen.failures
        if not self.suspected:
            self._heard(seen, answered, failed)
            if seen.at - self.last_answer_at >= self.limit_s:
                self.suspected, self._answered_again_at = True, None
                self._window = (seen.at, seen.answers, seen.failures)
                return Verdict.SUSPECT
            return Verdict.NONE
        if answered:
            self._answers, self.last_answer_at = seen.answers, seen.at
        if self._answered_again_at is None and self._all_answered(seen, answered):
            self._answered_again_at = seen.at
        if not seen.steady:
            # a rebalance under way (the answer fenced it, or a rejoin): steady again is the group's word
            self._answered_again_at = None if self._answered_again_at is None else seen.at
            return Verdict.NONE
        if self._answered_again_at is not None and seen.at - self._answered_again_at >= self.resume_after_s:
            self.suspected, self._answered_again_at, self._window = False, None, None
            self._after_failure = None  # that window had every request answered
            return Verdict.CLEARED
        return Verdict.NONE

    def _heard(self, seen: Observation, answered: bool, failed: bool) -> None:
        """Before a suspicion: move ``last_answer_at`` for what ``seen`` tells (the module docstring)."""
        if failed:  # a request timed out or its connection failed: answers alone no longer count
            self._after_failure = (seen.at, seen.answers)
            self._answers = seen.answers
            return
        if self._after_failure is None or seen.in_flight is None:
            if answered:
                self._answers, self.last_answer_at = seen.answers, seen.at
            return
        start, answers = self._after_failure
        self._answers = seen.answers
        if seen.in_flight == 0 and seen.answers > answers and seen.at - start >= self.confirm_after_s:
            # every request of the last confirm_after_s answered, a heartbeat among them
            assert self.last_answer_at is not None  # set by the first observation
            self.last_answer_at = max(self.last_answer_at, seen.at - self.confirm_after_s)
            self._after_failure = None

    def _all_answered(self, seen: Observation, answered: bool) -> bool:
        """Since the suspicion: whether ``seen`` ends a window of ``confirm_after_s`` whose every request
        was answered (without request counts: whether the coordinator answered at all)."""
        if seen.in_flight is None or seen.failures is None:
            return answered
        assert self._window is not None  # set with the suspicion
        start, answers, failures = self._window
        if failures is None or seen.failures != failures:  # a request failed: a new window from here
            self._window = (seen.at, seen.answers, seen.failures)
            return False
        return seen.in_flight == 0 and seen.answers > answers and seen.at - start >= self.confirm_after_s
