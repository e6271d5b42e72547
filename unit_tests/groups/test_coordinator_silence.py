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


def _busy(at: float, answers: int, failures: int, in_flight: int = 1) -> Observation:
    return Observation(at=at, answers=answers, steady=True, in_flight=in_flight, failures=failures)


def test_commit_answers_do_not_keep_a_member_whose_heartbeats_time_out() -> None:
    """The secured soak of session 32 (seed 47), 1 s observations: heartbeats queued behind slow
    offset commits time out every 1-3 s while the commits are answered; the broker fenced the member
    6 s after its last heartbeat arrived. The old rule saw answers and kept consuming (9 s beside the
    standby that had its partitions); now the member suspects 4 s after the last clean answer."""
    silence = CoordinatorSilence(6.0, margin_s=2.0, confirm_after_s=2.0)
    assert silence.observe(_busy(0.0, 10, 0, in_flight=0)) is Verdict.NONE
    assert silence.observe(_busy(1.0, 12, 0, in_flight=0)) is Verdict.NONE  # healthy: last answer at 1
    assert silence.observe(_busy(2.0, 13, 1)) is Verdict.NONE  # a heartbeat timed out
    assert silence.observe(_busy(3.0, 14, 1)) is Verdict.NONE  # a commit answered, requests in flight
    assert silence.observe(_busy(4.0, 15, 2)) is Verdict.NONE
    assert silence.observe(_busy(4.9, 16, 2)) is Verdict.NONE
    assert silence.observe(_busy(5.0, 17, 2)) is Verdict.SUSPECT  # 4 s after the answer at 1
    assert silence.last_answer_at == 1.0


def test_a_window_with_every_request_answered_counts_again_after_a_failure() -> None:
    silence = CoordinatorSilence(6.0, margin_s=2.0, confirm_after_s=2.0)
    silence.observe(_busy(0.0, 10, 0, in_flight=0))
    assert silence.observe(_busy(1.0, 11, 1)) is Verdict.NONE  # a request failed at 1
    assert silence.observe(_busy(2.0, 12, 1, in_flight=0)) is Verdict.NONE  # 1 s clean: too short
    assert silence.last_answer_at == 0.0
    assert silence.observe(_busy(3.0, 13, 1, in_flight=0)) is Verdict.NONE  # 2 s clean, nothing waiting
    assert silence.last_answer_at == 1.0  # heard no earlier than the window's start
    # no failure since: answers count as they come again, requests in flight or not
    assert silence.observe(_busy(4.5, 14, 1, in_flight=2)) is Verdict.NONE
    assert silence.last_answer_at == 4.5
    assert silence.observe(_busy(8.4, 14, 1)) is Verdict.NONE
    assert silence.observe(_busy(8.5, 14, 1)) is Verdict.SUSPECT


def test_a_failure_restarts_the_window() -> None:
    silence = CoordinatorSilence(6.0, margin_s=2.0, confirm_after_s=2.0)
    silence.observe(_busy(0.0, 10, 0, in_flight=0))
    silence.observe(_busy(1.0, 11, 1))
    silence.observe(_busy(2.5, 12, 2, in_flight=0))  # another failure at 2.5: its window starts there
    assert silence.observe(_busy(3.5, 13, 2, in_flight=0)) is Verdict.NONE
    assert silence.last_answer_at == 0.0
    assert silence.observe(_busy(4.0, 14, 2, in_flight=0)) is Verdict.SUSPECT  # 4 s after 0, window 1.5 s


@given(
    st.lists(
        st.tuples(st.floats(0.0, 3.0), st.integers(0, 2), st.booleans(), st.integers(0, 2)),
        max_size=60,
    )
)
def test_without_failures_requests_in_flight_change_nothing(
    steps: list[tuple[float, int, bool, int]],
) -> None:
    """Computed apart: while no request fails, the verdicts are those of the rule that knows only
    the answers (the first tests of this module)."""
    counted = CoordinatorSilence(6.0, margin_s=2.0, resume_after_s=1.0, confirm_after_s=0.0)
    answers_only = CoordinatorSilence(6.0, margin_s=2.0, resume_after_s=1.0)
    at, answers = 0.0, 0
    counted.observe(Observation(at, answers, True, in_flight=0, failures=0))
    answers_only.observe(_seen(at, answers))
    for gap, more, steady, in_flight in steps:
        at, answers = at + gap, answers + more
        with_counts = counted.observe(Observation(at, answers, steady, in_flight=in_flight, failures=0))
        if counted.suspected or with_counts is Verdict.CLEARED:
            break  # clearing asks more of the counted rule (nothing in flight): compared up to here
        assert with_counts is answers_only.observe(_seen(at, answers, steady))


@given(
    st.floats(0.0, 3.9),
    st.lists(st.tuples(st.floats(0.01, 1.0), st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=40),
)
def test_after_a_failure_answers_with_requests_in_flight_never_postpone_the_suspicion(
    failed_after: float, steps: list[tuple[float, int, int]]
) -> None:
    """Computed apart: after a failed request, with something always in flight, the suspicion comes
    at the first observation 4 s (the session less the margin) after the last answer before it."""
    silence = CoordinatorSilence(6.0, margin_s=2.0, confirm_after_s=2.0)
    silence.observe(_busy(0.0, 0, 0, in_flight=0))
    silence.observe(_busy(failed_after, 1, 1))  # answered and failed at once: the answer does not count
    at, answers, failures = failed_after, 1, 1
    for gap, more, failed in steps:
        at, answers, failures = at + gap, answers + more, failures + failed
        verdict = silence.observe(_busy(at, answers, failures))
        assert verdict is (Verdict.SUSPECT if at >= 4.0 else Verdict.NONE)
        if verdict is Verdict.SUSPECT:
            break
