"""The state of one classic-group member, as a state object and a transition table.

Sans-I/O (no Kafka client, no clock, no threads), in the manner of h11's ``ConnectionState``: the
adapter (our confluent ``Consumer``) tells :class:`Membership` what happened with :meth:`~Membership.apply`
and asks it what is allowed; a step the table does not list raises :class:`IllegalTransitionError`,
naming the phase and the step, instead of leaving two flags that disagree.

Phases (what the member is doing, on the application's thread):

- ``UNSUBSCRIBED``: no subscription, nothing owned;
- ``JOINING``: subscribed, a rebalance under way (the first join, or a rejoin the coordinator asked for);
  partitions kept from the last generation (cooperative) may still be consumed and committed;
- ``ASSIGNED``: the assignment of the current generation handed over (``on_assign`` ran);
- ``REVOKING``: partitions being given up (the commit before, ``on_revoke``, the unassign);
- ``LOST``: the membership is gone (the broker's word, or no heartbeat for a session): nothing is
  committed until the next assignment, whatever the partitions were;
- ``CLOSING``: ``close()`` under way (partitions already given up): waits for the commits sent, leaves;
- ``CLOSED``.

Revoke, assign and lost are the three ways ownership changes (franz-go's ``consumer_group.go`` keeps
them in one place too); the adapter applies them in one method.
"""

from __future__ import annotations

from enum import Enum

from kafka_placement.errors import KafkaPlacementError

__all__ = ["TRANSITIONS", "IllegalTransitionError", "Membership", "Phase", "Step"]


class IllegalTransitionError(KafkaPlacementError, RuntimeError):
    """A step the transition table does not allow in the current phase: a bug in the adapter."""


class Phase(Enum):
    UNSUBSCRIBED = "unsubscribed"
    JOINING = "joining"
    ASSIGNED = "assigned"
    REVOKING = "revoking"
    LOST = "lost"
    CLOSING = "closing"
    CLOSED = "closed"


class Step(Enum):
    SUBSCRIBE = "subscribe"  # subscribe(): (re)join for these topics
    REJOIN = "rejoin"  # a join began (the coordinator asked for one)
    ASSIGN = "assign"  # an assignment handed over (assign event, or adopted: see GroupDriver)
    REVOKE = "revoke"  # giving partitions up begins
    REVOKED = "revoked"  # ... and is done
    LOSE = "lose"  # the membership is gone
    UNSUBSCRIBE = "unsubscribe"  # unsubscribe(), after everything was given up
    CLOSE = "close"  # close(), after everything was given up
    CLOSED = "closed"  # both clients closed


_P, _S = Phase, Step
_OPEN = (_P.UNSUBSCRIBED, _P.JOINING, _P.ASSIGNED, _P.LOST)
#: (phase, step) → next phase; anything else is illegal.
TRANSITIONS: dict[tuple[Phase, Step], Phase] = {
    (_P.UNSUBSCRIBED, _S.SUBSCRIBE): _P.JOINING,
    (_P.JOINING, _S.SUBSCRIBE): _P.JOINING,
    (_P.ASSIGNED, _S.SUBSCRIBE): _P.ASSIGNED,  # the new subscription's rejoin comes as REJOIN
    (_P.LOST, _S.SUBSCRIBE): _P.LOST,
    (_P.JOINING, _S.REJOIN): _P.JOINING,
    (_P.ASSIGNED, _S.REJOIN): _P.JOINING,
    (_P.LOST, _S.REJOIN): _P.LOST,  # still nothing may be committed: only an assignment ends LOST
    (_P.JOINING, _S.ASSIGN): _P.ASSIGNED,
    (_P.ASSIGNED, _S.ASSIGN): _P.ASSIGNED,  # cooperative: the follow-up join adds partitions
    (_P.LOST, _S.ASSIGN): _P.ASSIGNED,
    (_P.JOINING, _S.REVOKE): _P.REVOKING,
    (_P.ASSIGNED, _S.REVOKE): _P.REVOKING,
    (_P.REVOKING, _S.REVOKED): _P.JOINING,  # a revocation is part of a rebalance, or of leaving
    (_P.JOINING, _S.LOSE): _P.LOST,
    (_P.ASSIGNED, _S.LOSE): _P.LOST,
    (_P.LOST, _S.LOSE): _P.LOST,
    **{(phase, _S.UNSUBSCRIBE): _P.UNSUBSCRIBED for phase in _OPEN},
    **{(phase, _S.CLOSE): _P.CLOSING for phase in _OPEN},
    (_P.CLOSING, _S.CLOSED): _P.CLOSED,
}


class Membership:
    """The member's phase, changed only through :data:`TRANSITIONS` (see the module docstring)."""

    def __init__(self) -> None:
        self.phase = Phase.UNSUBSCRIBED
        #: the phases passed through, oldest first (for diagnosis: the soak's stuck members)
        self.history: list[tuple[Phase, Step, Phase]] = []

    def apply(self, step: Step) -> Phase:
        """Move to the phase the table gives for ``step``; raise :class:`IllegalTransitionError`
        when it gives none."""
        target = TRANSITIONS.get((self.phase, step))
        if target is None:
            allowed = sorted(s.value for (p, s) in TRANSITIONS if p is self.phase)
            raise IllegalTransitionError(
                f"member state: {step.value!r} is not allowed while {self.phase.value!r} "
                f"(allowed: {', '.join(allowed) or 'nothing'})"
            )
        self.history.append((self.phase, step, target))
        del self.history[:-32]  # the recent past is what diagnosis needs
        self.phase = target
        return target

    @property
    def lost(self) -> bool:
        """The membership is known gone: commits are refused until the next assignment."""
        return self.phase is Phase.LOST

    @property
    def open(self) -> bool:
        """Neither closing nor closed: the application may call the consumer."""
        return self.phase not in (Phase.CLOSING, Phase.CLOSED)

    @property
    def subscribed(self) -> bool:
        return self.phase in (Phase.JOINING, Phase.ASSIGNED, Phase.REVOKING, Phase.LOST)

    @property
    def revoking(self) -> bool:
        return self.phase is Phase.REVOKING
