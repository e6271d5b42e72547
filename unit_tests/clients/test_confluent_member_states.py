"""The confluent Consumer's member state driven in every order its two threads can produce (hypothesis'
rule-based state machine; fake librdkafka and kafka-python clients, no broker).

Rules named ``io_*`` are what kafka-python's IO thread does — its rebalance listener calling (and
awaiting) on_partitions_assigned / revoked / lost, a heartbeat answered UNKNOWN_MEMBER_ID, a join
completing with or without an event, an OffsetCommit answered; rules named ``app_*`` are the
application's thread: poll(), commit(), close(). The interleavings include a close while a revocation
waits for the application, and a loss while a commit is in flight. After every step, invariants
stated without our code: librdkafka fetches exactly what the member says it owns; no OffsetCommit
goes out while the member is lost, nor names a partition it does not own; a listener never waits on
a consumer that handled or released its event; after a quiet poll the member consumes everything
kafka-python holds (the coop-a hang); a closed consumer has closed both clients.
"""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest
from confluent_consumer_fakes import _make, install_fakes  # this directory is on sys.path
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from kafka import errors as kafka_errors
from kafka.structs import TopicPartition

from kafka_placement.errors import CommitFailedError
from kafka_placement.groups.membership import Phase

PARTITIONS = (0, 1, 2, 3)


