"""The aiokafka sequence-reset mend (``clients/aiokafka/sequence_reset.py``, KIP-360's recovery): a
batch the broker refused for its sequence makes an idempotent producer take a new producer id and start
its sequences again; the private names it reaches are checked against the installed aiokafka."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from aiokafka.errors import NotEnoughReplicasError, OutOfOrderSequenceNumber, UnknownProducerId
from aiokafka.producer.sender import Sender
from aiokafka.producer.transaction_manager import TransactionManager
from aiokafka.structs import TopicPartition

from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
from kafka_placement.clients.aiokafka.sequence_reset import PRIVATE_NAMES, mend_sequence_reset

TP = TopicPartition("orders", 3)


class Batch:
    def __init__(self) -> None:
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()


class ScriptedSender:
    """What the mend uses of aiokafka's ``Sender``: its transaction manager, and a
    ``_send_produce_req`` that fails each batch with the error scripted for its partition."""

    def __init__(self, txn: TransactionManager | None, errors: dict[TopicPartition, BaseException]) -> None:
        self._txn_manager = txn
        self.errors = errors
        self.requests = 0

    async def _send_produce_req(self, node_id: int, batches: dict[TopicPartition, Batch]) -> None:
        self.requests += 1
        for tp, batch in batches.items():
            if tp in self.errors:
                batch.future.set_exception(self.errors[tp])
            else:
                batch.future.set_result(object())


class ScriptedProducer:
    def __init__(self, sender: ScriptedSender) -> None:
        self._sender = sender


def _idempotent() -> TransactionManager:
    """An idempotent producer's transaction manager (built inside a running loop, as aiokafka does)
    with producer id 4711 and 57 records sent to TP."""
    txn = TransactionManager(None, 60000)
    txn.set_pid_and_epoch(4711, 0)
    txn.increment_sequence_number(TP, 57)
    return txn


async def _send(sender: ScriptedSender, *tps: TopicPartition) -> None:
    await sender._send_produce_req(2, {tp: Batch() for tp in tps})


def test_the_private_names_the_mend_reaches_are_in_the_installed_aiokafka() -> None:
    assert PRIVATE_NAMES[0] == "AIOKafkaProducer._sender"
    send = Sender._send_produce_req
    assert inspect.iscoroutinefunction(send)
    assert list(inspect.signature(send).parameters) == ["self", "node_id", "batches"]

    async def build() -> AIOKafkaProducer:
        txn = TransactionManager(None, 60000)
        for name in ("_pid_and_epoch", "_pid_waiter", "_sequence_numbers"):
            assert hasattr(txn, name), name
        return AIOKafkaProducer(bootstrap_servers="127.0.0.1:9", enable_idempotence=True)

    producer = asyncio.run(build())  # never started: nothing connects
    assert isinstance(producer._sender, Sender) and producer._sender._txn_manager is not None
    assert producer.sequence_resets is not None  # the mend is in place


def test_without_the_mend_a_refused_sequence_leaves_the_producer_counting_from_the_gap() -> None:
    async def run() -> None:
        txn = _idempotent()
        await _send(ScriptedSender(txn, {TP: OutOfOrderSequenceNumber()}), TP)
        assert txn.producer_id == 4711 and txn.sequence_number(TP) == 57  # every later batch refused too

    asyncio.run(run())


@pytest.mark.parametrize("error", [OutOfOrderSequenceNumber(), UnknownProducerId()])
def test_a_refused_sequence_drops_the_producer_id_and_restarts_every_sequence(error: BaseException) -> None:
    async def run() -> None:
        txn = _idempotent()
        other = TopicPartition("orders", 4)
        txn.increment_sequence_number(other, 12)
        sender = ScriptedSender(txn, {TP: error})
        record = mend_sequence_reset(ScriptedProducer(sender))
        assert record is not None
        await _send(sender, other, TP)
        assert not txn.has_pid()  # aiokafka's sender asks for a new one before its next batch
        assert txn.sequence_number(TP) == 0 and txn.sequence_number(other) == 0
        assert record.resets == [f"{type(error).__name__} on orders-3 (producer id 4711)"]

        # a second refusal before the new id came changes nothing more
        await _send(sender, TP)
        assert len(record.resets) == 1

        # wait_for_pid() waits for the new id (as the sender's InitProducerId sets it), then returns
        waiter = asyncio.ensure_future(txn.wait_for_pid())
        await asyncio.sleep(0)
        assert not waiter.done()
        txn.set_pid_and_epoch(4712, 0)
        await asyncio.wait_for(waiter, 1)
        assert txn.producer_id == 4712 and txn.sequence_number(TP) == 0

    asyncio.run(run())


def test_other_failures_and_successes_leave_the_producer_id_alone() -> None:
    async def run() -> None:
        txn = _idempotent()
        sender = ScriptedSender(txn, {TP: NotEnoughReplicasError()})
        record = mend_sequence_reset(ScriptedProducer(sender))
        await _send(sender, TP, TopicPartition("orders", 5))
        assert txn.producer_id == 4711 and txn.sequence_number(TP) == 57
        assert record is not None and record.resets == []

    asyncio.run(run())


def test_only_an_idempotent_producer_outside_transactions_is_mended() -> None:
    async def run() -> None:
        assert mend_sequence_reset(ScriptedProducer(ScriptedSender(None, {}))) is None
        transactional = ScriptedSender(TransactionManager("tx-1", 60000), {})
        assert mend_sequence_reset(ScriptedProducer(transactional)) is None
        sender = ScriptedSender(_idempotent(), {})
        first = mend_sequence_reset(ScriptedProducer(sender))
        assert first is not None
        assert mend_sequence_reset(ScriptedProducer(sender)) is first  # once per producer

    asyncio.run(run())
