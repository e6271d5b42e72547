"""Consumer group metadata for confluent-kafka's ``send_offsets_to_transaction``, written by the
librdkafka the installed confluent_kafka loaded (no broker).

Expected values come from librdkafka: the bytes confluent-kafka's own ``Consumer`` returns for a
never-joined handle, what librdkafka's ``rd_kafka_consumer_group_metadata_read`` and its getters
read back, and how the binding's ``send_offsets_to_transaction`` parses them.
"""

from __future__ import annotations

import confluent_kafka
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.clients.confluent import consumer_group_metadata as cgmd
from kafka_placement.clients.confluent.consumer_group_metadata import (
    GroupMetadata,
    librdkafka_group_metadata,
    member_group_metadata,
    read_group_metadata,
)
from kafka_placement.errors import CommitFailedError, ConsumerGroupError

UNREACHABLE = "127.0.0.1:1"  # loopback, nothing listens: no broker is needed or reached
# librdkafka's reader takes printable ASCII (isprint) names only
names = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)


@pytest.mark.parametrize("group", ["g", "billing-eu", "a b~{}", "x" * 300])
def test_the_bytes_are_confluent_kafkas_own_for_a_never_joined_consumer(group: str) -> None:
    """Generation -1, no member id, no instance id: what librdkafka's consumer handle writes."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": UNREACHABLE, "group.id": group})
    try:
        theirs = consumer.consumer_group_metadata()
    finally:
        consumer.close()
    assert librdkafka_group_metadata(GroupMetadata(group, -1, "", None)) == theirs


@settings(max_examples=200, deadline=None)
@given(
    group=names.filter(bool),
    generation=st.integers(-(2**31), 2**31 - 1),
    member=names,
    instance=st.none() | names,
)
def test_librdkafka_reads_back_the_generation_member_and_instance(
    group: str, generation: int, member: str, instance: str | None
) -> None:
    carried = GroupMetadata(group, generation, member, instance)
    assert read_group_metadata(librdkafka_group_metadata(carried)) == carried


def test_send_offsets_to_transaction_parses_them() -> None:
    """The binding's ``py_to_c_cgmd`` reads our bytes (the call gets as far as librdkafka's
    transaction state check), and refuses bytes it cannot read and non-bytes."""
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": UNREACHABLE, "transactional.id": "t", "log_level": 0}
    )
    offsets = [confluent_kafka.TopicPartition("t", 0, 1)]
    blob = librdkafka_group_metadata(GroupMetadata("g", 7, "member-1", "instance-1"))
    with pytest.raises(confluent_kafka.KafkaException) as state:
        producer.send_offsets_to_transaction(offsets, blob, 1)
    assert state.value.args[0].code() == confluent_kafka.KafkaError._STATE  # no init_transactions()
    with pytest.raises(confluent_kafka.KafkaException) as bad:
        producer.send_offsets_to_transaction(offsets, blob[:-3], 1)
    assert bad.value.args[0].code() == confluent_kafka.KafkaError._BAD_MSG
    with pytest.raises(TypeError):
        producer.send_offsets_to_transaction(offsets, blob.decode("latin-1"), 1)


@pytest.mark.parametrize(
    ("field", "metadata"),
    [
        ("group id", GroupMetadata("grüße", 1, "m", None)),
        ("member id", GroupMetadata("g", 1, "m\x1f", None)),
        ("instance id", GroupMetadata("g", 1, "m", "tab\there")),
    ],
)
def test_names_librdkafka_cannot_read_back_are_refused_before_the_transaction(
    field: str, metadata: GroupMetadata
) -> None:
    """librdkafka writes any name but reads back printable ASCII only, so
    send_offsets_to_transaction would refuse these: refused here, typed, naming the value."""
    with pytest.raises(ConsumerGroupError, match=f"cannot be carried: .*{field} is not safe") as refused:
        librdkafka_group_metadata(metadata)
    assert repr(metadata) in str(refused.value)


def test_bad_values_are_typed_errors_naming_them() -> None:
    with pytest.raises(ConsumerGroupError, match=r"generation_id 2147483648 is outside the int32 range"):
        librdkafka_group_metadata(GroupMetadata("g", 2**31, "m", None))
    with pytest.raises(ConsumerGroupError, match="member_id must be a string without NUL"):
        librdkafka_group_metadata(GroupMetadata("g", 1, "m\x00x", None))
    with pytest.raises(ConsumerGroupError, match="librdkafka: "):
        read_group_metadata(b"CGMDv2:\x01")
    with pytest.raises(ConsumerGroupError, match="must be bytes, got str"):
        read_group_metadata("CGMDv2:")  # type: ignore[arg-type]


def test_a_librdkafka_other_than_confluent_kafkas_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The serialised format is librdkafka-version specific: a library whose version differs from
    ``confluent_kafka.libversion()`` (or none at all) is a typed error, not a guess."""
    cgmd._librdkafka.cache_clear()
    monkeypatch.setattr(cgmd, "_candidate_paths", lambda: ["/nonexistent/librdkafka.so.1"])
    try:
        with pytest.raises(ConsumerGroupError, match=r"functions were not found .*nonexistent"):
            librdkafka_group_metadata(GroupMetadata("g", 1, "m", None))
        cgmd._librdkafka.cache_clear()
        monkeypatch.undo()
        real = cgmd._candidate_paths()
        monkeypatch.setattr(cgmd, "_candidate_paths", lambda: real)
        monkeypatch.setattr(confluent_kafka, "libversion", lambda: ("0.0.1", 0x000001FF))
        with pytest.raises(ConsumerGroupError, match="confluent_kafka uses 0x1ff"):
            librdkafka_group_metadata(GroupMetadata("g", 1, "m", None))
    finally:
        cgmd._librdkafka.cache_clear()


@pytest.mark.parametrize(
    ("generation", "member", "lost", "named"),
    [(-1, "", False, "generation -1, member id ''"), (4, "", False, "member id ''"), (4, "m-1", True, "4")],
)
def test_a_member_not_in_a_generation_gets_no_metadata(
    generation: int, member: str, lost: bool, named: str
) -> None:
    with pytest.raises(CommitFailedError, match=f"group g: .*not in a generation.*{named}"):
        member_group_metadata("g", generation, member, None, lost=lost)


def test_a_member_in_a_generation_gets_what_librdkafka_reads_back_as_it() -> None:
    blob = member_group_metadata("g", 4, "m-1", "i-1", lost=False)
    assert read_group_metadata(blob) == GroupMetadata("g", 4, "m-1", "i-1")