class TwoThreads(RuleBasedStateMachine):
    cooperative = True

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[Any] = []
        self.consumer, self.app = _make(
            "cooperative-sticky" if self.cooperative else "range",
            conf={"enable.auto.commit": True, "error_cb": self.errors.append, "on_commit": self._reported},
        )
        self.kafka = self.consumer._kc
        self.coordinator = self.kafka._coordinator
        self.coordinator.hold_commits = True
        self.coordinator.on_send = self._sent
        self.listener: Any = None  # the listener coroutine awaiting the application (one at a time)
        self.listener_event: Any = None
        self.problems: list[str] = []
        self.offset = 0

    # --- observations -------------------------------------------------------------------------
    def _reported(self, err: Any, partitions: list[Any]) -> None:
        pass

    def _sent(self, offsets: dict[Any, Any]) -> None:
        phase = self.consumer.phase
        named = {tp.partition for tp in offsets}
        owned = {tp.partition for tp in self.consumer.assignment()}
        if phase is Phase.LOST:
            self.problems.append(f"an OffsetCommit for {sorted(named)} went out while lost")
        if not named <= owned:
            self.problems.append(
                f"an OffsetCommit named {sorted(named - owned)}, not owned ({sorted(owned)})"
            )

    def _fetching(self) -> set[int]:
        """librdkafka's assignment, replayed from the calls it received."""
        fetching: set[int] = set()
        for name, tps in self.consumer._rk.calls:
            parts = {p for _, p, _ in tps}
            if name == "assign":
                fetching = parts
            elif name == "unassign":
                fetching = set()
            elif name == "incremental_assign":
                assert not parts & fetching, f"incremental_assign of {parts & fetching}, already fetching"
                fetching |= parts
            elif name == "incremental_unassign":
                assert parts <= fetching, f"incremental_unassign of {parts - fetching}, not fetching"
                fetching -= parts
        return fetching

    @property
    def open(self) -> bool:
        return self.consumer.phase not in (Phase.CLOSING, Phase.CLOSED)

    @property
    def listener_waiting(self) -> bool:
        return self.listener is not None

    # --- kafka-python's IO thread ---------------------------------------------------------------
    def _listen(self, call: Any, partitions: set[int]) -> None:
        coroutine = call([TopicPartition("t", p) for p in sorted(partitions)])
        try:
            awaited = coroutine.send(None)
        except StopIteration:
            return  # not handed over (nothing to give up, or closed)
        self.listener, self.listener_event = coroutine, awaited

    def _resume_listener(self) -> None:
        if self.listener is not None and self.listener_event.is_done:
            with pytest.raises(StopIteration):
                self.listener.send(None)
            self.listener = None

    @precondition(lambda self: self.open and not self.listener_waiting)
    @rule(parts=st.sets(st.sampled_from(PARTITIONS)))
    def io_assign(self, parts: set[int]) -> None:
        """A join completed (SyncGroup): kafka-python's assignment, then on_partitions_assigned."""
        held = self.kafka.assigned
        if not self.cooperative and held:
            return  # an eager member revokes everything before it joins (io_revoke)
        self.coordinator._generation.lost = False
        added = {p for p in parts if ("t", p) not in held}
        self.kafka.assigned = held | {("t", p) for p in added}
        self._listen(self.consumer._bridge.on_partitions_assigned, added)

    @precondition(lambda self: self.open and not self.listener_waiting and self.kafka.assigned)
    @rule(data=st.data())
    def io_revoke(self, data: st.DataObject) -> None:
        held = sorted(p for _, p in self.kafka.assigned)
        gone = set(data.draw(st.sets(st.sampled_from(held), min_size=1))) if self.cooperative else set(held)
        self.kafka.assigned = {tp for tp in self.kafka.assigned if tp[1] not in gone}
        self._listen(self.consumer._bridge.on_partitions_revoked, gone)

    @precondition(lambda self: self.open and not self.listener_waiting and self.kafka.assigned)
    @rule()
    def io_lost(self) -> None:
        """A join prepared with the generation reset: on_partitions_lost with everything held."""
        self.coordinator._generation.lost = True
        gone = {p for _, p in self.kafka.assigned}
        self.kafka.assigned = set()
        self._listen(self.consumer._bridge.on_partitions_lost, gone)

    @precondition(lambda self: self.open)
    @rule()
    def io_heartbeat_unknown_member(self) -> None:
        self.coordinator._generation.lost = True
        self.coordinator.rejoin = True

    @precondition(lambda self: self.open and self.kafka.joins and not self.kafka.joins[-1].is_done)
    @rule()
    def io_join_completed_without_an_event(self) -> None:
        """The coop-a case: a retried join assigned what kafka-python already held, no event came."""
        self.coordinator._generation.lost = False
        self.coordinator.rejoin = False
        self.kafka.joins[-1].success(True)

    @precondition(lambda self: self.open)
    @rule()
    def io_rejoin_requested(self) -> None:
        self.coordinator.rejoin = True

    @precondition(lambda self: self.coordinator.held)
    @rule(refused=st.booleans())
    def io_commit_answered(self, refused: bool) -> None:
        answer = self.coordinator.held.pop(0)
        if refused:  # kafka-python resets the member on UNKNOWN_MEMBER_ID
            self.coordinator._generation.lost = True
            answer.failure(kafka_errors.UnknownMemberIdError())
        else:
            answer.success(None)
        self.kafka.step_io()

    # --- the application's thread -----------------------------------------------------------
    def _answer_commits_meanwhile(self) -> None:
        """The step may wait for commits (a revocation, close): the IO thread answers them."""
        self.coordinator.hold_commits = False
        while self.coordinator.held:
            self.coordinator.held.pop(0).success(None)
            self.kafka.step_io()

    @precondition(lambda self: self.open)
    @rule()
    def app_poll(self) -> None:
        if self.consumer._handoff.pending:
            self._answer_commits_meanwhile()
        self.consumer._loop.next_drive = 0.0
        self.consumer.poll(0)
        self.coordinator.hold_commits = True
        self._resume_listener()
        assert not self.listener_waiting, "the listener still waits after the event was handled"

    @precondition(lambda self: self.open and self.consumer.assignment())
    @rule(data=st.data())
    def app_commit_async(self, data: st.DataObject) -> None:
        owned = sorted(tp.partition for tp in self.consumer.assignment())
        self.offset += 1
        tps = [confluent_kafka.TopicPartition("t", data.draw(st.sampled_from(owned)), self.offset)]
        if self.consumer.phase is Phase.LOST:
            with pytest.raises(CommitFailedError):
                self.consumer.commit(offsets=tps, asynchronous=True)
        else:
            self.consumer.commit(offsets=tps, asynchronous=True)

    @precondition(lambda self: self.open)
    @rule()
    def app_close(self) -> None:
        """Also while a revocation waits for the application (a close during a revoke)."""
        self._answer_commits_meanwhile()
        self.consumer.close()
        self._resume_listener()
        assert not self.listener_waiting, "close() left a listener waiting"

    @precondition(lambda self: not self.open)
    @rule()
    def io_listener_after_close(self) -> None:
        self._listen(self.consumer._bridge.on_partitions_revoked, {0})
        assert not self.listener_waiting, "a listener called after close() waits"

    # --- invariants ---------------------------------------------------------------------------
    @invariant()
    def librdkafka_fetches_what_the_member_owns(self) -> None:
        if self.consumer.phase is not Phase.CLOSED:
            assert self._fetching() == {tp.partition for tp in self.consumer.assignment()}

    @invariant()
    def no_commit_while_lost_or_for_a_partition_not_owned(self) -> None:
        assert not self.problems, self.problems

    @invariant()
    def a_quiet_member_consumes_what_kafka_python_holds(self) -> None:
        quiet = (
            self.open
            and not self.consumer._handoff.pending
            and not self.listener_waiting
            and not self.coordinator.rejoin
            and not self.coordinator._generation.lost
            and not (self.kafka.joins and not self.kafka.joins[-1].is_done)
        )
        if quiet:
            self.consumer._loop.next_drive = 0.0
            self.consumer.poll(0)
            held = {p for _, p in self.kafka.assigned}
            assert held <= {tp.partition for tp in self.consumer.assignment()}

    @invariant()
    def a_closed_consumer_closed_both_clients(self) -> None:
        if self.consumer.phase is Phase.CLOSED:
            assert self.kafka.closed and self.consumer._rk.closed and not self.consumer._handoff.pending


