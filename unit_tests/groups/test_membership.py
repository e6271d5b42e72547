"""The member state's transition table (``groups/membership.py``): what it allows, what it refuses, and
a state machine walking every step in every phase."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from kafka_placement.groups.membership import (
    TRANSITIONS,
    IllegalTransitionError,
    Membership,
    Phase,
    Step,
)


def _walk(*steps: Step) -> Membership:
    member = Membership()
    for step in steps:
        member.apply(step)
    return member


def test_a_members_life_through_a_rebalance_a_loss_and_close() -> None:
    member = _walk(Step.SUBSCRIBE, Step.REJOIN, Step.ASSIGN)
    assert member.phase is Phase.ASSIGNED and not member.lost
    member.apply(Step.REJOIN)  # the coordinator asked for a rejoin: the revocation comes in it
    member.apply(Step.REVOKE)
    assert member.revoking
    member.apply(Step.REVOKED)
    member.apply(Step.LOSE)  # no heartbeat for a session while joining
    assert member.lost
    member.apply(Step.REJOIN)  # rejoining does not end the loss: commits stay refused
    assert member.lost
    member.apply(Step.ASSIGN)
    assert member.phase is Phase.ASSIGNED
    member.apply(Step.CLOSE)
    assert not member.open
    member.apply(Step.CLOSED)
    assert [(a.value, s.value, b.value) for a, s, b in member.history][-2:] == [
        ("assigned", "close", "closing"),
        ("closing", "closed", "closed"),
    ]


@pytest.mark.parametrize(
    ("steps", "refused"),
    [
        ((), Step.ASSIGN),  # an assignment before subscribe(): a bug in the adapter
        ((Step.SUBSCRIBE, Step.ASSIGN, Step.REVOKE), Step.CLOSE),  # close during a revocation
        ((Step.SUBSCRIBE, Step.ASSIGN, Step.REVOKE), Step.ASSIGN),  # assign before the revoke finished
        ((Step.SUBSCRIBE, Step.LOSE), Step.REVOKE),  # a lost member commits nothing: it cannot revoke
        ((Step.CLOSE, Step.CLOSED), Step.SUBSCRIBE),
        ((Step.SUBSCRIBE, Step.CLOSE), Step.LOSE),
    ],
)
def test_a_step_the_table_does_not_list_is_a_clear_error_and_changes_nothing(
    steps: tuple[Step, ...], refused: Step
) -> None:
    member = _walk(*steps)
    before = member.phase
    with pytest.raises(IllegalTransitionError) as info:
        member.apply(refused)
    assert f"{refused.value!r} is not allowed while {before.value!r}" in str(info.value)
    assert member.phase is before


class MembershipWalk(RuleBasedStateMachine):
    """Any step in any phase: the table's answer or a refusal, never a third outcome; an independent
    statement of the rules checked after each."""

    def __init__(self) -> None:
        super().__init__()
        self.member = Membership()
        self.closed_seen = False

    @rule(step=st.sampled_from(list(Step)))
    def apply(self, step: Step) -> None:
        before = self.member.phase
        if (before, step) in TRANSITIONS:
            assert self.member.apply(step) is TRANSITIONS[(before, step)]
        else:
            with pytest.raises(IllegalTransitionError):
                self.member.apply(step)
            assert self.member.phase is before
        # the rules, stated independently of the table:
        after = self.member.phase
        if step is Step.ASSIGN and after is not before:
            assert after is Phase.ASSIGNED  # only an assignment ends a loss
        if before is Phase.LOST and after is not Phase.LOST:
            assert step in (Step.ASSIGN, Step.UNSUBSCRIBE, Step.CLOSE)
        if before is Phase.REVOKING:
            assert after in (Phase.REVOKING, Phase.JOINING)  # a revocation ends before anything else
        if after is Phase.CLOSED:
            self.closed_seen = True

    @invariant()
    def closed_is_final(self) -> None:
        if self.closed_seen:
            assert self.member.phase is Phase.CLOSED

    @invariant()
    def lost_means_subscribed(self) -> None:
        if self.member.lost:
            assert self.member.subscribed and self.member.open


TestMembershipWalk = MembershipWalk.TestCase


def test_every_phase_is_reachable_from_unsubscribed() -> None:
    reached, frontier = {Phase.UNSUBSCRIBED}, [Phase.UNSUBSCRIBED]
    while frontier:
        phase = frontier.pop()
        for (source, _), target in TRANSITIONS.items():
            if source is phase and target not in reached:
                reached.add(target)
                frontier.append(target)
    assert reached == set(Phase)
