"""When a consumer-protocol member suspects it was fenced: a coordinator silent for the session less
the margin; cleared once answering again with the member's state steady for ``resume_after_s``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.groups.coordinator_silence import CoordinatorSilence, Observation, Verdict


def _seen(at: float, answers: int, steady: bool = True) -> Observation:
    return Observation(at=at, answers=answers, steady=steady)


def test_a_coordinator_that_answers_keeps_the_member_consuming() -> None:
    silence = CoordinatorSilence(6.0, margin_s=2.0)
    verdicts = [silence.observe(_seen(t, answers=t)) for t in range(0, 30)]  # an answer every second
    assert set(verdicts) == {Verdict.NONE}


def test_silent_for_the_session_less_the_margin_is_suspected_then_cleared_after_a_steady_answer() -> None:
    silence = CoordinatorSilence(6.0, margin_s=2.0, resume_after_s=1.0)
    assert silence.observe(_seen(0, 5)) is Verdict.NONE
    assert silence.observe(_seen(3.9, 5)) is Verdict.NONE
    assert silence.observe(_seen(4.0, 5)) is Verdict.SUSPECT  # 6 - 2 s after the last answer
    assert silence.suspected
    assert silence.observe(_seen(20.0, 5)) is Verdict.NONE  # still silent: stays suspected
    assert silence.observe(_seen(21.0, 6)) is Verdict.NONE  # an answer: steady for 1 s first
    assert silence.observe(_seen(21.5, 6)) is Verdict.NONE
    assert silence.observe(_seen(22.0, 6)) is Verdict.CLEARED
    assert not silence.suspected
    assert silence.observe(_seen(24.9, 6)) is Verdict.NONE
    assert silence.observe(_seen(25.0, 6)) is Verdict.SUSPECT  # silent again since the answer at 21


def test_an_answer_that_fenced_the_member_waits_for_its_rejoin() -> None:
    silence = CoordinatorSilence(6.0, margin_s=2.0, resume_after_s=1.0)
    silence.observe(_seen(0, 1))
    assert silence.observe(_seen(5, 1)) is Verdict.SUSPECT
    assert silence.observe(_seen(9, 2, steady=False)) is Verdict.NONE  # fenced: librdkafka rejoins
    assert silence.observe(_seen(10, 3, steady=False)) is Verdict.NONE
    assert silence.observe(_seen(10.5, 4)) is Verdict.NONE  # steady for 0.5 s only
    assert silence.observe(_seen(11, 4)) is Verdict.CLEARED


def test_no_answer_at_all_is_never_cleared() -> None:
    silence = CoordinatorSilence(6.0, margin_s=2.0)
    silence.observe(_seen(0, 0))
    assert silence.observe(_seen(4, 0)) is Verdict.SUSPECT
    assert {silence.observe(_seen(4 + t, 0)) for t in range(1, 100)} == {Verdict.NONE}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ((0.0,), "session_timeout_s must be in (0, 3600], got 0.0"),
        ((float("nan"),), "session_timeout_s"),
        ((6.0, 6.0), "margin_s must be in [0, session_timeout_s=6.0), got 6.0"),
        ((6.0, 1.0, -1.0), "resume_after_s must be in [0, session_timeout_s=6.0], got -1.0"),
    ],
)
def test_bad_settings_are_named(args: tuple[float, ...], named: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        CoordinatorSilence(*args)
    assert named in str(caught.value)


@given(
    st.lists(
        st.tuples(st.floats(0.0, 5.0), st.integers(0, 2), st.booleans()),
        max_size=60,
    )
)
def test_suspicions_and_clearings_alternate_and_follow_the_rule(steps: list[tuple[float, int, bool]]) -> None:
    """Computed apart from the class: a suspicion only after the session less the margin without an
    answer; a clearing only while suspected, after an answer since the suspicion."""
    silence = CoordinatorSilence(6.0, margin_s=2.0, resume_after_s=1.0)
    at, answers = 0.0, 0
    silence.observe(_seen(at, answers))
    last_answer, suspected, answered_since_suspicion = at, False, False
    for gap, more, steady in steps:
        at, answers = at + gap, answers + more
        if more:
            last_answer = at
            answered_since_suspicion = answered_since_suspicion or suspected
        verdict = silence.observe(_seen(at, answers, steady))
        if verdict is Verdict.SUSPECT:
            assert not suspected and at - last_answer >= 4.0
            suspected, answered_since_suspicion = True, False
        elif verdict is Verdict.CLEARED:
            assert suspected and answered_since_suspicion and steady
            suspected = False
        else:
            assert suspected or at - last_answer < 4.0
        assert silence.suspected == suspected