class EagerTwoThreads(TwoThreads):
    cooperative = False


_SETTINGS = settings(
    max_examples=50, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("machine", [TwoThreads, EagerTwoThreads], ids=["cooperative", "eager"])
def test_every_interleaving_of_the_two_threads_keeps_the_member_consistent(
    monkeypatch: pytest.MonkeyPatch, machine: type[TwoThreads]
) -> None:
    install_fakes(monkeypatch)
    run_state_machine_as_test(machine, settings=_SETTINGS)


class _Drawing:
    """A ``data`` argument whose draw is ``value`` (for the rules called by hand below)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def draw(self, strategy: Any) -> Any:
        return self.value


def _checked(machine: TwoThreads) -> None:
    machine.librdkafka_fetches_what_the_member_owns()
    machine.no_commit_while_lost_or_for_a_partition_not_owned()
    machine.a_closed_consumer_closed_both_clients()


def test_a_loss_during_a_commit_sends_nothing_more_and_the_commit_in_flight_is_reported_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two async commits: one in flight, one waiting behind it; the heartbeat says UNKNOWN_MEMBER_ID;
    the member is lost at its next poll — the waiting commit is failed, never sent, and only the one
    in flight is answered (by the broker)."""
    install_fakes(monkeypatch)
    machine = TwoThreads()
    reports: list[Any] = []
    machine.consumer._commits.on_commit = lambda err, tps: reports.append(err)
    machine.app_poll()
    machine.io_assign({0})
    machine.app_poll()
    machine.app_commit_async(_Drawing(0))
    machine.app_commit_async(_Drawing(0))
    assert len(machine.coordinator.held) == 1
    machine.io_heartbeat_unknown_member()
    machine.app_poll()
    assert machine.consumer.phase is Phase.LOST and machine.app.seen[-1] == ("lost", [0])
    machine.io_commit_answered(refused=True)
    _checked(machine)
    assert machine.coordinator.held == [] and machine.coordinator.commits == []  # nothing more went out
    machine.consumer._loop.next_drive = 0.0
    machine.consumer.poll(0)  # results reach on_commit on the application's thread
    codes = sorted(e.code() for e in reports)  # the waiting one failed unsent, the one in flight refused
    assert codes == sorted([confluent_kafka.KafkaError._FAIL, confluent_kafka.KafkaError.UNKNOWN_MEMBER_ID])


def test_a_close_during_a_revoke_releases_the_listener_and_revokes_with_its_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kafka-python's listener awaits a revocation the application never polled for: close() releases
    it, revokes (committing the positions first: auto-commit) and closes both clients."""
    install_fakes(monkeypatch)
    machine = TwoThreads()
    machine.app_poll()
    machine.io_assign({0, 1})
    machine.app_poll()
    machine.consumer._rk.positions.update({("t", 0): 7, ("t", 1): 9})
    machine.io_revoke(_Drawing({0, 1}))
    assert machine.listener_waiting
    machine.app_close()
    _checked(machine)
    assert machine.app.seen[-1] == ("revoke", [0, 1]) and machine.consumer.phase is Phase.CLOSED
    assert machine.coordinator.commits == [{("t", 0): 7, ("t", 1): 9}]
